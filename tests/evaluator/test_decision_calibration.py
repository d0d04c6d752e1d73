"""A fast, seeded subset of ``benchmarks/calibrate_decisions.py``: under the null (no
difference on average over the task population, task heterogeneity, per-task effects that
correlate the repetitions of a task), the decision's false-ship rate at 3, 5 and 10 tasks
must not exceed the one-sided nominal level by more than one Monte Carlo standard error."""

from __future__ import annotations

import math

import numpy as np
import pytest

from agent_interface.candidate.evaluation import AgentCandidateEvaluationPolicy
from agent_interface.evaluator.experiment.decision import decide, one_sided_alpha
from agent_interface.evaluator.experiment.inference import overall_decision_inputs

POLICY = AgentCandidateEvaluationPolicy.parse_wire(
    {"confidenceLevel": 0.95, "resamples": 500, "bootstrapSeed": 1337, "deltaThreshold": 0,
     "minProductiveRuns": 3, "criticalDimensions": [], "regressionTolerance": 0.05}
)
SUITES = 1000


def null_suite(kind: str, tasks: int, reps: int,
               rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    level = rng.uniform(0.15, 0.65, size=(tasks, 1))
    cand_level = level + rng.uniform(-0.1, 0.1, size=(tasks, 1))
    shape = (tasks, reps)
    if kind == "pass-fail":
        return ((rng.random(shape) < level).astype(float),
                (rng.random(shape) < cand_level).astype(float))
    return (rng.beta(level * 4, (1 - level) * 4, size=shape),
            rng.beta(cand_level * 4, (1 - cand_level) * 4, size=shape))


@pytest.mark.parametrize("kind", ["pass-fail", "bounded"])
@pytest.mark.parametrize(("tasks", "reps"), [(3, 1), (5, 3), (10, 1), (10, 3)])
def test_false_ship_rate_is_at_most_nominal(kind: str, tasks: int, reps: int) -> None:
    rng = np.random.Generator(np.random.PCG64([43, tasks, reps, len(kind)]))
    ships = 0
    for _ in range(SUITES):
        base, cand = null_suite(kind, tasks, reps, rng)
        inputs = overall_decision_inputs(POLICY, base.tolist(), cand.tolist())
        ships += decide(POLICY, inputs)["outcome"] == "ship"
    nominal = one_sided_alpha(POLICY.confidence_level)
    error = math.sqrt(nominal * (1 - nominal) / SUITES)
    assert ships / SUITES <= nominal + error, (ships, SUITES)
