"""Paths looked up inside an unpacked root file system, never leaving it.

A container resolves ``/usr/bin/python3`` against its own root: an absolute link target
starts again at that root and ``..`` stops there. :func:`stat_in_root` resolves a path
the same way from the host, one component at a time from the root's directory
descriptor (``O_NOFOLLOW`` on every open, links read with ``readlink`` and resolved by
this code, at most 40 of them), so no link the image or a program planted leads it
outside the root. It only looks (``lstat``, ``readlink``); it never opens a file for
reading or writing.

:func:`find_executable` is the ``execvp`` lookup of a bare name along a ``PATH`` value
inside the root: the first ``directory/name`` (absolute directories only, in order)
that resolves to a regular file with an execute bit. It answers the path to hand to
``execve`` *inside* the container (``/usr/bin/python3``, not where the link leads): the
kernel then resolves it in the container exactly as here.
"""

from __future__ import annotations

import os
import stat
from collections import deque
from pathlib import Path
from typing import Final

__all__ = ["DEFAULT_SEARCH_PATH", "find_executable", "stat_in_root"]

DEFAULT_SEARCH_PATH: Final = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
"""The conventional search path: the ``PATH`` a base image built here sets
(:mod:`.image_build`). A launch is looked up along its own ``PATH`` only."""

_MAX_LINKS: Final = 40
_DIRECTORY_FLAGS: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC | getattr(os, "O_PATH", 0)


def _walk(root_fd: int, components: list[str]) -> int:
    """A descriptor of ``root/components`` (each a real directory, already resolved)."""
    fd = os.dup(root_fd)
    try:
        for component in components:
            child = os.open(component, _DIRECTORY_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def stat_in_root(root: str | os.PathLike[str], path: str) -> os.stat_result | None:
    """The ``lstat`` of what ``path`` names inside ``root`` once every link is resolved
    there (see the module), ``None`` when it does not exist, a link loops or leads
    through a non-directory."""
    try:
        root_fd = os.open(root, _DIRECTORY_FLAGS)
    except OSError:
        return None
    try:
        return _resolve(root_fd, path)
    except OSError:
        return None
    finally:
        os.close(root_fd)


def _resolve(root_fd: int, path: str) -> os.stat_result | None:
    pending = deque(path.split("/"))
    resolved: list[str] = []
    fd = os.dup(root_fd)
    links = 0
    try:
        while pending:
            part = pending.popleft()
            if part in ("", "."):
                continue
            if part == "..":
                if resolved:
                    resolved.pop()
                    os.close(fd)
                    fd = -1
                    fd = _walk(root_fd, resolved)
                continue
            info = os.stat(part, dir_fd=fd, follow_symlinks=False)
            if stat.S_ISLNK(info.st_mode):
                links += 1
                if links > _MAX_LINKS:
                    return None
                target = os.readlink(part, dir_fd=fd)
                if target.startswith("/"):
                    resolved = []
                    os.close(fd)
                    fd = -1
                    fd = os.dup(root_fd)
                pending.extendleft(reversed(target.split("/")))
                continue
            if not any(p not in ("", ".") for p in pending):
                return info
            if not stat.S_ISDIR(info.st_mode):
                return None
            child = os.open(part, _DIRECTORY_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = child
            resolved.append(part)
        return os.fstat(fd)
    finally:
        if fd >= 0:
            os.close(fd)


def find_executable(root: str | os.PathLike[str] | Path, name: str, search_path: str) -> str | None:
    """The container path of the first executable regular file ``name`` along
    ``search_path`` inside ``root`` (see the module), ``None`` when there is none."""
    if not name or "/" in name or "\x00" in name or name in (".", ".."):
        return None
    for directory in search_path.split(":"):
        if not directory.startswith("/"):
            continue  # an empty or relative entry names the working directory: not looked up
        candidate = f"{directory.rstrip('/')}/{name}"
        info = stat_in_root(root, candidate)
        if info is not None and stat.S_ISREG(info.st_mode) and info.st_mode & 0o111:
            return candidate
    return None
