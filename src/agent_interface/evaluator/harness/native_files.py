"""Writing a launch's native files, and putting the workspace back before the patch.

:func:`write_native_files` writes each :class:`~.adapter.NativeFile` under its root (the
target workspace or the harness's ``$HOME``), refusing a path whose existing components
include a symbolic link (a hostile task repository cannot redirect a write), and keeps what
each workspace path held before. :func:`restore_workspace` puts those paths back exactly
(the original bytes and mode, or no file), so the solution patch captured afterwards holds
the agent's change only; :func:`exclude_pathspecs` gives the Git pathspecs that leave the
same paths out of a diff instead, as the specification allows either.
"""

from __future__ import annotations

import contextlib
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from agent_interface.core.errors import ContractError, ContractIssue
from agent_interface.evaluator.harness.adapter import HarnessLaunch

__all__ = ["WrittenFiles", "exclude_pathspecs", "restore_workspace", "write_native_files"]


@dataclass(frozen=True)
class _Original:
    path: str
    content: bytes | None = field(repr=False)
    mode: int | None


@dataclass(frozen=True)
class WrittenFiles:
    """What :func:`write_native_files` did in the workspace: every path written with what it
    held before, and the directories it created (to remove again)."""

    workspace: Path
    originals: tuple[_Original, ...]
    created_dirs: tuple[str, ...]


def _refuse(path: str, code: str, message: str) -> ContractError:
    return ContractError([ContractIssue(f"/files/{path}", code, message)], subject="native files")


def _prepare_dirs(root: Path, relative: str, created: list[str]) -> None:
    parts = relative.split("/")[:-1]
    current = root
    for index, part in enumerate(parts):
        current = current / part
        try:
            info = os.lstat(current)
        except FileNotFoundError:
            os.mkdir(current, 0o755)
            created.append("/".join(parts[: index + 1]))
            continue
        if not stat.S_ISDIR(info.st_mode):
            raise _refuse(relative, "native_path_not_directory", "a parent of a native file is not a real directory")


def write_native_files(launch: HarnessLaunch, *, workspace: Path, home: Path) -> WrittenFiles:
    """Write every native file of ``launch``; refused when a path crosses a symbolic link or a
    non-directory."""
    originals: list[_Original] = []
    created: list[str] = []
    for native in launch.files:
        root = workspace if native.root == "workspace" else home
        target = root / native.path
        _prepare_dirs(root, native.path, created if native.root == "workspace" else [])
        previous: bytes | None = None
        mode: int | None = None
        try:
            info = os.lstat(target)
        except FileNotFoundError:
            info = None
        if info is not None:
            if not stat.S_ISREG(info.st_mode):
                raise _refuse(native.path, "native_path_not_file", "a native file's path holds a link or a non-file")
            previous = target.read_bytes()
            mode = stat.S_IMODE(info.st_mode)
        if native.root == "workspace":
            originals.append(_Original(native.path, previous, mode))
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, native.mode)
        with os.fdopen(fd, "wb") as handle:
            handle.write(native.content)
        os.chmod(target, native.mode)
    return WrittenFiles(workspace, tuple(originals), tuple(created))


def restore_workspace(written: WrittenFiles) -> None:
    """Put every workspace path back as it was before :func:`write_native_files` (whatever
    the agent did to it since), then remove the directories it created when empty."""
    for original in reversed(written.originals):
        target = written.workspace / original.path
        try:
            info = os.lstat(target)
        except FileNotFoundError:
            info = None
        if info is not None and stat.S_ISDIR(info.st_mode) and not stat.S_ISLNK(info.st_mode):
            raise _refuse(original.path, "native_path_not_file", "the agent replaced a native file by a directory")
        if info is not None:
            os.unlink(target)
        if original.content is not None:
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, original.mode or 0o644)
            with os.fdopen(fd, "wb") as handle:
                handle.write(original.content)
            os.chmod(target, original.mode or 0o644)
    for directory in sorted(written.created_dirs, key=len, reverse=True):
        with contextlib.suppress(OSError):
            os.rmdir(written.workspace / directory)


def exclude_pathspecs(launch: HarnessLaunch) -> tuple[str, ...]:
    """Git pathspecs that leave every workspace-rooted native file out of a diff."""
    return tuple(f":(exclude,literal){path}" for path in launch.workspace_paths())
