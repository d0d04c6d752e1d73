"""Admitting an accepted portable context plan into a fresh session (``portable-context-transfer.ts``).

A :class:`ContextTransferRequest` binds one operation id to one accepted
:class:`~agent_interface.durable.portable_context.PortableContextPlan`. The provider answers
with a :data:`ContextTransferResult`: ``accepted`` (first admission) or ``replayed``
(exact retry), both carrying a receipt for the one fresh destination session;
``conflict`` (the operation id already holds another request); or ``unknown`` /
``transport_failure`` (outcome not known). :func:`context_transfer_result_matches_request`
binds every outcome to the exact operation before a caller acts on it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal, Protocol, Self, runtime_checkable

from pydantic import Field, model_validator

from agent_interface.core.canonical import Sha256Digest
from agent_interface.core.contract_limits import BoundedIdentifier
from agent_interface.core.errors import Refinement
from agent_interface.core.model import WireModel
from agent_interface.core.registry import register_wire_models
from agent_interface.durable.portable_context import (
    PortableContextDestination,
    PortableContextPlan,
    PortableContextSourceBoundary,
)
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

__all__ = [
    "AgentContextTransfer",
    "ContextPlanAcceptance",
    "ContextTransferConflict",
    "ContextTransferReceipt",
    "ContextTransferReceiptAccepted",
    "ContextTransferReceiptReplayed",
    "ContextTransferRequest",
    "ContextTransferResult",
    "ContextTransferUnknown",
    "context_transfer_receipt_matches",
    "context_transfer_request_digest",
    "context_transfer_result_matches_request",
]


class ContextPlanAcceptance(WireModel):
    """Who accepted which plan digest, and when."""

    plan_digest: Sha256Digest
    accepted_at: WireTimestamp
    accepted_by: Literal["user", "policy", "system"]


class _ContextTransferRequestMaterial(WireModel):
    operation_id: BoundedIdentifier
    plan: PortableContextPlan
    acceptance: ContextPlanAcceptance


def context_transfer_request_digest(material: Mapping[str, Any] | WireModel) -> str:
    """``contextTransferRequestDigest``: digest of ``operationId``, the plan's digest (not
    the whole plan) and ``acceptance``."""
    parsed = material_of(material, _ContextTransferRequestMaterial, ("requestDigest",))
    return portable_wire_digest(
        {
            "operationId": parsed.operation_id,
            "planDigest": parsed.plan.digest,
            "acceptance": parsed.acceptance.to_wire(),
        }
    )


class ContextTransferRequest(_ContextTransferRequestMaterial):
    """One operation admitting one accepted plan. A plan that transforms, omits or is
    partial needs ``user`` or ``policy`` acceptance; ``system`` may accept only an
    unchanged complete plan."""

    request_digest: Sha256Digest

    @model_validator(mode="after")
    def _refine(self) -> Self:
        issues = Refinement("ContextTransferRequest")
        if self.acceptance.plan_digest != self.plan.digest:
            issues.add(
                ("acceptance", "planDigest"),
                "plan_digest_mismatch",
                "accepted plan digest must match the executed plan",
            )
        if self.request_digest != context_transfer_request_digest(self):
            issues.add(
                ("requestDigest",),
                "digest_mismatch",
                "context transfer request digest does not match its content",
            )
        if self.plan.requires_acceptance and self.acceptance.accepted_by == "system":
            issues.add(
                ("acceptance", "acceptedBy"),
                "explicit_acceptance_required",
                "a transformed or partial plan requires user or policy acceptance",
            )
        issues.check()
        return self

    @classmethod
    def seal(cls, material: Mapping[str, Any]) -> Self:
        """Build a request from its material (wire names), computing ``requestDigest``."""
        plain = plain_wire(material)
        return cls.parse_wire({**plain, "requestDigest": context_transfer_request_digest(plain)})


class _ContextTransferReceiptBase(WireModel):
    operation_id: BoundedIdentifier
    request_digest: Sha256Digest
    plan_digest: Sha256Digest
    context_digest: Sha256Digest
    source: PortableContextSourceBoundary
    destination: PortableContextDestination
    provider: BoundedIdentifier
    environment_id: BoundedIdentifier
    session_id: BoundedIdentifier
    run_id: BoundedIdentifier
    execution_id: BoundedIdentifier
    session_created_for_operation_id: BoundedIdentifier
    session_created_at: WireTimestamp
    transferred_message_ids: IdentifierList
    omitted_message_ids: IdentifierList
    admitted_at: WireTimestamp

    @model_validator(mode="after")
    def _refine(self) -> Self:
        issues = Refinement(type(self).__name__)
        transferred = set(self.transferred_message_ids)
        omitted = set(self.omitted_message_ids)
        if len(transferred) != len(self.transferred_message_ids):
            issues.add(("transferredMessageIds",), "duplicate_message_id", "transferred message ids must be unique")
        if len(omitted) != len(self.omitted_message_ids):
            issues.add(("omittedMessageIds",), "duplicate_message_id", "omitted message ids must be unique")
        if transferred & omitted:
            issues.add(
                ("omittedMessageIds",),
                "message_both_transferred_and_omitted",
                "a message cannot be both transferred and omitted",
            )
        if epoch_ms(self.session_created_at) > epoch_ms(self.admitted_at):
            issues.add(
                ("sessionCreatedAt",),
                "session_created_after_admission",
                "the destination session must exist before context admission",
            )
        issues.check()
        return self


class ContextTransferReceiptAccepted(_ContextTransferReceiptBase):
    """First admission of the context into the fresh destination session."""

    status: Literal["accepted"] = "accepted"


class ContextTransferReceiptReplayed(_ContextTransferReceiptBase):
    """An exact retry of an admission that already happened."""

    status: Literal["replayed"] = "replayed"


ContextTransferReceipt = Annotated[
    ContextTransferReceiptAccepted | ContextTransferReceiptReplayed,
    Field(discriminator="status"),
]
"""The successful outcome: the exact destination and the provider session it created."""


class ContextTransferConflict(WireModel):
    """The operation id already holds a different request."""

    status: Literal["conflict"] = "conflict"
    operation_id: BoundedIdentifier
    request_digest: Sha256Digest
    existing_request_digest: Sha256Digest

    @model_validator(mode="after")
    def _refine(self) -> Self:
        issues = Refinement("ContextTransferConflict")
        if self.existing_request_digest == self.request_digest:
            issues.add(
                ("existingRequestDigest",),
                "self_conflict",
                "a transfer conflict must identify a different request",
            )
        issues.check()
        return self


class ContextTransferUnknown(WireModel):
    """The outcome is not known (``unknown``) or the call did not complete (``transport_failure``)."""

    status: Literal["unknown", "transport_failure"]
    operation_id: BoundedIdentifier
    request_digest: Sha256Digest
    message: NonEmptyBoundedString
    retryable: bool


ContextTransferResult = Annotated[
    ContextTransferReceiptAccepted
    | ContextTransferReceiptReplayed
    | ContextTransferConflict
    | ContextTransferUnknown,
    Field(discriminator="status"),
]
"""Every answer to a :class:`ContextTransferRequest`."""


def context_transfer_receipt_matches(request: Any, receipt: Any) -> bool:
    """``contextTransferReceiptMatches``: the receipt names exactly the requested admission.

    Same operation, request, plan and context digests; the plan's source and destination;
    the destination's provider, environment, session, run and execution, each different
    from the source's; a session created for this operation between acceptance and
    admission; and exactly the included and omitted message ids.
    """
    exact_request: ContextTransferRequest | None = parse_or_none(ContextTransferRequest, request)
    exact_receipt = parse_or_none(ContextTransferReceipt, receipt)
    if exact_request is None or exact_receipt is None:
        return False
    plan = exact_request.plan
    source = plan.source.source
    destination = plan.destination
    included = sorted(m.message_id for m in plan.messages if m.action == "include")
    omitted = sorted(m.message_id for m in plan.messages if m.action == "omit")
    created_at = epoch_ms(exact_receipt.session_created_at)
    accepted_at = epoch_ms(exact_request.acceptance.accepted_at)
    admitted_at = epoch_ms(exact_receipt.admitted_at)
    return (
        accepted_at <= created_at <= admitted_at
        and exact_receipt.operation_id == exact_request.operation_id
        and exact_receipt.request_digest == exact_request.request_digest
        and exact_receipt.plan_digest == plan.digest
        and exact_receipt.context_digest == plan.context.digest
        and same_wire(exact_receipt.source, source)
        and same_wire(exact_receipt.destination, destination)
        and exact_receipt.provider == destination.provider
        and exact_receipt.environment_id == destination.environment_id
        and exact_receipt.session_id == destination.session_id
        and exact_receipt.run_id == destination.run_id
        and exact_receipt.execution_id == destination.execution_id
        and exact_receipt.session_created_for_operation_id == exact_request.operation_id
        and exact_receipt.environment_id != source.environment_id
        and exact_receipt.session_id != source.session_id
        and exact_receipt.run_id != source.run_id
        and exact_receipt.execution_id != source.execution_id
        and sorted(exact_receipt.transferred_message_ids) == included
        and sorted(exact_receipt.omitted_message_ids) == omitted
    )


def context_transfer_result_matches_request(request: Any, result: Any) -> bool:
    """``contextTransferResultMatchesRequest``: any outcome repeats the operation id and
    request digest; a receipt must also pass :func:`context_transfer_receipt_matches`."""
    exact_request: ContextTransferRequest | None = parse_or_none(ContextTransferRequest, request)
    exact_result = parse_or_none(ContextTransferResult, result)
    if exact_request is None or exact_result is None:
        return False
    if (
        exact_result.operation_id != exact_request.operation_id
        or exact_result.request_digest != exact_request.request_digest
    ):
        return False
    if isinstance(exact_result, (ContextTransferReceiptAccepted, ContextTransferReceiptReplayed)):
        return context_transfer_receipt_matches(exact_request, exact_result)
    return True


@runtime_checkable
class AgentContextTransfer(Protocol):
    """The provider operation behind ``AgentEnvironmentProvider.context_transfer``.

    ``transfer`` admits the accepted plan into one fresh provider session, once per
    operation id: the same request answers ``replayed`` with the original receipt, a
    changed request answers ``conflict`` without creating anything. ``lookup`` recovers
    the outcome of an operation after the caller lost the answer: ``replayed`` when the
    request was admitted, ``conflict`` when the id holds another request, and
    ``unknown`` with ``retryable: true`` when nothing is recorded, so sending the same
    request again is safe. (Reference 1.6.0 defines the wire values but not this
    method pair; the lookup answers reuse :data:`ContextTransferResult`.)
    """

    async def transfer(self, request: ContextTransferRequest) -> Any: ...

    async def lookup(self, request: ContextTransferRequest) -> Any: ...


register_wire_models(
    ContextPlanAcceptance=ContextPlanAcceptance,
    ContextTransferRequest=ContextTransferRequest,
    ContextTransferReceipt=ContextTransferReceipt,
    ContextTransferResult=ContextTransferResult,
)
