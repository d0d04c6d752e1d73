"""An environment's directories, its files on a size-capped tmpfs: ``diskMb`` as a total.

:func:`make_environment_directories` makes ``environments/<id>`` with ``fs`` (the files)
and the environment's control directory; :func:`remove_environment_directories` undoes it.

The local provider mounts a tmpfs of ``diskMb`` MiB, owned by the environment's uid,
over the environment's file directory when it creates the environment (in the host's
mount namespace, so every process of the environment and every provider object sees
the same files), and detaches it when it destroys the environment. Everything written
there (by the program or by ``write_file``) counts against the one cap; a write past it
fails with ``ENOSPC``. The pages are memory, not disk: a host running many environments
needs the memory for their ``diskMb`` beside their ``memoryMb``. A tmpfs does not
survive a reboot: :func:`is_mounted` tells the provider that an environment's files
are gone.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import uuid
from pathlib import Path
from typing import Final

from agent_interface.evaluator.images.tree_removal import remove_tree

__all__ = [
    "is_mounted",
    "make_environment_directories",
    "mount_size_capped",
    "remove_environment_directories",
    "size_capped_mounts_work",
    "unmount",
]

_MS_NOSUID: Final = 2
_MS_NODEV: Final = 4
_MNT_DETACH: Final = 2


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mount.argtypes = (ctypes.c_char_p,) * 3 + (ctypes.c_ulong, ctypes.c_char_p)
    libc.umount2.argtypes = (ctypes.c_char_p, ctypes.c_int)
    return libc


def mount_size_capped(path: str | os.PathLike[str], size_mb: int, uid: int) -> None:
    """Mount a tmpfs of ``size_mb`` MiB at ``path`` (mode 0700, owned by ``uid``:``uid``)."""
    options = f"size={int(size_mb)}m,mode=0700,uid={int(uid)},gid={int(uid)}".encode()
    target = os.fsencode(os.fspath(path))
    if _libc().mount(b"tmpfs", target, b"tmpfs", _MS_NOSUID | _MS_NODEV, options) != 0:
        number = ctypes.get_errno()
        raise OSError(number, os.strerror(number))


def unmount(path: str | os.PathLike[str]) -> None:
    """Detach whatever is mounted at ``path`` (nothing if nothing is)."""
    target = os.fsencode(os.fspath(path))
    while os.path.ismount(target):
        if _libc().umount2(target, _MNT_DETACH) != 0:
            number = ctypes.get_errno()
            raise OSError(number, os.strerror(number))


def is_mounted(path: str | os.PathLike[str]) -> bool:
    """Whether a file system is mounted at ``path``."""
    return os.path.ismount(path)


def size_capped_mounts_work(scratch: str | os.PathLike[str]) -> bool:
    """Whether a size-capped tmpfs can be mounted here (tried in ``scratch``, then undone)."""
    probe = Path(scratch) / f".disk-probe-{uuid.uuid4().hex}"
    probe.mkdir(mode=0o700)
    try:
        mount_size_capped(probe, 1, os.getuid())
    except OSError:
        return False
    finally:
        with contextlib.suppress(OSError):
            unmount(probe)
        with contextlib.suppress(OSError):
            probe.rmdir()
    return True


def make_environment_directories(directory: Path, control: Path, uid: int, disk_mb: int) -> None:
    """The environment's files (``directory/fs``: a tmpfs of ``disk_mb`` owned by its
    programs' uid) and its ``control`` directory (the provider's alone, outside anything a
    program sees). Idempotent: a create resumed after a crash mounts nothing twice."""
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    files = directory / "fs"
    files.mkdir(mode=0o700, exist_ok=True)
    if not is_mounted(files):
        mount_size_capped(files, disk_mb, uid)
    control.parent.mkdir(mode=0o700, exist_ok=True)
    control.mkdir(mode=0o700, exist_ok=True)


def remove_environment_directories(directory: Path, control: Path) -> None:
    """Detach the environment's tmpfs, then delete ``directory`` and ``control``."""
    unmount(directory / "fs")
    for tree in (directory, control):
        remove_tree(tree)
