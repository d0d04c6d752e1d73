"""Write a verified Git tree to disk as plain files, reading it through the sandbox only.

The tree (the candidate tree ``git write-tree`` produced, or the base tree) is read by a
``git cat-file --batch`` session of the verifier's own scratch repository
(:class:`~agent_interface.evaluator.git.sandbox.GitSandbox`: its pinned settings, its
environment, its rlimits and its one deadline), borrowing the repository's object store
read-only. Every tree and blob is hashed again here before it is used, and the sizes of
the blobs are asked first (``cat-file --batch-check``) so that no round of reads holds
more than :data:`_ROUND_BYTES` in memory. ``git`` never writes a file of the result:
directories, files (``0o644``, or ``0o755`` for ``100755``) and symbolic links are created
here with ``O_EXCL | O_NOFOLLOW`` relative to directory descriptors, so nothing lands
outside ``target`` or over anything already written.

Refused (:class:`~agent_interface.evaluator.git.errors.GitTreeRefused`):

* ``tree_submodule``: a gitlink (its content is not in the repository);
* ``tree_symlink_escapes``: a symbolic link whose target is absolute or resolves outside
  ``target`` (checked on disk, once every link exists, so a chain of links is followed);
* ``tree_path_unsafe``: a name with ``/``, NUL, ``.``, ``..``, empty, or any ``.git``
  spelling; ``tree_entry_duplicate``: two entries with one name in a tree;
* ``tree_mode_unsupported``: a mode Git does not write;
* ``tree_too_large``: more than ``max_entries`` entries, a blob over ``max_file_bytes``,
  or more than ``max_total_bytes`` in all.

The caller removes ``target`` on refusal.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from agent_interface.evaluator.git.errors import GitTreeRefused
from agent_interface.evaluator.git.objects import is_tree_mode, tree_entry_list, verified_object
from agent_interface.evaluator.git.paths import is_safe_tree_path
from agent_interface.evaluator.git.sandbox import CatFileBatch, GitSandbox

__all__ = ["TreeExportLimits", "export_tree"]

_DIR_FLAGS: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NEW_FILE: Final = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_ROUND_BYTES: Final = 64 << 20  # blob bytes read per round trip, at most (one larger blob alone)
_ROUND_IDS: Final = 512
_MODES: Final = {b"100644": 0o644, b"100755": 0o755, b"100664": 0o644}


@dataclass(frozen=True, slots=True)
class TreeExportLimits:
    """Bounds on one exported tree: entries (files, links and directories), bytes of one
    blob, bytes of all blobs."""

    max_entries: int = 100_000
    max_file_bytes: int = 256 << 20
    max_total_bytes: int = 1 << 30

    def __post_init__(self) -> None:
        for name in ("max_entries", "max_file_bytes", "max_total_bytes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"TreeExportLimits.{name} must be a positive integer")


@dataclass(slots=True)
class _Plan:
    """What the walk found: directories to make, blobs to write, links to make."""

    directories: list[bytes]
    files: list[tuple[bytes, str, int]]  # path, blob id, mode
    links: list[tuple[bytes, str]]  # path, blob id


def _refuse(code: str, message: str) -> GitTreeRefused:
    return GitTreeRefused(code, message)


def _walk(batch: CatFileBatch, algorithm: str, tree: str, limits: TreeExportLimits) -> _Plan:
    """Every entry of ``tree``, its trees read and hashed level by level."""
    width = hashlib.new(algorithm).digest_size
    plan = _Plan([], [], [])
    absent = GitTreeRefused("repository_objects_unreadable", "a tree of the result cannot be read")
    level: list[tuple[bytes, str]] = [(b"", tree)]
    count = 0
    while level:
        following: list[tuple[bytes, str]] = []
        for start in range(0, len(level), _ROUND_IDS):
            chunk = level[start : start + _ROUND_IDS]
            answers = batch.read([object_id for _, object_id in chunk])
            for (prefix, object_id), answer in zip(chunk, answers, strict=True):
                kind, content = verified_object(answer, object_id, algorithm, absent)
                if kind != "tree":
                    raise absent
                seen: set[bytes] = set()
                for name, mode, entry_id in tree_entry_list(content, width):
                    if name in seen:
                        raise _refuse("tree_entry_duplicate", "a tree names one entry twice")
                    seen.add(name)
                    path = prefix + name
                    if b"/" in name or not is_safe_tree_path(path):
                        raise _refuse("tree_path_unsafe", "the tree holds a path outside itself")
                    count += 1
                    if count > limits.max_entries:
                        raise _refuse("tree_too_large", f"the tree has over {limits.max_entries} entries")
                    if is_tree_mode(mode):
                        plan.directories.append(path)
                        following.append((path + b"/", entry_id))
                    elif mode.lstrip(b"0") == b"160000":
                        raise _refuse("tree_submodule", "the tree holds a submodule, whose content is not here")
                    elif mode == b"120000":
                        plan.links.append((path, entry_id))
                    elif mode in _MODES:
                        plan.files.append((path, entry_id, _MODES[mode]))
                    else:
                        raise _refuse("tree_mode_unsupported", "the tree holds an entry of an unknown mode")
        level = following
    return plan


def _sizes(sandbox: GitSandbox, borrow: Path, blobs: list[str]) -> dict[str, int]:
    """Each blob's size as ``cat-file --batch-check`` reports it (checked again on read)."""
    if not blobs:
        return {}
    result = sandbox.run("cat-file", "--batch-check", stdin="".join(f"{b}\n" for b in blobs).encode(), borrow=borrow)
    sizes: dict[str, int] = {}
    for line in result.stdout.split(b"\n"):
        fields = line.split(b" ")
        if len(fields) == 3 and fields[1] == b"blob" and fields[2].isdigit():
            sizes[fields[0].decode("ascii", "replace")] = int(fields[2])
    if not result.ok or any(blob not in sizes for blob in blobs):
        raise GitTreeRefused("repository_objects_unreadable", "a blob of the tree is not in the repository")
    return sizes


def _open_parent(root_fd: int, path: bytes) -> tuple[int, bytes]:
    """A descriptor of ``path``'s directory (opened without following links) and its name."""
    parts = path.split(b"/")
    fd = os.dup(root_fd)
    try:
        for part in parts[:-1]:
            child = os.open(part, _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd, parts[-1]


def _write_blob(root_fd: int, path: bytes, content: bytes, mode: int) -> None:
    parent, name = _open_parent(root_fd, path)
    try:
        fd = os.open(name, _NEW_FILE, mode, dir_fd=parent)
        try:
            view = memoryview(content)
            while view:
                view = view[os.write(fd, view) :]
            os.fchmod(fd, mode)
        finally:
            os.close(fd)
    finally:
        os.close(parent)


def _read_rounds(wanted: list[str], sizes: dict[str, int]) -> list[list[str]]:
    """``wanted`` cut into rounds of at most :data:`_ROUND_BYTES` (or one larger blob)."""
    rounds: list[list[str]] = [[]]
    held = 0
    for blob in wanted:
        if rounds[-1] and (held + sizes[blob] > _ROUND_BYTES or len(rounds[-1]) >= _ROUND_IDS):
            rounds.append([])
            held = 0
        rounds[-1].append(blob)
        held += sizes[blob]
    return [chunk for chunk in rounds if chunk]


def export_tree(
    sandbox: GitSandbox,
    borrow: Path,
    algorithm: str,
    tree: str,
    target: Path,
    limits: TreeExportLimits,
) -> int:
    """Write ``tree`` into the empty directory ``target``; the number of files and links.

    ``borrow`` is the repository's object store (read-only, through ``cat-file``); the
    sandbox's own store holds the objects ``git write-tree`` wrote.
    """
    with sandbox.batch(borrow) as batch:
        plan = _walk(batch, algorithm, tree, limits)
        blobs = list(dict.fromkeys([blob for _, blob, _ in plan.files] + [blob for _, blob in plan.links]))
        sizes = _sizes(sandbox, borrow, blobs)
        for blob in blobs:
            if sizes[blob] > limits.max_file_bytes:
                raise _refuse("tree_too_large", f"a file of the tree is over {limits.max_file_bytes} bytes")
        total = sum(sizes[blob] for _, blob, _ in plan.files)
        if total > limits.max_total_bytes:
            raise _refuse("tree_too_large", f"the tree's files hold over {limits.max_total_bytes} bytes")
        _check_names(target, plan)
        try:
            _write_plan(batch, algorithm, plan, blobs, sizes, target)
        except OSError as error:  # a name or a file the file system will not take
            reason = (error.strerror or "cannot be written").lower()
            raise _refuse("tree_unwritable", f"the file system refused a file of the tree ({reason})") from None
    _check_links(target, [path for path, _ in plan.links])
    return len(plan.files) + len(plan.links)


def _check_names(target: Path, plan: _Plan) -> None:
    """Refuse, before writing anything, a name longer than the target's file system takes."""
    try:
        name_max = os.pathconf(target, "PC_NAME_MAX")
    except (OSError, ValueError):
        name_max = 255
    paths = [*plan.directories, *(path for path, _, _ in plan.files), *(path for path, _ in plan.links)]
    if any(len(path.rsplit(b"/", 1)[-1]) > name_max for path in paths):
        raise _refuse("tree_name_too_long", f"a file name in the tree is longer than {name_max} bytes, "
                      "the most this file system takes")


def _write_plan(
    batch: CatFileBatch, algorithm: str, plan: _Plan, blobs: list[str], sizes: dict[str, int], target: Path
) -> None:
    """Make the plan's directories, files and links under ``target`` (``OSError`` as raised)."""
    root_fd = os.open(target, _DIR_FLAGS)
    try:
        for directory in plan.directories:
            parent, name = _open_parent(root_fd, directory)
            try:
                os.mkdir(name, 0o755, dir_fd=parent)
            finally:
                os.close(parent)
        unreadable = GitTreeRefused("repository_objects_unreadable", "a blob of the tree cannot be read")
        paths: dict[str, list[tuple[bytes, int]]] = {}
        for path, blob, mode in plan.files:
            paths.setdefault(blob, []).append((path, mode))
        link_targets: dict[str, bytes] = {}
        link_blobs = {blob for _, blob in plan.links}
        for chunk in _read_rounds(blobs, sizes):
            for blob, answer in zip(chunk, batch.read(chunk), strict=True):
                kind, content = verified_object(answer, blob, algorithm, unreadable)
                if kind != "blob" or len(content) != sizes[blob]:
                    raise unreadable
                for path, mode in paths.get(blob, ()):
                    _write_blob(root_fd, path, content, mode)
                if blob in link_blobs:
                    link_targets[blob] = content
        for path, blob in plan.links:
            _make_link(root_fd, path, link_targets[blob])
    finally:
        os.close(root_fd)


def _make_link(root_fd: int, path: bytes, link: bytes) -> None:
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(path), link))
    if not link or link.startswith(b"/") or b"\0" in link or joined == b".." or joined.startswith(b"../"):
        raise _refuse("tree_symlink_escapes", "a symbolic link of the tree points outside it")
    parent, name = _open_parent(root_fd, path)
    try:
        os.symlink(link, name, dir_fd=parent)
    finally:
        os.close(parent)


def _check_links(target: Path, links: list[bytes]) -> None:
    """Refuse once every link exists if one resolves outside ``target`` (through others)."""
    root = os.path.realpath(target)
    for path in links:
        resolved = os.path.realpath(os.path.join(root, os.fsdecode(path)))
        if resolved != root and not resolved.startswith(root + os.sep):
            raise _refuse("tree_symlink_escapes", "a symbolic link of the tree points outside it")
