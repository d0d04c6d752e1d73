"""Apply a candidate's binary Git patch onto its declared base tree with Git itself.

The ``git`` executable computes the tree, so tree ids are exactly Git's: ``read-tree``
of the base into a throwaway index, ``apply --cached`` of the patch, ``write-tree``.
Before ``git`` reads the patch, :mod:`~agent_interface.candidate.git_patch` refuses
oversize patches, binary hunks that would decode past :class:`GitLimits`, and header
paths that leave the tree. The repository is only ever *borrowed* read-only by steps
that write no object (:mod:`~agent_interface.candidate.git_sandbox`): they check that the
base commit hashes to its id and names ``baseTree``, list the base tree, and copy the
trees and the blobs the patch reads into a private pack, which ``git index-pack``
hashes again. Applying and writing then happen in the private store alone, so nothing
is written into the repository and objects it lies about are never used.
After ``write-tree``, the entries the patch added or changed are refused if they are
symbolic links, submodules (gitlinks), unsafe paths, blobs above ``max_blob_bytes``,
or paths that collide on case-insensitive file systems (unless allowed).
"""

from __future__ import annotations

import hashlib
import re
import tempfile
import time
from pathlib import Path
from typing import Final

from agent_interface.candidate.git_errors import GitTreeRefused, RepositoryUnavailable
from agent_interface.candidate.git_limits import DEFAULT_GIT_LIMITS, GitLimits
from agent_interface.candidate.git_patch import binary_gate, patch_names
from agent_interface.candidate.git_paths import collision_key, is_safe_tree_path
from agent_interface.candidate.git_repository import RepositoryObjects, locate_repository
from agent_interface.candidate.git_sandbox import GitSandbox

__all__ = [
    "GitTreeRefused",
    "RepositoryUnavailable",
    "materialize_git_patch",
    "verify_base_commit",
]

_SYMLINK: Final = b"120000"
_GITLINK: Final = b"160000"
_WIDTHS: Final = {"sha1": 40, "sha256": 64}
_OBJECT_ID: Final = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_EMPTY_TREES: Final = frozenset(
    {
        "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
        "6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321",
    }
)


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


def _check_commit(
    sandbox: GitSandbox, store: RepositoryObjects, base_commit: str, base_tree: str
) -> None:
    """Refuse unless ``base_commit`` is a commit whose bytes hash to it and name ``base_tree``."""
    found = sandbox.run("cat-file", "--batch", stdin=base_commit.encode() + b"\n", borrow=store.objects)
    header, _, rest = found.stdout.partition(b"\n")
    fields = header.split(b" ")
    if not found.ok or len(fields) != 3 or fields[1] != b"commit" or not fields[2].isdigit():
        raise GitTreeRefused("base_commit_absent", "the base commit is not in the repository")
    size = int(fields[2])
    body = rest[:size]
    digest = hashlib.new(store.object_format, b"commit %d\0" % size + body).hexdigest()
    if len(body) != size or digest != base_commit:
        raise GitTreeRefused(
            "repository_object_corrupt", "the base commit's bytes do not hash to its id"
        )
    if body.split(b"\n", 1)[0] != b"tree " + base_tree.encode():
        raise GitTreeRefused(
            "base_tree_mismatch", "the base commit does not resolve to the declared base tree"
        )


def _copy_base(
    sandbox: GitSandbox, store: RepositoryObjects, base_tree: str, names: set[bytes]
) -> None:
    """Copy every tree of ``base_tree`` and the blobs at ``names`` into the private store."""
    listing = sandbox.run("ls-tree", "-r", "-t", "-z", base_tree, borrow=store.objects)
    if not listing.ok:
        raise GitTreeRefused("base_tree_absent", "the base tree cannot be read")
    wanted = [] if base_tree in _EMPTY_TREES else [base_tree.encode()]
    for entry in listing.stdout.split(b"\0"):
        meta, _, path = entry.partition(b"\t")
        fields = meta.split(b" ")
        if len(fields) != 3:
            continue
        if fields[1] == b"tree" or (fields[1] == b"blob" and path in names):
            wanted.append(fields[2])
    if not wanted:
        return
    pack = sandbox.objects / "pack" / "pack-incoming.pack"
    with pack.open("wb") as output:
        packed = sandbox.run(
            "pack-objects", "--stdout", "-q", "--window=0",
            stdin=b"\n".join(wanted) + b"\n", borrow=store.objects, stdout_file=output,
        )
    if not packed.ok:
        raise GitTreeRefused(
            "repository_objects_unreadable", "git cannot read the base tree's objects"
        )
    if not sandbox.run("index-pack", str(pack)).ok:
        raise GitTreeRefused(
            "repository_objects_unreadable", "the base tree's objects do not hash to their ids"
        )


def _check_changes(raw: bytes) -> tuple[set[bytes], set[bytes]]:
    """Refuse symlinks, gitlinks and unsafe paths among the entries the patch added or
    changed; the paths it added and the paths whose blob it wrote."""
    fields = raw.split(b"\0")
    added: set[bytes] = set()
    written: set[bytes] = set()
    index = 0
    while index + 1 < len(fields) and fields[index].startswith(b":"):
        meta = fields[index][1:].split(b" ")
        path = fields[index + 1]
        index += 2
        new_mode, status = meta[1], meta[4]
        if status == b"D":
            continue
        if new_mode == _SYMLINK:
            raise GitTreeRefused("patch_creates_symlink", "the patch creates a symbolic link")
        if new_mode == _GITLINK:
            raise GitTreeRefused("patch_creates_submodule", "the patch creates a submodule link")
        if not is_safe_tree_path(path):
            raise GitTreeRefused("patch_path_unsafe", "the patch writes a path outside the tree")
        if status == b"A":
            added.add(path)
        written.add(path)
    return added, written


def _check_result(sandbox: GitSandbox, base_tree: str, tree: str, limits: GitLimits) -> None:
    """Refuse what the patch added or changed in ``tree``: see the module docstring."""
    changes = sandbox.run(
        "diff-tree", "-r", "-z", "--no-renames", "--no-ext-diff", "--no-textconv", base_tree, tree
    )
    if not changes.ok:
        raise GitTreeRefused("write_tree_failed", "git could not compare the resulting tree")
    added, written = _check_changes(changes.stdout)
    if not written:
        return
    listing = sandbox.run("ls-tree", "-r", "-t", "-z", "-l", tree)
    if not listing.ok:
        raise GitTreeRefused("write_tree_failed", "git could not list the resulting tree")
    refuse_collisions = bool(added) and limits.case_collisions == "refuse"
    added_keys = {collision_key(path): path for path in added} if refuse_collisions else {}
    for entry in listing.stdout.split(b"\0"):
        meta, _, path = entry.partition(b"\t")
        if path in written:
            size = meta.split()[-1]
            if not size.isdigit() or int(size) > limits.max_blob_bytes:
                raise GitTreeRefused(
                    "patch_blob_too_large",
                    f"the patch writes a blob larger than {limits.max_blob_bytes} bytes",
                )
        if added_keys and path:
            other = added_keys.get(collision_key(path))
            if other is not None and other != path:
                raise GitTreeRefused(
                    "patch_path_case_collision",
                    "the patch adds a path that differs from another path of the tree only "
                    "in case or Unicode normalization",
                )


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
) -> None:
    """Refuse unless ``base_commit`` is a commit of ``repository`` whose tree is ``base_tree``."""
    limits = limits or DEFAULT_GIT_LIMITS
    with tempfile.TemporaryDirectory(prefix="agent-interface-tree-") as scratch:
        sandbox, store = _open(repository, Path(scratch), limits, base_commit, base_tree)
        _check_commit(sandbox, store, base_commit, base_tree)


def materialize_git_patch(
    repository: Path | str,
    *,
    base_commit: str,
    base_tree: str,
    patch: bytes,
    limits: GitLimits | None = None,
) -> str:
    """The tree id Git produces by applying ``patch`` to ``base_tree``, or a refusal.

    ``base_commit`` must be a commit of ``repository`` whose tree is ``base_tree``;
    ``limits`` defaults to :data:`~agent_interface.candidate.git_limits.DEFAULT_GIT_LIMITS`.
    """
    limits = limits or DEFAULT_GIT_LIMITS
    names = _check_patch(patch, limits)
    with tempfile.TemporaryDirectory(prefix="agent-interface-tree-") as scratch:
        sandbox, store = _open(repository, Path(scratch), limits, base_commit, base_tree)
        _check_commit(sandbox, store, base_commit, base_tree)
        _copy_base(sandbox, store, base_tree, names)
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
        _check_result(sandbox, base_tree, tree, limits)
    return tree
