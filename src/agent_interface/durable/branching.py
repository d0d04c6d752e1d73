"""Retry-safe workspace checkpoints, forks and their cleanup (``workspace-*.ts``).

Every checkpoint and fork request binds an idempotency key to a canonical request
digest. Results and lookups repeat that identity, and the resource they carry is
stamped with it, so a caller can bind an answer to the exact request before using
the resource. A key reused with changed input answers ``conflict`` naming the other
request's digest, never its own. Cleanup names its kind, target and provider, and the
acknowledgement must echo them; a checkpoint still needed by forks answers ``in_use``
with the blocking environment ids."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal, Protocol, Self, runtime_checkable

from pydantic import Field, model_validator

from agent_interface.core.canonical import (
    Sha256Digest,
    canonical_digest,
)
from agent_interface.core.contract_limits import (
    CONTRACT_MAX_ARRAY_LENGTH,
    BoundedIdentifier,
    BoundedJsonRecord,
    wire_digest,
)
from agent_interface.core.errors import Refinement
from agent_interface.core.model import (
    WireList,
    WireModel,
)
from agent_interface.core.registry import register_wire_models
from agent_interface.durable.confidential import (
    ConfidentialAttestation,
    ConfidentialAttestationVerifier,
    ConfidentialExecutionEnvironment,
    ConfidentialExecutionRequest,
    _resource_identity_matches,
    confidential_execution_verified,
)
from agent_interface.durable.portable_context import (
    NonEmptyBoundedString,
    WireTimestamp,
    material_of,
    parse_or_none,
    plain_wire,
    same_optional_wire,
    same_wire,
)
from agent_interface.environment.workspace import PlacementInfo
from agent_interface.runtime.control import AgentExactRunControlRef

__all__ = [
    "AgentWorkspaceBranching",
    "ForkedEnvironmentRef",
    "WorkspaceCheckpointConflict",
    "WorkspaceCheckpointFound",
    "WorkspaceCheckpointLookupResult",
    "WorkspaceCheckpointRef",
    "WorkspaceCheckpointRequest",
    "WorkspaceCheckpointResult",
    "WorkspaceCheckpointSuccess",
    "WorkspaceCleanupAcknowledgement",
    "WorkspaceCleanupKind",
    "WorkspaceCleanupRequest",
    "WorkspaceForkConflict",
    "WorkspaceForkFound",
    "WorkspaceForkLookupResult",
    "WorkspaceForkRequest",
    "WorkspaceForkResult",
    "WorkspaceForkSuccess",
    "WorkspaceOperationLookupRequest",
    "WorkspaceOperationNotFound",
    "WorkspaceOperationUnknown",
    "durable_branching_flags_problem",
    "forked_environment_confidentiality_verified",
    "workspace_checkpoint_request_digest",
    "workspace_checkpoint_result_matches_request",
    "workspace_cleanup_acknowledgement_matches",
    "workspace_cleanup_request_digest",
    "workspace_fork_request_digest",
    "workspace_fork_result_matches_request",
]


# --- shared answer variants ---------------------------------------------------------------


class _OperationIdentity(WireModel):
    idempotency_key: BoundedIdentifier
    request_digest: Sha256Digest


class WorkspaceOperationLookupRequest(_OperationIdentity):
    """Recover an operation by its key and the digest of the request it was sent with."""


class _ConflictBase(_OperationIdentity):
    status: Literal["conflict"] = "conflict"
    existing_request_digest: Sha256Digest

    @model_validator(mode="after")
    def _refine_conflict(self) -> Self:
        issues = Refinement(type(self).__name__)
        if self.existing_request_digest == self.request_digest:
            issues.add(
                ("existingRequestDigest",),
                "self_conflict",
                "a conflict must identify a different existing request",
            )
        issues.check()
        return self


class WorkspaceOperationUnknown(_OperationIdentity):
    """The remote outcome is not known; ``retryable`` says whether the same request may be resent."""

    status: Literal["unknown"] = "unknown"
    message: NonEmptyBoundedString
    retryable: bool


class WorkspaceOperationNotFound(_OperationIdentity):
    """No operation is recorded under this key."""

    status: Literal["not_found"] = "not_found"


# --- checkpoint (``workspace-checkpoint.ts``) -----------------------------------------------


class _WorkspaceCheckpointMaterial(WireModel):
    source: AgentExactRunControlRef
    name: BoundedIdentifier | None = None
    metadata: BoundedJsonRecord | None = None


def workspace_checkpoint_request_digest(material: Mapping[str, Any] | WireModel) -> str:
    """``workspaceCheckpointRequestDigest``: digest of ``source`` and, when set, ``name``
    and ``metadata`` (the idempotency key is not part of it)."""
    parsed = material_of(material, _WorkspaceCheckpointMaterial, ("idempotencyKey", "requestDigest"))
    return wire_digest(parsed.to_wire())


class WorkspaceCheckpointRequest(_WorkspaceCheckpointMaterial):
    """Checkpoint the workspace of an exact run, once per idempotency key."""

    idempotency_key: BoundedIdentifier
    request_digest: Sha256Digest

    @model_validator(mode="after")
    def _refine(self) -> Self:
        issues = Refinement("WorkspaceCheckpointRequest")
        if self.request_digest != workspace_checkpoint_request_digest(self):
            issues.add(("requestDigest",), "digest_mismatch", "checkpoint request digest does not match its material")
        issues.check()
        return self

    @classmethod
    def seal(cls, material: Mapping[str, Any], *, idempotency_key: str) -> Self:
        """Build a request from its material (wire names), computing ``requestDigest``."""
        plain = plain_wire(material)
        return cls.parse_wire(
            {
                **plain,
                "idempotencyKey": idempotency_key,
                "requestDigest": workspace_checkpoint_request_digest(plain),
            }
        )


class WorkspaceCheckpointRef(WireModel):
    """A checkpoint, stamped with the operation that made it."""

    checkpoint_id: BoundedIdentifier
    provider: BoundedIdentifier
    source: AgentExactRunControlRef
    idempotency_key: BoundedIdentifier
    request_digest: Sha256Digest
    created_at: WireTimestamp
    metadata: BoundedJsonRecord | None = None

    @model_validator(mode="after")
    def _refine(self) -> Self:
        issues = Refinement("WorkspaceCheckpointRef")
        if self.provider != self.source.provider:
            issues.add(("provider",), "provider_mismatch", "checkpoint provider must match its source run")
        issues.check()
        return self


class _CheckpointCarrier(_OperationIdentity):
    checkpoint: WorkspaceCheckpointRef

    @model_validator(mode="after")
    def _refine_identity(self) -> Self:
        issues = Refinement(type(self).__name__)
        if not _resource_identity_matches(self, self.checkpoint):
            issues.add(("checkpoint",), "resource_identity_mismatch", "checkpoint identity must match its operation")
        issues.check()
        return self


class WorkspaceCheckpointSuccess(_CheckpointCarrier):
    """``created`` by this call, or ``replayed`` from an earlier call with the same request."""

    status: Literal["created", "replayed"]


class WorkspaceCheckpointConflict(_ConflictBase):
    """The key already holds a different checkpoint request."""


WorkspaceCheckpointResult = Annotated[
    WorkspaceCheckpointSuccess | WorkspaceCheckpointConflict | WorkspaceOperationUnknown,
    Field(discriminator="status"),
]


class WorkspaceCheckpointFound(_CheckpointCarrier):
    status: Literal["found"] = "found"


WorkspaceCheckpointLookupResult = Annotated[
    WorkspaceCheckpointFound
    | WorkspaceOperationNotFound
    | WorkspaceCheckpointConflict
    | WorkspaceOperationUnknown,
    Field(discriminator="status"),
]


def workspace_checkpoint_result_matches_request(request: Any, result: Any) -> bool:
    """``workspaceCheckpointResultMatchesRequest``: a created, replayed or found answer
    carries a checkpoint of exactly this request (key, digest, source run, metadata,
    provider). Every other answer, and any invalid input, is ``False``."""
    exact_request: WorkspaceCheckpointRequest | None = parse_or_none(WorkspaceCheckpointRequest, request)
    if exact_request is None:
        return False
    answer = parse_or_none(WorkspaceCheckpointResult, result)
    if not isinstance(answer, WorkspaceCheckpointSuccess):
        answer = parse_or_none(WorkspaceCheckpointLookupResult, result)
        if not isinstance(answer, WorkspaceCheckpointFound):
            return False
    checkpoint = answer.checkpoint
    return (
        _resource_identity_matches(exact_request, answer)
        and _resource_identity_matches(exact_request, checkpoint)
        and same_wire(checkpoint.source, exact_request.source)
        and same_optional_wire(checkpoint.metadata, exact_request.metadata)
        and checkpoint.provider == exact_request.source.provider
    )


# --- fork (``workspace-fork.ts``) -----------------------------------------------------------


class _WorkspaceForkMaterial(WireModel):
    checkpoint: WorkspaceCheckpointRef
    name: BoundedIdentifier | None = None
    metadata: BoundedJsonRecord | None = None
    placement: PlacementInfo
    confidential: ConfidentialExecutionRequest | None = None


def workspace_fork_request_digest(material: Mapping[str, Any] | WireModel) -> str:
    """``workspaceForkRequestDigest``: digest of ``checkpoint``, ``placement`` and, when
    set, ``name``, ``metadata`` and ``confidential``."""
    parsed = material_of(material, _WorkspaceForkMaterial, ("idempotencyKey", "requestDigest"))
    return wire_digest(parsed.to_wire())


class WorkspaceForkRequest(_WorkspaceForkMaterial):
    """Create a new environment from a checkpoint, once per idempotency key. The requested
    placement is part of the identity."""

    idempotency_key: BoundedIdentifier
    request_digest: Sha256Digest

    @model_validator(mode="after")
    def _refine(self) -> Self:
        issues = Refinement("WorkspaceForkRequest")
        if self.request_digest != workspace_fork_request_digest(self):
            issues.add(("requestDigest",), "digest_mismatch", "fork request digest does not match its material")
        if self.confidential is not None and self.confidential.requested and not self.confidential.complete:
            issues.add(
                ("confidential",),
                "confidential_binding_missing",
                "a confidential fork request must bind a nonce, policy, and profile digest",
            )
        issues.check()
        return self

    @classmethod
    def seal(cls, material: Mapping[str, Any], *, idempotency_key: str) -> Self:
        """Build a request from its material (wire names), computing ``requestDigest``."""
        plain = plain_wire(material)
        return cls.parse_wire(
            {
                **plain,
                "idempotencyKey": idempotency_key,
                "requestDigest": workspace_fork_request_digest(plain),
            }
        )


class ForkedEnvironmentRef(WireModel):
    """A forked environment, stamped with the operation that made it and its full source run.

    ``confidential`` is a legacy assertion kept for wire compatibility and never trusted;
    use :func:`forked_environment_confidentiality_verified`.
    """

    provider: BoundedIdentifier
    environment_id: BoundedIdentifier
    source_environment_id: BoundedIdentifier
    source: AgentExactRunControlRef
    source_checkpoint_id: BoundedIdentifier
    idempotency_key: BoundedIdentifier
    request_digest: Sha256Digest
    created_at: WireTimestamp
    placement: PlacementInfo
    confidential_requested: bool
    confidential_attestation: ConfidentialAttestation | None = None
    confidential: bool | None = None
    metadata: BoundedJsonRecord | None = None

    @model_validator(mode="after")
    def _refine(self) -> Self:
        issues = Refinement("ForkedEnvironmentRef")
        if self.environment_id == self.source_environment_id:
            issues.add(
                ("environmentId",),
                "fork_reuses_source_environment",
                "a forked environment must differ from its source environment",
            )
        if self.source.environment_id != self.source_environment_id:
            issues.add(
                ("sourceEnvironmentId",),
                "source_environment_mismatch",
                "source environment id must match the complete source identity",
            )
        if self.provider != self.source.provider:
            issues.add(("provider",), "provider_mismatch", "fork provider must match the source provider")
        attestation = self.confidential_attestation
        if attestation is not None and attestation.environment_id != self.environment_id:
            issues.add(
                ("confidentialAttestation", "environmentId"),
                "attestation_environment_mismatch",
                "attestation must be bound to the forked environment",
            )
        if attestation is not None and not self.confidential_requested:
            issues.add(
                ("confidentialAttestation",),
                "attestation_unrequested",
                "attestation cannot accompany a fork that did not request confidentiality",
            )
        issues.check()
        return self


def forked_environment_confidentiality_verified(
    request: Any,
    environment: Any,
    verify_provider_attestation: ConfidentialAttestationVerifier | None = None,
) -> bool:
    """``forkedEnvironmentConfidentialityVerified``: the only way to decide whether a fork
    may be shown as confidential."""
    exact_request: WorkspaceForkRequest | None = parse_or_none(WorkspaceForkRequest, request)
    exact_environment: ForkedEnvironmentRef | None = parse_or_none(ForkedEnvironmentRef, environment)
    if exact_request is None or exact_environment is None:
        return False
    checkpoint = exact_request.checkpoint
    if (
        exact_environment.request_digest != exact_request.request_digest
        or exact_environment.provider != checkpoint.provider
        or exact_environment.source_checkpoint_id != checkpoint.checkpoint_id
        or exact_environment.source_environment_id != checkpoint.source.environment_id
        or not same_wire(exact_environment.source, checkpoint.source)
        or not same_wire(exact_environment.placement, exact_request.placement)
        or not same_optional_wire(exact_environment.metadata, exact_request.metadata)
    ):
        return False
    confidential = exact_request.confidential or ConfidentialExecutionRequest(requested=False)
    try:
        facts = ConfidentialExecutionEnvironment(
            provider=exact_environment.provider,
            environment_id=exact_environment.environment_id,
            source=exact_environment.source,
            request_digest=exact_environment.request_digest,
            confidential_requested=exact_environment.confidential_requested,
        )
    except ValueError:
        return False
    return confidential_execution_verified(
        request=confidential,
        environment=facts,
        attestation=exact_environment.confidential_attestation,
        verify_provider_attestation=verify_provider_attestation,
    )


class _EnvironmentCarrier(_OperationIdentity):
    environment: ForkedEnvironmentRef

    @model_validator(mode="after")
    def _refine_identity(self) -> Self:
        issues = Refinement(type(self).__name__)
        if not _resource_identity_matches(self, self.environment):
            issues.add(
                ("environment",),
                "resource_identity_mismatch",
                "forked environment identity must match its operation",
            )
        issues.check()
        return self


class WorkspaceForkSuccess(_EnvironmentCarrier):
    """``created`` by this call, or ``replayed`` from an earlier call with the same request."""

    status: Literal["created", "replayed"]


class WorkspaceForkConflict(_ConflictBase):
    """The key already holds a different fork request."""


WorkspaceForkResult = Annotated[
    WorkspaceForkSuccess | WorkspaceForkConflict | WorkspaceOperationUnknown,
    Field(discriminator="status"),
]


class WorkspaceForkFound(_EnvironmentCarrier):
    status: Literal["found"] = "found"


WorkspaceForkLookupResult = Annotated[
    WorkspaceForkFound | WorkspaceOperationNotFound | WorkspaceForkConflict | WorkspaceOperationUnknown,
    Field(discriminator="status"),
]


def workspace_fork_result_matches_request(request: Any, result: Any) -> bool:
    """``workspaceForkResultMatchesRequest``: a created, replayed or found answer carries a
    new environment made by exactly this request from exactly its checkpoint."""
    exact_request: WorkspaceForkRequest | None = parse_or_none(WorkspaceForkRequest, request)
    if exact_request is None:
        return False
    answer = parse_or_none(WorkspaceForkResult, result)
    if not isinstance(answer, WorkspaceForkSuccess):
        answer = parse_or_none(WorkspaceForkLookupResult, result)
        if not isinstance(answer, WorkspaceForkFound):
            return False
    environment = answer.environment
    source = exact_request.checkpoint.source
    requested = exact_request.confidential.requested if exact_request.confidential else False
    return (
        _resource_identity_matches(exact_request, answer)
        and _resource_identity_matches(exact_request, environment)
        and environment.source_checkpoint_id == exact_request.checkpoint.checkpoint_id
        and environment.provider == exact_request.checkpoint.provider
        and environment.source_environment_id == source.environment_id
        and same_wire(environment.source, source)
        and environment.environment_id != source.environment_id
        and same_wire(environment.placement, exact_request.placement)
        and environment.confidential_requested == requested
        and same_optional_wire(environment.metadata, exact_request.metadata)
    )


# --- cleanup (``workspace-cleanup.ts``) -----------------------------------------------------

WorkspaceCleanupKind = Literal["checkpoint", "fork"]
"""Which kind of resource a cleanup addresses; checkpoints and forks have separate authority."""


class _WorkspaceCleanupMaterial(WireModel):
    kind: WorkspaceCleanupKind
    target_id: BoundedIdentifier
    provider: BoundedIdentifier


def workspace_cleanup_request_digest(material: Mapping[str, Any] | WireModel) -> str:
    """``workspaceCleanupRequestDigest``: digest of exactly ``kind``, ``targetId`` and ``provider``."""
    if isinstance(material, WireModel):
        wire = material.to_wire()
        parsed = _WorkspaceCleanupMaterial.parse_wire(
            {key: wire[key] for key in ("kind", "targetId", "provider") if key in wire}
        )
    else:
        parsed = material_of(material, _WorkspaceCleanupMaterial, ())
    return canonical_digest(parsed.to_wire())


class WorkspaceCleanupRequest(_WorkspaceCleanupMaterial):
    """Delete a checkpoint or destroy a forked environment, as one operation."""

    operation_id: BoundedIdentifier
    request_digest: Sha256Digest

    @model_validator(mode="after")
    def _refine(self) -> Self:
        issues = Refinement("WorkspaceCleanupRequest")
        if self.request_digest != workspace_cleanup_request_digest(self):
            issues.add(("requestDigest",), "digest_mismatch", "cleanup request digest does not match its target")
        issues.check()
        return self

    @classmethod
    def for_target(cls, *, operation_id: str, kind: WorkspaceCleanupKind, target_id: str, provider: str) -> Self:
        """Build a request, computing ``requestDigest``."""
        material = {"kind": kind, "targetId": target_id, "provider": provider}
        return cls.parse_wire(
            {**material, "operationId": operation_id, "requestDigest": workspace_cleanup_request_digest(material)}
        )


_CLEANUP_NEEDS_MESSAGE = frozenset({"unknown", "in_use", "conflict", "transport_failure"})
_CLEANUP_NEEDS_RETRYABLE = frozenset({"unknown", "transport_failure"})


class WorkspaceCleanupAcknowledgement(_WorkspaceCleanupMaterial):
    """The provider's answer to a cleanup, echoing the exact operation, kind, target and provider."""

    operation_id: BoundedIdentifier
    request_digest: Sha256Digest
    status: Literal["deleted", "already_absent", "unknown", "in_use", "conflict", "transport_failure"]
    existing_request_digest: Sha256Digest | None = None
    message: NonEmptyBoundedString | None = None
    retryable: bool | None = None
    blocking_target_ids: (
        Annotated[WireList[BoundedIdentifier], Field(min_length=1, max_length=CONTRACT_MAX_ARRAY_LENGTH)]
        | None
    ) = None

    @model_validator(mode="after")
    def _refine(self) -> Self:
        issues = Refinement("WorkspaceCleanupAcknowledgement")
        status = self.status
        if status in _CLEANUP_NEEDS_MESSAGE and self.message is None:
            issues.add(("message",), "message_missing", "{status} cleanup must include a message", {"status": status})
        if status == "in_use" and self.blocking_target_ids is None:
            issues.add(
                ("blockingTargetIds",),
                "blocking_targets_missing",
                "in_use cleanup must identify every known blocking target",
            )
        if status != "in_use" and self.blocking_target_ids is not None:
            issues.add(
                ("blockingTargetIds",),
                "blocking_targets_unexpected",
                "only in_use cleanup may identify blocking targets",
            )
        blockers = self.blocking_target_ids
        if blockers is not None and len(set(blockers)) != len(blockers):
            issues.add(("blockingTargetIds",), "duplicate_blocking_target", "blocking cleanup target ids must be unique")
        if status in _CLEANUP_NEEDS_RETRYABLE and self.retryable is None:
            issues.add(
                ("retryable",),
                "retryable_missing",
                "{status} cleanup must state whether retry is safe",
                {"status": status},
            )
        if status == "conflict" and self.existing_request_digest is None:
            issues.add(
                ("existingRequestDigest",),
                "existing_digest_missing",
                "a cleanup conflict must include the existing digest",
            )
        if status == "conflict" and self.existing_request_digest == self.request_digest:
            issues.add(
                ("existingRequestDigest",),
                "self_conflict",
                "a cleanup conflict must identify a different request",
            )
        if status != "conflict" and self.existing_request_digest is not None:
            issues.add(
                ("existingRequestDigest",),
                "existing_digest_unexpected",
                "only a cleanup conflict may include an existing digest",
            )
        if self.request_digest != workspace_cleanup_request_digest(self):
            issues.add(
                ("requestDigest",),
                "digest_mismatch",
                "cleanup acknowledgement digest does not match its target",
            )
        issues.check()
        return self


def workspace_cleanup_acknowledgement_matches(request: Any, acknowledgement: Any) -> bool:
    """``workspaceCleanupAcknowledgementMatches``: the target is confirmed gone (``deleted``
    or ``already_absent``) and the answer echoes exactly this operation, kind, target,
    provider and digest."""
    exact_request: WorkspaceCleanupRequest | None = parse_or_none(WorkspaceCleanupRequest, request)
    exact_ack: WorkspaceCleanupAcknowledgement | None = parse_or_none(
        WorkspaceCleanupAcknowledgement, acknowledgement
    )
    if exact_request is None or exact_ack is None:
        return False
    return (
        exact_ack.status in ("deleted", "already_absent")
        and exact_ack.operation_id == exact_request.operation_id
        and exact_ack.kind == exact_request.kind
        and exact_ack.target_id == exact_request.target_id
        and exact_ack.provider == exact_request.provider
        and exact_ack.request_digest == exact_request.request_digest
    )


# --- the provider surface -------------------------------------------------------------------


@runtime_checkable
class AgentWorkspaceBranching(Protocol):
    """Durable checkpoint and fork operations of a capable provider (``AgentWorkspaceBranching``).

    Each method is one retry-safe operation: the same request may be sent again after
    an ambiguous answer. Cancelling the awaiting task abandons one attempt only.
    """

    async def checkpoint(self, request: WorkspaceCheckpointRequest) -> Any: ...

    async def lookup_checkpoint(self, request: WorkspaceOperationLookupRequest) -> Any: ...

    async def delete_checkpoint(self, request: WorkspaceCleanupRequest) -> Any: ...

    async def fork(self, request: WorkspaceForkRequest) -> Any: ...

    async def lookup_fork(self, request: WorkspaceOperationLookupRequest) -> Any: ...

    async def destroy_fork(self, request: WorkspaceCleanupRequest) -> Any: ...


_DURABLE_FLAGS = ("retrySafe", "lookup", "cleanup")


def durable_branching_flags_problem(branching: Mapping[str, Any]) -> str | None:
    """The all-or-nothing rule for a ``branching`` capability block (wire names).

    ``retrySafe``, ``lookup`` and ``cleanup`` are declared together, and only with
    ``checkpoint`` and ``fork``; leaving all three absent or false is the compatible
    declaration. Returns the broken rule, or ``None``.
    """
    flags = [branching.get(flag, False) is True for flag in _DURABLE_FLAGS]
    if any(flags) and (
        not all(flags) or branching.get("checkpoint") is not True or branching.get("fork") is not True
    ):
        return "retry-safe branching requires checkpoint, fork, lookup, and cleanup together"
    return None


register_wire_models(
    WorkspaceCheckpointRequest=WorkspaceCheckpointRequest,
    WorkspaceCheckpointRef=WorkspaceCheckpointRef,
    WorkspaceCheckpointResult=WorkspaceCheckpointResult,
    WorkspaceOperationLookupRequest=WorkspaceOperationLookupRequest,
    WorkspaceCheckpointLookupResult=WorkspaceCheckpointLookupResult,
    WorkspaceForkRequest=WorkspaceForkRequest,
    ForkedEnvironmentRef=ForkedEnvironmentRef,
    WorkspaceForkResult=WorkspaceForkResult,
    WorkspaceForkLookupResult=WorkspaceForkLookupResult,
    WorkspaceCleanupKind=WorkspaceCleanupKind,
    WorkspaceCleanupRequest=WorkspaceCleanupRequest,
    WorkspaceCleanupAcknowledgement=WorkspaceCleanupAcknowledgement,
)
