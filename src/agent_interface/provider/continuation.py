"""The native continuation result and its ledger (``portable-context-continuation.ts``).

The result embeds the original :class:`~agent_interface.provider.turn.AgentTurnResult`, so it
sits above the turn; the request the turn carries stays in
:mod:`agent_interface.durable.native_continuation`.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Self

from pydantic import (
    Discriminator,
    Tag,
    ValidationInfo,
    WithJsonSchema,
    model_validator,
)

from agent_interface.core.errors import (
    ContractError,
    Refinement,
)
from agent_interface.core.model import (
    WireModel,
)
from agent_interface.core.registry import register_wire_models
from agent_interface.core.surrogate_text import marker_transparent
from agent_interface.durable.native_continuation import (
    AcknowledgementStatus,
    NativeContextBoundaryProof,
    NativeContextContinuationAcknowledgement,
    NativeContextContinuationRequest,
    NativeContextContinuationTurn,
    _proof_matches_run,
    native_context_continuation_acknowledgement_matches,
    native_context_continuation_turn_digest,
)
from agent_interface.durable.wire_values import (
    epoch_ms,
    parse_or_none,
    plain_wire,
    same_wire,
)
from agent_interface.provider.acknowledgement_intersection import (
    intersected_acknowledgement_json_schema,
    read_intersected_acknowledgement,
)
from agent_interface.provider.turn import AgentTurnResult
from agent_interface.runtime.control_ref import AgentExactRunControlRef

__all__ = [
    "AgentNativeContextContinuationAdmitted",
    "AgentNativeContextContinuationOptions",
    "AgentNativeContextContinuationRefused",
    "AgentNativeContextContinuationResult",
    "NativeContinuationAborted",
    "NativeContinuationDispatch",
    "NativeContinuationLedger",
    "agent_native_context_continuation_result_matches_request",
]


# --- the durable result ------------------------------------------------------------------------


IntersectedAcknowledgement = Annotated[
    NativeContextContinuationAcknowledgement, WithJsonSchema(intersected_acknowledgement_json_schema())
]


class AgentNativeContextContinuationAdmitted(WireModel):
    """An accepted or replayed continuation: the original turn result and the exact
    current control reference."""

    acknowledgement: IntersectedAcknowledgement

    @model_validator(mode="before")
    @classmethod
    def _strip_extras(cls, data: Any, info: ValidationInfo) -> Any:
        return read_intersected_acknowledgement(data, info)
    result: AgentTurnResult
    control_ref: AgentExactRunControlRef

    @model_validator(mode="after")
    def _refine(self) -> Self:
        issues = Refinement("AgentNativeContextContinuationAdmitted")
        if self.acknowledgement.status not in ("accepted", "replayed"):
            issues.add(
                ("acknowledgement", "status"),
                "status_not_admitted",
                "a continuation with a turn result must be accepted or replayed",
            )
        if self.result.context_transfer_receipt is not None:
            issues.add(
                ("result", "contextTransferReceipt"),
                "unexpected_transfer_receipt",
                "native continuation cannot return a context transfer receipt",
            )
        issues.check()
        return self


class AgentNativeContextContinuationRefused(WireModel):
    """A continuation that did not run: conflict, boundary mismatch, unverified boundary,
    unknown session, or a retryable transport failure."""

    acknowledgement: IntersectedAcknowledgement

    @model_validator(mode="before")
    @classmethod
    def _strip_extras(cls, data: Any, info: ValidationInfo) -> Any:
        return read_intersected_acknowledgement(data, info)

    @model_validator(mode="after")
    def _refine(self) -> Self:
        issues = Refinement("AgentNativeContextContinuationRefused")
        ack = self.acknowledgement
        if ack.status in ("accepted", "replayed"):
            issues.add(
                ("acknowledgement", "status"),
                "status_admitted_without_result",
                "an accepted or replayed continuation must carry its result and control reference",
            )
        if ack.status == "transport_failure" and ack.retryable is not True:
            issues.add(
                ("acknowledgement", "retryable"),
                "transport_failure_not_retryable",
                "a durable native continuation transport failure must be retryable",
            )
        issues.check()
        return self


@marker_transparent  # a discriminator reading types and keys (core.surrogate_text)
def _outcome_tag(value: Any) -> str:
    if isinstance(value, AgentNativeContextContinuationAdmitted):
        return "admitted"
    if isinstance(value, AgentNativeContextContinuationRefused):
        return "refused"
    if isinstance(value, Mapping) and ("result" in value or "controlRef" in value):
        return "admitted"
    return "refused"


AgentNativeContextContinuationResult = Annotated[
    Annotated[AgentNativeContextContinuationAdmitted, Tag("admitted")]
    | Annotated[AgentNativeContextContinuationRefused, Tag("refused")],
    Discriminator(_outcome_tag),
]
"""The durable answer of ``AgentSession.continue_native()``."""


def agent_native_context_continuation_result_matches_request(request: Any, outcome: Any) -> bool:
    """``agentNativeContextContinuationResultMatchesRequest``: an admitted outcome whose
    acknowledgement matches the request and whose current control reference (and turn
    result session, when stated) stays in the retained provider, environment and session."""
    exact_request: NativeContextContinuationRequest | None = parse_or_none(NativeContextContinuationRequest, request)
    exact_outcome = parse_or_none(AgentNativeContextContinuationResult, outcome)
    if exact_request is None or not isinstance(exact_outcome, AgentNativeContextContinuationAdmitted):
        return False
    if not native_context_continuation_acknowledgement_matches(exact_request, exact_outcome.acknowledgement):
        return False
    current = exact_outcome.control_ref
    run = exact_request.run
    session_id = exact_outcome.result.session_id
    return (
        current.provider == run.provider
        and current.environment_id == run.environment_id
        and current.session_id == run.session_id
        and (session_id is None or session_id == current.session_id)
    )


# --- runtime options and the provider-side ledger -------------------------------------------------

class NativeContinuationAborted(Exception):
    """The caller's ``abort`` event ended one attempt; the operation itself continues and a
    retry with the same request replays it."""


AdmissionCallback = Callable[[AgentExactRunControlRef], Awaitable[None] | None]


@dataclass(frozen=True)
class AgentNativeContextContinuationOptions:
    """Runtime controls of one ``continue_native`` attempt, outside the digest-bound turn.

    ``on_admission`` is called once with the exact new run as soon as the provider has
    admitted it, before waiting for terminal output (``nativeContinuation.admissionControl``).
    ``timeout_ms`` bounds the wait for the result; ``abort`` set by the caller abandons
    this attempt. Neither changes the operation: a retry with the same request replays it.
    """

    turn: NativeContextContinuationTurn
    timeout_ms: int | None = None
    abort: asyncio.Event | None = None
    on_admission: AdmissionCallback | None = None


NativeContinuationDispatch = Callable[
    [NativeContextContinuationRequest, NativeContextContinuationTurn],
    Awaitable[tuple[AgentExactRunControlRef, Awaitable[Any]]],
]
"""Starts the new run: returns its exact control reference and an awaitable of its
``AgentTurnResult``. It must send only the new turn, never copied history. A backend
that can compare-and-admit should re-check the expected boundary inside this call, so
the boundary proof and the admission are one atomic step."""


@dataclass
class _Operation:
    request_digest: str
    admitted: asyncio.Future[tuple[AgentExactRunControlRef, NativeContextBoundaryProof] | AgentNativeContextContinuationRefused]
    result: asyncio.Future[Any] | None = None


class NativeContinuationLedger:
    """Provider-side record of continuation operations for one retained session.

    It applies the contract: a request whose turn does not match ``turnDigest`` is
    refused before anything happens; a reused operation id with a changed request
    answers ``conflict`` without dispatch; the same request replays the original turn
    result and control reference; a missing or different boundary answers
    ``unverified``, ``unknown_session`` or ``boundary_mismatch`` without dispatch; an
    admitted run is reported to ``on_admission`` exactly once, before its result.
    """

    def __init__(
        self,
        *,
        observe_boundary: Callable[[], Awaitable[NativeContextBoundaryProof | None]],
        dispatch: NativeContinuationDispatch,
    ) -> None:
        self._observe_boundary = observe_boundary
        self._dispatch = dispatch
        self._operations: dict[str, _Operation] = {}
        self.dispatch_count = 0

    async def continue_native(
        self, request: Any, options: AgentNativeContextContinuationOptions
    ) -> AgentNativeContextContinuationAdmitted | AgentNativeContextContinuationRefused:
        exact = request if isinstance(request, NativeContextContinuationRequest) else NativeContextContinuationRequest.parse_wire(plain_wire(request))
        turn = options.turn
        if native_context_continuation_turn_digest(turn) != exact.turn_digest:
            raise ContractError.single(
                "/turnDigest", "turn_digest_mismatch", "the continuation turn does not match the request's turnDigest"
            )
        known = self._operations.get(exact.operation_id)
        if known is not None:
            if known.request_digest != exact.request_digest:
                return self._refused(exact, "conflict", existing_request_digest=known.request_digest)
            return await self._replay(exact, known, options)

        loop = asyncio.get_running_loop()
        operation = _Operation(request_digest=exact.request_digest, admitted=loop.create_future())
        self._operations[exact.operation_id] = operation
        try:
            refusal, proof = await self._check_boundary(exact)
            if refusal is not None:
                del self._operations[exact.operation_id]
                operation.admitted.set_result(refusal)
                return refusal
            assert proof is not None
            self.dispatch_count += 1
            control_ref, completion = await self._dispatch(exact, turn)
            operation.result = asyncio.ensure_future(completion)
            operation.admitted.set_result((control_ref, proof))
        except BaseException as error:
            if self._operations.get(exact.operation_id) is operation and not operation.admitted.done():
                # Nothing was admitted: free the operation id and fail concurrent replays alike.
                del self._operations[exact.operation_id]
                if isinstance(error, Exception):
                    operation.admitted.set_exception(error)
                    operation.admitted.exception()
                else:
                    operation.admitted.cancel()
            raise
        await _notify(options.on_admission, control_ref)
        return await self._finish(exact, operation, "accepted", options)

    async def _check_boundary(
        self, request: NativeContextContinuationRequest
    ) -> tuple[AgentNativeContextContinuationRefused | None, NativeContextBoundaryProof | None]:
        observed = await self._observe_boundary()
        if observed is None:
            return self._refused(request, "unverified", message="the provider cannot prove its native boundary"), None
        proof = observed if isinstance(observed, NativeContextBoundaryProof) else NativeContextBoundaryProof.parse_wire(plain_wire(observed))
        if not _proof_matches_run(request.run, proof):
            return self._refused(request, "unknown_session", message="the retained run is not this session's current run"), None
        if not same_wire(proof.boundary, request.expected_boundary.boundary):
            return self._refused(request, "boundary_mismatch", actual_boundary=proof), None
        if epoch_ms(proof.observed_at) < epoch_ms(request.expected_boundary.observed_at):
            return self._refused(request, "boundary_mismatch", actual_boundary=proof), None
        return None, proof

    async def _replay(
        self,
        request: NativeContextContinuationRequest,
        operation: _Operation,
        options: AgentNativeContextContinuationOptions,
    ) -> AgentNativeContextContinuationAdmitted | AgentNativeContextContinuationRefused:
        admitted = await asyncio.shield(operation.admitted)
        if isinstance(admitted, AgentNativeContextContinuationRefused):
            return admitted
        return await self._finish(request, operation, "replayed", options)

    async def _finish(
        self,
        request: NativeContextContinuationRequest,
        operation: _Operation,
        status: Literal["accepted", "replayed"],
        options: AgentNativeContextContinuationOptions,
    ) -> AgentNativeContextContinuationAdmitted | AgentNativeContextContinuationRefused:
        admitted = operation.admitted.result()
        assert not isinstance(admitted, AgentNativeContextContinuationRefused)
        assert operation.result is not None
        control_ref, proof = admitted
        try:
            result = await _bounded_wait(operation.result, options)
        except TimeoutError:
            return self._refused(
                request, "transport_failure", message="the continued run has not finished yet", retryable=True
            )
        acknowledgement = NativeContextContinuationAcknowledgement(
            operation_id=request.operation_id,
            request_digest=request.request_digest,
            status=status,
            history_messages_sent=0,
            actual_boundary=proof,
        )
        return AgentNativeContextContinuationAdmitted(
            acknowledgement=acknowledgement, result=result, control_ref=control_ref
        )

    @staticmethod
    def _refused(
        request: NativeContextContinuationRequest, status: AcknowledgementStatus, **fields: Any
    ) -> AgentNativeContextContinuationRefused:
        acknowledgement = NativeContextContinuationAcknowledgement(
            operation_id=request.operation_id,
            request_digest=request.request_digest,
            status=status,
            history_messages_sent=0,
            **fields,
        )
        return AgentNativeContextContinuationRefused(acknowledgement=acknowledgement)


async def _notify(callback: AdmissionCallback | None, control_ref: AgentExactRunControlRef) -> None:
    if callback is None:
        return
    outcome = callback(control_ref)
    if inspect.isawaitable(outcome):
        await outcome


async def _bounded_wait(result: asyncio.Future[Any], options: AgentNativeContextContinuationOptions) -> Any:
    timeout = None if options.timeout_ms is None else options.timeout_ms / 1000
    waiters: set[asyncio.Future[Any]] = {asyncio.shield(result)}
    abort_wait: asyncio.Task[Any] | None = None
    if options.abort is not None:
        abort_wait = asyncio.ensure_future(options.abort.wait())
        waiters.add(abort_wait)
    try:
        done, _ = await asyncio.wait(waiters, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        if abort_wait is not None and not abort_wait.done():
            abort_wait.cancel()
    if result.done():
        return result.result()
    if abort_wait is not None and abort_wait in done:
        raise NativeContinuationAborted("the caller aborted this continuation attempt")
    raise TimeoutError


register_wire_models(
    AgentNativeContextContinuationResult=AgentNativeContextContinuationResult,
)
