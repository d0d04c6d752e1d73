"""An in-memory retained session that can be continued natively (``AgentSession.context_boundary``
and ``AgentSession.continue_native``).

:class:`InMemoryNativeSession` holds one retained run and its message history. Its
boundary is the list of message ids plus the digest of the messages. ``continue_native``
goes through :class:`~agent_interface.provider.continuation.NativeContinuationLedger`, so
it refuses a turn that does not match ``turnDigest``, answers ``conflict`` for a changed
request under a used operation id, replays the original result and control reference for
the same request, refuses a moved boundary with ``boundary_mismatch``, reports the new run
to ``on_admission`` once before the run's terminal output, and records an operation
before its first ``await`` so concurrent same-request calls start one run.

The new run receives only the new turn (:attr:`InMemoryNativeSession.sent_turns`), never
copied history. :attr:`continuations` and :attr:`terminal_outputs` count the runs started
and the runs that reached terminal output.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from agent_interface.core.canonical import canonical_digest
from agent_interface.core.errors import ContractError
from agent_interface.durable.native_continuation import (
    NativeContextBoundaryProof,
    NativeContextContinuationRequest,
    NativeContextContinuationTurn,
)
from agent_interface.provider.continuation import (
    AgentNativeContextContinuationAdmitted,
    AgentNativeContextContinuationOptions,
    AgentNativeContextContinuationRefused,
    NativeContinuationLedger,
)
from agent_interface.provider.turn import AgentTurnResult
from agent_interface.runtime.control import AgentExactRunControlRef, same_agent_run_control_ref
from agent_interface.runtime.parts import BackendMessage
from agent_interface.session.timestamps import iso_of_epoch_ms, system_clock_ms

__all__ = ["InMemoryNativeSession"]


def _model(tp: Any, value: Any) -> Any:
    return value if isinstance(value, tp) else tp.parse_wire(value)


class InMemoryNativeSession:
    """One retained session: its current exact run, its history, and native continuation.

    ``clock`` returns epoch milliseconds (the wall clock by default); boundary proofs and
    message timestamps are read from it.
    """

    def __init__(
        self,
        *,
        run: AgentExactRunControlRef | Mapping[str, Any],
        messages: Iterable[BackendMessage | Mapping[str, Any]] = (),
        clock: Callable[[], int] = system_clock_ms,
    ) -> None:
        self._run: AgentExactRunControlRef = _model(AgentExactRunControlRef, run)
        self._messages: list[BackendMessage] = [_model(BackendMessage, message) for message in messages]
        self._clock = clock
        self.continuations = 0
        """Runs this session started by native continuation."""
        self.terminal_outputs = 0
        """Continued runs that reached terminal output."""
        self.sent_turns: list[NativeContextContinuationTurn] = []
        """What each continued run received: only its new turn."""
        self._ledger = NativeContinuationLedger(observe_boundary=self.context_boundary, dispatch=self._dispatch)

    @property
    def id(self) -> str:
        return self._run.session_id

    @property
    def control_ref(self) -> AgentExactRunControlRef:
        """The session's current exact run."""
        return self._run

    @property
    def messages(self) -> tuple[BackendMessage, ...]:
        return tuple(self._messages)

    def _proof(self) -> NativeContextBoundaryProof:
        run = self._run
        return NativeContextBoundaryProof.parse_wire(
            {
                "runId": run.run_id,
                "provider": run.provider,
                "environmentId": run.environment_id,
                "sessionId": run.session_id,
                "executionId": run.execution_id,
                "requestDigest": run.request_digest,
                "boundary": {
                    "kind": "messages",
                    "messageIds": [message.id for message in self._messages],
                    "digest": canonical_digest([message.to_wire() for message in self._messages]),
                },
                "observedAt": iso_of_epoch_ms(self._clock()),
            }
        )

    async def context_boundary(self) -> NativeContextBoundaryProof:
        """The boundary of the current run, observed now."""
        return self._proof()

    async def continue_native(
        self,
        request: NativeContextContinuationRequest | Mapping[str, Any],
        options: AgentNativeContextContinuationOptions,
    ) -> AgentNativeContextContinuationAdmitted | AgentNativeContextContinuationRefused:
        """Continue the retained run with ``options.turn`` (see the module docstring)."""
        return await self._ledger.continue_native(request, options)

    async def _dispatch(
        self, request: NativeContextContinuationRequest, given_turn: NativeContextContinuationTurn | Mapping[str, Any]
    ) -> tuple[AgentExactRunControlRef, Any]:
        turn: NativeContextContinuationTurn = _model(NativeContextContinuationTurn, given_turn)
        # Compare and admit in one step: nothing can move the boundary between the
        # ledger's proof and this check, and the check runs again here regardless.
        current = self._proof()
        if not same_agent_run_control_ref(self._run, request.run) or canonical_digest(
            current.boundary.to_wire()
        ) != canonical_digest(request.expected_boundary.boundary.to_wire()):
            raise ContractError.single(
                "/expectedBoundary", "boundary_moved", "the session moved past the expected boundary"
            )
        suffix = request.request_digest.removeprefix("sha256:")[:24]
        new_run = AgentExactRunControlRef(
            run_id=f"run-{suffix}",
            provider=self._run.provider,
            environment_id=self._run.environment_id,
            session_id=self._run.session_id,
            execution_id=f"execution-{suffix}",
            request_digest=request.request_digest,
        )
        parts = [part.to_wire() for part in turn.parts or ()]
        if turn.prompt is not None:
            parts.insert(0, {"type": "text", "text": turn.prompt})
        self._messages.append(
            BackendMessage.parse_wire(
                {"id": f"user-{suffix}", "role": "user", "parts": parts, "timestamp": iso_of_epoch_ms(self._clock())}
            )
        )
        self._run = new_run
        self.continuations += 1
        self.sent_turns.append(turn)
        return new_run, self._complete(new_run, turn)

    async def _complete(self, run: AgentExactRunControlRef, turn: NativeContextContinuationTurn) -> AgentTurnResult:
        await asyncio.sleep(0)  # the run works after its admission
        text = "continued" if turn.prompt is None else f"continued: {len(turn.prompt)} characters read"
        self._messages.append(
            BackendMessage.parse_wire(
                {
                    "id": f"assistant-{run.run_id}",
                    "role": "assistant",
                    "parts": [{"type": "text", "text": text}],
                    "timestamp": iso_of_epoch_ms(self._clock()),
                }
            )
        )
        self.terminal_outputs += 1
        return AgentTurnResult(text=text, success=True, session_id=run.session_id)
