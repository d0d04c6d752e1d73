"""In-memory interactive terminals with bounded, replayable output.

:class:`InMemoryTerminals` serves ``attach_terminal`` and ``terminal`` the way an
environment with the ``interactiveTerminal`` capability must:

* a request without ``terminalSessionId`` opens a terminal under its parent execution;
  with one it reattaches, and only to a terminal of that same parent execution;
* ``attach`` reaches a running process only; ``logical`` resumes a terminal that exited
  by replaying what it retained; an expired or unknown terminal is ``unavailable``;
* each output frame gets the next ``seq``; only the last ``max_frames`` frames are kept,
  and :attr:`InMemoryTerminalSession.cursors` says which cursors ``events`` still serves;
* input and resize on a stopped or expired terminal are refused, and closing twice
  answers the same ``closed`` acknowledgement.

The terminal echoes its input as output, which is all a test needs to observe ordering.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from agent_interface.core.errors import ContractError
from agent_interface.core.model import wire_adapter
from agent_interface.session.terminal import (
    TerminalAttached,
    TerminalAttachRequest,
    TerminalAttachUnavailable,
    TerminalClosed,
    TerminalDetached,
    TerminalExitEvent,
    TerminalInput,
    TerminalOutputEvent,
    TerminalOutputFrame,
    TerminalReadyEvent,
    TerminalReplayWindow,
    TerminalResize,
    TerminalResizeEvent,
    TerminalSessionRef,
)
from agent_interface.session.timestamps import iso_epoch_ms, iso_of_epoch_ms, system_clock_ms

__all__ = ["InMemoryTerminalSession", "InMemoryTerminals"]

_OUTPUT_EVENT = wire_adapter(TerminalOutputEvent, "TerminalOutputEvent")


def _parse(model: Any, value: Any) -> Any:
    if isinstance(value, model):
        return value
    if not isinstance(value, Mapping):
        raise TypeError(f"expected {model.__name__} or its wire mapping")
    return model.parse_wire(value)


@dataclass
class _Terminal:
    ref: TerminalSessionRef
    # (ordinal, position, event): ordinals count every event; an output frame's position
    # is its seq, any other event sits at the seq of the output frame before it.
    events: list[tuple[int, int, Any]] = field(default_factory=list)
    next_ordinal: int = 0
    next_seq: int = 1
    earliest: int = 0
    closed: TerminalClosed | None = None
    waiters: list[asyncio.Future[None]] = field(default_factory=list)

    def wake(self) -> None:
        for waiter in self.waiters:
            if not waiter.done():
                waiter.set_result(None)
        self.waiters.clear()

    async def changed(self) -> None:
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.waiters.append(waiter)
        await waiter


class InMemoryTerminalSession:
    """Live handle of one in-memory terminal (an ``AgentTerminalSession``)."""

    def __init__(self, owner: InMemoryTerminals, terminal_session_id: str) -> None:
        self._owner = owner
        self._id = terminal_session_id

    @property
    def _state(self) -> _Terminal:
        return self._owner._terminals[self._id]

    @property
    def ref(self) -> TerminalSessionRef:
        return self._state.ref

    @property
    def cursors(self) -> TerminalReplayWindow:
        state = self._state
        return TerminalReplayWindow(earliest=state.earliest, latest=state.next_seq - 1)

    def _require_writable(self) -> _Terminal:
        state = self._state
        if not state.ref.is_running:
            raise ContractError.single("", "terminal_not_running", "the terminal is not running")
        if self._owner._expired(state):
            raise ContractError.single("", "terminal_expired", "the terminal has expired")
        return state

    async def input(self, input: TerminalInput | Mapping[str, Any]) -> None:
        exact: TerminalInput = _parse(TerminalInput, input)
        state = self._require_writable()
        self._owner._emit_output(state, exact.data)

    async def resize(self, resize: TerminalResize | Mapping[str, Any]) -> None:
        exact: TerminalResize = _parse(TerminalResize, resize)
        state = self._require_writable()
        state.ref = self._owner._touch(state.ref, cols=exact.cols, rows=exact.rows)
        self._owner._emit(state, TerminalResizeEvent(type="resize", cols=exact.cols, rows=exact.rows))

    async def detach(self) -> TerminalDetached | TerminalClosed:
        state = self._state
        if state.closed is not None:
            return state.closed
        connection = state.ref.connection_id
        state.ref = self._owner._touch(state.ref, connection_id=None)
        return TerminalDetached(status="detached", terminal_session_id=self._id, connection_id=connection)

    async def close(self) -> TerminalClosed:
        state = self._state
        if state.closed is None:
            state.closed = TerminalClosed(status="closed", terminal_session_id=self._id, exit_code=0)
            state.ref = self._owner._touch(state.ref, is_running=False, exit_code=0, connection_id=None)
            self._owner._emit(state, TerminalExitEvent(type="exit", exit_code=0))
        return state.closed

    async def events(self, *, since: int | None = None) -> AsyncIterator[Any]:
        """Replay retained frames after cursor ``since`` (all retained frames when absent),
        then follow the terminal until it exits. A cursor outside :attr:`cursors` is refused."""
        state = self._state
        window = self.cursors
        if since is not None and not window.earliest <= since <= window.latest:
            raise ContractError.single(
                "", "terminal_cursor_unavailable", "the cursor is outside the retained replay window"
            )
        cursor = state.earliest if since is None else since
        if since is None:
            yield TerminalReadyEvent(type="ready", cols=state.ref.cols, rows=state.ref.rows)
        # replay: output frames after the cursor, other events that followed it
        seen = -1
        for ordinal, at, event in list(state.events):
            seen = ordinal
            if at > cursor or (at == cursor and not isinstance(event, TerminalOutputFrame)):
                yield event
                if isinstance(event, TerminalExitEvent):
                    return
        # follow: everything recorded after the replay, in order
        while state.closed is None or any(ordinal > seen for ordinal, _, _ in state.events):
            fresh = [(ordinal, event) for ordinal, _, event in state.events if ordinal > seen]
            if not fresh:
                await state.changed()
                continue
            for ordinal, event in fresh:
                seen = ordinal
                yield event
                if isinstance(event, TerminalExitEvent):
                    return


@dataclass
class InMemoryTerminals:
    """Terminals of one in-memory environment.

    ``parent_executions`` (when given) lists the executions a terminal may open under;
    ``ttl_ms`` is each terminal's lifetime, ``max_frames`` how many output frames it keeps,
    ``clock_ms`` the time source in epoch milliseconds.
    """

    parent_executions: frozenset[str] | None = None
    ttl_ms: int = 3_600_000
    max_frames: int = 256
    shell: str = "/bin/sh"
    cwd: str = "/workspace"
    clock_ms: Callable[[], int] = system_clock_ms
    _terminals: dict[str, _Terminal] = field(default_factory=dict, init=False, repr=False)
    _counter: Any = field(default_factory=lambda: itertools.count(1), init=False, repr=False)

    def _now(self) -> str:
        return iso_of_epoch_ms(self.clock_ms())

    def _expired(self, state: _Terminal) -> bool:
        expires = iso_epoch_ms(state.ref.expires_at)
        return expires is None or self.clock_ms() >= expires

    def _touch(self, ref: TerminalSessionRef, **change: Any) -> TerminalSessionRef:
        wire = ref.to_wire()
        wire["lastActivityAt"] = self._now()
        for key, value in change.items():
            name = type(ref).model_fields[key].alias or key
            if value is None:
                wire.pop(name, None)
            else:
                wire[name] = value
        return TerminalSessionRef.parse_wire(wire)

    def _emit(self, state: _Terminal, event: Any) -> None:
        position = event.seq if isinstance(event, TerminalOutputFrame) else state.next_seq - 1
        state.events.append((state.next_ordinal, position, event))
        state.next_ordinal += 1
        state.wake()

    def _emit_output(self, state: _Terminal, data: str) -> None:
        frame = TerminalOutputFrame(type="output", seq=state.next_seq, data=data)
        state.next_seq += 1
        self._emit(state, frame)
        frames = [i for i, (_, _, event) in enumerate(state.events) if isinstance(event, TerminalOutputFrame)]
        if len(frames) > self.max_frames:
            cut = frames[len(frames) - self.max_frames]
            state.earliest = state.events[cut][1] - 1
            state.events = state.events[cut:]
        state.ref = self._touch(state.ref)

    async def attach_terminal(self, request: TerminalAttachRequest | Mapping[str, Any]) -> Any:
        exact: TerminalAttachRequest = _parse(TerminalAttachRequest, request)
        if exact.terminal_session_id is None:
            return self._open(exact)
        state = self._terminals.get(exact.terminal_session_id)
        if state is None or state.ref.parent_execution_id != exact.parent_execution_id:
            return TerminalAttachUnavailable(status="unavailable", reason="no such terminal under this execution")
        if self._expired(state):
            return TerminalAttachUnavailable(status="unavailable", reason="terminal expired")
        if exact.mode == "attach" and not state.ref.is_running:
            return TerminalAttachUnavailable(status="unavailable", reason="terminal process is not running")
        change: dict[str, Any] = {"attach_count": state.ref.attach_count + 1}
        if exact.connection_id is not None:
            change["connection_id"] = exact.connection_id
        if state.ref.is_running and exact.cols is not None and exact.rows is not None:
            change.update(cols=exact.cols, rows=exact.rows)
        state.ref = self._touch(state.ref, **change)
        return TerminalAttached(status="reattached", mode=exact.mode, ref=state.ref, attach_count=state.ref.attach_count)

    def _open(self, exact: TerminalAttachRequest) -> Any:
        if self.parent_executions is not None and exact.parent_execution_id not in self.parent_executions:
            return TerminalAttachUnavailable(status="unavailable", reason="unknown parent execution")
        if exact.mode == "logical":
            return TerminalAttachUnavailable(status="unavailable", reason="nothing to resume without a terminal id")
        number = next(self._counter)
        now = self.clock_ms()
        ref = TerminalSessionRef(
            terminal_session_id=f"terminal-{number}",
            parent_execution_id=exact.parent_execution_id,
            name=f"terminal-{number}",
            shell=self.shell,
            command=exact.command,
            cwd=exact.cwd or self.cwd,
            cols=exact.cols or 80,
            rows=exact.rows or 24,
            connection_id=exact.connection_id,
            created_at=iso_of_epoch_ms(now),
            last_activity_at=iso_of_epoch_ms(now),
            expires_at=iso_of_epoch_ms(now + self.ttl_ms),
            is_running=True,
            attach_count=1,
        )
        self._terminals[ref.terminal_session_id] = _Terminal(ref=ref)
        return TerminalAttached(status="attached", mode=exact.mode, ref=ref, attach_count=1)

    def write_output(self, terminal_session_id: str, data: str) -> None:
        """The process behind a terminal writes ``data`` (the next output frame)."""
        self._emit_output(self._terminals[terminal_session_id], data)

    def terminal(self, terminal_session_id: str) -> InMemoryTerminalSession:
        """The live handle of a terminal; an unknown id is refused."""
        if terminal_session_id not in self._terminals:
            raise ContractError.single("", "terminal_not_found", "no terminal has this id")
        return InMemoryTerminalSession(self, terminal_session_id)
