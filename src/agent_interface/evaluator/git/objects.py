"""Copy the objects a patch needs out of a borrowed repository, trusting none of them.

``git ls-tree -r -d`` lists the base tree's trees; one ``git cat-file --batch`` session
then reads the base commit, those trees and the blobs at the paths the patch names. Each object's bytes are
hashed here (``sha1`` or ``sha256`` of ``"<type> <size>\\0" + content``) and refused
unless they hash to the id they were asked for, so a repository that lies about an
object (a loose file holding other bytes, a crafted pack) is caught before ``git`` uses
it. The verified objects are written to a private pack (format 2, with its version 2
index), the only object store the later ``git apply`` and ``write-tree`` see.
"""

from __future__ import annotations

import hashlib
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from agent_interface.evaluator.git.errors import GitTreeRefused
from agent_interface.evaluator.git.sandbox import CatFileBatch, GitSandbox

__all__: list[str] = []  # verifier machinery: not re-exported from the package root

_TYPE_CODES: Final = {"commit": 1, "tree": 2, "blob": 3, "tag": 4}
_ROUND: Final = 512  # object ids asked per round trip


@dataclass
class ObjectCopy:
    """Verified objects (id to type and content) waiting to be written as one pack."""

    algorithm: str
    objects: dict[str, tuple[str, bytes]] = field(default_factory=dict)

    def add(self, object_id: str, kind: str, content: bytes) -> None:
        self.objects.setdefault(object_id, (kind, content))

    def write(self, pack_directory: Path) -> None:
        """Write the objects as ``pack-<checksum>.pack`` and ``.idx`` in ``pack_directory``."""
        pack_hash = hashlib.new(self.algorithm)
        body = bytearray(b"PACK" + (2).to_bytes(4, "big") + len(self.objects).to_bytes(4, "big"))
        index: list[tuple[bytes, int, int]] = []
        for object_id, (kind, content) in self.objects.items():
            size = len(content)
            header = bytearray([(_TYPE_CODES[kind] << 4) | (size & 0x0F)])
            size >>= 4
            while size:
                header[-1] |= 0x80
                header.append(size & 0x7F)
                size >>= 7
            entry = bytes(header) + zlib.compress(content, 0)
            index.append((bytes.fromhex(object_id), len(body), zlib.crc32(entry)))
            body += entry
        pack_hash.update(body)
        checksum = pack_hash.digest()
        name = "pack-" + checksum.hex()
        (pack_directory / f"{name}.pack").write_bytes(bytes(body) + checksum)
        (pack_directory / f"{name}.idx").write_bytes(_index(sorted(index), checksum, self.algorithm))


def _index(entries: list[tuple[bytes, int, int]], pack_checksum: bytes, algorithm: str) -> bytes:
    """A version 2 pack index for ``entries`` (id, offset, crc32) sorted by id."""
    out = bytearray(b"\xfftOc" + (2).to_bytes(4, "big"))
    counts = [0] * 256
    for raw_id, _, _ in entries:
        counts[raw_id[0]] += 1
    running = 0
    for count in counts:
        running += count
        out += running.to_bytes(4, "big")
    for raw_id, _, _ in entries:
        out += raw_id
    for _, _, crc in entries:
        out += crc.to_bytes(4, "big")
    large: list[int] = []
    for _, offset, _ in entries:
        if offset < 0x80000000:
            out += offset.to_bytes(4, "big")
        else:
            out += (0x80000000 | len(large)).to_bytes(4, "big")
            large.append(offset)
    for offset in large:
        out += offset.to_bytes(8, "big")
    out += pack_checksum
    return bytes(out) + hashlib.new(algorithm, out).digest()


def verified_object(
    answer: tuple[str, bytes] | None, object_id: str, algorithm: str, absent: GitTreeRefused
) -> tuple[str, bytes]:
    """``answer`` (a ``cat-file`` type and content) once its bytes hash to ``object_id``;
    ``absent`` is raised for a missing object."""
    if answer is None:
        raise absent
    kind, content = answer
    digest = hashlib.new(algorithm, f"{kind} {len(content)}\0".encode() + content).hexdigest()
    if digest != object_id or kind not in _TYPE_CODES:
        raise GitTreeRefused(
            "repository_object_corrupt", "an object's bytes do not hash to its id"
        )
    return kind, content


def read_base_commit(batch: CatFileBatch, algorithm: str, base_commit: str, base_tree: str) -> bytes:
    """The base commit's verified bytes; refused unless it is a commit naming ``base_tree``."""
    absent = GitTreeRefused("base_commit_absent", "the base commit is not in the repository")
    kind, content = verified_object(batch.read([base_commit])[0], base_commit, algorithm, absent)
    if kind != "commit":
        raise absent
    if content.split(b"\n", 1)[0] != b"tree " + base_tree.encode():
        raise GitTreeRefused(
            "base_tree_mismatch", "the base commit does not resolve to the declared base tree"
        )
    return content


def _entry_end(content: bytes, pos: int, width: int) -> tuple[bytes, int, int]:
    """The mode of the tree entry at ``pos``, where its name ends and where it ends."""
    space = content.find(b" ", pos, pos + 8)
    nul = content.find(b"\0", space + 1) if space > pos else -1
    if nul < 0 or nul + 1 + width > len(content):
        raise GitTreeRefused("repository_object_corrupt", "a tree of the base is malformed")
    return content[pos:space], nul, nul + 1 + width


def is_tree_mode(mode: bytes) -> bool:
    return mode == b"40000" or mode.lstrip(b"0") == b"40000"  # old trees pad modes with 0


def tree_entry_list(content: bytes, width: int) -> list[tuple[bytes, bytes, str]]:
    """Each entry of a tree object in its order: name, mode and id (duplicates kept)."""
    entries: list[tuple[bytes, bytes, str]] = []
    pos = 0
    while pos < len(content):
        start = pos
        mode, nul, pos = _entry_end(content, pos, width)
        entries.append((content[start + len(mode) + 1 : nul], mode, content[nul + 1 : pos].hex()))
    return entries


def tree_entries(content: bytes, width: int) -> dict[bytes, tuple[bytes, str]]:
    """Each entry of a tree object: name to mode and id."""
    return {name: (mode, object_id) for name, mode, object_id in tree_entry_list(content, width)}


def copy_base_objects(
    sandbox: GitSandbox,
    batch: CatFileBatch,
    borrow: Path,
    copy: ObjectCopy,
    base_tree: str,
    names: set[bytes],
) -> None:
    """Add every tree of ``base_tree`` and the blobs at ``names`` to ``copy``, verified.

    ``git ls-tree -r -d`` (borrowing ``borrow``) lists the trees; each is then read
    through ``batch`` and hashed, so a tree the repository lies about is refused.
    """
    listed = sandbox.run("ls-tree", "-r", "-d", "-z", base_tree, borrow=borrow)
    if not listed.ok:
        raise GitTreeRefused("base_tree_absent", "the base tree cannot be read")
    tree_ids = [
        entry.split(b"\t", 1)[0].split(b" ")[-1].decode("ascii", "replace")
        for entry in listed.stdout.split(b"\0")
        if entry
    ]
    width = hashlib.new(copy.algorithm).digest_size
    absent = GitTreeRefused("base_tree_absent", "the base tree cannot be read")
    trees: dict[str, bytes] = {}
    wanted_trees = list(dict.fromkeys([base_tree, *tree_ids]))
    for start in range(0, len(wanted_trees), _ROUND):
        round_ids = wanted_trees[start : start + _ROUND]
        for object_id, answer in zip(round_ids, batch.read(round_ids), strict=True):
            kind, content = verified_object(answer, object_id, copy.algorithm, absent)
            if kind != "tree":
                raise absent
            copy.add(object_id, kind, content)
            trees[object_id] = content
    found = _blobs_at(trees, base_tree, names, width)
    wanted = [blob for blob in dict.fromkeys(found) if blob not in copy.objects]
    unreadable = GitTreeRefused(
        "repository_objects_unreadable", "a blob the patch reads is not in the repository"
    )
    for start in range(0, len(wanted), _ROUND):
        round_ids = wanted[start : start + _ROUND]
        for object_id, answer in zip(round_ids, batch.read(round_ids), strict=True):
            kind, content = verified_object(answer, object_id, copy.algorithm, unreadable)
            copy.add(object_id, kind, content)


def _blobs_at(trees: dict[str, bytes], root: str, names: set[bytes], width: int) -> list[str]:
    """The ids of the blobs (files and symbolic links) at ``names`` in the tree ``root``."""
    parsed: dict[str, dict[bytes, tuple[bytes, str]]] = {}
    found: list[str] = []
    for name in names:
        current = root
        parts = name.split(b"/")
        for depth, part in enumerate(parts):
            if current not in parsed:
                parsed[current] = tree_entries(trees.get(current, b""), width)
            entry = parsed[current].get(part)
            if entry is None:
                break
            mode, object_id = entry
            if depth == len(parts) - 1:
                if not is_tree_mode(mode) and mode.lstrip(b"0") != b"160000":
                    found.append(object_id)
            elif not is_tree_mode(mode):
                break
            current = object_id
    return found
