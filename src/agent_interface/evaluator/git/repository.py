"""Find a repository's object store from the path a caller gives, reading files only.

No ``git`` process ever opens the caller's repository as a repository: its
configuration, hooks, attributes, index and refs are never read by ``git``, so nothing
they name can run. This module reads just enough with Python to decide whether the
object store may be borrowed (read-only) for one check:

* the path must be the root of a work tree (``.git`` directory or ``gitdir:`` file) or
  a Git directory itself: a subdirectory of a work tree is refused instead of letting
  discovery walk up to its parent;
* the object store, its ``info`` and ``pack`` directories, loose-object fan-out
  directories and pack files must not be symbolic links, and it must not borrow other
  stores (``objects/info/alternates``, ``http-alternates``);
* a partial clone (``extensions.partialClone``, a ``remote.*.promisor`` or
  ``partialCloneFilter`` setting, or a ``.promisor`` pack) is refused, since its
  objects are fetched on demand; so are grafts, replace refs and repository format
  versions or extensions this check does not know.

The configuration file is parsed by :func:`read_config` (``git config --file`` in the
sandbox, includes not followed). Objects read later are still hashed again before use.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from agent_interface.evaluator.git.errors import GitTreeRefused, RepositoryUnavailable

__all__: list[str] = []  # verifier machinery: not re-exported from the package root

ConfigReader = Callable[[Path], Mapping[str, tuple[str, ...]]]
"""Parses one Git configuration file (no includes) into lower-cased keys and values."""

_KNOWN_EXTENSIONS: Final = frozenset(
    {"objectformat", "worktreeconfig", "preciousobjects", "noop", "noop-v1", "refstorage"}
)
_GITFILE_LIMIT: Final = 4096


@dataclass(frozen=True, slots=True)
class RepositoryObjects:
    """The vetted object store of a repository and its object format (``sha1``/``sha256``)."""

    git_dir: Path
    common_dir: Path
    objects: Path
    object_format: str


def _is_git_dir(path: Path) -> bool:
    return (path / "HEAD").is_file() and (
        (path / "objects").is_dir() or (path / "commondir").is_file()
    ) and ((path / "refs").is_dir() or (path / "commondir").is_file())


def _read_small(path: Path) -> str:
    try:
        with path.open("rb") as handle:
            data = handle.read(_GITFILE_LIMIT + 1)
    except OSError:
        raise RepositoryUnavailable(f"{path}: cannot be read") from None
    if len(data) > _GITFILE_LIMIT:
        raise RepositoryUnavailable(f"{path}: too large for a Git pointer file")
    return data.decode("utf-8", "surrogateescape").strip()


def _git_dir(root: Path) -> Path:
    dotgit = root / ".git"
    if dotgit.is_dir():
        return dotgit
    if dotgit.is_file():
        pointer = _read_small(dotgit)
        if not pointer.startswith("gitdir:"):
            raise RepositoryUnavailable(f"{dotgit}: not a gitdir pointer")
        target = Path(pointer[len("gitdir:") :].strip())
        git_dir = target if target.is_absolute() else root / target
        if not _is_git_dir(git_dir):
            raise RepositoryUnavailable(f"{dotgit}: points at no Git directory")
        return git_dir
    if _is_git_dir(root):
        return root
    for parent in root.resolve().parents:
        if (parent / ".git").exists() or _is_git_dir(parent):
            raise RepositoryUnavailable(
                f"{root}: inside a Git repository but not its root; pass the repository root"
            )
    raise RepositoryUnavailable(f"{root}: not a Git repository")


def _refuse_symlinked_store(objects: Path) -> None:
    def symlink(path: Path) -> bool:
        try:
            return stat.S_ISLNK(path.lstat().st_mode)
        except FileNotFoundError:
            return False

    if symlink(objects) or not objects.is_dir():
        raise GitTreeRefused(
            "repository_objects_symlinked",
            "the object store is a symbolic link or missing; use a self-contained clone",
        )
    with os.scandir(objects) as entries:
        for entry in entries:
            if entry.is_symlink():
                raise GitTreeRefused(
                    "repository_objects_symlinked",
                    "part of the object store is a symbolic link; use a self-contained clone",
                )
    pack = objects / "pack"
    if pack.is_dir():
        with os.scandir(pack) as entries:
            for entry in entries:
                if entry.is_symlink() or not entry.is_file(follow_symlinks=False):
                    raise GitTreeRefused(
                        "repository_objects_symlinked",
                        "the pack directory holds a symbolic link or a special file",
                    )
                if entry.name.endswith(".promisor"):
                    raise GitTreeRefused(
                        "repository_partial_clone",
                        "the repository is a partial clone (promisor pack); "
                        "its missing objects would be fetched on demand",
                    )


def _refuse_replace_refs(common: Path) -> None:
    replace = common / "refs" / "replace"
    if replace.is_dir() and any(path.is_file() for path in replace.rglob("*")):
        raise GitTreeRefused(
            "repository_replace_refs", "the repository substitutes objects through replace refs"
        )
    packed = common / "packed-refs"
    if packed.is_file():
        with packed.open("rb") as handle:
            for line in handle:
                if b" refs/replace/" in line:
                    raise GitTreeRefused(
                        "repository_replace_refs",
                        "the repository substitutes objects through replace refs",
                    )


def _object_format(config: Mapping[str, tuple[str, ...]]) -> str:
    version_text = config.get("core.repositoryformatversion", ("0",))[-1]
    version = int(version_text) if version_text.isascii() and version_text.isdigit() else -1
    if version not in (0, 1):
        raise GitTreeRefused(
            "repository_format_unsupported", "the repository format version is not 0 or 1"
        )
    if config.get("extensions.partialclone") or any(
        key.startswith("remote.")
        and key.endswith((".promisor", ".partialclonefilter"))
        and values[-1].lower() not in ("false", "no", "off", "0", "")
        for key, values in config.items()
    ):
        raise GitTreeRefused(
            "repository_partial_clone",
            "the repository is a partial clone; its missing objects would be fetched on demand",
        )
    extensions = {key.split(".", 1)[1] for key in config if key.startswith("extensions.")}
    if version == 1 and extensions - _KNOWN_EXTENSIONS:
        raise GitTreeRefused(
            "repository_format_unsupported", "the repository uses a Git extension not supported here"
        )
    declared = config.get("extensions.objectformat", ("sha1",))[-1].lower()
    if declared not in ("sha1", "sha256"):
        raise GitTreeRefused("repository_format_unsupported", "the object format is not supported")
    return declared


def locate_repository(repository: Path | str, read_config: ConfigReader) -> RepositoryObjects:
    """The vetted object store of the repository rooted at ``repository``.

    :class:`RepositoryUnavailable` when the path is not a repository root;
    :class:`GitTreeRefused` when the repository may not be borrowed (see the module).
    """
    # Absolute before anything runs: git runs in a scratch directory, where a path
    # relative to the caller's working directory would name nothing.
    root = Path(os.path.abspath(repository))
    if not os.path.isdir(root):  # False, not OSError, for a name too long or a loop
        raise RepositoryUnavailable(f"{root}: not a directory")
    git_dir = _git_dir(root)
    common = git_dir
    if (git_dir / "commondir").is_file():
        target = Path(_read_small(git_dir / "commondir"))
        common = target if target.is_absolute() else git_dir / target
    config_file = common / "config"
    config = read_config(config_file) if config_file.is_file() else {}
    object_format = _object_format(config)
    objects = common / "objects"
    _refuse_symlinked_store(objects)
    info = objects / "info"
    if (info / "alternates").exists() or (info / "http-alternates").exists():
        raise GitTreeRefused(
            "repository_alternates",
            "the repository borrows objects through alternates; use a self-contained clone",
        )
    if (common / "info" / "grafts").exists():
        raise GitTreeRefused("repository_grafts", "the repository rewrites history with grafts")
    _refuse_replace_refs(common)
    return RepositoryObjects(git_dir, common, objects, object_format)
