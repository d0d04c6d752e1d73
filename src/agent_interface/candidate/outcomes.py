"""What one candidate run cost and produced (``agent-candidate-outcome-schema.ts``).

* :class:`AgentCandidateFixedSpend` is exact fixed-point spend: whole tokens, calls and
  nano-dollars, each a nonnegative safe integer.
* :class:`AgentCandidateModelSettlementMaterial` is the router's terminal settlement: every
  call with its raw ``inputTokens`` and its ``accountedInputTokens``, plus the router's
  ``usageWithinLimits`` verdict. Its ``usage`` must equal the exact per-call aggregate, and
  the aggregate input total is the *accounted* input, so limits cannot be recomputed from
  raw provider input alone.
* :class:`AgentCandidateTaskOutcomeMaterial` is the captured result (a workspace change or a
  bounded typed output); :class:`AgentCandidateBenchmarkResultMaterial` is its grading.
* Each ``*Evidence`` record binds its material to a captured artifact whose hash equals the
  evidence digest. Like the reference, parsing does not recompute that digest from the
  material; ``verify_digest()`` does (and ``seal()`` builds a record with it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, ClassVar, Final, Literal, Self

from pydantic import Field, model_validator

from agent_interface.candidate.artifacts import (
    AgentCandidateArtifactRef,
    AgentCandidateWorkspaceSnapshotEvidence,
)
from agent_interface.candidate.common import (
    AgentCandidateMediaType,
    GitObjectId,
    same_git_object_format,
)
from agent_interface.candidate.digests import seal_evidence, verify_evidence_digest
from agent_interface.candidate.evidence import AgentCandidateEvidence
from agent_interface.candidate.numbers import UnitInterval
from agent_interface.candidate.run_identities import (
    AgentCandidateBenchmarkGraderIdentity,
    AgentCandidateResolvedModel,
)
from agent_interface.candidate.sealed import refine_canonical
from agent_interface.core.canonical import MAX_SAFE_INTEGER, Sha256Digest
from agent_interface.core.contract_limits import (
    NonNegativeSafeInt,
    PositiveSafeInt,
    Utf16Length,
)
from agent_interface.core.errors import Refinement
from agent_interface.core.model import WireList, WireModel
from agent_interface.core.registry import register_wire_models

__all__ = [
    "AgentCandidateBenchmarkDimension",
    "AgentCandidateBenchmarkResultEvidence",
    "AgentCandidateBenchmarkResultMaterial",
    "AgentCandidateCostProvenance",
    "AgentCandidateFixedSpend",
    "AgentCandidateGitDiff",
    "AgentCandidateGrading",
    "AgentCandidateModelSettlementCall",
    "AgentCandidateModelSettlementEvidence",
    "AgentCandidateModelSettlementMaterial",
    "AgentCandidateOutputOutcome",
    "AgentCandidateOutputSpec",
    "AgentCandidateRepositoryState",
    "AgentCandidateTaskOutcomeEvidence",
    "AgentCandidateTaskOutcomeMaterial",
    "AgentCandidateTiming",
    "AgentCandidateWorkspaceOutcome",
]

AgentCandidateCostProvenance = Literal["observed", "estimated"]

SettlementIdentifier = Annotated[str, Utf16Length(min=1, max=256)]
"""A router-assigned identifier: 1..256 UTF-16 code units."""

BenchmarkScore = UnitInterval
"""A normalized score in [0, 1]."""

MAX_OUTPUT_BYTES: Final = 64 * 1024 * 1024
DimensionName = Annotated[str, Field(pattern=r"^[a-z0-9]+(?:[._-][a-z0-9]+)*$")]
"""A normalized lowercase dimension identifier (``tests``, ``code.lint``)."""


class AgentCandidateFixedSpend(WireModel):
    """Exact spend of one arm or one grading: whole tokens, calls and nano-dollars."""

    input_tokens: NonNegativeSafeInt
    output_tokens: NonNegativeSafeInt
    cached_input_tokens: NonNegativeSafeInt
    reasoning_tokens: NonNegativeSafeInt
    model_calls: NonNegativeSafeInt
    cost_usd_nanos: NonNegativeSafeInt
    cost_provenance: AgentCandidateCostProvenance


class AgentCandidateModelSettlementCall(WireModel):
    """One router call as settled: raw and accounted input, output, cache, cost."""

    call_id: SettlementIdentifier
    generation_id: SettlementIdentifier
    trace_span_id: SettlementIdentifier
    status: Literal["succeeded", "failed"]
    model: SettlementIdentifier
    started_at_ms: PositiveSafeInt
    ended_at_ms: PositiveSafeInt
    input_tokens: NonNegativeSafeInt
    accounted_input_tokens: NonNegativeSafeInt
    output_tokens: NonNegativeSafeInt
    cached_input_tokens: NonNegativeSafeInt
    reasoning_tokens: NonNegativeSafeInt
    cost_usd_nanos: NonNegativeSafeInt
    cost_provenance: AgentCandidateCostProvenance

    @model_validator(mode="after")
    def _router_identity_and_order(self) -> AgentCandidateModelSettlementCall:
        issues = Refinement("AgentCandidateModelSettlementCall")
        if self.trace_span_id != self.generation_id:
            issues.add(
                ("traceSpanId",),
                "settlement_trace_span",
                "model settlement trace span id must equal the router generation id",
            )
        if self.ended_at_ms < self.started_at_ms:
            issues.add(
                ("endedAtMs",),
                "settlement_call_order",
                "model settlement call cannot end before it starts",
            )
        issues.check()
        return self


class AgentCandidateBenchmarkDimension(WireModel):
    """One named, normalized grading dimension."""

    name: DimensionName
    score: BenchmarkScore


_SUMMED_FIELDS: Final = ("output_tokens", "cached_input_tokens", "reasoning_tokens", "cost_usd_nanos")


def _wire_name(field: str) -> str:
    head, *rest = field.split("_")
    return head + "".join(part.title() for part in rest)


def refine_model_settlement(
    calls: tuple[AgentCandidateModelSettlementCall, ...],
    resolved_model: str,
    usage: AgentCandidateFixedSpend,
    issues: Refinement,
) -> None:
    """Settlement rules: unique router identities, the resolved model on every call,
    accounted input never below raw input, and ``usage`` equal to the exact aggregate
    (input counted as accounted input)."""
    seen: dict[str, set[str]] = {"callId": set(), "traceSpanId": set(), "generationId": set()}
    totals: dict[str, int] = {"input_tokens": 0, **{field: 0 for field in _SUMMED_FIELDS}}
    for index, call in enumerate(calls):
        for key, value, what in (
            ("callId", call.call_id, "call ids"),
            ("traceSpanId", call.trace_span_id, "trace span ids"),
            ("generationId", call.generation_id, "generation ids"),
        ):
            if value in seen[key]:
                issues.add(
                    ("calls", index, key),
                    "settlement_duplicate_identity",
                    f"model settlement {what} must be unique",
                )
            seen[key].add(value)
        if call.model != resolved_model:
            issues.add(
                ("calls", index, "model"),
                "settlement_model",
                "settled call model must match the resolved single model",
            )
        if call.accounted_input_tokens < call.input_tokens:
            issues.add(
                ("calls", index, "accountedInputTokens"),
                "settlement_accounted_input",
                "accounted input tokens cannot be less than reported input tokens",
            )
        for field in _SUMMED_FIELDS:
            total = totals[field] + getattr(call, field)
            if total > MAX_SAFE_INTEGER:
                issues.add(
                    ("calls", index, _wire_name(field)),
                    "settlement_unsafe_total",
                    f"model settlement {_wire_name(field)} total exceeds safe integer range",
                )
            else:
                totals[field] = total
        accounted = totals["input_tokens"] + call.accounted_input_tokens
        if accounted > MAX_SAFE_INTEGER:
            issues.add(
                ("calls", index, "accountedInputTokens"),
                "settlement_unsafe_total",
                "model settlement accounted input total exceeds safe integer range",
            )
        else:
            totals["input_tokens"] = accounted
    provenance = "estimated" if any(c.cost_provenance == "estimated" for c in calls) else "observed"
    if (
        usage.input_tokens != totals["input_tokens"]
        or any(getattr(usage, field) != totals[field] for field in _SUMMED_FIELDS)
        or usage.model_calls != len(calls)
        or usage.cost_provenance != provenance
    ):
        issues.add(
            ("usage",),
            "settlement_usage_aggregate",
            "model settlement usage must equal the exact per-call aggregate",
        )


class AgentCandidateModelSettlementMaterial(WireModel):
    """The router's closed settlement of one execution plan's model grant."""

    kind: Literal["agent-candidate-model-settlement-material"]
    execution_plan_digest: Sha256Digest
    preparation_id: SettlementIdentifier
    grant_digest: Sha256Digest
    closed: Literal[True]
    usage_within_limits: bool
    resolved: AgentCandidateResolvedModel
    usage: AgentCandidateFixedSpend
    calls: WireList[AgentCandidateModelSettlementCall]

    @model_validator(mode="after")
    def _exact_aggregate(self) -> Self:
        issues = Refinement("AgentCandidateModelSettlementMaterial")
        refine_model_settlement(self.calls, self.resolved.model, self.usage, issues)
        refine_canonical(self, issues, "model settlement material")
        issues.check()
        return self


class _SealedEvidence(AgentCandidateEvidence):
    evidence_kind: ClassVar[str]

    @classmethod
    def seal(cls, material: WireModel | Mapping[str, Any]) -> Self:
        """Evidence embedding the material's RFC 8785 bytes; its digest is their SHA-256."""
        return seal_evidence(cls, cls.evidence_kind, material)

    def verify_digest(self) -> Self:
        """Return ``self`` when ``digest`` is the canonical digest of ``material`` (and an
        embedded artifact holds exactly those bytes); refuse with ``digest_mismatch``."""
        return verify_evidence_digest(self)


class AgentCandidateModelSettlementEvidence(_SealedEvidence):
    """A model settlement bound to its captured canonical bytes."""

    evidence_label: ClassVar[str] = "model settlement"
    evidence_kind: ClassVar[str] = "agent-candidate-model-settlement"
    kind: Literal["agent-candidate-model-settlement"]
    material: AgentCandidateModelSettlementMaterial


class AgentCandidateRepositoryState(WireModel):
    """One repository state: its identity, root, commit and tree in one Git object format."""

    identity: Annotated[str, Utf16Length(min=1)]
    root_identity: Annotated[str, Utf16Length(min=1)]
    commit: GitObjectId
    tree: GitObjectId

    @model_validator(mode="after")
    def _one_format(self) -> Self:
        if not same_git_object_format(self.commit, self.tree):
            issues = Refinement("AgentCandidateRepositoryState")
            issues.add(
                ("tree",),
                "git_object_format",
                "repository commit and tree must use the same Git object format",
            )
            issues.check()
        return self


class AgentCandidateGitDiff(WireModel):
    """The binary ``git diff`` of a workspace outcome, as an artifact reference."""

    format: Literal["git-diff-binary"]
    artifact: AgentCandidateArtifactRef


class AgentCandidateWorkspaceOutcome(WireModel):
    """A workspace change: base and result states of one repository and the binary diff."""

    kind: Literal["workspace"]
    base_repository: AgentCandidateRepositoryState
    result_repository: AgentCandidateRepositoryState
    after_state: AgentCandidateWorkspaceSnapshotEvidence
    git_diff: AgentCandidateGitDiff


class AgentCandidateOutputSpec(WireModel):
    """The output a task expects: its media type and the most bytes it may have (at most 64 MiB)."""

    media_type: AgentCandidateMediaType
    max_bytes: Annotated[PositiveSafeInt, Field(le=MAX_OUTPUT_BYTES)]


class AgentCandidateOutputOutcome(WireModel):
    """A typed, bounded, non-empty output."""

    kind: Literal["output"]
    spec: AgentCandidateOutputSpec
    artifact: AgentCandidateArtifactRef


class AgentCandidateTaskOutcomeMaterial(WireModel):
    """The captured result of one executed plan."""

    kind: Literal["agent-candidate-task-outcome-material"]
    execution_plan_digest: Sha256Digest
    outcome: Annotated[
        AgentCandidateWorkspaceOutcome | AgentCandidateOutputOutcome, Field(discriminator="kind")
    ]

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        issues = Refinement("AgentCandidateTaskOutcomeMaterial")
        outcome = self.outcome
        if isinstance(outcome, AgentCandidateWorkspaceOutcome):
            base, result = outcome.base_repository, outcome.result_repository
            if base.identity != result.identity:
                issues.add(
                    ("outcome", "resultRepository", "identity"),
                    "repository_identity",
                    "base and result repository identities must match",
                )
            if base.root_identity != result.root_identity:
                issues.add(
                    ("outcome", "resultRepository", "rootIdentity"),
                    "repository_root",
                    "base and result repository roots must match",
                )
            if not same_git_object_format(base.commit, result.commit) or not same_git_object_format(
                base.tree, result.tree
            ):
                issues.add(
                    ("outcome", "resultRepository"),
                    "git_object_format",
                    "base and result repositories must use one Git object format",
                )
        else:
            if outcome.artifact.byte_length == 0:
                issues.add(
                    ("outcome", "artifact"),
                    "empty_task_output",
                    "task outcome artifact cannot be empty",
                )
            if outcome.artifact.byte_length > outcome.spec.max_bytes:
                issues.add(
                    ("outcome", "artifact", "byteLength"),
                    "task_output_too_large",
                    "task outcome artifact exceeds its signed byte limit",
                )
        refine_canonical(self, issues, "task outcome material")
        issues.check()
        return self


class AgentCandidateTaskOutcomeEvidence(_SealedEvidence):
    """A task outcome bound to its captured canonical bytes."""

    evidence_label: ClassVar[str] = "task outcome"
    evidence_kind: ClassVar[str] = "agent-candidate-task-outcome"
    kind: Literal["agent-candidate-task-outcome"]
    material: AgentCandidateTaskOutcomeMaterial


class AgentCandidateTiming(WireModel):
    """Wall-clock start, end and duration in milliseconds."""

    started_at_ms: NonNegativeSafeInt
    ended_at_ms: NonNegativeSafeInt
    duration_ms: NonNegativeSafeInt

    @property
    def consistent(self) -> bool:
        """Ordered, and the duration is exactly end minus start."""
        return (
            self.ended_at_ms >= self.started_at_ms
            and self.duration_ms == self.ended_at_ms - self.started_at_ms
        )


class AgentCandidateGrading(WireModel):
    """What grading one outcome used: the fixed spend and the timing of the grader."""

    usage: AgentCandidateFixedSpend
    timing: AgentCandidateTiming


class AgentCandidateBenchmarkResultMaterial(WireModel):
    """The pinned grader's verdict on one task outcome."""

    kind: Literal["agent-candidate-benchmark-result-material"]
    execution_plan_digest: Sha256Digest
    task_outcome_digest: Sha256Digest
    grader: AgentCandidateBenchmarkGraderIdentity
    evidence: AgentCandidateArtifactRef
    grading: AgentCandidateGrading
    score: BenchmarkScore
    passed: bool
    dimensions: WireList[AgentCandidateBenchmarkDimension]

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        issues = Refinement("AgentCandidateBenchmarkResultMaterial")
        if self.evidence.byte_length == 0:
            issues.add(
                ("evidence", "byteLength"),
                "empty_grading_evidence",
                "benchmark result must contain non-empty durable grading evidence",
            )
        if not self.grading.timing.consistent:
            issues.add(
                ("grading", "timing"),
                "timing_inconsistent",
                "grader timing must be ordered and internally consistent",
            )
        for index in range(1, len(self.dimensions)):
            if self.dimensions[index - 1].name >= self.dimensions[index].name:
                issues.add(
                    ("dimensions", index, "name"),
                    "dimension_order",
                    "benchmark dimensions must be unique and lexicographically sorted",
                )
        refine_canonical(self, issues, "benchmark result material")
        issues.check()
        return self


class AgentCandidateBenchmarkResultEvidence(_SealedEvidence):
    """A benchmark result bound to its captured canonical bytes."""

    evidence_label: ClassVar[str] = "benchmark result"
    evidence_kind: ClassVar[str] = "agent-candidate-benchmark-result"
    kind: Literal["agent-candidate-benchmark-result"]
    material: AgentCandidateBenchmarkResultMaterial


register_wire_models(
    AgentCandidateBenchmarkDimension=AgentCandidateBenchmarkDimension,
    AgentCandidateBenchmarkResultEvidence=AgentCandidateBenchmarkResultEvidence,
    AgentCandidateBenchmarkResultMaterial=AgentCandidateBenchmarkResultMaterial,
    AgentCandidateFixedSpend=AgentCandidateFixedSpend,
    AgentCandidateModelSettlementCall=AgentCandidateModelSettlementCall,
    AgentCandidateModelSettlementEvidence=AgentCandidateModelSettlementEvidence,
    AgentCandidateModelSettlementMaterial=AgentCandidateModelSettlementMaterial,
    AgentCandidateRepositoryState=AgentCandidateRepositoryState,
    AgentCandidateTaskOutcomeEvidence=AgentCandidateTaskOutcomeEvidence,
    AgentCandidateTaskOutcomeMaterial=AgentCandidateTaskOutcomeMaterial,
)
