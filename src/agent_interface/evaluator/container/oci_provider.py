"""The exactProcess capability on a real OCI runtime: :class:`OciExactProcessProvider`.

Every environment is a root file system of its own (the image's read-only ``rootfs``
under a fresh writable layer on a tmpfs of ``diskMb``, see :mod:`.environment_root`);
every process runs in a container of its own over it, on ``runc`` (see
:mod:`.oci_environment` for why one container per process, and
:mod:`.runtime_config` for what each container gets: user namespace, no capability,
``noNewPrivileges``, seccomp, an empty network namespace, cgroup limits). A detached
supervisor per process on the host (:mod:`._oci_supervisor`) holds the program's
output pipes, enforces its timeout and the environment's lifetime, and writes the
evidence in a control directory no path inside any container reaches.

``root`` holds ``state.sqlite3`` (the durable record, reusing
:class:`agent_interface.evaluator.process.process_store.ExactProcessStore`), ``init``
(the containers' PID 1), ``runc/`` (``runc``'s state for this provider's containers
only) and ``environments/<id>/`` (``root/`` mounted, ``processes/<pid>/`` control
directories). A new provider object over the same root, in this OS process or another,
recovers every environment and process: at :meth:`OciExactProcessProvider.open` it
removes containers of destroyed or expired environments and settles processes whose
supervisor is gone.

``exactProcess`` is declared only when :func:`.probe_oci_host` observed every property
on this host; otherwise :attr:`OciExactProcessProvider.exact_process` is ``None`` and
:attr:`OciExactProcessProvider.reasons` says what could not be enforced.

Egress ``blocked`` is always enforced (each container's own empty network namespace).
``strict`` is declared (and accepted) only when :func:`.probe_strict_egress` observed
it; otherwise :attr:`OciExactProcessProvider.strict_egress_reasons` says why and a
``strict`` create is refused. A ``strict`` environment gets a network namespace of its
own (loopback only, no route; every container of the environment joins it, see
:mod:`.network_namespace`) and an
:class:`~agent_interface.evaluator.egress.proxy.EgressProxy` on the provider's proxy
thread (:mod:`.environment_egress`) that accepts on ``127.0.0.1:egress_port`` inside
that namespace: ``environment.egress_proxy`` names it. The launch's environment is never
changed: a program (or the plan) that wants the proxy sets ``HTTP_PROXY`` and
``HTTPS_PROXY`` to that URL itself. Decisions go to ``egress/<environment id>.jsonl``
under ``root`` (capped at ``egress_max_file_records`` lines, kept after ``destroy``)
and ``await environment.egress_summary()``. The proxy lives as long as the provider
object: :meth:`OciExactProcessProvider.close` ends it (the programs then have no way out
at all); a provider opened again over ``root`` restarts it for every live environment.

Example::

    provider = await OciExactProcessProvider.open("/var/lib/exact", images=store)
    exact = provider.exact_process  # None (see provider.reasons) when not enforceable
    environment = await exact.create({
        "image": "busybox@sha256:...", "egress": {"mode": "blocked"},
        "maxLifetimeMs": 600_000, "resources": {"cpu": 0.5, "memoryMb": 256, "diskMb": 64},
        "metadata": {"task": "t1"}, "idempotencyKey": "task-t1",
    })
    process = await environment.process.spawn({
        "executable": "/bin/echo", "args": ["hi"], "cwd": "/", "env": {}, "timeoutMs": 10_000,
    })
    await process.wait()  # {"kind": "exit", "exitCode": 0}
    await environment.destroy()
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import dataclasses
import errno
import json
import os
import re
import socket
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from agent_interface.core.canonical import canonical_json
from agent_interface.core.errors import ContractError
from agent_interface.core.model import thaw
from agent_interface.environment.exact_process import (
    AgentExactProcessEnvironmentQuery,
    CreateAgentExactProcessEnvironmentInput,
    check_exact_process_egress_supported,
    exact_process_create_input_digest,
)
from agent_interface.evaluator.container.container_process import ContainerProcess, remove_container
from agent_interface.evaluator.container.environment_egress import EgressLoop, EnvironmentEgress
from agent_interface.evaluator.container.environment_host import (
    make_environment,
    network_namespace_pin,
    tear_down_environment,
    user_namespace_pin,
)
from agent_interface.evaluator.container.host_probe import (
    OciHostSupport,
    probe_oci_host,
    probe_strict_egress,
)
from agent_interface.evaluator.container.network_namespace import (
    listen_in_namespace,
)
from agent_interface.evaluator.container.oci_environment import (
    OciExactProcessEnvironment,
    parse_model,
)
from agent_interface.evaluator.container.runtime_config import (
    ReadOnlyBind,
    container_cgroup,
)
from agent_interface.evaluator.container.static_programs import INIT_CODE, static_program
from agent_interface.evaluator.egress.decisions import EgressLog
from agent_interface.evaluator.egress.proxy import EgressResolver
from agent_interface.evaluator.egress.settings import EgressSettings
from agent_interface.evaluator.images.image_root import ImageRoot, ImageRootSource
from agent_interface.evaluator.images.layer_unpack import IdMapping
from agent_interface.evaluator.images.oci_store import OciImageStore
from agent_interface.evaluator.process.confined_files import environment_path_components
from agent_interface.evaluator.process.process_store import EnvironmentRecord, ExactProcessStore

if TYPE_CHECKING:
    from agent_interface.environment.capabilities import AgentEnvironmentCapabilities

__all__ = ["OciExactProcessProvider", "OciExactProcesses"]

_MIB: Final = 1 << 20
DEFAULT_MAX_OUTPUT_BYTES: Final = 16 * _MIB
DEFAULT_MAX_PIDS: Final = 256
DEFAULT_ID_BASE: Final = 100_000
DEFAULT_EGRESS_PORT: Final = 800
"""Where a strict environment's proxy listens inside its namespace: below 1024, so no
program in a container (no ``CAP_NET_BIND_SERVICE`` in the namespace's owner) can bind
it first, even after the provider's own socket closed."""
DEFAULT_EGRESS_MAX_FILE_RECORDS: Final = 100_000
_ROOT_USERS: Final = frozenset({"", "0", "root", "0:0", "root:root", "root:0", "0:root"})
"""The image config ``User`` values that name the container's root (the only user run)."""
_IMAGE_RE: Final = re.compile(r"^(?P<name>[^@\s]+)@(?P<digest>sha256:[0-9a-f]{64})$")


class OciExactProcesses:
    """``provider.exact_process``: create, get and list environments (durably, by key)."""

    def __init__(self, provider: OciExactProcessProvider) -> None:
        self._provider = provider
        self.store = provider._store
        self.name = provider.name
        self.support = provider.support
        self.init_path = provider._root / "init"
        self.runc_root = provider._root / "runc"
        self.max_output_bytes = provider._max_output_bytes
        self.max_pids = provider._max_pids
        self.binds = provider._binds
        self.egress_port = provider._egress_port
        self.strict_egress = provider.strict_egress_reasons == ()
        self._egress: dict[str, EnvironmentEgress] = {}
        self._egress_guard = threading.Lock()

    @staticmethod
    def now_ms() -> int:
        return int(time.time() * 1000)

    def environment_directory(self, environment_id: str) -> Path:
        return self._provider._root / "environments" / environment_id

    def _image(self, request: CreateAgentExactProcessEnvironmentInput) -> ImageRoot:
        match = _IMAGE_RE.fullmatch(request.image)
        images = self._provider._images
        if match is None:
            found = None
        elif isinstance(images, OciImageStore):  # unpacked with this provider's user namespace
            id_base = self.support.id_base
            found = images.image_root(match["digest"], None if id_base is None else IdMapping(id_base, id_base))
        else:
            found = images.image_root(match["digest"])
        if found is None or found.reference != request.image:
            raise ContractError.single(
                "/image", "exact_process_image_unavailable", "this provider's image store has no such image"
            )
        if found.config.user.strip() not in _ROOT_USERS:
            raise ContractError.single(
                "/image", "exact_process_image_user_unsupported",
                "the image's config names a non-root User; this provider runs every process as the "
                "container's root (inside its user namespace) and does not switch users",
            )
        return found

    @property
    def egress_modes(self) -> tuple[str, ...]:
        """The egress modes this provider enforces (``exactProcess.egress``)."""
        return ("blocked", "strict") if self.strict_egress else ("blocked",)

    def network_namespace(self, environment_id: str) -> Path:
        """Where a strict environment's network namespace is pinned."""
        return network_namespace_pin(self.environment_directory(environment_id))

    def user_namespace(self, environment_id: str) -> Path | None:
        """The environment's own user namespace (owned by an unprivileged uid), if it has one."""
        path = user_namespace_pin(self.environment_directory(environment_id))
        return path if self.support.id_base is not None and os.path.ismount(path) else None

    def egress_log_path(self, environment_id: str) -> Path:
        """The JSONL decision log of a strict environment (outside every container)."""
        return self._provider._root / "egress" / f"{environment_id}.jsonl"

    def egress_for(self, environment_id: str) -> EnvironmentEgress | None:
        """The running proxy of a strict environment (``None`` for ``blocked``)."""
        return self._egress.get(environment_id)

    def egress_settings(self, allow_domains: tuple[str, ...]) -> EgressSettings:
        """What a strict environment allowing ``allow_domains`` enforces."""
        return EgressSettings(allow_domains=allow_domains, **self._provider._egress_settings)

    async def ensure_egress(self, record: EnvironmentRecord) -> None:
        """Start the proxy of a strict environment whose proxy this object does not run
        (nothing when another provider object, here or in another OS process, holds the
        environment's proxy port: that one serves it)."""
        egress = json.loads(record.input_json)["egress"]
        if egress["mode"] != "strict" or record.id in self._egress:
            return
        provider = self._provider
        settings = self.egress_settings(tuple(egress["allowDomains"]))
        proxy = EnvironmentEgress(
            settings, self.egress_log_path(record.id), max_file_records=provider._egress_max_file_records,
            max_records=provider._egress_max_records, resolver=provider._egress_resolver,
        )

        def reserve() -> socket.socket | None:
            with self._egress_guard:
                if record.id in self._egress:
                    return None
                try:
                    sock = listen_in_namespace(self.network_namespace(record.id), self.egress_port)
                except OSError as error:
                    if error.errno == errno.EADDRINUSE:  # another provider object serves it
                        return None
                    raise
                self._egress[record.id] = proxy
                return sock

        sock = await asyncio.to_thread(reserve)
        if sock is None:
            return
        try:
            await proxy.start(provider.egress_loop(), sock)
        except BaseException:
            self._egress.pop(record.id, None)
            raise

    async def close_egress(self, environment_id: str) -> None:
        """Stop the proxy of ``environment_id`` (its log file stays)."""
        proxy = self._egress.pop(environment_id, None)
        if proxy is not None:
            await proxy.close()

    def _check(self, request: CreateAgentExactProcessEnvironmentInput) -> ImageRoot:
        check_exact_process_egress_supported(self.egress_modes, request.egress)
        if request.provider_options:
            raise ContractError.single(
                "/providerOptions", "exact_process_provider_options_unsupported", "this provider takes no provider options"
            )
        return self._image(request)

    async def create(
        self, input: CreateAgentExactProcessEnvironmentInput | Mapping[str, Any]
    ) -> OciExactProcessEnvironment:
        """A fresh environment; the same key and input return the same one, durably."""
        request = parse_model(CreateAgentExactProcessEnvironmentInput, input)
        image = self._check(request)
        now = self.now_ms()
        wire = request.to_wire()
        candidate = EnvironmentRecord(
            id="oxp-" + uuid.uuid4().hex,
            idempotency_key=request.idempotency_key,
            input_digest=exact_process_create_input_digest(request),
            input_json=json.dumps(wire, sort_keys=True),
            metadata_json=canonical_json(wire["metadata"]),
            created_ms=now,
            expires_ms=now + request.max_lifetime_ms,
            state="claimed",
        )
        strict = request.egress.mode == "strict"
        record = await asyncio.to_thread(self._claim_and_make, candidate, image, request.resources.disk_mb, strict)
        if record.state == "claimed":  # another creator of this key is mounting it
            await self._wait_ready(record.id)
            refreshed = await asyncio.to_thread(self.store.environment, record.id)
            record = refreshed if refreshed is not None else record
        if record.state == "claimed":  # a creator that died before it was ready
            await asyncio.to_thread(self._make_ready, record.id, image, request.resources.disk_mb, strict)
        try:
            await self.ensure_egress(record)
        except OSError:
            raise ContractError.single(
                "/egress", "exact_process_egress_unavailable", "the environment's egress proxy could not be started"
            ) from None
        return OciExactProcessEnvironment(self, record)

    def _claim_and_make(
        self, candidate: EnvironmentRecord, image: ImageRoot, disk_mb: int, strict: bool
    ) -> EnvironmentRecord:
        """Claim the key; when the claim is this call's, make the environment and mark it
        ready (one worker-thread hand-off for the whole of a fresh create)."""
        record = self.store.claim_environment(candidate)
        if record.id != candidate.id:
            return record
        self._make_ready(record.id, image, disk_mb, strict)
        return dataclasses.replace(record, state="ready")

    def _make_ready(self, environment_id: str, image: ImageRoot, disk_mb: int, strict: bool) -> None:
        self._make(environment_id, image, disk_mb, strict)
        self.store.mark_ready(environment_id)

    def _make(self, environment_id: str, image: ImageRoot, disk_mb: int, strict: bool) -> None:
        make_environment(
            self.environment_directory(environment_id), image, disk_mb=disk_mb, strict=strict,
            id_base=self.support.id_base, overlay=self.support.overlay, init=self.init_path,
        )

    async def _wait_ready(self, environment_id: str) -> None:
        """A same-key create that lost the race waits for the winner's mount (bounded)."""
        for _ in range(3000):
            record = await asyncio.to_thread(self.store.environment, environment_id)
            if record is None or record.state != "claimed":
                return
            await asyncio.sleep(0.01)

    async def live_record(self, environment_id: str) -> EnvironmentRecord | None:
        """The environment's record while it is live (``None`` once destroyed or expired)."""
        return await self.checked_record(await asyncio.to_thread(self.store.environment, environment_id))

    async def checked_record(self, record: EnvironmentRecord | None) -> EnvironmentRecord | None:
        """``record`` (just read) if the environment is live: an expired one is destroyed
        now, and a strict one whose proxy this object does not run gets it started."""
        if record is None or record.state != "ready":
            return None
        environment_id = record.id
        if record.expires_ms <= self.now_ms():
            await self.destroy(environment_id)
            return None
        if environment_id not in self._egress:
            # a proxy that cannot start leaves the environment with no way out (fail closed)
            with contextlib.suppress(OSError, ContractError):
                await self.ensure_egress(record)
        return record

    async def get(self, id: str) -> OciExactProcessEnvironment | None:
        """The environment ``id``; ``None`` once destroyed or past its lifetime."""
        record = await self.live_record(id)
        return None if record is None else OciExactProcessEnvironment(self, record)

    async def list(
        self, query: AgentExactProcessEnvironmentQuery | Mapping[str, Any] | None = None
    ) -> list[OciExactProcessEnvironment]:
        """Every live environment whose metadata holds every key/value of ``query.metadata``."""
        wanted: dict[str, str] = {}
        if query is not None:
            parsed = parse_model(AgentExactProcessEnvironmentQuery, query)
            wanted = {key: canonical_json(value) for key, value in thaw(parsed.metadata or {}).items()}
        found = []
        for record in await asyncio.to_thread(self.store.environments):
            metadata = json.loads(record.metadata_json)
            if all(key in metadata and canonical_json(metadata[key]) == value for key, value in wanted.items()):
                live = await self.live_record(record.id)
                if live is not None:
                    found.append(OciExactProcessEnvironment(self, live))
        return found

    async def destroy(self, environment_id: str) -> None:
        """End every container of the environment, unmount and delete its files."""
        for process in await asyncio.to_thread(self._mark_destroyed, environment_id):
            await process.kill()
        await self.close_egress(environment_id)
        await asyncio.to_thread(self._tear_down, environment_id)

    def _mark_destroyed(self, environment_id: str) -> builtins.list[ContainerProcess]:
        """Mark the environment destroyed; its processes that may still run."""
        self.store.mark_destroyed(environment_id)
        directory = self.environment_directory(environment_id)
        running = []
        for state in ("started", "starting"):
            for pid in self.store.process_ids(environment_id, state):
                control = directory / "processes" / str(pid)
                if (control / "supervisor.json").exists():
                    running.append(ContainerProcess(pid, control))
        return running

    def _tear_down(self, environment_id: str) -> None:
        """Remove a destroyed environment's containers, namespaces, mounts and files."""
        self.remove_containers(lambda container: container.startswith(f"{environment_id}-"))
        tear_down_environment(self.environment_directory(environment_id))

    def container_ids(self) -> builtins.list[str]:
        """The ids of every container ``runc`` keeps state for under this provider's root
        (``runc`` keeps one directory per container there; no ``runc list`` per call)."""
        try:
            return sorted(entry.name for entry in os.scandir(self.runc_root) if entry.is_dir())
        except FileNotFoundError:
            return []

    def remove_containers(self, chosen: Callable[[str], bool]) -> None:
        assert self.support.runc is not None
        for container in self.container_ids():
            if chosen(container):
                remove_container(self.support.runc, str(self.runc_root), container, container_cgroup(container))

    async def recover(self) -> None:
        """Settle what a provider killed mid-run left: lost processes, stray containers,
        destroyed environments whose files remain, environments whose in-memory files
        did not survive a restart of the host (destroyed)."""
        live = {record.id for record in await asyncio.to_thread(self.store.environments)}
        for environment_id in live:
            record = await self.live_record(environment_id)  # destroys an expired one
            if record is None:
                continue
            directory = self.environment_directory(environment_id)
            if not (directory / "root" / "rootfs").is_mount():  # its files died with the host
                await self.destroy(environment_id)
                continue
            for pid in await asyncio.to_thread(self.store.process_ids, environment_id):
                await asyncio.to_thread(ContainerProcess(pid, directory / "processes" / str(pid)).termination_record)
        live = {record.id for record in await asyncio.to_thread(self.store.environments)}
        await asyncio.to_thread(self.remove_containers, lambda container: container.rpartition("-")[0] not in live)
        environments = self._provider._root / "environments"
        for directory in environments.iterdir() if environments.is_dir() else ():
            if directory.name not in live:
                await asyncio.to_thread(self._tear_down, directory.name)


class OciExactProcessProvider:
    """Exact processes in OCI containers on ``runc`` (see the module docstring).

    ``images`` resolves a create input's ``name@sha256:<manifest digest>``;
    ``support`` is what :func:`.probe_oci_host` observed (use :meth:`open`);
    ``read_only_binds`` maps container paths to host files or directories bound
    read-only into every container (a task file, a model endpoint's socket directory; its
    directories must be traversable by the containers' user, ``id_base``, as ``root`` is);
    ``max_pids`` bounds the processes of one container; ``max_output_bytes`` the
    capture kept per stream.

    Strict egress: ``egress_port`` is where each environment's proxy listens inside its
    namespace; ``egress_settings`` are the other
    :class:`~agent_interface.evaluator.egress.settings.EgressSettings` fields (ports,
    bounds, timeouts; ``extra_public_networks`` for tests only); ``egress_resolver``
    replaces the system resolver (tests); ``egress_network_namespace`` is a namespace
    file the proxies' upstream connections leave from (default: the provider's own);
    ``egress_max_records`` and ``egress_max_file_records`` bound each environment's log
    in memory and on disk; ``strict_egress_reasons`` is what
    :func:`.probe_strict_egress` found (use :meth:`open`; ``None`` means not probed,
    so ``strict`` is refused).
    """

    name: Final[str] = "oci-exact-process"

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        images: ImageRootSource,
        support: OciHostSupport,
        max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
        max_pids: int = DEFAULT_MAX_PIDS,
        read_only_binds: Mapping[str, str | os.PathLike[str]] | None = None,
        strict_egress_reasons: tuple[str, ...] | None = None,
        egress_port: int = DEFAULT_EGRESS_PORT,
        egress_settings: Mapping[str, Any] | None = None,
        egress_resolver: EgressResolver | None = None,
        egress_network_namespace: str | os.PathLike[str] | None = None,
        egress_max_records: int = 10_000,
        egress_max_file_records: int = DEFAULT_EGRESS_MAX_FILE_RECORDS,
    ) -> None:
        if isinstance(egress_port, bool) or not isinstance(egress_port, int) or not 0 < egress_port < 65536:
            raise ContractError.single("/egressPort", "exact_process_egress_port", "the proxy port must be 1-65535")
        self._egress_settings = dict(egress_settings or {})
        try:  # refuses bad fields now, not at the first strict create
            EgressSettings(allow_domains=("settings.check",), **self._egress_settings)
        except TypeError:
            raise ContractError.single(
                "/egressSettings", "exact_process_egress_settings", "an egress setting is not an EgressSettings field"
            ) from None
        EgressLog(max_records=egress_max_records, max_file_records=egress_max_file_records)
        self._egress_port = egress_port
        self._egress_resolver = egress_resolver
        self._egress_netns = None if egress_network_namespace is None else os.fspath(egress_network_namespace)
        self._egress_max_records = egress_max_records
        self._egress_max_file_records = egress_max_file_records
        self._egress_loop: EgressLoop | None = None
        self._loop_guard = threading.Lock()
        self.strict_egress_reasons: Final[tuple[str, ...]] = (
            ("strict egress was not probed (use OciExactProcessProvider.open)",)
            if strict_egress_reasons is None else strict_egress_reasons
        )
        """Why ``strict`` egress is not enforced (empty when it is)."""
        self._root = Path(root).resolve()
        _prepare_root(self._root)
        self._binds = tuple(
            ReadOnlyBind(str(Path(host).resolve(strict=True)), _container_path(path))
            for path, host in (read_only_binds or {}).items()
        )
        self._store = ExactProcessStore(self._root / "state.sqlite3")
        self._images = images
        self.support: Final = support
        self._max_output_bytes = max_output_bytes
        self._max_pids = max_pids
        self._exact = OciExactProcesses(self) if support.enforced else None

    @classmethod
    async def open(
        cls,
        root: str | os.PathLike[str],
        *,
        images: ImageRootSource,
        runc: str | None = None,
        id_base: int = DEFAULT_ID_BASE,
        max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
        max_pids: int = DEFAULT_MAX_PIDS,
        read_only_binds: Mapping[str, str | os.PathLike[str]] | None = None,
        egress_port: int = DEFAULT_EGRESS_PORT,
        **egress: Any,
    ) -> OciExactProcessProvider:
        """Probe this host (:func:`.probe_oci_host`, :func:`.probe_strict_egress`), build
        the provider, recover ``root``; ``egress`` holds the other ``egress_*`` options."""
        path = Path(root).resolve()
        await asyncio.to_thread(_prepare_root, path)
        support = await probe_oci_host(path, path / "init", runc, id_base)
        strict = await probe_strict_egress(path, path / "init", support, egress_port)
        provider = cls(
            path, images=images, support=support, max_output_bytes=max_output_bytes,
            max_pids=max_pids, read_only_binds=read_only_binds, strict_egress_reasons=strict,
            egress_port=egress_port, **egress,
        )
        if provider._exact is not None:
            await provider._exact.recover()
        return provider

    def egress_loop(self) -> EgressLoop:
        """The thread hosting this provider's proxies (started on first use)."""
        with self._loop_guard:
            if self._egress_loop is None:
                self._egress_loop = EgressLoop(self._egress_netns)
            return self._egress_loop

    def close(self) -> None:
        """Stop the proxies and close the state database (running processes stay
        supervised; a strict environment's programs have no way out until a provider
        is opened over ``root`` again)."""
        loop, self._egress_loop = self._egress_loop, None
        if loop is not None:
            if self._exact is not None:
                for environment_id in list(self._exact._egress):
                    proxy = self._exact._egress.pop(environment_id)
                    with contextlib.suppress(Exception):
                        loop.call(proxy.proxy.close())
            loop.close()
        self._store.close()

    @property
    def reasons(self) -> tuple[str, ...]:
        """What this host could not be seen to enforce (empty when ``exactProcess`` holds)."""
        return self.support.reasons

    @property
    def exact_process(self) -> OciExactProcesses | None:
        """The exact-process provider, or ``None`` when not every property holds here."""
        return self._exact

    async def capabilities(self) -> AgentEnvironmentCapabilities:
        """Everything off but ``exactProcess`` (egress ``blocked``, and ``strict`` when
        probed), and that only when enforced."""
        from agent_interface.provider.capability_builder import exact_process_only_capabilities

        return exact_process_only_capabilities(None if self._exact is None else self._exact.egress_modes)

    def __repr__(self) -> str:
        return f"<OciExactProcessProvider {str(self._root)!r}>"


def _container_path(path: str) -> str:
    components = environment_path_components(path)
    if not components or components[0] in ("proc", "dev", "sys"):
        raise ContractError.single("/readOnlyBinds", "exact_process_bind_path", "a bind cannot cover / or a kernel file system")
    return "/" + "/".join(components)


def _prepare_root(root: Path) -> None:
    """Make ``root`` (traversable by the containers' user, as ``runc`` needs) and its init."""
    root.mkdir(mode=0o711, parents=True, exist_ok=True)
    os.chmod(root, 0o711)
    for name in ("environments",):
        (root / name).mkdir(mode=0o711, exist_ok=True)
    (root / "runc").mkdir(mode=0o700, exist_ok=True)
    (root / "egress").mkdir(mode=0o700, exist_ok=True)
    init = root / "init"
    program = static_program(INIT_CODE)
    if not init.exists() or init.read_bytes() != program:
        temporary = root / f".init.{uuid.uuid4().hex}"
        temporary.write_bytes(program)
        os.chmod(temporary, 0o755)
        os.replace(temporary, init)
