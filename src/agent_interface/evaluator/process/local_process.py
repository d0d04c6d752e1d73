"""A real exact-process provider on this machine: supervised local processes.

:class:`LocalExactProcessProvider` keeps everything under one root directory (mode
0700): ``state.sqlite3`` (the durable record, :mod:`.process_store`),
``environments/<id>/fs`` (the environment's files: a tmpfs of ``diskMb``,
:mod:`.environment_disk`) and ``control/<id>/<pid>`` (each process's records,
:mod:`.supervised_process`), which no program can reach. A new provider object over the
same root, in this OS process or another, recovers every environment and process by id.

What it enforces, and how (``docs/security.md`` has the attacks each one stops):

* **fresh environment**, **immutable image identity** (host executables pinned by
  content, :class:`.LocalHostImage`), **shell-free argv** (the wire model's refusal plus
  :mod:`.launch_policy`), a **replacement process environment** (the launch's ``env``
  only);
* **explicit resources**: ``memoryMb`` is the address-space limit per process,
  ``diskMb`` the total of the environment's files (and of any one file), ``cpu`` whole
  CPUs (affinity), at most ``max_processes`` processes (``RLIMIT_NPROC`` of the
  environment's own uid), no core dumps;
* **a program with no power over the host**: each environment's programs run as a uid
  and gid of their own, with no capability in any set and ``no_new_privs``, in fresh
  network and PID namespaces (a ``/proc`` of their own); host processes, the records
  and the supervisor are out of reach;
* **bounded network access**: egress ``blocked`` (an empty network namespace; host Unix
  sockets refused by seccomp, or hidden by the private root when a host directory is
  bound); ``strict`` is refused;
* **its own paths** with ``private_root=True`` (:attr:`LocalExactProcessProvider.private_root`);
  without it, the host's file system read-only but for the environment's files;
* **recoverable output and terminal reason**, **collision-safe idempotent recovery**.

Descendants end with the process (its process group, every process of its PID
namespace). Where any of this cannot be enforced (no network, PID or mount namespace,
not host root, no seccomp for this machine and no private root, no tmpfs),
:attr:`LocalExactProcessProvider.exact_process` is ``None`` and the capability document
omits ``exactProcess``.

Example::

    provider = await LocalExactProcessProvider.open(
        "/var/tmp/exact", executables=["/bin/true", "/usr/bin/python3"]
    )
    exact = provider.exact_process  # None when egress cannot be blocked here
    environment = await exact.create(
        CreateAgentExactProcessEnvironmentInput(
            image=provider.image, egress={"mode": "blocked"}, max_lifetime_ms=600_000,
            resources={"cpu": 1, "memoryMb": 512, "diskMb": 64},
            metadata={"task": "t1"}, idempotency_key="task-t1",
        )
    )
    process = await environment.process.spawn(
        AgentExactProcessLaunch(
            executable="/usr/bin/python3", args=["-c", "print('hi')"], cwd="/",
            env={}, timeout_ms=10_000,
        )
    )
    termination = await process.wait()  # {"kind": "exit", "exitCode": 0}
    await environment.destroy()
"""

from __future__ import annotations

import asyncio
import errno
import json
import os
import sys
import time
import uuid
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypeVar

from agent_interface.core.canonical import canonical_digest, canonical_json
from agent_interface.core.contract_limits import BoundedJsonRecord
from agent_interface.core.errors import ContractError
from agent_interface.core.model import FrozenDict, WireModel, thaw, wire_adapter
from agent_interface.environment.exact_process import (
    AgentExactProcessEnvironmentQuery,
    AgentExactProcessLaunch,
    AgentExactProcessReadFileRequest,
    AgentExactProcessStatus,
    AgentExactProcessWriteFileRequest,
    CreateAgentExactProcessEnvironmentInput,
    check_exact_process_egress_supported,
    exact_process_create_input_digest,
)
from agent_interface.evaluator.images.host_image import LocalHostImage
from agent_interface.evaluator.process.confined_files import (
    environment_path_components,
    open_confined_directory,
    read_confined,
    write_confined,
)
from agent_interface.evaluator.process.control_directory import ExactProcessHandle
from agent_interface.evaluator.process.environment_disk import (
    is_mounted,
    make_environment_directories,
    remove_environment_directories,
    size_capped_mounts_work,
)
from agent_interface.evaluator.process.isolation import LocalIsolation, detect_local_isolation
from agent_interface.evaluator.process.launch_policy import check_launch_policy
from agent_interface.evaluator.process.process_store import EnvironmentRecord, ExactProcessStore
from agent_interface.evaluator.process.seccomp import unix_socket_filter
from agent_interface.evaluator.process.supervised_process import (
    SupervisedProcess,
    start_supervised,
)

if TYPE_CHECKING:  # imported when capabilities() is first asked: it pulls in most of the contract
    from agent_interface.environment.capabilities import AgentEnvironmentCapabilities

__all__ = [
    "LocalExactProcess",
    "LocalExactProcessEnvironment",
    "LocalExactProcessManager",
    "LocalExactProcessProvider",
    "LocalExactProcesses",
]

_MIB: Final = 1 << 20
DEFAULT_MAX_OUTPUT_BYTES: Final = 16 * _MIB
DEFAULT_MAX_PROCESSES: Final = 256


def _now_ms() -> int:
    return int(time.time() * 1000)


M = TypeVar("M", bound=WireModel)


def _parse(model: type[M], value: M | Mapping[str, Any]) -> M:
    """``value`` validated as ``model``; a model is validated again from its wire form."""
    return model.parse_wire(value.to_wire() if isinstance(value, WireModel) else thaw(value))


class LocalExactProcess(ExactProcessHandle):
    """A handle to one process; any number of handles may read the same process.

    ``kill()`` ends the process and its descendants (``cancelled``).
    """

    def __init__(self, supervised: SupervisedProcess) -> None:
        super().__init__(supervised)


class LocalExactProcessManager:
    """``environment.process``: spawn, look up and list an environment's processes."""

    def __init__(self, environment: LocalExactProcessEnvironment) -> None:
        self._environment = environment

    async def list(self) -> list[AgentExactProcessStatus]:
        env = self._environment
        pids = await asyncio.to_thread(env._store.process_ids, env.id)
        return [await self._handle(pid).status() for pid in pids]

    async def get(self, pid: int) -> LocalExactProcess | None:
        env = self._environment
        if await env._record() is None:
            return None
        pids = await asyncio.to_thread(env._store.process_ids, env.id)
        return self._handle(pid) if pid in pids else None

    def _handle(self, pid: int) -> LocalExactProcess:
        return LocalExactProcess(SupervisedProcess(pid, self._environment._control / str(pid)))

    async def spawn(self, launch: AgentExactProcessLaunch | Mapping[str, Any]) -> LocalExactProcess:
        """Start ``launch`` in this environment (see the module docstring for what holds)."""
        request = _parse(AgentExactProcessLaunch, launch)
        env = self._environment
        record = await env._live_files()
        _listed, target = env._owner._image.resolve(request.executable, request.env)
        check_launch_policy(request.executable, request.args, target)
        try:
            cwd = environment_path_components(request.cwd)
        except ContractError as error:
            raise ContractError.single("/cwd", error.issues[0].code, error.issues[0].message) from None
        resources = json.loads(record.input_json)["resources"]
        owner = env._owner
        allowed = sorted(os.sched_getaffinity(0))
        spec = {
            "executable": target,
            "argv": [request.executable, *request.args],
            "env": dict(request.env),
            "root": str(env._files),
            "cwd": cwd,
            "timeoutMs": request.timeout_ms,
            "deadlineEpochMs": record.expires_ms,
            "rlimits": {
                "AS": int(resources["memoryMb"]) * _MIB,
                "FSIZE": int(resources["diskMb"]) * _MIB,
                "CORE": 0,
                "NPROC": env._owner._max_processes,
            },
            "cpus": allowed[: max(int(resources["cpu"]), 1)],
            "outputLimit": env._owner._max_output_bytes,
            "user": [env._uid, env._uid],
            "seccomp": env._owner._seccomp,
        }
        pid = await asyncio.to_thread(
            env._store.claim_pid, env.id, canonical_digest(request.to_wire()), _now_ms()
        )
        spec["mounts"] = await _file_operation(owner._mounts, env, pid)
        spec["hostView"] = None if owner.private_root else {
            "writable": str(env._files), "control": str(env._control / str(pid)),
            "freshProc": owner._fresh_proc, "hide": str(owner._root),
        }
        try:
            supervised = await start_supervised(
                pid,
                env._control / str(pid),
                spec,
                stdin=None if request.stdin is None else request.stdin.encode(),
                prefix=owner._isolation.prefix,
                python=owner._python,
            )
        except BaseException:
            await asyncio.shield(asyncio.to_thread(env._store.set_process_state, env.id, pid, "failed"))
            raise
        process = LocalExactProcess(supervised)
        try:
            await asyncio.to_thread(env._store.set_process_state, env.id, pid, "started")
            gone = await env._record() is None  # destroyed while this spawn was starting
        except BaseException:  # cancelled once the program runs: it is this call's to end
            await asyncio.shield(process.kill())
            raise
        if gone:
            await process.kill()
            raise ContractError.single(
                "/", "exact_process_environment_gone", "the environment was destroyed or expired"
            )
        return process


async def _file_operation(operation: Any, *args: Any, **options: Any) -> Any:
    """Run a confined file operation in a worker thread; an OS failure is a typed refusal."""
    try:
        return await asyncio.to_thread(operation, *args, **options)
    except OSError as error:
        name = errno.errorcode.get(error.errno or 0, "EIO")
        raise ContractError.single(
            "/path", "exact_process_file_error", f"the file operation failed ({name})"
        ) from None


class LocalExactProcessEnvironment:
    """One environment: its files, its processes, and ``destroy``."""

    def __init__(self, owner: LocalExactProcesses, record: EnvironmentRecord) -> None:
        self._owner = owner
        self._store = owner._store
        self.id: Final = record.id
        self.provider: Final = owner.name
        # Bounded JSON, detached and immutable (as provider.create.detached_metadata makes it,
        # without importing the turn machinery that module carries).
        metadata = json.loads(record.metadata_json)
        self.metadata: Final[FrozenDict[str, Any] | None] = (
            None if metadata is None else wire_adapter(BoundedJsonRecord, "metadata").parse(metadata)
        )
        directory = owner._root / "environments" / record.id
        self._files = directory / "fs"
        self._control = owner._root / "control" / record.id
        self._uid = owner._store.environment_uid(record.id)
        self.process: Final = LocalExactProcessManager(self)

    async def _record(self) -> EnvironmentRecord | None:
        return await self._owner._live_record(self.id)

    async def _live_files(self) -> EnvironmentRecord:
        """The live record, once the environment's files are still there (a size-capped
        tmpfs is gone after a reboot: nothing is written to the disk beneath instead)."""
        record = await self._record()
        if record is None:
            raise ContractError.single(
                "/", "exact_process_environment_gone", "the environment was destroyed or expired"
            )
        if not await asyncio.to_thread(is_mounted, self._files):
            raise ContractError.single(
                "/", "exact_process_environment_lost",
                "the environment's files are gone (their tmpfs did not survive a restart)",
            )
        return record

    async def write_file(self, path: str, data: bytes, *, mode: int) -> None:
        """Write exactly ``data`` at the absolute environment ``path`` with POSIX ``mode``."""
        request = AgentExactProcessWriteFileRequest.parse_wire({"path": path, "mode": mode})
        record = await self._live_files()
        if len(data) > int(json.loads(record.input_json)["resources"]["diskMb"]) * _MIB:
            raise ContractError.single(
                "/bytes", "exact_process_write_too_large", "the file is larger than diskMb"
            )
        await _file_operation(
            write_confined, str(self._files), request.path, bytes(data), request.mode,
            owner=(self._uid, self._uid),
        )

    async def read_file(self, path: str, *, max_bytes: int) -> bytes:
        """The exact bytes at ``path``; a file over ``max_bytes`` is refused before loading."""
        request = AgentExactProcessReadFileRequest.parse_wire({"path": path, "maxBytes": max_bytes})
        if await self._record() is None:
            raise ContractError.single(
                "/", "exact_process_environment_gone", "the environment was destroyed or expired"
            )
        data: bytes = await _file_operation(read_confined, str(self._files), request.path, request.max_bytes)
        return data

    async def destroy(self) -> None:
        """End every process, delete the files; later lookups find nothing. Idempotent."""
        await self._owner._destroy(self.id)

    def __repr__(self) -> str:
        return f"<LocalExactProcessEnvironment {self.id}>"


class LocalExactProcesses:
    """``provider.exact_process``: create, get and list environments (durably, by key)."""

    def __init__(self, provider: LocalExactProcessProvider) -> None:
        self._provider = provider
        self._store = provider._store
        self._root = provider._root
        self._image = provider._image
        self._isolation = provider._isolation
        self._python = provider._python
        self._max_output_bytes = provider._max_output_bytes
        self._max_processes = provider._max_processes
        self._executables = tuple(sorted({os.path.realpath(path) for path in provider._image.executables}))
        # Unix sockets: refused by seccomp unless a bound host directory must be reachable
        # (then only the private root's paths keep host sockets out of reach).
        self._seccomp = None if provider._host_directories else unix_socket_filter()
        self.private_root: Final = provider.private_root
        self._fresh_proc = provider._isolation.pid_namespace
        self._read_only = provider._read_only
        self._host_directories = provider._host_directories
        self.name: Final = provider.name

    def _mounts(self, environment: LocalExactProcessEnvironment, pid: int) -> dict[str, Any] | None:
        """The private root of a process (see :attr:`LocalExactProcessProvider.private_root`),
        its mount points made in the environment's files first (never through a link)."""
        if not self._provider.private_root:
            return None
        files = str(environment._files)
        owner = (environment._uid, environment._uid)
        for path in ("/tmp", *self._read_only, *self._host_directories):
            components = environment_path_components(path)
            os.close(open_confined_directory(files, components, create=True, owner=owner))
        return {
            "root": str(environment._control / str(pid) / "root"),
            "files": files,
            "binds": [[host, path] for path, host in self._host_directories.items()],
            "readOnly": list(self._read_only),
            "executables": list(self._executables),
        }

    def _check(self, request: CreateAgentExactProcessEnvironmentInput) -> None:
        check_exact_process_egress_supported(self._provider._egress(), request.egress)
        if request.image != self._image.reference:
            raise ContractError.single(
                "/image",
                "exact_process_image_unavailable",
                "this provider runs only its own local-host image",
            )
        if request.resources.cpu != int(request.resources.cpu):
            raise ContractError.single(
                "/resources/cpu",
                "exact_process_resources_unsupported",
                "this provider bounds CPU by whole CPUs; a fractional count cannot be applied",
            )
        if request.provider_options:
            raise ContractError.single(
                "/providerOptions",
                "exact_process_provider_options_unsupported",
                "this provider takes no provider options",
            )

    async def create(
        self, input: CreateAgentExactProcessEnvironmentInput | Mapping[str, Any]
    ) -> LocalExactProcessEnvironment:
        """A fresh environment; the same key and input return the same one, durably."""
        request = _parse(CreateAgentExactProcessEnvironmentInput, input)
        self._check(request)
        now = _now_ms()
        wire = request.to_wire()
        candidate = EnvironmentRecord(
            id="lxp-" + uuid.uuid4().hex,
            idempotency_key=request.idempotency_key,
            input_digest=exact_process_create_input_digest(request),
            input_json=json.dumps(wire, sort_keys=True),
            metadata_json=canonical_json(wire["metadata"]),
            created_ms=now,
            expires_ms=now + request.max_lifetime_ms,
            state="claimed",
        )
        record = await asyncio.to_thread(self._store.claim_environment, candidate)
        environment = LocalExactProcessEnvironment(self, record)
        if record.state == "claimed":
            directory = self._root / "environments" / record.id
            await asyncio.to_thread(
                make_environment_directories, directory, environment._control, environment._uid,
                int(request.resources.disk_mb),
            )
            await asyncio.to_thread(self._store.mark_ready, record.id)
        return environment

    async def _live_record(self, environment_id: str) -> EnvironmentRecord | None:
        record = await asyncio.to_thread(self._store.environment, environment_id)
        if record is None or record.state != "ready":
            return None
        if record.expires_ms <= _now_ms():
            await self._destroy(environment_id)
            return None
        return record

    async def get(self, id: str) -> LocalExactProcessEnvironment | None:
        """The environment ``id``; ``None`` once destroyed or past its lifetime."""
        record = await self._live_record(id)
        return None if record is None else LocalExactProcessEnvironment(self, record)

    async def list(
        self, query: AgentExactProcessEnvironmentQuery | Mapping[str, Any] | None = None
    ) -> list[LocalExactProcessEnvironment]:
        """Every live environment whose metadata holds every key/value of ``query.metadata``."""
        wanted: dict[str, str] = {}
        if query is not None:
            parsed = _parse(AgentExactProcessEnvironmentQuery, query)
            wanted = {key: canonical_json(value) for key, value in thaw(parsed.metadata or {}).items()}
        found = []
        for record in await asyncio.to_thread(self._store.environments):
            metadata = json.loads(record.metadata_json)
            if all(key in metadata and canonical_json(metadata[key]) == value for key, value in wanted.items()):
                live = await self._live_record(record.id)
                if live is not None:
                    found.append(LocalExactProcessEnvironment(self, live))
        return found

    async def _destroy(self, environment_id: str) -> None:
        await asyncio.to_thread(self._store.mark_destroyed, environment_id)
        directory = self._root / "environments" / environment_id
        controls = self._root / "control" / environment_id
        for state in ("started", "starting"):
            for pid in await asyncio.to_thread(self._store.process_ids, environment_id, state):
                control = controls / str(pid)
                if (control / "supervisor.json").exists():
                    await SupervisedProcess(pid, control).kill()
        await asyncio.to_thread(remove_environment_directories, directory, controls)


class LocalExactProcessProvider:
    """The local provider: its capability document and, when enforceable, ``exact_process``.

    ``root`` holds the durable state; ``executables`` the image (see
    :class:`.LocalHostImage`); ``isolation`` what :func:`.detect_local_isolation` found
    (use :meth:`open` to detect it). ``private_root=True`` roots each process at its
    environment where a mount namespace works (:attr:`private_root`); then
    ``read_only_paths`` are environment directories every process sees read-only, and
    ``host_directories`` maps environment paths to host directories bound there (a model
    endpoint's socket directory, say; the seccomp filter on Unix sockets is then off and
    the private root is what keeps other host sockets out of reach, so without a private
    root nothing is declared). ``max_processes`` bounds the processes and threads of one
    environment (``RLIMIT_NPROC`` of its own uid, which nothing else uses). See the module
    docstring for an example.
    """

    name: Final = "local-exact-process"

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        executables: Iterable[str],
        isolation: LocalIsolation,
        max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
        private_root: bool = False,
        read_only_paths: Iterable[str] = (),
        host_directories: Mapping[str, str | os.PathLike[str]] | None = None,
        max_processes: int = DEFAULT_MAX_PROCESSES,
    ) -> None:
        self._private_root = private_root
        self._read_only = tuple(read_only_paths)
        self._host_directories = {
            path: str(Path(host).resolve(strict=True)) for path, host in (host_directories or {}).items()
        }
        for path in (*self._read_only, *self._host_directories):
            environment_path_components(path)  # refuses a relative or unsafe path
        self._root = Path(root).resolve()
        self._root.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(self._root, 0o700)
        (self._root / "control").mkdir(mode=0o700, exist_ok=True)
        self._store = ExactProcessStore(self._root / "state.sqlite3")
        self._image = LocalHostImage(executables)
        self._isolation = isolation
        self._max_output_bytes = max_output_bytes
        self._max_processes = max_processes
        # The supervisor runs on this very interpreter (its code is compiled here).
        self._python = os.path.realpath(sys.executable)
        self._exact = LocalExactProcesses(self) if self._enforceable() else None

    @classmethod
    async def open(
        cls,
        root: str | os.PathLike[str],
        *,
        executables: Iterable[str],
        unshare: str | None = "unshare",
        pid_namespace: bool = True,
        max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
        max_processes: int = DEFAULT_MAX_PROCESSES,
    ) -> LocalExactProcessProvider:
        """Detect this host's isolation, then build the provider over ``root``."""
        isolation = await detect_local_isolation(unshare, pid_namespace=pid_namespace)
        return cls(
            root, executables=executables, isolation=isolation, max_output_bytes=max_output_bytes,
            max_processes=max_processes,
        )

    def close(self) -> None:
        """Close the state database connection (running processes are not touched)."""
        self._store.close()

    @property
    def image(self) -> str:
        """The image reference a create input must name (``local-host@sha256:...``)."""
        return self._image.reference

    @property
    def isolation(self) -> LocalIsolation:
        return self._isolation

    @property
    def private_root(self) -> bool:
        """Whether each process is rooted at its environment in a private mount namespace
        (asked for with ``private_root=True`` and observed to work here): the environment's
        top-level directories and files are then at the process's ``/`` (so
        ``/tangle/input/task.txt`` is the path it opens), beside the host's top-level
        directories; ``read_only_paths`` are read-only and ``host_directories`` are bound.
        The root directory itself is private scratch: an entry a process creates directly
        under ``/`` is not an environment file. Otherwise a process sees the host's file
        system, its working directory in the environment's directory."""
        return self._private_root and self._isolation.mount_namespace

    def _enforceable(self) -> bool:
        """Whether every promise holds here: egress blocked, records out of the program's
        reach (it runs as another user), and host Unix sockets out of reach (by seccomp,
        or by a private root when a host directory must stay reachable)."""
        isolation = self._isolation
        sockets = self.private_root if self._host_directories else (
            self.private_root or unix_socket_filter() is not None)
        return (isolation.blocks_egress and isolation.separate_user and isolation.mount_namespace
                and sockets and size_capped_mounts_work(self._root / "control"))

    @property
    def exact_process(self) -> LocalExactProcesses | None:
        """The exact-process provider, or ``None`` when a promise cannot be enforced here
        (no network namespace, no separate user for programs, or no way to keep host
        Unix sockets out of reach; see :meth:`_enforceable`)."""
        return self._exact

    def _egress(self) -> tuple[str, ...] | None:
        return ("blocked",) if self._exact is not None else None

    async def capabilities(self) -> AgentEnvironmentCapabilities:
        """Everything off but ``exactProcess`` (egress ``blocked``), and that only when enforced."""
        from agent_interface.evaluator.process.local_capabilities import local_capability_document

        return local_capability_document(self._egress())

    def __repr__(self) -> str:
        return f"<LocalExactProcessProvider {str(self._root)!r}>"
