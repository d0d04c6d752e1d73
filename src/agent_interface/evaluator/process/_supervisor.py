"""The per-process supervisor of :mod:`agent_interface.evaluator.process.local_process`.

Run as ``python -I -S -B _supervisor.py CONTROL_DIR``, or (as the provider does, to skip
compiling it on every spawn) as its code object marshalled on the launcher's stdin and
run by a one-line ``-c`` (standard library only: no package import, no site directory,
nothing from the environment). The provider starts it
through ``unshare`` when network and PID namespaces are available, so this process sits
in a fresh network namespace and its first child is the init of a fresh PID namespace.

It runs in two halves:

* the **launcher** (the process the provider started) forks the supervisor, relays its
  one-line handshake (``ok`` or ``error <what> <errno name>``) to the provider on
  stdout, and exits, so the provider keeps no long-lived child and the supervisor
  outlives the provider object (and the provider's OS process);
* the **supervisor** starts a new session, forks the launched program (a new session and
  process group of its own, resource limits applied between ``fork`` and ``execve``, its
  working directory opened without following a symbolic link, and, when the spec names a
  ``user``, every capability dropped from every set, ``no_new_privs`` set and the
  program's host uid and gid switched to the environment's own, so it can neither reach
  the control directory nor signal this supervisor; when the spec asks, a seccomp filter
  refuses ``AF_UNIX`` sockets and ``io_uring``), copies its stdout and
  stderr into bounded capture files, enforces the time limit and the environment's
  lifetime, ends the whole process group (every process of the PID namespace when it is
  that namespace's init) once the program has ended, been timed out or been cancelled
  (``SIGTERM`` to the supervisor), and writes ``termination.json`` last, atomically.

The spec (whose environment variables may be secrets) and the stdin file are deleted as
soon as they are read.

The supervisor is single-threaded, so forking it and running Python between ``fork``
and ``execve`` is safe (this is why no ``preexec_fn`` is needed anywhere). It starts on
every spawn, so it imports only built-in and C modules: ``_signal`` rather than
``signal`` (which pulls in ``enum``), ``marshal`` for the spec the provider wrote with
the same interpreter, and a few lines of JSON output instead of ``json``.
"""

from __future__ import annotations

import _signal  # type: ignore[import-not-found]  # no stubs; `signal` would import enum
import errno
import marshal
import os
import resource
import select
import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Final

_RLIMITS = {
    "AS": resource.RLIMIT_AS,
    "FSIZE": resource.RLIMIT_FSIZE,
    "CORE": resource.RLIMIT_CORE,
    "NPROC": resource.RLIMIT_NPROC,
}
_CHUNK = 65536
_DRAIN_SECONDS = 2.0
_OPEN_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_ALIASES = frozenset({"SIGIOT", "SIGCLD", "SIGPOLL", "SIGRTMIN", "SIGRTMAX"})
_SIGNAL_NAMES = {
    getattr(_signal, name): name
    for name in dir(_signal)
    if name.startswith("SIG") and not name.startswith("SIG_") and name not in _ALIASES
}


def _json(value: object) -> str:
    """JSON text of the few shapes the supervisor writes (dicts of str, int, bool, None)."""
    if value is None:
        return "null"
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        escaped = value.replace("\\", "\\\\").replace('"', '\\"')
        return '"' + "".join(c if c >= " " else f"\\u{ord(c):04x}" for c in escaped) + '"'
    if isinstance(value, dict):
        return "{" + ",".join(f"{_json(str(k))}:{_json(v)}" for k, v in value.items()) + "}"
    raise TypeError(type(value).__name__)


def _write_json(directory: str, name: str, value: dict[str, Any], *, durable: bool) -> None:
    """Write ``name`` atomically (a temporary file renamed over it), synced if ``durable``."""
    temporary = os.path.join(directory, f".{name}.{os.getpid()}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
    try:
        os.write(fd, _json(value).encode())
        if durable:
            os.fsync(fd)
    finally:
        os.close(fd)
    os.rename(temporary, os.path.join(directory, name))


def _errno_name(error: BaseException) -> str:
    return errno.errorcode.get(getattr(error, "errno", None) or errno.EIO, "EIO")


def _self_identity() -> tuple[int, int, str]:
    """Host pid, start time in clock ticks and boot id of this process.

    ``/proc`` is the host's, so ``/proc/self`` names this process by its host pid even
    inside a PID namespace.
    """
    with open("/proc/self/stat", "rb") as handle:
        stat = handle.read().decode()
    head, _, tail = stat.rpartition(")")
    with open("/proc/sys/kernel/random/boot_id") as handle:
        boot = handle.read().strip()
    return int(head.split(" ", 1)[0]), int(tail.split()[19]), boot


def _open_cwd(root: str, components: list[str]) -> int:
    fd = os.open(root, _OPEN_DIR)
    for component in components:
        try:
            child = os.open(component, _OPEN_DIR, dir_fd=fd)
        finally:
            os.close(fd)
        fd = child
    return fd


# mount(2) flags (linux/mount.h) and the statvfs flags a remount must keep in a user namespace.
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 1, 2, 4, 8
_MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = 32, 4096, 16384, 1 << 18
_KEPT_FLAGS = ((os.ST_NOSUID, _MS_NOSUID), (os.ST_NODEV, _MS_NODEV), (os.ST_NOEXEC, _MS_NOEXEC),
               (os.ST_NOATIME, 1024), (os.ST_NODIRATIME, 2048), (os.ST_RELATIME, 1 << 21))


def _mounter() -> Any:
    """``mount(source, target, fstype, flags, data)`` through libc (ctypes: only when used)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.mount.argtypes = (ctypes.c_char_p,) * 3 + (ctypes.c_ulong, ctypes.c_char_p)

    def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
        args = [None if text is None else os.fsencode(text) for text in (source, target, fstype)]
        if libc.mount(args[0], args[1], args[2], flags, None if data is None else data.encode()) != 0:
            number = ctypes.get_errno()
            raise OSError(number, os.strerror(number))

    return mount


def _inside(root: str, path: str) -> str:
    """``root + path`` once no component below ``root`` is a link (so a mount stays inside)."""
    target = root + path
    if os.path.realpath(target) != target:
        raise OSError(errno.ELOOP, "a mount target is reached through a link")
    return target


_SYSTEM: Final = ("bin", "sbin", "lib", "lib32", "lib64", "libx32", "usr", "etc")
"""Host top-level directories a private root shows, read-only (links among them copied)."""
_DEVICES: Final = ("null", "zero", "full", "random", "urandom")


def _bind_read_only(mount: Any, source: str, target: str) -> None:
    """Bind ``source`` at ``target`` read-only, keeping the flags a user namespace locks."""
    mount(source, target, None, _MS_BIND | _MS_REC)
    kept = os.statvfs(target).f_flag
    flags = _MS_BIND | _MS_REMOUNT | _MS_RDONLY
    for statvfs_flag, mount_flag in _KEPT_FLAGS:
        if kept & statvfs_flag:
            flags |= mount_flag
    mount(None, target, None, flags)


def _private_root(layout: dict[str, Any]) -> str:
    """Build the process's root in this (private) mount namespace; its path.

    A tmpfs holding only: the host's system directories (``_SYSTEM``, read-only; a link
    among them copied as a link), the image's executables outside them (each file bound
    read-only at its path), a ``/dev`` of a few character devices, a fresh ``/proc`` (of
    this PID namespace), and the environment's top-level entries (its ``/tmp`` among them), bound from its files (over any of the above). No other host path
    (``/run``, ``/var``, the host's ``/tmp``, the provider's own directory), so no host
    socket or record file is reachable through a path. Then the host directories of
    ``binds`` at their environment paths, then ``readOnly`` environment paths made
    read-only. The child ``chroot``s into it, so the environment's absolute paths are
    the process's paths.
    """
    mount = _mounter()
    root, files = layout["root"], layout["files"]
    os.mkdir(root, 0o700)
    mount(None, "/", None, _MS_REC | _MS_PRIVATE)
    mount("tmpfs", root, "tmpfs", _MS_NOSUID | _MS_NODEV, "mode=0755")
    own = set(os.listdir(files))
    for name in _SYSTEM:
        host, target = "/" + name, root + "/" + name
        if name in own or not os.path.lexists(host):
            continue
        if os.path.islink(host):
            os.symlink(os.readlink(host), target)
        elif os.path.isdir(host):
            os.mkdir(target)
            _bind_read_only(mount, host, target)
    for executable in layout.get("executables", ()):
        if executable.split("/")[1] in _SYSTEM or not os.path.isfile(executable):
            continue
        os.makedirs(os.path.dirname(root + executable), 0o755, exist_ok=True)
        target = _inside(root, executable)
        os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o755))
        _bind_read_only(mount, executable, target)
    if "dev" not in own:
        os.mkdir(root + "/dev")
        mount("tmpfs", root + "/dev", "tmpfs", _MS_NOSUID | _MS_NOEXEC, "mode=0755,size=64k")
        for name in _DEVICES:
            os.close(os.open(root + "/dev/" + name, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o666))
            mount("/dev/" + name, root + "/dev/" + name, None, _MS_BIND)
        for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"),
                             ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2")):
            os.symlink(target, root + "/dev/" + name)
    if "proc" not in own:
        os.mkdir(root + "/proc")
        mount("proc", root + "/proc", "proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC)
    for name in sorted(own):
        source, target = files + "/" + name, root + "/" + name
        if os.path.islink(source):
            continue
        if os.path.isdir(source):
            if not os.path.isdir(target) or os.path.islink(target):
                if os.path.islink(target):
                    os.unlink(target)
                os.mkdir(target)
        else:
            if os.path.islink(target):
                os.unlink(target)
            os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600))
        mount(source, target, None, _MS_BIND | _MS_REC)
    for host, path in layout["binds"]:
        mount(host, _inside(root, path), None, _MS_BIND | _MS_REC)
    for path in layout["readOnly"]:
        target = _inside(root, path)
        _bind_read_only(mount, target, target)
    return str(root)


_AT_FDCWD, _AT_RECURSIVE, _MOUNT_ATTR_RDONLY, _SYS_MOUNT_SETATTR = -100, 0x8000, 1, 442
_MNT_DETACH = 2


def _mount_point(field: str) -> str:
    """A ``mountinfo`` mount point with its octal escapes (``\\040`` for a space) decoded."""
    out, i = [], 0
    while i < len(field):
        if field[i] == "\\" and i + 3 < len(field) and field[i + 1 : i + 4].isdigit():
            out.append(chr(int(field[i + 1 : i + 4], 8)))
            i += 4
        else:
            out.append(field[i])
            i += 1
    return "".join(out)


def _detach_below(top: str, keep: tuple[str, ...]) -> None:
    """Detach, in this (private) mount namespace, every mount at or below ``top`` (the
    provider's directory) but ``keep`` and what leads to them: another live environment's
    tmpfs (its path, its id and its uid are in its mount options) is then not in this
    process's ``mountinfo``, and its files are not reachable through it."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.umount2.argtypes = (ctypes.c_char_p, ctypes.c_int)
    with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as handle:
        points = [_mount_point(line.split(" ")[4]) for line in handle if line.count(" ") >= 4]

    def under(path: str, base: str) -> bool:
        return path == base or path.startswith(base.rstrip("/") + "/")

    doomed = {
        point for point in points
        if under(point, top) and not any(under(point, kept) or under(kept, point) for kept in keep)
    }
    for point in sorted(doomed, key=len, reverse=True):
        if libc.umount2(os.fsencode(point), _MNT_DETACH) != 0 and ctypes.get_errno() not in (
            errno.EINVAL, errno.ENOENT
        ):
            number = ctypes.get_errno()
            raise OSError(number, os.strerror(number))


def _host_view(view: dict[str, Any]) -> None:
    """The host's file system seen read-only but for the environment's files.

    In this (private) mount namespace: a fresh ``/proc`` of this PID namespace over the
    host's when asked, then every mount made read-only recursively (``mount_setattr``),
    then the environment's own tmpfs (and this supervisor's control directory, bound
    onto itself first) writable again: a program may read the host's paths but write
    nothing outside its environment (no host ``/tmp``, no disk beyond ``diskMb``).
    """
    import ctypes

    mount = _mounter()
    mount(None, "/", None, _MS_REC | _MS_PRIVATE)
    mount(view["control"], view["control"], None, _MS_BIND)
    if view.get("hide"):
        _detach_below(view["hide"], (view["writable"], view["control"]))
    if view.get("freshProc"):
        mount("proc", "/proc", "proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long

    def setattr(path: str, flags: int, attr_set: int, attr_clr: int) -> None:
        attributes = (ctypes.c_uint64 * 4)(attr_set, attr_clr, 0, 0)
        if libc.syscall(_SYS_MOUNT_SETATTR, ctypes.c_int(_AT_FDCWD), os.fsencode(path),
                        ctypes.c_uint(flags), attributes, ctypes.c_size_t(32)) != 0:
            number = ctypes.get_errno()
            raise OSError(number, os.strerror(number))

    setattr("/", _AT_RECURSIVE, _MOUNT_ATTR_RDONLY, 0)
    for path in (view["writable"], view["control"]):
        setattr(path, 0, 0, _MOUNT_ATTR_RDONLY)


# prctl(2) options and capability bits (linux/prctl.h, linux/capability.h).
_PR_CAPBSET_DROP, _PR_SET_NO_NEW_PRIVS, _PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 24, 38, 47, 4
_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 22, 2
_CAPABILITY_VERSION_3 = 0x20080522


def _drop_privileges(user: list[int]) -> None:
    """Become ``user`` (uid, gid) with no capability in any set and ``no_new_privs``.

    The bounding set is emptied while this process still holds ``CAP_SETPCAP``; the uid
    switch clears the permitted, effective and ambient sets; ``capset`` then clears the
    inheritable set. Any step that fails raises, so the program is never started with
    privileges left.
    """
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl.argtypes = (ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong)

    def check(result: int) -> None:
        if result != 0:
            number = ctypes.get_errno()
            raise OSError(number, os.strerror(number))

    with open("/proc/sys/kernel/cap_last_cap") as handle:
        last = int(handle.read())
    for capability in range(last + 1):
        check(libc.prctl(_PR_CAPBSET_DROP, capability, 0, 0, 0))
    check(libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0))
    uid, gid = user
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    header = (ctypes.c_uint32 * 2)(_CAPABILITY_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()
    check(libc.capset(header, data))
    check(libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
    if os.getresuid() != (uid, uid, uid) or os.getresgid() != (gid, gid, gid) or os.getgroups():
        raise OSError(errno.EPERM, "the program's user could not be set")


def _install_filter(program: bytes) -> None:
    """Load ``program`` as this thread's seccomp filter (``no_new_privs`` is already set)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl.argtypes = (ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong)
    buffer = ctypes.create_string_buffer(program, len(program))

    class _Program(ctypes.Structure):
        _fields_ = (("len", ctypes.c_ushort), ("filter", ctypes.c_void_p))

    fprog = _Program(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, None, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "no_new_privs")
    if libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.addressof(fprog), 0, 0) != 0:
        number = ctypes.get_errno()
        raise OSError(number, os.strerror(number))


def _exec_child(
    spec: dict[str, Any], stdin_fd: int, out_w: int, err_w: int, cwd_fd: int, root: str | None
) -> None:
    """In the forked child: become a new session, apply limits, ``execve``. Never returns."""
    os.setsid()
    if root is not None:
        os.chroot(root)
    os.dup2(stdin_fd, 0)
    os.dup2(out_w, 1)
    os.dup2(err_w, 2)
    for name, value in spec["rlimits"].items():
        _soft, hard = resource.getrlimit(_RLIMITS[name])
        bound = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(_RLIMITS[name], (bound, bound))
    if spec.get("cpus"):
        os.sched_setaffinity(0, spec["cpus"])
    os.fchdir(cwd_fd)
    # Python ignores SIGPIPE and SIGXFSZ; an ignored disposition would survive execve.
    for number in (_signal.SIGPIPE, _signal.SIGXFSZ, _signal.SIGTERM, _signal.SIGINT,
                   _signal.SIGCHLD, _signal.SIGHUP):
        _signal.signal(number, _signal.SIG_DFL)
    if spec.get("user") is not None:
        _drop_privileges(spec["user"])
    if spec.get("seccomp") is not None:
        _install_filter(spec["seccomp"])
    _signal.pthread_sigmask(_signal.SIG_SETMASK, set())
    os.execve(spec["executable"], spec["argv"], spec["env"])


class _Capture:
    """One output stream: copied into its file up to ``limit`` bytes, the rest counted."""

    def __init__(self, path: str, read_fd: int, limit: int) -> None:
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
        self.read_fd = read_fd
        self.limit = limit
        self.kept = 0
        self.dropped = 0
        self.open = True

    def pump(self) -> int:
        """Copy what the pipe holds now; the number of bytes read (0 at EOF or when empty)."""
        try:
            data = os.read(self.read_fd, _CHUNK)
        except BlockingIOError:
            return 0
        if not data:
            self.open = False
            return 0
        room = max(self.limit - self.kept, 0)
        if room:
            os.write(self.fd, data[:room])
            self.kept += min(room, len(data))
        self.dropped += max(len(data) - room, 0)
        return len(data)

    def close(self) -> None:
        if self.kept:  # synced before termination.json names its length
            os.fsync(self.fd)
        os.close(self.fd)
        os.close(self.read_fd)


def _termination(reason: str | None, status: int, spec: dict[str, Any]) -> dict[str, Any]:
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        code, signal_name = 128 + number, _SIGNAL_NAMES.get(number, f"SIG{number}")
    else:
        code, signal_name = os.WEXITSTATUS(status), None
    if reason == "timeout":
        termination: dict[str, Any] = {"kind": "timeout", "timeoutMs": spec["timeoutMs"]}
    elif reason == "cancelled":
        termination = {"kind": "cancelled"}
    elif signal_name is not None:
        termination = {"kind": "signal", "signal": signal_name}
    else:
        termination = {"kind": "exit", "exitCode": code}
    record: dict[str, Any] = {"termination": termination, "exitCode": code}
    if signal_name is not None:
        record["exitSignal"] = signal_name
    return record


def _end_everything(group: int) -> None:
    """SIGKILL the program's process group; as a PID namespace's init, every process in it."""
    for target in (-group, -1) if os.getpid() == 1 else (-group,):
        try:
            os.kill(target, _signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            continue


def _reap(child: int) -> int | None:
    """Reap every ended child (orphans of a PID namespace too); the program's status."""
    status = None
    while True:
        try:
            reaped, code = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return status
        if reaped == 0:
            return status
        if reaped == child:
            status = code


def _supervise(control: str, spec: dict[str, Any], handshake: int) -> int:
    def answer(message: str) -> None:
        try:  # noqa: SIM105 - contextlib costs an import on every spawn
            os.write(handshake, (message + "\n").encode())
        except OSError:  # the launcher is gone (its spawn was cancelled): supervise anyway
            pass
        os.close(handshake)

    os.setsid()
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    cancel_requested: list[bool] = []
    _signal.set_wakeup_fd(wake_w)
    _signal.signal(_signal.SIGCHLD, lambda *_: None)
    _signal.signal(_signal.SIGTERM, lambda *_: cancel_requested.append(True))
    _signal.signal(_signal.SIGINT, lambda *_: cancel_requested.append(True))
    _signal.signal(_signal.SIGHUP, _signal.SIG_IGN)

    identity = _self_identity()  # read from the host's /proc, before any other is mounted
    root = None
    try:
        if spec.get("mounts") is not None:
            root = _private_root(spec["mounts"])
        elif spec.get("hostView") is not None:
            _host_view(spec["hostView"])
    except OSError as error:
        answer(f"error mounts {_errno_name(error)}")
        return 0
    try:
        cwd_fd = _open_cwd(spec["root"] if root is None else root, spec["cwd"])
    except OSError as error:
        answer(f"error cwd {_errno_name(error)}")
        return 0
    stdin_path = os.path.join(control, "stdin") if spec["stdin"] else os.devnull
    stdin_fd = os.open(stdin_path, os.O_RDONLY | os.O_CLOEXEC)
    if spec["stdin"]:
        os.unlink(stdin_path)  # read through the open descriptor; nothing stays at rest
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    captures = [
        _Capture(os.path.join(control, "stdout"), out_r, spec["outputLimit"]),
        _Capture(os.path.join(control, "stderr"), err_r, spec["outputLimit"]),
    ]
    fail_r, fail_w = os.pipe()
    started = time.monotonic()
    child = os.fork()
    if child == 0:
        try:
            _exec_child(spec, stdin_fd, out_w, err_w, cwd_fd, root)
        except BaseException as error:
            os.write(fail_w, _errno_name(error).encode())
        os._exit(127)
    for fd in (out_w, err_w, fail_w, stdin_fd, cwd_fd):
        os.close(fd)
    failure = b""
    while chunk := os.read(fail_r, 64):
        failure += chunk
    os.close(fail_r)
    if failure:
        os.waitpid(child, 0)
        answer(f"error exec {failure.decode(errors='replace')}")
        return 0

    pid, start, boot = identity
    in_namespace = os.getpid() == 1
    # Not synced: after a crash of the machine the boot id no longer matches anyway.
    _write_json(control, "supervisor.json", {
        "pid": pid, "startTicks": start, "bootId": boot,
        "pidNamespace": in_namespace, "group": None if in_namespace else child,
    }, durable=False)
    answer("ok")
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    os.close(devnull)

    poller = select.poll()
    by_fd = {}
    for capture in captures:
        os.set_blocking(capture.read_fd, False)
        poller.register(capture.read_fd, select.POLLIN)
        by_fd[capture.read_fd] = capture
    poller.register(wake_r, select.POLLIN)

    deadlines = []
    if spec["timeoutMs"] > 0:
        deadlines.append((started + spec["timeoutMs"] / 1000, "timeout"))
    if spec.get("deadlineEpochMs") is not None:
        remaining = spec["deadlineEpochMs"] / 1000 - time.time()
        deadlines.append((started + max(remaining, 0), "cancelled"))
    reason: str | None = None
    status: int | None = None
    drain_until: float | None = None
    while True:
        reaped = _reap(child)
        status = reaped if reaped is not None else status
        now = time.monotonic()
        if status is None and reason is None:
            if cancel_requested:
                reason = "cancelled"
            else:
                reason = next((why for when, why in deadlines if now >= when), None)
            if reason is not None:
                _end_everything(child)
        if status is not None and drain_until is None:
            _end_everything(child)
            drain_until = now + _DRAIN_SECONDS
        if status is not None and (not by_fd or now >= (drain_until or now)):
            break
        waits = [when - now for when, _ in deadlines if status is None and reason is None]
        if drain_until is not None:
            waits.append(drain_until - now)
        timeout_ms = max(int(min([1.0, *waits]) * 1000) + 1, 0)
        for fd, _event in poller.poll(timeout_ms):
            if fd == wake_r:
                try:
                    while os.read(wake_r, 512):
                        pass
                except BlockingIOError:
                    pass
            elif fd in by_fd:
                capture = by_fd[fd]
                capture.pump()
                if not capture.open:
                    poller.unregister(fd)
                    del by_fd[fd]
    assert status is not None
    record = _termination(reason, status, spec)
    for name, capture in zip(("stdout", "stderr"), captures, strict=True):
        while capture.open and capture.pump():  # what is buffered; stray writers not awaited
            pass
        record[f"{name}Bytes"] = capture.kept
        record[f"{name}Dropped"] = capture.dropped
        capture.close()
    _write_json(control, "termination.json", record, durable=True)
    return 0


def _launch(control: str) -> None:
    path = os.path.join(control, "spec.marshal")
    with open(path, "rb") as handle:
        spec = marshal.loads(handle.read())
    os.unlink(path)  # the launch env may hold secrets: none stays at rest
    read_end, write_end = os.pipe()
    supervisor = os.fork()
    if supervisor == 0:
        os.close(read_end)
        try:
            code = _supervise(control, spec, write_end)
        except BaseException:
            code = 70
        os._exit(code)
    os.close(write_end)
    line = b""
    while chunk := os.read(read_end, 4096):
        line += chunk
    os.write(1, line or b"error supervisor EIO\n")
    os._exit(0)  # nothing to finalize: leave at once


if __name__ == "__main__":
    _launch(sys.argv[-1])
