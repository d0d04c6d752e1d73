"""A commit range of the author's own repository, as a candidate's code evidence.

:func:`read_commit_range` resolves two revisions (``HEAD~1``, a branch, a full id) of a
local repository to commits, then computes in the project's Git sandbox
(:mod:`agent_interface.evaluator.git.sandbox`: a scratch repository that only *borrows*
the repository's vetted object store, :func:`~agent_interface.evaluator.git.repository.locate_repository`)
the base and head trees, the binary patch between them (``git diff --binary -M``) and,
on request, the head tree's files (written by the verifier's own tree export and read
back). Only the revision names are resolved by ``git rev-parse`` in the repository
itself (refs live there), with system and global configuration, hooks and the file system
monitor off.
"""

from __future__ import annotations

import os
import stat
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from agent_interface.core.errors import ContractError
from agent_interface.evaluator.git.errors import GitTreeRefused, RepositoryUnavailable
from agent_interface.evaluator.git.export import TreeExportLimits, export_tree
from agent_interface.evaluator.git.limits import DEFAULT_GIT_LIMITS, GitLimits
from agent_interface.evaluator.git.repository import locate_repository
from agent_interface.evaluator.git.sandbox import GitSandbox

__all__ = ["CommitFiles", "CommitRange", "read_commit", "read_commit_range"]

_SUBJECT: Final = "candidate bundle builder"
_REVISION_TIMEOUT: Final = 30.0


@dataclass(frozen=True, slots=True)
class CommitRange:
    """Two commits of one repository and what lies between them: ids, trees, the binary
    patch, and (when asked for) the head tree's regular files with their modes."""

    repository: Path
    base_commit: str
    base_tree: str
    head_commit: str
    head_tree: str
    patch: bytes
    head_files: dict[str, tuple[bytes, int]] = field(default_factory=dict)


def _refuse(pointer: str, code: str, message: str) -> ContractError:
    return ContractError.single(pointer, code, message, subject=_SUBJECT)


def _resolve(repository: Path, revision: str, pointer: str) -> str:
    """The commit id ``revision`` names in ``repository`` (``git rev-parse``, locked down)."""
    if not revision or revision.startswith("-") or "\0" in revision or len(revision) > 1024:
        raise _refuse(pointer, "revision_invalid", "not a revision name")
    env = {"PATH": os.defpath, "HOME": os.devnull, "LC_ALL": "C", "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_CONFIG_GLOBAL": os.devnull, "GIT_TERMINAL_PROMPT": "0", "GIT_NO_LAZY_FETCH": "1",
           "GIT_CEILING_DIRECTORIES": str(repository.parent)}
    try:
        done = subprocess.run(
            ["git", "-c", f"core.hooksPath={os.devnull}", "-c", "core.fsmonitor=false", "rev-parse", "--verify",
             "--quiet", "--end-of-options", f"{revision}^{{commit}}"],
            cwd=repository, env=env, capture_output=True, timeout=_REVISION_TIMEOUT, stdin=subprocess.DEVNULL,
        )
    except FileNotFoundError:
        raise RepositoryUnavailable("the git executable is not installed") from None
    except subprocess.TimeoutExpired:
        raise _refuse(pointer, "git_timeout", "git did not resolve the revision in time") from None
    commit = done.stdout.decode("ascii", "replace").strip()
    if done.returncode != 0 or len(commit) not in (40, 64):
        raise _refuse(pointer, "revision_unknown", "the repository has no commit of this name")
    return commit


def _tree_of(sandbox: GitSandbox, borrow: Path, commit: str, pointer: str) -> str:
    result = sandbox.run("rev-parse", "--verify", f"{commit}^{{tree}}", borrow=borrow)
    tree = result.stdout.decode("ascii", "replace").strip()
    if not result.ok or len(tree) != len(commit):
        raise _refuse(pointer, "revision_unknown", "the commit's tree is not in the repository")
    return tree


def _read_back(root: Path) -> dict[str, tuple[bytes, int]]:
    files: dict[str, tuple[bytes, int]] = {}
    for directory, _, names in os.walk(root):
        for name in names:
            path = Path(directory) / name
            mode = path.lstat().st_mode
            relative = path.relative_to(root).as_posix()
            if not stat.S_ISREG(mode):
                raise _refuse("/execution/workspace", "workspace_symlink",
                              f"the head tree holds a symbolic link ({relative}); give the workspace files "
                              "explicitly")
            files[relative] = (path.read_bytes(), 0o755 if mode & 0o111 else 0o644)
    return files


@dataclass(frozen=True, slots=True)
class CommitFiles:
    """One commit of a repository: its id, its tree and the tree's regular files with modes."""

    repository: Path
    commit: str
    tree: str
    files: dict[str, tuple[bytes, int]]


def read_commit(
    repository: str | os.PathLike[str],
    revision: str,
    *,
    pointer: str = "/repository/baseCommit",
    limits: GitLimits | None = None,
    tree_limits: TreeExportLimits | None = None,
) -> CommitFiles:
    """The commit ``revision`` names in ``repository``, its tree and files, read as
    :func:`read_commit_range` reads a head (a task's repository commit); refused
    (``ContractError`` at ``pointer``) when it cannot be resolved or its tree not exported;
    :class:`RepositoryUnavailable` for a path that is not a repository."""
    root = Path(os.path.abspath(repository))
    limits = limits or DEFAULT_GIT_LIMITS
    with tempfile.TemporaryDirectory(prefix="agent-interface-author-") as scratch:
        sandbox = GitSandbox(Path(scratch) / "git", object_format="sha1", limits=limits,
                             deadline=time.monotonic() + limits.timeout_seconds)
        store = locate_repository(root, sandbox.read_config)
        sandbox.set_object_format(store.object_format)
        commit = _resolve(root, revision, pointer)
        try:
            tree = _tree_of(sandbox, store.objects, commit, pointer)
            target = Path(scratch) / "tree"
            target.mkdir()
            export_tree(sandbox, store.objects, store.object_format, tree, target, tree_limits or TreeExportLimits())
            files = _read_back(target)
        except GitTreeRefused as error:
            raise _refuse(pointer, error.code, error.reason) from None
    return CommitFiles(root, commit, tree, files)


def read_commit_range(
    repository: str | os.PathLike[str],
    base: str,
    head: str,
    *,
    with_files: bool = True,
    limits: GitLimits | None = None,
    tree_limits: TreeExportLimits | None = None,
) -> CommitRange:
    """The commits ``base`` and ``head`` name in ``repository`` (relative paths are read from
    the working directory), their trees, the binary patch from one to the other and, with
    ``with_files``, the head tree's files. Refuses (``ContractError`` at ``/code/baseCommit``
    or ``/code/candidateTree``) a revision it cannot resolve and a range with no change
    (``patch_empty``); :class:`RepositoryUnavailable` for a path that is not a repository."""
    root = Path(os.path.abspath(repository))
    limits = limits or DEFAULT_GIT_LIMITS
    with tempfile.TemporaryDirectory(prefix="agent-interface-author-") as scratch:
        sandbox = GitSandbox(Path(scratch) / "git", object_format="sha1", limits=limits,
                             deadline=time.monotonic() + limits.timeout_seconds)
        store = locate_repository(root, sandbox.read_config)
        sandbox.set_object_format(store.object_format)
        base_commit = _resolve(root, base, "/code/baseCommit")
        head_commit = _resolve(root, head, "/code/candidateTree")
        try:
            base_tree = _tree_of(sandbox, store.objects, base_commit, "/code/baseTree")
            head_tree = _tree_of(sandbox, store.objects, head_commit, "/code/candidateTree")
            diff = sandbox.run("diff", "--binary", "-M", "--no-ext-diff", "--no-textconv", "--no-color",
                               base_commit, head_commit, borrow=store.objects)
            if not diff.ok:
                raise _refuse("/code/patch", "patch_unreadable", "git could not compute the patch")
            files: dict[str, tuple[bytes, int]] = {}
            if with_files:
                target = Path(scratch) / "head"
                target.mkdir()
                export_tree(sandbox, store.objects, store.object_format, head_tree, target,
                            tree_limits or TreeExportLimits())
                files = _read_back(target)
        except GitTreeRefused as error:
            raise _refuse("/code", error.code, error.reason) from None
    if not diff.stdout:
        raise _refuse("/code/patch", "patch_empty",
                      "the two commits have the same tree; a candidate with no change is no-op code")
    return CommitRange(root, base_commit, base_tree, head_commit, head_tree, diff.stdout, files)
