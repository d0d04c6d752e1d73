"""Signed benchmark tasks and suites: the exact held-out work shared by evaluation, approval
and execution (``agent-candidate-task-schema.ts``).

A task pins its benchmark split, scenario, UTF-8 instruction, result shape, starting
workspace (and repository for workspace results), grader, resolved model, counted attempts
with their retry policy, the evaluator's task container and limits. A suite lists task
digests in order with one seed per task repetition (task-major:
``seeds[task_index * reps + repetition]``). Carried digests are parsed structurally; use
``verify_digest()`` (or ``seal()``) to bind them to the content.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal, Self

from pydantic import AfterValidator, Field, model_validator
from pydantic_core import PydanticCustomError

from agent_interface.candidate.artifacts import (
    AgentCandidateArtifactRef,
    AgentCandidateWorkspaceSnapshotEvidence,
)
from agent_interface.candidate.common import AgentCandidateDigestAlgorithm
from agent_interface.candidate.digests import (
    is_digestible,
    seal_top_level_digest,
    verify_top_level_digest,
)
from agent_interface.candidate.run_cell import AgentCandidateBenchmarkCellRef
from agent_interface.candidate.task_terms import (
    AgentCandidateBenchmarkGraderIdentity,
    AgentCandidateExecutionLimits,
    AgentCandidateResolvedModel,
    AgentCandidateResolvedTaskContainer,
    AgentCandidateRetryPolicy,
    AgentCandidateTaskOutcomeSpec,
    AgentCandidateTaskRepository,
)
from agent_interface.core.canonical import (
    Sha256Digest,
    is_well_formed_unicode,
)
from agent_interface.core.contract_limits import PositiveSafeInt, SafeInt, Utf16Length
from agent_interface.core.errors import ContractError, Refinement
from agent_interface.core.model import WireList, WireModel
from agent_interface.core.registry import register_wire_models

__all__ = [
    "MAX_TASK_INSTRUCTION_LENGTH",
    "AgentCandidateBenchmarkIdentity",
    "AgentCandidateBenchmarkScenario",
    "AgentCandidateBenchmarkSuite",
    "AgentCandidateBenchmarkSuiteInputs",
    "AgentCandidateBenchmarkSuiteMaterial",
    "AgentCandidateBenchmarkTask",
    "AgentCandidateBenchmarkTaskMaterial",
    "AgentCandidateTaskAttemptPolicy",
    "benchmark_cell_seed",
]

MAX_TASK_INSTRUCTION_LENGTH = 4 * 1024 * 1024
"""The longest task instruction, in UTF-16 code units."""


class AgentCandidateBenchmarkIdentity(WireModel):
    """The benchmark, its version and the split the task belongs to."""

    name: Annotated[str, Utf16Length(min=1, max=512)]
    version: Annotated[str, Utf16Length(min=1, max=256)]
    split_digest: Sha256Digest


class AgentCandidateBenchmarkScenario(WireModel):
    """One scenario a benchmark task covers, named by id and kind and pinned by its digest."""

    id: Annotated[str, Utf16Length(min=1, max=512)]
    kind: Annotated[str, Utf16Length(min=1, max=512)]
    scenario_digest: Sha256Digest


class AgentCandidateTaskAttemptPolicy(WireModel):
    """How many counted attempts a task allows; ``none`` means exactly one."""

    max_attempts: PositiveSafeInt
    retry_policy: AgentCandidateRetryPolicy


def _instruction_text(value: str) -> str:
    if not is_well_formed_unicode(value):
        raise PydanticCustomError("ill_formed_unicode", "task instruction must be well-formed Unicode")
    return value


class AgentCandidateBenchmarkTaskMaterial(WireModel):
    """The digest-free content of one benchmark task."""

    kind: Literal["agent-candidate-benchmark-task"]
    digest_algorithm: AgentCandidateDigestAlgorithm
    benchmark: AgentCandidateBenchmarkIdentity
    scenario: AgentCandidateBenchmarkScenario
    dataset_snapshot: AgentCandidateArtifactRef | None = None
    instruction: Annotated[
        str, Utf16Length(min=1, max=MAX_TASK_INSTRUCTION_LENGTH), AfterValidator(_instruction_text)
    ]
    repository: AgentCandidateTaskRepository | None = None
    outcome: AgentCandidateTaskOutcomeSpec
    workspace: AgentCandidateWorkspaceSnapshotEvidence
    grader: AgentCandidateBenchmarkGraderIdentity
    model: AgentCandidateResolvedModel
    attempt: AgentCandidateTaskAttemptPolicy
    evaluator_task_container: AgentCandidateResolvedTaskContainer | None = None
    limits: AgentCandidateExecutionLimits

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        issues = Refinement(type(self).__name__)
        if self.outcome.kind == "workspace" and self.repository is None:
            issues.add(
                ("repository",), "repository_required",
                "workspace outcomes require an exact source repository",
            )
        if self.attempt.retry_policy == "none" and self.attempt.max_attempts != 1:
            issues.add(
                ("attempt", "maxAttempts"), "single_attempt_required",
                "a no-retry task must allow exactly one attempt",
            )
        if self.dataset_snapshot is not None and self.dataset_snapshot.byte_length == 0:
            issues.add(
                ("datasetSnapshot", "byteLength"), "empty_dataset_snapshot",
                "dataset snapshot provenance must contain bytes",
            )
        if not issues and not is_digestible(self):
            issues.add(
                (), "non_canonical_json",
                "candidate benchmark task must contain finite, acyclic canonical JSON",
            )
        issues.check()
        return self


class AgentCandidateBenchmarkTask(AgentCandidateBenchmarkTaskMaterial):
    """A task with its ``digest`` (RFC 8785 digest of the task without it)."""

    digest: Sha256Digest

    @classmethod
    def seal(cls, material: Mapping[str, Any] | AgentCandidateBenchmarkTaskMaterial) -> Self:
        """The task of ``material`` (wire names) with its digest."""
        return seal_top_level_digest(cls, material)

    def verify_digest(self) -> Self:
        """Return ``self`` when ``digest`` matches the content; refuse otherwise."""
        return verify_top_level_digest(self)


_Seed = SafeInt


class AgentCandidateBenchmarkSuiteMaterial(WireModel):
    """The complete measured denominator: unique task digests in order, repetitions, and
    one seed per task repetition."""

    kind: Literal["agent-candidate-benchmark-suite"]
    digest_algorithm: AgentCandidateDigestAlgorithm
    task_digests: Annotated[WireList[Sha256Digest], Field(min_length=1)]
    reps: PositiveSafeInt
    seeds: Annotated[WireList[_Seed], Field(min_length=1)]

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        issues = Refinement(type(self).__name__)
        seen: set[str] = set()
        for index, digest in enumerate(self.task_digests):
            if digest in seen:
                issues.add(
                    ("taskDigests", index), "duplicate_task",
                    "benchmark suite task digests must be unique",
                )
            seen.add(digest)
        if len(self.seeds) != len(self.task_digests) * self.reps:
            issues.add(
                ("seeds",), "seed_count",
                "benchmark suite must provide one seed per task repetition",
            )
        issues.check()
        return self


class AgentCandidateBenchmarkSuite(AgentCandidateBenchmarkSuiteMaterial):
    """A suite with its ``digest`` (RFC 8785 digest of the suite without it)."""

    digest: Sha256Digest

    @classmethod
    def seal(cls, material: Mapping[str, Any] | AgentCandidateBenchmarkSuiteMaterial) -> Self:
        """The suite of ``material`` (wire names) with its digest."""
        return seal_top_level_digest(cls, material)

    def verify_digest(self) -> Self:
        """Return ``self`` when ``digest`` matches the content; refuse otherwise."""
        return verify_top_level_digest(self)


def benchmark_cell_seed(
    suite: AgentCandidateBenchmarkSuiteMaterial, cell: AgentCandidateBenchmarkCellRef
) -> int:
    """The seed of one task repetition (``seeds[taskIndex * reps + repetition]``).

    Refused (``ContractError``): a cell of another suite (when ``suite`` carries a digest),
    or a task index or repetition outside the suite."""
    suite_digest = getattr(suite, "digest", None)
    if suite_digest is not None and cell.suite_digest != suite_digest:
        raise ContractError.single("/suiteDigest", "suite_mismatch", "cell belongs to another suite")
    if cell.task_index >= len(suite.task_digests):
        raise ContractError.single("/taskIndex", "task_index_range", "task index is outside the suite")
    if cell.repetition >= suite.reps:
        raise ContractError.single("/repetition", "repetition_range", "repetition is outside the suite")
    return suite.seeds[cell.task_index * suite.reps + cell.repetition]


class AgentCandidateBenchmarkSuiteInputs(WireModel):
    """A suite with its task documents, in signed order, each exactly once, all of one
    benchmark identity, with unique scenario ids and digests."""

    suite: AgentCandidateBenchmarkSuite
    tasks: Annotated[WireList[AgentCandidateBenchmarkTask], Field(min_length=1)]

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        # Suite and tasks are each checked as RFC 8785 JSON already.
        issues = Refinement(type(self).__name__)
        signed = self.suite.task_digests
        if len(self.tasks) != len(signed):
            issues.add(
                ("tasks",), "task_count",
                "benchmark suite inputs must contain every signed task exactly once",
            )
        ids: set[str] = set()
        scenarios: set[str] = set()
        benchmark = self.tasks[0].benchmark
        for index, task in enumerate(self.tasks):
            if index >= len(signed) or task.digest != signed[index]:
                issues.add(
                    ("tasks", index, "digest"), "task_order",
                    "benchmark task order must match the signed suite",
                )
            if task.scenario.id in ids:
                issues.add(
                    ("tasks", index, "scenario", "id"), "duplicate_task_id",
                    "benchmark suite task ids must be unique",
                )
            ids.add(task.scenario.id)
            if task.scenario.scenario_digest in scenarios:
                issues.add(
                    ("tasks", index, "scenario", "scenarioDigest"), "duplicate_scenario",
                    "benchmark suite scenario digests must be unique",
                )
            scenarios.add(task.scenario.scenario_digest)
            if task.benchmark != benchmark:
                issues.add(
                    ("tasks", index, "benchmark"), "benchmark_mismatch",
                    "benchmark suite tasks must share one benchmark identity",
                )
        issues.check()
        return self


register_wire_models(
    AgentCandidateBenchmarkSuite=AgentCandidateBenchmarkSuite,
    AgentCandidateBenchmarkSuiteInputs=AgentCandidateBenchmarkSuiteInputs,
    AgentCandidateBenchmarkSuiteMaterial=AgentCandidateBenchmarkSuiteMaterial,
    AgentCandidateBenchmarkTask=AgentCandidateBenchmarkTask,
    AgentCandidateBenchmarkTaskMaterial=AgentCandidateBenchmarkTaskMaterial,
)
