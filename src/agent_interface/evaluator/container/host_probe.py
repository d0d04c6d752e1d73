"""What this host enforces for a container, observed by running one (at provider open).

:func:`probe_oci_host` runs the probe program (:data:`.static_programs.PROBE_CODE`) in a
container made exactly as an exact-process container is made (same configuration,
user namespace, overlay root, cgroup limits, seccomp profile) and looks at it from the
host while it runs: its user id map, capability sets and ``no_new_privs`` flag, its
seccomp mode and that ``unshare`` was refused, its network namespace (another one, with
no interface but ``lo``) and its cgroup's memory, swap, CPU and pids limits. Every
property not observed is a reason in :attr:`OciHostSupport.reasons`, and the provider
then omits ``exactProcess``. :func:`probe_strict_egress` runs it again joined to a
network namespace made as a ``strict`` environment's is, with a proxy socket listening
inside; its reasons make the provider omit ``strict`` from ``exactProcess.egress``.

A probe that observed every property is remembered by this OS process for
:data:`PROBE_REUSE_SECONDS`, keyed by the ``runc`` binary (its path and its file's
identity: device, inode, size, modification time), the id base and, for strict egress,
the proxy port: a provider opened again in that time (an experiment opens one per cell)
reuses the observation instead of running two probe containers. A probe that found a
reason is never remembered (the next open probes again). Every container is still made
with the full configuration: ``runc`` refuses one whose user namespace, seccomp
profile or cgroup limits the host stopped supporting.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from agent_interface.core.errors import ContractError
from agent_interface.evaluator.container.container_process import start_container
from agent_interface.evaluator.container.environment_root import (
    mount_environment_root,
    overlay_available,
    unmount_environment_root,
)
from agent_interface.evaluator.container.network_namespace import (
    create_network_namespace,
    listen_in_namespace,
    namespace_identity,
    reachable_in_namespace,
    remove_network_namespace,
)
from agent_interface.evaluator.container.runtime_config import (
    ContainerLimits,
    container_cgroup,
    runtime_config,
)
from agent_interface.evaluator.container.static_programs import (
    PROBE_CODE,
    static_program,
    static_programs_supported,
)

__all__ = ["PROBE_REUSE_SECONDS", "OciHostSupport", "probe_oci_host", "probe_strict_egress"]

PROBE_REUSE_SECONDS: Final = 300.0
"""How long this OS process reuses a probe that observed every property."""
_OBSERVED: dict[tuple[object, ...], tuple[float, object]] = {}

_PROBE_MEMORY: Final = 64 << 20
_PROBE_PIDS: Final = 17
_PROBE_CPU: Final = 0.5
_CGROUP_V1: Final = Path("/sys/fs/cgroup")
_WAIT_SECONDS: Final = 10.0
_PROBE_TIMEOUT_MS: Final = 60_000


@dataclass(frozen=True, slots=True)
class OciHostSupport:
    """What the probe found; ``enforced`` only when ``reasons`` is empty."""

    runc: str | None
    id_base: int | None
    overlay: bool
    swap_limit: bool
    reasons: tuple[str, ...] = field(default=())

    @property
    def enforced(self) -> bool:
        return not self.reasons and self.runc is not None


def _status_fields(pid: int) -> dict[str, str]:
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        fields[key] = value.strip()
    return fields


def _read(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError:
        return ""


def _cgroup_limits(cgroup: str, swap_limit: bool) -> list[str]:
    """Reasons the cgroup limits were not seen applied (cgroup v1 or v2)."""
    reasons = []
    if (_CGROUP_V1 / "memory").is_dir():
        checks = [
            (_CGROUP_V1 / "memory" / cgroup.lstrip("/") / "memory.limit_in_bytes", str(_PROBE_MEMORY), "memory"),
            (_CGROUP_V1 / "pids" / cgroup.lstrip("/") / "pids.max", str(_PROBE_PIDS), "pids"),
            (_CGROUP_V1 / "cpu" / cgroup.lstrip("/") / "cpu.cfs_quota_us", str(int(_PROBE_CPU * 100_000)), "cpu"),
        ]
        if swap_limit:
            checks.append(
                (_CGROUP_V1 / "memory" / cgroup.lstrip("/") / "memory.memsw.limit_in_bytes", str(_PROBE_MEMORY), "swap")
            )
    else:
        base = _CGROUP_V1 / cgroup.lstrip("/")
        checks = [
            (base / "memory.max", str(_PROBE_MEMORY), "memory"),
            (base / "pids.max", str(_PROBE_PIDS), "pids"),
            (base / "cpu.max", f"{int(_PROBE_CPU * 100_000)} 100000", "cpu"),
        ]
        if swap_limit:
            checks.append((base / "memory.swap.max", "0", "swap"))
    for path, expected, name in checks:
        if _read(path) != expected:
            reasons.append(f"the cgroup {name} limit was not applied to a container")
    return reasons


def _swap_limit_available() -> bool:
    if (_CGROUP_V1 / "memory").is_dir():
        return (_CGROUP_V1 / "memory" / "memory.memsw.limit_in_bytes").exists()
    return any(_CGROUP_V1.glob("*/memory.swap.max"))


def _probe_child(init_pid: int) -> int | None:
    deadline = time.monotonic() + _WAIT_SECONDS
    while time.monotonic() < deadline:
        children = _read(Path(f"/proc/{init_pid}/task/{init_pid}/children")).split()
        if children:
            child = int(children[0])
            state = _read(Path(f"/proc/{child}/stat")).rpartition(")")[2].split()[:1]
            if state == ["S"] and _read(Path(f"/proc/{child}/comm")) == "probe":
                return child
        elif not Path(f"/proc/{init_pid}").exists():
            return None
        time.sleep(0.005)
    return None


def _inspect(pid: int, id_base: int) -> list[str]:
    reasons = []
    status = _status_fields(pid)
    if any(status.get(key) != "0000000000000000" for key in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")):
        reasons.append("a container process kept capabilities")
    if status.get("NoNewPrivs") != "1":
        reasons.append("no_new_privs was not set")
    if status.get("Seccomp") != "2":
        reasons.append("the seccomp profile was not applied")
    if _read(Path(f"/proc/{pid}/uid_map")).split() != ["0", str(id_base), "65536"]:
        reasons.append("the user namespace mapping was not applied")
    if os.readlink(f"/proc/{pid}/ns/net") == os.readlink("/proc/self/ns/net"):
        reasons.append("the container shares the host's network namespace")
    interfaces = [
        line.split(":", 1)[0].strip() for line in _read(Path(f"/proc/{pid}/net/dev")).splitlines()[2:]
    ]
    if interfaces != ["lo"]:
        reasons.append("the container's network namespace has interfaces besides loopback")
    return reasons


def _prepare(root: Path, work: Path, probe_id: str, id_base: int) -> tuple[Path, bool, bool]:
    """The probe's image and environment root, mounted; (rootfs, overlay, swap limit)."""
    overlay = overlay_available(root / f"{probe_id}-overlay")
    image = work / "image"
    image.mkdir(mode=0o755, parents=True)
    os.chmod(work, 0o711)
    (image / "probe").write_bytes(static_program(PROBE_CODE))
    os.chmod(image / "probe", 0o755)
    for path in (image, image / "probe"):
        os.chown(path, id_base, id_base)
    environment = work / "environment"
    environment.mkdir(mode=0o711)
    rootfs = mount_environment_root(environment, image, disk_mb=1, id_base=id_base, overlay=overlay)
    return rootfs, overlay, _swap_limit_available()


def _observe(control: Path, cgroup: str, swap_limit: bool, id_base: int, netns: Path | None) -> list[str]:
    reasons = _cgroup_limits(cgroup, swap_limit)
    child = _probe_child(int((control / "container.pid").read_text()))
    if child is None:
        reasons.append("the probe did not stay refused by seccomp (unshare was allowed or it failed)")
    else:
        reasons.extend(_inspect(child, id_base))
        if netns is not None and namespace_identity(f"/proc/{child}/ns/net") != namespace_identity(netns):
            reasons.append("the container did not join the environment's network namespace")
    return reasons


def _tear_down(work: Path) -> None:
    unmount_environment_root(work / "environment")
    shutil.rmtree(work, ignore_errors=True)


def _find_runc(runc: str | None) -> str | None:
    return shutil.which(runc or "runc") if runc is None or "/" not in runc else runc


async def probe_oci_host(root: Path, init: Path, runc: str | None, id_base: int) -> OciHostSupport:
    """Run the probe container under ``root`` (``init`` is the provider's init program),
    through the same supervisor as every exact process (which reaps it)."""
    runc_path = _find_runc(runc)
    if runc_path is None or not os.access(runc_path, os.X_OK):
        return OciHostSupport(None, None, False, False, ("runc is not installed",))
    if not static_programs_supported():
        return OciHostSupport(runc_path, None, False, False, ("the container init is built for x86-64 Linux only",))
    if os.geteuid() != 0:
        return OciHostSupport(runc_path, None, False, False, ("the provider must run as root to mount layers",))
    key = ("host", *_binary_identity(runc_path), id_base)
    remembered = _remembered(key)
    if isinstance(remembered, OciHostSupport):
        return remembered
    overlay, swap_limit, reasons = await _probe_container(root, init, runc_path, id_base, None)
    support = OciHostSupport(runc_path, id_base if not reasons else None, overlay, swap_limit, tuple(reasons))
    if support.enforced:
        _OBSERVED[key] = (time.monotonic(), support)
    return support


def _binary_identity(path: str) -> tuple[object, ...]:
    """``path`` and its file's identity (a replaced binary is a new key)."""
    try:
        info = os.stat(path)
    except OSError:
        return (path, None)
    return (path, info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)


def _remembered(key: tuple[object, ...]) -> object | None:
    found = _OBSERVED.get(key)
    if found is None or time.monotonic() - found[0] > PROBE_REUSE_SECONDS:
        return None
    return found[1]


async def probe_strict_egress(root: Path, init: Path, support: OciHostSupport, port: int) -> tuple[str, ...]:
    """Why ``strict`` egress cannot be enforced here (empty: it can).

    Makes a network namespace as a strict environment's is made
    (:mod:`.network_namespace`), listens on ``127.0.0.1:port`` in it and connects there,
    then runs the probe container joined to it and observes, besides every property of
    :func:`probe_oci_host`, that the container is in exactly that namespace and sees no
    interface but ``lo``.
    """
    if not support.enforced or support.runc is None or support.id_base is None:
        return ("exactProcess is not enforced on this host",)
    key = ("strict", *_binary_identity(support.runc), support.id_base, port)
    if _remembered(key) == ():
        return ()
    reasons = await _probe_strict(root, init, support, port)
    if not reasons:
        _OBSERVED[key] = (time.monotonic(), ())
    return reasons


async def _probe_strict(root: Path, init: Path, support: OciHostSupport, port: int) -> tuple[str, ...]:
    assert support.runc is not None and support.id_base is not None
    work = root / ("probe-netns-" + uuid.uuid4().hex[:12])
    netns = work / "netns"
    listener = None
    try:
        await asyncio.to_thread(work.mkdir, 0o700)
        await asyncio.to_thread(create_network_namespace, netns)
        listener = await asyncio.to_thread(listen_in_namespace, netns, port)
        if not await asyncio.to_thread(reachable_in_namespace, netns, port):
            return ("the proxy's listening socket was not reachable inside the namespace",)
        _, _, reasons = await _probe_container(root, init, support.runc, support.id_base, netns)
        return tuple(reasons)
    except OSError as error:
        return (f"a network namespace for the proxy could not be made ({error.strerror or error})",)
    finally:
        if listener is not None:
            listener.close()
        await asyncio.to_thread(remove_network_namespace, netns)
        await asyncio.to_thread(shutil.rmtree, work, True)


async def _probe_container(
    root: Path, init: Path, runc_path: str, id_base: int, netns: Path | None
) -> tuple[bool, bool, list[str]]:
    """Run and observe one probe container; (overlay, swap limit, reasons)."""
    probe_id = "probe-" + uuid.uuid4().hex[:12]
    work = root / probe_id
    cgroup = container_cgroup(probe_id)
    overlay = swap_limit = False
    reasons: list[str] = []
    try:
        rootfs, overlay, swap_limit = await asyncio.to_thread(_prepare, root, work, probe_id, id_base)
        config = runtime_config(
            rootfs=str(rootfs), init=str(init), argv=["/probe"], env={}, cwd="/", hostname="probe",
            limits=ContainerLimits(_PROBE_MEMORY, _PROBE_CPU, _PROBE_PIDS, swap_limit),
            cgroup=cgroup, id_base=id_base, network_namespace=None if netns is None else str(netns),
        )
        spec = {
            "runc": runc_path, "runcRoot": str(root / "runc"), "id": probe_id, "cgroup": cgroup,
            "timeoutMs": _PROBE_TIMEOUT_MS, "deadlineEpochMs": None, "outputLimit": 4096,
        }
        try:
            handle = await start_container(0, work / "control", spec, config, stdin=None)
        except ContractError:
            return overlay, swap_limit, ["runc could not run a container here"]
        try:
            reasons = await asyncio.to_thread(_observe, work / "control", cgroup, swap_limit, id_base, netns)
        finally:
            await handle.kill()
    except OSError as error:
        reasons.append(f"the probe container could not be set up ({error.strerror})")
    finally:
        await asyncio.to_thread(_tear_down, work)
    return overlay, swap_limit, reasons
