"""A new output directory, checked before any work is done and filled in a sibling.

``candidate materialize --into`` and ``candidate run --out`` (and their Python functions)
write everything into a temporary directory beside the target and rename it at the end,
so a refusal leaves nothing behind. :func:`claim_output_directory` checks the target
first, before the bundle is verified, and refuses with a ``ContractError`` (never a raw
``OSError``): a symbolic link (dangling or not; the link is never followed), a target that
exists when it may not (or is a non-empty directory), a path under a regular file, and a
place where no directory can be made (``/proc``, a read-only file system, a name longer
than the file system takes). :func:`publish_output_directory` does the final rename.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from pathlib import Path

from agent_interface.core.errors import ContractError, ContractIssue
from agent_interface.evaluator.images.tree_removal import remove_tree

__all__ = ["OutputDirectoryRefused", "claim_output_directory", "publish_output_directory"]


class OutputDirectoryRefused(ContractError):
    """The output directory (not the bundle or the task) is at fault; one issue whose
    pointer names the option (``/into``, ``/out``)."""


def _refuse(pointer: str, code: str, message: str) -> ContractError:
    return OutputDirectoryRefused([ContractIssue(pointer, code, message)], subject="output directory")


def _os_refusal(pointer: str, error: OSError) -> ContractError:
    if error.errno == errno.ENAMETOOLONG:
        reason = "a name in the path is longer than the file system allows"
    elif error.errno in (errno.ENOTDIR, errno.EEXIST):
        reason = "a parent of the path is a file, not a directory"
    elif error.errno in (errno.EACCES, errno.EPERM):
        reason = "permission denied"
    elif error.errno == errno.EROFS:
        reason = "the file system is read-only"
    elif error.errno == errno.ENOENT:
        reason = "the file system there does not allow new directories"
    else:
        reason = (error.strerror or "cannot be created").lower()
    return _refuse(pointer, "output_unwritable", f"cannot create the directory: {reason}")


def _under_a_file(pointer: str) -> ContractError:
    return _refuse(pointer, "output_parent_not_directory", "a parent of the path is a file, not a directory")


def _kind(path: Path, pointer: str) -> int | None:
    try:
        return path.lstat().st_mode
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        raise _under_a_file(pointer) from None
    except OSError as error:
        raise _os_refusal(pointer, error) from None


def claim_output_directory(target: str | os.PathLike[str], *, pointer: str, may_exist_empty: bool) -> Path:
    """Check ``target`` and return a new temporary directory beside it to fill.

    ``may_exist_empty`` allows an existing empty directory (refused otherwise with
    ``output_exists``). Refusals: ``output_is_symlink``, ``output_exists``,
    ``into_not_empty``, ``output_parent_not_directory``, ``output_unwritable``.
    """
    path = Path(os.path.abspath(target))
    mode = _kind(path, pointer)
    if mode is not None and stat.S_ISLNK(mode):
        raise _refuse(pointer, "output_is_symlink",
                      "the path is a symbolic link; name a real directory (links are not followed)")
    if mode is not None:
        if not may_exist_empty:
            raise _refuse(pointer, "output_exists", "the output directory must not exist yet")
        if not stat.S_ISDIR(mode) or any(path.iterdir()):
            raise _refuse(pointer, "into_not_empty", "the target must be absent or an empty directory")
    for ancestor in path.parents:  # the nearest existing ancestor must be a directory
        if _kind(ancestor, pointer) is not None:
            if not ancestor.is_dir():
                raise _under_a_file(pointer)
            break
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return Path(tempfile.mkdtemp(prefix=f".{path.name[:64]}.", dir=path.parent))
    except OSError as error:
        raise _os_refusal(pointer, error) from None


def publish_output_directory(work: Path, target: str | os.PathLike[str], *, pointer: str) -> Path:
    """Rename the filled ``work`` directory to ``target`` (replacing an empty directory);
    a target that changed meanwhile is refused and ``work`` removed."""
    path = Path(os.path.abspath(target))
    try:
        if path.is_dir() and not path.is_symlink():
            path.rmdir()
        os.rename(work, path)
    except OSError as error:
        remove_tree(work, ignore_errors=True)
        if error.errno in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOTDIR, errno.EISDIR):
            raise _refuse(pointer, "output_exists", "the target appeared while the command ran") from None
        raise _os_refusal(pointer, error) from None
    return path
