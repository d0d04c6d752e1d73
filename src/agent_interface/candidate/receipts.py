"""What ran and how it ended (``agent-candidate-receipt-schema.ts``).

Attach both receipts to a benchmark run so the result names exactly what ran:

* :class:`AgentCandidateMaterializationReceipt` is emitted by the integrity verifier before
  execution: the bundle, the captured suite and task bytes, the profile plan and its
  activation, the execution plan, the candidate workspace and materialized code tree, the
  harness and version, the selected OCI index, manifest and platform and who chose them,
  the resolved model, the knowledge manifest and the entrypoint bytes. Every one of these
  must be the value the execution plan binds.
* :class:`AgentCandidateRunReceipt` records the execution: timing, steps, memory isolation,
  the trace, the termination, the executor capture, and the model settlement, task
  outcome and benchmark result evidence, each bound to the executed plan.

A timeout, a signal and a cancellation are terminations of their own, never a process
exit. A receipt cannot stand in for missing evidence: the trace must hold at least one
captured event and as many events as model calls, its model-call count must equal the
settled usage, and every evidence artifact must carry bytes. When complete usage and trace
evidence cannot be recovered, the evaluator marks the cell as invalid capture instead of
minting a (zero-usage) receipt.

Parsing checks structure and cross-bindings, as the reference does; ``verify_digest()``
recomputes a receipt's own digest (RFC 8785 of the receipt without its ``digest``).
"""

from __future__ import annotations

from typing import Annotated, Literal, Self

from pydantic import AfterValidator, Field, model_validator
from pydantic_core import PydanticCustomError

from agent_interface.candidate.artifacts import (
    AgentCandidateArtifactRef,
    AgentCandidateCapturedArtifact,
    AgentCandidateWorkspaceSnapshotEvidence,
)
from agent_interface.candidate.common import GitObjectId
from agent_interface.candidate.execution_plan import AgentCandidateExecutionPlanEvidence
from agent_interface.candidate.outcomes import (
    AgentCandidateBenchmarkResultEvidence,
    AgentCandidateModelSettlementEvidence,
    AgentCandidateTaskOutcomeEvidence,
    AgentCandidateTiming,
)
from agent_interface.candidate.profile_plan import AgentCandidateProfileActivation
from agent_interface.candidate.run_identities import AgentCandidateResolvedModel
from agent_interface.candidate.sealed import SealedRecord, refine_canonical
from agent_interface.core.canonical import Sha256Digest
from agent_interface.core.contract_limits import (
    NonNegativeSafeInt,
    PositiveSafeInt,
    SafeInt,
    Utf16Length,
    is_safe_relative_path,
)
from agent_interface.core.errors import Refinement
from agent_interface.core.model import WireModel
from agent_interface.core.registry import register_wire_models
from agent_interface.profile.harness import HarnessType

__all__ = [
    "AgentCandidateBenchmarkInputEvidence",
    "AgentCandidateBenchmarkMaterialEvidence",
    "AgentCandidateCancelledTermination",
    "AgentCandidateDisabledMemoryReceipt",
    "AgentCandidateEntrypointReceipt",
    "AgentCandidateExitTermination",
    "AgentCandidateIsolatedMemoryReceipt",
    "AgentCandidateMaterializationReceipt",
    "AgentCandidateMemoryReceipt",
    "AgentCandidateOciPlatform",
    "AgentCandidateReceiptContainer",
    "AgentCandidateRunReceipt",
    "AgentCandidateSignalTermination",
    "AgentCandidateTermination",
    "AgentCandidateTimeoutTermination",
    "AgentCandidateTraceEvidence",
]

NonEmpty = Annotated[str, Utf16Length(min=1)]


def _entrypoint_path(value: str) -> str:
    if not is_safe_relative_path(value, False):
        raise PydanticCustomError(
            "unsafe_relative_path", "entrypoint path must be a canonical candidate-relative path"
        )
    return value


class AgentCandidateEntrypointReceipt(WireModel):
    """The exact candidate-workspace file launched: path, SHA-256 and size."""

    path: Annotated[str, AfterValidator(_entrypoint_path)]
    sha256: Sha256Digest
    byte_length: NonNegativeSafeInt


class AgentCandidateOciPlatform(WireModel):
    """The OCI platform an image ran on: operating system, architecture and optional variant."""

    os: NonEmpty
    architecture: NonEmpty
    variant: NonEmpty | None = None


class AgentCandidateBenchmarkMaterialEvidence(WireModel):
    """Captured canonical bytes of a signed suite or task; the artifact hash is the digest."""

    digest: Sha256Digest
    material: AgentCandidateCapturedArtifact

    @model_validator(mode="after")
    def _captured(self) -> Self:
        issues = Refinement("AgentCandidateBenchmarkMaterialEvidence")
        if self.material.sha256 != self.digest:
            issues.add(
                ("material", "sha256"),
                "benchmark_material_digest",
                "benchmark material artifact must match its canonical digest",
            )
        if self.material.byte_length == 0:
            issues.add(
                ("material", "byteLength"),
                "benchmark_material_empty",
                "benchmark material artifact must contain canonical bytes",
            )
        issues.check()
        return self


class AgentCandidateBenchmarkInputEvidence(WireModel):
    """The captured suite and the selected task the run was given."""

    suite: AgentCandidateBenchmarkMaterialEvidence
    task: AgentCandidateBenchmarkMaterialEvidence


class AgentCandidateTraceEvidence(WireModel):
    """The captured trace: non-empty, with at least one event per model call."""

    artifact: AgentCandidateCapturedArtifact
    event_count: PositiveSafeInt
    model_call_count: NonNegativeSafeInt

    @model_validator(mode="after")
    def _complete(self) -> Self:
        issues = Refinement("AgentCandidateTraceEvidence")
        if self.artifact.byte_length == 0:
            issues.add(
                ("artifact", "byteLength"),
                "trace_empty",
                "trace artifact must contain captured events",
            )
        if self.event_count < self.model_call_count:
            issues.add(
                ("eventCount",),
                "trace_incomplete",
                "trace must contain at least one event for every model call",
            )
        issues.check()
        return self


class AgentCandidateDisabledMemoryReceipt(WireModel):
    """The run used no memory: nothing was read or written between tasks."""

    mode: Literal["disabled"]


class AgentCandidateIsolatedMemoryReceipt(WireModel):
    """Task-scoped memory: the namespace used, the reset evidence, and the states around the run."""

    mode: Literal["isolated"]
    scope: Literal["task"]
    effective_namespace: NonEmpty
    reset_evidence_digest: Sha256Digest
    before_state_digest: Sha256Digest
    after_state: AgentCandidateWorkspaceSnapshotEvidence


AgentCandidateMemoryReceipt = Annotated[
    AgentCandidateDisabledMemoryReceipt | AgentCandidateIsolatedMemoryReceipt,
    Field(discriminator="mode"),
]
"""How memory was isolated for the run."""


class AgentCandidateExitTermination(WireModel):
    """The process exited by itself with this code."""

    kind: Literal["exit"]
    exit_code: SafeInt


class AgentCandidateTimeoutTermination(WireModel):
    """The evaluator stopped the run at its timeout (not a process exit)."""

    kind: Literal["timeout"]
    timeout_ms: PositiveSafeInt


class AgentCandidateSignalTermination(WireModel):
    """The process was killed by a signal (not a process exit)."""

    kind: Literal["signal"]
    signal: Annotated[str, Field(pattern=r"^SIG[A-Z0-9]+$")]


class AgentCandidateCancelledTermination(WireModel):
    """The run was cancelled (not a process exit)."""

    kind: Literal["cancelled"]


AgentCandidateTermination = Annotated[
    AgentCandidateExitTermination
    | AgentCandidateTimeoutTermination
    | AgentCandidateSignalTermination
    | AgentCandidateCancelledTermination,
    Field(discriminator="kind"),
]
"""How the run ended: exit, timeout, signal or cancellation, each distinct."""


class AgentCandidateReceiptContainer(WireModel):
    """The selected image: who chose it, its OCI index, the manifest and the platform."""

    source: Literal["pinned-container", "evaluator-task-container"]
    image: NonEmpty
    index_digest: Sha256Digest
    manifest_digest: Sha256Digest
    platform: AgentCandidateOciPlatform


def _same(left: WireModel | None, right: WireModel | None) -> bool:
    """Equal wire forms (the reference compares ``JSON.stringify`` of parsed values)."""
    return (left.to_wire() if left is not None else None) == (
        right.to_wire() if right is not None else None
    )


class AgentCandidateMaterializationReceipt(SealedRecord):
    """What the integrity verifier materialized, bound field by field to the execution plan."""

    kind: Literal["agent-candidate-materialization"]
    digest_algorithm: Literal["rfc8785-sha256"]
    bundle_digest: Sha256Digest
    benchmark: AgentCandidateBenchmarkInputEvidence
    profile_activation: AgentCandidateProfileActivation
    execution_plan: AgentCandidateExecutionPlanEvidence
    candidate_workspace: AgentCandidateWorkspaceSnapshotEvidence | None = None
    code_kind: Literal["disabled", "no-op", "git-patch"]
    materialized_tree: GitObjectId | None = None
    harness: HarnessType
    harness_version: NonEmpty
    container: AgentCandidateReceiptContainer
    resolved_model: AgentCandidateResolvedModel
    knowledge_manifest_digest: Sha256Digest | None = None
    entrypoint: AgentCandidateEntrypointReceipt | None = None
    digest: Sha256Digest

    @model_validator(mode="after")
    def _bound_to_plan(self) -> Self:
        issues = Refinement("AgentCandidateMaterializationReceipt")
        self._code_issues(issues)
        plan = self.execution_plan.material
        activation_plan = self.profile_activation.profile_plan
        container, planned = self.container, plan.container
        plan_path = ("executionPlan", "material")
        checks: list[tuple[bool, tuple[str | int, ...], str]] = [
            (
                self.bundle_digest == plan.run_cell.bundle_digest,
                (*plan_path, "runCell", "bundleDigest"),
                "execution plan must bind the receipt bundle",
            ),
            (
                self.benchmark.suite.digest == plan.run_cell.suite_digest,
                ("benchmark", "suite", "digest"),
                "execution plan must bind the captured benchmark suite",
            ),
            (
                self.benchmark.task.digest == plan.run_cell.task_digest,
                ("benchmark", "task", "digest"),
                "execution plan must bind the captured benchmark task",
            ),
            (
                activation_plan.digest == plan.profile.plan_digest,
                (*plan_path, "profile", "planDigest"),
                "execution plan must bind the exact profile plan",
            ),
            (
                list(plan.profile.mount_paths)
                == [file.rel_path for file in activation_plan.material.files],
                (*plan_path, "profile", "mountPaths"),
                "execution plan must bind every profile mount path",
            ),
            (
                self.code_kind == plan.code_kind,
                (*plan_path, "codeKind"),
                "execution plan code kind must match materialization",
            ),
            (
                self.harness == plan.harness and self.harness_version == plan.harness_version,
                (*plan_path, "harness"),
                "execution plan must bind the exact harness and version",
            ),
            (
                container.source == planned.source
                and container.image == planned.image
                and container.index_digest == planned.index_digest
                and container.manifest_digest == planned.manifest_digest
                and container.platform.os == planned.platform.os
                and container.platform.architecture == planned.platform.architecture
                and container.platform.variant == planned.platform.variant,
                (*plan_path, "container"),
                "execution plan must bind the selected container bytes",
            ),
            (
                _same(self.resolved_model, plan.model.resolved),
                (*plan_path, "model", "resolved"),
                "execution plan must bind the exact resolved model",
            ),
            (
                self.knowledge_manifest_digest == plan.knowledge_manifest_digest,
                (*plan_path, "knowledgeManifestDigest"),
                "execution plan knowledge must match materialization",
            ),
            (
                _same(self.candidate_workspace, plan.candidate_workspace),
                (*plan_path, "candidateWorkspace"),
                "execution plan must bind the exact uploaded candidate workspace",
            ),
            (
                activation_plan.material.harness == self.harness,
                ("profileActivation", "profilePlan", "material", "harness"),
                "profile plan harness must match materialization",
            ),
        ]
        for valid, path, message in checks:
            if not valid:
                issues.add(path, "materialization_binding", message)
        refine_canonical(self, issues, "materialization receipt")
        issues.check()
        return self

    def _code_issues(self, issues: Refinement) -> None:
        claimed = (self.materialized_tree, self.entrypoint, self.candidate_workspace)
        if self.code_kind == "disabled":
            if any(value is not None for value in claimed):
                issues.add(
                    (),
                    "disabled_code_materialized",
                    "disabled code must not claim a materialized tree, entrypoint, or workspace",
                )
            return
        if self.entrypoint is None or self.candidate_workspace is None or self.materialized_tree is None:
            issues.add(
                (),
                "active_code_unmaterialized",
                "active code requires a materialized tree, entrypoint, and workspace receipt",
            )
            return
        entrypoint = self.entrypoint
        file = next(
            (f for f in self.candidate_workspace.material.files if f.path == entrypoint.path), None
        )
        if file is None or file.sha256 != entrypoint.sha256 or file.byte_length != entrypoint.byte_length:
            issues.add(
                ("entrypoint",),
                "entrypoint_bytes",
                "entrypoint receipt must identify exact candidate-workspace bytes",
            )


class AgentCandidateRunReceipt(SealedRecord):
    """One execution of one plan: timing, steps, memory, trace, termination, and its
    settlement, outcome and grading evidence, all bound to the executed plan."""

    kind: Literal["agent-candidate-run"]
    digest_algorithm: Literal["rfc8785-sha256"]
    bundle_digest: Sha256Digest
    run_cell_digest: Sha256Digest
    materialization_receipt_digest: Sha256Digest
    execution_plan_digest: Sha256Digest
    timing: AgentCandidateTiming
    steps: NonNegativeSafeInt
    memory: AgentCandidateMemoryReceipt
    trace: AgentCandidateTraceEvidence
    termination: AgentCandidateTermination
    executor_capture: AgentCandidateArtifactRef
    model_settlement: AgentCandidateModelSettlementEvidence
    task_outcome: AgentCandidateTaskOutcomeEvidence
    benchmark_result: AgentCandidateBenchmarkResultEvidence
    digest: Sha256Digest

    @model_validator(mode="after")
    def _bound_to_run(self) -> Self:
        issues = Refinement("AgentCandidateRunReceipt")
        timing = self.timing
        settlement = self.model_settlement.material
        result = self.benchmark_result.material
        if not timing.consistent:
            issues.add(
                ("timing",),
                "timing_inconsistent",
                "run timing must be ordered and internally consistent",
            )
        if settlement.execution_plan_digest != self.execution_plan_digest:
            issues.add(
                ("modelSettlement", "material", "executionPlanDigest"),
                "run_binding",
                "model settlement must bind the executed plan",
            )
        for index, call in enumerate(settlement.calls):
            if call.started_at_ms < timing.started_at_ms or call.ended_at_ms > timing.ended_at_ms:
                issues.add(
                    ("modelSettlement", "material", "calls", index),
                    "model_call_outside_run",
                    "model calls must occur within the recorded run",
                )
        if result.grading.timing.started_at_ms < timing.ended_at_ms:
            issues.add(
                ("benchmarkResult", "material", "grading", "timing", "startedAtMs"),
                "grading_before_run_end",
                "grading must start after candidate execution ends",
            )
        if self.trace.model_call_count != settlement.usage.model_calls:
            issues.add(
                ("trace", "modelCallCount"),
                "trace_usage_mismatch",
                "trace model-call count must match fixed run usage",
            )
        if self.task_outcome.material.execution_plan_digest != self.execution_plan_digest:
            issues.add(
                ("taskOutcome", "material", "executionPlanDigest"),
                "run_binding",
                "task outcome must bind the executed plan",
            )
        if result.execution_plan_digest != self.execution_plan_digest:
            issues.add(
                ("benchmarkResult", "material", "executionPlanDigest"),
                "run_binding",
                "benchmark result must bind the executed plan",
            )
        if result.task_outcome_digest != self.task_outcome.digest:
            issues.add(
                ("benchmarkResult", "material", "taskOutcomeDigest"),
                "run_binding",
                "benchmark result must bind the exact task outcome",
            )
        refine_canonical(self, issues, "run receipt")
        issues.check()
        return self


register_wire_models(
    AgentCandidateBenchmarkInputEvidence=AgentCandidateBenchmarkInputEvidence,
    AgentCandidateMaterializationReceipt=AgentCandidateMaterializationReceipt,
    AgentCandidateMemoryReceipt=AgentCandidateMemoryReceipt,
    AgentCandidateRunReceipt=AgentCandidateRunReceipt,
    AgentCandidateTermination=AgentCandidateTermination,
    AgentCandidateTraceEvidence=AgentCandidateTraceEvidence,
)
