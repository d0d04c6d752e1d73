"""Apply a candidate's binary Git patch onto its declared base tree with Git itself.

The ``git`` executable computes the tree, so tree ids are exactly Git's: ``read-tree``
of the base into a throwaway index, ``apply --cached`` of the patch, ``write-tree``.
Before ``git`` reads the patch, :mod:`~agent_interface.evaluator.git.patch` refuses
oversize patches, binary hunks that would decode past :class:`GitLimits`, and header
paths that leave the tree. The repository is only ever *borrowed* read-only, by one
``git cat-file --batch`` session and one ``git ls-tree -r -d``
(:mod:`~agent_interface.evaluator.git.objects`): they read the base commit, every tree
of the base tree and the blobs the patch reads, each hashed again before it is copied
into a private pack. Applying and writing then
happen in the private store alone (:mod:`~agent_interface.evaluator.git.sandbox`), so
nothing is written into the repository and objects it lies about are never used.
After ``write-tree``, the entries the patch added or changed are refused if they are
symbolic links, submodules (gitlinks), unsafe paths, blobs above ``max_blob_bytes``,
or paths that collide on case-insensitive file systems (unless allowed).
"""

from __future__ import annotations

import re
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from agent_interface.evaluator.git.errors import GitTreeRefused, RepositoryUnavailable
from agent_interface.evaluator.git.export import TreeExportLimits, export_tree
from agent_interface.evaluator.git.limits import DEFAULT_GIT_LIMITS, GitLimits
from agent_interface.evaluator.git.objects import ObjectCopy, copy_base_objects, read_base_commit
from agent_interface.evaluator.git.patch import binary_gate, patch_names
from agent_interface.evaluator.git.paths import is_safe_tree_path
from agent_interface.evaluator.git.repository import RepositoryObjects, locate_repository
from agent_interface.evaluator.git.result import check_result
from agent_interface.evaluator.git.sandbox import GitSandbox

__all__ = [
    "GitTreeRefused",
    "RepositoryUnavailable",
    "TreeExport",
    "materialize_git_patch",
    "verify_base_commit",
]

_WIDTHS: Final = {"sha1": 40, "sha256": 64}
_OBJECT_ID: Final = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


@dataclass(slots=True)
class TreeExport:
    """A request to also write the verified tree into ``into`` (an empty directory) within
    ``limits``; ``files`` is set to the number of files and links written."""

    into: Path
    limits: TreeExportLimits = field(default_factory=TreeExportLimits)
    files: int = -1


def _open(
    repository: Path | str, scratch: Path, limits: GitLimits, *object_ids: str
) -> tuple[GitSandbox, RepositoryObjects]:
    sandbox = GitSandbox(
        scratch, object_format="sha1", limits=limits,
        deadline=time.monotonic() + limits.timeout_seconds,
    )
    store = locate_repository(repository, sandbox.read_config)
    width = _WIDTHS[store.object_format]
    if any(len(object_id) != width or not _OBJECT_ID.fullmatch(object_id) for object_id in object_ids):
        raise GitTreeRefused(
            "object_format_mismatch",
            f"the declared object ids are not {store.object_format} ids like the repository's",
        )
    sandbox.set_object_format(store.object_format)
    return sandbox, store


def _check_patch(patch: bytes, limits: GitLimits) -> set[bytes]:
    """The patch's file names once its size, binary hunks and header paths pass."""
    binary_gate(patch, limits)
    names = patch_names(patch).names
    if not all(is_safe_tree_path(name) for name in names):
        raise GitTreeRefused("patch_path_unsafe", "the patch names a path outside the tree")
    return set(names)


def verify_base_commit(
    repository: Path | str,
    *,
    base_commit: str,
    base_tree: str,
    limits: GitLimits | None = None,
    export: TreeExport | None = None,
) -> None:
    """Refuse unless ``base_commit`` is a commit of ``repository`` whose tree is ``base_tree``.

    With ``export``, the base tree is then written into ``export.into``
    (:func:`~agent_interface.evaluator.git.export.export_tree`) in the same sandbox.
    """
    limits = limits or DEFAULT_GIT_LIMITS
    with tempfile.TemporaryDirectory(prefix="agent-interface-tree-") as scratch:
        sandbox, store = _open(repository, Path(scratch), limits, base_commit, base_tree)
        with sandbox.batch(store.objects) as batch:
            read_base_commit(batch, store.object_format, base_commit, base_tree)
        if export is not None:
            export.files = export_tree(
                sandbox, store.objects, store.object_format, base_tree, export.into, export.limits
            )


def materialize_git_patch(
    repository: Path | str,
    *,
    base_commit: str,
    base_tree: str,
    patch: bytes,
    limits: GitLimits | None = None,
    export: TreeExport | None = None,
    expected_tree: str | None = None,
) -> str:
    """The tree id Git produces by applying ``patch`` to ``base_tree``, or a refusal.

    ``base_commit`` must be a commit of ``repository`` whose tree is ``base_tree``;
    ``limits`` defaults to :data:`~agent_interface.evaluator.git.limits.DEFAULT_GIT_LIMITS`.
    With ``export``, the resulting tree is then written into ``export.into``
    (:func:`~agent_interface.evaluator.git.export.export_tree`) in the same sandbox,
    under the same deadline, once the tree is ``expected_tree`` (when given; another tree
    is refused as ``candidate_tree_mismatch`` and nothing is written).
    """
    limits = limits or DEFAULT_GIT_LIMITS
    names = _check_patch(patch, limits)
    with tempfile.TemporaryDirectory(prefix="agent-interface-tree-") as scratch:
        sandbox, store = _open(repository, Path(scratch), limits, base_commit, base_tree)
        copy = ObjectCopy(store.object_format)
        with sandbox.batch(store.objects) as batch:
            read_base_commit(batch, store.object_format, base_commit, base_tree)
            copy_base_objects(sandbox, batch, store.objects, copy, base_tree, names)
        copy.write(sandbox.objects / "pack")
        if not sandbox.run("read-tree", base_tree).ok:
            raise GitTreeRefused("base_tree_absent", "the base tree cannot be read")
        applied = sandbox.run("apply", "--cached", "--whitespace=nowarn", "-", stdin=patch)
        if not applied.ok:
            raise GitTreeRefused(
                "patch_does_not_apply", "the patch does not apply cleanly to the base tree"
            )
        written = sandbox.run("write-tree", "--missing-ok")
        tree = written.stdout.decode("ascii", "replace").strip()
        if not written.ok or not _OBJECT_ID.fullmatch(tree):
            raise GitTreeRefused("write_tree_failed", "git could not write the resulting tree")
        check_result(copy, sandbox.objects, base_tree, tree, limits)
        if expected_tree is not None and tree != expected_tree:
            raise GitTreeRefused(
                "candidate_tree_mismatch", "applying the patch to the base tree gives a different tree"
            )
        if export is not None:
            export.files = export_tree(
                sandbox, store.objects, store.object_format, tree, export.into, export.limits
            )
    return tree
