"""Answers shared by checkpoints and forks: lookup requests, ``unknown`` and ``not_found``
variants, and the conflict that names the other request's digest.
"""

from __future__ import annotations

from typing import Literal, Self

from pydantic import model_validator

from agent_interface.core.canonical import (
    Sha256Digest,
)
from agent_interface.core.contract_limits import (
    BoundedIdentifier,
)
from agent_interface.core.errors import Refinement
from agent_interface.core.model import (
    WireModel,
)
from agent_interface.core.registry import register_wire_models
from agent_interface.durable.wire_values import (
    NonEmptyBoundedString,
)

__all__ = [
    "WorkspaceOperationLookupRequest",
    "WorkspaceOperationNotFound",
    "WorkspaceOperationUnknown",
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


register_wire_models(
    WorkspaceOperationLookupRequest=WorkspaceOperationLookupRequest,
)
