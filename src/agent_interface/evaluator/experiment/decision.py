"""The decision rule and power analysis an evaluation policy pre-registers.

:func:`decide` maps the paired estimates onto the contract's outcomes:

* ``ship`` (an improvement): every cell of the suite was measured on both arms, at least
  ``minProductiveRuns`` pairs are productive, the suite has at least
  :func:`minimum_tasks` tasks, the lower end of the overall interval is
  above ``deltaThreshold``, every critical dimension is non-inferior (its interval's lower
  end is at or above ``-regressionTolerance``) and the spend is within ``budgetUsd``.
* ``hold`` (keep the baseline): the overall interval lies at or below the threshold (the
  candidate is confidently worse, or confidently not better by the threshold), a critical
  dimension regressed beyond the tolerance (its interval's upper end is below
  ``-regressionTolerance``), or the experiment overspent its budget.
* ``need_more_work`` (inconclusive): cells are missing or invalid captures, too few
  productive pairs, fewer tasks than :func:`minimum_tasks` (not enough tasks to decide
  either way), no estimate, or an interval that straddles a bound.

``ship`` requires every test to pass (an intersection-union test, so its false-ship rate
is at most the one-sided level of each, with no adjustment); the ``hold`` claims of a
regressed critical dimension are adjusted across dimensions with Holm's procedure
(:mod:`.multiplicity`) when the dimensions carry p-values.

``model_ceiling`` and ``arch_ceiling`` are an optimizing loop's judgements and are never
produced here. Every check is listed in ``contributingChecks`` and every failing one gives
a reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agent_interface.candidate.evaluation import AgentCandidateEvaluationPolicy
from agent_interface.evaluator.experiment.multiplicity import holm_rejections

__all__ = [
    "CriticalDimension",
    "DecisionInputs",
    "decide",
    "minimum_tasks",
    "one_sided_alpha",
    "power_analysis",
]


def one_sided_alpha(level: float) -> float:
    """The one-sided error of the ship rule (interval lower end above the threshold) at a
    two-sided confidence ``level``: ``(1 - level) / 2``."""
    return (1 - level) / 2


def minimum_tasks(level: float) -> int:
    """The fewest tasks (at least 2) with which ``2**-n <= (1 - level) / 2``: below it an
    improvement on every task is not evidence at the one-sided level (6 at 0.95)."""
    alpha = one_sided_alpha(level)
    tasks = 2
    while 0.5**tasks > alpha:
        tasks += 1
    return tasks


@dataclass(frozen=True, slots=True)
class CriticalDimension:
    """A policy's critical dimension as measured: its interval, or ``None`` when unmeasured."""

    name: str
    interval: tuple[float, float] | None
    regression_p: float | None = None
    """One-sided p-value of a regression beyond the tolerance; when every measured
    dimension has one, the ``hold`` claims are Holm-adjusted across them."""


@dataclass(frozen=True, slots=True)
class DecisionInputs:
    """What the decision reads: counts, the overall interval, critical dimensions, spend."""

    productive_pairs: int
    invalid_cells: int
    missing_cells: int
    overall: tuple[float, float, float] | None
    """``(delta, lower, upper)`` of the overall score, or ``None`` without a productive pair."""
    critical: Sequence[CriticalDimension]
    spend_usd: float
    tasks: int | None = None
    """Tasks with a productive pair (the units of inference); ``None``: no task floor."""


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _g(value: float) -> str:
    return f"{value:.4g}"


def decide(policy: AgentCandidateEvaluationPolicy, inputs: DecisionInputs) -> dict[str, Any]:
    """The wire ``decision`` (outcome, reasons, contributing checks) under ``policy``."""
    checks: list[dict[str, Any]] = []
    blockers: list[str] = []  # inconclusive
    holds: list[str] = []  # keep the baseline
    complete = inputs.invalid_cells == 0 and inputs.missing_cells == 0
    checks.append({"name": "complete-suite", "passed": complete})
    if not complete:
        blockers.append(
            f"{_count(inputs.invalid_cells, 'invalid capture')} and "
            f"{_count(inputs.missing_cells, 'missing cell')}: the comparison needs every cell "
            "of both arms"
        )
    enough = inputs.productive_pairs >= policy.min_productive_runs
    checks.append({"name": "productive-runs", "passed": enough})
    if not enough:
        blockers.append(
            f"{inputs.productive_pairs} productive paired runs, fewer than the "
            f"pre-registered minimum of {policy.min_productive_runs}"
        )
    statistical: list[str] = []  # hold claims that need enough tasks
    floor = minimum_tasks(policy.confidence_level)
    enough_tasks = inputs.tasks is None or inputs.tasks >= floor
    if inputs.tasks is not None:
        checks.append({"name": "enough-tasks", "passed": enough_tasks})
        if not enough_tasks:
            blockers.append(
                f"not enough tasks to decide: {_count(inputs.tasks, 'task')}, fewer than "
                f"{floor}; below {floor} tasks even an improvement on every task happens "
                f"by chance more often than the one-sided level "
                f"{_g(one_sided_alpha(policy.confidence_level))}"
            )
    threshold = policy.delta_threshold
    if inputs.overall is None:
        checks.append({"name": "heldout-improvement", "passed": False})
        blockers.append("no paired run was measured on both arms")
        improved = False
    else:
        delta, lower, upper = inputs.overall
        improved = lower > threshold
        checks.append({"name": "heldout-improvement", "passed": improved})
        if upper <= threshold:
            worse = "confidently worse than the baseline" if upper < 0 else (
                "not better than the baseline by the threshold"
            )
            statistical.append(
                f"overall delta {_g(delta)} with interval [{_g(lower)}, {_g(upper)}] "
                f"at or below the threshold {_g(threshold)}: {worse}"
            )
        elif not improved:
            blockers.append(
                f"overall delta {_g(delta)} with interval [{_g(lower)}, {_g(upper)}] "
                f"straddles the threshold {_g(threshold)}"
            )
    tolerance = policy.regression_tolerance
    measured = [d for d in inputs.critical if d.interval is not None]
    adjusted = all(d.regression_p is not None for d in measured) and bool(measured)
    rejected = dict(zip(
        (d.name for d in measured),
        holm_rejections([d.regression_p or 0.0 for d in measured],
                        one_sided_alpha(policy.confidence_level)),
        strict=True,
    )) if adjusted else {}
    for dimension in inputs.critical:
        name = f"critical-dimension:{dimension.name}"
        if dimension.interval is None:
            checks.append({"name": name, "passed": False})
            blockers.append(f"critical dimension {dimension.name!r} was not measured on every cell")
            continue
        lower, upper = dimension.interval
        checks.append({"name": name, "passed": lower >= -tolerance})
        regressed = rejected[dimension.name] if adjusted else upper < -tolerance
        if regressed:
            statistical.append(
                f"critical dimension {dimension.name!r} regressed beyond the tolerance "
                f"{_g(tolerance)} (interval [{_g(lower)}, {_g(upper)}]"
                f"{', Holm-adjusted across critical dimensions' if len(measured) > 1 else ''})"
            )
        elif lower < -tolerance:
            blockers.append(
                f"critical dimension {dimension.name!r} may regress beyond the tolerance "
                f"{_g(tolerance)} (interval [{_g(lower)}, {_g(upper)}])"
            )
    if policy.budget_usd is not None:
        within = inputs.spend_usd <= policy.budget_usd
        checks.append({"name": "budget", "passed": within})
        if not within:
            holds.append(
                f"the experiment spent ${_g(inputs.spend_usd)}, over its budget of "
                f"${_g(policy.budget_usd)}"
            )
    if enough_tasks:
        holds = statistical + holds
    else:
        blockers.extend(statistical)
    if holds and complete and enough:
        outcome, reasons = "hold", holds + blockers
    elif blockers or holds:
        outcome, reasons = "need_more_work", blockers + holds
    else:
        outcome = "ship"
        assert inputs.overall is not None
        delta, lower, _ = inputs.overall
        reasons = [
            f"paired held-out interval lower bound {_g(lower)} cleared the promotion "
            f"threshold {_g(threshold)} (delta {_g(delta)})"
        ]
    return {"outcome": outcome, "reasons": reasons, "contributingChecks": checks}


def power_analysis(
    policy: AgentCandidateEvaluationPolicy,
    *,
    pairs: int,
    complete: bool,
    minimum_detectable_delta: float,
    scale_assumed: bool,
    shared_scorer_channel: bool,
    tasks: int | None = None,
    more_tasks: int | None = None,
) -> dict[str, Any]:
    """The wire ``power`` of ``pairs`` productive pairs over ``tasks`` tasks: sufficient
    when the suite is complete, the pairs reach ``minProductiveRuns`` and the tasks reach
    :func:`minimum_tasks`; ``more_tasks`` is how many more tasks would have decided
    (at 80% power, if the observed delta were the true one)."""
    floor = minimum_tasks(policy.confidence_level)
    enough_tasks = tasks is None or tasks >= floor
    sufficient = complete and pairs >= policy.min_productive_runs and enough_tasks
    spread = "an assumed spread of a unit score" if scale_assumed else "the observed paired spread"
    reason = (
        f"{pairs} paired runs (pre-registered minimum {policy.min_productive_runs}"
        f"{'' if complete else ', suite incomplete'})"
    )
    if tasks is not None:
        reason += f" over {_count(tasks, 'task')}"
    if enough_tasks:
        reason += (
            f"; with {spread}, a true delta {_g(minimum_detectable_delta)} above the threshold "
            f"is detected with 80% probability at {_g(policy.confidence_level)} confidence"
        )
    else:
        reason += (
            f"; fewer than {floor} tasks cannot decide at {_g(policy.confidence_level)} "
            f"confidence; with {floor} tasks and {spread}, a true delta "
            f"{_g(minimum_detectable_delta)} above the threshold would be detected with 80% "
            "probability"
        )
    if more_tasks is not None:
        reason += (
            f"; with {more_tasks} more tasks this would have decided (80% power if the "
            "observed delta is the true one)"
        )
    return {
        "sufficient": sufficient,
        "n": pairs,
        "minimumDetectableDelta": minimum_detectable_delta,
        "confidenceLevel": policy.confidence_level,
        "scaleAssumed": scale_assumed,
        "sharedScorerChannel": shared_scorer_channel,
        "reason": reason,
    }
