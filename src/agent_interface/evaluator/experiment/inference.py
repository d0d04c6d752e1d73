"""The calibrated paired interval the decision reads: tasks are the units of inference.

An experiment's suite is a sample of tasks; its repetitions of one task are correlated
(the candidate helps some tasks more than others), so the independent units are the
tasks, not the ``task:repetition`` pairs. For every metric:

1. each task's **mean paired delta** over its productive pairs is one unit (with a
   single task, each pair is a unit);
2. the units are resampled with replacement (a one-stage paired bootstrap over tasks,
   :func:`~.statistics.paired_bootstrap_means` with every unit its own cluster: the
   policy's ``resamples`` and ``bootstrapSeed``, numpy PCG64);
3. the standard error is the resampled means' standard deviation times
   ``sqrt(n / (n - 1))`` (the bootstrap's plug-in variance made unbiased), or the
   textbook ``sd(units) / sqrt(n)`` when that is larger: the bootstrap's Monte Carlo
   error (one seed for every metric) never narrows the interval below Student's;
4. the interval is ``delta +/- t(1 - (1 - level) / 2, n - 1) * SE``: Student's critical
   value on ``n - 1`` degrees of freedom, not the normal's, and never percentiles.

``ship`` needs the interval's lower end above the threshold, a one-sided test at
``alpha = (1 - level) / 2``. Below :func:`~.decision.minimum_tasks` (6 tasks at level 0.95) no
paired test that assumes only that a null delta is as likely negative as positive can
reach ``alpha`` (even ``n`` improvements out of ``n`` happen with probability ``2**-n``
under that null), so the decision says there are not enough tasks instead of guessing.
:mod:`benchmarks.calibrate_decisions` measures the false-ship rate this gives.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

import numpy as np
from numpy.typing import NDArray

from agent_interface.candidate.evaluation import AgentCandidateEvaluationPolicy
from agent_interface.evaluator.experiment.decision import (
    CriticalDimension,
    DecisionInputs,
    one_sided_alpha,
)
from agent_interface.evaluator.experiment.statistics import (
    SPREAD_FLOOR,
    paired_bootstrap_means,
    sequential_mean,
)
from agent_interface.evaluator.experiment.student_t import t_cdf, t_quantile

__all__ = [
    "METHOD",
    "PairedInterval",
    "critical_quantile",
    "overall_decision_inputs",
    "paired_intervals",
    "task_sizes",
]

METHOD: Final = (
    "paired bootstrap over tasks (each task's mean paired delta one unit), standard error "
    "with Student's t critical value on tasks - 1 degrees of freedom; one-sided decision at "
    "(1 - level) / 2; fewer tasks than the exact sign-test floor are not enough to decide"
)
"""What ``metadata.agentInterface.method`` says of the intervals."""


@lru_cache(maxsize=1024)
def critical_quantile(level: float, degrees_of_freedom: int) -> float:
    """Student's ``1 - (1 - level) / 2`` quantile on ``degrees_of_freedom``."""
    return t_quantile(1 - one_sided_alpha(level), degrees_of_freedom)


@dataclass(frozen=True, slots=True)
class PairedInterval:
    """One metric's interval: bounds, the standard error of its mean delta, the units."""

    lower: float
    upper: float
    standard_error: float
    units: int
    """Tasks (or pairs, for a suite of one task) the interval treats as independent."""

    def regression_p_value(self, delta: float, tolerance: float) -> float:
        """One-sided p-value of "the true delta is below ``-tolerance``" (a regression)."""
        if self.standard_error <= 0 or self.units < 2:
            return 0.0 if delta < -tolerance else 1.0
        return t_cdf((delta + tolerance) / self.standard_error, self.units - 1)


def task_sizes(task_indexes: Sequence[int]) -> list[int]:
    """Run lengths of consecutive equal task indexes (pairs come task-major)."""
    sizes: list[int] = []
    previous: int | None = None
    for task in task_indexes:
        if sizes and task == previous:
            sizes[-1] += 1
        else:
            sizes.append(1)
        previous = task
    return sizes


def paired_intervals(
    deltas: NDArray[np.float64],
    sizes: Sequence[int],
    point_deltas: Sequence[float],
    policy: AgentCandidateEvaluationPolicy,
) -> tuple[list[PairedInterval], NDArray[np.float64]]:
    """The interval of each column of ``deltas`` (pairs x metrics, grouped by task in
    ``sizes`` order) centred on ``point_deltas``, and the resampled unit means."""
    if len(sizes) >= 2:
        offsets = np.concatenate(([0], np.cumsum(sizes)))
        units = np.array(
            [
                [sequential_mean(deltas[offsets[t] : offsets[t + 1], column].tolist())
                 for column in range(deltas.shape[1])]
                for t in range(len(sizes))
            ],
            dtype=np.float64,
        ).reshape(len(sizes), deltas.shape[1])
    else:
        units = deltas
    count = units.shape[0]
    resampled = paired_bootstrap_means(
        units, [1] * count, policy.resamples, policy.bootstrap_seed
    )
    intervals = []
    for column, delta in enumerate(point_deltas):
        spread = float(np.std(resampled[:, column], ddof=1)) if resampled.shape[0] > 1 else 0.0
        error = spread * math.sqrt(count / (count - 1)) if count >= 2 else 0.0
        if count >= 2:  # never narrower than the textbook standard error of the units
            error = max(error, float(np.std(units[:, column], ddof=1)) / math.sqrt(count))
        if not error > SPREAD_FLOOR:
            error = 0.0
        half = critical_quantile(policy.confidence_level, count - 1) * error if error else 0.0
        intervals.append(PairedInterval(delta - half, delta + half, error, count))
    return intervals, resampled


def overall_decision_inputs(
    policy: AgentCandidateEvaluationPolicy,
    baseline: Sequence[Sequence[float]],
    candidate: Sequence[Sequence[float]],
) -> DecisionInputs:
    """The decision inputs of one score per pair, given per task (``baseline[t][r]``),
    computed exactly as :func:`~.comparison.analyze_cells` computes the overall score's
    (no critical dimension, no spend): the calibration harness's entry point."""
    flat_b = [value for task in baseline for value in task]
    flat_c = [value for task in candidate for value in task]
    sizes = [len(task) for task in baseline]
    delta = sequential_mean(flat_c) - sequential_mean(flat_b)
    deltas = np.array([c - b for b, c in zip(flat_b, flat_c, strict=True)],
                      dtype=np.float64).reshape(-1, 1)
    (interval,), _ = paired_intervals(deltas, sizes, [delta], policy)
    critical: list[CriticalDimension] = []
    return DecisionInputs(
        productive_pairs=len(flat_b),
        invalid_cells=0,
        missing_cells=0,
        overall=(delta, interval.lower, interval.upper),
        critical=critical,
        spend_usd=0.0,
        tasks=len(sizes),
    )
