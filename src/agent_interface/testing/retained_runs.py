"""Retained sessions held in memory: the one engine behind the ``dispatch``, ``stream`` and
``session`` of every in-memory environment in this package.

:class:`RetainedSessions` holds the sessions of one environment and starts their runs; an
environment admits a turn by its own rules, then hands it to :meth:`RetainedSessions.start`
with the coroutine that plays it (a :data:`TurnPlayer`). The engine keeps these promises:

* every run has an :class:`~agent_interface.runtime.control.AgentRunControlRef` naming the
  provider, environment, session, run and execution, with the admission digest of the turn
  (its canonical wire form without ``detach`` and ``signal``);
* a turn is admitted and recorded before the first ``await``: a known ``turnId`` answers
  its original run (concurrent calls included) and a changed turn under it is refused
  (``turn_conflict``); a turn for a session whose run has not ended is refused
  (``session_busy``); a ``sessionId`` no session has opens a session under that id;
* events get stable, unique ids ``<session>:<n>``; :meth:`RetainedSessions.events` replays
  them after a cursor and then follows the live run, for any number of readers;
* a run ends ``completed``, ``failed`` or ``cancelled``; a run that ends without a result
  (cancelled, or its player raised) gets a terminal ``status`` event saying which, so a
  reader always sees the end of the turn;
* :meth:`RetainedSessions.bind` refuses a control reference that is not the session's
  current run (``control_ref_mismatch``), so a competing run's reference serves nothing.

:class:`InMemoryAgentSession` is the session client built on it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from agent_interface.core.canonical import canonical_digest
from agent_interface.core.errors import ContractError
from agent_interface.core.model import thaw
from agent_interface.environment.events import AgentEnvironmentEvent
from agent_interface.environment.workspace import AgentSessionStatus
from agent_interface.provider.protocols import as_turn_input
from agent_interface.provider.turn import AgentTurnInput, AgentTurnResult
from agent_interface.runtime.control import AgentRunControlRef, same_agent_run_control_ref

__all__ = [
    "InMemoryAgentSession",
    "RetainedRun",
    "RetainedSessionRecord",
    "RetainedSessions",
    "TurnEmit",
    "TurnPlayer",
    "turn_admission_digest",
]

RunStatus = Literal["running", "completed", "failed", "cancelled"]

TurnEmit = Callable[[AgentEnvironmentEvent], AgentEnvironmentEvent]
"""Records one event of the running turn and answers it with its stable id."""

TurnPlayer = Callable[[AgentTurnInput, AgentRunControlRef, TurnEmit], Awaitable[AgentTurnResult]]
"""Plays one admitted turn: emits its events and answers its result."""


def turn_admission_digest(turn: AgentTurnInput) -> str:
    """The digest a run's control reference carries: the turn's canonical wire form
    without the transport-only ``detach`` and ``signal``."""
    wire = turn.to_wire()
    for transient in ("signal", "detach"):
        wire.pop(transient, None)
    return canonical_digest(wire)


@dataclass(eq=False)
class RetainedRun:
    """One run of a session: its control reference, its session, where its events start
    and end in the session's event list, its status and result, and the task playing it."""

    control: AgentRunControlRef
    session_id: str
    first_event: int
    end_event: int | None = None
    status: RunStatus = "running"
    result: AgentTurnResult | None = None
    task: asyncio.Future[None] | None = field(default=None, repr=False)


@dataclass(eq=False)
class RetainedSessionRecord:
    """One session: its runs (the last is current) and every event they emitted.
    ``changed`` is set, and replaced, whenever an event arrives or a run ends."""

    id: str
    runs: list[RetainedRun] = field(default_factory=list)
    events: list[AgentEnvironmentEvent] = field(default_factory=list)
    changed: asyncio.Event = field(default_factory=asyncio.Event, repr=False)

    @property
    def current(self) -> RetainedRun | None:
        return self.runs[-1] if self.runs else None

    @property
    def status(self) -> AgentSessionStatus:
        current = self.current
        return "pending" if current is None else current.status

    def touch(self) -> None:
        """Wake every reader waiting for this session to change."""
        woken, self.changed = self.changed, asyncio.Event()
        woken.set()


class RetainedSessions(Mapping[str, RetainedSessionRecord]):
    """The retained sessions of one environment, by id (see the module docstring).

    ``new_number`` gives numbers no other session or run of the provider has used;
    ``on_run`` is told of every run started and ``on_cancelled`` of every run cancelled
    (an interaction engine registers and cancels the run's interactions there).
    """

    def __init__(
        self,
        *,
        provider: str,
        environment_id: str,
        new_number: Callable[[], int],
        on_run: Callable[[AgentRunControlRef], None] | None = None,
        on_cancelled: Callable[[AgentRunControlRef], None] | None = None,
    ) -> None:
        self.provider = provider
        self.environment_id = environment_id
        self._new_number = new_number
        self._on_run = on_run
        self._on_cancelled = on_cancelled
        self._sessions: dict[str, RetainedSessionRecord] = {}
        self._turns: dict[str, tuple[str, RetainedSessionRecord, RetainedRun]] = {}

    def __getitem__(self, session_id: str) -> RetainedSessionRecord:
        return self._sessions[session_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self._sessions)

    def __len__(self) -> int:
        return len(self._sessions)

    def __repr__(self) -> str:
        return f"RetainedSessions(environment={self.environment_id!r}, sessions={len(self._sessions)})"

    def require(self, session_id: str) -> RetainedSessionRecord:
        """The session, or a ``ContractError`` (``unknown_session``)."""
        record = self._sessions.get(session_id)
        if record is None:
            raise ContractError.single("/sessionId", "unknown_session", "no such session in this environment")
        return record

    # starting runs ----------------------------------------------------------------------

    def start(self, turn: AgentTurnInput, play: TurnPlayer) -> RetainedRun:
        """Start ``turn`` (already admitted by the environment) in its session, or answer
        the run its ``turnId`` already started. Synchronous: every refusal and every
        record happens before anything awaits."""
        digest = turn_admission_digest(turn)
        if turn.turn_id is not None and turn.turn_id in self._turns:
            known, _, run = self._turns[turn.turn_id]
            if known != digest:
                raise ContractError.single("/turnId", "turn_conflict", "this turnId was used for another turn")
            return run
        session = self._sessions.get(turn.session_id) if turn.session_id is not None else None
        if session is not None:
            current = session.current
            if current is not None and current.status == "running":
                raise ContractError.single("/sessionId", "session_busy", "the session is running a turn")
        else:
            session_id = turn.session_id
            while session_id is None or session_id in self._sessions:
                session_id = f"{self.environment_id}-session-{self._new_number()}"
            session = RetainedSessionRecord(id=session_id)
            self._sessions[session_id] = session
        number = self._new_number()
        control = AgentRunControlRef(
            run_id=f"run-{number}",
            provider=self.provider,
            environment_id=self.environment_id,
            session_id=session.id,
            execution_id=f"execution-{number}",
            request_digest=digest,
        )
        run = RetainedRun(control, session.id, first_event=len(session.events))
        session.runs.append(run)
        if turn.turn_id is not None:
            self._turns[turn.turn_id] = (digest, session, run)
        if self._on_run is not None:
            self._on_run(control)
        task = asyncio.ensure_future(self._play(session, run, turn, play))
        task.add_done_callback(lambda _: self._settle(session, run, "cancelled", None))
        run.task = task
        session.touch()
        return run

    async def _play(self, session: RetainedSessionRecord, run: RetainedRun, turn: AgentTurnInput, play: TurnPlayer) -> None:
        def emit(event: AgentEnvironmentEvent) -> AgentEnvironmentEvent:
            if run.status != "running":
                raise ContractError.single("", "run_ended", "the run has ended; it emits nothing more")
            return self._append(session, event)

        try:
            result = await play(turn, run.control, emit)
        except asyncio.CancelledError:
            self._settle(session, run, "cancelled", None)
            raise
        except Exception:
            self._settle(session, run, "failed", None)
            return
        self._settle(session, run, "completed" if result.success else "failed", result)

    @staticmethod
    def _append(session: RetainedSessionRecord, event: AgentEnvironmentEvent) -> AgentEnvironmentEvent:
        stamped = event.model_copy(update={"id": f"{session.id}:{len(session.events) + 1}"})
        session.events.append(stamped)
        session.touch()
        return stamped

    def _settle(self, session: RetainedSessionRecord, run: RetainedRun, status: RunStatus, result: AgentTurnResult | None) -> None:
        """End ``run`` once; a run that ends without a result reports how it ended."""
        if run.status != "running":
            return
        run.status, run.result = status, result
        if result is None:
            self._append(session, AgentEnvironmentEvent(type="status", data={"status": status, "runId": run.control.run_id}))
        run.end_event = len(session.events)
        if status == "cancelled" and self._on_cancelled is not None:
            self._on_cancelled(run.control)
        session.touch()

    # reading ------------------------------------------------------------------------------

    def bind(self, session_id: str, control_ref: AgentRunControlRef | Mapping[str, Any] | None) -> AgentRunControlRef | None:
        """The current run's control reference of session ``session_id`` (``None`` when
        the session has no run yet). A given ``control_ref`` must name exactly that run,
        or it is refused (``control_ref_mismatch``)."""
        record = self._sessions.get(session_id)
        current = record.current if record is not None else None
        if control_ref is None:
            return None if current is None else current.control
        given = control_ref if isinstance(control_ref, AgentRunControlRef) else AgentRunControlRef.parse_wire(thaw(control_ref))
        if current is None or not same_agent_run_control_ref(given, current.control):
            raise ContractError.single("/controlRef", "control_ref_mismatch", "the control reference names no current run of this session")
        return current.control

    async def events(
        self, session_id: str, *, since: str | None = None, execution_id: str | None = None
    ) -> AsyncIterator[AgentEnvironmentEvent]:
        """The session's events after ``since`` (exclusive; all when absent), then live
        ones until its current run ends. ``execution_id`` must be the current run's."""
        session = self.require(session_id)
        current = session.current
        if execution_id is not None and (current is None or execution_id != current.control.execution_id):
            raise ContractError.single("/executionId", "execution_mismatch", "the execution is not this session's current run")
        position = 0
        if since is not None:
            ids = [event.id for event in session.events]
            if since not in ids:
                raise ContractError.single("/since", "unknown_event", "since names no event of this session")
            position = ids.index(since) + 1
        while True:
            signal = session.changed
            batch = session.events[position:]
            position += len(batch)
            running = session.current is not None and session.current.status == "running"
            for event in batch:
                yield event
            if not batch:
                if not running:
                    return
                await signal.wait()

    async def run_events(self, run: RetainedRun) -> AsyncIterator[AgentEnvironmentEvent]:
        """The events of one run, live until it ends."""
        session = self.require(run.session_id)
        position = run.first_event
        while True:
            signal = session.changed
            end = len(session.events) if run.end_event is None else run.end_event
            batch = session.events[position:end]
            position += len(batch)
            for event in batch:
                yield event
            if not batch:
                if run.end_event is not None:
                    return
                await signal.wait()

    async def outcome(self, session_id: str, run: RetainedRun | None = None) -> AgentTurnResult:
        """The result of ``run`` (the session's current one by default), once it ended.
        A cancelled run answers ``turn_cancelled``, one that failed without a result
        ``turn_failed``, a session with no run ``no_result``."""
        session = self.require(session_id)
        run = run or session.current
        if run is None:
            raise ContractError.single("", "no_result", "this session has no turn")
        while run.status == "running":
            await session.changed.wait()
        if run.status == "cancelled":
            raise ContractError.single("", "turn_cancelled", "the session's turn was cancelled")
        if run.result is None:
            raise ContractError.single("", "turn_failed", "the session's turn failed without a result")
        return run.result

    # ending -------------------------------------------------------------------------------

    async def cancel(self, session_id: str) -> None:
        """Cancel the session's running turn (nothing when none runs)."""
        session = self.require(session_id)
        run = session.current
        if run is None or run.task is None or run.task.done():
            return
        run.task.cancel()
        await asyncio.gather(run.task, return_exceptions=True)
        self._settle(session, run, "cancelled", None)

    async def close(self) -> None:
        """Cancel every running turn of the environment."""
        for session_id in list(self._sessions):
            await self.cancel(session_id)


class InMemoryAgentSession:
    """A client of one retained session (``environment.session(id)``). It holds no state
    of its own, so any number of clients, built from the same environment object or from
    one ``provider.get`` rebuilt, name the same session.

    ``control_ref`` is the run the client was bound to (``None`` for a session with no
    run yet); ``prompt`` rebinds it to the run it starts.
    """

    def __init__(
        self,
        sessions: RetainedSessions,
        session_id: str,
        *,
        control_ref: AgentRunControlRef | None,
        start: Callable[[AgentTurnInput], RetainedRun],
    ) -> None:
        self._sessions = sessions
        self._id = session_id
        self._control_ref = control_ref
        self._start = start

    @property
    def id(self) -> str:
        return self._id

    @property
    def control_ref(self) -> AgentRunControlRef | None:
        return self._control_ref

    def _record(self) -> RetainedSessionRecord:
        return self._sessions.require(self._id)

    async def status(self) -> AgentSessionStatus | None:
        """The session's status, or ``None`` when this environment has no such session."""
        record = self._sessions.get(self._id)
        return None if record is None else record.status

    async def events(
        self, *, since: str | None = None, execution_id: str | None = None
    ) -> AsyncIterator[AgentEnvironmentEvent]:
        """Every event after ``since`` (exclusive), then live ones until the turn ends."""
        async for event in self._sessions.events(self._id, since=since, execution_id=execution_id):
            yield event

    async def result(self) -> AgentTurnResult:
        """The result of the session's last turn, waiting for a detached one to end."""
        return await self._sessions.outcome(self._id)

    async def prompt(self, input: AgentTurnInput | Mapping[str, Any]) -> AgentTurnResult:
        """Run one more turn in this session and return its result."""
        run = self._start(as_turn_input(input).model_copy(update={"session_id": self._id}))
        self._control_ref = run.control
        return await self._sessions.outcome(self._id, run)

    async def cancel(self) -> None:
        """Cancel the session's running turn (nothing when none runs)."""
        await self._sessions.cancel(self._id)
