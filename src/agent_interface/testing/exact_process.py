"""An in-memory exact-process engine: simulated processes, exact-byte files, real rules.

:class:`InMemoryExactProcessProvider` keeps its environments in an
:class:`InMemoryExactProcessStore`; build several provider objects over one store to
model a provider object that was rebuilt over the same durable state. Nothing runs:
a *program* maps a launch to a :class:`SimulatedRun` (its output, how it ends, and
after how long), and every status is computed from the clock, so a process started in
one event loop can be waited for, or killed, from another.

The built-in program ``/simulated/process`` reads its argv (see
:func:`simulated_process_launch`); pass ``programs={path: function}`` for others.
What it enforces as a real provider must: the launch, file and create models'
refusals (shells, unbounded reads, mutable images, ``..``), undeclared egress modes
refused, one environment per idempotency key (concurrent same-key creates have exactly
one effect: ``store.create_effects``), a changed input under a used key refused, and
exit, timeout, signal and cancellation kept apart.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from agent_interface.core.canonical import canonical_json
from agent_interface.core.errors import ContractError
from agent_interface.core.model import FrozenDict, thaw, wire_adapter
from agent_interface.environment.capabilities import AgentEnvironmentCapabilities
from agent_interface.environment.exact_process import (
    AgentExactProcessEnvironmentQuery,
    AgentExactProcessLaunch,
    AgentExactProcessReadFileRequest,
    AgentExactProcessStatus,
    AgentExactProcessTermination,
    AgentExactProcessWriteFileRequest,
    CreateAgentExactProcessEnvironmentInput,
    check_exact_process_egress_supported,
    exact_process_create_input_digest,
)
from agent_interface.provider.capability_builder import exact_process_only_capabilities
from agent_interface.provider.create import detached_metadata

__all__ = [
    "SIMULATED_PROCESS_EXECUTABLE",
    "InMemoryExactProcess",
    "InMemoryExactProcessEnvironment",
    "InMemoryExactProcessManager",
    "InMemoryExactProcessProvider",
    "InMemoryExactProcessStore",
    "InMemoryExactProcesses",
    "SimulatedProgram",
    "SimulatedRun",
    "simulated_process_launch",
]

SIMULATED_PROCESS_EXECUTABLE: Final = "/simulated/process"
"""The built-in simulated program (its argv says what it does)."""

_TERMINATION = wire_adapter(AgentExactProcessTermination)


@dataclass(frozen=True, slots=True)
class SimulatedRun:
    """What a simulated program does: its output, and how and when it ends.

    ``duration_ms=None`` runs until killed or timed out; otherwise it ends after
    ``duration_ms`` with ``signal`` (a name such as ``"SIGTERM"``) or ``exit_code``.
    """

    stdout: bytes = b""
    stderr: bytes = b""
    exit_code: int = 0
    signal: str | None = None
    duration_ms: int | None = 0


SimulatedProgram = Callable[[AgentExactProcessLaunch], SimulatedRun]


def _builtin_program(launch: AgentExactProcessLaunch) -> SimulatedRun:
    values: dict[str, str] = {}
    for arg in launch.args:
        key, _, value = arg.partition("=")
        values[key] = value
    duration = values.get("duration-ms", "0")
    return SimulatedRun(
        stdout=values.get("stdout", "").encode(),
        stderr=values.get("stderr", "").encode(),
        exit_code=int(values.get("exit", "0")),
        signal=values.get("signal") or None,
        duration_ms=None if duration == "forever" else int(duration),
    )


def simulated_process_launch(
    *,
    stdout: str = "",
    stderr: str = "",
    exit_code: int = 0,
    signal: str | None = None,
    duration_ms: int | None = 0,
    timeout_ms: int = 0,
    cwd: str = "/",
) -> AgentExactProcessLaunch:
    """A launch of ``/simulated/process`` that behaves as described (``None``: forever)."""
    args = [f"stdout={stdout}", f"stderr={stderr}", f"exit={exit_code}"]
    if signal is not None:
        args.append(f"signal={signal}")
    args.append(f"duration-ms={'forever' if duration_ms is None else duration_ms}")
    return AgentExactProcessLaunch.parse_wire(
        {"executable": SIMULATED_PROCESS_EXECUTABLE, "args": args, "cwd": cwd, "env": {},
         "timeoutMs": timeout_ms}
    )


@dataclass
class _Process:
    pid: int
    launch: AgentExactProcessLaunch
    run: SimulatedRun
    started: float
    killed_at: float | None = None

    def termination(self, now: float) -> dict[str, Any] | None:
        end = math.inf if self.run.duration_ms is None else self.started + self.run.duration_ms / 1000
        timeout = self.launch.timeout_ms
        timed_out = self.started + timeout / 1000 if timeout > 0 else math.inf
        killed = math.inf if self.killed_at is None else self.killed_at
        first = min(end, timed_out, killed)
        if first > now:
            return None
        if killed <= min(end, timed_out):
            return {"kind": "cancelled"}
        if timed_out < end:
            return {"kind": "timeout", "timeoutMs": timeout}
        if self.run.signal is not None:
            return {"kind": "signal", "signal": self.run.signal}
        return {"kind": "exit", "exitCode": self.run.exit_code}


@dataclass
class _Environment:
    id: str
    key: str
    digest: str
    metadata: Any
    expires: float
    files: dict[str, tuple[bytes, int]] = field(default_factory=dict)
    processes: dict[int, _Process] = field(default_factory=dict)
    destroyed: bool = False


class InMemoryExactProcessStore:
    """The durable state several provider objects can share (thread-safe)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.environments: dict[str, _Environment] = {}
        self.keys: dict[str, str] = {}
        self.create_effects = 0
        """How many environments were made (a same-key replay makes none)."""


def _now() -> float:
    return time.monotonic()


def _status(process: _Process) -> AgentExactProcessStatus:
    termination = process.termination(_now())
    if termination is None:
        return AgentExactProcessStatus(pid=process.pid, running=True, exit_code=-1)
    if termination["kind"] == "exit":
        code, signal = termination["exitCode"], None
    elif termination["kind"] == "signal":
        code, signal = 128 + 15, termination["signal"]
    else:
        code, signal = 128 + 9, "SIGKILL"
    wire: dict[str, Any] = {"pid": process.pid, "running": False, "exitCode": code, "termination": termination}
    if signal is not None:
        wire["exitSignal"] = signal
    return AgentExactProcessStatus.parse_wire(wire)


class InMemoryExactProcess:
    """One simulated process."""

    def __init__(self, process: _Process) -> None:
        self._process = process

    @property
    def pid(self) -> int:
        return self._process.pid

    async def status(self) -> AgentExactProcessStatus:
        return _status(self._process)

    async def wait(self) -> AgentExactProcessTermination:
        while (termination := self._process.termination(_now())) is None:
            await asyncio.sleep(0.002)
        parsed: AgentExactProcessTermination = _TERMINATION.parse_value(termination)
        return parsed

    async def kill(self) -> None:
        process = self._process
        if process.termination(_now()) is None:
            process.killed_at = _now()

    async def _follow(self, data: bytes) -> AsyncIterator[str]:
        if data:
            yield data.decode("utf-8", "replace")
        await self.wait()

    def stdout(self) -> AsyncIterator[str]:
        return self._follow(self._process.run.stdout)

    def stderr(self) -> AsyncIterator[str]:
        return self._follow(self._process.run.stderr)


class InMemoryExactProcessManager:
    """``environment.process`` of an in-memory environment."""

    def __init__(self, environment: InMemoryExactProcessEnvironment) -> None:
        self._environment = environment

    def _state(self) -> _Environment:
        return self._environment._live()

    async def list(self) -> list[AgentExactProcessStatus]:
        state = self._state()
        return [_status(process) for _, process in sorted(state.processes.items())]

    async def get(self, pid: int) -> InMemoryExactProcess | None:
        process = self._state().processes.get(pid)
        return None if process is None else InMemoryExactProcess(process)

    async def spawn(self, launch: AgentExactProcessLaunch | Mapping[str, Any]) -> InMemoryExactProcess:
        if not isinstance(launch, AgentExactProcessLaunch):
            launch = AgentExactProcessLaunch.parse_wire(thaw(launch))
        program = self._environment._owner._programs.get(launch.executable)
        if program is None:
            raise ContractError.single(
                "/executable", "exact_process_spawn_failed", "no such program in this environment"
            )
        run = program(launch)
        store = self._environment._owner._store
        with store.lock:
            state = self._state()
            pid = max(state.processes, default=0) + 1
            process = _Process(pid, launch, run, _now())
            state.processes[pid] = process
        return InMemoryExactProcess(process)


class InMemoryExactProcessEnvironment:
    """One in-memory exact-process environment."""

    def __init__(self, owner: InMemoryExactProcesses, state: _Environment) -> None:
        self._owner = owner
        self._id = state.id
        self.id: Final = state.id
        self.provider: Final = owner.name
        self.metadata: Final[FrozenDict[str, Any] | None] = detached_metadata(state.metadata)
        self.process: Final = InMemoryExactProcessManager(self)

    def _live(self) -> _Environment:
        state = self._owner._store.environments.get(self._id)
        if state is None or state.destroyed or state.expires <= _now():
            raise ContractError.single(
                "/", "exact_process_environment_gone", "the environment was destroyed or expired"
            )
        return state

    async def write_file(self, path: str, data: bytes, *, mode: int) -> None:
        request = AgentExactProcessWriteFileRequest.parse_wire({"path": path, "mode": mode})
        with self._owner._store.lock:
            self._live().files[request.path] = (bytes(data), request.mode)

    async def read_file(self, path: str, *, max_bytes: int) -> bytes:
        request = AgentExactProcessReadFileRequest.parse_wire({"path": path, "maxBytes": max_bytes})
        entry = self._live().files.get(request.path)
        if entry is None:
            raise ContractError.single("/path", "exact_process_file_missing", "no such file in the environment")
        if len(entry[0]) > request.max_bytes:
            raise ContractError.single("/maxBytes", "exact_process_read_too_large", "the file is larger than maxBytes")
        return entry[0]

    async def destroy(self) -> None:
        with self._owner._store.lock:
            state = self._owner._store.environments.get(self._id)
            if state is not None:
                now = _now()
                for process in state.processes.values():
                    if process.termination(now) is None:
                        process.killed_at = now
                state.destroyed = True


class InMemoryExactProcesses:
    """``provider.exact_process`` of :class:`InMemoryExactProcessProvider`."""

    def __init__(self, provider: InMemoryExactProcessProvider) -> None:
        self._store = provider.store
        self._egress = provider.egress
        self._programs = provider.programs
        self.name: Final = provider.name

    async def create(
        self, input: CreateAgentExactProcessEnvironmentInput | Mapping[str, Any]
    ) -> InMemoryExactProcessEnvironment:
        request = (
            input
            if isinstance(input, CreateAgentExactProcessEnvironmentInput)
            else CreateAgentExactProcessEnvironmentInput.parse_wire(thaw(input))
        )
        check_exact_process_egress_supported(self._egress, request.egress)
        digest = exact_process_create_input_digest(request)
        store = self._store
        with store.lock:
            existing = store.keys.get(request.idempotency_key)
            if existing is not None:
                state = store.environments[existing]
                if state.digest != digest:
                    raise ContractError.single(
                        "/idempotencyKey",
                        "idempotency_conflict",
                        "exact process idempotency key conflicts with a different create input",
                    )
                if state.destroyed:
                    raise ContractError.single(
                        "/idempotencyKey",
                        "exact_process_environment_destroyed",
                        "the environment created under this idempotency key was destroyed",
                    )
            else:
                store.create_effects += 1
                state = _Environment(
                    id=f"inmem-exact-{store.create_effects}",
                    key=request.idempotency_key,
                    digest=digest,
                    metadata=thaw(request.metadata),
                    expires=_now() + request.max_lifetime_ms / 1000,
                )
                store.environments[state.id] = state
                store.keys[state.key] = state.id
        return InMemoryExactProcessEnvironment(self, state)

    async def get(self, id: str) -> InMemoryExactProcessEnvironment | None:
        state = self._store.environments.get(id)
        if state is None or state.destroyed or state.expires <= _now():
            return None
        return InMemoryExactProcessEnvironment(self, state)

    async def list(
        self, query: AgentExactProcessEnvironmentQuery | Mapping[str, Any] | None = None
    ) -> list[InMemoryExactProcessEnvironment]:
        if query is not None and not isinstance(query, AgentExactProcessEnvironmentQuery):
            query = AgentExactProcessEnvironmentQuery.parse_wire(thaw(query))
        wanted = thaw(query.metadata) if query is not None and query.metadata else {}
        found = []
        for state in list(self._store.environments.values()):
            if state.destroyed or state.expires <= _now():
                continue
            if all(
                key in state.metadata and canonical_json(state.metadata[key]) == canonical_json(value)
                for key, value in wanted.items()
            ):
                found.append(InMemoryExactProcessEnvironment(self, state))
        return found


class InMemoryExactProcessProvider:
    """A provider whose only capability is ``exactProcess``, held in memory.

    ``InMemoryExactProcessProvider(store)`` over a shared
    :class:`InMemoryExactProcessStore` recovers everything an earlier object created.
    """

    def __init__(
        self,
        store: InMemoryExactProcessStore | None = None,
        *,
        name: str = "in-memory-exact-process",
        egress: Iterable[str] = ("blocked", "strict"),
        programs: Mapping[str, SimulatedProgram] | None = None,
    ) -> None:
        self.name = name
        self.store = store if store is not None else InMemoryExactProcessStore()
        self.egress = tuple(egress)
        self.programs: dict[str, SimulatedProgram] = {SIMULATED_PROCESS_EXECUTABLE: _builtin_program}
        self.programs.update(programs or {})
        self.exact_process = InMemoryExactProcesses(self) if self.egress else None
        """``None`` when no egress mode is given: the capability is then omitted."""

    async def capabilities(self) -> AgentEnvironmentCapabilities:
        return exact_process_only_capabilities(self.egress or None)
