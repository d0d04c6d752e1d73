"""Retained run control: references, cancellation and control requests, their
acknowledgements, and the ``retainedControl`` declaration rule (``runtime-control.ts``).

A request's ``requestDigest`` is the RFC 8785 digest of its material (operation,
run, and the optional reason or payload), so a caller can repeat the same request
after losing the first acknowledgement. Matchers accept an acknowledgement only when
it repeats the exact operation, digest and run.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Final, Literal, Self, TypeVar

from pydantic import model_validator

from agent_interface.core.canonical import (
    Sha256Digest,
    canonical_digest,
)
from agent_interface.core.contract_limits import (
    BoundedIdentifier,
    BoundedJsonRecord,
    Utf16Length,
)
from agent_interface.core.errors import (
    ContractError,
    ContractIssue,
    Refinement,
)
from agent_interface.core.model import WireModel
from agent_interface.core.registry import register_wire_models
from agent_interface.runtime.control_ref import (  # public here too
    AgentExactRunControlRef,
    AgentRunControlRef,
    same_agent_run_control_ref,
)

__all__ = [
    "RETAINED_CONTROL_REQUIREMENTS",
    "AgentExactRunControlRef",
    "AgentRunCancellationAcknowledgement",
    "AgentRunCancellationEffect",
    "AgentRunCancellationRequest",
    "AgentRunCancellationRequestMaterial",
    "AgentRunControlAcknowledgement",
    "AgentRunControlAction",
    "AgentRunControlRef",
    "AgentRunControlRequest",
    "AgentRunControlRequestMaterial",
    "ControlAcknowledgementStatus",
    "RetainedControlCapabilities",
    "RetainedControlCapability",
    "agent_run_cancellation_acknowledgement_matches_request",
    "agent_run_cancellation_request_digest",
    "agent_run_control_acknowledgement_matches_request",
    "agent_run_control_request_digest",
    "check_retained_control",
    "retained_control_issues",
    "same_agent_run_control_ref",
]


def _wire_of(value: Any) -> Any:
    return value.to_wire() if isinstance(value, WireModel) else value


AgentRunCancellationEffect = Literal["cancel_requested", "cancelled", "not_live", "unknown"]
ControlAcknowledgementStatus = Literal["accepted", "replayed", "conflict", "unknown"]

CancellationReason = Annotated[str, Utf16Length(max=2_048, min=1)]
AcknowledgementMessage = Annotated[str, Utf16Length(max=16_384, min=1)]


class AgentRunCancellationRequestMaterial(WireModel):
    """The content of a cancellation request, before its digest: operation id, the exact run and a
    reason."""

    operation_id: BoundedIdentifier
    run: AgentExactRunControlRef
    reason: CancellationReason | None = None


def _require_object(material: Any) -> Mapping[str, Any]:
    if not isinstance(material, Mapping):
        raise ContractError.single("", "invalid_type", "request material must be an object")
    return material


_Material = TypeVar("_Material", bound=WireModel)


def _parse_material(model: type[_Material], material: _Material | Mapping[str, Any]) -> _Material:
    if isinstance(material, model):
        return material
    return model.parse_wire(dict(_require_object(material)))


def _check_request_digest(request: WireModel, title: str, message: str) -> None:
    wire = request.to_wire()
    claimed = wire.pop("requestDigest")
    if claimed != canonical_digest(wire):
        issues = Refinement(title)
        issues.add(("requestDigest",), "digest_mismatch", message)
        issues.check()


def _material_digest(material: WireModel) -> str:
    wire = material.to_wire()
    wire.pop("requestDigest", None)
    return canonical_digest(wire)


def agent_run_cancellation_request_digest(
    material: AgentRunCancellationRequestMaterial | Mapping[str, Any],
) -> str:
    """``agentRunCancellationRequestDigest``: digest of ``{operationId, run, reason?}``."""
    parsed = _parse_material(AgentRunCancellationRequestMaterial, material)
    return _material_digest(parsed)


class AgentRunCancellationRequest(AgentRunCancellationRequestMaterial):
    """A cancellation bound to one operation and exact run, with its digest."""

    request_digest: Sha256Digest

    @classmethod
    def create(
        cls, material: AgentRunCancellationRequestMaterial | Mapping[str, Any]
    ) -> AgentRunCancellationRequest:
        parsed = _parse_material(AgentRunCancellationRequestMaterial, material)
        return cls.parse_wire({**parsed.to_wire(), "requestDigest": _material_digest(parsed)})

    @model_validator(mode="after")
    def _refine(self) -> Self:
        _check_request_digest(
            self, "AgentRunCancellationRequest", "run cancellation request digest does not match its content"
        )
        return self


def _acknowledgement_issues(
    issues: Refinement,
    status: str,
    request_digest: str,
    existing: str | None,
    message: str | None,
    retryable: bool | None,
    what: str,
) -> None:
    if status == "conflict" and existing is None:
        issues.add(
            ("existingRequestDigest",), "conflict_without_existing_digest",
            f"a {what} conflict must include the existing digest",
        )
    if status == "conflict" and existing is not None and existing == request_digest:
        issues.add(
            ("existingRequestDigest",), "conflict_with_same_digest",
            f"a {what} conflict must identify a different request",
        )
    if status != "conflict" and existing is not None:
        issues.add(
            ("existingRequestDigest",), "existing_digest_without_conflict",
            f"only a {what} conflict may include an existing digest",
        )
    if status == "unknown" and (message is None or retryable is not False):
        issues.add(
            ("retryable",), "unknown_outcome_not_explicit",
            f"an unknown {what} outcome must be explicit and non-repeatable",
        )


class AgentRunCancellationAcknowledgement(WireModel):
    """Repeats operation, digest and run; a known effect (``accepted``/``replayed``)
    is distinct from ``conflict`` and ``unknown``, which carry effect ``unknown``."""

    operation_id: BoundedIdentifier
    request_digest: Sha256Digest
    run: AgentExactRunControlRef
    status: ControlAcknowledgementStatus
    effect: AgentRunCancellationEffect
    message: AcknowledgementMessage | None = None
    retryable: bool | None = None
    existing_request_digest: Sha256Digest | None = None

    @model_validator(mode="after")
    def _refine(self) -> Self:
        issues = Refinement("AgentRunCancellationAcknowledgement")
        known = self.effect != "unknown"
        if (self.status in ("accepted", "replayed") and not known) or (
            self.status in ("conflict", "unknown") and known
        ):
            issues.add(
                ("effect",), "effect_certainty_mismatch",
                "cancellation status and effect certainty do not agree",
            )
        _acknowledgement_issues(
            issues, self.status, self.request_digest, self.existing_request_digest,
            self.message, self.retryable, "cancellation",
        )
        issues.check()
        return self


def _parsed_or_none(model: type[WireModel], value: Any) -> Any:
    if isinstance(value, model):
        return value
    try:
        return model.parse_wire(_wire_of(value))
    except ContractError:
        return None


def agent_run_cancellation_acknowledgement_matches_request(
    request: Any, acknowledgement: Any
) -> bool:
    """Both documents valid, and the acknowledgement repeats the request's operation,
    digest and exact run."""
    exact_request = _parsed_or_none(AgentRunCancellationRequest, request)
    exact_ack = _parsed_or_none(AgentRunCancellationAcknowledgement, acknowledgement)
    if exact_request is None or exact_ack is None:
        return False
    return bool(
        exact_ack.operation_id == exact_request.operation_id
        and exact_ack.request_digest == exact_request.request_digest
        and same_agent_run_control_ref(exact_ack.run, exact_request.run)
    )


AgentRunControlAction = Literal["steer", "cancel", "status", "reconnect"]


class AgentRunControlRequestMaterial(WireModel):
    """The content of a run-control request, before its digest: operation id, action, the exact run
    and a payload."""

    operation_id: BoundedIdentifier
    action: AgentRunControlAction
    run: AgentExactRunControlRef
    payload: BoundedJsonRecord | None = None


def agent_run_control_request_digest(
    material: AgentRunControlRequestMaterial | Mapping[str, Any],
) -> str:
    """``agentRunControlRequestDigest``: digest of ``{operationId, action, run, payload?}``."""
    parsed = _parse_material(AgentRunControlRequestMaterial, material)
    return _material_digest(parsed)


class AgentRunControlRequest(AgentRunControlRequestMaterial):
    """A steer, cancel, status or reconnect request with its digest."""

    request_digest: Sha256Digest

    @classmethod
    def create(
        cls, material: AgentRunControlRequestMaterial | Mapping[str, Any]
    ) -> AgentRunControlRequest:
        parsed = _parse_material(AgentRunControlRequestMaterial, material)
        return cls.parse_wire({**parsed.to_wire(), "requestDigest": _material_digest(parsed)})

    @model_validator(mode="after")
    def _refine(self) -> Self:
        _check_request_digest(
            self, "AgentRunControlRequest", "run control request digest does not match its content"
        )
        return self


class AgentRunControlAcknowledgement(WireModel):
    """A provider's answer to a run-control request, bound to the request's digest: status, message,
    and whether to retry."""

    operation_id: BoundedIdentifier
    request_digest: Sha256Digest
    run: AgentExactRunControlRef
    status: ControlAcknowledgementStatus
    message: AcknowledgementMessage | None = None
    retryable: bool | None = None
    existing_request_digest: Sha256Digest | None = None

    @model_validator(mode="after")
    def _refine(self) -> Self:
        issues = Refinement("AgentRunControlAcknowledgement")
        _acknowledgement_issues(
            issues, self.status, self.request_digest, self.existing_request_digest,
            self.message, self.retryable, "control",
        )
        issues.check()
        return self


def agent_run_control_acknowledgement_matches_request(request: Any, acknowledgement: Any) -> bool:
    """Both documents valid, and the acknowledgement repeats operation, digest and run."""
    exact_request = _parsed_or_none(AgentRunControlRequest, request)
    exact_ack = _parsed_or_none(AgentRunControlAcknowledgement, acknowledgement)
    if exact_request is None or exact_ack is None:
        return False
    return bool(
        exact_ack.operation_id == exact_request.operation_id
        and exact_ack.request_digest == exact_request.request_digest
        and same_agent_run_control_ref(exact_ack.run, exact_request.run)
    )


# ---------------------------------------------------------------------------
# The retainedControl declaration rule
# ---------------------------------------------------------------------------


class RetainedControlCapabilities(WireModel):
    """``AgentEnvironmentCapabilities.retainedControl``: the four identities a provider
    implements together before it may advertise retained run control (exact run, result,
    event, and idempotent cancellation)."""

    exact_run_identity: bool
    result_identity: bool
    event_identity: bool
    cancellation_idempotency: bool


RetainedControlCapability = RetainedControlCapabilities
"""The same class as :class:`RetainedControlCapabilities` (the name this module registered
first); both names stay importable."""


RETAINED_CONTROL_REQUIREMENTS: Final = (
    ("retainedControl", "exactRunIdentity"),
    ("retainedControl", "resultIdentity"),
    ("retainedControl", "eventIdentity"),
    ("retainedControl", "cancellationIdempotency"),
    ("streaming", "replay"),
    ("streaming", "detach"),
    ("streaming", "turnIdempotency"),
    ("sessions", "continue"),
)
"""Every flag that must be true for a provider to declare ``retainedControl``: exact
run, result, event and cancellation identity, replay, detach, turn and session."""


def _lookup(document: Any, section: str, flag: str) -> Any:
    part = document.get(section) if isinstance(document, Mapping) else None
    return part.get(flag) if isinstance(part, Mapping) else None


def retained_control_issues(capabilities: Any) -> tuple[ContractIssue, ...]:
    """Issues with a capability document's ``retainedControl`` declaration.

    Accepts a capabilities model or its wire mapping. Absent ``retainedControl`` is
    always fine; present, every flag in :data:`RETAINED_CONTROL_REQUIREMENTS` must
    be ``true``. One issue at ``/retainedControl`` names the missing pieces.
    """
    document = _wire_of(capabilities)
    if not isinstance(document, Mapping) or document.get("retainedControl") is None:
        return ()
    missing = [
        f"{section}.{flag}"
        for section, flag in RETAINED_CONTROL_REQUIREMENTS
        if _lookup(document, section, flag) is not True
    ]
    if not missing:
        return ()
    return (
        ContractIssue(
            "/retainedControl",
            "retained_control_incomplete",
            "retained control requires exact run, result, event, cancellation, replay, "
            "detach, turn, and session identity together (missing: " + ", ".join(missing) + ")",
        ),
    )


def check_retained_control(capabilities: Any) -> None:
    """Raise :class:`ContractError` unless :func:`retained_control_issues` is empty."""
    issues = retained_control_issues(capabilities)
    if issues:
        raise ContractError(issues, subject="AgentEnvironmentCapabilities")


register_wire_models(
    AgentRunCancellationRequest=AgentRunCancellationRequest,
    AgentRunCancellationAcknowledgement=AgentRunCancellationAcknowledgement,
    AgentRunControlRequest=AgentRunControlRequest,
    AgentRunControlAcknowledgement=AgentRunControlAcknowledgement,
    RetainedControlCapability=RetainedControlCapabilities,
)
