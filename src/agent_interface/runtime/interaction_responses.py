"""Interaction responses, response commands and acknowledgements
(``interaction-response-validation.ts``, ``interaction.ts``).

A command binds a response to its run, environment, optional session, interaction and caller
operation through a canonical digest. Acknowledgements carry no answer value or answer hash,
because both can disclose low-entropy secret answers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, Self

from pydantic import Field, model_validator

from agent_interface.core.canonical import (
    Sha256Digest,
    canonical_digest,
)
from agent_interface.core.contract_limits import (
    BoundedIdentifier,
)
from agent_interface.core.errors import (
    ContractError,
    ContractIssue,
    Refinement,
    json_pointer,
)
from agent_interface.core.model import (
    WireModel,
    thaw,
    wire_adapter,
)
from agent_interface.core.registry import register_wire_models
from agent_interface.runtime.interaction_answers import (
    InteractionValidation,
    _resolution_issues,
)
from agent_interface.runtime.interaction_fields import (
    RESERVED_INTERACTION_FIELD_NAMES,
    InteractionData,
    NonEmptyBoundedString,
)
from agent_interface.runtime.interaction_requests import (
    InteractionBinding,
    InteractionRequest,
)

__all__ = [
    "InteractionAcknowledgement",
    "InteractionAcknowledgementStatus",
    "InteractionResponse",
    "InteractionResponseCommand",
    "InteractionResponseValidation",
    "interaction_response_command_digest",
    "interaction_response_is_valid",
    "require_valid_interaction_response",
    "validate_and_parse_interaction_response",
    "validate_interaction_response",
    "validate_interaction_response_command",
]


@dataclass(frozen=True, slots=True)
class InteractionResponseValidation(InteractionValidation):
    """:class:`InteractionValidation` plus the parsed response when it is valid.

    The response may hold a secret answer, so it is left out of ``repr``.
    """

    response: InteractionResponse | None = field(default=None, repr=False)


# ---------------------------------------------------------------------------
# Responses, commands and acknowledgements
# ---------------------------------------------------------------------------


class _ResponseBase(WireModel):
    id: BoundedIdentifier
    data: InteractionData | None = Field(default=None, repr=False)


class InteractionResponseAccepted(_ResponseBase):
    outcome: Literal["accepted"]


class InteractionResponseDeclined(_ResponseBase):
    outcome: Literal["declined"]


class InteractionResponseCancelled(_ResponseBase):
    outcome: Literal["cancelled"]


InteractionResponse = Annotated[
    InteractionResponseAccepted | InteractionResponseDeclined | InteractionResponseCancelled,
    Field(discriminator="outcome"),
]
"""A caller's answer to one interaction; ``data`` is hidden from ``repr``."""

_RESPONSE_ADAPTER = wire_adapter(InteractionResponse, "InteractionResponse")


def _response_wire(response: Any) -> dict[str, Any]:
    if isinstance(response, WireModel):
        wire: dict[str, Any] = response.to_wire()
        return wire
    parsed = _RESPONSE_ADAPTER.parse(thaw(response))
    wire = _RESPONSE_ADAPTER.to_wire(parsed)
    return wire


def interaction_response_command_digest(binding: Any, response: Any) -> str:
    """``interactionResponseCommandDigest``: canonical digest of ``{binding, response}``."""
    bound = binding if isinstance(binding, InteractionBinding) else InteractionBinding.parse_wire(binding)
    return canonical_digest({"binding": bound.to_wire(), "response": _response_wire(response)})


class InteractionResponseCommand(WireModel):
    """A retryable response bound to run, environment, provider session, interaction
    and the caller's ``operationId``; ``commandDigest`` covers binding and response."""

    operation_id: BoundedIdentifier
    binding: InteractionBinding
    command_digest: Sha256Digest
    response: InteractionResponse

    @classmethod
    def create(
        cls, operation_id: str, binding: InteractionBinding | Mapping[str, Any], response: Any
    ) -> InteractionResponseCommand:
        bound = binding if isinstance(binding, InteractionBinding) else InteractionBinding.parse_wire(binding)
        return cls.parse_wire(
            {
                "operationId": operation_id,
                "binding": bound.to_wire(),
                "commandDigest": interaction_response_command_digest(bound, response),
                "response": _response_wire(response),
            }
        )

    @model_validator(mode="after")
    def _refine(self) -> Self:
        issues = Refinement("InteractionResponseCommand")
        if self.binding.interaction_id != self.response.id:
            issues.add(("response", "id"), "response_id_mismatch", "response id must match the bound interaction id")
        if self.command_digest != interaction_response_command_digest(self.binding, self.response):
            issues.add(("commandDigest",), "digest_mismatch", "interaction response command digest does not match its content")
        issues.check()
        return self


InteractionAcknowledgementStatus = Literal[
    "accepted",
    "already_resolved_same",
    "already_resolved_different",
    "expired",
    "cancelled",
    "unknown_interaction",
    "unknown_run",
    "binding_mismatch",
    "invalid_response",
    "transport_failure",
]


class InteractionAcknowledgement(WireModel):
    """Durable result of one response operation. It carries no answer value."""

    operation_id: BoundedIdentifier
    binding: InteractionBinding
    command_digest: Sha256Digest
    status: InteractionAcknowledgementStatus
    message: NonEmptyBoundedString | None = None
    retryable: bool | None = None

    @model_validator(mode="after")
    def _refine(self) -> Self:
        issues = Refinement("InteractionAcknowledgement")
        if self.status in ("invalid_response", "transport_failure") and self.message is None:
            issues.add(("message",), "message_required", f"{self.status} must include a message")
        if self.status == "transport_failure" and self.retryable is None:
            issues.add(("retryable",), "retryable_required", "transport_failure must state whether retry is safe")
        issues.check()
        return self


def interaction_acknowledgement_matches_command(
    command: InteractionResponseCommand, acknowledgement: InteractionAcknowledgement
) -> bool:
    """Whether ``acknowledgement`` answers exactly ``command`` (operation, binding, digest)."""
    return (
        acknowledgement.operation_id == command.operation_id
        and acknowledgement.command_digest == command.command_digest
        and acknowledgement.binding == command.binding
    )


__all__ += ["interaction_acknowledgement_matches_command"]

# ---------------------------------------------------------------------------
# Response validation against the outstanding request
# ---------------------------------------------------------------------------


def _request_of(request: Any) -> InteractionRequest | InteractionResponseValidation:
    if isinstance(request, InteractionRequest):
        return request
    try:
        return InteractionRequest.parse_wire(request)
    except ContractError as error:
        return InteractionResponseValidation(
            tuple(ContractIssue("/request" + issue.path, issue.code, issue.message) for issue in error.issues)
        )


def validate_interaction_response(request: Any, response: Any) -> InteractionResponseValidation:
    """Check ``response`` against the exact outstanding ``request``.

    Refuses reserved keys, undeclared fields, an id other than the request's, an
    outcome the request does not allow, and a permission grant broader than the
    request's scopes (omitted scopes = one-time only). On success the parsed response
    is available as ``.response``. Issue paths point into the response document.
    """
    exact = _request_of(request)
    if isinstance(exact, InteractionResponseValidation):
        return exact
    raw = response.to_wire() if isinstance(response, WireModel) else thaw(response)
    if isinstance(raw, Mapping):
        data = raw.get("data")
        if isinstance(data, Mapping):
            reserved = [key for key in data if key in RESERVED_INTERACTION_FIELD_NAMES]
            if reserved:
                return InteractionResponseValidation(
                    tuple(ContractIssue(json_pointer(("data", key)), "unknown_field", "reserved field name is not declared") for key in reserved)
                )
    try:
        parsed = _RESPONSE_ADAPTER.parse(raw)
    except ContractError as error:
        return InteractionResponseValidation(error.issues)
    if parsed.id != exact.id:
        return InteractionResponseValidation(
            (ContractIssue("/id", "response_id_mismatch", "response id does not match the outstanding interaction"),)
        )
    if exact.allowed_outcomes is not None and parsed.outcome not in exact.allowed_outcomes:
        return InteractionResponseValidation(
            (ContractIssue("/outcome", "outcome_not_allowed", "response outcome is not allowed by the outstanding interaction"),)
        )
    found = _resolution_issues(
        exact.kind, exact.answer_spec, exact.response_scopes, parsed.outcome, parsed.data, ()
    )
    if found:
        return InteractionResponseValidation(tuple(found))
    return InteractionResponseValidation((), parsed)


def require_valid_interaction_response(request: Any, response: Any) -> InteractionResponse:
    """:func:`validate_interaction_response`, raising :class:`ContractError` on refusal."""
    result = validate_interaction_response(request, response)
    result.raise_for_issues()
    assert result.response is not None
    return result.response


def validate_interaction_response_command(request: Any, command: Any) -> InteractionResponseValidation:
    """Check a durable response command: its binding must name the request's exact run
    and digest, then its response is checked like :func:`validate_interaction_response`."""
    exact = _request_of(request)
    if isinstance(exact, InteractionResponseValidation):
        return exact
    if isinstance(command, InteractionResponseCommand):
        parsed = command
    else:
        try:
            parsed = InteractionResponseCommand.parse_wire(thaw(command))
        except ContractError as error:
            return InteractionResponseValidation(error.issues)
    binding = parsed.binding
    expected = exact.binding
    if (
        binding.request_digest != exact.request_digest
        or binding.run_id != expected.run_id
        or binding.provider != expected.provider
        or binding.environment_id != expected.environment_id
        or binding.session_id != expected.session_id
        or binding.execution_id != expected.execution_id
        or binding.interaction_id != expected.interaction_id
    ):
        return InteractionResponseValidation(
            (ContractIssue("/binding", "binding_stale", "response command binding is stale"),)
        )
    inner = validate_interaction_response(exact, parsed.response)
    if inner.ok:
        return inner
    return InteractionResponseValidation(
        tuple(ContractIssue("/response" + issue.path, issue.code, issue.message) for issue in inner.issues)
    )


def validate_and_parse_interaction_response(request: Any, response: Any) -> InteractionResponseValidation:
    """Same as :func:`validate_interaction_response` (the response is always attached)."""
    return validate_interaction_response(request, response)


def interaction_response_is_valid(request: Any, response: Any) -> InteractionValidation:
    """Verdict only, for callers that never forward the value."""
    return InteractionValidation(validate_interaction_response(request, response).issues)


register_wire_models(
    InteractionResponse=InteractionResponse,
    InteractionResponseCommand=InteractionResponseCommand,
    InteractionAcknowledgementStatus=InteractionAcknowledgementStatus,
    InteractionAcknowledgement=InteractionAcknowledgement,
)
