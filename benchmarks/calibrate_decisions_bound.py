"""A precise upper bound on the decision's false-ship rate, by a vectorized simulation.

Run: ``.venv/bin/python benchmarks/calibrate_decisions_bound.py [--suites 100000]
[--seed 99]`` (needs scipy, a dev dependency). Under the null model of
``benchmarks/calibrate_decisions.py`` (same levels, per-task effects and score kinds), it
applies the textbook one-sample t-test on the tasks' mean paired deltas (ship iff
``mean - t(0.975, n - 1) * sd / sqrt(n) > 0``) to ``--suites`` suites per row, for
6 (the task floor at 0.95), 10, 20, 50 and 100 tasks x 1, 3 and 5 repetitions. The
comparison's interval is never narrower than that one (:mod:`.inference`), so it ships
only when this test does: each printed rate bounds the decision's, with a Monte Carlo
standard error of about 0.05 points at 100,000 suites.
"""

from __future__ import annotations

import argparse

import numpy as np
from scipy import stats


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suites", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=99)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    total = args.suites
    print(f"seed {args.seed}, {total} null suites per row")
    print("| scores | tasks × reps | textbook-t false ship % (upper bound on ours) |")
    print("|---|---|---|")
    for kind in ("pass-fail", "bounded", "heavy"):
        for tasks in (6, 10, 20, 50, 100):
            for reps in (1, 3, 5):
                ships = done = 0
                chunk = max(1000, 2_000_000 // (tasks * reps))
                while done < total:
                    k = min(chunk, total - done)
                    done += k
                    level = rng.uniform(0.15, 0.65, size=(k, tasks, 1))
                    cand_level = level + rng.uniform(-0.1, 0.1, size=(k, tasks, 1))
                    shape = (k, tasks, reps)
                    if kind == "pass-fail":
                        base = (rng.random(shape) < level) * 1.0
                        cand = (rng.random(shape) < cand_level) * 1.0
                    elif kind == "bounded":
                        base = rng.beta(level * 4, (1 - level) * 4, size=shape)
                        cand = rng.beta(cand_level * 4, (1 - cand_level) * 4, size=shape)
                    else:
                        base = level + 0.15 * rng.standard_t(2, size=shape)
                        cand = cand_level + 0.15 * rng.standard_t(2, size=shape)
                    means = (cand - base).mean(axis=2)
                    error = means.std(axis=1, ddof=1) / np.sqrt(tasks)
                    lower = means.mean(axis=1) - stats.t.ppf(0.975, tasks - 1) * error
                    ships += int((lower > 0).sum())
                p = ships / total
                print(f"| {kind} | {tasks} × {reps} | {100 * p:.2f} ± "
                      f"{100 * np.sqrt(p * (1 - p) / total):.2f} |", flush=True)


if __name__ == "__main__":
    main()
