"""The summary every measured comparison reports (``agent-improvement-measurement-schema.ts``).

A measured comparison pairs a baseline and a candidate over a complete frozen benchmark
suite. Whatever the source format (candidate bundles or host-owned profiles), it reports
the same summary: the composite ``overall`` estimate, per-objective estimates (at least one
quality objective, exactly one cost and one latency objective, dimensions under a present
objective), the decision, the power analysis, the loop provenance, and the preparation and
measurement accounting. :func:`refine_measured_comparison_summary` checks that summary
against the signed per-cell receipts it claims to summarize.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Generic, Literal, TypeVar

from pydantic import AfterValidator, ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

from agent_interface.candidate.evaluation import AgentCandidateEvaluationPolicy
from agent_interface.candidate.numbers import NonNegativeNumber, Number, OpenUnitInterval
from agent_interface.candidate.outcomes import AgentCandidateCostProvenance
from agent_interface.core.canonical import Sha256Digest, is_canonical_json_value
from agent_interface.core.contract_limits import (
    NonNegativeSafeInt,
    PositiveSafeInt,
    Utf16Length,
)
from agent_interface.core.errors import Refinement
from agent_interface.core.model import JsonObject, WireList, WireModel, wire_names
from agent_interface.core.number_validation import numbers_approximately_equal

__all__ = [
    "AgentImprovementCost",
    "AgentImprovementEvaluationAccounting",
    "CanonicalJsonObject",
    "MeasuredComparisonIdentity",
    "MeasuredComparisonSummary",
    "MeasuredObjective",
    "MeasuredValues",
    "create_measured_comparison_identity_registry",
    "refine_estimate",
    "refine_measured_comparison_summary",
]

EPSILON = sys.float_info.epsilon
Text = Annotated[str, Utf16Length(min=1)]
ContentHash = Annotated[str, Field(pattern=r"^(?:sha256:)?[a-f0-9]{64}$")]


def _canonical_object(value: Any) -> Any:
    if not is_canonical_json_value(value):
        raise PydanticCustomError("canonical_json", "value must be finite, acyclic RFC 8785 JSON")
    return value


CanonicalJsonObject = Annotated[JsonObject, AfterValidator(_canonical_object)]
"""A JSON object of RFC 8785 values (``canonicalJsonObjectSchema``)."""


class ConfidenceInterval(WireModel):
    """A paired-bootstrap interval of the mean delta."""

    level: OpenUnitInterval
    lower: Number
    upper: Number
    method: Literal["paired-bootstrap"]
    statistic: Literal["mean"]
    resamples: PositiveSafeInt


class _Estimate(WireModel):
    baseline: Number
    candidate: Number
    delta: Number
    confidence_interval: ConfidenceInterval
    n: PositiveSafeInt


class MeasuredQualityObjective(_Estimate):
    kind: Literal["objective"]
    name: Text
    direction: Literal["higher-is-better"]
    unit: Literal["score"]
    availability: Literal["measured"]


class UnavailableQualityObjective(WireModel):
    kind: Literal["objective"]
    name: Text
    direction: Literal["higher-is-better"]
    unit: Literal["score"]
    availability: Literal["unavailable"]
    reason: Text


class MeasuredQualityDimension(_Estimate):
    kind: Literal["dimension"]
    objective: Text
    name: Text
    direction: Literal["higher-is-better"]
    unit: Literal["score"]
    availability: Literal["measured"]


class UnavailableQualityDimension(WireModel):
    kind: Literal["dimension"]
    objective: Text
    name: Text
    direction: Literal["higher-is-better"]
    unit: Literal["score"]
    availability: Literal["unavailable"]
    reason: Text


class MeasuredCostObjective(_Estimate):
    """Cost is always measured: an unavailable cost cannot support a decision."""

    kind: Literal["cost"]
    name: Literal["cost"]
    direction: Literal["lower-is-better"]
    unit: Literal["usd"]
    availability: Literal["measured"]


class MeasuredLatencyObjective(_Estimate):
    """Latency is always measured."""

    kind: Literal["latency"]
    name: Literal["latency"]
    direction: Literal["lower-is-better"]
    unit: Literal["milliseconds"]
    availability: Literal["measured"]


MeasuredObjective = Annotated[
    Annotated[
        MeasuredQualityObjective | UnavailableQualityObjective,
        Field(discriminator="availability"),
    ]
    | Annotated[
        MeasuredQualityDimension | UnavailableQualityDimension,
        Field(discriminator="availability"),
    ]
    | MeasuredCostObjective
    | MeasuredLatencyObjective,
    Field(discriminator="kind"),
]
"""One reported objective: quality (measured or unavailable), a quality dimension, cost, latency."""

_MeasuredEstimate = (
    MeasuredQualityObjective | MeasuredQualityDimension | MeasuredCostObjective | MeasuredLatencyObjective
)


class OverallEstimate(_Estimate):
    name: Literal["composite"]
    direction: Literal["higher-is-better"]
    unit: Literal["score"]


class CandidateLabel(WireModel):
    label: Text | None = None
    rationale: Text | None = None

    @model_validator(mode="after")
    def _named(self) -> CandidateLabel:
        if self.label is None and self.rationale is None:
            raise PydanticCustomError(
                "candidate_metadata", "candidate metadata requires a label or rationale"
            )
        return self


class ContributingCheck(WireModel):
    name: Text
    passed: bool


class Decision(WireModel):
    outcome: Literal["ship", "hold", "need_more_work", "model_ceiling", "arch_ceiling"]
    reasons: Annotated[WireList[Text], Field(min_length=1)]
    contributing_checks: WireList[ContributingCheck]


class PowerAnalysis(WireModel):
    sufficient: bool
    n: PositiveSafeInt
    minimum_detectable_delta: NonNegativeNumber
    confidence_level: OpenUnitInterval
    scale_assumed: bool
    shared_scorer_channel: bool
    reason: Text


class LoopProvenance(WireModel):
    model_config = ConfigDict(alias_generator=wire_names(schema_="schema"))

    kind: Literal["agent-eval-loop"]
    schema_: Text
    run_id: Text
    record_digest: Sha256Digest
    baseline_content_hash: ContentHash
    candidate_content_hash: ContentHash


class AgentImprovementCost(WireModel):
    """What an improvement run cost in US dollars, with where the figure came from."""

    usd: NonNegativeNumber
    provenance: AgentCandidateCostProvenance


class _PreparationAccounting(WireModel):
    wall_duration_ms: NonNegativeNumber
    cost: AgentImprovementCost


class _MeasurementAccounting(WireModel):
    wall_duration_ms: NonNegativeNumber
    work_duration_ms: NonNegativeNumber
    cost: AgentImprovementCost


class AgentImprovementEvaluationAccounting(WireModel):
    """Wall time and spend of preparing and measuring an improvement, and their total."""

    generations_explored: NonNegativeSafeInt
    preparation: _PreparationAccounting
    measurement: _MeasurementAccounting
    total: _PreparationAccounting


class MeasuredComparisonSummary(WireModel):
    """The fields every measured comparison shares (``measuredComparisonCommonShape``)."""

    overall: OverallEstimate
    objectives: WireList[MeasuredObjective]
    candidate: CandidateLabel | None = None
    decision: Decision
    power: PowerAnalysis
    provenance: LoopProvenance
    diff: str
    evaluation: AgentImprovementEvaluationAccounting
    metadata: CanonicalJsonObject | None = None


@dataclass(frozen=True, slots=True)
class MeasuredComparisonIdentity:
    """One identity a receipt claims (an execution id, a run cell digest, ...)."""

    kind: str
    value: str
    path: tuple[str | int, ...] | None = None


def create_measured_comparison_identity_registry(
    issues: Refinement, identity_label: str
) -> Callable[[Sequence[MeasuredComparisonIdentity], tuple[str | int, ...]], None]:
    """A recorder that refuses any identity reused across the receipts of one comparison."""
    seen: dict[str, set[str]] = {}

    def record(
        identities: Sequence[MeasuredComparisonIdentity], fallback_path: tuple[str | int, ...]
    ) -> None:
        for identity in identities:
            used = seen.setdefault(identity.kind, set())
            if identity.value in used:
                issues.add(
                    identity.path if identity.path is not None else fallback_path,
                    "measured_identity_reused",
                    f"{identity_label} must not reuse {identity.kind} identity",
                )
            used.add(identity.value)

    return record


R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class MeasuredValues(Generic[R]):
    """How to read the measured quantities from one signed per-cell receipt."""

    score: Callable[[R], float]
    dimension: Callable[[R, str], float | None]
    cost: Callable[[R], float]
    cost_provenance: Callable[[R], str]
    latency: Callable[[R], float]


def refine_estimate(
    estimate: _Estimate, path: tuple[str | int, ...], issues: Refinement
) -> None:
    """``delta`` equals candidate minus baseline; the interval is ordered and contains it."""
    expected = estimate.candidate - estimate.baseline
    tolerance = EPSILON * max(1, abs(expected)) * 8
    if abs(estimate.delta - expected) > tolerance:
        issues.add(
            (*path, "delta"), "measured_delta", "measured delta must equal candidate minus baseline"
        )
    interval = estimate.confidence_interval
    if (
        interval.lower > interval.upper
        or estimate.delta < interval.lower
        or estimate.delta > interval.upper
    ):
        issues.add(
            (*path, "confidenceInterval"),
            "confidence_interval",
            "confidence interval must be ordered and contain the measured delta",
        )


def _refine_mean(
    reported: float, values: Sequence[float], path: tuple[str | int, ...], issues: Refinement
) -> None:
    total: float = 0
    for value in values:
        total += value
    measured = total / len(values)
    tolerance = EPSILON * max(1, abs(measured)) * len(values) * 8
    if abs(reported - measured) > tolerance:
        issues.add(path, "measured_mean", "reported mean must equal the signed per-cell results")


def _sum(values: Sequence[float]) -> float:
    total: float = 0
    for value in values:
        total += value
    return total


def refine_measured_comparison_summary(
    comparison: MeasuredComparisonSummary,
    policy: AgentCandidateEvaluationPolicy,
    expected_n: int,
    measurements: Sequence[tuple[R, R]],
    values: MeasuredValues[R],
    issues: Refinement,
) -> None:
    """Check the reported summary against the complete signed ``(baseline, candidate)`` cells."""
    refine_estimate(comparison.overall, ("overall",), issues)
    accounting = comparison.evaluation
    total_provenance = (
        "observed"
        if accounting.preparation.cost.provenance == "observed"
        and accounting.measurement.cost.provenance == "observed"
        else "estimated"
    )
    if (
        not numbers_approximately_equal(
            accounting.total.wall_duration_ms,
            accounting.preparation.wall_duration_ms + accounting.measurement.wall_duration_ms,
        )
        or not numbers_approximately_equal(
            accounting.total.cost.usd,
            accounting.preparation.cost.usd + accounting.measurement.cost.usd,
        )
        or accounting.total.cost.provenance != total_provenance
    ):
        issues.add(
            ("evaluation",),
            "evaluation_totals",
            "evaluation totals must equal preparation and measurement accounting",
        )
    if comparison.overall.n != expected_n:
        issues.add(
            ("overall", "n"),
            "measured_sample_count",
            "measured sample count must equal the complete benchmark suite",
        )
    if measurements:
        _refine_mean(
            comparison.overall.baseline,
            [values.score(baseline) for baseline, _ in measurements],
            ("overall", "baseline"),
            issues,
        )
        _refine_mean(
            comparison.overall.candidate,
            [values.score(candidate) for _, candidate in measurements],
            ("overall", "candidate"),
            issues,
        )

    identities: set[str] = set()
    quality: set[str] = set()
    dimension_parents: list[tuple[int, str]] = []
    cost_count = latency_count = 0
    for index, objective in enumerate(comparison.objectives):
        if objective.availability == "measured":
            assert isinstance(objective, _MeasuredEstimate)
            refine_estimate(objective, ("objectives", index), issues)
            if objective.n != expected_n:
                issues.add(
                    ("objectives", index, "n"),
                    "measured_sample_count",
                    "measured objective count must equal the complete benchmark suite",
                )
            if measurements:
                _refine_objective_means(objective, index, measurements, values, issues)
        if isinstance(objective, (MeasuredQualityDimension, UnavailableQualityDimension)):
            identity = f"{objective.kind}:{objective.objective}:{objective.name}"
        else:
            identity = f"{objective.kind}:{objective.name}"
        if identity in identities:
            issues.add(
                ("objectives", index, "name"),
                "measured_objective_duplicate",
                "measured objective identities must be unique",
            )
        identities.add(identity)
        if objective.kind == "objective":
            quality.add(objective.name)
        elif isinstance(objective, (MeasuredQualityDimension, UnavailableQualityDimension)):
            dimension_parents.append((index, objective.objective))
        elif objective.kind == "cost":
            cost_count += 1
        else:
            latency_count += 1

    cost_usd = _sum(
        [values.cost(baseline) + values.cost(candidate) for baseline, candidate in measurements]
    )
    work_ms = _sum(
        [values.latency(baseline) + values.latency(candidate) for baseline, candidate in measurements]
    )
    measured_provenance = (
        "observed"
        if all(
            values.cost_provenance(baseline) == "observed"
            and values.cost_provenance(candidate) == "observed"
            for baseline, candidate in measurements
        )
        else "estimated"
    )
    if (
        not numbers_approximately_equal(accounting.measurement.cost.usd, cost_usd)
        or accounting.measurement.cost.provenance != measured_provenance
        or not numbers_approximately_equal(accounting.measurement.work_duration_ms, work_ms)
    ):
        issues.add(
            ("evaluation", "measurement"),
            "measurement_accounting",
            "measurement accounting must equal the complete signed receipts",
        )
    if cost_count != 1 or latency_count != 1:
        issues.add(
            ("objectives",),
            "measured_cost_latency",
            "measured comparison must contain exactly one cost and latency objective",
        )
    if not quality:
        issues.add(
            ("objectives",),
            "measured_quality_objective",
            "measured comparison must contain at least one quality objective",
        )
    for index, parent in dimension_parents:
        if parent not in quality:
            issues.add(
                ("objectives", index, "objective"),
                "measured_dimension_parent",
                "measured dimension must name a present quality objective",
            )
    if comparison.power.n != expected_n:
        issues.add(
            ("power", "n"),
            "power_sample",
            "power analysis must use the paired held-out sample",
        )
    interval = comparison.overall.confidence_interval
    if (
        interval.level != policy.confidence_level
        or interval.resamples != policy.resamples
        or comparison.power.confidence_level != policy.confidence_level
    ):
        issues.add(
            ("experiment", "policy"),
            "frozen_policy",
            "reported uncertainty must use the frozen evaluation policy",
        )
    for index, objective in enumerate(comparison.objectives):
        if isinstance(objective, _MeasuredEstimate) and (
            objective.confidence_interval.level != policy.confidence_level
            or objective.confidence_interval.resamples != policy.resamples
        ):
            issues.add(
                ("objectives", index, "confidenceInterval"),
                "frozen_policy",
                "objective uncertainty must use the frozen evaluation policy",
            )


def _refine_objective_means(
    objective: Any,
    index: int,
    measurements: Sequence[tuple[R, R]],
    values: MeasuredValues[R],
    issues: Refinement,
) -> None:
    extract: Callable[[R], float | None]
    if objective.kind == "objective":
        extract = values.score
    elif objective.kind == "dimension":
        name = objective.name

        def extract(receipt: R) -> float | None:
            return values.dimension(receipt, name)

    elif objective.kind == "cost":
        extract = values.cost
    else:
        extract = values.latency
    baseline = [extract(b) for b, _ in measurements]
    candidate = [extract(c) for _, c in measurements]
    if any(value is None for value in baseline) or any(value is None for value in candidate):
        issues.add(
            ("objectives", index, "name"),
            "measured_dimension_missing",
            "every signed receipt must include each measured dimension",
        )
        return
    _refine_mean(
        objective.baseline, [v for v in baseline if v is not None], ("objectives", index, "baseline"), issues
    )
    _refine_mean(
        objective.candidate,
        [v for v in candidate if v is not None],
        ("objectives", index, "candidate"),
        issues,
    )
