"""Helpers for the hostile-input tests of the verifier: repository snapshots, marker
commands, Git binary hunks written by hand, and a watchdog for hangs."""

from __future__ import annotations

import base64
import functools
import hashlib
import os
import shlex
import stat
import zlib
from pathlib import Path

from tests.evaluator.git_fixtures import ENV


def tree_state(path: Path) -> dict[str, tuple[str, int, int | str]]:
    """Every entry under ``path`` (``.git`` included): kind, mode, and content digest or
    modification time in nanoseconds; equal states mean nothing was written or touched."""
    state: dict[str, tuple[str, int, int | str]] = {}
    for item in sorted(path.rglob("*")):
        info = item.lstat()
        name = str(item.relative_to(path))
        if stat.S_ISLNK(info.st_mode):
            state[name] = ("link", info.st_mode, os.readlink(item))
        elif stat.S_ISREG(info.st_mode):
            digest = hashlib.sha256(item.read_bytes()).hexdigest()
            state[name] = ("file", info.st_mode, f"{digest}@{info.st_mtime_ns}")
        else:
            state[name] = ("other", info.st_mode, info.st_mtime_ns)
    return state


def marker_command(marker: Path) -> str:
    """A shell command that records, in ``marker``, that it ran."""
    return f"echo ran >> {shlex.quote(str(marker))}"


def git_env() -> dict[str, str]:
    return dict(ENV)


def b85_lines(data: bytes) -> bytes:
    """``data`` as Git writes binary hunk lines: a length letter, then base85."""
    out = []
    for start in range(0, len(data), 52):
        chunk = data[start : start + 52]
        count = len(chunk)
        letter = chr(ord("A") + count - 1) if count <= 26 else chr(ord("a") + count - 27)
        out.append(letter.encode() + base64.b85encode(chunk + b"\0" * (-count % 4)))
    return b"\n".join(out) + b"\n"


def blob_id(content: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()


def literal_hunk(declared: int, deflated: bytes) -> bytes:
    return b"literal %d\n" % declared + b85_lines(deflated) + b"\n"


@functools.lru_cache(maxsize=4)
def zero_bomb(size: int) -> bytes:
    """``size`` zero bytes as one zlib stream (about a thousandth of ``size``).

    After a full flush deflate starts afresh, so every MiB of zeros compresses to the
    same bytes: the stream is built from one compressed MiB repeated, with the right
    Adler-32 at the end.
    """
    whole, rest = divmod(size, 1 << 20)
    if whole == 0:
        return zlib.compress(b"\0" * size, 9)
    block = b"\0" * (1 << 20)
    compressor = zlib.compressobj(9)
    head = compressor.compress(block) + compressor.flush(zlib.Z_FULL_FLUSH)
    body = compressor.compress(block) + compressor.flush(zlib.Z_FULL_FLUSH)
    tail = compressor.compress(b"\0" * rest) + compressor.flush()
    checksum = 1
    for _ in range(whole):
        checksum = zlib.adler32(block, checksum)
    checksum = zlib.adler32(b"\0" * rest, checksum)
    return head + body * (whole - 1) + tail[:-4] + checksum.to_bytes(4, "big")


def new_binary_file_patch(path: str, hunk: bytes, new_id: str = "1" * 40) -> bytes:
    """A patch creating ``path`` from one forward binary hunk (and an empty reverse hunk)."""
    return (
        f"diff --git a/{path} b/{path}\nnew file mode 100644\n"
        f"index {'0' * 40}..{new_id}\nGIT binary patch\n"
    ).encode() + hunk + b"literal 0\nHcmV?d00001\n\n"


def varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)
