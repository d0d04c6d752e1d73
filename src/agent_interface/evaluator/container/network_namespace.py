"""The network namespace of a strict-egress environment, and its proxy's listening socket.

A ``strict`` environment's containers all join one network namespace the provider made
for it (runc's ``linux.namespaces`` network ``path``), pinned by a bind mount of its
``nsfs`` file at ``<environment>/netns``. It has loopback only (brought up here: runc
does not configure a namespace it joins) and no route. The provider's proxy listens on
``127.0.0.1:PORT`` *inside* it: :func:`listen_in_namespace` creates the socket on a
dedicated thread that ``setns``-ed into the namespace (a socket belongs for life to the
namespace it was made in), so the program reaches the proxy by TCP with no forwarder
process and no Python in the image, while the proxy itself runs on the host.

Every operation runs on a fresh thread that exits afterwards: ``unshare`` and ``setns``
move only the calling thread, never the caller's own thread or a pooled one. Python 3.11
has no ``os.setns``/``os.unshare``: ``libc`` is called through ``ctypes``.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import os
import socket
import struct
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Final, TypeVar

__all__ = [
    "create_network_namespace",
    "listen_in_namespace",
    "namespace_identity",
    "reachable_in_namespace",
    "remove_network_namespace",
]

T = TypeVar("T")

CLONE_NEWNET: Final = 0x40000000
_MS_BIND: Final = 4096
_MNT_DETACH: Final = 2
_SIOCGIFFLAGS: Final = 0x8913
_SIOCSIFFLAGS: Final = 0x8914
_IFF_UP: Final = 0x1
_THREAD_SECONDS: Final = 30.0
_LISTEN_BACKLOG: Final = 1024


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"{what}: {os.strerror(code)}")


def _on_own_thread(operation: Callable[[], T]) -> T:
    """``operation()`` on a new thread (which may change its namespace and then ends)."""
    result: list[T] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            result.append(operation())
        except BaseException as error:  # re-raised in the caller
            failure.append(error)

    thread = threading.Thread(target=run, name="netns", daemon=True)
    thread.start()
    thread.join(_THREAD_SECONDS)
    if thread.is_alive():
        raise OSError(errno.ETIMEDOUT, "the network namespace operation did not finish")
    if failure:
        raise failure[0]
    return result[0]


def _loopback_up() -> None:
    """Set ``lo`` up in the calling thread's network namespace."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(sock, _SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(sock, _SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags | _IFF_UP))


def create_network_namespace(path: Path) -> None:
    """A new network namespace with loopback up, pinned at ``path`` (a new empty file)."""

    def make() -> None:
        libc = _libc()
        _check(libc.unshare(CLONE_NEWNET), "unshare(CLONE_NEWNET)")
        _loopback_up()
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        os.close(fd)
        source = f"/proc/self/task/{threading.get_native_id()}/ns/net".encode()
        try:
            _check(libc.mount(source, str(path).encode(), None, _MS_BIND, None), "bind mount")
        except OSError:
            path.unlink()
            raise

    _on_own_thread(make)


def listen_in_namespace(path: Path, port: int) -> socket.socket:
    """A TCP socket listening on ``127.0.0.1:port`` inside the namespace pinned at ``path``
    (close-on-exec, non-blocking, ready for ``asyncio.start_server(sock=...)``)."""

    def bind() -> socket.socket:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        try:
            _check(_libc().setns(fd, CLONE_NEWNET), "setns")
        finally:
            os.close(fd)
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            sock.bind(("127.0.0.1", port))
            sock.listen(_LISTEN_BACKLOG)
        except OSError:
            sock.close()
            raise
        sock.setblocking(False)
        return sock

    return _on_own_thread(bind)


def namespace_identity(path: str | os.PathLike[str]) -> tuple[int, int]:
    """``(device, inode)`` of a namespace file: equal for the same namespace."""
    status = os.stat(path)
    return status.st_dev, status.st_ino


def remove_network_namespace(path: Path) -> None:
    """Unpin the namespace at ``path`` (lazy unmount) and delete the file; nothing if absent.

    The namespace itself ends once no process, socket or mount holds it."""
    if not path.exists():
        return
    _libc().umount2(str(path).encode(), _MNT_DETACH)
    with contextlib.suppress(FileNotFoundError):
        path.unlink()


def reachable_in_namespace(path: Path, port: int) -> bool:
    """Whether ``127.0.0.1:port`` accepts a TCP connection inside the namespace at
    ``path`` (the provider's probe: loopback is up and the listener is there)."""

    def connect() -> bool:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        try:
            _check(_libc().setns(fd, CLONE_NEWNET), "setns")
        finally:
            os.close(fd)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.settimeout(5)
            return sock.connect_ex(("127.0.0.1", port)) == 0

    return _on_own_thread(connect)


def loopback_up_in_namespace(path: Path) -> None:
    """Set ``lo`` up in the network namespace pinned at ``path`` (one made elsewhere, e.g.
    with an environment's own user namespace by :mod:`.user_namespace`)."""

    def up() -> None:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        try:
            _check(_libc().setns(fd, CLONE_NEWNET), "setns")
        finally:
            os.close(fd)
        _loopback_up()

    _on_own_thread(up)
