"""Deliberately broken portable-context implementations, one broken promise each.

Every variant is the in-memory implementation with one fault; ``VARIANTS`` maps a
variant's name to how to build it and the kit check that must fail because of it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from agent_interface.core.canonical import canonical_digest
from agent_interface.core.errors import ContractError
from agent_interface.durable.context_transfer import (
    ContextTransferReceiptAccepted,
    ContextTransferReceiptReplayed,
    ContextTransferRequest,
    ContextTransferUnknown,
)
from agent_interface.durable.native_continuation import (
    NativeContextContinuationAcknowledgement,
    NativeContextContinuationRequest,
    NativeContextContinuationTurn,
    native_context_continuation_turn_digest,
)
from agent_interface.durable.portable_context import (
    PortableContextOverLimitResult,
    PortableContextPlan,
    PortableContextPlanRequest,
    PortableContextReadyResult,
)
from agent_interface.provider.continuation import (
    AgentNativeContextContinuationAdmitted,
    AgentNativeContextContinuationOptions,
    AgentNativeContextContinuationRefused,
)
from agent_interface.provider.turn import AgentTurnResult
from agent_interface.runtime.control import AgentExactRunControlRef
from agent_interface.testing.native_continuation import InMemoryNativeSession
from agent_interface.testing.portable_context import (
    InMemoryContextTransfer,
    InMemoryPortableContext,
)
from tests.conformance.portable_fixtures import declared_capabilities

# --- planning ---------------------------------------------------------------------------------


class PlanningCreatesSession(InMemoryPortableContext):
    """Planning warms up the destination: it creates a session."""

    async def plan(self, request: Any) -> Any:
        self.context_transfer.fresh_sessions += 1
        return await super().plan(request)


class ReadyPlanForAnotherDestination(InMemoryPortableContext):
    """The ready plan targets another model than the request names."""

    async def plan(self, request: Any) -> Any:
        result = await super().plan(request)
        if not isinstance(result, PortableContextReadyResult):
            return result
        material = {k: v for k, v in result.plan.to_wire().items() if k != "digest"}
        material["destination"] = {**material["destination"], "model": "another-model"}
        return PortableContextReadyResult(
            request_id=result.request_id, request_digest=result.request_digest, plan=PortableContextPlan.seal(material)
        )


class CachedByRequestId(InMemoryPortableContext):
    """Results are cached by request id, so new content under a used id gets the old answer."""

    def __init__(self) -> None:
        super().__init__()
        self._cache: dict[str, Any] = {}

    async def plan(self, request: Any) -> Any:
        exact = PortableContextPlanRequest.parse_wire(request.to_wire())
        if exact.request_id not in self._cache:
            self._cache[exact.request_id] = await super().plan(exact)
        else:
            self.planner.plans += 1
        return self._cache[exact.request_id]


class EchoesAnotherDigest(InMemoryPortableContext):
    """An over-limit answer repeats the binding of the request planned before it."""

    def __init__(self) -> None:
        super().__init__()
        self._last: tuple[str, str] | None = None

    async def plan(self, request: Any) -> Any:
        result = await super().plan(request)
        if isinstance(result, PortableContextOverLimitResult) and self._last is not None:
            wire = {**result.to_wire(), "requestId": self._last[0], "requestDigest": self._last[1]}
            return PortableContextOverLimitResult.parse_wire(wire)
        self._last = (result.request_id, result.request_digest)
        return result


class OverLimitDispatches(InMemoryPortableContext):
    """An over-limit plan still starts a transfer of what fits."""

    async def plan(self, request: Any) -> Any:
        result = await super().plan(request)
        if isinstance(result, PortableContextOverLimitResult):
            self.context_transfer.transfers += 1
        return result


class IgnoresTokenBudget(InMemoryPortableContext):
    """A context over its budget is planned as ready anyway."""

    async def plan(self, request: Any) -> Any:
        exact = PortableContextPlanRequest.parse_wire(request.to_wire())
        unlimited = {k: v for k, v in exact.to_wire().items() if k not in ("maxInputTokens", "requestDigest")}
        result = await super().plan(PortableContextPlanRequest.seal(unlimited))
        return PortableContextReadyResult(request_id=exact.request_id, request_digest=exact.request_digest, plan=result.plan)


class UnrealOverLimit(InMemoryPortableContext):
    """An over-limit answer states an estimate that fits the budget."""

    async def plan(self, request: Any) -> Any:
        result = await super().plan(request)
        if isinstance(result, PortableContextOverLimitResult):
            return PortableContextOverLimitResult.parse_wire({**result.to_wire(), "estimatedTokens": result.max_input_tokens})
        return result


# --- transfer ---------------------------------------------------------------------------------


def _with_transfer(transfer_class: type[InMemoryContextTransfer]) -> Callable[[], InMemoryPortableContext]:
    def build() -> InMemoryPortableContext:
        portable = InMemoryPortableContext()
        portable.context_transfer = transfer_class(sessions=portable._sessions)
        return portable

    return build


def _plain(request: Any) -> dict[str, Any]:
    return request.to_wire() if isinstance(request, ContextTransferRequest) else dict(request)


class TrustsAcceptanceDigest(InMemoryContextTransfer):
    """The accepted plan digest and the request digest are not compared: they are recomputed."""

    async def transfer(self, request: Any) -> Any:
        plain = _plain(request)
        material = {k: v for k, v in plain.items() if k != "requestDigest"}
        material["acceptance"] = {**material["acceptance"], "planDigest": material["plan"]["digest"]}
        if material["acceptance"]["acceptedBy"] != "system":
            return await super().transfer(ContextTransferRequest.seal(material))
        return await super().transfer(request)


class SystemMayAcceptPartial(InMemoryContextTransfer):
    """A partial plan accepted only by ``system`` is admitted as if a policy accepted it."""

    async def transfer(self, request: Any) -> Any:
        plain = _plain(request)
        if plain["acceptance"]["acceptedBy"] == "system":
            material = {k: v for k, v in plain.items() if k != "requestDigest"}
            material["acceptance"] = {**material["acceptance"], "acceptedBy": "policy"}
            material["operationId"] = material["operationId"] + "-as-policy"
            if material["plan"]["destination"]["sessionId"] in self._sessions:
                return await super().transfer(request)
            return await super().transfer(ContextTransferRequest.seal(material))
        return await super().transfer(request)


class ReceiptNotFresh(InMemoryContextTransfer):
    """The receipt names a session created for an earlier operation."""

    async def transfer(self, request: Any) -> Any:
        result = await super().transfer(request)
        if isinstance(result, (ContextTransferReceiptAccepted, ContextTransferReceiptReplayed)):
            wire = {**result.to_wire(), "sessionCreatedForOperationId": "an-earlier-operation"}
            return type(result).parse_wire(wire)
        return result


@dataclass
class _Record:
    request_digest: str
    receipt: asyncio.Future[Any]


class RecordsAfterAwait(InMemoryContextTransfer):
    """The operation is recorded only after an ``await``: concurrent calls each create a session."""

    async def transfer(self, request: Any) -> Any:
        exact = ContextTransferRequest.parse_wire(_plain(request))
        known = self._operations.get(exact.operation_id)
        if known is not None:
            return await self._answer(exact, known)
        await asyncio.sleep(0)  # a remote look-up before recording
        self._sessions.pop(exact.plan.destination.session_id, None)
        receipt = await self._admit(exact)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        future.set_result(receipt)
        self._operations[exact.operation_id] = _Record(exact.request_digest, future)  # type: ignore[assignment]
        return receipt


class RetryCreatesSession(InMemoryContextTransfer):
    """Nothing is idempotent: every call admits again into a new session."""

    async def transfer(self, request: Any) -> Any:
        exact = ContextTransferRequest.parse_wire(_plain(request))
        destination = exact.plan.destination.session_id
        self._operations.pop(exact.operation_id, None)
        self._sessions.pop(destination, None)
        self._reserved.discard(destination)
        return await super().transfer(exact)


class ChangedRetryReplays(InMemoryContextTransfer):
    """Operations are keyed by id alone: a changed request replays the first one."""

    async def _answer(self, request: Any, known: Any) -> Any:
        receipt = await asyncio.shield(known.receipt)
        return ContextTransferReceiptReplayed.parse_wire({**receipt.to_wire(), "status": "replayed"})


class LookupForgets(InMemoryContextTransfer):
    """Lookup does not read the record: every operation is unknown."""

    async def lookup(self, request: Any) -> Any:
        exact = ContextTransferRequest.parse_wire(_plain(request))
        return ContextTransferUnknown(
            status="unknown",
            operation_id=exact.operation_id,
            request_digest=exact.request_digest,
            message="no record",
            retryable=True,
        )


class NoContextTransfer(InMemoryPortableContext):
    """Declares ``contextTransfer`` (in the test) but offers no transfer operation."""

    def __init__(self) -> None:
        super().__init__()
        self._hidden = self.context_transfer
        self.context_transfer = None  # type: ignore[assignment]

    def counters(self) -> Any:
        self.context_transfer = self._hidden
        try:
            return super().counters()
        finally:
            self.context_transfer = None  # type: ignore[assignment]


# --- native continuation ------------------------------------------------------------------------


@dataclass
class _Continued:
    acknowledgement: NativeContextContinuationAcknowledgement
    result: AgentTurnResult
    control_ref: AgentExactRunControlRef


@dataclass
class _Pending:
    request_digest: str
    outcome: asyncio.Future[_Continued]


class FaultyNativeSession(InMemoryNativeSession):
    """A hand-written continuation with exactly one ``fault`` (none: it is correct)."""

    fault = ""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._done: dict[str, _Pending] = {}

    async def continue_native(self, request: Any, options: AgentNativeContextContinuationOptions) -> Any:
        exact = NativeContextContinuationRequest.parse_wire(
            request.to_wire() if isinstance(request, NativeContextContinuationRequest) else request
        )
        turn = NativeContextContinuationTurn.parse_wire(
            options.turn.to_wire() if isinstance(options.turn, NativeContextContinuationTurn) else options.turn
        )
        if native_context_continuation_turn_digest(turn) != exact.turn_digest:
            raise ContractError.single("/turnDigest", "turn_digest_mismatch", "the turn is not the request's")
        known = self._done.get(exact.operation_id)
        if known is not None and self.fault != "duplicate_retry":
            if known.request_digest == exact.request_digest:
                done = await asyncio.shield(known.outcome)
                if self.fault == "admission_on_replay":
                    await self._admitted(options, done.control_ref)
                ack = {**done.acknowledgement.to_wire(), "status": "replayed"}
                return AgentNativeContextContinuationAdmitted.parse_wire(
                    {"acknowledgement": ack, "result": done.result.to_wire(), "controlRef": done.control_ref.to_wire()}
                )
            if self.fault != "changed_turn_dispatched":
                return self._refused(exact, "conflict", existingRequestDigest=known.request_digest)
        proof = self._proof()
        if self.fault != "stale_boundary_accepted" and canonical_digest(proof.boundary.to_wire()) != canonical_digest(
            exact.expected_boundary.boundary.to_wire()
        ):
            return self._refused(exact, "boundary_mismatch", actualBoundary=proof.to_wire())
        if self.fault == "records_after_await":
            await asyncio.sleep(0)  # a remote look-up before recording
        pending = _Pending(exact.request_digest, asyncio.get_running_loop().create_future())
        self._done[exact.operation_id] = pending
        suffix = f"{len(self._done)}-{self.continuations}"
        session_id = "another-session" if self.fault == "result_in_other_session" else self._run.session_id
        new_run = AgentExactRunControlRef(
            run_id=f"run-{suffix}",
            provider=self._run.provider,
            environment_id=self._run.environment_id,
            session_id=session_id,
            execution_id=f"execution-{suffix}",
            request_digest=exact.request_digest,
        )
        self.continuations += 1
        self.sent_turns.append(turn)
        completion = asyncio.ensure_future(self._finish_run(new_run))
        if self.fault not in ("admission_never", "admission_late"):
            await self._admitted(options, new_run)
            if self.fault == "admission_twice":
                await self._admitted(options, new_run)
        result = await completion
        if self.fault == "admission_late":
            await self._admitted(options, new_run)
        history = len(self._messages) if self.fault == "copied_history" else 0
        ack = NativeContextContinuationAcknowledgement.parse_wire(
            {
                "operationId": exact.operation_id,
                "requestDigest": exact.request_digest,
                "status": "accepted",
                "historyMessagesSent": history,
                "actualBoundary": proof.to_wire(),
            }
        )
        pending.outcome.set_result(_Continued(ack, result, new_run))
        return AgentNativeContextContinuationAdmitted(acknowledgement=ack, result=result, control_ref=new_run)

    @staticmethod
    async def _admitted(options: AgentNativeContextContinuationOptions, run: AgentExactRunControlRef) -> None:
        if options.on_admission is not None:
            outcome = options.on_admission(run)
            if outcome is not None:
                await outcome

    async def _finish_run(self, run: AgentExactRunControlRef) -> AgentTurnResult:
        await asyncio.sleep(0)
        self.terminal_outputs += 1
        return AgentTurnResult(text="continued", success=True, session_id=run.session_id)

    @staticmethod
    def _refused(request: NativeContextContinuationRequest, status: str, **fields: Any) -> Any:
        ack = {
            "operationId": request.operation_id,
            "requestDigest": request.request_digest,
            "status": status,
            "historyMessagesSent": 0,
            **fields,
        }
        return AgentNativeContextContinuationRefused.parse_wire({"acknowledgement": ack})


def _with_fault(fault: str) -> Callable[[], InMemoryPortableContext]:
    session_class = type(f"Faulty_{fault}", (FaultyNativeSession,), {"fault": fault})

    class Portable(InMemoryPortableContext):
        pass

    Portable.session_class = session_class
    return Portable


# --- the catalogue ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Variant:
    build: Callable[[], InMemoryPortableContext]
    fails: str
    options: Mapping[str, Any] | None = None


VARIANTS: dict[str, Variant] = {
    "planning creates a session": Variant(PlanningCreatesSession, "plan.side_effect_free"),
    "ready plan for another destination": Variant(ReadyPlanForAnotherDestination, "plan.ready_covers_request"),
    "results cached by request id": Variant(CachedByRequestId, "plan.bound_to_request"),
    "over-limit result echoes another request": Variant(EchoesAnotherDigest, "plan.bound_to_request"),
    "over-limit plan dispatches": Variant(OverLimitDispatches, "plan.over_limit_zero_dispatch"),
    "token budget ignored": Variant(IgnoresTokenBudget, "plan.over_limit_zero_dispatch"),
    "over-limit with a fitting estimate": Variant(UnrealOverLimit, "plan.over_limit_zero_dispatch"),
    "plan digest not compared": Variant(
        _with_transfer(TrustsAcceptanceDigest), "transfer.mismatched_digest_zero_dispatch"
    ),
    "partial plan accepted by system": Variant(_with_transfer(SystemMayAcceptPartial), "transfer.partial_needs_acceptance"),
    "receipt names an earlier session": Variant(_with_transfer(ReceiptNotFresh), "transfer.accepted_receipt"),
    "transfer recorded after an await": Variant(_with_transfer(RecordsAfterAwait), "transfer.concurrent_calls_one_effect"),
    "transfer retry creates a second session": Variant(_with_transfer(RetryCreatesSession), "transfer.retry_recovers_session"),
    "changed transfer retry replays": Variant(_with_transfer(ChangedRetryReplays), "transfer.changed_retry_conflicts"),
    "lookup forgets": Variant(_with_transfer(LookupForgets), "transfer.lookup_recovers"),
    "declared transfer is absent": Variant(
        NoContextTransfer,
        "transfer.accepted_receipt",
        {"capabilities": declared_capabilities(), "admission_control": None},
    ),
    "stale boundary accepted": Variant(_with_fault("stale_boundary_accepted"), "continuation.stale_boundary_refused"),
    "continued run in another session": Variant(_with_fault("result_in_other_session"), "continuation.verified"),
    "copied history sent": Variant(_with_fault("copied_history"), "continuation.no_copied_history"),
    "continuation recorded after an await": Variant(
        _with_fault("records_after_await"), "continuation.concurrent_calls_one_effect"
    ),
    "continuation retry runs again": Variant(_with_fault("duplicate_retry"), "continuation.retry_replays"),
    "changed turn dispatched": Variant(_with_fault("changed_turn_dispatched"), "continuation.changed_turn_refused"),
    "on_admission called twice": Variant(_with_fault("admission_twice"), "continuation.admission_once"),
    "on_admission called again on replay": Variant(_with_fault("admission_on_replay"), "continuation.admission_once"),
    "on_admission never called": Variant(_with_fault("admission_never"), "continuation.admission_once"),
    "on_admission called after terminal output": Variant(
        _with_fault("admission_late"), "continuation.admission_before_output"
    ),
}
"""Each broken promise and the check that must name it."""

CORRECT_HAND_WRITTEN = _with_fault("")
"""The hand-written continuation with no fault: it must pass, so each fault alone is caught."""
