"""In-memory environments and sessions behind
:class:`~agent_interface.testing.provider.InMemoryAgentEnvironmentProvider`: a file map, a
shell-free ``exec``, and turns answered from the mounted profile.
"""

from __future__ import annotations

import asyncio
import shlex
from collections.abc import AsyncIterator, Mapping
from typing import Any

from agent_interface.core.errors import ContractError
from agent_interface.core.model import FrozenDict
from agent_interface.environment.capabilities import AgentEnvironmentCapabilities
from agent_interface.environment.events import AgentEnvironmentEvent, AgentEnvironmentStatus
from agent_interface.environment.workspace import (
    AgentSessionStatus,
    CheckpointRef,
    CheckpointRequest,
    ExecRequest,
    ExecResult,
    ForkRequest,
    PlacementInfo,
)
from agent_interface.provider.command_turn import command_turn_events
from agent_interface.provider.create import detached_metadata
from agent_interface.provider.protocols import as_turn_input
from agent_interface.provider.turn import (
    AgentEnvironmentCreation,
    AgentSessionRef,
    AgentTurnInput,
    AgentTurnResult,
    require_turn_profile_supported,
)
from agent_interface.testing.provider_state import (
    InMemoryEnvironmentRecord,
    InMemoryProviderState,
    InMemorySessionRecord,
    workspace_path,
)

__all__ = [
    "InMemoryAgentEnvironment",
    "InMemoryAgentSession",
]


class InMemoryAgentSession:
    """A handle on one session of an in-memory environment (``environment.session(id)``);
    it holds no state of its own, so any number of handles name the same session."""

    def __init__(self, environment: InMemoryAgentEnvironment, session_id: str) -> None:
        self._environment = environment
        self._id = session_id

    @property
    def id(self) -> str:
        return self._id

    def _record(self) -> InMemorySessionRecord:
        record = self._environment.record.sessions.get(self._id)
        if record is None:
            raise ContractError.single("/sessionId", "unknown_session", "no such session in this environment")
        return record

    async def status(self) -> AgentSessionStatus | None:
        """The session's status, or ``None`` when this environment has no such session."""
        record = self._environment.record.sessions.get(self._id)
        return None if record is None else record.status

    async def events(
        self, *, since: str | None = None, execution_id: str | None = None
    ) -> AsyncIterator[AgentEnvironmentEvent]:
        """Every event after ``since`` (exclusive), then live ones until the turn ends."""
        record = self._record()
        position = 0
        if since is not None:
            ids = [event.id for event in record.events]
            if since not in ids:
                raise ContractError.single("/since", "unknown_event", "since names no event of this session")
            position = ids.index(since) + 1
        while True:
            async with record.changed:
                while position >= len(record.events) and record.status == "running":
                    await record.changed.wait()
                batch = record.events[position:]
                position = len(record.events)
                finished = record.status != "running"
            for event in batch:
                yield event
            if finished and position >= len(record.events):
                return

    async def result(self) -> AgentTurnResult:
        """The result of the session's last turn, waiting for a detached one to end."""
        record = self._record()
        task = record.task
        if task is not None and not task.done():
            try:
                await asyncio.shield(task)
            except asyncio.CancelledError:
                if not task.cancelled():
                    raise  # the caller itself was cancelled
            except Exception:
                pass  # the turn failed; its record says how
        if record.status == "cancelled":
            raise ContractError.single("", "turn_cancelled", "the session's turn was cancelled")
        if record.result is None:
            raise ContractError.single("", "no_result", "this session has no finished turn")
        return record.result

    async def prompt(self, input: AgentTurnInput | Mapping[str, Any]) -> AgentTurnResult:
        """Run one more turn in this session and return its result."""
        turn = as_turn_input(input).model_copy(update={"session_id": self._id})
        turn = self._environment._admit_turn(turn)
        record = self._environment._open_session(turn)
        return await self._environment._drive(record, turn)

    async def cancel(self) -> None:
        """Cancel the session's running turn (nothing when none runs)."""
        record = self._record()
        if record.task is not None and not record.task.done():
            record.task.cancel()
        async with record.changed:
            if record.status == "running":
                record.status = "cancelled"
            record.changed.notify_all()


# ---------------------------------------------------------------------------
# Environments
# ---------------------------------------------------------------------------


class InMemoryAgentEnvironment:
    """A handle on one in-memory environment; ``creation`` is this call's verdict.

    ``state`` is the provider's state and ``record`` this environment's entry in it.
    """

    def __init__(
        self,
        state: InMemoryProviderState,
        record: InMemoryEnvironmentRecord,
        creation: AgentEnvironmentCreation | None,
    ) -> None:
        self.state = state
        self.record = record
        self._creation = creation
        branching = state.capabilities.branching
        if branching.checkpoint:
            self.checkpoint = self._checkpoint
        if branching.fork:
            self.fork = self._fork
        if state.branching is not None:
            self.workspace_branching = state.branching

    # identity ------------------------------------------------------------------------

    @property
    def id(self) -> str:
        return self.record.id

    @property
    def provider(self) -> str:
        return self.state.name

    @property
    def name(self) -> str | None:
        return self.record.name

    @property
    def creation(self) -> AgentEnvironmentCreation | None:
        return self._creation

    @property
    def metadata(self) -> FrozenDict[str, Any] | None:
        """The detached snapshot stored at create; deeply immutable."""
        return self.record.metadata

    @property
    def capabilities(self) -> AgentEnvironmentCapabilities | None:
        """``None``: the provider's document describes every environment."""
        return None

    async def status(self) -> AgentEnvironmentStatus:
        return self.record.status

    # turns ----------------------------------------------------------------------------

    def _admit_turn(self, input: AgentTurnInput | Mapping[str, Any]) -> AgentTurnInput:
        turn = as_turn_input(input)
        if self.record.status != "running":
            raise ContractError.single("", "environment_not_running", "the environment is not running")
        require_turn_profile_supported(self.state.capabilities, turn)
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
            session = self.record.sessions.get(turn.session_id)
            if session is not None and session.status == "running":
                raise ContractError.single("/sessionId", "session_busy", "the session is running a turn")
        return turn

    def _open_session(self, turn: AgentTurnInput) -> InMemorySessionRecord:
        """The session a turn runs in: the one its ``sessionId`` names (opened under that
        id when new), or a fresh one."""
        session_id = turn.session_id
        if session_id is not None and session_id in self.record.sessions:
            return self.record.sessions[session_id]
        while session_id is None or session_id in self.record.sessions:
            session_id = f"{self.record.id}-session-{self.state.next_id()}"
        record = InMemorySessionRecord(id=session_id)
        self.record.sessions[session_id] = record
        return record

    async def _stamp(self, record: InMemorySessionRecord, event: AgentEnvironmentEvent) -> AgentEnvironmentEvent:
        stamped = event.model_copy(update={"id": f"{record.id}:{next(record.counter)}"})
        async with record.changed:
            record.events.append(stamped)
            record.changed.notify_all()
        return stamped

    async def _turn(self, record: InMemorySessionRecord, turn: AgentTurnInput) -> AsyncIterator[AgentEnvironmentEvent]:
        async with record.changed:
            record.status = "running"
            record.changed.notify_all()
        collected: list[AgentEnvironmentEvent] = []
        try:
            async for event in command_turn_events(turn, self, self.state.name):
                stamped = await self._stamp(record, event)
                collected.append(stamped)
                yield stamped
        except BaseException as error:
            async with record.changed:
                if record.status == "running":
                    record.status = "cancelled" if isinstance(error, asyncio.CancelledError) else "failed"
                record.changed.notify_all()
            raise
        final = collected[-1].data if collected else {}
        success = final.get("status") == "completed"
        failure = None if success else (str(final.get("stderr") or "") or f"exit code {final.get('exitCode')}")
        record.result = AgentTurnResult(
            text=str(final.get("finalText", "")),
            success=success,
            error=failure,
            session_id=record.id,
            events=tuple(collected),
        )
        async with record.changed:
            record.status = "completed" if success else "failed"
            record.changed.notify_all()

    async def _drive(self, record: InMemorySessionRecord, turn: AgentTurnInput) -> AgentTurnResult:
        async for _ in self._turn(record, turn):
            pass
        assert record.result is not None
        return record.result

    def stream(self, input: AgentTurnInput | Mapping[str, Any]) -> AsyncIterator[AgentEnvironmentEvent]:
        """Run one command turn and yield its events live. Refusals raise here, before
        dispatch; a new ``sessionId`` opens a session under that id."""
        turn = self._admit_turn(input)
        record = self._open_session(turn)
        return self._turn(record, turn)

    async def dispatch(self, input: AgentTurnInput | Mapping[str, Any]) -> AgentSessionRef:
        """Start a turn detached and return its session reference."""
        turn = self._admit_turn(input)
        record = self._open_session(turn)
        record.status = "running"
        record.task = asyncio.ensure_future(self._drive(record, turn))
        record.task.add_done_callback(lambda done: None if done.cancelled() else done.exception())
        return AgentSessionRef(id=record.id, provider=self.state.name)

    def session(self, id: str) -> InMemoryAgentSession:
        return InMemoryAgentSession(self, id)

    # workspace ------------------------------------------------------------------------

    async def read(self, path: str) -> str:
        resolved = workspace_path(".", path)
        if resolved not in self.record.files:
            raise ContractError.single("/path", "file_not_found", "no such file in the workspace")
        return self.record.files[resolved]

    async def write(self, path: str, content: str) -> None:
        resolved = workspace_path(".", path)
        if resolved == ".":
            raise ContractError.single("/path", "path_is_root", "cannot write to the workspace root")
        self.record.files[resolved] = content

    async def exec(self, command: str, options: ExecRequest | None = None) -> ExecResult:
        """Run one shell-free command of the built-in set."""
        cwd = self.record.cwd
        if options is not None and options.cwd is not None:
            cwd = workspace_path(cwd, options.cwd)
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
            if not args:
                return ExecResult(exit_code=0, stdout="", stderr="")
            if not (args[0].isascii() and args[0].isdigit() and len(args[0]) <= 9):
                return ExecResult(exit_code=2, stdout="", stderr="exit: numeric argument required\n")
            return ExecResult(exit_code=int(args[0]) % 256, stdout="", stderr="")
        if name == "cat":
            out: list[str] = []
            for arg in args:
                try:
                    out.append(self.record.files[workspace_path(cwd, arg)])
                except (KeyError, ContractError):
                    return ExecResult(exit_code=1, stdout="".join(out), stderr=f"cat: {arg}: No such file\n")
            return ExecResult(exit_code=0, stdout="".join(out), stderr="")
        if name == "ls":
            try:
                base = workspace_path(cwd, args[0]) if args else cwd
            except ContractError:
                return ExecResult(exit_code=2, stdout="", stderr="ls: path escapes the workspace\n")
            prefix = "" if base == "." else base + "/"
            names = sorted({p[len(prefix):].split("/", 1)[0] for p in self.record.files if p.startswith(prefix)})
            return ExecResult(exit_code=0, stdout="".join(n + "\n" for n in names), stderr="")
        return ExecResult(exit_code=127, stdout="", stderr=f"{name}: command not found\n")

    # branching (the source-compatible, non-durable pair) --------------------------------

    async def _checkpoint(self, options: CheckpointRequest | None = None) -> CheckpointRef:
        """Snapshot the workspace files; the snapshot lives as long as the provider."""
        checkpoint_id = f"snapshot-{self.state.next_id()}"
        self.state.snapshots[checkpoint_id] = dict(self.record.files)
        metadata = options.metadata if options is not None else None
        return CheckpointRef(id=checkpoint_id, provider=self.state.name, metadata=metadata)

    async def _fork(self, checkpoint: CheckpointRef, options: ForkRequest | None = None) -> InMemoryAgentEnvironment:
        """A new environment holding its own copy of ``checkpoint``'s files."""
        files = self.state.snapshots.get(checkpoint.id)
        if files is None or checkpoint.provider not in (None, self.state.name):
            raise ContractError.single("/id", "unknown_checkpoint", "no such checkpoint of this provider")
        env_id = f"env-{self.state.next_id()}"
        record = InMemoryEnvironmentRecord(
            id=env_id,
            name=options.name if options is not None else None,
            metadata=detached_metadata(options.metadata if options is not None else None),
            cwd=".",
            env={},
            files=dict(files),
        )
        self.state.environments[env_id] = record
        return InMemoryAgentEnvironment(self.state, record, "created")

    async def placement(self) -> PlacementInfo:
        return PlacementInfo(kind="local")

    async def refresh(self) -> None:
        return None

    async def destroy(self) -> None:
        self.record.status = "stopped"
        self.state.environments.pop(self.record.id, None)
