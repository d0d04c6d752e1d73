"""Remove a directory tree of any depth without recursion and without following a link.

:func:`remove_tree` replaces ``shutil.rmtree`` wherever a tree may hold what a hostile image or
a candidate wrote (unpacked roots, overlay upper directories, scratch directories). It
works on directory descriptors only:

* every directory is opened from its parent's descriptor with ``O_NOFOLLOW | O_DIRECTORY``
  and its entries are removed with ``unlinkat`` / ``rmdir`` relative to that descriptor, so
  a symbolic link (planted before or swapped in during the removal) is removed as a link,
  never followed, and nothing outside the tree is touched;
* there is no recursion: a loop walks an explicit stack, so a 100,000-level tree (paths far
  longer than ``PATH_MAX``) is removed like a flat one;
* at most :data:`MAX_OPEN_DIRECTORIES` descriptors are open at once: a directory deeper than
  that is renamed (same file system, one ``renameat``) to the top of the tree and removed
  from there later, which flattens any depth in linear work and never climbs through ``..``;
* it never crosses into another file system: a mount point met inside the tree is left
  (with what leads to it) and the removal fails with ``EBUSY`` (:func:`detach_mounts_below`
  detaches them first, where the caller may);
* a directory the remover may not write or search (modes of an unpacked image, ``0o000``
  overlay work directories) is given ``0o700`` through its descriptor before it is emptied,
  so an unprivileged owner removes what it owns.

A failure is an ``OSError`` naming no path below the top (callers that clean up best effort
catch ``OSError``; never ``RecursionError``).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from dataclasses import dataclass, field
from typing import Final

__all__ = ["MAX_OPEN_DIRECTORIES", "detach_mounts_below", "remove_tree", "remove_tree_at"]

MAX_OPEN_DIRECTORIES: Final = 32
_DIR_FLAGS: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_PATH_FLAGS: Final = os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass(slots=True)
class _Frame:
    fd: int
    name: str  # this directory's name in the frame below (unused for the top)
    pending: list[str] = field(default_factory=list)


def _names(fd: int) -> list[str]:
    with os.scandir(fd) as entries:
        return [entry.name for entry in entries]


def _open_directory(parent: int, name: str) -> int | None:
    """A descriptor of directory ``name`` under ``parent``; ``None`` if it is not one (any more)."""
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=parent)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as error:
        if error.errno == errno.ELOOP:
            return None  # swapped for a link meanwhile: the caller unlinks it
        if error.errno not in (errno.EACCES, errno.EPERM):
            raise
    _grant(parent, name)
    return os.open(name, _DIR_FLAGS, dir_fd=parent)


def _grant(parent: int, name: str) -> None:
    """Give directory ``name`` mode 0o700 through an ``O_PATH`` descriptor (never a link's target)."""
    handle = os.open(name, _PATH_FLAGS, dir_fd=parent)
    try:
        if not stat.S_ISDIR(os.fstat(handle).st_mode):
            raise OSError(errno.ENOTDIR, "not a directory")
        os.chmod(f"/proc/self/fd/{handle}", 0o700)
    finally:
        os.close(handle)


def _unlink(fd: int, name: str, *, inside: bool = True) -> bool:
    """Unlink ``name`` if it is not a directory; ``True`` when it is a directory (or gone: False).

    ``inside``: ``fd`` is a directory of the tree, whose mode the remover may change.
    """
    for attempt in (0, 1 if inside else 0):
        try:
            os.unlink(name, dir_fd=fd)
            return False
        except FileNotFoundError:
            return False
        except IsADirectoryError:
            return True
        except PermissionError:
            if attempt or not inside:
                raise
            os.fchmod(fd, 0o700)  # our own read-only directory: make it writable, then retry
    return False  # pragma: no cover - the loop returns or raises


def _rmdir(fd: int, name: str, *, inside: bool = True) -> None:
    for attempt in (0, 1 if inside else 0):
        try:
            os.rmdir(name, dir_fd=fd)
            return
        except FileNotFoundError:
            return
        except PermissionError:
            if attempt or not inside:
                raise
            os.fchmod(fd, 0o700)


def _empty(top: int) -> None:
    """Remove everything below the directory ``top`` (left open, left empty)."""
    device = os.fstat(top).st_dev
    stack = [_Frame(top, "", _names(top))]
    moved = 0
    while stack:
        frame = stack[-1]
        if not frame.pending:
            if len(stack) == 1:
                frame.pending = _names(top)  # directories moved up from too deep
                if not frame.pending:
                    return
                continue
            stack.pop()
            os.close(frame.fd)
            _rmdir(stack[-1].fd, frame.name)
            continue
        name = frame.pending.pop()
        if not _unlink(frame.fd, name):
            continue
        if len(stack) >= MAX_OPEN_DIRECTORIES:
            moved = _move_to_top(frame.fd, name, top, moved)
            continue
        child = _open_directory(frame.fd, name)
        if child is None:
            frame.pending.append(name)  # replaced by a non-directory meanwhile: unlink it
            continue
        try:
            if os.fstat(child).st_dev != device:
                raise OSError(errno.EBUSY, "a mount point inside the tree is left as it is")
            pending = _names(child)
        except BaseException:
            os.close(child)
            raise
        stack.append(_Frame(child, name, pending))


def _move_to_top(parent: int, name: str, top: int, moved: int) -> int:
    """Rename directory ``name`` to a fresh name directly under ``top``; the next counter."""
    granted = False
    while True:
        moved += 1
        target = f".rm-{moved}-{os.urandom(4).hex()}"
        try:
            os.rename(name, target, src_dir_fd=parent, dst_dir_fd=top)
            return moved
        except FileNotFoundError:
            return moved
        except OSError as error:
            if error.errno in (errno.EEXIST, errno.ENOTEMPTY, errno.ENOTDIR, errno.EISDIR):
                continue
            if error.errno not in (errno.EACCES, errno.EPERM) or granted:
                raise
        granted = True  # our own read-only directories: make them writable, then retry
        os.fchmod(parent, 0o700)
        os.fchmod(top, 0o700)
        _grant(parent, name)


def remove_tree_at(parent: int, name: str) -> None:
    """Remove ``name`` under the directory descriptor ``parent``, whatever it is.

    A file or a link is unlinked (a link's target is never touched); a directory is emptied
    without recursion and removed. A missing ``name`` is not an error.
    """
    if not _unlink(parent, name, inside=False):
        return
    top = _open_directory(parent, name)
    if top is None:
        remove_tree_at(parent, name)  # it stopped being a directory: unlink it now
        return
    try:
        _empty(top)
    finally:
        os.close(top)
    _rmdir(parent, name, inside=False)


def remove_tree(path: str | os.PathLike[str], *, ignore_errors: bool = False) -> None:
    """Remove the tree at ``path`` (its last component is never followed if it is a link).

    The parent directory is resolved as an ordinary path (it is the caller's); below it,
    see the module docstring. A missing ``path`` is not an error; with ``ignore_errors``
    no ``OSError`` is raised either (what could not be removed stays).
    """
    text = os.fspath(path)
    head, tail = os.path.split(text.rstrip("/") or "/")
    if tail in ("", ".", ".."):
        raise ValueError("remove_tree needs a path naming an entry")
    try:
        parent = os.open(head or ".", _DIR_FLAGS & ~os.O_NOFOLLOW)
    except FileNotFoundError:
        return
    except OSError:
        if ignore_errors:
            return
        raise
    try:
        remove_tree_at(parent, tail)
    except OSError:
        if not ignore_errors:
            raise
    finally:
        with contextlib.suppress(OSError):
            os.close(parent)


def _unescape(field: str) -> str:
    out, i = [], 0
    while i < len(field):
        if field[i] == "\\" and i + 3 < len(field) and field[i + 1 : i + 4].isdigit():
            out.append(chr(int(field[i + 1 : i + 4], 8)))
            i += 4
        else:
            out.append(field[i])
            i += 1
    return "".join(out)


def detach_mounts_below(path: str | os.PathLike[str]) -> int:
    """Lazily detach (``umount2(MNT_DETACH)``) every mount strictly below ``path`` in this
    process's mount namespace, deepest first; how many. What a killed process left mounted
    in its scratch (an environment's tmpfs, an overlay root) is released this way before
    :func:`remove_tree`; a mount that cannot be detached (no privilege) is left."""
    import ctypes

    base = os.path.realpath(os.fspath(path)).rstrip("/") + "/"
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as handle:
            points = [_unescape(line.split(" ")[4]) for line in handle if line.count(" ") >= 4]
    except OSError:
        return 0
    libc = ctypes.CDLL(None, use_errno=True)
    libc.umount2.argtypes = (ctypes.c_char_p, ctypes.c_int)
    detached = 0
    for point in sorted({p for p in points if p.startswith(base)}, key=len, reverse=True):
        if libc.umount2(os.fsencode(point), 2) == 0:  # MNT_DETACH
            detached += 1
    return detached
