"""One long-lived supervisor server per OS process: a spawn forks, it does not start Python.

Starting a fresh interpreter for every container process cost more than ``runc`` itself
on a loaded machine (40–110 ms of a 150 ms spawn). :class:`SupervisorServer` starts
:mod:`._oci_supervisor` once, as ``--serve FD`` (isolated mode, empty environment, its own
session, no descriptor of ours but one end of a ``SOCK_SEQPACKET`` socket pair), and
:meth:`SupervisorServer.launch` sends it a control directory with the write end of a
fresh pipe: the server forks the process's supervisor, which writes its one-line
handshake into that pipe and keeps it open until it ends (its end of file says the
process's records are written).

What stays as it was: each process has its own supervisor on the host (its own session,
a subreaper, outside every container), its evidence in its control directory, and a
supervisor outlives the provider's OS process, so a ``kill -9`` of the evaluator is
recovered as before. The server itself holds nothing of any process: it ends at the end
of file of its socket, i.e. when this process closes its end or dies (the end is never
inherited by another program: close-on-exec). One server serves every provider object
of this OS process (a forked child starts its own).
"""

from __future__ import annotations

import array
import asyncio
import contextlib
import errno
import os
import socket
import subprocess
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Final

from agent_interface.evaluator.process.control_directory import handshake_result, supervisor_boot

__all__ = [
    "SUPERVISOR_SCRIPT", "SupervisorServer", "UserNamespaceHolder", "server_enabled", "shared_supervisor_server",
]

SUPERVISOR_SCRIPT: Final = str(Path(__file__).with_name("_oci_supervisor.py"))
"""The standalone supervisor script (run by this interpreter, isolated mode)."""

_MAX_LINE: Final = 4096


class SupervisorServer:
    """The client of one supervisor server (started on first use, again if it ended)."""

    def __init__(self, script: str) -> None:
        self._script = script
        self._guard = threading.Lock()
        self._socket: socket.socket | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._pid = os.getpid()

    def _start(self) -> socket.socket:
        ours, process = _run_script(self._script, socket.SOCK_SEQPACKET, "--serve")
        self._socket, self._process = ours, process
        return ours

    def _connected(self) -> socket.socket:
        with self._guard:
            if self._pid != os.getpid():  # a forked child: the parent's server stays the parent's
                self._socket, self._process, self._pid = None, None, os.getpid()
            if self._socket is None or (self._process is not None and self._process.poll() is not None):
                self.close_locked()
                return self._start()
            return self._socket

    def _send_now(self, message: bytes, fd: int) -> bool:
        """Send without blocking to a server that is running (from the event loop: no
        worker thread); ``False`` when that cannot be done (:meth:`_send` then does it)."""
        with self._guard:
            if self._pid != os.getpid() or self._socket is None:
                return False
            if self._process is not None and self._process.poll() is not None:
                return False
            connection = self._socket
        rights = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [fd]).tobytes())]
        try:
            connection.sendmsg([message], rights, socket.MSG_DONTWAIT)
        except OSError:
            return False
        return True

    def _send(self, message: bytes, fd: int) -> None:
        rights = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [fd]).tobytes())]
        for attempt in (0, 1):
            connection = self._connected()
            try:
                connection.sendmsg([message], rights)
                return
            except OSError:
                if attempt:
                    raise
                with self._guard:
                    self.close_locked()

    async def launch(self, control: Path, *, handshake_seconds: float,
                     cleanup: Callable[[], Awaitable[None]]) -> tuple[str | None, int | None]:
        """Start the supervisor of ``control`` and read its handshake: ``(None, fd)`` for
        ``ok``, where ``fd`` is the read end of the handshake pipe, which reaches its end
        of file when the supervisor ends (the caller owns it); else ``(the word after
        error, None)`` (``"supervisor"`` when there is none).

        If no handshake comes in ``handshake_seconds``, or this call is cancelled once the
        request went out, the handshake is awaited once more (bounded) and ``cleanup()``
        runs, shielded, before the refusal or the cancellation goes on."""
        read_end, write_end = os.pipe2(os.O_CLOEXEC)
        sent = False
        try:
            try:
                if not self._send_now(os.fsencode(control), write_end):
                    await asyncio.to_thread(self._send, os.fsencode(control), write_end)
                sent = True
            finally:
                os.close(write_end)
            line = await _read_line(read_end, handshake_seconds)
            if not line.endswith(b"\n"):
                raise TimeoutError
        except BaseException as error:
            if sent:
                await asyncio.shield(_after(read_end, handshake_seconds, cleanup))
            else:
                os.close(read_end)
            if isinstance(error, TimeoutError):
                return "supervisor", None
            raise
        result = handshake_result(line)
        if result is not None:
            os.close(read_end)
            return result, None
        return None, read_end

    def request_user_namespace(self, owner: int, *, network: bool) -> socket.socket:
        """Ask for a namespace holder (see :class:`UserNamespaceHolder`); the socket its
        pid comes on, which keeps it holding until closed."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self._send(b"\0userns %d %d" % (owner, int(network)), theirs.fileno())
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        return ours

    def close_locked(self) -> None:
        """End the server (its socket closed: it exits); the caller holds the guard."""
        if self._socket is not None:
            self._socket.close()
        if self._process is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._process.wait(timeout=5)
        self._socket, self._process = None, None

    def close(self) -> None:
        """End the server; a later launch starts another."""
        with self._guard:
            self.close_locked()


async def _after(fd: int, seconds: float, cleanup: Callable[[], Awaitable[None]]) -> None:
    """Wait for the supervisor's answer (or its end; bounded), then ``cleanup()``."""
    try:
        await _read_line(fd, seconds)
    finally:
        os.close(fd)
    await cleanup()


async def _read_line(fd: int, seconds: float) -> bytes:
    """What is written to the pipe ``fd`` up to a newline or its end of file, within
    ``seconds``; bounded to a few KiB."""
    loop = asyncio.get_running_loop()
    data = bytearray()
    done: asyncio.Future[None] = loop.create_future()
    os.set_blocking(fd, False)

    def readable() -> None:
        try:
            chunk = os.read(fd, _MAX_LINE)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if len(data) < _MAX_LINE:
            data.extend(chunk)
        ended = not chunk or b"\n" in data or len(data) >= _MAX_LINE
        if ended and not done.done():
            done.set_result(None)

    loop.add_reader(fd, readable)
    try:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(done, seconds)
    finally:
        loop.remove_reader(fd)
    return bytes(data)


def server_enabled() -> bool:
    """Whether supervisors and namespace holders are forked by the supervisor server
    (``AGENT_INTERFACE_SUPERVISOR_SERVER=0``: a fresh interpreter each)."""
    return os.environ.get("AGENT_INTERFACE_SUPERVISOR_SERVER", "1") != "0"


def _run_script(
    script: str, kind: socket.SocketKind, *arguments: str
) -> tuple[socket.socket, subprocess.Popen[bytes]]:
    """Start ``script`` on this interpreter (isolated mode, empty environment, its own
    session) with ``arguments`` and the descriptor of one end of a new socket pair of
    ``kind`` last; the other end, and the process."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, kind)
    try:
        command, code = supervisor_boot(script)
        process = subprocess.Popen(
            [*command, *arguments, str(theirs.fileno())],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env={}, cwd="/", start_new_session=True, pass_fds=(theirs.fileno(),),
        )
        assert process.stdin is not None
        process.stdin.write(code)
        process.stdin.close()
    except BaseException:
        ours.close()
        raise
    finally:
        theirs.close()
    return ours, process


class UserNamespaceHolder:
    """A process that runs as host uid ``owner`` in a new user namespace it made (and a
    network namespace that one owns, with ``network``), asked for at construction and
    held until :meth:`close` (map and pin its namespaces meanwhile): forked by this OS
    process's supervisor server, or a fresh interpreter when
    ``AGENT_INTERFACE_SUPERVISOR_SERVER=0``. The caller may do other work before
    :meth:`pid`, which waits for it (``OSError`` when it could not be made)."""

    def __init__(self, owner: int, *, network: bool, seconds: float) -> None:
        self._seconds = seconds
        self._process: subprocess.Popen[bytes] | None = None
        if server_enabled():
            self._connection = shared_supervisor_server().request_user_namespace(owner, network=network)
            return
        self._connection, self._process = _run_script(
            SUPERVISOR_SCRIPT, socket.SOCK_STREAM, "--hold-user-namespace", str(owner), str(int(network)),
        )

    def pid(self) -> int:
        """The holder's pid, once its namespaces exist."""
        self._connection.settimeout(self._seconds)
        line = b""
        while not line.endswith(b"\n") and len(line) < 64:
            chunk = self._connection.recv(64 - len(line))
            if not chunk:
                break
            line += chunk
        word, _, detail = line.strip().partition(b" ")
        if word == b"error" and detail.isdigit():
            raise OSError(int(detail), f"the namespace holder could not be made: {os.strerror(int(detail))}")
        if not word.isdigit():
            raise OSError(errno.EPERM, "the namespace holder ended before it was made")
        return int(word)

    def close(self) -> None:
        """Let the holder end (the namespaces live on where they were pinned)."""
        with contextlib.suppress(OSError):
            self._connection.shutdown(socket.SHUT_RDWR)
        self._connection.close()
        if self._process is not None:
            try:
                self._process.wait(self._seconds)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()

    def __enter__(self) -> UserNamespaceHolder:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


_SHARED: dict[str, SupervisorServer] = {}
_SHARED_GUARD = threading.Lock()


def shared_supervisor_server(script: str = SUPERVISOR_SCRIPT) -> SupervisorServer:
    """This OS process's server for ``script`` (made on first use)."""
    with _SHARED_GUARD:
        server = _SHARED.get(script)
        if server is None:
            server = _SHARED[script] = SupervisorServer(script)
        return server
