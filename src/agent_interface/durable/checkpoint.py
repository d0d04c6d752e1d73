"""Retry-safe workspace checkpoints (``workspace-checkpoint.ts``): the request binds an
idempotency key to a canonical request digest; results and lookups repeat that identity.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal, Self

from pydantic import Field, model_validator

from agent_interface.core.canonical import (
    Sha256Digest,
)
from agent_interface.core.contract_limits import (
    BoundedIdentifier,
    BoundedJsonRecord,
    wire_digest,
)
from agent_interface.core.errors import Refinement
from agent_interface.core.model import (
    WireModel,
)
from agent_interface.core.registry import register_wire_models
from agent_interface.durable.branching_operations import (
    WorkspaceOperationNotFound,
    WorkspaceOperationUnknown,
    _ConflictBase,
    _OperationIdentity,
)
from agent_interface.durable.confidential import (
    _resource_identity_matches,
)
from agent_interface.durable.wire_values import (
    WireTimestamp,
    material_of,
    parse_or_none,
    plain_wire,
    same_optional_wire,
    same_wire,
)
from agent_interface.runtime.control_ref import AgentExactRunControlRef

__all__ = [
    "WorkspaceCheckpointConflict",
    "WorkspaceCheckpointFound",
    "WorkspaceCheckpointLookupResult",
    "WorkspaceCheckpointRef",
    "WorkspaceCheckpointRequest",
    "WorkspaceCheckpointResult",
    "WorkspaceCheckpointSuccess",
    "workspace_checkpoint_request_digest",
    "workspace_checkpoint_result_matches_request",
]


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
    """A checkpoint lookup's answer when the keyed checkpoint exists: the checkpoint the original
    request made."""

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


register_wire_models(
    WorkspaceCheckpointRequest=WorkspaceCheckpointRequest,
    WorkspaceCheckpointRef=WorkspaceCheckpointRef,
    WorkspaceCheckpointResult=WorkspaceCheckpointResult,
    WorkspaceCheckpointLookupResult=WorkspaceCheckpointLookupResult,
)
