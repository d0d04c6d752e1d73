"""Which kernel isolation this host gives a local exact process, found by trying it.

:func:`detect_local_isolation` runs a probe through ``unshare`` and keeps the first argv
prefix under which the probe really sees a fresh network namespace (only a loopback
interface, which is down) and, when asked for, a fresh PID namespace (its first child is
that namespace's init). Nothing is inferred from the kernel version or from
``/proc/sys``: what is declared is what was observed.

A :class:`LocalIsolation` without a network namespace cannot block egress, so the local
provider then omits the ``exactProcess`` capability altogether.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from typing import Final

__all__ = ["LocalIsolation", "detect_local_isolation"]

# The probe's first child is the init of a fresh PID namespace when there is one (the
# namespace ends with it, so it is the only child); it also tries to become a uid and gid
# of the range the provider gives programs: only then can a program run as a user other
# than its supervisor's.
_PROBE: Final = (
    "import json, os, socket\n"
    "names = [name for _, name in socket.if_nameindex()]\n"
    "child = os.fork()\n"
    "if child == 0:\n"
    "    code = 0 if os.getpid() == 1 else 1\n"
    "    try:\n"
    "        os.setgroups([])\n"
    "        os.setresgid(0x5fff0000, 0x5fff0000, 0x5fff0000)\n"
    "        os.setresuid(0x5fff0000, 0x5fff0000, 0x5fff0000)\n"
    "        code += 0 if os.getresuid() == (0x5fff0000,) * 3 else 2\n"
    "    except OSError:\n"
    "        code += 2\n"
    "    os._exit(code)\n"
    "_, status = os.waitpid(child, 0)\n"
    "code = os.waitstatus_to_exitcode(status)\n"
    "init, separate = code in (0, 2), code in (0, 1)\n"
)
_REPORT: Final = (
    "print(json.dumps({'interfaces': names, 'childIsInit': init, 'mounts': mounts,"
    " 'separateUser': separate}))\n"
)
# With ``--mount``: a tmpfs, a bind made read-only (by remount, then by ``mount_setattr``,
# which a program without a private root needs), and a chroot of the probe into the tmpfs,
# all in the scratch directory given as the last argument (the host never sees them).
_MOUNT_PROBE: Final = (
    "import ctypes, sys\n"
    "libc = ctypes.CDLL(None, use_errno=True)\n"
    "libc.mount.argtypes = (ctypes.c_char_p,) * 3 + (ctypes.c_ulong, ctypes.c_char_p)\n"
    "base = sys.argv[-1].encode()\n"
    "def mount(source, target, fstype, flags, data=None):\n"
    "    if libc.mount(source, target, fstype, flags, data) != 0:\n"
    "        raise OSError(ctypes.get_errno(), 'mount')\n"
    "mount(None, b'/', None, 16384 | (1 << 18))\n"
    "mount(b'tmpfs', base, b'tmpfs', 6, b'mode=0755')\n"
    "os.mkdir(base + b'/in')\n"
    "mount(base + b'/in', base + b'/in', None, 4096)\n"
    "mount(None, base + b'/in', None, 4096 | 32 | 1 | 6)\n"
    "libc.syscall.restype = ctypes.c_long\n"
    "attributes = (ctypes.c_uint64 * 4)(1, 0, 0, 0)\n"  # mount_setattr: read-only, recursively
    "if libc.syscall(442, ctypes.c_int(-100), base + b'/in', ctypes.c_uint(0x8000), attributes,\n"
    "                ctypes.c_size_t(32)) != 0:\n"
    "    raise OSError(ctypes.get_errno(), 'mount_setattr')\n"
    "os.chroot(base)\n"
    "os.chdir('/')\n"
    "try:\n"
    "    os.close(os.open('/in/x', os.O_WRONLY | os.O_CREAT, 0o600))\n"
    "    mounts = False\n"
    "except OSError:\n"
    "    mounts = os.path.isdir('/in')\n"
)
_PROBE_SECONDS: Final = 10.0


@dataclass(frozen=True, slots=True)
class LocalIsolation:
    """What the local provider wraps around every supervised process.

    ``prefix`` is the argv put in front of the supervisor (``("unshare", "--net", "--ipc",
    "--uts", "--pid", "--mount")`` as root: System V IPC and the host name are the
    process's own too); the flags say which namespaces a probe observed under
    it. ``mount_namespace``: a private mount namespace where the probe mounted a tmpfs, made
    a bind read-only and ``chroot``-ed into it, so the provider can root each process at
    its environment (fixed paths such as ``/tangle/input/task.txt`` are then the
    process's own). ``separate_user``: the supervisor could become another host uid and
    gid (it is host root, not root of a user namespace), so a program can run as a user
    that owns nothing of the provider's (its records, its supervisor, other
    environments); without it the local provider declares no ``exactProcess``.
    ``LocalIsolation.none()`` wraps nothing and isolates nothing.
    """

    prefix: tuple[str, ...]
    network_namespace: bool
    pid_namespace: bool
    user_namespace: bool
    mount_namespace: bool = False
    separate_user: bool = False

    @classmethod
    def none(cls) -> LocalIsolation:
        """No namespace at all: egress cannot be blocked, so no exactProcess."""
        return cls((), False, False, False)

    @property
    def blocks_egress(self) -> bool:
        return self.network_namespace


def _candidates(
    unshare: str, pid_namespace: bool, mount_namespace: bool
) -> list[tuple[tuple[str, ...], bool, bool, bool]]:
    """``(prefix, with_pid, with_user, with_mount)`` in order of preference."""
    pid_options = [True, False] if pid_namespace else [False]
    mount_options = [True, False] if mount_namespace else [False]
    users: list[tuple[str, ...]] = []
    if os.geteuid() == 0:
        users.append(())
    users.append(("--user", "--map-current-user"))
    users.append(("--user", "--map-root-user"))
    found = []
    for user in users:
        for pid in pid_options:
            for mount in mount_options:
                prefix = (unshare, *user, "--net", "--ipc", "--uts", *(("--pid",) if pid else ()),
                          *(("--mount",) if mount else ()))
                found.append((prefix, pid, bool(user), mount))
    return found


async def _probe(prefix: tuple[str, ...], python: str) -> dict[str, object] | None:
    code = _PROBE + (_MOUNT_PROBE if "--mount" in prefix else "mounts = False\n") + _REPORT
    scratch = tempfile.mkdtemp(prefix="agent-interface-probe-")
    try:
        return await _run_probe(prefix, python, code, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


async def _run_probe(prefix: tuple[str, ...], python: str, code: str, scratch: str) -> dict[str, object] | None:
    try:
        process = await asyncio.create_subprocess_exec(
            *prefix, python, "-I", "-S", "-c", code, scratch,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env={},
            start_new_session=True,
        )
    except OSError:
        return None
    try:
        out, _ = await asyncio.wait_for(process.communicate(), _PROBE_SECONDS)
    except TimeoutError:
        process.kill()
        await process.wait()
        return None
    if process.returncode != 0:
        return None
    try:
        answer = json.loads(out)
    except ValueError:
        return None
    return answer if isinstance(answer, dict) else None


_CACHE: dict[tuple[str, str, bool, bool, int], LocalIsolation] = {}


async def detect_local_isolation(
    unshare: str | None = "unshare",
    *,
    pid_namespace: bool = True,
    mount_namespace: bool = True,
    python: str | None = None,
) -> LocalIsolation:
    """The strongest isolation a probe observes on this host (cached per process).

    ``unshare`` is the ``unshare(1)`` executable (a name is looked up on ``PATH``);
    ``None`` or an executable that does not work gives :meth:`LocalIsolation.none`.
    ``pid_namespace=False`` skips PID namespaces (processes are then ended by process
    group only); ``mount_namespace=False`` skips mount namespaces (processes then see the
    host's file system, with their working directory in the environment's directory).
    Tries the plain namespaces as root, then a user namespace that maps the current user,
    then one that maps root; with each, a mount namespace first.
    """
    if unshare is None or sys.platform != "linux":
        return LocalIsolation.none()
    located = shutil.which(unshare)
    if located is None:
        return LocalIsolation.none()
    interpreter = os.path.realpath(python or sys.executable)
    key = (located, interpreter, pid_namespace, mount_namespace, os.geteuid())
    cached = _CACHE.get(key)
    if cached is not None:
        return cached
    found = LocalIsolation.none()
    for prefix, with_pid, with_user, with_mount in _candidates(located, pid_namespace, mount_namespace):
        answer = await _probe(prefix, interpreter)
        if answer is None or answer.get("interfaces") != ["lo"]:
            continue
        if with_pid and answer.get("childIsInit") is not True:
            continue
        if with_mount and answer.get("mounts") is not True:
            continue
        separate = answer.get("separateUser") is True and not with_user
        found = LocalIsolation(prefix, True, with_pid, with_user, with_mount, separate)
        break
    _CACHE[key] = found
    return found
