"""The per-process supervisor of :mod:`agent_interface.evaluator.container.oci_provider`.

Run as ``python -I -S -B _oci_supervisor.py CONTROL_DIR``, or (as the provider does, to
skip compiling it on every spawn) as its code object marshalled on the launcher's stdin
and run by a one-line ``-c``; standard library only, and only built-in and C modules
(no ``json``: it would import ``re`` and ``enum`` on every spawn). It
lives on the host, outside the container, and the container cannot see it: not in its
PID namespace, not in its file system, not at any path it can reach.

* The **supervisor server** (``--serve FD``, :mod:`.supervisor_server`) is one
  long-lived interpreter per provider OS process: for each spawn it forks the process's
  supervisor, so a spawn costs a ``fork``, not an interpreter's start. The supervisor
  answers ``ok`` (or ``error <what>``) on the pipe the provider sent and keeps that pipe
  open until it ends, so the provider learns that ``termination.json`` is written from
  the pipe's end of file instead of polling. Run directly with a control directory
  (``AGENT_INTERFACE_SUPERVISOR_SERVER=0``), this script is a **launcher** instead: it
  forks the supervisor, relays its one-line answer on stdout and exits.
* The **supervisor** starts a new session, runs
  ``runc run`` in the foreground (one ``runc`` process creates, starts, waits for and
  removes the container, as a bare ``runc run`` does) and becomes a child subreaper
  while ``runc`` starts it, with the program's stdin (a file
  or ``/dev/null``), two pipes for its stdout and stderr, one end of a socket pair as
  descriptor 3 (the status channel) and an exec-report pipe as descriptor 4. The
  container's init (its PID 1, see :mod:`.static_programs`) writes 4 bytes on
  descriptor 4 once the program's ``execve`` is done (0, or the ``errno`` that refused
  it): only then does the supervisor answer ``ok``. The supervisor copies stdout and
  stderr into bounded capture files (bytes past ``outputLimit`` are counted, not kept)
  and enforces the launch's timeout and the environment's lifetime with ``SIGKILL`` to
  the init through a pidfd (which ends every process of the container). When the
  program ends, the init writes its raw wait status on the status channel and holds:
  the supervisor reads the container's OOM record while its cgroup still exists, then
  closes its end, the init exits and ``runc`` removes the container. When ``runc`` has
  ended and the captures are drained, the supervisor writes ``termination.json``,
  atomically, last.

``SIGTERM`` to the supervisor is a cancellation by the evaluator. The spec and the
bundle's ``config.json`` (the launch environment may hold secrets) are deleted as soon
as ``runc`` has read them.

The same script holds user namespaces (:func:`_hold_user_namespace`): the server forks
a holder that becomes an environment's owner uid and unshares, so an environment's
namespace costs a ``fork``, not a program.
"""

from __future__ import annotations

import _signal  # type: ignore[import-not-found]  # no stubs; `signal` would import enum
import _socket  # `socket` would import enum and selectors
import errno
import marshal
import os
import resource
import select
import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_CHUNK = 65536
_DRAIN_SECONDS = 2.0
_EXEC_REPORT_SECONDS = 30.0
_ALIASES = frozenset({"SIGIOT", "SIGCLD", "SIGPOLL", "SIGRTMIN", "SIGRTMAX"})
_SIGNAL_NAMES = {
    getattr(_signal, name): name
    for name in dir(_signal)
    if name.startswith("SIG") and not name.startswith("SIG_") and name not in _ALIASES
}
_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
_PR_SET_CHILD_SUBREAPER = 36


def _json(value: object) -> str:
    """JSON text of the few shapes the supervisor writes (dicts of str, int, bool)."""
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        escaped = value.replace("\\", "\\\\").replace('"', '\\"')
        return '"' + "".join(c if c >= " " else f"\\u{ord(c):04x}" for c in escaped) + '"'
    if isinstance(value, dict):
        return "{" + ",".join(f"{_json(str(k))}:{_json(v)}" for k, v in sorted(value.items())) + "}"
    raise TypeError(type(value).__name__)


def _write_json(directory: str, name: str, value: dict[str, Any], *, durable: bool) -> None:
    temporary = os.path.join(directory, f".{name}.{os.getpid()}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
    try:
        os.write(fd, _json(value).encode())
        if durable:
            os.fsync(fd)
    finally:
        os.close(fd)
    os.rename(temporary, os.path.join(directory, name))


def _self_identity() -> tuple[int, int, str]:
    with open("/proc/self/stat", "rb") as handle:
        stat = handle.read().decode()
    head, _, tail = stat.rpartition(")")
    with open("/proc/sys/kernel/random/boot_id") as handle:
        boot = handle.read().strip()
    return int(head.split(" ", 1)[0]), int(tail.split()[19]), boot


def _become_subreaper() -> None:
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")


class _Runc:
    """``runc`` for one container: argv only, our own state root, logs to a file."""

    def __init__(self, spec: dict[str, Any], control: str) -> None:
        self.base = [spec["runc"], "--root", spec["runcRoot"], "--log", os.path.join(control, "runc.log"),
                     "--log-format", "json"]
        self.id = spec["id"]
        self.rlimits: list[list[Any]] = list(spec.get("rlimits", ()))

    def spawn(self, args: list[str], fds: dict[int, int] | None = None) -> int:
        pid = os.fork()
        if pid == 0:
            try:
                null = os.open(os.devnull, os.O_RDWR)
                wanted = fds or {}
                for target in (0, 1, 2, 3, 4):
                    os.dup2(wanted.get(target, null), target, inheritable=True)
                os.closerange(5, 65536)
                _signal.pthread_sigmask(_signal.SIG_SETMASK, set())
                for number in (_signal.SIGTERM, _signal.SIGINT, _signal.SIGCHLD, _signal.SIGHUP,
                               _signal.SIGPIPE):
                    _signal.signal(number, _signal.SIG_DFL)
                for name, soft, hard in self.rlimits:  # inherited by the container (see runtime_config)
                    resource.setrlimit(getattr(resource, name), (soft, hard))
                os.execve(self.base[0], [*self.base, *args], {"PATH": _PATH})
            finally:
                os._exit(127)
        return pid

    def run(self, args: list[str], fds: dict[int, int] | None = None) -> int:
        """Run ``runc args...`` to its end; its exit code."""
        return _finish_runc(self.spawn(args, fds))


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
        if self.kept:
            os.fsync(self.fd)
        os.close(self.fd)
        os.close(self.read_fd)


def _status_record(reason: str | None, status: int, spec: dict[str, Any]) -> dict[str, Any]:
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


def _read_up_to(fd: int, size: int, seconds: float) -> bytes:
    """Up to ``size`` bytes from ``fd`` until its end of file or ``seconds`` pass."""
    data = b""
    end = time.monotonic() + seconds
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    while len(data) < size:
        left = end - time.monotonic()
        if left <= 0 or not poller.poll(int(left * 1000) + 1):
            break
        chunk = os.read(fd, size - len(data))
        if not chunk:
            break
        data += chunk
    return data


def _oom_killed(spec: dict[str, Any]) -> bool:
    """Whether the kernel's OOM killer acted in the container's memory cgroup (v1 or v2)."""
    for path in ("/sys/fs/cgroup/memory" + spec["cgroup"] + "/memory.oom_control",
                 "/sys/fs/cgroup" + spec["cgroup"] + "/memory.events"):
        try:
            with open(path) as handle:
                for line in handle:
                    key, _, value = line.partition(" ")
                    if key == "oom_kill" and int(value) > 0:
                        return True
        except (OSError, ValueError):
            continue
    return False


def _remove_cgroups(cgroup: str) -> None:
    """Remove the container's cgroup directories ``runc`` left (empty ones only)."""
    base = "/sys/fs/cgroup"
    try:
        controllers = [os.path.join(base, name) for name in os.listdir(base)]
    except OSError:
        return
    for directory in [base, *controllers]:
        try:  # noqa: SIM105
            os.rmdir(directory + cgroup)
        except OSError:
            pass


def _wait_status_of_exit_code(code: int) -> int:
    """The raw wait status ``runc run`` reported as its exit code (``128 + N``: signal N)."""
    return code - 128 if 128 < code < 128 + 65 else (code & 0xFF) << 8


def _reap(runc_pid: int) -> int | None:
    """Reap every ended child (``runc``, and anything reparented to this subreaper); the
    exit code of ``runc run`` when it was among them."""
    code = None
    while True:
        try:
            reaped, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return code
        if reaped == 0:
            return code
        if reaped == runc_pid:
            code = os.waitstatus_to_exitcode(status)


def _await_pid_file(path: str, runc_pid: int) -> int | None:
    """The container init's host pid, which ``runc run`` writes just after starting it."""
    for _ in range(20000):
        try:
            with open(path) as handle:
                text = handle.read().strip()
            if text:
                return int(text)
        except (OSError, ValueError):
            pass
        try:  # has runc ended (left unreaped: the main loop reaps it)?
            if os.waitid(os.P_PID, runc_pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                return None
        except ChildProcessError:
            return None
        time.sleep(0.0005)
    return None


class _Started:
    """One ``runc run`` in the foreground and its container's four channels."""

    def __init__(self, runc: _Runc, spec: dict[str, Any], control: str) -> None:
        stdin_path = os.path.join(control, "stdin") if spec["stdin"] else os.devnull
        stdin_fd = os.open(stdin_path, os.O_RDONLY | os.O_CLOEXEC)
        if spec["stdin"]:
            os.unlink(stdin_path)
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        ours, theirs = _socket.socketpair(_socket.AF_UNIX, _socket.SOCK_STREAM, 0)
        self.status_fd: int | None = ours.detach()
        theirs_fd = theirs.detach()
        exec_r, exec_w = os.pipe()
        self.captures = [
            _Capture(os.path.join(control, "stdout"), out_r, spec["outputLimit"]),
            _Capture(os.path.join(control, "stderr"), err_r, spec["outputLimit"]),
        ]
        self.pid_file = os.path.join(control, "container.pid")
        self.pid = runc.spawn(
            ["run", "--bundle", spec["bundle"], "--pid-file", self.pid_file, "--preserve-fds", "2", runc.id],
            {0: stdin_fd, 1: out_w, 2: err_w, 3: theirs_fd, 4: exec_w},
        )
        for fd in (out_w, err_w, theirs_fd, exec_w, stdin_fd):
            os.close(fd)
        self._exec_r = exec_r
        self._config = os.path.join(spec["bundle"], "config.json")

    def read_report(self) -> bytes:
        """4 bytes from the init once the program's ``execve`` is done: 0, or the errno
        that refused it; fewer (end of file) when ``runc`` ended before the init ran."""
        report = _read_up_to(self._exec_r, 4, _EXEC_REPORT_SECONDS)
        os.close(self._exec_r)
        try:  # noqa: SIM105
            os.unlink(self._config)
        except OSError:
            pass
        return report

    def release(self) -> None:
        """Let the init end (it holds after reporting, so its cgroup can still be read)."""
        if self.status_fd is not None:
            os.close(self.status_fd)
            self.status_fd = None


def _supervise(control: str, spec: dict[str, Any], handshake: int) -> int:
    """Supervise the process of ``control``; its one-line answer goes to ``handshake``,
    which stays open until this supervisor ends (its end of file tells the provider that
    ``termination.json`` is written)."""
    def answer(message: str) -> None:
        try:  # noqa: SIM105 - contextlib costs an import on every spawn
            os.write(handshake, (message + "\n").encode())
        except OSError:
            pass

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
    _signal.signal(_signal.SIGPIPE, _signal.SIG_IGN)

    runc = _Runc(spec, control)
    started = _Started(runc, spec, control)
    _become_subreaper()  # while runc starts the container (before anything can be orphaned)
    pid, start, boot = _self_identity()
    captures = started.captures
    report = started.read_report()
    if len(report) < 4 or report != bytes(4):
        if len(report) == 4:
            number = int.from_bytes(report, "little")
            answer("error exec " + errno.errorcode.get(number, "EIO"))
        else:  # runc ended before the init ran, or hangs: end it
            runc.run(["kill", runc.id, "KILL"])
            try:  # noqa: SIM105
                os.kill(started.pid, _signal.SIGKILL)
            except ProcessLookupError:
                pass
            answer("error create")
        started.release()
        _finish_runc(started.pid)
        runc.run(["delete", "-f", runc.id])
        _remove_cgroups(spec["cgroup"])
        for capture in captures:
            capture.close()
        return 0
    init = _await_pid_file(started.pid_file, started.pid)
    init_fd = None
    if init is not None:
        try:
            init_fd = os.pidfd_open(init)
        except OSError:
            init_fd = None
    begun = time.monotonic()
    _write_json(control, "supervisor.json", {
        "pid": pid, "startTicks": start, "bootId": boot, "containerId": runc.id,
        "runc": spec["runc"], "runcRoot": spec["runcRoot"], "initPid": init or 0, "cgroup": spec["cgroup"],
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
    status_fd = started.status_fd
    assert status_fd is not None
    poller.register(status_fd, select.POLLIN)
    deadlines = []
    if spec["timeoutMs"] > 0:
        deadlines.append((begun + spec["timeoutMs"] / 1000, "timeout"))
    if spec.get("deadlineEpochMs") is not None:
        deadlines.append((begun + max(spec["deadlineEpochMs"] / 1000 - time.time(), 0), "cancelled"))
    reason: str | None = None
    reported = b""
    program_status: int | None = None
    oom = False
    runc_code: int | None = None
    drain_until: float | None = None
    while True:
        code = _reap(started.pid)
        if code is not None:
            runc_code = code
        now = time.monotonic()
        if program_status is None and runc_code is None and reason is None:
            reason = "cancelled" if cancel_requested else next(
                (why for when, why in deadlines if now >= when), None
            )
            if reason is not None:
                oom = _oom_killed(spec)  # read while the cgroup exists: runc removes it
                _kill_init(init_fd, runc)
                continue
        if runc_code is not None and drain_until is None:
            drain_until = now + _DRAIN_SECONDS
        if runc_code is not None and (not by_fd or now >= (drain_until or now)):
            break
        waits = [when - now for when, _ in deadlines if program_status is None and reason is None]
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
            elif fd == status_fd and started.status_fd is not None:
                chunk = os.read(status_fd, 4 - len(reported))
                reported += chunk
                if len(reported) == 4:  # the program ended; the init holds until released
                    program_status = int.from_bytes(reported, "little")
                    oom = oom or _oom_killed(spec)
                if len(reported) == 4 or not chunk:
                    poller.unregister(status_fd)
                    started.release()
            elif fd in by_fd:
                capture = by_fd[fd]
                capture.pump()
                if not capture.open:
                    poller.unregister(fd)
                    del by_fd[fd]
    started.release()
    if init_fd is not None:
        os.close(init_fd)
    _remove_cgroups(spec["cgroup"])
    status = program_status if program_status is not None else _wait_status_of_exit_code(runc_code or 0)
    record = _status_record(reason, status, spec)
    if oom:
        record["oomKilled"] = True
    for name, capture in zip(("stdout", "stderr"), captures, strict=True):
        while capture.open and capture.pump():
            pass
        record[f"{name}Bytes"] = capture.kept
        record[f"{name}Dropped"] = capture.dropped
        capture.close()
    _write_json(control, "termination.json", record, durable=True)
    os.close(handshake)  # the provider's end-of-file signal, before this process's own exit
    return 0


def _kill_init(init_fd: int | None, runc: _Runc) -> None:
    """``SIGKILL`` to the container's init (every process of its PID namespace ends)."""
    if init_fd is not None:
        try:
            _signal.pidfd_send_signal(init_fd, _signal.SIGKILL)
            return
        except OSError:
            pass
    runc.run(["kill", runc.id, "KILL"])


def _finish_runc(pid: int) -> int:
    """Wait for the ``runc`` process ``pid`` to end; its exit code."""
    while True:
        try:
            _, status = os.waitpid(pid, 0)
        except InterruptedError:
            continue
        except ChildProcessError:
            return 0
        return os.waitstatus_to_exitcode(status)


def _launch(control: str, out: int = 1) -> None:
    """Fork the supervisor of ``control`` and relay its handshake line to ``out``."""
    path = os.path.join(control, "spec.marshal")
    with open(path, "rb") as handle:
        spec = marshal.loads(handle.read())
    os.unlink(path)
    read_end, write_end = os.pipe()
    supervisor = os.fork()
    if supervisor == 0:
        os.close(read_end)
        if out != 1:
            os.close(out)  # the handshake's reader sees its end once the launcher exits
        try:
            code = _supervise(control, spec, write_end)
        except BaseException:
            code = 70
        os._exit(code)
    os.close(write_end)
    line = b""
    while not line.endswith(b"\n") and (chunk := os.read(read_end, 4096)):
        line += chunk
    os.write(out, line or b"error supervisor\n")
    os._exit(0)


def _supervise_served(control: str, handshake: int) -> None:
    """In a child of the supervisor server: supervise ``control``, answering on
    ``handshake`` directly (no launcher: the server's ``SIGCHLD`` is ignored, so the
    supervisor is never left a zombie)."""
    os.chdir(control)
    path = os.path.join(control, "spec.marshal")
    with open(path, "rb") as handle:
        spec = marshal.loads(handle.read())
    os.unlink(path)
    try:
        code = _supervise(control, spec, handshake)
    except BaseException:
        code = 70
    os._exit(code)


_USER_NAMESPACE_REQUEST = b"\0userns "
_CLONE_NEWUSER = 0x10000000
_CLONE_NEWNET = 0x40000000


def _hold_user_namespace(request: bytes, fd: int) -> None:
    """A namespace holder (forked by the server, which runs as root): become the owner
    uid and gid named in ``request`` (``OWNER NET``), unshare a user namespace (and a
    network namespace it owns when NET is 1), write ``PID\n`` to the socket ``fd`` (or
    ``error ERRNO\n``) and hold until the requester closes its end (it maps and pins the
    namespaces meanwhile)."""
    import ctypes

    owner_text, _, network = request[len(_USER_NAMESPACE_REQUEST):].decode().partition(" ")
    owner = int(owner_text)
    try:
        os.setgroups([])
        os.setresgid(owner, owner, owner)
        os.setresuid(owner, owner, owner)
        flags = _CLONE_NEWUSER | (_CLONE_NEWNET if network == "1" else 0)
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.unshare(flags) != 0:
            raise OSError(ctypes.get_errno(), "unshare")
        os.write(fd, f"{os.getpid()}\n".encode())
    except OSError as error:
        os.write(fd, f"error {error.errno or 0}\n".encode())
        return
    while True:
        try:
            if not os.read(fd, 64):
                return
        except InterruptedError:
            continue
        except OSError:
            return


def _serve(fd: int) -> None:
    """The supervisor server: for each request on the ``SOCK_SEQPACKET`` socket ``fd`` (a
    control directory's path with one descriptor, the handshake pipe's write end) fork the
    process's supervisor (:func:`_supervise_served`); for a user namespace request
    (``\\0userns OWNER NET`` with one end of a socket pair) fork a holder that runs
    :func:`_hold_user_namespace`. End at the socket's end of file (the provider's process
    closed its end, or died)."""
    import ctypes  # every supervisor needs it (the subreaper): imported once, here
    import socket

    ctypes.CDLL(None, use_errno=True)
    server = socket.socket(fileno=fd)
    _signal.signal(_signal.SIGCHLD, _signal.SIG_IGN)  # its children are reaped by the kernel
    while True:
        try:
            message, fds, _flags, _address = socket.recv_fds(server, 4096, 1)
        except InterruptedError:
            continue
        except OSError:
            break
        if not message:
            for extra in fds:
                os.close(extra)
            break
        if len(fds) != 1:
            for extra in fds:
                os.close(extra)
            continue
        launcher = os.fork()
        if launcher == 0:
            try:
                server.close()
                _signal.signal(_signal.SIGCHLD, _signal.SIG_DFL)
                if message.startswith(_USER_NAMESPACE_REQUEST):
                    _hold_user_namespace(message, fds[0])
                    os._exit(0)
                _supervise_served(os.fsdecode(message), fds[0])
            finally:
                os._exit(0)
        os.close(fds[0])


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[-2] == "--serve":
        _serve(int(sys.argv[-1]))
    elif len(sys.argv) > 4 and sys.argv[-4] == "--hold-user-namespace":  # OWNER NET FD
        _hold_user_namespace(_USER_NAMESPACE_REQUEST + " ".join(sys.argv[-3:-1]).encode(), int(sys.argv[-1]))
    else:
        _launch(sys.argv[-1])
