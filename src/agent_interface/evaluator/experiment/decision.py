"""The decision rule and power analysis an evaluation policy pre-registers.

:func:`decide` maps the paired estimates onto the contract's outcomes:

* ``ship`` (an improvement): every cell of the suite was measured on both arms, at least
  ``minProductiveRuns`` pairs are productive, the lower end of the overall interval is
  above ``deltaThreshold``, every critical dimension is non-inferior (its interval's lower
  end is at or above ``-regressionTolerance``) and the spend is within ``budgetUsd``.
* ``hold`` (keep the baseline): the overall interval lies at or below the threshold (the
  candidate is confidently worse, or confidently not better by the threshold), a critical
  dimension regressed beyond the tolerance (its interval's upper end is below
  ``-regressionTolerance``), or the experiment overspent its budget.
* ``need_more_work`` (inconclusive): cells are missing or invalid captures, too few
  productive pairs, no estimate, or an interval that straddles a bound.

``model_ceiling`` and ``arch_ceiling`` are an optimizing loop's judgements and are never
produced here. Every check is listed in ``contributingChecks`` and every failing one gives
a reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agent_interface.candidate.evaluation import AgentCandidateEvaluationPolicy

__all__ = ["CriticalDimension", "DecisionInputs", "decide", "power_analysis"]


@dataclass(frozen=True, slots=True)
class CriticalDimension:
    """A policy's critical dimension as measured: its interval, or ``None`` when unmeasured."""

    name: str
    interval: tuple[float, float] | None


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
            holds.append(
                f"overall delta {_g(delta)} with interval [{_g(lower)}, {_g(upper)}] "
                f"at or below the threshold {_g(threshold)}: {worse}"
            )
        elif not improved:
            blockers.append(
                f"overall delta {_g(delta)} with interval [{_g(lower)}, {_g(upper)}] "
                f"straddles the threshold {_g(threshold)}"
            )
    tolerance = policy.regression_tolerance
    for dimension in inputs.critical:
        name = f"critical-dimension:{dimension.name}"
        if dimension.interval is None:
            checks.append({"name": name, "passed": False})
            blockers.append(f"critical dimension {dimension.name!r} was not measured on every cell")
            continue
        lower, upper = dimension.interval
        checks.append({"name": name, "passed": lower >= -tolerance})
        if upper < -tolerance:
            holds.append(
                f"critical dimension {dimension.name!r} regressed beyond the tolerance "
                f"{_g(tolerance)} (interval [{_g(lower)}, {_g(upper)}])"
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
) -> dict[str, Any]:
    """The wire ``power`` of ``pairs`` productive pairs: sufficient when the suite is complete
    and the pairs reach ``minProductiveRuns``."""
    sufficient = complete and pairs >= policy.min_productive_runs
    spread = "an assumed spread of a unit score" if scale_assumed else "the observed paired spread"
    reason = (
        f"{pairs} paired runs (pre-registered minimum {policy.min_productive_runs}"
        f"{'' if complete else ', suite incomplete'}); with {spread}, a true delta "
        f"{_g(minimum_detectable_delta)} above the threshold is detected with 80% probability "
        f"at {_g(policy.confidence_level)} confidence"
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
