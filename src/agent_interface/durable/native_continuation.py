"""Same-session native continuation (``portable-context-continuation.ts`` and the
``continueNative`` part of ``environment-runtime.ts``).

Native continuation sends only a new user turn to a retained provider session: zero
copied history. A :class:`NativeContextContinuationRequest` binds one operation id to
the exact run, the boundary the caller last observed (a
:class:`NativeContextBoundaryProof`) and ``turnDigest``, the digest of the exact
JSON-stable :class:`NativeContextContinuationTurn`. Timeout, abort and the admission
callback are runtime controls in :class:`AgentNativeContextContinuationOptions`, outside
that digest. :class:`NativeContinuationLedger` is a provider-side helper that applies
the retry, conflict and admission rules."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, ClassVar, Literal, Self

from pydantic import (
    BeforeValidator,
    Field,
    model_validator,
)

from agent_interface.core.canonical import Sha256Digest
from agent_interface.core.contract_limits import (
    CONTRACT_MAX_ARRAY_LENGTH,
    BoundedIdentifier,
    BoundedJsonRecord,
    BoundedString,
    integral_float_to_int,
)
from agent_interface.core.errors import (
    Refinement,
)
from agent_interface.core.model import (
    WireList,
    WireModel,
)
from agent_interface.core.registry import register_wire_models
from agent_interface.durable.wire_values import (
    IdentifierList,
    NonEmptyBoundedString,
    WireTimestamp,
    epoch_ms,
    material_of,
    parse_or_none,
    plain_wire,
    portable_wire_digest,
    same_wire,
)
from agent_interface.runtime.control_ref import AgentExactRunControlRef
from agent_interface.runtime.parts import InputPart

__all__ = [
    "NativeContextBoundary",
    "NativeContextBoundaryProof",
    "NativeContextContinuationAcknowledgement",
    "NativeContextContinuationRequest",
    "NativeContextContinuationTurn",
    "native_context_continuation_acknowledgement_matches",
    "native_context_continuation_request_digest",
    "native_context_continuation_turn_digest",
]


# --- boundary --------------------------------------------------------------------------------


class NativeTokenBoundary(WireModel):
    kind: Literal["token"] = "token"
    token: BoundedIdentifier


class NativeRevisionBoundary(WireModel):
    kind: Literal["revision"] = "revision"
    revision: BoundedIdentifier


class NativeDigestBoundary(WireModel):
    kind: Literal["digest"] = "digest"
    digest: Sha256Digest


class NativeMessagesBoundary(WireModel):
    kind: Literal["messages"] = "messages"
    message_ids: IdentifierList
    digest: Sha256Digest

    refinements_apply: ClassVar[bool] = True
    """False on the variant read inside the reference's intersection, where zod skips them."""

    @model_validator(mode="after")
    def _refine(self) -> Self:
        if not self.refinements_apply:
            return self
        issues = Refinement("NativeMessagesBoundary")
        if len(set(self.message_ids)) != len(self.message_ids):
            issues.add(("messageIds",), "duplicate_message_id", "native context boundary message ids must be unique")
        issues.check()
        return self


NativeContextBoundary = Annotated[
    NativeTokenBoundary | NativeRevisionBoundary | NativeDigestBoundary | NativeMessagesBoundary,
    Field(discriminator="kind"),
]
"""The recorded point of a native session: a token, revision, digest or message list."""


class NativeContextBoundaryProof(WireModel):
    """A boundary observed on one exact run, and when it was observed."""

    run_id: BoundedIdentifier
    provider: BoundedIdentifier
    environment_id: BoundedIdentifier
    session_id: BoundedIdentifier
    execution_id: BoundedIdentifier
    request_digest: Sha256Digest
    boundary: NativeContextBoundary
    observed_at: WireTimestamp


def _proof_matches_run(run: AgentExactRunControlRef, proof: NativeContextBoundaryProof) -> bool:
    return (
        proof.run_id == run.run_id
        and proof.provider == run.provider
        and proof.environment_id == run.environment_id
        and proof.session_id == run.session_id
        and proof.execution_id == run.execution_id
        and proof.request_digest == run.request_digest
    )


# --- turn and request ---------------------------------------------------------------------------


class NativeContextContinuationTurn(WireModel):
    """The exact JSON-stable new user turn that a continuation admits."""

    prompt: BoundedString | None = None
    parts: Annotated[WireList[InputPart], Field(max_length=CONTRACT_MAX_ARRAY_LENGTH)] | None = None
    model: BoundedIdentifier | None = None
    context: BoundedJsonRecord | None = None
    provider_options: BoundedJsonRecord | None = None


def native_context_continuation_turn_digest(turn: Mapping[str, Any] | WireModel) -> str:
    """``nativeContextContinuationTurnDigest``: digest of the validated turn."""
    parsed = material_of(turn, NativeContextContinuationTurn, ())
    return portable_wire_digest(parsed.to_wire())


class _NativeContextContinuationMaterial(WireModel):
    operation_id: BoundedIdentifier
    turn_digest: Sha256Digest
    run: AgentExactRunControlRef
    expected_boundary: NativeContextBoundaryProof


def native_context_continuation_request_digest(material: Mapping[str, Any] | WireModel) -> str:
    """``nativeContextContinuationRequestDigest``: digest of ``operationId``,
    ``turnDigest``, ``run`` and ``expectedBoundary``."""
    parsed = material_of(material, _NativeContextContinuationMaterial, ("requestDigest",))
    return portable_wire_digest(parsed.to_wire())


class NativeContextContinuationRequest(_NativeContextContinuationMaterial):
    """Continue exactly ``run`` from ``expectedBoundary`` with the turn named by ``turnDigest``."""

    request_digest: Sha256Digest

    @model_validator(mode="after")
    def _refine(self) -> Self:
        issues = Refinement("NativeContextContinuationRequest")
        if not _proof_matches_run(self.run, self.expected_boundary):
            issues.add(("expectedBoundary",), "boundary_run_mismatch", "boundary proof must match the continued run")
        if self.request_digest != native_context_continuation_request_digest(self):
            issues.add(
                ("requestDigest",),
                "digest_mismatch",
                "native continuation request digest does not match its content",
            )
        issues.check()
        return self

    @classmethod
    def seal(cls, *, operation_id: str, turn: Any, run: Any, expected_boundary: Any) -> Self:
        """Build a request for ``turn``, computing ``turnDigest`` and ``requestDigest``."""
        material = {
            "operationId": operation_id,
            "turnDigest": native_context_continuation_turn_digest(turn),
            "run": plain_wire(run),
            "expectedBoundary": plain_wire(expected_boundary),
        }
        return cls.parse_wire({**material, "requestDigest": native_context_continuation_request_digest(material)})


# --- acknowledgement -------------------------------------------------------------------------

AcknowledgementStatus = Literal[
    "accepted",
    "replayed",
    "conflict",
    "boundary_mismatch",
    "unverified",
    "unknown_session",
    "transport_failure",
]


class NativeContextContinuationAcknowledgement(WireModel):
    """A provider's answer about one continuation operation."""

    operation_id: BoundedIdentifier
    request_digest: Sha256Digest
    status: AcknowledgementStatus
    history_messages_sent: Annotated[
        int, BeforeValidator(integral_float_to_int), Field(ge=0, le=CONTRACT_MAX_ARRAY_LENGTH)
    ]
    existing_request_digest: Sha256Digest | None = None
    actual_boundary: NativeContextBoundaryProof | None = None
    message: NonEmptyBoundedString | None = None
    retryable: bool | None = None

    refinements_apply: ClassVar[bool] = True
    """False on the variant read inside the reference's intersection, where zod skips them."""

    @model_validator(mode="after")
    def _refine(self) -> Self:
        if not self.refinements_apply:
            return self
        issues = Refinement("NativeContextContinuationAcknowledgement")
        status = self.status
        if status == "conflict" and self.existing_request_digest is None:
            issues.add(
                ("existingRequestDigest",),
                "existing_digest_missing",
                "a continuation conflict must include the existing digest",
            )
        if status == "conflict" and self.existing_request_digest == self.request_digest:
            issues.add(
                ("existingRequestDigest",),
                "self_conflict",
                "a continuation conflict must identify a different request",
            )
        if status != "conflict" and self.existing_request_digest is not None:
            issues.add(
                ("existingRequestDigest",),
                "existing_digest_unexpected",
                "only a continuation conflict may include an existing digest",
            )
        if status == "transport_failure" and self.message is None:
            issues.add(("message",), "message_missing", "a continuation transport failure must include a message")
        if status == "transport_failure" and self.retryable is None:
            issues.add(
                ("retryable",),
                "retryable_missing",
                "a continuation transport failure must state whether retry is safe",
            )
        if status in ("accepted", "replayed", "boundary_mismatch") and self.actual_boundary is None:
            issues.add(
                ("actualBoundary",),
                "actual_boundary_missing",
                "{status} must include the observed boundary",
                {"status": status},
            )
        issues.check()
        return self


def native_context_continuation_acknowledgement_matches(request: Any, acknowledgement: Any) -> bool:
    """``nativeContextContinuationAcknowledgementMatches``: an accepted or replayed answer
    for exactly this operation and digest, with zero copied history and an observed
    boundary of the same run, equal to the expected boundary and not older than it."""
    exact_request: NativeContextContinuationRequest | None = parse_or_none(NativeContextContinuationRequest, request)
    exact_ack: NativeContextContinuationAcknowledgement | None = parse_or_none(
        NativeContextContinuationAcknowledgement, acknowledgement
    )
    if exact_request is None or exact_ack is None:
        return False
    if (
        exact_ack.operation_id != exact_request.operation_id
        or exact_ack.request_digest != exact_request.request_digest
        or exact_ack.history_messages_sent != 0
        or exact_ack.status not in ("accepted", "replayed")
    ):
        return False
    actual = exact_ack.actual_boundary
    if actual is None or not _proof_matches_run(exact_request.run, actual):
        return False
    expected = exact_request.expected_boundary
    return epoch_ms(actual.observed_at) >= epoch_ms(expected.observed_at) and same_wire(
        actual.boundary, expected.boundary
    )


register_wire_models(
    NativeContextBoundary=NativeContextBoundary,
    NativeContextBoundaryProof=NativeContextBoundaryProof,
    NativeContextContinuationTurn=NativeContextContinuationTurn,
    NativeContextContinuationRequest=NativeContextContinuationRequest,
    NativeContextContinuationAcknowledgement=NativeContextContinuationAcknowledgement,
)
