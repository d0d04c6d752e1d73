"""An environment's user namespace, owned by an unprivileged host uid of its own.

The kernel charges several per-user limits of a process in a user namespace to the
namespace's *owner* in the parent namespace: ``fs.inotify.max_user_instances`` (128)
and ``max_user_watches``, ``user.max_*`` counts (namespaces, mqueue bytes, ...). When
``runc`` creates the user namespace, its owner is host root, so a container that holds
127 inotify instances makes every host-root ``inotify_init`` fail. Here the namespace is
created by a process running as :func:`environment_owner` (a uid no one else uses, one
per environment), pinned by a bind mount at a file (as :mod:`.network_namespace` pins a
network namespace) and joined by ``runc`` by path (``linux.namespaces`` user ``path``):
what a container spends of those limits is its environment's owner's, not the host's nor
another environment's.

The namespace maps container ids ``0 .. size-1`` to host ``id_base ..`` exactly as the
runtime configuration's ``uidMappings``/``gidMappings`` say (written by host root, which
may map any range). The namespace is made by a holder the supervisor server forks
(:class:`.supervisor_server.UserNamespaceHolder`: no program is started, so it costs a
``fork``, and it can be asked for before the caller mounts the environment's root), bounded in time; :func:`create_user_namespace` raises ``OSError``
where it cannot (the provider then lets ``runc`` create a root-owned namespace, as
before).

``runc`` (1.1) cannot set a container's rlimits on a process in a namespace the host root
does not own (``prlimit`` is refused): with a pinned namespace the rlimits are set on
``runc`` itself and inherited (see :func:`.runtime_config.runtime_config`).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import zlib
from pathlib import Path
from typing import Final

from agent_interface.evaluator.container.supervisor_server import UserNamespaceHolder

__all__ = [
    "OWNER_BASE", "OWNER_SPAN", "create_user_namespace", "environment_owner", "remove_user_namespace",
    "request_user_namespace",
]

OWNER_BASE: Final = 3_000_000_000
"""The first host uid owners are drawn from (far above any account or container range)."""
OWNER_SPAN: Final = 1 << 24
"""How many owner uids there are; an environment's is chosen by a hash of its id."""
_MS_BIND: Final = 4096
_MNT_DETACH: Final = 2
_SECONDS: Final = 10.0


def environment_owner(environment_id: str) -> int:
    """The unprivileged host uid (and gid) that owns the environment's user namespace."""
    return OWNER_BASE + zlib.crc32(environment_id.encode()) % OWNER_SPAN


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mount.argtypes = (ctypes.c_char_p,) * 3 + (ctypes.c_ulong, ctypes.c_char_p)
    libc.umount2.argtypes = (ctypes.c_char_p, ctypes.c_int)
    return libc


def request_user_namespace(owner: int, *, network: bool) -> UserNamespaceHolder:
    """Ask now for the holder :func:`create_user_namespace` maps and pins (it is made
    while the caller does other work; close it if it is not used)."""
    return UserNamespaceHolder(owner, network=network, seconds=_SECONDS)


def create_user_namespace(
    path: Path, owner: int, id_base: int, size: int, *, network: Path | None = None,
    holder: UserNamespaceHolder | None = None,
) -> None:
    """A user namespace owned by host uid ``owner``, mapping ``0..size-1`` to ``id_base..``,
    pinned at ``path`` (a new file); ``OSError`` when it cannot be made here.

    With ``network``, a new network namespace owned by that user namespace is made with it
    and pinned at ``network`` (a container in the user namespace may join only a network
    namespace it owns; bring its loopback up with
    :func:`.network_namespace.loopback_up_in_namespace`). ``holder`` is one asked for
    earlier with :func:`request_user_namespace` (same owner and network); it is closed."""
    with holder or request_user_namespace(owner, network=network is not None) as held:
        pid = held.pid()
        for name in ("uid_map", "gid_map"):
            with open(f"/proc/{pid}/{name}", "w", encoding="ascii") as handle:
                handle.write(f"0 {id_base} {size}\n")
        pins = [(path, "user")] + ([] if network is None else [(network, "net")])
        for pin, kind in pins:
            fd = os.open(pin, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
            os.close(fd)
            source = f"/proc/{pid}/ns/{kind}".encode()
            if _libc().mount(source, os.fsencode(pin), None, _MS_BIND, None) != 0:
                number = ctypes.get_errno()
                for made, _ in pins:
                    remove_user_namespace(made)
                raise OSError(number, f"bind mount of the {kind} namespace: {os.strerror(number)}")


def remove_user_namespace(path: Path) -> None:
    """Unpin the namespace at ``path`` (lazy unmount) and delete the file; nothing if absent."""
    libc = _libc()
    while os.path.ismount(path):
        if libc.umount2(os.fsencode(path), _MNT_DETACH) != 0:
            break
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
