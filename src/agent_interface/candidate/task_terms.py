"""The evaluator-pinned terms of one benchmark task, shared by the signed task and by every
per-task execution plan (``agent-candidate-execution-plan-schema.ts``).

A task binds the exact result shape (workspace change or bounded typed output), the
resolved model, the task repository, the evaluator's task container (OCI index, manifest and
platform), the counted attempt and its retry policy, and the execution limits. Execution
limits may carry ``maxTotalTokens``, the bound on one arm's accounted input plus output
tokens.
"""

from __future__ import annotations

from typing import Annotated, Literal, Self

from pydantic import BeforeValidator, Field, model_validator

from agent_interface.candidate.common import (
    AgentCandidateMediaType,
    GitObjectId,
    same_git_object_format,
)
from agent_interface.candidate.launch import AgentCandidateContainer
from agent_interface.candidate.run_identities import (  # public here too
    AgentCandidateBenchmarkGraderIdentity,
    AgentCandidateResolvedModel,
)
from agent_interface.core.canonical import Sha256Digest
from agent_interface.core.contract_limits import (
    NonNegativeNumber,
    NonNegativeSafeInt,
    PositiveSafeInt,
    Utf16Length,
    integral_float_to_int,
)
from agent_interface.core.errors import Refinement
from agent_interface.core.model import WireModel
from agent_interface.core.registry import register_wire_models

__all__ = [
    "MAX_TASK_OUTPUT_BYTES",
    "AgentCandidateBenchmarkGraderIdentity",
    "AgentCandidateExecutionLimits",
    "AgentCandidateResolvedModel",
    "AgentCandidateResolvedTaskContainer",
    "AgentCandidateRetryPolicy",
    "AgentCandidateTaskContainerPlatform",
    "AgentCandidateTaskOutcomeSpec",
    "AgentCandidateTaskOutputSpec",
    "AgentCandidateTaskRepository",
    "AgentCandidateWorkspaceOutcomeSpec",
]

MAX_TASK_OUTPUT_BYTES = 64 * 1024 * 1024
"""The largest typed output a task may request (64 MiB)."""


_RepositoryIdentity = Annotated[str, Utf16Length(min=1, max=512)]


class AgentCandidateTaskRepository(WireModel):
    """The exact source repository a workspace task starts from."""

    identity: _RepositoryIdentity
    root_identity: _RepositoryIdentity
    base_commit: GitObjectId
    base_tree: GitObjectId

    @model_validator(mode="after")
    def _one_object_format(self) -> Self:
        if not same_git_object_format(self.base_commit, self.base_tree):
            issues = Refinement("AgentCandidateTaskRepository")
            issues.add((), "git_object_format", "task Git object ids must use one object format")
            issues.check()
        return self


_PlatformPart = Annotated[str, Utf16Length(min=1, max=100)]


class AgentCandidateTaskContainerPlatform(WireModel):
    """The OCI platform selected from the task image index."""

    os: _PlatformPart
    architecture: _PlatformPart
    variant: _PlatformPart | None = None


class AgentCandidateResolvedTaskContainer(AgentCandidateContainer):
    """The evaluator's task image: OCI index, the manifest chosen from it and its platform."""

    source: Literal["evaluator-task-container"]
    manifest_digest: Sha256Digest
    platform: AgentCandidateTaskContainerPlatform


AgentCandidateRetryPolicy = Literal["pre-model-infrastructure-only", "none"]
"""Retry only failures before the first model call, or never retry."""


class AgentCandidateExecutionLimits(WireModel):
    """Hard limits of one run. ``maxTotalTokens`` bounds accounted input plus output tokens."""

    timeout_ms: PositiveSafeInt
    max_steps: PositiveSafeInt
    max_model_calls: NonNegativeSafeInt
    max_input_tokens: NonNegativeSafeInt
    max_output_tokens: NonNegativeSafeInt
    max_total_tokens: NonNegativeSafeInt | None = None
    max_cost_usd: NonNegativeNumber


class AgentCandidateWorkspaceOutcomeSpec(WireModel):
    """The result is the change to the task workspace."""

    kind: Literal["workspace"]


class AgentCandidateTaskOutputSpec(WireModel):
    """The result is one typed output of at most ``maxBytes`` bytes."""

    kind: Literal["output"]
    media_type: AgentCandidateMediaType
    max_bytes: Annotated[
        int, BeforeValidator(integral_float_to_int), Field(ge=1, le=MAX_TASK_OUTPUT_BYTES)
    ]


AgentCandidateTaskOutcomeSpec = Annotated[
    AgentCandidateWorkspaceOutcomeSpec | AgentCandidateTaskOutputSpec,
    Field(discriminator="kind"),
]
"""The exact result shape of a task: a workspace change or a bounded typed output."""


register_wire_models(
    AgentCandidateExecutionLimits=AgentCandidateExecutionLimits,
    AgentCandidateResolvedTaskContainer=AgentCandidateResolvedTaskContainer,
    AgentCandidateRetryPolicy=AgentCandidateRetryPolicy,
    AgentCandidateTaskOutcomeSpec=AgentCandidateTaskOutcomeSpec,
    AgentCandidateTaskRepository=AgentCandidateTaskRepository,
)
