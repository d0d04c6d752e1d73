"""Workspace cleanup (``workspace-cleanup.ts``): a request names its kind, target and provider;
the acknowledgement echoes them, and a checkpoint still needed by forks answers ``in_use`` with
the blocking environment ids.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal, Self

from pydantic import Field, model_validator

from agent_interface.core.canonical import (
    Sha256Digest,
    canonical_digest,
)
from agent_interface.core.contract_limits import (
    CONTRACT_MAX_ARRAY_LENGTH,
    BoundedIdentifier,
)
from agent_interface.core.errors import Refinement
from agent_interface.core.model import (
    WireList,
    WireModel,
)
from agent_interface.core.registry import register_wire_models
from agent_interface.durable.wire_values import (
    NonEmptyBoundedString,
    material_of,
    parse_or_none,
)

__all__ = [
    "WorkspaceCleanupAcknowledgement",
    "WorkspaceCleanupKind",
    "WorkspaceCleanupRequest",
    "workspace_cleanup_acknowledgement_matches",
    "workspace_cleanup_request_digest",
]


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


register_wire_models(
    WorkspaceCleanupKind=WorkspaceCleanupKind,
    WorkspaceCleanupRequest=WorkspaceCleanupRequest,
    WorkspaceCleanupAcknowledgement=WorkspaceCleanupAcknowledgement,
)
