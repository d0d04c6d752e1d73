"""Workspace and environment request shapes (``environment-requests.ts``).

The working directory of a :class:`WorkspaceRequest` is an explicitly based path
reference (:mod:`agent_interface.environment.cwd`, whose names are public here too).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from agent_interface.core.contract_limits import (
    BoundedIdentifier,
    BoundedJsonRecord,
    BoundedString,
    GreaterThanZeroSafeInt,
    SafeInt,
    Utf16Length,
)
from agent_interface.core.errors import (
    Refinement,
)
from agent_interface.core.model import (
    WireList,
    WireModel,
)
from agent_interface.core.registry import register_wire_models
from agent_interface.environment.cwd import (  # public here too
    MAX_WORKSPACE_CWD_LENGTH,
    HostWorkspaceCwd,
    RepositoryWorkspaceCwd,
    WorkspaceCwd,
    WorkspaceCwdBase,
    canonical_workspace_cwd,
    repository_path_issue,
    workspace_cwd_from_legacy,
    workspace_cwd_path_for_base,
)
from agent_interface.environment.descriptors import AgentEnvironmentStatus
from agent_interface.environment.placement import PlacementInfo  # public here too

__all__ = [
    "MAX_WORKSPACE_CWD_LENGTH",
    "AgentEnvironmentEgressMode",
    "AgentEnvironmentEgressPolicy",
    "AgentEnvironmentQuery",
    "AgentEnvironmentSummary",
    "AgentSessionStatus",
    "BlockedEgressPolicy",
    "CheckpointRef",
    "CheckpointRequest",
    "ExecRequest",
    "ExecResult",
    "ForkRequest",
    "HostWorkspaceCwd",
    "OpenEgressPolicy",
    "PlacementInfo",
    "RepositoryWorkspaceCwd",
    "ResourceRequest",
    "StrictEgressPolicy",
    "WorkspaceCwd",
    "WorkspaceCwdBase",
    "WorkspaceRequest",
    "canonical_workspace_cwd",
    "repository_path_issue",
    "workspace_cwd_from_legacy",
    "workspace_cwd_path_for_base",
]

AgentSessionStatus = Literal[
    "pending",
    "provisioning",
    "running",
    "stopped",
    "failed",
    "expired",
    "unknown",
    "completed",
    "cancelled",
]

AgentEnvironmentEgressMode = Literal["open", "strict", "blocked"]


class OpenEgressPolicy(WireModel):
    """Network egress is open: the process may connect anywhere."""

    mode: Literal["open"] = "open"


class BlockedEgressPolicy(WireModel):
    """Network egress is blocked: the process may connect nowhere."""

    mode: Literal["blocked"] = "blocked"


class StrictEgressPolicy(WireModel):
    """Only the named domains (plus provider-provisioned model endpoints)."""

    mode: Literal["strict"] = "strict"
    allow_domains: Annotated[WireList[BoundedIdentifier], Field(max_length=1024)] | None = None


AgentEnvironmentEgressPolicy = Annotated[
    OpenEgressPolicy | BlockedEgressPolicy | StrictEgressPolicy, Field(discriminator="mode")
]
"""Outbound network policy for one agent environment (``AgentEnvironmentEgressPolicySchema``)."""


class WorkspaceRequest(WireModel):
    """What to put in the environment's workspace (``WorkspaceRequestSchema``)."""

    environment: BoundedIdentifier | None = None
    image: Annotated[str, Utf16Length(max=16_384, min=1)] | None = None
    repo_url: Annotated[str, Utf16Length(max=16_384, min=1)] | None = None
    git_ref: BoundedIdentifier | None = None
    cwd: WorkspaceCwd | None = None
    provider_options: BoundedJsonRecord | None = None

    @model_validator(mode="after")
    def _combinations(self) -> WorkspaceRequest:
        issues = Refinement("WorkspaceRequest")
        if self.environment is not None and self.image is not None:
            issues.add(
                ("image",),
                "workspace_environment_and_image",
                "workspace cannot specify both environment and image",
            )
        if self.git_ref is not None and self.repo_url is None:
            issues.add(
                ("gitRef",), "workspace_git_ref_without_repo", "workspace gitRef requires repoUrl"
            )
        issues.check()
        return self


class ResourceRequest(WireModel):
    """Requested compute for an ordinary environment (provider defaults fill the rest)."""

    cpu: Annotated[float, Field(gt=0, allow_inf_nan=False)] | None = None
    memory_mb: GreaterThanZeroSafeInt | None = None
    disk_mb: GreaterThanZeroSafeInt | None = None
    gpu: BoundedIdentifier | None = None
    provider_options: BoundedJsonRecord | None = None


class AgentEnvironmentQuery(WireModel):
    """Filter for listing environments: a name, metadata to match and provider options."""

    name: BoundedString | None = None
    metadata: BoundedJsonRecord | None = None
    provider_options: BoundedJsonRecord | None = None


class AgentEnvironmentSummary(WireModel):
    """One environment as ``provider.list()`` answers it: id, provider, and the name,
    status and metadata snapshot when known."""

    id: BoundedIdentifier
    provider: BoundedIdentifier
    name: BoundedString | None = None
    status: AgentEnvironmentStatus | None = None
    metadata: BoundedJsonRecord | None = None


class ExecRequest(WireModel):
    """Options of one ``exec`` call (the abort signal is a runtime argument, not wire)."""

    cwd: BoundedString | None = None
    env: dict[str, BoundedString] | None = None
    timeout_ms: GreaterThanZeroSafeInt | None = None


class ExecResult(WireModel):
    """What a command run in the workspace returned: exit code, stdout and stderr."""

    exit_code: SafeInt
    stdout: str
    stderr: str


class CheckpointRequest(WireModel):
    """Request to checkpoint a workspace, with an optional name and metadata."""

    name: BoundedString | None = None
    metadata: BoundedJsonRecord | None = None


class CheckpointRef(WireModel):
    """A workspace checkpoint a provider made: its id, the provider and metadata."""

    id: BoundedIdentifier
    provider: BoundedIdentifier | None = None
    metadata: BoundedJsonRecord | None = None


class ForkRequest(WireModel):
    """Request to fork an environment, with an optional name and metadata."""

    name: BoundedString | None = None
    metadata: BoundedJsonRecord | None = None


register_wire_models(
    WorkspaceRequest=WorkspaceRequest,
    AgentEnvironmentEgressPolicy=AgentEnvironmentEgressPolicy,
    ResourceRequest=ResourceRequest,
    AgentEnvironmentQuery=AgentEnvironmentQuery,
    AgentEnvironmentSummary=AgentEnvironmentSummary,
    ExecRequest=ExecRequest,
    ExecResult=ExecResult,
    CheckpointRequest=CheckpointRequest,
    CheckpointRef=CheckpointRef,
    ForkRequest=ForkRequest,
)
