"""Time and memory to mint a measured comparison from many simulated cells.

Run: ``.venv/bin/python benchmarks/bench_experiment_statistics.py [--cells 10000]
[--reps 5] [--resamples 2000]``. Builds an experiment of ``cells / (2 * reps)`` tasks and
one execution evidence per cell (the reference's cell with its run cell, identities and a
random score; not timed), then prints, each on its own:

* the paired bootstrap alone (every metric, the policy's resamples) and its peak
  allocation (``tracemalloc``);
* ``analyze_cells`` (placing the cells, estimates, decision, power, accounting);
* ``mint_measured_comparison`` (building the wire document and parsing it with the
  contract's model, which checks every cell's bindings);
* the process's peak resident memory.
"""

from __future__ import annotations

import argparse
import random
import resource
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.evaluator.measured_fixtures import cell, experiment

from agent_interface.evaluator.experiment.comparison import analyze_cells, mint_measured_comparison
from agent_interface.evaluator.experiment.statistics import paired_bootstrap_means


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=10_000)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--resamples", type=int, default=2000)
    args = parser.parse_args()
    tasks = max(1, args.cells // (2 * args.reps))
    exp = experiment(tasks, args.reps, criticalDimensions=["tests"], resamples=args.resamples,
                     budgetUsd=1e9)
    rnd = random.Random(7)
    started = time.perf_counter()
    records = []
    for index in range(tasks * args.reps):
        task, rep = divmod(index, args.reps)
        base = round(rnd.random(), 3)
        better = min(1.0, round(base + rnd.gauss(0.05, 0.1), 3)) if rnd.random() < 0.9 else 0.0
        better = max(0.0, better)
        records.append(cell(exp, "baseline", task, rep, base, dimensions={"tests": base}))
        records.append(cell(exp, "candidate", task, rep, better, dimensions={"tests": better}))
    built = time.perf_counter() - started
    cells = len(records)
    print(f"cells: {cells} ({tasks} tasks x {args.reps} repetitions x 2 arms), "
          f"resamples {args.resamples}; built in {built:.1f} s (not part of the figures)")

    deltas = np.array([[rnd.random() - 0.5 for _ in range(4)] for _ in range(cells // 2)])
    tracemalloc.start()
    started = time.perf_counter()
    paired_bootstrap_means(deltas, [args.reps] * tasks, args.resamples, 1337)
    elapsed = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"paired bootstrap, {cells // 2} pairs x 4 metrics: {elapsed * 1000:.0f} ms, "
          f"peak allocation {peak / 2**20:.1f} MiB")

    started = time.perf_counter()
    analysis = analyze_cells(exp, records)
    analyzed = time.perf_counter() - started
    print(f"analyze_cells: {analyzed:.2f} s ({analyzed / cells * 1e6:.0f} us per cell)")

    started = time.perf_counter()
    comparison = mint_measured_comparison(exp, analysis)
    minted = time.perf_counter() - started
    print(f"mint_measured_comparison (wire document + contract check): {minted:.2f} s "
          f"({minted / cells * 1e6:.0f} us per cell); decision {comparison.decision.outcome}")
    print(f"total from cells to a checked comparison: {analyzed + minted:.2f} s")
    peak_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak resident memory of the process: {peak_rss:.0f} MiB")


if __name__ == "__main__":
    main()
