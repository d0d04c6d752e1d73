"""Who may write a workspace, from which source snapshot, and in which lifecycle phase
(``agent-workspace-lease.ts``).

A lease record is the self-hashed public projection of one workspace allocation. Its
phase fixes exactly which preparation evidence it carries:

* ``copy-ready``: none; ``workspace-sealed``: prepared-workspace and profile-activation
  digests; ``execution-bound``: those two plus the execution-preparation digest;
* ``destroying``, ``cleanup-failed``, ``destroyed``: any one of those three evidence
  stages, at least one cleanup attempt, and a sanitized ``cleanupError`` only when
  cleanup failed.

The prepared-workspace and profile-activation digests always appear together, and the
execution binding needs both. ``digest`` is the RFC 8785 ``sha256:`` digest of the
record without its ``digest`` key. The owner token that authorizes changes is
request-only: no record field can hold it, and the request types below keep it out of
their ``repr``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Final, Literal, Self, get_args

from pydantic import AfterValidator, model_validator
from pydantic_core import PydanticCustomError

from agent_interface.core.canonical import Sha256Digest, canonical_digest
from agent_interface.core.contract_limits import NonNegativeSafeInt, Utf16Length
from agent_interface.core.errors import Refinement
from agent_interface.core.model import WireModel
from agent_interface.core.registry import register_wire_models
from agent_interface.environment.source_snapshot import (
    AgentWorkspacePublicIdentifier,
    AgentWorkspaceSourceSnapshotPolicy,
    is_public_workspace_text,
)
from agent_interface.runtime.usage import VersionOne

__all__ = [
    "AGENT_WORKSPACE_LEASE_PHASES",
    "AgentWorkspaceAllocationIdentity",
    "AgentWorkspaceExecutionBindingRequest",
    "AgentWorkspaceLeaseAuthorization",
    "AgentWorkspaceLeasePhase",
    "AgentWorkspaceLeaseRecord",
    "AgentWorkspaceLeaseRecordMaterial",
    "AgentWorkspaceLeaseRenewalRequest",
    "AgentWorkspaceSealRequest",
    "AgentWorkspaceSourceSnapshotPolicy",
    "build_agent_workspace_lease_record",
    "canonical_agent_workspace_lease_record_digest",
]

AgentWorkspaceLeasePhase = Literal[
    "copy-ready",
    "workspace-sealed",
    "execution-bound",
    "destroying",
    "cleanup-failed",
    "destroyed",
]
AGENT_WORKSPACE_LEASE_PHASES: Final[tuple[AgentWorkspaceLeasePhase, ...]] = get_args(
    AgentWorkspaceLeasePhase
)
_ACTIVE_PHASES: Final = frozenset({"copy-ready", "workspace-sealed", "execution-bound"})


def _check_locator(value: str) -> str:
    if not is_public_workspace_text(value):
        raise PydanticCustomError(
            "workspace_locator_not_public", "workspace locator must be public, well-formed text"
        )
    return value


def _check_cleanup_error(value: str) -> str:
    if not is_public_workspace_text(value):
        raise PydanticCustomError(
            "workspace_cleanup_error_not_public",
            "workspace cleanup error must be sanitized public text",
        )
    return value


PublicLocator = Annotated[str, Utf16Length(max=16_384, min=1), AfterValidator(_check_locator)]
PublicCleanupError = Annotated[
    str, Utf16Length(max=2_000, min=1), AfterValidator(_check_cleanup_error)
]


class AgentWorkspaceAllocationIdentity(WireModel):
    """Where an allocation lives. ``root`` locates bytes and grants no authority;
    ``identity_digest`` binds the provider, the allocation and the canonical root."""

    provider: AgentWorkspacePublicIdentifier
    root: PublicLocator
    identity_digest: Sha256Digest


class AgentWorkspaceLeaseRecordMaterial(WireModel):
    """A lease record before its self-digest; the state rules above are enforced."""

    kind: Literal["agent-workspace-lease"]
    schema_version: VersionOne
    phase: AgentWorkspaceLeasePhase
    lease_id: AgentWorkspacePublicIdentifier
    owner_id: AgentWorkspacePublicIdentifier
    workspace: AgentWorkspaceAllocationIdentity
    isolation: Literal["per-run", "shared"]
    source_snapshot_digest: Sha256Digest
    source_snapshot_policy: AgentWorkspaceSourceSnapshotPolicy
    prepared_workspace_digest: Sha256Digest | None = None
    profile_activation_digest: Sha256Digest | None = None
    execution_preparation_digest: Sha256Digest | None = None
    created_at_ms: NonNegativeSafeInt
    updated_at_ms: NonNegativeSafeInt
    expires_at_ms: NonNegativeSafeInt
    cleanup_attempts: NonNegativeSafeInt
    cleanup_error: PublicCleanupError | None = None

    @model_validator(mode="after")
    def _refine_state(self) -> Self:
        issues = Refinement(type(self).__name__)
        _lease_state_issues(self, issues)
        issues.check()
        return self


class AgentWorkspaceLeaseRecord(AgentWorkspaceLeaseRecordMaterial):
    """The public, self-hashed lease record."""

    digest: Sha256Digest

    @model_validator(mode="after")
    def _refine_digest(self) -> Self:
        material = self.to_wire()
        del material["digest"]
        if canonical_digest(material) != self.digest:
            issues = Refinement(type(self).__name__)
            issues.add(
                ("digest",), "workspace_lease_digest_mismatch", "workspace lease record digest is invalid"
            )
            issues.check()
        return self


def _lease_state_issues(record: AgentWorkspaceLeaseRecordMaterial, issues: Refinement) -> None:
    if record.updated_at_ms < record.created_at_ms:
        issues.add(
            ("updatedAtMs",),
            "workspace_lease_update_before_creation",
            "workspace lease update cannot precede creation",
        )
    if record.expires_at_ms <= record.created_at_ms:
        issues.add(
            ("expiresAtMs",),
            "workspace_lease_expiry_not_after_creation",
            "workspace lease expiry must follow creation",
        )
    prepared = record.prepared_workspace_digest is not None
    activation = record.profile_activation_digest is not None
    execution = record.execution_preparation_digest is not None
    if prepared != activation:
        issues.add(
            (),
            "workspace_lease_partial_seal_evidence",
            "prepared workspace and profile activation evidence must appear together",
        )
    if execution and not (prepared and activation):
        issues.add(
            ("executionPreparationDigest",),
            "workspace_lease_binding_without_seal",
            "execution binding requires sealed workspace evidence",
        )
    phase = record.phase
    active = phase in _ACTIVE_PHASES
    if active and record.cleanup_attempts != 0:
        issues.add(
            ("cleanupAttempts",),
            "workspace_lease_active_cleanup_attempts",
            "active workspace phases cannot have cleanup attempts",
        )
    if not active and record.cleanup_attempts < 1:
        issues.add(
            ("cleanupAttempts",),
            "workspace_lease_cleanup_without_attempt",
            "cleanup workspace phases require at least one cleanup attempt",
        )
    if phase == "copy-ready" and (prepared or execution):
        issues.add(
            (),
            "workspace_lease_phase_evidence",
            "copy-ready workspace cannot carry preparation evidence",
        )
    if phase == "workspace-sealed" and (not prepared or not activation or execution):
        issues.add(
            (),
            "workspace_lease_phase_evidence",
            "workspace-sealed phase requires preparation evidence without execution binding",
        )
    if phase == "execution-bound" and not (prepared and activation and execution):
        issues.add(
            (),
            "workspace_lease_phase_evidence",
            "execution-bound phase requires complete preparation evidence",
        )
    if phase == "cleanup-failed":
        if record.cleanup_error is None:
            issues.add(
                ("cleanupError",),
                "workspace_lease_cleanup_error_missing",
                "cleanup-failed phase requires a sanitized error",
            )
    elif record.cleanup_error is not None:
        issues.add(
            ("cleanupError",),
            "workspace_lease_cleanup_error_out_of_phase",
            "cleanup error is valid only in cleanup-failed phase",
        )


def _material(value: AgentWorkspaceLeaseRecordMaterial | Mapping[str, Any]) -> AgentWorkspaceLeaseRecordMaterial:
    if isinstance(value, AgentWorkspaceLeaseRecordMaterial):
        wire = value.to_wire()
        wire.pop("digest", None)
        return AgentWorkspaceLeaseRecordMaterial.parse_wire(wire)
    return AgentWorkspaceLeaseRecordMaterial.parse_wire(value)


def canonical_agent_workspace_lease_record_digest(
    material: AgentWorkspaceLeaseRecordMaterial | Mapping[str, Any],
) -> str:
    """Digest of the validated material: exactly the record without ``digest``.
    Refuses (``ContractError``) material that breaks a lease rule."""
    return canonical_digest(_material(material).to_wire())


def build_agent_workspace_lease_record(
    material: AgentWorkspaceLeaseRecordMaterial | Mapping[str, Any],
) -> AgentWorkspaceLeaseRecord:
    """Validate one phase-valid material and stamp its self-digest."""
    wire = _material(material).to_wire()
    return AgentWorkspaceLeaseRecord.parse_wire({**wire, "digest": canonical_digest(wire)})


# --- request-only owner capability --------------------------------------------------------
# The owner token proves the caller may change the lease. Providers keep at most a one-way
# digest of it; it never enters a record or a receipt, and these types keep it out of repr.


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentWorkspaceLeaseAuthorization:
    """The lease being changed and the owner capability for it."""

    lease_id: str
    owner_token: str = field(repr=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentWorkspaceSealRequest(AgentWorkspaceLeaseAuthorization):
    """Seal the prepared workspace under one profile activation."""

    profile_activation_digest: str


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentWorkspaceExecutionBindingRequest(AgentWorkspaceLeaseAuthorization):
    """Bind a sealed workspace to one execution preparation."""

    execution_preparation_digest: str


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentWorkspaceLeaseRenewalRequest(AgentWorkspaceLeaseAuthorization):
    """Move the lease expiry."""

    expires_at_ms: int



register_wire_models(
    AgentWorkspaceLeasePhase=AgentWorkspaceLeasePhase,
    AgentWorkspaceAllocationIdentity=AgentWorkspaceAllocationIdentity,
    AgentWorkspaceLeaseRecordMaterial=AgentWorkspaceLeaseRecordMaterial,
    AgentWorkspaceLeaseRecord=AgentWorkspaceLeaseRecord,
)
