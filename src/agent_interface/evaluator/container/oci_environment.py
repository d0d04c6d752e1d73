"""One OCI exact-process environment: its processes (one container each) and its files.

Each spawn runs in a container of its own (its own PID namespace, cgroup, network
namespace and ``runc`` id ``<environment id>-<pid>``) over the environment's one root
file system (:mod:`.environment_root`), so what one process writes the next one reads,
and a timeout, cancel or exit of one process removes exactly its container.

File reads and writes from the evaluator run on the host with the file-system identity
of the container's root user (``setfsuid``/``setfsgid`` of the worker thread to
``id_base``: root's file capabilities drop with it), through
:mod:`agent_interface.evaluator.process.confined_files` (no link followed), so a link or
mode the program planted gives the evaluator no more power over the host than the
program has.
"""

from __future__ import annotations

import asyncio
import ctypes
import errno
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final, Protocol, TypeVar

from agent_interface.core.canonical import canonical_digest
from agent_interface.core.contract_limits import BoundedJsonRecord
from agent_interface.core.errors import ContractError
from agent_interface.core.model import FrozenDict, WireModel, thaw, wire_adapter
from agent_interface.environment.exact_process import (
    AgentExactProcessLaunch,
    AgentExactProcessReadFileRequest,
    AgentExactProcessStatus,
    AgentExactProcessWriteFileRequest,
)
from agent_interface.evaluator.container.container_process import (
    ContainerProcess,
    start_container,
)
from agent_interface.evaluator.container.environment_egress import (
    EnvironmentEgress,
    summary_from_file,
)
from agent_interface.evaluator.container.environment_root import environment_init
from agent_interface.evaluator.container.host_probe import OciHostSupport
from agent_interface.evaluator.container.runtime_config import (
    INHERITED_RLIMITS,
    ContainerLimits,
    ReadOnlyBind,
    container_cgroup,
    memory_bytes,
    runtime_config,
)
from agent_interface.evaluator.egress.decisions import EgressSummary
from agent_interface.evaluator.egress.settings import EgressSettings
from agent_interface.evaluator.images.image_paths import find_executable
from agent_interface.evaluator.process.confined_files import read_confined, write_confined
from agent_interface.evaluator.process.control_directory import ExactProcessHandle
from agent_interface.evaluator.process.process_store import EnvironmentRecord, ExactProcessStore


class EnvironmentOwner(Protocol):
    """What an environment needs from ``provider.exact_process`` (:class:`.OciExactProcesses`)."""

    name: str
    store: ExactProcessStore
    support: OciHostSupport
    init_path: Path
    runc_root: Path
    max_output_bytes: int
    max_pids: int
    binds: tuple[ReadOnlyBind, ...]
    egress_port: int

    def now_ms(self) -> int: ...

    def network_namespace(self, environment_id: str) -> Path: ...
    def user_namespace(self, environment_id: str) -> Path | None: ...

    def egress_log_path(self, environment_id: str) -> Path: ...

    def egress_for(self, environment_id: str) -> EnvironmentEgress | None: ...

    def egress_settings(self, allow_domains: tuple[str, ...]) -> EgressSettings: ...

    def environment_directory(self, environment_id: str) -> Path: ...

    async def live_record(self, environment_id: str) -> EnvironmentRecord | None: ...

    async def checked_record(self, record: EnvironmentRecord | None) -> EnvironmentRecord | None: ...

    async def destroy(self, environment_id: str) -> None: ...

__all__ = ["EnvironmentOwner", "OciExactProcess", "OciExactProcessEnvironment", "OciExactProcessManager"]

_MIB: Final = 1 << 20
T = TypeVar("T")
M = TypeVar("M", bound=WireModel)


def parse_model(model: type[M], value: M | Mapping[str, Any]) -> M:
    """``value`` validated as ``model`` (a model is validated again from its wire form)."""
    return model.parse_wire(value.to_wire() if isinstance(value, WireModel) else thaw(value))


def _gone() -> ContractError:
    return ContractError.single("/", "exact_process_environment_gone", "the environment was destroyed or expired")


_CAPABILITY_V3: Final = 0x20080522
_CAP_DAC_OVERRIDE: Final = 1
_CAP_DAC_READ_SEARCH: Final = 2
_CAP_FOWNER: Final = 3
_ROOT_FILE_CAPABILITIES: Final = (1 << _CAP_DAC_OVERRIDE) | (1 << _CAP_DAC_READ_SEARCH) | (1 << _CAP_FOWNER)
"""What container root holds over its namespace's files: permission and owner checks bypassed."""


class _CapHeader(ctypes.Structure):
    _fields_ = (("version", ctypes.c_uint32), ("pid", ctypes.c_int))


class _CapData(ctypes.Structure):
    _fields_ = (("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32))


def _raise_file_capabilities(libc: ctypes.CDLL) -> None:
    """Raise, in this thread's effective set, the file capabilities ``setfsuid`` dropped."""
    header = _CapHeader(_CAPABILITY_V3, 0)
    data = (_CapData * 2)()
    if libc.capget(ctypes.byref(header), data) != 0:
        raise OSError(ctypes.get_errno(), "capget")
    if data[0].permitted & _ROOT_FILE_CAPABILITIES != _ROOT_FILE_CAPABILITIES:
        return  # not held: the kernel's own checks for the id base apply
    data[0].effective |= _ROOT_FILE_CAPABILITIES
    if libc.capset(ctypes.byref(header), data) != 0:
        raise OSError(ctypes.get_errno(), "capset")


def _as_user(id_base: int | None, operation: Callable[..., T], *args: Any) -> T:
    """``operation(*args)`` in this thread as the container's root: file-system ids
    ``id_base`` (what it creates is container root's) with the file capabilities container
    root holds in its namespace (so a directory of another container user is written as
    container root would write it); then restored.

    Every file an environment's root holds is owned by an id of the namespace (the image's
    are mapped, the programs' are the namespace's, the evaluator's are ``id_base``), and the
    confined walk (:mod:`agent_interface.evaluator.process.confined_files`: ``O_NOFOLLOW``
    on every component, no ``..``) never leaves that root, so those capabilities reach
    nothing else."""
    if id_base is None:
        return operation(*args)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.setfsgid(id_base)
    libc.setfsuid(id_base)
    try:
        if libc.setfsuid(-1) != id_base or libc.setfsgid(-1) != id_base:
            raise OSError(errno.EPERM, "setfsuid")
        _raise_file_capabilities(libc)
        return operation(*args)
    finally:
        libc.setfsuid(0)  # back to root: the kernel restores root's file capabilities
        libc.setfsgid(0)


async def _file_operation(id_base: int | None, operation: Callable[..., T], *args: Any) -> T:
    try:
        return await asyncio.to_thread(_as_user, id_base, operation, *args)
    except OSError as error:
        name = errno.errorcode.get(error.errno or 0, "EIO")
        raise ContractError.single("/path", "exact_process_file_error", f"the file operation failed ({name})") from None


class OciExactProcess(ExactProcessHandle):
    """A handle to one container process; any number of handles may read the same one.

    ``kill()`` removes the container (``cancelled``).
    """

    def __init__(self, handle: ContainerProcess, container_id: str) -> None:
        super().__init__(handle)
        self.container_id: Final = container_id
        """The ``runc`` id of the process's container (``<environment id>-<pid>``), for receipts."""

    async def oom_killed(self) -> bool:
        """Whether the kernel's OOM killer acted in the process's container."""
        record = await asyncio.to_thread(self._process.termination_record) or {}
        return bool(record.get("oomKilled"))


class OciExactProcessManager:
    """``environment.process``: spawn, look up and list an environment's processes."""

    def __init__(self, environment: OciExactProcessEnvironment) -> None:
        self._environment = environment

    async def list(self) -> list[AgentExactProcessStatus]:
        env = self._environment
        pids = await asyncio.to_thread(env._store.process_ids, env.id)
        return [await self._handle(pid).status() for pid in pids]

    async def get(self, pid: int) -> OciExactProcess | None:
        env = self._environment
        if await env._record() is None:
            return None
        pids = await asyncio.to_thread(env._store.process_ids, env.id)
        return self._handle(pid) if pid in pids else None

    def _handle(self, pid: int) -> OciExactProcess:
        env = self._environment
        return OciExactProcess(ContainerProcess(pid, env._directory / "processes" / str(pid)), f"{env.id}-{pid}")

    def _claim(self, request: AgentExactProcessLaunch) -> tuple[EnvironmentRecord | None, str, int | None]:
        """In a worker thread, once per spawn: the environment's record and, while it is
        ready and not expired, the executable's path and a claimed pid."""
        env = self._environment
        record = env._store.environment(env.id)
        if record is None or record.state != "ready" or record.expires_ms <= env._owner.now_ms():
            return record, "", None  # checked_record refuses it (and destroys an expired one)
        executable = self._executable(request)
        pid = env._store.claim_pid(env.id, canonical_digest(request.to_wire()), env._owner.now_ms())
        return record, executable, pid

    def _started(self, pid: int) -> EnvironmentRecord | None:
        """In a worker thread: record ``pid`` as started; the environment's record now."""
        env = self._environment
        env._store.set_process_state(env.id, pid, "started")
        return env._store.environment(env.id)

    def _executable(self, request: AgentExactProcessLaunch) -> str:
        """The path ``execve`` runs in the container: an absolute executable as written, a
        bare name found along the launch's ``PATH`` inside the environment's root (links
        resolved there, never out of it: :mod:`~agent_interface.evaluator.images.image_paths`)."""
        if request.executable.startswith("/"):
            return request.executable
        env = self._environment
        search = request.env.get("PATH", "")
        found = find_executable(env._directory / "root" / "rootfs", request.executable, search)
        if found is None:
            shown = search if len(search) <= 512 else search[:509] + "..."
            raise ContractError.single(
                "/executable", "exact_process_executable_not_found",
                f"no executable {request.executable} along PATH {shown} in image {env.image}",
            )
        return found

    async def spawn(self, launch: AgentExactProcessLaunch | Mapping[str, Any]) -> OciExactProcess:
        """Start ``launch`` in a new container of this environment."""
        request = parse_model(AgentExactProcessLaunch, launch)
        env, owner = self._environment, self._environment._owner
        read, executable, pid = await asyncio.to_thread(self._claim, request)
        record = await owner.checked_record(read)
        if record is None or pid is None:
            raise _gone()
        resources = json.loads(record.input_json)["resources"]
        container_id = f"{env.id}-{pid}"
        cgroup = container_cgroup(container_id)
        userns = owner.user_namespace(env.id)
        config = runtime_config(
            rootfs=str(env._directory / "root" / "rootfs"),
            init=str(environment_init(env._directory / "root") or owner.init_path),
            argv=[executable, *request.args],
            env=dict(request.env),
            cwd=request.cwd,
            hostname="exact",
            limits=ContainerLimits(
                memory_bytes(int(resources["memoryMb"])), float(resources["cpu"]), owner.max_pids,
                owner.support.swap_limit,
            ),
            cgroup=cgroup,
            id_base=owner.support.id_base,
            binds=owner.binds,
            network_namespace=str(owner.network_namespace(env.id)) if env.egress_proxy else None,
            user_namespace=None if userns is None else str(userns),
        )
        spec = {
            "rlimits": [] if userns is None else [list(limit) for limit in INHERITED_RLIMITS],
            "runc": owner.support.runc, "runcRoot": str(owner.runc_root), "id": container_id,
            "cgroup": cgroup, "timeoutMs": request.timeout_ms, "deadlineEpochMs": record.expires_ms,
            "outputLimit": owner.max_output_bytes,
        }
        try:
            handle = await start_container(
                pid, env._directory / "processes" / str(pid), spec, config,
                stdin=None if request.stdin is None else request.stdin.encode(),
            )
        except BaseException:
            await asyncio.shield(asyncio.to_thread(env._store.set_process_state, env.id, pid, "failed"))
            raise
        process = OciExactProcess(handle, container_id)
        try:
            gone = await owner.checked_record(await asyncio.to_thread(self._started, pid)) is None
        except BaseException:  # cancelled once the program runs: it is this call's to end
            await asyncio.shield(process.kill())
            raise
        if gone:  # destroyed while this spawn was starting
            await process.kill()
            raise _gone()
        return process


class OciExactProcessEnvironment:
    """One environment: its files, its processes, and ``destroy``."""

    def __init__(self, owner: EnvironmentOwner, record: EnvironmentRecord) -> None:
        self._owner = owner
        self._store = owner.store
        self.id: Final = record.id
        self.provider: Final = owner.name
        metadata = json.loads(record.metadata_json)
        self.metadata: Final[FrozenDict[str, Any] | None] = (
            None if metadata is None else wire_adapter(BoundedJsonRecord, "metadata").parse(metadata)
        )
        self._directory = owner.environment_directory(record.id)
        created = json.loads(record.input_json)
        self.image: Final[str] = created["image"]
        """The image reference it was created from (``name@sha256:<manifest digest>``)."""
        self.egress_policy: Final[dict[str, Any]] = created["egress"]
        """The egress policy of the create input (``blocked``, or ``strict`` with its domains)."""
        self.process: Final = OciExactProcessManager(self)

    @property
    def egress_proxy(self) -> str | None:
        """``http://127.0.0.1:PORT``, the proxy inside a strict environment's network
        namespace (``None`` when egress is ``blocked``). Nothing is added to a launch's
        environment: a plan that wants the proxy sets ``HTTP_PROXY``/``HTTPS_PROXY``
        (and the lowercase spellings) to this URL in its launch."""
        if self.egress_policy["mode"] != "strict":
            return None
        return f"http://127.0.0.1:{self._owner.egress_port}"

    @property
    def egress_log_path(self) -> Path | None:
        """The JSONL file of every proxy decision (capped; kept after ``destroy``)."""
        return self._owner.egress_log_path(self.id) if self.egress_proxy else None

    async def egress_summary(self) -> EgressSummary | None:
        """The enforced policy and the decision totals of a strict environment (``None``
        for ``blocked``): the running proxy's, else those of its JSONL file."""
        if self.egress_proxy is None:
            return None
        egress = self._owner.egress_for(self.id)
        if egress is not None:
            return await egress.summary()
        settings = self._owner.egress_settings(tuple(self.egress_policy["allowDomains"]))
        return await asyncio.to_thread(summary_from_file, self._owner.egress_log_path(self.id), settings)

    async def _record(self) -> EnvironmentRecord | None:
        return await self._owner.live_record(self.id)

    @property
    def container_ids(self) -> str:
        """The prefix of the ``runc`` ids of this environment's containers."""
        return f"{self.id}-"

    async def write_file(self, path: str, data: bytes, *, mode: int) -> None:
        """Write exactly ``data`` at the absolute container ``path`` with POSIX ``mode``
        (owned by the container's root; the writable layer's size bounds it)."""
        request = AgentExactProcessWriteFileRequest.parse_wire({"path": path, "mode": mode})
        record = await self._record()
        if record is None:
            raise _gone()
        if len(data) > int(json.loads(record.input_json)["resources"]["diskMb"]) * _MIB:
            raise ContractError.single("/bytes", "exact_process_write_too_large", "the file is larger than diskMb")
        await _file_operation(
            self._owner.support.id_base, write_confined, str(self._directory / "root" / "rootfs"),
            request.path, bytes(data), request.mode,
        )

    async def read_file(self, path: str, *, max_bytes: int) -> bytes:
        """The exact bytes at ``path``; a file over ``max_bytes`` is refused before loading."""
        request = AgentExactProcessReadFileRequest.parse_wire({"path": path, "maxBytes": max_bytes})
        if await self._record() is None:
            raise _gone()
        return await _file_operation(
            self._owner.support.id_base, read_confined, str(self._directory / "root" / "rootfs"),
            request.path, request.max_bytes,
        )

    async def destroy(self) -> None:
        """Remove every container, unmount and delete the files; later lookups find nothing."""
        await self._owner.destroy(self.id)

    def __repr__(self) -> str:
        return f"<OciExactProcessEnvironment {self.id}>"
