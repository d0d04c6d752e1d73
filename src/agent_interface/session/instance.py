"""Managed agents that outlive one turn inside an execution environment (``agent-instance.ts``).

A :class:`AgentInstanceSpec` asks a provider to start one agent, with an optional exact
profile, harness override and workspace view; without a profile the provider's default
agent runs, and a profile never implies another machine. The published
:class:`AgentInstanceRecord` carries only credential-free identity (a profile name and
digest, never the profile), no process id, placement or fencing state, and a failure
summary exactly when the instance failed.
"""

from __future__ import annotations

import re
from typing import Annotated, Final, Literal, Self, get_args

from pydantic import AfterValidator, model_validator
from pydantic_core import PydanticCustomError

from agent_interface.core.canonical import Sha256Digest, is_well_formed_unicode
from agent_interface.core.contract_limits import (
    CONTROL_CHARACTER_RE,
    NonNegativeSafeInt,
    Utf16Length,
)
from agent_interface.core.errors import Refinement
from agent_interface.core.json_schema import JsonSchemaPattern
from agent_interface.core.model import WireModel
from agent_interface.core.registry import register_wire_models
from agent_interface.profile.agent_profile import AgentProfile
from agent_interface.profile.harness import HarnessType
from agent_interface.runtime.usage import VersionOne

__all__ = [
    "AGENT_INSTANCE_STATUSES",
    "AGENT_INSTANCE_WORKSPACE_MODES",
    "AgentInstanceFailure",
    "AgentInstanceIdentifier",
    "AgentInstanceProfileIdentity",
    "AgentInstanceRecord",
    "AgentInstanceSpec",
    "AgentInstanceStatus",
    "AgentInstanceStopAcknowledgement",
    "AgentInstanceStopOutcome",
    "AgentInstanceStopRequest",
    "AgentInstanceWorkspace",
    "AgentInstanceWorkspaceMode",
]

AgentInstanceStatus = Literal["starting", "ready", "busy", "failed", "stopped"]
AGENT_INSTANCE_STATUSES: Final[tuple[AgentInstanceStatus, ...]] = get_args(AgentInstanceStatus)

AgentInstanceWorkspaceMode = Literal["shared", "isolated"]
"""``shared``: ordinary same-computer visibility; ``isolated``: a private writable view.
Neither is a security boundary between mutually untrusted agents."""
AGENT_INSTANCE_WORKSPACE_MODES: Final[tuple[AgentInstanceWorkspaceMode, ...]] = get_args(
    AgentInstanceWorkspaceMode
)

AgentInstanceStopOutcome = Literal["stopped", "already-stopped", "not-found"]

_IDENTIFIER_RE: Final = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._:-]*[A-Za-z0-9])?")


def _check_identifier(value: str) -> str:
    if _IDENTIFIER_RE.fullmatch(value) is None:
        raise PydanticCustomError(
            "agent_instance_identifier",
            "identifier must use visible alphanumeric, '.', '_', ':', or '-' characters",
        )
    return value


def _check_label(value: str) -> str:
    if not is_well_formed_unicode(value) or CONTROL_CHARACTER_RE.search(value):
        raise PydanticCustomError(
            "agent_instance_label", "label must be valid Unicode without control characters"
        )
    return value


def _check_failure_message(value: str) -> str:
    if not is_well_formed_unicode(value) or "\0" in value:
        raise PydanticCustomError(
            "agent_instance_failure_message", "failure message must be valid Unicode without NUL"
        )
    return value


AgentInstanceIdentifier = Annotated[
    str,
    Utf16Length(max=128, min=1),
    AfterValidator(_check_identifier),
    JsonSchemaPattern(r"^[A-Za-z0-9](?:[A-Za-z0-9._:-]*[A-Za-z0-9])?$"),
]
"""1..128 characters: ASCII alphanumerics, inner ``.``, ``_``, ``:`` or ``-``."""
Label = Annotated[str, Utf16Length(max=256, min=1), AfterValidator(_check_label)]
FailureMessage = Annotated[str, Utf16Length(max=16_384, min=1), AfterValidator(_check_failure_message)]


class AgentInstanceWorkspace(WireModel):
    """How an agent instance gets its workspace (the mode)."""

    mode: AgentInstanceWorkspaceMode


class AgentInstanceSpec(WireModel):
    """Start one managed agent inside an existing environment."""

    id: AgentInstanceIdentifier | None = None
    name: Label | None = None
    profile: AgentProfile | None = None
    harness: HarnessType | None = None
    workspace: AgentInstanceWorkspace | None = None


class AgentInstanceProfileIdentity(WireModel):
    """Credential-free identity of the profile an instance runs."""

    name: Label | None = None
    digest: Sha256Digest


class AgentInstanceFailure(WireModel):
    """Public failure summary; the provider removes credentials and private detail first."""

    code: AgentInstanceIdentifier | None = None
    message: FailureMessage


class AgentInstanceRecord(WireModel):
    """Portable snapshot of one managed agent."""

    kind: Literal["agent-instance"]
    schema_version: VersionOne
    id: AgentInstanceIdentifier
    name: Label | None = None
    profile: AgentInstanceProfileIdentity | None = None
    harness: HarnessType | None = None
    workspace: AgentInstanceWorkspace
    status: AgentInstanceStatus
    failure: AgentInstanceFailure | None = None
    created_at_ms: NonNegativeSafeInt
    updated_at_ms: NonNegativeSafeInt

    @model_validator(mode="after")
    def _refine_record(self) -> Self:
        issues = Refinement(type(self).__name__)
        if self.updated_at_ms < self.created_at_ms:
            issues.add(
                ("updatedAtMs",),
                "agent_instance_update_before_creation",
                "agent instance update cannot precede creation",
            )
        if self.status == "failed" and self.failure is None:
            issues.add(
                ("failure",),
                "agent_instance_failure_missing",
                "failed agent instance requires a failure reason",
            )
        if self.status != "failed" and self.failure is not None:
            issues.add(
                ("failure",),
                "agent_instance_failure_out_of_state",
                "failure reason is valid only for failed agent instances",
            )
        issues.check()
        return self


class AgentInstanceStopRequest(WireModel):
    """Stop one agent; ``force`` allows provider-defined hard termination."""

    agent_id: AgentInstanceIdentifier
    force: bool | None = None


class AgentInstanceStopAcknowledgement(WireModel):
    """Idempotent stop outcome: repeating a stop answers ``already-stopped``."""

    agent_id: AgentInstanceIdentifier
    outcome: AgentInstanceStopOutcome


register_wire_models(
    AgentInstanceStatus=AgentInstanceStatus,
    AgentInstanceWorkspaceMode=AgentInstanceWorkspaceMode,
    AgentInstanceWorkspace=AgentInstanceWorkspace,
    AgentInstanceSpec=AgentInstanceSpec,
    AgentInstanceProfileIdentity=AgentInstanceProfileIdentity,
    AgentInstanceFailure=AgentInstanceFailure,
    AgentInstanceRecord=AgentInstanceRecord,
    AgentInstanceStopRequest=AgentInstanceStopRequest,
    AgentInstanceStopAcknowledgement=AgentInstanceStopAcknowledgement,
)
