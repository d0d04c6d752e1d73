"""The immutable image identity of a local exact process: a closed set of executables.

A local provider runs programs of the host, so its "image" is the list of host
executables it may launch, each pinned by the SHA-256 of its bytes:
``local-host@sha256:<hex>`` is the RFC 8785 digest of that manifest (with the operating
system and machine names). A create whose ``image`` is not the current reference is
refused; a launch of any other executable is refused; an executable whose bytes changed
since the image was taken is refused at spawn.

What this identity does not cover: the shared libraries, interpreters' standard
libraries and data files the executables load at run time, and a file swapped between
the check and ``execve``. It pins the programs, not the whole filesystem.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final

from agent_interface.core.canonical import canonical_digest
from agent_interface.core.errors import ContractError

__all__ = ["LocalHostImage", "program_python"]

_KIND: Final = "agent-interface.local-host-image.v1"


@dataclass(frozen=True, slots=True)
class _Pinned:
    path: str
    target: str
    sha256: str
    identity: tuple[int, int, int, int, int]


def _identity(info: os.stat_result) -> tuple[int, int, int, int, int]:
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def _pin(path: str) -> _Pinned:
    if not os.path.isabs(path):
        raise ContractError.single(
            "/executables", "local_image_executable", "image executables must be absolute paths"
        )
    target = os.path.realpath(path)
    try:
        fd = os.open(target, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        raise ContractError.single(
            "/executables", "local_image_executable", "an image executable cannot be opened"
        ) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or not info.st_mode & 0o111:
            raise ContractError.single(
                "/executables",
                "local_image_executable",
                "an image executable must be an executable regular file",
            )
        digest = hashlib.sha256()
        while chunk := os.read(fd, 1 << 20):
            digest.update(chunk)
    finally:
        os.close(fd)
    return _Pinned(path, target, "sha256:" + digest.hexdigest(), _identity(info))


class LocalHostImage:
    """The executables a local provider may launch, pinned by content.

    ``LocalHostImage(["/usr/bin/python3", "/bin/true"]).reference`` is the
    ``local-host@sha256:...`` string a create input names as its ``image``.
    """

    def __init__(self, executables: Iterable[str]) -> None:
        pinned: dict[str, _Pinned] = {}
        for path in executables:
            if path not in pinned:
                pinned[path] = _pin(path)
        if not pinned:
            raise ContractError.single(
                "/executables", "local_image_empty", "an image names at least one executable"
            )
        self._pinned = pinned
        manifest = {
            "kind": _KIND,
            "system": os.uname().sysname,
            "machine": os.uname().machine,
            "executables": sorted(
                ({"path": p.path, "sha256": p.sha256} for p in pinned.values()),
                key=lambda entry: entry["path"],
            ),
        }
        self.reference: Final = "local-host@" + canonical_digest(manifest)
        """The image reference: ``local-host@sha256:<64 hex>``."""

    @property
    def executables(self) -> tuple[str, ...]:
        return tuple(sorted(self._pinned))

    def resolve(self, executable: str, env: Mapping[str, str]) -> tuple[str, str]:
        """``(listed path, file to execute)`` for a launch's ``executable``.

        An absolute name must be listed; a bare name is looked up along the launch's
        own ``PATH`` (absolute entries only) among the listed paths. Anything else is
        refused with ``exact_process_executable_not_in_image``.
        """
        if executable.startswith("/"):
            candidates = [executable]
        elif "/" in executable:
            candidates = []
        else:
            candidates = [
                f"{directory.rstrip('/')}/{executable}"
                for directory in env.get("PATH", "").split(":")
                if directory.startswith("/")
            ]
        for candidate in candidates:
            pinned = self._pinned.get(candidate)
            if pinned is not None:
                return pinned.path, self._verified(pinned)
        raise ContractError.single(
            "/executable",
            "exact_process_executable_not_in_image",
            "the executable is not one of the image's pinned executables",
        )

    def _verified(self, pinned: _Pinned) -> str:
        target = os.path.realpath(pinned.path)
        try:
            info = os.stat(target)
        except OSError:
            info = None
        if info is not None and target == pinned.target and _identity(info) == pinned.identity:
            return target
        current = None
        with contextlib.suppress(ContractError):
            current = _pin(pinned.path)
        if current is None or current.sha256 != pinned.sha256:
            raise ContractError.single(
                "/executable",
                "exact_process_image_changed",
                "the executable's bytes are no longer those the image pinned",
            )
        self._pinned[pinned.path] = current
        return current.target


def _executable_by_anyone(path: str) -> bool:
    """Whether a user who owns nothing can execute ``path`` (every directory searchable)."""
    parts = path.split("/")
    try:
        for depth in range(2, len(parts)):
            if not os.stat("/".join(parts[:depth])).st_mode & stat.S_IXOTH:
                return False
        return bool(os.stat(path).st_mode & stat.S_IXOTH)
    except OSError:
        return False


def program_python(current: str | None = None) -> str:
    """A Python interpreter a program's own user can execute, resolved to its real file.

    The local provider runs each environment's programs as a user of their own, so an
    interpreter in a private home directory (a ``pyenv`` or a virtual environment under a
    ``0700`` ``/root``, say) cannot start there. This is ``current`` (default: this
    process's interpreter) when anyone can execute it, else the system's
    ``/usr/bin/python3`` or ``/usr/local/bin/python3``, else ``current`` unchanged.
    """
    import sys

    mine = os.path.realpath(current or sys.executable)
    for candidate in (mine, "/usr/bin/python3", "/usr/local/bin/python3"):
        real = os.path.realpath(candidate)
        if os.path.isfile(real) and _executable_by_anyone(real):
            return real
    return mine

