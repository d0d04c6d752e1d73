"""In-memory environments behind
:class:`~agent_interface.testing.provider.InMemoryAgentEnvironmentProvider`: a file map, a
shell-free ``exec``, and command turns held as retained sessions
(:class:`~agent_interface.testing.retained_runs.RetainedSessions`, whose client is
:class:`~agent_interface.testing.retained_runs.InMemoryAgentSession`).
"""

from __future__ import annotations

import shlex
from collections.abc import AsyncIterator, Mapping
from typing import Any

from agent_interface.core.errors import ContractError
from agent_interface.core.model import FrozenDict
from agent_interface.environment.capabilities import AgentEnvironmentCapabilities
from agent_interface.environment.events import AgentEnvironmentEvent, AgentEnvironmentStatus
from agent_interface.environment.workspace import (
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
from agent_interface.runtime.control import AgentRunControlRef
from agent_interface.testing.provider_state import (
    InMemoryEnvironmentRecord,
    InMemoryProviderState,
    workspace_path,
)
from agent_interface.testing.retained_runs import (
    InMemoryAgentSession,
    RetainedRun,
    TurnEmit,
)

__all__ = [
    "InMemoryAgentEnvironment",
]


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
        return turn

    def _start(self, input: AgentTurnInput | Mapping[str, Any]) -> RetainedRun:
        """Admit one turn and start it (or answer the run its ``turnId`` started)."""
        return self.record.sessions.start(self._admit_turn(input), self._play)

    async def _play(self, turn: AgentTurnInput, control: AgentRunControlRef, emit: TurnEmit) -> AgentTurnResult:
        """One command turn: its two events, then its result."""
        collected = [emit(event) async for event in command_turn_events(turn, self, self.state.name)]
        final = collected[-1].data if collected else {}
        success = final.get("status") == "completed"
        failure = None if success else (str(final.get("stderr") or "") or f"exit code {final.get('exitCode')}")
        return AgentTurnResult(
            text=str(final.get("finalText", "")),
            success=success,
            error=failure,
            session_id=control.session_id,
            events=tuple(collected),
        )

    def stream(self, input: AgentTurnInput | Mapping[str, Any]) -> AsyncIterator[AgentEnvironmentEvent]:
        """Start one command turn and yield its events live. Refusals raise here, before
        dispatch; a new ``sessionId`` opens a session under that id; a known ``turnId``
        follows the run it started."""
        return self.record.sessions.run_events(self._start(input))

    async def dispatch(self, input: AgentTurnInput | Mapping[str, Any]) -> AgentSessionRef:
        """Start a turn detached; the answer carries the run's control reference."""
        run = self._start(input)
        return AgentSessionRef(id=run.session_id, provider=self.state.name, control_ref=run.control)

    def session(
        self, id: str, *, control_ref: AgentRunControlRef | Mapping[str, Any] | None = None
    ) -> InMemoryAgentSession:
        """A client of session ``id`` bound to its current run; a given ``control_ref``
        must name exactly that run (``control_ref_mismatch`` otherwise)."""
        sessions = self.record.sessions
        return InMemoryAgentSession(sessions, id, control_ref=sessions.bind(id, control_ref), start=self._start)

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
        record = self.state.add_environment(
            f"env-{self.state.next_id()}",
            name=options.name if options is not None else None,
            metadata=detached_metadata(options.metadata if options is not None else None),
            files=files,
        )
        return InMemoryAgentEnvironment(self.state, record, "created")

    async def placement(self) -> PlacementInfo:
        return PlacementInfo(kind="local")

    async def refresh(self) -> None:
        return None

    async def destroy(self) -> None:
        """Stop the environment: its running turns are cancelled and it is forgotten."""
        self.record.status = "stopped"
        self.state.environments.pop(self.record.id, None)
        await self.record.sessions.close()
