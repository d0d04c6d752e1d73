"""What a patch changed in the tree ``git write-tree`` produced, read from the private store.

The resulting tree is compared with the base tree in Python, descending only into
subtrees whose ids differ, so the cost follows the size of the change, not of the
repository. Objects come from the verified copy of the base or from the loose objects
``git`` wrote into the scratch store (each hashed again when read). Refused among the
entries the patch added or changed: symbolic links, submodules (gitlinks), unsafe paths
(:func:`~agent_interface.evaluator.git.paths.is_safe_tree_path`), blobs larger than
``max_blob_bytes``, and, unless allowed, added paths that a case-insensitive,
normalization-insensitive file system would confuse with another path of the tree (two
files, or a file and a directory; two directories that fold alike merge and are kept).
"""

from __future__ import annotations

import hashlib
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from agent_interface.evaluator.git.errors import GitTreeRefused
from agent_interface.evaluator.git.limits import GitLimits
from agent_interface.evaluator.git.objects import ObjectCopy, is_tree_mode, tree_entries
from agent_interface.evaluator.git.paths import collision_key, is_safe_tree_path

__all__: list[str] = []  # verifier machinery: not re-exported from the package root

_SYMLINK: Final = b"120000"
_GITLINK: Final = b"160000"
_HEADER_BYTES: Final = 64


def _unreadable() -> GitTreeRefused:
    return GitTreeRefused("write_tree_failed", "git wrote a tree that cannot be read back")


@dataclass
class _Store:
    """Reads objects from the verified copy or the scratch store's loose objects."""

    copy: ObjectCopy
    objects: Path
    width: int = field(init=False)
    _trees: dict[str, dict[bytes, tuple[bytes, str]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.width = hashlib.new(self.copy.algorithm).digest_size

    def _loose(self, object_id: str) -> Path:
        return self.objects / object_id[:2] / object_id[2:]

    def tree(self, object_id: str) -> dict[bytes, tuple[bytes, str]]:
        if object_id not in self._trees:
            known = self.copy.objects.get(object_id)
            if known is not None:
                kind, content = known
            else:
                try:
                    raw = zlib.decompress(self._loose(object_id).read_bytes())
                except (OSError, zlib.error):
                    raise _unreadable() from None
                header, _, content = raw.partition(b"\0")
                kind = header.split(b" ")[0].decode("ascii", "replace")
                if hashlib.new(self.copy.algorithm, raw).hexdigest() != object_id:
                    raise _unreadable()
            if kind != "tree":
                raise _unreadable()
            self._trees[object_id] = tree_entries(content, self.width)
        return self._trees[object_id]

    def blob_size(self, object_id: str) -> int:
        known = self.copy.objects.get(object_id)
        if known is not None:
            return len(known[1])
        try:
            with self._loose(object_id).open("rb") as handle:
                inflater = zlib.decompressobj()
                header = b""
                while b"\0" not in header:
                    chunk = handle.read(4096)
                    if not chunk:
                        raise _unreadable()
                    header += inflater.decompress(inflater.unconsumed_tail + chunk, _HEADER_BYTES)
                    if len(header) >= _HEADER_BYTES and b"\0" not in header:
                        raise _unreadable()
        except (OSError, zlib.error):
            raise _unreadable() from None
        kind, _, size = header.split(b"\0", 1)[0].partition(b" ")
        if kind != b"blob" or not size.isdigit():
            raise _unreadable()
        return int(size)


def _changes(
    store: _Store, old: str | None, new: str, prefix: bytes
) -> list[tuple[bytes, bytes, str, bool]]:
    """``(path, mode, id, added)`` of every non-tree entry ``new`` adds or changes."""
    before = store.tree(old) if old is not None else {}
    changed: list[tuple[bytes, bytes, str, bool]] = []
    for name, (mode, object_id) in store.tree(new).items():
        previous = before.get(name)
        if previous == (mode, object_id):
            continue
        path = prefix + name
        if is_tree_mode(mode):
            old_tree = previous[1] if previous is not None and is_tree_mode(previous[0]) else None
            changed += _changes(store, old_tree, object_id, path + b"/")
        else:
            added = previous is None or is_tree_mode(previous[0])
            changed.append((path, mode, object_id, added))
    return changed


def _collides(store: _Store, tree: str, path: bytes) -> bool:
    """Whether another entry of ``tree`` folds to ``path`` (see the module docstring)."""
    parts = path.split(b"/")
    candidates: list[tuple[str, bool]] = [(tree, False)]  # a tree, and whether its path differs
    for depth, part in enumerate(parts):
        key = collision_key(part)
        last = depth == len(parts) - 1
        following: list[tuple[str, bool]] = []
        for tree_id, differs in candidates:
            for name, (mode, object_id) in store.tree(tree_id).items():
                if collision_key(name) != key:
                    continue
                other = differs or name != part
                if other and (last or not is_tree_mode(mode)):
                    return True
                if not last and is_tree_mode(mode):
                    following.append((object_id, other))
        candidates = following
    return False


def check_result(
    copy: ObjectCopy, objects: Path, base_tree: str, tree: str, limits: GitLimits
) -> None:
    """Refuse what the patch added or changed in ``tree`` (see the module docstring).

    ``objects`` is the scratch object directory ``git`` wrote the new objects into.
    """
    store = _Store(copy, objects)
    added: list[bytes] = []
    for path, mode, object_id, is_added in _changes(store, base_tree, tree, b""):
        if mode == _SYMLINK:
            raise GitTreeRefused("patch_creates_symlink", "the patch creates a symbolic link")
        if mode.lstrip(b"0") == _GITLINK:
            raise GitTreeRefused("patch_creates_submodule", "the patch creates a submodule link")
        if not is_safe_tree_path(path):
            raise GitTreeRefused("patch_path_unsafe", "the patch writes a path outside the tree")
        if store.blob_size(object_id) > limits.max_blob_bytes:
            raise GitTreeRefused(
                "patch_blob_too_large",
                f"the patch writes a blob larger than {limits.max_blob_bytes} bytes",
            )
        if is_added:
            added.append(path)
    if limits.case_collisions == "refuse" and any(_collides(store, tree, path) for path in added):
        raise GitTreeRefused(
            "patch_path_case_collision",
            "the patch adds a path that differs from another path of the tree only in case or "
            "Unicode normalization",
        )
