"""In-memory portable context: planning, durable transfer into a fresh session, and the
retained sessions that native continuation works on.

:class:`InMemoryPortableContext` is the provider-side surface a runtime needs to move a
conversation:

* ``plan(request)`` (:class:`InMemoryContextPlanner`) derives a
  :class:`~agent_interface.durable.portable_context.PortableContextPlan` and has no other
  effect: every portable input part is included, every other part (reasoning, tool
  calls) is omitted with a reason, a message with no portable part is omitted, and a
  derived context over ``maxInputTokens`` answers ``over_limit``;
* ``context_transfer`` (:class:`InMemoryContextTransfer`, the
  ``AgentEnvironmentProvider.context_transfer`` operation) admits an accepted plan into
  one fresh session per operation id: a refused request (a digest that does not match, a
  partial plan accepted by ``system``, a destination that is not fresh) changes nothing;
  the same request replays the original receipt, a changed one answers ``conflict``, and
  ``lookup`` recovers the outcome. An operation is recorded before the first ``await``,
  so concurrent same-request calls create one session;
* ``open_session`` / ``session`` give the retained
  :class:`~agent_interface.testing.native_continuation.InMemoryNativeSession` objects
  (``context_boundary`` and ``continue_native``); a transfer's fresh session is one too.

:meth:`InMemoryPortableContext.counters` reports every effect, for
:func:`agent_interface.conformance.run_portable_context_conformance`.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from agent_interface.core.canonical import canonical_bytes
from agent_interface.core.errors import ContractError
from agent_interface.core.model import wire_adapter
from agent_interface.durable.context_transfer import (
    ContextTransferConflict,
    ContextTransferReceiptAccepted,
    ContextTransferReceiptReplayed,
    ContextTransferRequest,
    ContextTransferUnknown,
)
from agent_interface.durable.portable_context import (
    PortableContextOverLimitResult,
    PortableContextPlan,
    PortableContextPlanRequest,
    PortableContextReadyResult,
    PortableContextUnsupportedResult,
    PortableConversationContext,
)
from agent_interface.runtime.control import AgentExactRunControlRef
from agent_interface.runtime.parts import BackendMessage, InputPart
from agent_interface.session.timestamps import iso_epoch_ms, iso_of_epoch_ms, system_clock_ms
from agent_interface.testing.native_continuation import InMemoryNativeSession

__all__ = [
    "InMemoryContextPlanner",
    "InMemoryContextTransfer",
    "InMemoryPortableContext",
    "PortableContextCounters",
]

_INPUT_PART = wire_adapter(InputPart, "InputPart")


@dataclass(frozen=True, slots=True)
class PortableContextCounters:
    """Effects of a portable-context implementation so far.

    ``terminal_outputs`` (continued runs that reached terminal output) is optional: an
    implementation that cannot observe it reports ``None``.
    """

    plans: int
    transfers: int
    fresh_sessions: int
    native_continuations: int
    terminal_outputs: int | None = None


def _model(tp: Any, value: Any) -> Any:
    return value if isinstance(value, tp) else tp.parse_wire(value)


def _tokens(messages: Iterable[Mapping[str, Any]]) -> int:
    """A deterministic estimate: a token per four bytes of each message's canonical parts."""
    return sum(max(1, math.ceil(len(canonical_bytes(message["parts"])) / 4)) for message in messages)


class InMemoryContextPlanner:
    """Derives transfer plans; planning has no effect beyond :attr:`plans`.

    ``runners`` limits the destination runners it plans for (any runner by default); a
    request for another runner answers ``unsupported``.
    """

    def __init__(self, *, runners: Iterable[str] | None = None) -> None:
        self._runners = None if runners is None else frozenset(runners)
        self.plans = 0

    async def plan(
        self, request: PortableContextPlanRequest | Mapping[str, Any]
    ) -> PortableContextReadyResult | PortableContextOverLimitResult | PortableContextUnsupportedResult:
        """Answer ``request`` with a ready, over-limit or unsupported result."""
        exact: PortableContextPlanRequest = _model(PortableContextPlanRequest, request)
        self.plans += 1
        binding = {"requestId": exact.request_id, "requestDigest": exact.request_digest}
        if self._runners is not None and exact.destination.runner not in self._runners:
            return PortableContextUnsupportedResult.parse_wire(
                {**binding, "message": "this planner does not plan for the destination runner"}
            )
        decisions, kept = self._decide(exact.source)
        tokens = _tokens(kept)
        limit = exact.max_input_tokens
        if limit is not None and tokens > limit:
            over: dict[str, Any] = {
                **binding,
                "estimatedTokens": tokens,
                "maxInputTokens": limit,
                "message": f"the derived context needs {tokens} tokens, over the limit of {limit}",
            }
            suggested = next(
                (message["id"] for index, message in enumerate(kept) if _tokens(kept[index:]) <= limit), None
            )
            if suggested is not None:
                over["suggestedBoundaryMessageId"] = suggested
            return PortableContextOverLimitResult.parse_wire(over)
        source = exact.source
        changes = any(decision["action"] == "omit" or any(p["action"] != "include" for p in decision["parts"]) for decision in decisions)
        partial = changes or source.completeness == "partial"
        kept_parts = {
            (decision["messageId"], part["partIndex"])
            for decision in decisions
            if decision["action"] == "include"
            for part in decision["parts"]
            if part["action"] == "include"
        }
        context = PortableConversationContext.seal(
            {
                "source": source.source.to_wire(),
                "completeness": "partial" if partial else "complete",
                "messages": kept,
                "attachments": [
                    attachment.to_wire()
                    for attachment in source.attachments
                    if (attachment.message_id, attachment.part_index) in kept_parts
                ],
            }
        )
        plan = PortableContextPlan.seal(
            {
                "planId": "plan-" + exact.request_digest.removeprefix("sha256:")[:24],
                "source": source.to_wire(),
                "destination": exact.destination.to_wire(),
                "messages": decisions,
                "context": context.to_wire(),
                "estimatedTokens": tokens,
                "requiresAcceptance": partial,
            }
        )
        return PortableContextReadyResult.parse_wire({**binding, "plan": plan.to_wire()})

    @staticmethod
    def _decide(source: PortableConversationContext) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        decisions: list[dict[str, Any]] = []
        kept: list[dict[str, Any]] = []
        for message in source.messages:
            parts: list[dict[str, Any]] = []
            output: list[Any] = []
            for index, part in enumerate(message.to_wire()["parts"]):
                try:
                    output.append(_INPUT_PART.parse_value(part).to_wire())
                except ContractError:
                    parts.append({"partIndex": index, "action": "omit", "reason": "the part is not a portable input part"})
                    continue
                parts.append({"partIndex": index, "action": "include"})
            if output:
                decisions.append({"messageId": message.id, "action": "include", "parts": parts})
                kept.append({**message.to_wire(), "parts": output})
            else:
                decisions.append(
                    {"messageId": message.id, "action": "omit", "reason": "the message has no portable part", "parts": parts}
                )
        return decisions, kept


@dataclass
class _Transfer:
    request_digest: str
    receipt: asyncio.Future[ContextTransferReceiptAccepted]


class InMemoryContextTransfer:
    """The durable transfer operation (``transfer`` and ``lookup``); see the module docstring.

    :attr:`transfers` counts admissions and :attr:`fresh_sessions` the sessions created.
    """

    def __init__(
        self,
        *,
        sessions: dict[str, InMemoryNativeSession],
        clock: Callable[[], int] = system_clock_ms,
        session_class: type[InMemoryNativeSession] = InMemoryNativeSession,
    ) -> None:
        self._sessions = sessions
        self._clock = clock
        self._session_class = session_class
        self._operations: dict[str, _Transfer] = {}
        self._reserved: set[str] = set()
        self.transfers = 0
        self.fresh_sessions = 0

    async def transfer(
        self, request: ContextTransferRequest | Mapping[str, Any]
    ) -> ContextTransferReceiptAccepted | ContextTransferReceiptReplayed | ContextTransferConflict:
        """Admit the accepted plan into one fresh session, once per operation id."""
        exact: ContextTransferRequest = _model(ContextTransferRequest, request)
        known = self._operations.get(exact.operation_id)
        if known is not None:
            return await self._answer(exact, known)
        self._refuse_unless_fresh(exact)
        destination = exact.plan.destination.session_id
        pending: asyncio.Future[ContextTransferReceiptAccepted] = asyncio.get_running_loop().create_future()
        operation = _Transfer(exact.request_digest, pending)
        self._operations[exact.operation_id] = operation
        self._reserved.add(destination)
        try:
            receipt = await self._admit(exact)
        except BaseException as error:
            # Nothing was admitted: free the operation id and the destination.
            del self._operations[exact.operation_id]
            self._reserved.discard(destination)
            if isinstance(error, Exception):
                pending.set_exception(error)
                pending.exception()
            else:
                pending.cancel()
            raise
        pending.set_result(receipt)
        return receipt

    async def lookup(
        self, request: ContextTransferRequest | Mapping[str, Any]
    ) -> ContextTransferReceiptReplayed | ContextTransferConflict | ContextTransferUnknown:
        """The recorded outcome of ``request``'s operation; ``unknown`` (retryable) when none."""
        exact: ContextTransferRequest = _model(ContextTransferRequest, request)
        known = self._operations.get(exact.operation_id)
        if known is None:
            return ContextTransferUnknown(
                status="unknown",
                operation_id=exact.operation_id,
                request_digest=exact.request_digest,
                message="no transfer is recorded under this operation id",
                retryable=True,
            )
        return await self._answer(exact, known)

    async def _answer(
        self, request: ContextTransferRequest, known: _Transfer
    ) -> ContextTransferReceiptReplayed | ContextTransferConflict:
        if known.request_digest != request.request_digest:
            return ContextTransferConflict(
                operation_id=request.operation_id,
                request_digest=request.request_digest,
                existing_request_digest=known.request_digest,
            )
        receipt = await asyncio.shield(known.receipt)
        return ContextTransferReceiptReplayed.parse_wire({**receipt.to_wire(), "status": "replayed"})

    def _refuse_unless_fresh(self, request: ContextTransferRequest) -> None:
        destination = request.plan.destination
        source = request.plan.source.source
        if (
            destination.session_id in self._sessions
            or destination.session_id in self._reserved
            or destination.environment_id == source.environment_id
            or destination.session_id == source.session_id
            or destination.run_id == source.run_id
            or destination.execution_id == source.execution_id
        ):
            raise ContractError.single(
                "/plan/destination", "destination_not_fresh", "the destination must be a new session, run and execution"
            )

    async def _admit(self, request: ContextTransferRequest) -> ContextTransferReceiptAccepted:
        plan = request.plan
        destination = plan.destination
        accepted_ms = iso_epoch_ms(request.acceptance.accepted_at)
        created_ms = max(self._clock(), accepted_ms if accepted_ms is not None else 0)
        await asyncio.sleep(0)  # the provider creates the fresh session
        run = AgentExactRunControlRef(
            run_id=destination.run_id,
            provider=destination.provider,
            environment_id=destination.environment_id,
            session_id=destination.session_id,
            execution_id=destination.execution_id,
            request_digest=request.request_digest,
        )
        session = self._session_class(run=run, messages=plan.context.messages, clock=self._clock)
        self._sessions[destination.session_id] = session
        self._reserved.discard(destination.session_id)
        self.fresh_sessions += 1
        await asyncio.sleep(0)  # and admits the context into it
        self.transfers += 1
        return ContextTransferReceiptAccepted.parse_wire(
            {
                "operationId": request.operation_id,
                "requestDigest": request.request_digest,
                "planDigest": plan.digest,
                "contextDigest": plan.context.digest,
                "source": plan.source.source.to_wire(),
                "destination": destination.to_wire(),
                "provider": destination.provider,
                "environmentId": destination.environment_id,
                "sessionId": destination.session_id,
                "runId": destination.run_id,
                "executionId": destination.execution_id,
                "sessionCreatedForOperationId": request.operation_id,
                "sessionCreatedAt": iso_of_epoch_ms(created_ms),
                "transferredMessageIds": [m.message_id for m in plan.messages if m.action == "include"],
                "omittedMessageIds": [m.message_id for m in plan.messages if m.action == "omit"],
                "admittedAt": iso_of_epoch_ms(max(self._clock(), created_ms)),
            }
        )


class InMemoryPortableContext:
    """Planning, context transfer and retained native sessions in memory (module docstring).

    ``session_class`` is the class of every retained session it makes.
    """

    session_class: type[InMemoryNativeSession] = InMemoryNativeSession

    def __init__(self, *, clock: Callable[[], int] = system_clock_ms, runners: Iterable[str] | None = None) -> None:
        self._clock = clock
        self._sessions: dict[str, InMemoryNativeSession] = {}
        self.planner = InMemoryContextPlanner(runners=runners)
        self.context_transfer = InMemoryContextTransfer(
            sessions=self._sessions, clock=clock, session_class=self.session_class
        )

    async def plan(
        self, request: PortableContextPlanRequest | Mapping[str, Any]
    ) -> PortableContextReadyResult | PortableContextOverLimitResult | PortableContextUnsupportedResult:
        """Plan a transfer (:meth:`InMemoryContextPlanner.plan`)."""
        return await self.planner.plan(request)

    def open_session(
        self,
        *,
        run: AgentExactRunControlRef | Mapping[str, Any],
        messages: Iterable[BackendMessage | Mapping[str, Any]] = (),
    ) -> InMemoryNativeSession:
        """Register a retained session that already exists (not a counted effect)."""
        session = self.session_class(run=run, messages=messages, clock=self._clock)
        if session.id in self._sessions:
            raise ContractError.single("/run/sessionId", "session_exists", "a session with this id already exists")
        self._sessions[session.id] = session
        return session

    def session(self, session_id: str) -> InMemoryNativeSession:
        """The retained session ``session_id`` (a transfer's fresh session included)."""
        found = self._sessions.get(session_id)
        if found is None:
            raise ContractError.single("", "unknown_session", "no session with this id")
        return found

    def counters(self) -> PortableContextCounters:
        """Every effect so far."""
        sessions = tuple(self._sessions.values())
        return PortableContextCounters(
            plans=self.planner.plans,
            transfers=self.context_transfer.transfers,
            fresh_sessions=self.context_transfer.fresh_sessions,
            native_continuations=sum(session.continuations for session in sessions),
            terminal_outputs=sum(session.terminal_outputs for session in sessions),
        )
