"""An environment's root file system: the image's read-only root under a fresh writable layer.

``layer/`` is a tmpfs of ``diskMb`` (so the kernel bounds everything the environment's
processes, and :meth:`~.OciExactProcessEnvironment.write_file`, can ever write);
``rootfs/`` is an overlay of the image's ``rootfs`` (lower, never written) and
``layer/upper``. Where overlay is not available the image is copied into the tmpfs
instead (the copy then counts against ``diskMb``). The writable layer's root belongs to
the container's root user (host ``id_base``), so container root owns ``/`` and nothing
of the host.
"""

from __future__ import annotations

import ctypes
import errno
import os
import subprocess
from pathlib import Path
from typing import Final

from agent_interface.core.errors import ContractError
from agent_interface.evaluator.images.tree_removal import remove_tree

__all__ = [
    "environment_init",
    "mount_environment_root",
    "mount_scratch_tmpfs",
    "overlay_available",
    "unmount_environment_root",
    "unmount_scratch_tmpfs",
]

_MS_NOSUID: Final = 2
_MS_NODEV: Final = 4
_MNT_DETACH: Final = 2
_UNSAFE_IN_OPTIONS: Final = frozenset(",:\\\n")
_INIT: Final = "init"


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mount.argtypes = (ctypes.c_char_p,) * 3 + (ctypes.c_ulong, ctypes.c_char_p)
    libc.umount2.argtypes = (ctypes.c_char_p, ctypes.c_int)
    return libc


def _mount(source: str, target: Path, fstype: str, flags: int, data: str) -> None:
    if _libc().mount(source.encode(), os.fsencode(target), fstype.encode(), flags, data.encode()) != 0:
        number = ctypes.get_errno()
        raise OSError(number, os.strerror(number), str(target))


def _unmount(target: Path) -> None:
    libc = _libc()
    if libc.umount2(os.fsencode(target), 0) == 0:
        return
    number = ctypes.get_errno()
    if number == errno.EINVAL:  # not a mount point
        return
    if libc.umount2(os.fsencode(target), _MNT_DETACH) != 0 and ctypes.get_errno() != errno.EINVAL:
        raise OSError(ctypes.get_errno(), "umount2", str(target))


def _option_path(path: Path) -> str:
    text = str(path)
    if any(character in _UNSAFE_IN_OPTIONS for character in text):
        raise ContractError.single(
            "/", "exact_process_root_path", "a root file system path holds a character overlay cannot name"
        )
    return text


def _overlay(lower: Path, layer: Path, target: Path) -> None:
    """Mount the overlay naming its directories as ``/proc/self/fd/N``: overlay shows its
    options in every ``mountinfo``, the container's own included, and these name no host path."""
    names = (_option_path(lower), _option_path(layer / "upper"), _option_path(layer / "work"))
    fds: list[int] = []
    try:
        for name in names:
            fds.append(os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC))
        lowerdir, upperdir, workdir = (f"/proc/self/fd/{fd}" for fd in fds)
        _mount("overlay", target, "overlay", _MS_NOSUID,
               f"lowerdir={lowerdir},upperdir={upperdir},workdir={workdir}")
    finally:
        for fd in fds:
            os.close(fd)


def environment_init(directory: Path) -> Path | None:
    """The environment's own copy of the containers' init (see :func:`mount_environment_root`),
    or ``None`` for a root mounted without one."""
    path = directory / "layer" / _INIT
    return path if path.is_file() else None


def mount_environment_root(
    directory: Path, image_rootfs: Path, *, disk_mb: int, id_base: int | None, overlay: bool,
    init: Path | None = None,
) -> Path:
    """Mount ``directory/layer`` and ``directory/rootfs``; the root file system's path.

    With ``init`` (the containers' init program), a root-owned, read-only copy is written to
    the layer's tmpfs (a few hundred bytes): bound from there into a container, its
    ``mountinfo`` names ``/init`` of a tmpfs, not the provider's host directory.
    """
    owner = 0 if id_base is None else id_base
    layer, rootfs = directory / "layer", directory / "rootfs"
    layer.mkdir(mode=0o700, exist_ok=True)
    rootfs.mkdir(mode=0o755, exist_ok=True)
    _mount("tmpfs", layer, "tmpfs", _MS_NOSUID | _MS_NODEV, f"size={disk_mb}m,mode=0711")
    try:
        if init is not None:
            handle = os.open(layer / _INIT, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o555)
            try:
                os.write(handle, init.read_bytes())
            finally:
                os.close(handle)
        lower_mode = image_rootfs.stat().st_mode & 0o7777
        if overlay:
            for name in ("upper", "work"):
                (layer / name).mkdir(mode=0o700)
            os.chown(layer / "upper", owner, owner)
            os.chmod(layer / "upper", lower_mode)
            _overlay(image_rootfs, layer, rootfs)
        else:
            copy = layer / "root"
            subprocess.run(
                ["cp", "-a", "--", f"{image_rootfs}/.", str(copy)],
                check=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )
            os.chown(copy, owner, owner)
            _mount(str(copy), rootfs, "", 4096 | 16384, "")  # MS_BIND | MS_REC
    except BaseException:
        _unmount(layer)
        raise
    return rootfs


def unmount_environment_root(directory: Path) -> None:
    """Unmount what :func:`mount_environment_root` mounted and delete the directory."""
    for name in ("rootfs", "layer"):
        if (directory / name).exists():
            _unmount(directory / name)
    remove_tree(directory, ignore_errors=True)


def overlay_available(scratch: Path) -> bool:
    """Whether an overlay of a directory under a tmpfs mounts here (tried in ``scratch``)."""
    lower, layer, target = scratch / "lower", scratch / "layer", scratch / "merged"
    for path in (lower, layer, target):
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        _mount("tmpfs", layer, "tmpfs", _MS_NOSUID | _MS_NODEV, "size=1m,mode=0700")
        (layer / "upper").mkdir()
        (layer / "work").mkdir()
        _overlay(lower, layer, target)
    except (OSError, ContractError):
        return False
    finally:
        _unmount(target)
        _unmount(layer)
        remove_tree(scratch, ignore_errors=True)
    return True


def mount_scratch_tmpfs(directory: Path, *, size_mb: int) -> bool:
    """Mount a private tmpfs of at most ``size_mb`` on the existing ``directory`` (mode
    0700, ``nosuid``, ``nodev``), for state that must not outlive its user (no ``fsync``
    reaches a disk there); ``False`` when it cannot be mounted here."""
    try:
        _mount("tmpfs", directory, "tmpfs", _MS_NOSUID | _MS_NODEV, f"size={size_mb}m,mode=0700")
    except OSError:
        return False
    return True


def unmount_scratch_tmpfs(directory: Path) -> None:
    """Unmount :func:`mount_scratch_tmpfs`'s tmpfs (lazily when busy; nothing when none)."""
    _unmount(directory)
