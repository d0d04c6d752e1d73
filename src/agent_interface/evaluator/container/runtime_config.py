"""The OCI runtime configuration (``config.json``) of one exact-process container.

What every container gets (see ``docs/security.md``):

* namespaces: PID, network (empty: no interface but loopback; for ``strict`` egress the
  environment's own loopback-only namespace, joined by path, where the proxy listens),
  IPC, UTS, mount, cgroup and, when the host allows it, user (container root is host
  ``id_base``, 65536 ids);
* the root file system of its environment (see :mod:`.environment_root`), the image
  never written; ``/proc`` of its own PID namespace, a small ``/dev`` with the default
  devices only, ``/dev/shm`` and ``/dev/mqueue`` bounded, ``/sys`` read-only (an empty
  read-only tmpfs when joining a strict environment's namespace: sysfs mounts only for
  the namespace's owner, the host), and runc's default masked and read-only paths;
* no capability in any set, ``noNewPrivileges``, the seccomp profile of
  :mod:`.seccomp_profile`, core dumps off;
* cgroup limits from the create input: ``memoryMb`` (swap equal to memory: no swap on
  top), ``cpu`` as a CFS quota (a fractional CPU is a fraction of a period), a pids bound;
  no device but the default ones;
* its PID 1 is the provider's init (:mod:`.static_programs`), bound read-only at
  :data:`INIT_PATH`, which runs the program with the launch's argv, environment and
  working directory, under the launch's user (root of the container).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from agent_interface.evaluator.container.seccomp_profile import seccomp_profile

__all__ = ["INHERITED_RLIMITS", "INIT_PATH", "ContainerLimits", "ReadOnlyBind", "container_cgroup", "memory_bytes", "runtime_config"]

INIT_PATH: Final = "/dev/.exact-process-init"
"""Where the init is bound in every container (on ``/dev``'s tmpfs, not in the files)."""

ID_RANGE: Final = 65536
INHERITED_RLIMITS: Final = (("RLIMIT_CORE", 0, 0), ("RLIMIT_NOFILE", 1024, 1024))
"""A container's rlimits ``(name, soft, hard)``: in its configuration, or set on ``runc``."""
_CFS_PERIOD_US: Final = 100_000
_MIB: Final = 1 << 20

_MASKED: Final = (
    "/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
    "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/sys/firmware",
    "/proc/scsi", "/sys/devices/virtual/powercap",
)
_READ_ONLY: Final = (
    "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger",
)


@dataclass(frozen=True, slots=True)
class ContainerLimits:
    """The cgroup limits of one container."""

    memory_bytes: int
    cpu: float
    pids: int
    swap_limit: bool = True


@dataclass(frozen=True, slots=True)
class ReadOnlyBind:
    """A host file or directory bound read-only at ``destination`` in every container."""

    source: str
    destination: str


def runtime_config(
    *,
    rootfs: str,
    init: str,
    argv: Sequence[str],
    env: Mapping[str, str],
    cwd: str,
    hostname: str,
    limits: ContainerLimits,
    cgroup: str,
    id_base: int | None,
    binds: Sequence[ReadOnlyBind] = (),
    network_namespace: str | None = None,
    user_namespace: str | None = None,
) -> dict[str, Any]:
    """The ``config.json`` object; ``id_base`` ``None`` runs without a user namespace;
    ``network_namespace`` is the path of an existing namespace to join (a strict-egress
    environment's, see :mod:`.network_namespace`) instead of a new empty one;
    ``user_namespace`` the path of the environment's own user namespace (owned by an
    unprivileged uid, mapped as ``id_base`` says, see :mod:`.user_namespace`): then the
    configuration carries no ``rlimits`` (``runc`` cannot set them on a process there)
    and the caller sets :data:`INHERITED_RLIMITS` on ``runc`` itself."""
    namespaces: list[dict[str, str]] = [
        {"type": kind} for kind in ("pid", "network", "ipc", "uts", "mount", "cgroup")
    ]
    if network_namespace is not None:
        namespaces[1]["path"] = network_namespace
    linux: dict[str, Any] = {
        "namespaces": namespaces,
        "cgroupsPath": cgroup,
        "resources": _resources(limits),
        "maskedPaths": list(_MASKED),
        "readonlyPaths": list(_READ_ONLY),
        "seccomp": seccomp_profile(),
    }
    if id_base is not None:
        namespaces.append({"type": "user"} if user_namespace is None else {"type": "user", "path": user_namespace})
        linux["uidMappings"] = [{"containerID": 0, "hostID": id_base, "size": ID_RANGE}]
        linux["gidMappings"] = [{"containerID": 0, "hostID": id_base, "size": ID_RANGE}]
    bind_options = ["rbind", "ro", "nosuid", "nodev"]
    mounts: list[dict[str, Any]] = [
        {"destination": "/proc", "type": "proc", "source": "proc",
         "options": ["nosuid", "noexec", "nodev"]},
        {"destination": "/dev", "type": "tmpfs", "source": "tmpfs",
         "options": ["nosuid", "strictatime", "mode=755", "size=1024k"]},
        {"destination": "/dev/pts", "type": "devpts", "source": "devpts",
         "options": ["nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"]},
        {"destination": "/dev/shm", "type": "tmpfs", "source": "shm",
         "options": ["nosuid", "noexec", "nodev", "mode=1777", "size=16m"]},
        {"destination": "/dev/mqueue", "type": "mqueue", "source": "mqueue",
         "options": ["nosuid", "noexec", "nodev"]},
        {"destination": "/sys", "type": "sysfs", "source": "sysfs",
         "options": ["nosuid", "noexec", "nodev", "ro"]}
        if network_namespace is None
        # sysfs mounts only for the owner of the network namespace, and a joined one is
        # owned by the host: /sys is then empty (never the host's sysfs bound in)
        else {"destination": "/sys", "type": "tmpfs", "source": "tmpfs",
              "options": ["nosuid", "noexec", "nodev", "ro", "mode=555", "size=4k"]},
        {"destination": INIT_PATH, "type": "bind", "source": init, "options": bind_options},
    ]
    mounts.extend(
        {"destination": bind.destination, "type": "bind", "source": bind.source, "options": bind_options}
        for bind in binds
    )
    return {
        "ociVersion": "1.0.2",
        "process": {
            "terminal": False,
            "user": {"uid": 0, "gid": 0},
            "args": [INIT_PATH, *argv],
            "env": [f"{key}={value}" for key, value in env.items()],
            "cwd": cwd,
            "capabilities": {"bounding": [], "effective": [], "inheritable": [], "permitted": [], "ambient": []},
            "rlimits": [] if user_namespace is not None and id_base is not None else [
                {"type": name, "hard": hard, "soft": soft} for name, soft, hard in INHERITED_RLIMITS
            ],
            "noNewPrivileges": True,
            "oomScoreAdj": 1000,
        },
        "root": {"path": rootfs, "readonly": False},
        "hostname": hostname,
        "mounts": mounts,
        "linux": linux,
    }


def _resources(limits: ContainerLimits) -> dict[str, Any]:
    memory: dict[str, Any] = {"limit": limits.memory_bytes, "disableOOMKiller": False}
    if limits.swap_limit:
        memory["swap"] = limits.memory_bytes
    return {
        "devices": [{"allow": False, "access": "rwm"}],
        "memory": memory,
        "cpu": {"quota": max(int(limits.cpu * _CFS_PERIOD_US), 1000), "period": _CFS_PERIOD_US},
        "pids": {"limit": limits.pids},
    }


def container_cgroup(container_id: str) -> str:
    """The cgroup path (under every controller) of the container ``container_id``."""
    return f"/agent-interface-exact/{container_id}"


def memory_bytes(memory_mb: int) -> int:
    """``memoryMb`` in bytes."""
    return memory_mb * _MIB
