"""The Git tree id of a directory on disk, computed here without ``git``.

After a materialized tree is written, its id is computed again from the files, so what
is on disk is checked against the verified tree by a second, independent path. Git's
rules: a blob id is the hash of ``blob <size>\\0<bytes>``; a tree lists
``<mode> <name>\\0<raw id>`` entries sorted as if every directory name ended with ``/``;
modes are ``100644`` (regular), ``100755`` (any execute bit), ``120000`` (a symbolic link,
whose blob is its target) and ``40000`` (a directory); a directory with no file anywhere
below it is not recorded. SHA-1 and SHA-256 repositories differ only in the hash.

Nothing is followed: a symbolic link is hashed as a link, and any other kind of file
(device, FIFO, socket) is refused.
"""

from __future__ import annotations

import hashlib
import os
import stat
from typing import Final

from agent_interface.core.errors import ContractError

__all__ = ["git_blob_id", "git_tree_id_of_directory"]

_CHUNK: Final = 1 << 20
_DIR_FLAGS: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS: Final = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC


def git_blob_id(data: bytes, object_format: str = "sha1") -> str:
    """The Git blob id of ``data``."""
    return hashlib.new(object_format, b"blob %d\0" % len(data) + data).hexdigest()


def _file_id(dir_fd: int, name: str, size: int, object_format: str) -> bytes:
    digest = hashlib.new(object_format, b"blob %d\0" % size)
    fd = os.open(name, _FILE_FLAGS, dir_fd=dir_fd)
    try:
        read = 0
        while chunk := os.read(fd, _CHUNK):
            digest.update(chunk)
            read += len(chunk)
    finally:
        os.close(fd)
    if read != size:
        raise ContractError.single(
            "/", "tree_changed_while_hashing", "a file changed size while it was hashed"
        )
    return digest.digest()


def _tree(dir_fd: int, object_format: str) -> bytes | None:
    entries: list[tuple[bytes, bytes, bytes]] = []
    for name in os.listdir(dir_fd):
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        raw = os.fsencode(name)
        if stat.S_ISDIR(info.st_mode):
            child = os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
            try:
                sub = _tree(child, object_format)
            finally:
                os.close(child)
            if sub is not None:
                entries.append((raw + b"/", b"40000 " + raw, sub))
        elif stat.S_ISREG(info.st_mode):
            mode = b"100755" if info.st_mode & 0o111 else b"100644"
            entries.append((raw, mode + b" " + raw, _file_id(dir_fd, name, info.st_size, object_format)))
        elif stat.S_ISLNK(info.st_mode):
            target = os.fsencode(os.readlink(name, dir_fd=dir_fd))
            blob = hashlib.new(object_format, b"blob %d\0" % len(target) + target).digest()
            entries.append((raw, b"120000 " + raw, blob))
        else:
            raise ContractError.single(
                "/", "tree_special_file", "the directory holds a device, FIFO or socket"
            )
    if not entries:
        return None
    entries.sort(key=lambda entry: entry[0])
    body = b"".join(head + b"\0" + object_id for _, head, object_id in entries)
    return hashlib.new(object_format, b"tree %d\0" % len(body) + body).digest()


def git_tree_id_of_directory(path: str | os.PathLike[str], object_format: str = "sha1") -> str:
    """The id ``git write-tree`` would give the files under ``path`` (``sha1`` or ``sha256``)."""
    fd = os.open(path, _DIR_FLAGS)
    try:
        tree = _tree(fd, object_format)
    finally:
        os.close(fd)
    if tree is None:
        body = b""
        return hashlib.new(object_format, b"tree 0\0" + body).hexdigest()
    return tree.hex()
