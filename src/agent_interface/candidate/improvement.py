"""Measured improvement of a host-owned agent profile (``agent-profile-improvement-schema.ts``).

A profile experiment compares two complete states of one profile (``baseline`` and
``candidate``, each identified by a state digest) on a frozen suite of signed tasks,
through one exact runner (``executionRef``). The change between them is an ordered list of
strict profile patches (:mod:`agent_interface.candidate.improvement_change`).

Unlike the candidate-bundle records, every digest-bearing record here is verified when it
is parsed: a task, suite, experiment, run cell or run receipt whose ``digest`` is not the
RFC 8785 SHA-256 of the record without its top-level ``digest`` is refused
(``digest_mismatch``). A run receipt must also stay within the task's frozen limits, with
the grader's spend counted into the arm.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Final, Literal, Self

from pydantic import Field, model_validator

from agent_interface.candidate.evaluation import AgentCandidateEvaluationPolicy
from agent_interface.candidate.execution_ref import (  # the reference is public here too
    AgentProfileImprovementExecutionRef,
    EvidenceIdentity,
    EvidenceKind,
)
from agent_interface.candidate.improvement_change import AgentProfileImprovementChange
from agent_interface.candidate.limits import (
    AgentExecutionLimitObservation,
    refine_agent_execution_within_limits,
)
from agent_interface.candidate.lineage import AgentCandidateLineage
from agent_interface.candidate.numbers import NonNegativeNumber, Number
from agent_interface.candidate.outcomes import (
    AgentCandidateBenchmarkDimension,
    AgentCandidateFixedSpend,
)
from agent_interface.candidate.source import AgentImprovementSource
from agent_interface.candidate.task_terms import (
    AgentCandidateBenchmarkGraderIdentity,
    AgentCandidateExecutionLimits,
    AgentCandidateResolvedModel,
)
from agent_interface.core.canonical import Sha256Digest, canonical_digest
from agent_interface.core.contract_limits import (
    NonNegativeSafeInt,
    PositiveSafeInt,
    SafeInt,
    Utf16Length,
)
from agent_interface.core.errors import Refinement
from agent_interface.core.model import WireList, WireModel
from agent_interface.core.number_validation import numbers_approximately_equal
from agent_interface.core.registry import register_wire_models

__all__ = [
    "AgentProfileImprovementArm",
    "AgentProfileImprovementEvidence",
    "AgentProfileImprovementExecutionRef",
    "AgentProfileImprovementExperiment",
    "AgentProfileImprovementGrading",
    "AgentProfileImprovementRunCell",
    "AgentProfileImprovementRunReceipt",
    "AgentProfileImprovementScenario",
    "AgentProfileImprovementSuite",
    "AgentProfileImprovementSuiteInputs",
    "AgentProfileImprovementTask",
    "AgentProfileImprovementTiming",
    "profile_improvement_evidence_key",
    "top_level_record_digest",
]

def top_level_record_digest(record: WireModel | Mapping[str, Any]) -> str:
    """RFC 8785 SHA-256 of a record's wire form without its top-level ``digest``."""
    wire = record.to_wire() if isinstance(record, WireModel) else dict(record)
    return canonical_digest({key: value for key, value in wire.items() if key != "digest"})


class _DigestVerified(WireModel):
    """A record whose ``digest`` (declared last by the subclass) is checked against its
    content when parsed."""

    @model_validator(mode="after")
    def _digest_matches(self) -> Self:
        if top_level_record_digest(self) != getattr(self, "digest", None):
            issues = Refinement(type(self).__name__)
            issues.add(
                ("digest",),
                "digest_mismatch",
                "{record} digest is invalid",
                {"record": _RECORD_LABELS.get(type(self).__name__, "record")},
            )
            issues.check()
        return self

    @classmethod
    def seal(cls, material: WireModel | Mapping[str, Any]) -> Self:
        """Parse ``material`` (wire names, any ``digest`` dropped) with its digest filled in."""
        wire = material.to_wire() if isinstance(material, WireModel) else dict(material)
        wire.pop("digest", None)
        return cls.parse_wire({**wire, "digest": canonical_digest(wire)})


_RECORD_LABELS: Final = {
    "AgentProfileImprovementTask": "profile improvement task",
    "AgentProfileImprovementSuite": "profile improvement suite",
    "AgentProfileImprovementExperiment": "profile improvement experiment",
    "AgentProfileImprovementRunCell": "profile improvement run cell",
    "AgentProfileImprovementRunReceipt": "profile improvement run receipt",
}


class AgentProfileImprovementScenario(WireModel):
    """One scenario a profile improvement task covers, named by id and kind and pinned by its
    digest."""

    id: Annotated[str, Utf16Length(min=1, max=500)]
    kind: Annotated[str, Utf16Length(min=1, max=200)]
    digest: Sha256Digest


class AgentProfileImprovementTask(_DigestVerified):
    """One task whose content, grader, model and limits are frozen before either arm runs."""

    kind: Literal["agent-profile-improvement-task"]
    digest_algorithm: Literal["rfc8785-sha256"]
    scenario: AgentProfileImprovementScenario
    grader: AgentCandidateBenchmarkGraderIdentity
    model: AgentCandidateResolvedModel
    limits: AgentCandidateExecutionLimits
    digest: Sha256Digest


class AgentProfileImprovementSuite(_DigestVerified):
    """The paired denominator: tasks, repetitions, and one seed per task and repetition
    (task-major, then repetition)."""

    kind: Literal["agent-profile-improvement-suite"]
    digest_algorithm: Literal["rfc8785-sha256"]
    split_digest: Sha256Digest
    task_digests: Annotated[WireList[Sha256Digest], Field(min_length=1)]
    reps: PositiveSafeInt
    seeds: Annotated[WireList[SafeInt], Field(min_length=1)]
    digest: Sha256Digest


class AgentProfileImprovementSuiteInputs(WireModel):
    """A suite with its tasks, in the suite's signed order."""

    suite: AgentProfileImprovementSuite
    tasks: Annotated[WireList[AgentProfileImprovementTask], Field(min_length=1)]

    @model_validator(mode="after")
    def _complete(self) -> Self:
        issues = Refinement("AgentProfileImprovementSuiteInputs")
        suite = self.suite
        if len(suite.task_digests) != len(self.tasks):
            issues.add(
                ("tasks",),
                "suite_task_count",
                "profile improvement suite task count does not match its signed digests",
            )
        if len(suite.seeds) != len(self.tasks) * suite.reps:
            issues.add(
                ("suite", "seeds"),
                "suite_seed_count",
                "profile improvement suite must have one seed per task and repetition",
            )
        for index, task in enumerate(self.tasks):
            if index >= len(suite.task_digests) or suite.task_digests[index] != task.digest:
                issues.add(
                    ("tasks", index, "digest"),
                    "suite_task_digest",
                    "profile improvement suite task digest does not match its task",
                )
        issues.check()
        return self


class AgentProfileImprovementEvidence(WireModel):
    """An access-controlled record emitted by the host's run (surrounding whitespace of
    ``kind`` and ``identity`` is trimmed, as the reference does)."""

    kind: EvidenceKind
    identity: EvidenceIdentity
    digest: Sha256Digest


def profile_improvement_evidence_key(evidence: AgentProfileImprovementEvidence) -> str:
    """The identity of an evidence record: kind, identity and digest."""
    return f"{evidence.kind}\u0000{evidence.identity}\u0000{evidence.digest}"


class AgentProfileImprovementArm(WireModel):
    """The complete profile state that actually runs."""

    state_digest: Sha256Digest


class AgentProfileImprovementExperiment(_DigestVerified):
    """Two states of one host-owned profile, the change between them, the runner, the
    held-out suite and the frozen policy."""

    kind: Literal["agent-profile-improvement-experiment"]
    digest_algorithm: Literal["rfc8785-sha256"]
    source: AgentImprovementSource
    execution_ref: AgentProfileImprovementExecutionRef
    baseline: AgentProfileImprovementArm
    candidate: AgentProfileImprovementArm
    change: AgentProfileImprovementChange
    candidate_lineage: AgentCandidateLineage
    benchmark: AgentProfileImprovementSuiteInputs
    policy: AgentCandidateEvaluationPolicy
    digest: Sha256Digest

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        issues = Refinement("AgentProfileImprovementExperiment")
        baseline, candidate = self.baseline.state_digest, self.candidate.state_digest
        lineage = self.candidate_lineage
        parents = lineage.parent_digests or ()
        if baseline != self.source.source_digest:
            issues.add(
                ("baseline", "stateDigest"),
                "experiment_baseline_source",
                "profile improvement baseline must bind the exact source state",
            )
        if baseline == candidate:
            issues.add(
                ("candidate", "stateDigest"),
                "experiment_unchanged",
                "profile improvement experiment requires a changed candidate state",
            )
        if lineage.source in ("optimizer", "compound") and baseline not in parents:
            issues.add(
                ("candidateLineage", "parentDigests"),
                "lineage_baseline",
                "generated profile lineage must include the experiment baseline",
            )
        if candidate in parents:
            issues.add(
                ("candidateLineage", "parentDigests"),
                "lineage_self_parent",
                "profile lineage cannot name the candidate itself as a parent",
            )
        if (
            lineage.development_split_digest is not None
            and lineage.development_split_digest == self.benchmark.suite.split_digest
        ):
            issues.add(
                ("candidateLineage", "developmentSplitDigest"),
                "lineage_split_overlap",
                "profile improvement development and held-out splits must be disjoint",
            )
        issues.check()
        return self


class AgentProfileImprovementRunCell(_DigestVerified):
    """Exact identity of one profile attempt in a frozen experiment."""

    kind: Literal["agent-profile-improvement-run-cell"]
    experiment_digest: Sha256Digest
    arm: Literal["baseline", "candidate"]
    state_digest: Sha256Digest
    suite_digest: Sha256Digest
    task_digest: Sha256Digest
    task_index: NonNegativeSafeInt
    repetition: NonNegativeSafeInt
    seed: SafeInt
    attempt: PositiveSafeInt
    digest: Sha256Digest


class AgentProfileImprovementTiming(WireModel):
    """Start, end and duration in milliseconds; the duration equals end minus start."""

    started_at_ms: NonNegativeNumber
    ended_at_ms: NonNegativeNumber
    duration_ms: NonNegativeNumber

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        if not numbers_approximately_equal(self.duration_ms, self.ended_at_ms - self.started_at_ms):
            issues = Refinement("AgentProfileImprovementTiming")
            issues.add(
                ("durationMs",),
                "timing_inconsistent",
                "timing duration must equal its start and end timestamps",
            )
            issues.check()
        return self


class AgentProfileImprovementGrading(WireModel):
    """The frozen evaluator's verdict, its evidence, timing and spend."""

    grader: AgentCandidateBenchmarkGraderIdentity
    evidence: AgentProfileImprovementEvidence
    timing: AgentProfileImprovementTiming
    usage: AgentCandidateFixedSpend
    score: Number
    passed: bool
    dimensions: WireList[AgentCandidateBenchmarkDimension]

    @model_validator(mode="after")
    def _distinct(self) -> Self:
        issues = Refinement("AgentProfileImprovementGrading")
        names = [dimension.name for dimension in self.dimensions]
        if len(set(names)) != len(names):
            issues.add(
                ("dimensions",),
                "grading_dimension_duplicate",
                "profile improvement grading dimension names must be unique",
            )
        if self.evidence.digest == self.grader.artifact.sha256:
            issues.add(
                ("evidence",),
                "grading_evidence_is_grader",
                "profile improvement grading evidence must be distinct from its grader",
            )
        issues.check()
        return self


class _Succeeded(WireModel):
    status: Literal["succeeded"]


class _Failed(WireModel):
    status: Literal["failed"]
    code: Annotated[str, Utf16Length(min=1, max=200)]
    message: Annotated[str, Utf16Length(min=1, max=4_000)]


class _Trace(WireModel):
    evidence: AgentProfileImprovementEvidence
    event_count: NonNegativeSafeInt
    model_call_count: NonNegativeSafeInt


def combined_profile_usage(
    execution: AgentCandidateFixedSpend, grading: AgentCandidateFixedSpend
) -> AgentCandidateFixedSpend:
    """Agent plus grader spend of one arm (unvalidated: a sum may exceed the safe range)."""
    return AgentCandidateFixedSpend.model_construct(
        input_tokens=execution.input_tokens + grading.input_tokens,
        output_tokens=execution.output_tokens + grading.output_tokens,
        cached_input_tokens=execution.cached_input_tokens + grading.cached_input_tokens,
        reasoning_tokens=execution.reasoning_tokens + grading.reasoning_tokens,
        model_calls=execution.model_calls + grading.model_calls,
        cost_usd_nanos=execution.cost_usd_nanos + grading.cost_usd_nanos,
        cost_provenance=(
            "observed"
            if execution.cost_provenance == "observed" and grading.cost_provenance == "observed"
            else "estimated"
        ),
    )


class AgentProfileImprovementRunReceipt(_DigestVerified):
    """Verifiable output of one profile execution and its frozen evaluator."""

    kind: Literal["agent-profile-improvement-run"]
    digest_algorithm: Literal["rfc8785-sha256"]
    execution_id: Annotated[str, Utf16Length(min=1, max=500)]
    execution_ref: AgentProfileImprovementExecutionRef
    run_cell: AgentProfileImprovementRunCell
    run_record: AgentProfileImprovementEvidence
    billing: Annotated[WireList[AgentProfileImprovementEvidence], Field(min_length=1)]
    timing: AgentProfileImprovementTiming
    steps: NonNegativeSafeInt
    resolved_model: AgentCandidateResolvedModel
    limits: AgentCandidateExecutionLimits
    usage: AgentCandidateFixedSpend
    trace: _Trace
    output: AgentProfileImprovementEvidence
    outcome: Annotated[_Succeeded | _Failed, Field(discriminator="status")]
    grading: AgentProfileImprovementGrading
    digest: Sha256Digest

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        issues = Refinement("AgentProfileImprovementRunReceipt")
        key = profile_improvement_evidence_key
        if key(self.output) == key(self.grading.evidence):
            issues.add(
                ("grading", "evidence"),
                "grading_evidence_is_output",
                "profile improvement grading evidence must be distinct from the agent output",
            )
        if self.trace.model_call_count != self.usage.model_calls:
            issues.add(
                ("trace", "modelCallCount"),
                "trace_usage_mismatch",
                "profile trace model calls must equal settled execution model calls",
            )
        if self.trace.event_count < self.trace.model_call_count:
            issues.add(
                ("trace", "eventCount"),
                "trace_incomplete",
                "profile trace must retain at least one event for every model call",
            )
        refine_agent_execution_within_limits(
            self.limits,
            AgentExecutionLimitObservation.model_construct(
                duration_ms=self.timing.duration_ms,
                steps=self.steps,
                usage=combined_profile_usage(self.usage, self.grading.usage),
            ),
            issues,
        )
        billing = [key(evidence) for evidence in self.billing]
        if len(set(billing)) != len(billing):
            issues.add(
                ("billing",),
                "billing_duplicate",
                "profile improvement billing evidence must be unique",
            )
        issues.check()
        return self


register_wire_models(
    AgentProfileImprovementArm=AgentProfileImprovementArm,
    AgentProfileImprovementExperiment=AgentProfileImprovementExperiment,
    AgentProfileImprovementRunCell=AgentProfileImprovementRunCell,
    AgentProfileImprovementRunReceipt=AgentProfileImprovementRunReceipt,
    AgentProfileImprovementSuite=AgentProfileImprovementSuite,
    AgentProfileImprovementSuiteInputs=AgentProfileImprovementSuiteInputs,
    AgentProfileImprovementTask=AgentProfileImprovementTask,
)
