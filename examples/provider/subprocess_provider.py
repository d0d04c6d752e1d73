"""An environment provider whose agent is a local process, run once per turn.

Each environment is a private working directory; each turn runs the agent
(``echo_agent.py`` by default) there with argv only, no shell, and a replacement
environment, and its stdout lines become canonical events. The provider declares live
streaming, detached turns, replay after a cursor, session continuation, token usage and
repository-relative file read/write, and nothing else::

    provider = SubprocessAgentProvider()
    environment = await provider.create(CreateAgentEnvironmentInput.parse_wire(
        {"profile": {"name": "demo"}, "idempotencyKey": "demo-1"}))
    async for event in environment.stream(AgentTurnInput(prompt="hello")):
        print(event.type, event.data.get("delta", ""))
    await environment.destroy()

Public names of ``agent_interface`` only (``tests/examples`` checks it).
"""

from __future__ import annotations

import asyncio
import itertools
import shutil
import tempfile
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from subprocess_turns import (
    SessionLog,
    TurnPlace,
    admit_turn,
    default_agent,
    drive,
    kill,
    run_turn,
    start_run,
)

from agent_interface import (
    AgentEnvironment,
    AgentEnvironmentCapabilities,
    AgentEnvironmentCreateIdempotencyRecord,
    AgentEnvironmentCreation,
    AgentEnvironmentEvent,
    AgentEnvironmentProvider,
    AgentEnvironmentStatus,
    AgentEnvironmentSummary,
    AgentRunControlRef,
    AgentSession,
    AgentSessionRef,
    AgentSessionStatus,
    AgentTurnInput,
    AgentTurnResult,
    CapabilityBuilder,
    ContractError,
    ContractIssue,
    CreateAgentEnvironmentInput,
    FrozenDict,
    RepositoryWorkspaceCwd,
    accepts_cwd_base,
    as_create_input,
    canonical_workspace_cwd,
    create_agent_environment_with_idempotency,
    detached_metadata,
    events_after,
    is_runtime_process_control_environment_name,
    require_turn_profile_supported,
    same_agent_run_control_ref,
    turn_profile_refusals,
)

CAPABILITIES = (
    CapabilityBuilder()
    .streaming(live=True, replay=True, detach=True)
    .sessions(continue_=True)
    .workspace(read=True, write=True, cwd_bases=("repository",))
    .usage()
    .build()
)
"""What the provider implements; every other flag is false."""


class SubprocessAgentProvider:
    """The provider. ``agent`` is the argv prefix of the agent process (the bundled
    ``echo_agent.py`` by default); ``root`` is where environment directories are made
    (a fresh temporary directory by default)."""

    def __init__(self, *, agent: Sequence[str] | None = None, root: Path | None = None) -> None:
        self._agent = tuple(agent) if agent is not None else tuple(default_agent())
        self._root = root if root is not None else Path(tempfile.mkdtemp(prefix="subprocess-agent-"))
        self._environments: dict[str, EnvironmentState] = {}
        self._records: dict[str, AgentEnvironmentCreateIdempotencyRecord[SubprocessEnvironment]] = {}
        self._ids = itertools.count(1)

    @property
    def name(self) -> str:
        return "subprocess-agent"

    async def capabilities(self) -> AgentEnvironmentCapabilities:
        return CAPABILITIES

    async def create(self, input: CreateAgentEnvironmentInput | Mapping[str, Any]) -> SubprocessEnvironment:
        """Create an environment, or replay it for a repeated ``idempotencyKey``.
        Everything this provider cannot honour is refused before any effect."""
        request = _admit_create(as_create_input(input))

        async def provision() -> SubprocessEnvironment:
            env_id = request.requested_id or f"env-{next(self._ids)}"
            if env_id in self._environments:
                raise ContractError.single("/requestedId", "requested_id_taken", "an environment has this id")
            directory = self._root / f"workspace-{next(self._ids)}"
            cwd = request.workspace.cwd if request.workspace is not None else None
            path = cwd.path if isinstance(cwd, RepositoryWorkspaceCwd) else "."
            (directory / path).mkdir(parents=True)
            state = EnvironmentState(
                id=env_id,
                name=request.name,
                metadata=detached_metadata(request.metadata),
                directory=directory,
                cwd=path,
                env=dict(request.env or {}),
            )
            self._environments[env_id] = state
            return SubprocessEnvironment(self, state, "created")

        return await create_agent_environment_with_idempotency(self._records, request, provision)

    async def get(self, id: str) -> SubprocessEnvironment | None:
        state = self._environments.get(id)
        return None if state is None else SubprocessEnvironment(self, state, None)

    async def list(self) -> list[AgentEnvironmentSummary]:
        return [
            AgentEnvironmentSummary(id=s.id, provider=self.name, name=s.name, status=s.status, metadata=s.metadata)
            for s in self._environments.values()
        ]

    def _agent_argv(self) -> Sequence[str]:
        return self._agent

    def _forget(self, state: EnvironmentState) -> None:
        self._environments.pop(state.id, None)


def _admit_create(request: CreateAgentEnvironmentInput) -> CreateAgentEnvironmentInput:
    issues: list[ContractIssue] = []
    if isinstance(request.profile, str):
        issues.append(ContractIssue("/profile", "named_profile_unsupported", "this provider has no profile catalog"))
    else:
        issues.extend(turn_profile_refusals(CAPABILITIES, request.profile, per_turn=False))
        if request.profile.resources is not None:
            issues.append(ContractIssue("/profile/resources", "profile_resources_unsupported", "nothing is mounted"))
    for path, value in (("/backend", request.backend), ("/secrets", request.secrets), ("/resources", request.resources)):
        if value is not None:
            issues.append(ContractIssue(path, "create_field_unsupported", "this provider does not honour it"))
    workspace = request.workspace
    if workspace is not None:
        for key, value in (("environment", workspace.environment), ("image", workspace.image), ("repoUrl", workspace.repo_url)):
            if value is not None:
                issues.append(ContractIssue(f"/workspace/{key}", "workspace_source_unsupported", "workspaces start empty"))
        if workspace.cwd is not None and not accepts_cwd_base(CAPABILITIES, workspace.cwd.base):
            issues.append(ContractIssue("/workspace/cwd/base", "cwd_base_unsupported", "only repository-based cwd"))
    for name in request.env or {}:
        if is_runtime_process_control_environment_name(name):
            issues.append(ContractIssue("/env", "env_name_refused", "a name that controls the agent process"))
    if issues:
        raise ContractError(issues, subject="CreateAgentEnvironmentInput")
    return request


class EnvironmentState:
    """What the provider holds for one environment; handles share it."""

    def __init__(
        self,
        *,
        id: str,
        name: str | None,
        metadata: FrozenDict[str, Any] | None,
        directory: Path,
        cwd: str,
        env: dict[str, str],
    ) -> None:
        self.id = id
        self.name = name
        self.metadata = metadata
        self.directory = directory
        self.cwd = cwd
        self.env = env
        self.status: AgentEnvironmentStatus = "running"
        self.sessions: dict[str, SessionLog] = {}
        self.session_ids = itertools.count(1)


class SubprocessEnvironment:
    """A handle on one environment; ``creation`` is the verdict of the call that made it."""

    def __init__(
        self, provider: SubprocessAgentProvider, state: EnvironmentState, creation: AgentEnvironmentCreation | None
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
    def creation(self) -> AgentEnvironmentCreation | None:
        return self._creation

    @property
    def metadata(self) -> FrozenDict[str, Any] | None:
        return self._state.metadata

    async def status(self) -> AgentEnvironmentStatus:
        return self._state.status

    # turns ----------------------------------------------------------------------------

    def _admit(self, input: AgentTurnInput | Mapping[str, Any]) -> tuple[AgentTurnInput, str, SessionLog]:
        if self._state.status != "running":
            raise ContractError.single("", "environment_not_running", "the environment is not running")
        turn, prompt = admit_turn(input)
        require_turn_profile_supported(CAPABILITIES, turn)
        return turn, prompt, self._open_session(turn.session_id)

    def _open_session(self, session_id: str | None) -> SessionLog:
        """The session a turn runs in: the one it names (opened under that id when new),
        or a fresh one. A session already running a turn is refused."""
        sessions = self._state.sessions
        if session_id is not None and session_id in sessions:
            if sessions[session_id].status == "running":
                raise ContractError.single("/sessionId", "session_busy", "the session is running a turn")
            return sessions[session_id]
        while session_id is None or session_id in sessions:
            session_id = f"{self._state.id}-session-{next(self._state.session_ids)}"
        sessions[session_id] = SessionLog(id=session_id)
        return sessions[session_id]

    def _place(self) -> TurnPlace:
        env = {"PYTHONIOENCODING": "utf-8", "PYTHONDONTWRITEBYTECODE": "1", **self._state.env}
        return TurnPlace(
            provider=self._provider.name,
            environment_id=self._state.id,
            agent=self._provider._agent_argv(),
            cwd=self._state.directory / self._state.cwd,
            env=env,
        )

    def stream(self, input: AgentTurnInput | Mapping[str, Any]) -> AsyncIterator[AgentEnvironmentEvent]:
        """Run one turn and yield its events live; refusals raise here, before dispatch."""
        turn, prompt, log = self._admit(input)
        return self._live(log, turn, prompt)

    async def _live(self, log: SessionLog, turn: AgentTurnInput, prompt: str) -> AsyncIterator[AgentEnvironmentEvent]:
        place = self._place()
        start_run(place, log)
        async for event in run_turn(place, log, turn, prompt):
            yield event

    async def dispatch(self, input: AgentTurnInput | Mapping[str, Any]) -> AgentSessionRef:
        """Start a turn detached; answers the session and the run's control reference."""
        turn, prompt, log = self._admit(input)
        place = self._place()
        run = start_run(place, log)
        log.task = asyncio.ensure_future(drive(place, log, turn, prompt))
        return AgentSessionRef(id=log.id, provider=self._provider.name, control_ref=run)

    def session(self, id: str, *, control_ref: AgentRunControlRef | Mapping[str, Any] | None = None) -> SubprocessSession:
        """A handle on session ``id``. With ``control_ref``, the handle is bound to that
        run, and a reference to any other run is refused."""
        if control_ref is None:
            return SubprocessSession(self, id, None)
        reference = control_ref if isinstance(control_ref, AgentRunControlRef) else AgentRunControlRef.parse_wire(control_ref)
        log = self._state.sessions.get(id)
        if log is None or log.run is None or not same_agent_run_control_ref(log.run, reference):
            raise ContractError.single("/controlRef", "unknown_run", "the reference names no run of this session")
        return SubprocessSession(self, id, reference)

    # workspace ------------------------------------------------------------------------

    def _file(self, path: str) -> Path:
        """``path`` inside the workspace; one that escapes it is refused."""
        try:
            relative = canonical_workspace_cwd({"base": "repository", "path": path}).path
        except ContractError:
            raise ContractError.single("/path", "path_outside_workspace", "the path must stay in the workspace") from None
        root = self._state.directory.resolve()
        target = (root / relative).resolve()
        if relative == "." or not target.is_relative_to(root):
            raise ContractError.single("/path", "path_outside_workspace", "the path must name a file in the workspace")
        return target

    async def read(self, path: str) -> str:
        target = self._file(path)
        if not target.is_file():
            raise ContractError.single("/path", "file_not_found", "no such file in the workspace")
        return target.read_text(encoding="utf-8")

    async def write(self, path: str, content: str) -> None:
        target = self._file(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8", newline="")

    async def destroy(self) -> None:
        """Stop every running turn, delete the workspace and forget the environment."""
        for log in self._state.sessions.values():
            await SubprocessSession(self, log.id, None).cancel()
        self._state.status = "stopped"
        self._provider._forget(self._state)
        shutil.rmtree(self._state.directory, ignore_errors=True)


class SubprocessSession:
    """A handle on one session; the state lives in the environment, so any number of
    handles name the same session."""

    def __init__(self, environment: SubprocessEnvironment, session_id: str, control_ref: AgentRunControlRef | None) -> None:
        self._environment = environment
        self._id = session_id
        self._control_ref = control_ref

    @property
    def id(self) -> str:
        return self._id

    @property
    def control_ref(self) -> AgentRunControlRef | None:
        """The run this handle is bound to: the one it was opened with, else the
        session's latest run."""
        if self._control_ref is not None:
            return self._control_ref
        log = self._environment._state.sessions.get(self._id)
        return None if log is None else log.run

    def _log(self) -> SessionLog:
        log = self._environment._state.sessions.get(self._id)
        if log is None:
            raise ContractError.single("/sessionId", "unknown_session", "no such session in this environment")
        return log

    async def status(self) -> AgentSessionStatus | None:
        log = self._environment._state.sessions.get(self._id)
        return None if log is None else log.status

    async def events(
        self, *, since: str | None = None, execution_id: str | None = None
    ) -> AsyncIterator[AgentEnvironmentEvent]:
        """Every event after ``since`` (an event id; all when ``None``), then the live
        ones until the running turn ends. An unknown ``since`` is refused."""
        log = self._log()
        position = len(log.events) - len(events_after(log.events, since))
        while True:
            async with log.changed:
                while position >= len(log.events) and log.status == "running":
                    await log.changed.wait()
                batch = log.events[position:]
                position = len(log.events)
                finished = log.status != "running"
            for event in batch:
                yield event
            if finished and position >= len(log.events):
                return

    async def result(self) -> AgentTurnResult:
        """The result of the session's last turn, waiting for a detached one."""
        log = self._log()
        if log.task is not None and not log.task.done():
            await asyncio.wait([log.task])
        if log.result is None:
            raise ContractError.single("", "no_result", "this session has no finished turn")
        return log.result

    async def prompt(self, input: AgentTurnInput | Mapping[str, Any]) -> AgentTurnResult:
        """Run one more turn in this session and answer its result."""
        turn = admit_turn(input)[0].model_copy(update={"session_id": self._id})
        turn, prompt, log = self._environment._admit(turn)
        place = self._environment._place()
        start_run(place, log)
        return await drive(place, log, turn, prompt)

    async def cancel(self) -> None:
        """Stop the running turn (nothing when none runs); it ends ``cancelled``."""
        log = self._log()
        if log.status != "running":
            return
        log.cancel_requested = True
        if log.process is not None:
            kill(log.process)
        if log.task is not None:
            await asyncio.wait([log.task])


def _protocols_hold(
    provider: SubprocessAgentProvider, environment: SubprocessEnvironment, session: SubprocessSession
) -> tuple[AgentEnvironmentProvider, AgentEnvironment, AgentSession]:
    """Never called: ``mypy --strict`` accepts this only if the three classes satisfy
    the Protocols a runtime programs against."""
    return provider, environment, session
