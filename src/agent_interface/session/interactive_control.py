"""Control of one native coding-agent TUI: process identity, provider-issued control
claims, prompts, stop and status (``environment-interactive-control.ts``).

An :class:`AgentInteractiveSessionRef` names one exact admitted run, its preparation
receipt and the process incarnation; it cannot start another process. Writes need a
:class:`AgentInteractiveSessionControlClaim`: a provider lease bound to the canonical
digest of that ref, with a generation a recovered coordinator must exceed
(:func:`agent_interactive_session_control_claim_is_newer`). Expiry blocks writes but does
not stop the process.

Claim requests, prompts and stops carry an ``operationId`` and a ``requestDigest`` over
their exact material, so a caller that lost an acknowledgement resends the same command
safely (``replayed``), and a changed command under a used operation id answers
``conflict`` naming the digest already stored. An ``unknown`` outcome must carry a
message and ``retryable: true``: the same operation may be sent again.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Annotated, Any, Literal, Self

from pydantic import Field, model_validator

from agent_interface.core.canonical import Sha256Digest, canonical_digest
from agent_interface.core.contract_limits import (
    BoundedIdentifier,
    BoundedString,
    IsoDatetime,
    NonNegativeSafeInt,
    PositiveSafeInt,
    SafeInt,
    Utf16Length,
)
from agent_interface.core.errors import ContractError, Refinement
from agent_interface.core.model import WireModel, wire_adapter
from agent_interface.core.registry import register_wire_models
from agent_interface.environment.preparation_receipt import AgentExecutionPreparationReceipt
from agent_interface.runtime.control_ref import AgentExactRunControlRef
from agent_interface.session.interactive_shared import (
    AgentInteractiveDimension,
    same_agent_exact_run,
    wire_of,
)

__all__ = [
    "AgentInteractiveSessionAttach",
    "AgentInteractiveSessionControlClaim",
    "AgentInteractiveSessionControlClaimAcknowledgement",
    "AgentInteractiveSessionControlClaimRequest",
    "AgentInteractiveSessionControlClaimRequestMaterial",
    "AgentInteractiveSessionExited",
    "AgentInteractiveSessionPromptAcknowledgement",
    "AgentInteractiveSessionPromptCommand",
    "AgentInteractiveSessionPromptCommandMaterial",
    "AgentInteractiveSessionRef",
    "AgentInteractiveSessionRunning",
    "AgentInteractiveSessionStatus",
    "AgentInteractiveSessionStatusUnknown",
    "AgentInteractiveSessionStopAcknowledgement",
    "AgentInteractiveSessionStopCommand",
    "AgentInteractiveSessionStopCommandMaterial",
    "AgentInteractiveSessionStopEffect",
    "InteractiveAcknowledgementStatus",
    "agent_interactive_session_control_claim_acknowledgement_matches_request",
    "agent_interactive_session_control_claim_is_newer",
    "agent_interactive_session_control_claim_matches_ref",
    "agent_interactive_session_control_claim_request_digest",
    "agent_interactive_session_prompt_acknowledgement_matches_command",
    "agent_interactive_session_prompt_request_digest",
    "agent_interactive_session_ref_digest",
    "agent_interactive_session_status_matches_ref",
    "agent_interactive_session_stop_acknowledgement_matches_command",
    "agent_interactive_session_stop_request_digest",
]

Datetime64 = Annotated[IsoDatetime, Utf16Length(max=64)]
NonEmptyBoundedString = Annotated[BoundedString, Utf16Length(min=1)]
InteractiveAcknowledgementStatus = Literal["accepted", "replayed", "conflict", "unknown"]
AgentInteractiveSessionStopEffect = Literal["stop_requested", "stopped", "not_live", "unknown"]


class AgentInteractiveSessionRef(WireModel):
    """Durable identity of one coding-agent TUI process: the exact run, the executor's
    preparation receipt, and the provider's id for this process incarnation."""

    run: AgentExactRunControlRef
    preparation_receipt: AgentExecutionPreparationReceipt
    incarnation_id: BoundedIdentifier
    started_at: Datetime64


def agent_interactive_session_ref_digest(ref: AgentInteractiveSessionRef) -> str:
    """The canonical digest a control claim binds (``refDigest``)."""
    return canonical_digest(ref.to_wire())


class AgentInteractiveSessionControlClaim(WireModel):
    """Provider-issued write authority over one exact process, for one generation."""

    ref_digest: Sha256Digest
    generation: PositiveSafeInt
    lease_id: BoundedIdentifier
    holder_id: BoundedIdentifier
    expires_at: Datetime64


def _claim_matches(ref: AgentInteractiveSessionRef, claim: AgentInteractiveSessionControlClaim) -> bool:
    return claim.ref_digest == agent_interactive_session_ref_digest(ref)


# --- control claims ------------------------------------------------------------------------


class AgentInteractiveSessionControlClaimRequestMaterial(WireModel):
    """Claim control. ``expected_generation`` is the compare-and-swap value: the generation
    the caller believes current, or 0 when no coordinator holds a claim."""

    operation_id: BoundedIdentifier
    ref: AgentInteractiveSessionRef
    holder_id: BoundedIdentifier
    expected_generation: NonNegativeSafeInt


def _claim_request_digest(material: AgentInteractiveSessionControlClaimRequestMaterial) -> str:
    return canonical_digest(
        {
            "kind": "agent-interactive-session-control-claim.v1",
            "operationId": material.operation_id,
            "ref": material.ref.to_wire(),
            "holderId": material.holder_id,
            "expectedGeneration": material.expected_generation,
        }
    )


def _material(model: type[Any], value: Any) -> Any:
    """Validated material; a command model gives up its ``requestDigest``."""
    wire = wire_of(value)
    if isinstance(wire, Mapping) and isinstance(value, WireModel):
        wire = {key: item for key, item in wire.items() if key != "requestDigest"}
    return model.parse_wire(wire)


def agent_interactive_session_control_claim_request_digest(value: Any) -> str:
    """Digest of a claim request's material. Refuses (``ContractError``) invalid material."""
    return _claim_request_digest(_material(AgentInteractiveSessionControlClaimRequestMaterial, value))


def _check_request_digest(model: WireModel, expected: str, message: str) -> None:
    if getattr(model, "request_digest", None) != expected:
        issues = Refinement(type(model).__name__)
        issues.add(("requestDigest",), "interactive_request_digest_mismatch", message)
        issues.check()


class AgentInteractiveSessionControlClaimRequest(AgentInteractiveSessionControlClaimRequestMaterial):
    """A request to claim control of an interactive session, sealed with its request digest."""

    request_digest: Sha256Digest

    @model_validator(mode="after")
    def _refine_digest(self) -> Self:
        _check_request_digest(
            self,
            _claim_request_digest(self),
            "interactive session control claim request digest does not match its content",
        )
        return self

    @classmethod
    def seal(cls, material: Any) -> Self:
        """The request for ``material``, with its digest."""
        exact = _material(AgentInteractiveSessionControlClaimRequestMaterial, material)
        return cls.parse_wire({**exact.to_wire(), "requestDigest": _claim_request_digest(exact)})


class AgentInteractiveSessionControlClaimAcknowledgement(WireModel):
    """The provider's answer to a claim request. ``accepted``/``replayed`` return the claim;
    ``conflict`` says why (a stale expected generation, or the operation id already names
    other material) and the current generation; ``unknown`` permits a same-operation retry."""

    operation_id: BoundedIdentifier
    request_digest: Sha256Digest
    ref: AgentInteractiveSessionRef
    status: InteractiveAcknowledgementStatus
    control: AgentInteractiveSessionControlClaim | None = None
    conflict_reason: Literal["generation_mismatch", "operation_reuse"] | None = None
    current_generation: NonNegativeSafeInt | None = None
    existing_request_digest: Sha256Digest | None = None
    message: NonEmptyBoundedString | None = None
    retryable: bool | None = None

    @model_validator(mode="after")
    def _refine_acknowledgement(self) -> Self:
        issues = Refinement(type(self).__name__)
        succeeded = self.status in ("accepted", "replayed")
        conflict = self.status == "conflict"
        if succeeded and self.control is None:
            issues.add(("control",), "interactive_claim_control_missing", "an accepted control claim must return its provider claim")
        if not succeeded and self.control is not None:
            issues.add(("control",), "interactive_claim_control_unexpected", "only an accepted or replayed claim may return control")
        if conflict and self.conflict_reason is None:
            issues.add(
                ("conflictReason",),
                "interactive_claim_conflict_reason_missing",
                "a control claim conflict must distinguish generation mismatch from operation reuse",
            )
        if not conflict and self.conflict_reason is not None:
            issues.add(
                ("conflictReason",),
                "interactive_claim_conflict_reason_unexpected",
                "only a control claim conflict may report a conflict reason",
            )
        if self.control is not None and not _claim_matches(self.ref, self.control):
            issues.add(
                ("control", "refDigest"),
                "interactive_claim_ref_mismatch",
                "interactive control claim acknowledgement does not match its process ref",
            )
        if conflict and self.current_generation is None:
            issues.add(
                ("currentGeneration",),
                "interactive_claim_current_generation_missing",
                "a control claim conflict must report the current generation",
            )
        if self.conflict_reason == "generation_mismatch" and self.existing_request_digest is not None:
            issues.add(
                ("existingRequestDigest",),
                "interactive_claim_generation_mismatch_digest",
                "a generation mismatch must not be reported as operation reuse",
            )
        if self.conflict_reason == "operation_reuse" and self.existing_request_digest is None:
            issues.add(
                ("existingRequestDigest",),
                "interactive_claim_operation_reuse_digest_missing",
                "operation reuse must report the digest already stored for this operation",
            )
        if conflict and self.existing_request_digest == self.request_digest:
            issues.add(
                ("existingRequestDigest",),
                "interactive_self_conflict",
                "a control claim conflict must identify different request material",
            )
        if not conflict and (self.current_generation is not None or self.existing_request_digest is not None):
            issues.add(
                ("currentGeneration",),
                "interactive_claim_conflict_state_unexpected",
                "only a control claim conflict may report existing generation state",
            )
        _check_unknown(self, issues, "control claim")
        issues.check()
        return self


def _check_unknown(acknowledgement: Any, issues: Refinement, what: str) -> None:
    if acknowledgement.status == "unknown" and (acknowledgement.message is None or acknowledgement.retryable is not True):
        issues.add(
            ("retryable",),
            "interactive_unknown_not_retryable",
            f"an unknown {what} outcome must explicitly permit safe same-operation retry",
        )


def _parsed(model: type[Any], value: Any) -> Any:
    if isinstance(value, model):
        return value
    try:
        return model.parse_wire(wire_of(value))
    except (ContractError, TypeError):
        return None


def agent_interactive_session_control_claim_acknowledgement_matches_request(request: Any, acknowledgement: Any) -> bool:
    """Whether a valid acknowledgement answers this exact valid request: same operation id,
    request digest and process ref. A ``conflict`` or ``unknown`` answer may match: read
    its status before using ``control``."""
    exact_request = _parsed(AgentInteractiveSessionControlClaimRequest, request)
    exact_ack = _parsed(AgentInteractiveSessionControlClaimAcknowledgement, acknowledgement)
    if exact_request is None or exact_ack is None:
        return False
    return (
        exact_ack.operation_id == exact_request.operation_id
        and exact_ack.request_digest == exact_request.request_digest
        and agent_interactive_session_ref_digest(exact_ack.ref) == agent_interactive_session_ref_digest(exact_request.ref)
    )


def agent_interactive_session_control_claim_matches_ref(ref: Any, claim: Any) -> bool:
    """Whether a valid claim is bound to this exact valid process ref."""
    exact_ref = _parsed(AgentInteractiveSessionRef, ref)
    exact_claim = _parsed(AgentInteractiveSessionControlClaim, claim)
    return exact_ref is not None and exact_claim is not None and _claim_matches(exact_ref, exact_claim)


def agent_interactive_session_control_claim_is_newer(candidate: Any, current: Any) -> bool:
    """The claim-ordering rule: ``candidate`` stands over ``current`` only when both are
    valid, bind the same process ref, and ``candidate`` has the greater generation. Equal
    generations, other processes and invalid claims never win; expiry does not enter."""
    exact_candidate = _parsed(AgentInteractiveSessionControlClaim, candidate)
    exact_current = _parsed(AgentInteractiveSessionControlClaim, current)
    return (
        exact_candidate is not None
        and exact_current is not None
        and exact_candidate.ref_digest == exact_current.ref_digest
        and exact_candidate.generation > exact_current.generation
    )


class AgentInteractiveSessionAttach(WireModel):
    """Attach to the existing TUI; a claim is required because the terminal takes input."""

    control: AgentInteractiveSessionControlClaim
    cols: AgentInteractiveDimension | None = None
    rows: AgentInteractiveDimension | None = None


# --- status --------------------------------------------------------------------------------


class AgentInteractiveSessionRunning(WireModel):
    """An interactive session that is running."""

    state: Literal["running"]
    ref: AgentInteractiveSessionRef


class AgentInteractiveSessionExited(WireModel):
    """An interactive session that ended: when, why, and its exit code or signal."""

    state: Literal["exited"]
    ref: AgentInteractiveSessionRef
    ended_at: Datetime64
    reason: Literal["exited", "stopped", "lost"]
    exit_code: SafeInt | None = None
    exit_signal: NonEmptyBoundedString | None = None


class AgentInteractiveSessionStatusUnknown(WireModel):
    """An interactive session whose state cannot be read now; ``retryable`` says whether to ask
    again."""

    state: Literal["unknown"]
    ref: AgentInteractiveSessionRef
    message: NonEmptyBoundedString
    retryable: bool


AgentInteractiveSessionStatus = Annotated[
    AgentInteractiveSessionRunning | AgentInteractiveSessionExited | AgentInteractiveSessionStatusUnknown,
    Field(discriminator="state"),
]
_STATUS = wire_adapter(AgentInteractiveSessionStatus, "AgentInteractiveSessionStatus")
_STATUS_TYPES = (AgentInteractiveSessionRunning, AgentInteractiveSessionExited, AgentInteractiveSessionStatusUnknown)


def agent_interactive_session_status_matches_ref(ref: Any, status: Any) -> bool:
    """Whether a valid status describes this exact process: same preparation receipt
    digest, incarnation, start time and run."""
    exact_ref = _parsed(AgentInteractiveSessionRef, ref)
    if isinstance(status, _STATUS_TYPES):
        exact_status: Any = status
    else:
        try:
            exact_status = _STATUS.parse_value(wire_of(status))
        except ContractError:
            return False
    if exact_ref is None:
        return False
    observed = exact_status.ref
    return (
        observed.preparation_receipt.digest == exact_ref.preparation_receipt.digest
        and observed.incarnation_id == exact_ref.incarnation_id
        and observed.started_at == exact_ref.started_at
        and same_agent_exact_run(observed.run, exact_ref.run)
    )


# --- commands ------------------------------------------------------------------------------


class _ClaimedCommandMaterial(WireModel):
    operation_id: BoundedIdentifier
    ref: AgentInteractiveSessionRef
    control: AgentInteractiveSessionControlClaim

    @model_validator(mode="after")
    def _refine_claim(self) -> Self:
        if not _claim_matches(self.ref, self.control):
            issues = Refinement(type(self).__name__)
            issues.add(
                ("control", "refDigest"),
                "interactive_claim_ref_mismatch",
                "the command's control claim does not match its process ref",
            )
            issues.check()
        return self


class AgentInteractiveSessionStopCommandMaterial(_ClaimedCommandMaterial):
    """Stop the provider-owned coding-agent process under a control claim."""


def _stop_digest(material: Any) -> str:
    return canonical_digest(
        {
            "kind": "agent-interactive-session-stop.v1",
            "operationId": material.operation_id,
            "ref": material.ref.to_wire(),
            "control": material.control.to_wire(),
        }
    )


def agent_interactive_session_stop_request_digest(value: Any) -> str:
    """Digest of a stop command's material. Refuses (``ContractError``) invalid material."""
    return _stop_digest(_material(AgentInteractiveSessionStopCommandMaterial, value))


class AgentInteractiveSessionStopCommand(AgentInteractiveSessionStopCommandMaterial):
    """A command to stop an interactive session under a control claim, sealed with its request
    digest."""

    request_digest: Sha256Digest

    @model_validator(mode="after")
    def _refine_digest(self) -> Self:
        _check_request_digest(self, _stop_digest(self), "interactive stop request digest does not match its content")
        return self

    @classmethod
    def seal(cls, material: Any) -> Self:
        exact = _material(AgentInteractiveSessionStopCommandMaterial, material)
        return cls.parse_wire({**exact.to_wire(), "requestDigest": _stop_digest(exact)})


class _CommandAcknowledgement(WireModel):
    operation_id: BoundedIdentifier
    request_digest: Sha256Digest
    ref: AgentInteractiveSessionRef
    control: AgentInteractiveSessionControlClaim
    status: InteractiveAcknowledgementStatus

    def _common_issues(self, issues: Refinement, what: str) -> None:
        if not _claim_matches(self.ref, self.control):
            issues.add(
                ("control", "refDigest"),
                "interactive_claim_ref_mismatch",
                f"interactive {what} acknowledgement control claim does not match its process ref",
            )


def _conflict_issues(acknowledgement: Any, issues: Refinement, what: str) -> None:
    existing = acknowledgement.existing_request_digest
    if acknowledgement.status == "conflict" and (existing is None or existing == acknowledgement.request_digest):
        issues.add(
            ("existingRequestDigest",),
            "interactive_conflict_digest",
            f"an interactive {what} conflict must identify a different existing request",
        )
    if acknowledgement.status != "conflict" and existing is not None:
        issues.add(
            ("existingRequestDigest",),
            "interactive_conflict_digest_unexpected",
            f"only an interactive {what} conflict may include an existing digest",
        )


class AgentInteractiveSessionStopAcknowledgement(_CommandAcknowledgement):
    """``accepted``/``replayed`` report a known effect; ``conflict``/``unknown`` report
    ``effect: unknown``."""

    effect: AgentInteractiveSessionStopEffect
    message: NonEmptyBoundedString | None = None
    retryable: bool | None = None
    existing_request_digest: Sha256Digest | None = None

    @model_validator(mode="after")
    def _refine_acknowledgement(self) -> Self:
        issues = Refinement(type(self).__name__)
        self._common_issues(issues, "stop")
        known = self.effect != "unknown"
        succeeded = self.status in ("accepted", "replayed")
        if succeeded != known:
            issues.add(("effect",), "interactive_stop_effect", "interactive stop status and effect certainty do not agree")
        _conflict_issues(self, issues, "stop")
        _check_unknown(self, issues, "interactive stop")
        issues.check()
        return self


def _command_matches(command: Any, acknowledgement: Any) -> bool:
    return (
        acknowledgement.operation_id == command.operation_id
        and acknowledgement.request_digest == command.request_digest
        and agent_interactive_session_ref_digest(acknowledgement.ref) == agent_interactive_session_ref_digest(command.ref)
        and canonical_digest(acknowledgement.control.to_wire()) == canonical_digest(command.control.to_wire())
    )


def agent_interactive_session_stop_acknowledgement_matches_command(command: Any, acknowledgement: Any) -> bool:
    """Whether a valid acknowledgement answers this exact valid stop command: same
    operation, digest, process ref and claim."""
    exact_command = _parsed(AgentInteractiveSessionStopCommand, command)
    exact_ack = _parsed(AgentInteractiveSessionStopAcknowledgement, acknowledgement)
    return exact_command is not None and exact_ack is not None and _command_matches(exact_command, exact_ack)


class AgentInteractiveSessionPromptCommandMaterial(_ClaimedCommandMaterial):
    """Deliver one prompt to the TUI under a control claim."""

    prompt: NonEmptyBoundedString = Field(repr=False)


def _prompt_digest(material: Any) -> str:
    return canonical_digest(
        {
            "kind": "agent-interactive-session-prompt.v1",
            "operationId": material.operation_id,
            "ref": material.ref.to_wire(),
            "control": material.control.to_wire(),
            "prompt": material.prompt,
        }
    )


def agent_interactive_session_prompt_request_digest(value: Any) -> str:
    """Digest of a prompt command's material. Refuses (``ContractError``) invalid material."""
    return _prompt_digest(_material(AgentInteractiveSessionPromptCommandMaterial, value))


class AgentInteractiveSessionPromptCommand(AgentInteractiveSessionPromptCommandMaterial):
    """A prompt sent to an interactive session under a control claim, sealed with its request
    digest."""

    request_digest: Sha256Digest

    @model_validator(mode="after")
    def _refine_digest(self) -> Self:
        _check_request_digest(
            self, _prompt_digest(self), "interactive session prompt request digest does not match its content"
        )
        return self

    @classmethod
    def seal(cls, material: Any) -> Self:
        exact = _material(AgentInteractiveSessionPromptCommandMaterial, material)
        return cls.parse_wire({**exact.to_wire(), "requestDigest": _prompt_digest(exact)})


class AgentInteractiveSessionPromptAcknowledgement(_CommandAcknowledgement):
    """A provider's answer to a prompt command, bound to the command's digest."""

    message: NonEmptyBoundedString | None = None
    retryable: bool | None = None
    existing_request_digest: Sha256Digest | None = None

    @model_validator(mode="after")
    def _refine_acknowledgement(self) -> Self:
        issues = Refinement(type(self).__name__)
        self._common_issues(issues, "prompt")
        _conflict_issues(self, issues, "prompt")
        _check_unknown(self, issues, "interactive prompt")
        issues.check()
        return self


def agent_interactive_session_prompt_acknowledgement_matches_command(command: Any, acknowledgement: Any) -> bool:
    """Whether a valid acknowledgement answers this exact valid prompt command."""
    exact_command = _parsed(AgentInteractiveSessionPromptCommand, command)
    exact_ack = _parsed(AgentInteractiveSessionPromptAcknowledgement, acknowledgement)
    return exact_command is not None and exact_ack is not None and _command_matches(exact_command, exact_ack)


register_wire_models(
    AgentInteractiveSessionRef=AgentInteractiveSessionRef,
    AgentInteractiveSessionControlClaim=AgentInteractiveSessionControlClaim,
    AgentInteractiveSessionControlClaimRequest=AgentInteractiveSessionControlClaimRequest,
    AgentInteractiveSessionControlClaimAcknowledgement=AgentInteractiveSessionControlClaimAcknowledgement,
    AgentInteractiveSessionAttach=AgentInteractiveSessionAttach,
    AgentInteractiveSessionStatus=AgentInteractiveSessionStatus,
    AgentInteractiveSessionStopCommand=AgentInteractiveSessionStopCommand,
    AgentInteractiveSessionStopAcknowledgement=AgentInteractiveSessionStopAcknowledgement,
    AgentInteractiveSessionPromptCommand=AgentInteractiveSessionPromptCommand,
    AgentInteractiveSessionPromptAcknowledgement=AgentInteractiveSessionPromptAcknowledgement,
)

# The live-handle Protocols sit in ``session.interactive_handles`` (they subclass the
# terminal handle, whose module the wire records here do not need); public here too,
# imported on first use.
_HANDLES = frozenset({"AgentInteractiveSession", "AgentInteractiveTerminalSession"})


def __getattr__(name: str) -> Any:
    if name in _HANDLES:
        return getattr(importlib.import_module("agent_interface.session.interactive_handles"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
