"""An in-memory provider whose sessions are retained: detach, replay, reconstruction and
typed interactions.

:class:`InMemoryRetainedSessionProvider` is a small provider for the session-replay and
interaction kits (and for tests of code that drives retained sessions):

* ``dispatch`` starts a turn detached and answers its session reference with the run's
  :class:`~agent_interface.runtime.control.AgentRunControlRef` (run, environment,
  session, execution and the admission digest of the turn);
* ``session(id, control_ref=...)`` rebuilds a session client from those coordinates
  alone; a reference to any run but the session's current one is refused;
* ``events(since=..., execution_id=...)`` replays the session's events after a stable,
  unique event id, then follows the live run until it ends; an unknown cursor or
  another run's execution id is refused;
* ``provider.get(id)`` reconstructs the environment, so a fresh client sees exactly the
  same events;
* a turn with a ``turnId`` is idempotent: the same turn answers the same session and
  run without a second run (concurrent calls included), a changed turn under a used
  ``turnId`` is refused before any effect;
* ``respond_to_interaction`` on the environment and on each session answers through
  :class:`~agent_interface.testing.interactions.InMemoryInteractions`
  (:attr:`InMemoryRetainedSessionProvider.interactions`); tests originate requests with
  :meth:`InMemoryRetainedSessionProvider.open_interaction`.

A turn is scripted: it reports ``running``, one assistant message and its result.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from agent_interface.core.canonical import canonical_digest
from agent_interface.core.errors import ContractError
from agent_interface.core.model import FrozenDict, thaw
from agent_interface.environment.capabilities import AgentEnvironmentCapabilities
from agent_interface.environment.events import AgentEnvironmentEvent
from agent_interface.provider.create import (
    AgentEnvironmentCreateIdempotencyRecord,
    create_agent_environment_with_idempotency,
    detached_metadata,
)
from agent_interface.provider.turn import (
    AgentEnvironmentCreation,
    AgentSessionRef,
    AgentTurnInput,
    AgentTurnResult,
    CreateAgentEnvironmentInput,
)
from agent_interface.runtime.control import AgentRunControlRef, same_agent_run_control_ref
from agent_interface.runtime.interaction_requests import (
    InteractionRequest,
    InteractionRequestMaterial,
)
from agent_interface.runtime.interaction_responses import (
    InteractionAcknowledgement,
    InteractionResponseCommand,
)
from agent_interface.testing.interactions import InMemoryInteractions

__all__ = [
    "InMemoryRetainedEnvironment",
    "InMemoryRetainedSession",
    "InMemoryRetainedSessionProvider",
    "retained_session_capabilities",
]


def retained_session_capabilities() -> AgentEnvironmentCapabilities:
    """The capability document of :class:`InMemoryRetainedSessionProvider`."""
    return AgentEnvironmentCapabilities.parse_wire(
        {
            "profile": {
                "namedProfiles": False,
                "systemPrompt": {"replace": False, "append": False},
                "instructions": False,
                "tools": False,
                "permissions": False,
                "mcp": False,
                "subagents": False,
                "resources": {"files": False, "instructions": False},
                "hooks": False,
                "modes": False,
                "runtimeUpdate": False,
                "validation": False,
            },
            "streaming": {"live": True, "replay": True, "detach": True, "turnIdempotency": True},
            "sessions": {"continue": True, "list": False, "messages": False},
            "workspace": {
                "read": False,
                "write": False,
                "exec": False,
                "git": False,
                "upload": False,
                "download": False,
                "cwdBases": {"repository": True, "host": False},
            },
            "branching": {"checkpoint": False, "fork": False},
            "placement": False,
            "usage": False,
            "confidential": False,
            "interactions": {
                "kinds": ["question", "permission"],
                "answerFieldTypes": ["text", "number", "boolean", "select", "secret"],
                "responseScopes": ["interaction", "session", "persistent"],
                "secretAnswers": True,
                "concurrentRequests": True,
                "replay": True,
                "responseIdempotency": True,
            },
        }
    )


@dataclass
class _Run:
    control: AgentRunControlRef
    done: asyncio.Event = field(default_factory=asyncio.Event)
    result: AgentTurnResult | None = None
    task: asyncio.Future[None] | None = None


@dataclass
class _Session:
    id: str
    runs: list[_Run] = field(default_factory=list)
    events: list[AgentEnvironmentEvent] = field(default_factory=list)
    changed: asyncio.Condition = field(default_factory=asyncio.Condition)
    status: str = "pending"

    @property
    def current(self) -> _Run:
        return self.runs[-1]


@dataclass
class _Environment:
    id: str
    name: str | None
    metadata: FrozenDict[str, Any] | None
    status: str = "running"
    sessions: dict[str, _Session] = field(default_factory=dict)
    turns: dict[str, tuple[str, str, int]] = field(default_factory=dict)  # turnId -> (digest, session, run index)


def _turn_of(value: AgentTurnInput | Mapping[str, Any]) -> AgentTurnInput:
    return value if isinstance(value, AgentTurnInput) else AgentTurnInput.parse_wire(thaw(dict(value)))


def _turn_digest(turn: AgentTurnInput) -> str:
    wire = turn.to_wire()
    for transient in ("signal", "detach"):
        wire.pop(transient, None)
    return canonical_digest(wire)


class InMemoryRetainedSession:
    """A client of one retained session; any number of clients see the same session."""

    def __init__(self, environment: InMemoryRetainedEnvironment, session_id: str, control_ref: AgentRunControlRef) -> None:
        self._environment = environment
        self._id = session_id
        self._control_ref = control_ref

    @property
    def id(self) -> str:
        return self._id

    @property
    def control_ref(self) -> AgentRunControlRef:
        """The run this client was built for."""
        return self._control_ref

    def _state(self) -> _Session:
        return self._environment._session_state(self._id)

    async def status(self) -> str | None:
        return self._state().status

    async def events(self, *, since: str | None = None, execution_id: str | None = None) -> AsyncIterator[AgentEnvironmentEvent]:
        """Events after ``since`` (exclusive; all when absent), then live ones until the
        current run ends. ``execution_id`` must be the current run's."""
        state = self._state()
        if execution_id is not None and execution_id != state.current.control.execution_id:
            raise ContractError.single("/executionId", "execution_mismatch", "the execution is not this session's current run")
        position = 0
        if since is not None:
            ids = [event.id for event in state.events]
            if since not in ids:
                raise ContractError.single("/since", "unknown_event", "since names no event of this session")
            position = ids.index(since) + 1
        while True:
            async with state.changed:
                while position >= len(state.events) and not state.current.done.is_set():
                    await state.changed.wait()
                batch = state.events[position:]
                position = len(state.events)
                finished = state.current.done.is_set()
            for event in batch:
                yield event
            if finished and position >= len(state.events):
                return

    async def result(self) -> AgentTurnResult:
        run = self._state().current
        await run.done.wait()
        if run.result is None:
            raise ContractError.single("", "turn_cancelled", "the session's turn was cancelled")
        return run.result

    async def prompt(self, input: AgentTurnInput | Mapping[str, Any]) -> AgentTurnResult:
        """Run the next turn in this session and wait for its result."""
        turn = _turn_of(input).model_copy(update={"session_id": self._id})
        reference = self._environment._dispatch(turn)
        self._control_ref = reference.control_ref or self._control_ref
        return await self.result()

    async def cancel(self) -> None:
        state = self._state()
        run = state.current
        if run.task is not None and not run.task.done():
            run.task.cancel()
            await asyncio.gather(run.task, return_exceptions=True)

    async def respond_to_interaction(self, command: InteractionResponseCommand | Mapping[str, Any]) -> InteractionAcknowledgement:
        """Answer an interaction of this session's runs (another session's is a mismatch)."""
        return await self._environment._provider.interactions.respond(
            command, environment_id=self._environment.id, session_id=self._id
        )


class InMemoryRetainedEnvironment:
    """A client of one environment; ``provider.get(id)`` builds another over the same state."""

    def __init__(
        self, provider: InMemoryRetainedSessionProvider, state: _Environment, creation: AgentEnvironmentCreation | None
    ) -> None:
        self._provider = provider
        self._state = state
        self._creation = creation

    @property
    def id(self) -> str:
        return self._state.id

    @property
    def provider(self) -> str:
        return self._provider.name

    @property
    def name(self) -> str | None:
        return self._state.name

    @property
    def creation(self) -> AgentEnvironmentCreation | None:
        return self._creation

    @property
    def metadata(self) -> FrozenDict[str, Any] | None:
        return self._state.metadata

    @property
    def capabilities(self) -> None:
        return None  # the provider document describes every environment

    async def status(self) -> str:
        return self._state.status

    def _session_state(self, session_id: str) -> _Session:
        state = self._state.sessions.get(session_id)
        if state is None:
            raise ContractError.single("/sessionId", "unknown_session", "no such session in this environment")
        return state

    def _dispatch(self, turn: AgentTurnInput) -> AgentSessionRef:
        """Admit and start one turn; all bookkeeping happens before the first await."""
        if self._state.status != "running":
            raise ContractError.single("", "environment_not_running", "the environment is not running")
        for path, value in (("/controlRef", turn.control_ref), ("/contextTransfer", turn.context_transfer),
                            ("/nativeContinuation", turn.native_continuation), ("/profile", turn.profile)):
            if value is not None:
                raise ContractError.single(path, "turn_field_unsupported", "this provider does not declare this turn capability")
        digest = _turn_digest(turn)
        if turn.turn_id is not None and turn.turn_id in self._state.turns:
            known, session_id, index = self._state.turns[turn.turn_id]
            if known != digest:
                raise ContractError.single("/turnId", "turn_conflict", "this turnId was used for another turn")
            run = self._state.sessions[session_id].runs[index]
            return AgentSessionRef(id=session_id, provider=self.provider, control_ref=run.control)
        if turn.session_id is not None:
            session = self._session_state(turn.session_id)
            if not session.current.done.is_set():
                raise ContractError.single("/sessionId", "session_busy", "the session is running a turn")
        else:
            session = _Session(id=f"{self.id}-session-{next(self._provider._ids)}")
            self._state.sessions[session.id] = session
        number = next(self._provider._ids)
        control = AgentRunControlRef(
            run_id=f"run-{number}",
            provider=self.provider,
            environment_id=self.id,
            session_id=session.id,
            execution_id=f"execution-{number}",
            request_digest=digest,
        )
        run = _Run(control)
        session.runs.append(run)
        session.status = "running"
        if turn.turn_id is not None:
            self._state.turns[turn.turn_id] = (digest, session.id, len(session.runs) - 1)
        self._provider.interactions.register_run(
            {
                "runId": control.run_id,
                "provider": control.provider,
                "environmentId": control.environment_id,
                "sessionId": session.id,
                "executionId": control.execution_id,
            }
        )
        run.task = asyncio.ensure_future(self._play(session, run, turn))
        return AgentSessionRef(id=session.id, provider=self.provider, control_ref=control)

    async def _emit(self, session: _Session, type: str, data: dict[str, Any]) -> None:
        async with session.changed:
            event = AgentEnvironmentEvent(type=type, data=data, id=f"{session.id}:{len(session.events) + 1}")
            session.events.append(event)
            session.changed.notify_all()

    async def _play(self, session: _Session, run: _Run, turn: AgentTurnInput) -> None:
        try:
            await self._emit(session, "status", {"status": "running", "runId": run.control.run_id})
            await asyncio.sleep(0)
            text = f"done: {turn.prompt or ''}"[:200]
            await self._emit(session, "message", {"role": "assistant", "text": text})
            await asyncio.sleep(0)
            run.result = AgentTurnResult(text=text, success=True, session_id=session.id)
            await self._emit(session, "result", {"finalText": text, "status": "completed"})
            session.status = "completed"
        except asyncio.CancelledError:
            session.status = "cancelled"
            self._provider.interactions.cancel(run.control.run_id)
            await self._emit(session, "status", {"status": "cancelled", "runId": run.control.run_id})
        finally:
            async with session.changed:
                run.done.set()
                session.changed.notify_all()

    async def dispatch(self, input: AgentTurnInput | Mapping[str, Any]) -> AgentSessionRef:
        """Start a turn detached; the answer carries the run's control reference."""
        return self._dispatch(_turn_of(input))

    async def stream(self, input: AgentTurnInput | Mapping[str, Any]) -> AsyncIterator[AgentEnvironmentEvent]:
        """Run a turn and follow its events live (a known ``turnId`` replays its run)."""
        reference = self._dispatch(_turn_of(input))
        session = self.session(reference.id)
        async for event in session.events():
            yield event

    def session(self, id: str, *, control_ref: AgentRunControlRef | Mapping[str, Any] | None = None) -> InMemoryRetainedSession:
        """A client of session ``id``; ``control_ref`` must name its current run."""
        state = self._session_state(id)
        current = state.current.control
        if control_ref is not None:
            given = control_ref if isinstance(control_ref, AgentRunControlRef) else AgentRunControlRef.parse_wire(thaw(control_ref))
            if not same_agent_run_control_ref(given, current):
                raise ContractError.single("/controlRef", "control_ref_mismatch", "the control reference names another run")
        return InMemoryRetainedSession(self, id, current)

    async def respond_to_interaction(self, command: InteractionResponseCommand | Mapping[str, Any]) -> InteractionAcknowledgement:
        """Answer an interaction of this environment's runs."""
        return await self._provider.interactions.respond(command, environment_id=self.id)

    async def destroy(self) -> None:
        self._state.status = "stopped"
        for session in self._state.sessions.values():
            await InMemoryRetainedSession(self, session.id, session.current.control).cancel()
        self._provider._environments.pop(self._state.id, None)


class InMemoryRetainedSessionProvider:
    """A provider of retained sessions held in memory (see the module docstring)."""

    def __init__(self, *, name: str = "in-memory-retained", interactions: InMemoryInteractions | None = None) -> None:
        self._name = name
        self._capabilities = retained_session_capabilities()
        self._environments: dict[str, _Environment] = {}
        self._records: dict[str, AgentEnvironmentCreateIdempotencyRecord[InMemoryRetainedEnvironment]] = {}
        self._ids = itertools.count(1)
        self.interactions = interactions or InMemoryInteractions()
        """The interactions of every run of this provider."""

    @property
    def name(self) -> str:
        return self._name

    async def capabilities(self) -> AgentEnvironmentCapabilities:
        return self._capabilities

    async def create(self, input: CreateAgentEnvironmentInput | Mapping[str, Any]) -> InMemoryRetainedEnvironment:
        """Create, or replay by ``idempotencyKey``; only an inline profile without
        resources is supported."""
        parsed = input if isinstance(input, CreateAgentEnvironmentInput) else CreateAgentEnvironmentInput.parse_wire(thaw(dict(input)))
        if isinstance(parsed.profile, str):
            raise ContractError.single("/profile", "named_profile_unsupported", "this provider has no profile catalog")
        for key, value in (("/backend", parsed.backend), ("/secrets", parsed.secrets), ("/workspace", parsed.workspace)):
            if value is not None:
                raise ContractError.single(key, "create_field_unsupported", "this provider does not support this create field")

        async def provision() -> InMemoryRetainedEnvironment:
            environment_id = parsed.requested_id or f"env-{next(self._ids)}"
            if environment_id in self._environments:
                raise ContractError.single("/requestedId", "requested_id_taken", "an environment with this id already exists")
            state = _Environment(id=environment_id, name=parsed.name, metadata=detached_metadata(parsed.metadata))
            self._environments[environment_id] = state
            return InMemoryRetainedEnvironment(self, state, "created")

        return await create_agent_environment_with_idempotency(self._records, parsed, provision)

    async def get(self, id: str) -> InMemoryRetainedEnvironment | None:
        """A fresh client of environment ``id`` (``None`` when there is none)."""
        state = self._environments.get(id)
        return None if state is None else InMemoryRetainedEnvironment(self, state, None)

    def open_interaction(self, material: InteractionRequestMaterial | Mapping[str, Any]) -> InteractionRequest:
        """Originate a pending interaction on one of this provider's runs (the binding
        names the run); see :meth:`InMemoryInteractions.open`."""
        return self.interactions.open(material)
