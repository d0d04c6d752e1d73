"""In-memory environments and sessions behind
:class:`~agent_interface.testing.provider.InMemoryAgentEnvironmentProvider`: a file map, a
shell-free ``exec``, and turns answered from the mounted profile.
"""

from __future__ import annotations

import asyncio
import itertools
import shlex
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from agent_interface.core.errors import (
    ContractError,
)
from agent_interface.core.model import (
    FrozenDict,
    thaw,
)
from agent_interface.environment.capabilities import AgentEnvironmentCapabilities
from agent_interface.environment.events import AgentEnvironmentEvent
from agent_interface.environment.workspace import (
    ExecRequest,
    ExecResult,
    PlacementInfo,
    canonical_workspace_cwd,
)
from agent_interface.provider.command_turn import (
    _present_only,
    command_turn_events,
)
from agent_interface.provider.turn import (
    AgentEnvironmentCreation,
    AgentSessionRef,
    AgentTurnInput,
    AgentTurnResult,
    require_turn_profile_supported,
)

__all__ = [
    "InMemoryAgentEnvironment",
    "InMemoryAgentSession",
]


# ---------------------------------------------------------------------------
# State
# ---------------------------------------------------------------------------


@dataclass
class _SessionState:
    id: str
    status: str = "pending"
    events: list[AgentEnvironmentEvent] = field(default_factory=list)
    result: AgentTurnResult | None = None
    task: asyncio.Future[AgentTurnResult] | None = None
    changed: asyncio.Condition = field(default_factory=asyncio.Condition)
    counter: Any = field(default_factory=lambda: itertools.count(1))


@dataclass
class _EnvironmentState:
    id: str
    name: str | None
    metadata: FrozenDict[str, Any] | None
    cwd: str
    env: dict[str, str]
    files: dict[str, str]
    status: str = "running"
    sessions: dict[str, _SessionState] = field(default_factory=dict)


# ---------------------------------------------------------------------------
# Sessions
# ---------------------------------------------------------------------------


def _resolve(cwd: str, path: str) -> str:
    """A repository-relative path under ``cwd``; escapes are refused."""
    joined = path if cwd == "." else f"{cwd}/{path}"
    try:
        return canonical_workspace_cwd({"base": "repository", "path": joined}).path
    except ContractError as error:
        raise ContractError.single("/path", error.issues[0].code, "workspace path must stay inside the workspace") from None


class InMemoryAgentSession:
    """A handle on one session of an in-memory environment."""

    def __init__(self, environment: InMemoryAgentEnvironment, session_id: str) -> None:
        self._environment = environment
        self._id = session_id

    @property
    def id(self) -> str:
        return self._id

    def _state(self) -> _SessionState:
        state = self._environment._state.sessions.get(self._id)
        if state is None:
            raise ContractError.single("/sessionId", "unknown_session", "no such session in this environment")
        return state

    async def status(self) -> str | None:
        state = self._environment._state.sessions.get(self._id)
        return None if state is None else state.status

    async def events(self, *, since: str | None = None, execution_id: str | None = None) -> AsyncIterator[AgentEnvironmentEvent]:
        """Every event after ``since`` (exclusive), then live ones until the turn ends."""
        state = self._state()
        position = 0
        if since is not None:
            ids = [event.id for event in state.events]
            if since not in ids:
                raise ContractError.single("/since", "unknown_event", "since names no event of this session")
            position = ids.index(since) + 1
        while True:
            async with state.changed:
                while position >= len(state.events) and state.status == "running":
                    await state.changed.wait()
                batch = state.events[position:]
                position = len(state.events)
                finished = state.status != "running"
            for event in batch:
                yield event
            if finished and position >= len(state.events):
                return

    async def result(self) -> AgentTurnResult:
        state = self._state()
        task = state.task
        if task is not None and not task.done():
            try:
                await asyncio.shield(task)
            except asyncio.CancelledError:
                if not task.cancelled():
                    raise  # the caller itself was cancelled
            except Exception:
                pass  # the turn failed; its state says how
        if state.status == "cancelled":
            raise ContractError.single("", "turn_cancelled", "the session's turn was cancelled")
        if state.result is None:
            raise ContractError.single("", "no_result", "this session has no finished turn")
        return state.result

    async def prompt(self, input: AgentTurnInput | Mapping[str, Any]) -> AgentTurnResult:
        turn = self._environment._admit_turn(input)
        turn = turn.model_copy(update={"session_id": self._id})
        state = self._environment._open_session(turn)
        return await self._environment._drive(state, turn)

    async def cancel(self) -> None:
        state = self._state()
        if state.task is not None and not state.task.done():
            state.task.cancel()
        async with state.changed:
            if state.status == "running":
                state.status = "cancelled"
            state.changed.notify_all()


# ---------------------------------------------------------------------------
# Environments
# ---------------------------------------------------------------------------



class _Host(Protocol):
    """What an environment reads from the provider that made it (the provider's own state)."""

    @property
    def name(self) -> str: ...
    @property
    def _capabilities(self) -> AgentEnvironmentCapabilities: ...
    @property
    def _environments(self) -> dict[str, _EnvironmentState]: ...
    @property
    def _ids(self) -> Iterator[int]: ...
    @property
    def _branching(self) -> Any: ...

class InMemoryAgentEnvironment:
    """A handle on one in-memory environment; ``creation`` is this call's verdict."""

    def __init__(
        self,
        provider: _Host,
        state: _EnvironmentState,
        creation: AgentEnvironmentCreation | None,
    ) -> None:
        self._provider = provider
        self._state = state
        self._creation = creation
        if provider._branching is not None:
            self.workspace_branching = provider._branching

    # identity ------------------------------------------------------------------------

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
        """The detached snapshot stored at create; deeply immutable."""
        return self._state.metadata

    @property
    def capabilities(self) -> None:
        return None  # the provider document describes every environment

    async def status(self) -> str:
        return self._state.status

    # turns ----------------------------------------------------------------------------

    def _admit_turn(self, input: AgentTurnInput | Mapping[str, Any]) -> AgentTurnInput:
        turn = input if isinstance(input, AgentTurnInput) else AgentTurnInput.parse_wire(thaw(dict(input)))
        if self._state.status != "running":
            raise ContractError.single("", "environment_not_running", "the environment is not running")
        require_turn_profile_supported(self._provider._capabilities, turn)
        unsupported = [
            ("/controlRef", turn.control_ref),
            ("/contextTransfer", turn.context_transfer),
            ("/nativeContinuation", turn.native_continuation),
            ("/interactions", turn.interactions),
        ]
        for path, value in unsupported:
            if value is not None:
                raise ContractError.single(path, "turn_field_unsupported", "this provider does not declare this turn capability")
        options = turn.provider_options or {}
        if not any(isinstance(v, str) and v for v in (turn.prompt, options.get("command"), options.get("agentCommand"))):
            raise ContractError.single(
                "", "command_turn_missing", "a command turn needs a prompt, providerOptions.command or agentCommand"
            )
        if turn.session_id is not None:
            state = self._state.sessions.get(turn.session_id)
            if state is None:
                raise ContractError.single("/sessionId", "unknown_session", "no such session in this environment")
            if state.status == "running":
                raise ContractError.single("/sessionId", "session_busy", "the session is running a turn")
        return turn

    def _open_session(self, turn: AgentTurnInput) -> _SessionState:
        if turn.session_id is not None:
            return self._state.sessions[turn.session_id]
        session_id = f"{self._state.id}-session-{next(self._provider._ids)}"
        state = _SessionState(id=session_id)
        self._state.sessions[session_id] = state
        return state

    async def _record(self, state: _SessionState, event: AgentEnvironmentEvent) -> AgentEnvironmentEvent:
        stamped = event.model_copy(update={"id": f"{state.id}:{next(state.counter)}"})
        async with state.changed:
            state.events.append(stamped)
            state.changed.notify_all()
        return stamped

    async def _turn(self, state: _SessionState, turn: AgentTurnInput) -> AsyncIterator[AgentEnvironmentEvent]:
        async with state.changed:
            state.status = "running"
            state.changed.notify_all()
        collected: list[AgentEnvironmentEvent] = []
        try:
            async for event in command_turn_events(turn, self, self._provider.name):
                stamped = await self._record(state, event)
                collected.append(stamped)
                yield stamped
        except BaseException as error:
            async with state.changed:
                if state.status == "running":
                    state.status = "cancelled" if isinstance(error, asyncio.CancelledError) else "failed"
                state.changed.notify_all()
            raise
        final = collected[-1].data if collected else {}
        success = final.get("status") == "completed"
        text = str(final.get("finalText", ""))
        failure = None if success else (str(final.get("stderr") or "") or f"exit code {final.get('exitCode')}")
        state.result = _present_only(
            AgentTurnResult, text=text, success=success, error=failure, session_id=state.id, events=tuple(collected)
        )
        async with state.changed:
            state.status = "completed" if success else "failed"
            state.changed.notify_all()

    async def _drive(self, state: _SessionState, turn: AgentTurnInput) -> AgentTurnResult:
        async for _ in self._turn(state, turn):
            pass
        assert state.result is not None
        return state.result

    def stream(self, input: AgentTurnInput | Mapping[str, Any]) -> AsyncIterator[AgentEnvironmentEvent]:
        """Run one command turn and yield its events live. Refusals raise here, before dispatch."""
        turn = self._admit_turn(input)
        state = self._open_session(turn)
        return self._turn(state, turn)

    async def dispatch(self, input: AgentTurnInput | Mapping[str, Any]) -> AgentSessionRef:
        """Start a turn detached and return its session reference."""
        turn = self._admit_turn(input)
        state = self._open_session(turn)
        state.status = "running"
        state.task = asyncio.ensure_future(self._drive(state, turn))
        state.task.add_done_callback(lambda done: None if done.cancelled() else done.exception())
        return AgentSessionRef(id=state.id, provider=self._provider.name)

    def session(self, id: str) -> InMemoryAgentSession:
        return InMemoryAgentSession(self, id)

    # workspace ------------------------------------------------------------------------

    async def read(self, path: str) -> str:
        resolved = _resolve(".", path)
        if resolved not in self._state.files:
            raise ContractError.single("/path", "file_not_found", "no such file in the workspace")
        return self._state.files[resolved]

    async def write(self, path: str, content: str) -> None:
        resolved = _resolve(".", path)
        if resolved == ".":
            raise ContractError.single("/path", "path_is_root", "cannot write to the workspace root")
        self._state.files[resolved] = content

    async def exec(self, command: str, options: ExecRequest | None = None) -> ExecResult:
        """Run one shell-free command of the built-in set."""
        cwd = self._state.cwd
        if options is not None and options.cwd is not None:
            cwd = _resolve(cwd, options.cwd)
        try:
            argv = shlex.split(command)
        except ValueError:
            return ExecResult(exit_code=2, stdout="", stderr="unbalanced quotes\n")
        if not argv:
            return ExecResult(exit_code=0, stdout="", stderr="")
        name, args = argv[0], argv[1:]
        if name == "echo":
            return ExecResult(exit_code=0, stdout=" ".join(args) + "\n", stderr="")
        if name == "pwd":
            return ExecResult(exit_code=0, stdout=cwd + "\n", stderr="")
        if name == "true":
            return ExecResult(exit_code=0, stdout="", stderr="")
        if name == "false":
            return ExecResult(exit_code=1, stdout="", stderr="")
        if name == "exit":
            code = int(args[0]) if args and args[0].isdigit() else 0
            return ExecResult(exit_code=code, stdout="", stderr="")
        if name == "cat":
            out: list[str] = []
            for arg in args:
                try:
                    out.append(self._state.files[_resolve(cwd, arg)])
                except (KeyError, ContractError):
                    return ExecResult(exit_code=1, stdout="".join(out), stderr=f"cat: {arg}: No such file\n")
            return ExecResult(exit_code=0, stdout="".join(out), stderr="")
        if name == "ls":
            try:
                base = _resolve(cwd, args[0]) if args else cwd
            except ContractError:
                return ExecResult(exit_code=2, stdout="", stderr="ls: path escapes the workspace\n")
            prefix = "" if base == "." else base + "/"
            names = sorted({p[len(prefix):].split("/", 1)[0] for p in self._state.files if p.startswith(prefix)})
            return ExecResult(exit_code=0, stdout="".join(n + "\n" for n in names), stderr="")
        return ExecResult(exit_code=127, stdout="", stderr=f"{name}: command not found\n")

    async def placement(self) -> PlacementInfo:
        return PlacementInfo(kind="local")

    async def refresh(self) -> None:
        return None

    async def destroy(self) -> None:
        self._state.status = "stopped"
        self._provider._environments.pop(self._state.id, None)
