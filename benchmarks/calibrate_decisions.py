"""Calibration of the measured comparison's decision: false-ship rate and power by simulation.

Run: ``.venv/bin/python benchmarks/calibrate_decisions.py [--seed 20261206] [--null 1000]
[--alt 400] [--tasks 3,5,10,20,50,100] [--reps 1,3,5] [--kinds pass-fail,bounded,heavy]
[--path current|legacy] [--check-mint 40] [--dump FILE]``.

Every simulated suite has ``tasks`` tasks of ``reps`` repetitions; both arms of a task
repetition form a pair, as the experiment runner makes them. The model (stated in
``docs/guide/experiments-statistics.md``): task ``i`` has a baseline level
``p_i ~ U(0.15, 0.65)`` (task heterogeneity) and its own effect of the candidate
``delta + tau_i`` with ``tau_i ~ U(-s, s)``, ``s = --spread`` (0.1; the candidate helps
some tasks and hurts others; this makes the repetitions of one task correlated). A score is

* ``pass-fail``: ``Bernoulli(level)``;
* ``bounded``: ``Beta`` with mean ``level`` (clipped to [0.01, 0.99]) and concentration 4
  (a continuous score in [0, 1]);
* ``heavy``: ``level + 0.15 * t(2)`` (unbounded, heavy tails: a cost- or latency-like score).

Under the **null** ``delta = 0``: no difference on average over the task population, so
shipping is a false ship. Under the **alternative** ``delta = --effect`` (0.2).

The decision is computed by the decision layer directly (``--path current``: the same
:func:`~agent_interface.evaluator.experiment.inference.overall_decision_inputs` and
:func:`~agent_interface.evaluator.experiment.decision.decide` that
:func:`~agent_interface.evaluator.experiment.comparison.analyze_cells` calls), not by
minting a comparison per suite: building one execution evidence per cell costs
milliseconds, and the grid holds millions of cells. ``--check-mint N`` mints ``N``
suites through :func:`mint_measured_comparison` from real cells
(``tests/evaluator/measured_fixtures.py``) and checks that the decision is the same.
``--path legacy`` is the rule of main 102b553 (two-stage bootstrap, percentile interval),
kept here to print the "before" figures. Prints one row per score kind, tasks and
repetitions: false-ship rate and power in percent with their Monte Carlo standard error,
and (``current`` only) the false-ship rate of the same interval computed over
``scenario:rep`` pairs as if they were independent, as agent-eval pairs them.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agent_interface.candidate.evaluation import AgentCandidateEvaluationPolicy
from agent_interface.evaluator.experiment.decision import DecisionInputs, decide

POLICY = AgentCandidateEvaluationPolicy.parse_wire(
    {"confidenceLevel": 0.95, "resamples": 2000, "bootstrapSeed": 1337, "deltaThreshold": 0,
     "minProductiveRuns": 3, "criticalDimensions": [], "regressionTolerance": 0.05}
)


def simulate(kind: str, tasks: int, reps: int, effect: float,
             rng: np.random.Generator, spread: float = 0.1) -> tuple[np.ndarray, np.ndarray]:
    """Baseline and candidate scores, shape ``(tasks, reps)``."""
    level = rng.uniform(0.15, 0.65, size=(tasks, 1))
    shift = effect + rng.uniform(-spread, spread, size=(tasks, 1))
    base_level = np.broadcast_to(level, (tasks, reps))
    cand_level = np.broadcast_to(level + shift, (tasks, reps))
    if kind == "pass-fail":
        base = (rng.random((tasks, reps)) < base_level).astype(np.float64)
        cand = (rng.random((tasks, reps)) < cand_level).astype(np.float64)
    elif kind == "bounded":
        concentration = 4.0
        cand_level = np.clip(cand_level, 0.01, 0.99)
        base = rng.beta(base_level * concentration, (1 - base_level) * concentration)
        cand = rng.beta(cand_level * concentration, (1 - cand_level) * concentration)
    elif kind == "heavy":
        base = base_level + 0.15 * rng.standard_t(2, size=(tasks, reps))
        cand = cand_level + 0.15 * rng.standard_t(2, size=(tasks, reps))
    else:
        raise SystemExit(f"unknown score kind {kind!r}")
    return base, cand


def legacy_decision(base: np.ndarray, cand: np.ndarray) -> str:
    """The rule of main 102b553: two-stage paired bootstrap, percentile interval."""
    from agent_interface.evaluator.experiment.statistics import (
        paired_bootstrap_means,
        percentile_interval,
        sequential_mean,
    )

    tasks, reps = base.shape
    deltas = (cand - base).reshape(-1, 1)
    resampled = paired_bootstrap_means(deltas, [reps] * tasks, POLICY.resamples,
                                       POLICY.bootstrap_seed)
    lower, upper = percentile_interval(resampled[:, 0], POLICY.confidence_level)
    delta = sequential_mean(cand.ravel().tolist()) - sequential_mean(base.ravel().tolist())
    inputs = DecisionInputs(productive_pairs=tasks * reps, invalid_cells=0, missing_cells=0,
                            overall=(delta, min(lower, delta), max(upper, delta)),
                            critical=[], spend_usd=0.0)
    return str(decide(POLICY, inputs)["outcome"])


def current_decision(base: np.ndarray, cand: np.ndarray) -> str:
    """The rule :func:`analyze_cells` applies today."""
    from agent_interface.evaluator.experiment.inference import overall_decision_inputs

    inputs = overall_decision_inputs(POLICY, base.tolist(), cand.tolist())
    return str(decide(POLICY, inputs)["outcome"])


def pooled_decision(base: np.ndarray, cand: np.ndarray) -> str:
    """The same interval over ``scenario:rep`` pairs taken as independent units."""
    from agent_interface.evaluator.experiment.inference import overall_decision_inputs

    flat_b = [[value] for value in base.ravel().tolist()]
    flat_c = [[value] for value in cand.ravel().tolist()]
    inputs = overall_decision_inputs(POLICY, flat_b, flat_c)
    return str(decide(POLICY, inputs)["outcome"])


def minted_decision(base: np.ndarray, cand: np.ndarray) -> str:
    """The decision of a comparison minted from real cells (the `experiment report` path)."""
    from tests.evaluator.measured_fixtures import cells, experiment

    from agent_interface.evaluator.experiment.comparison import mint_measured_comparison

    tasks, reps = base.shape
    exp = experiment(tasks, reps, criticalDimensions=[], budgetUsd=1e9)
    # The fixture's cells score through JSON: round to 6 decimals on both paths.
    records = cells(exp, base.ravel().tolist(), cand.ravel().tolist())
    return str(mint_measured_comparison(exp, records).decision.outcome)


def rate(hits: int, total: int) -> str:
    p = hits / total
    return f"{100 * p:5.1f} ± {100 * math.sqrt(max(p * (1 - p), 0.25 / total) / total):.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=20261206)
    parser.add_argument("--null", type=int, default=1000, help="null suites per row")
    parser.add_argument("--alt", type=int, default=400, help="alternative suites per row")
    parser.add_argument("--effect", type=float, default=0.2)
    parser.add_argument("--spread", type=float, default=0.1,
                        help="half-width of the per-task effect tau_i ~ U(-s, s)")
    parser.add_argument("--tasks", default="3,5,10,20,50,100")
    parser.add_argument("--reps", default="1,3,5")
    parser.add_argument("--kinds", default="pass-fail,bounded,heavy")
    parser.add_argument("--path", choices=("current", "legacy"), default="current")
    parser.add_argument("--check-mint", type=int, default=0)
    parser.add_argument("--dump", type=Path, help="write every simulated suite as JSON lines")
    args = parser.parse_args()
    rule: Callable[[np.ndarray, np.ndarray], str] = (
        current_decision if args.path == "current" else legacy_decision
    )
    started = time.perf_counter()
    dump = args.dump.open("w") if args.dump else None
    print(f"seed {args.seed}, path {args.path}, {args.null} null and {args.alt} alternative "
          f"suites per row, effect +{args.effect}, per-task effect U(-{args.spread}, "
          f"{args.spread}), policy level {POLICY.confidence_level} "
          f"(one-sided nominal {100 * (1 - POLICY.confidence_level) / 2:.1f}%), "
          f"threshold {POLICY.delta_threshold}")
    head = "| scores | tasks × reps | false ship % | power % |"
    print(head + (" false ship %, scenario:rep pooled |" if args.path == "current" else ""))
    print("|---|---|---|---|" + ("---|" if args.path == "current" else ""))
    checked = mismatched = 0
    for kind in args.kinds.split(","):
        for tasks in (int(t) for t in args.tasks.split(",")):
            for reps in (int(r) for r in args.reps.split(",")):
                rng = np.random.Generator(np.random.PCG64(
                    [args.seed, tasks, reps, ["pass-fail", "bounded", "heavy"].index(kind)]))
                counts: dict[str, int] = {"null": 0, "alt": 0, "pooled": 0}
                for hypothesis, sims, effect in (("null", args.null, 0.0),
                                                 ("alt", args.alt, args.effect)):
                    for _ in range(sims):
                        base, cand = simulate(kind, tasks, reps, effect, rng, args.spread)
                        base, cand = np.round(base, 6), np.round(cand, 6)
                        outcome = rule(base, cand)
                        counts[hypothesis] += outcome == "ship"
                        if hypothesis == "null" and args.path == "current":
                            counts["pooled"] += pooled_decision(base, cand) == "ship"
                        if dump is not None:
                            record: dict[str, Any] = {
                                "kind": kind, "tasks": tasks, "reps": reps,
                                "hypothesis": hypothesis, "baseline": base.tolist(),
                                "candidate": cand.tolist(), "outcome": outcome,
                            }
                            dump.write(json.dumps(record) + "\n")
                        if checked < args.check_mint and tasks * reps <= 30:
                            checked += 1
                            mismatched += minted_decision(base, cand) != outcome
                row = (f"| {kind} | {tasks} × {reps} | {rate(counts['null'], args.null)} | "
                       f"{rate(counts['alt'], args.alt)} |")
                if args.path == "current":
                    row += f" {rate(counts['pooled'], args.null)} |"
                print(row, flush=True)
    if dump is not None:
        dump.close()
    if args.check_mint:
        print(f"minted {checked} suites through mint_measured_comparison: "
              f"{mismatched} decided differently from the decision layer")
    print(f"time {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
