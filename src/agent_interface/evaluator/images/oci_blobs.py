"""Content-addressed blobs (``blobs/sha256/<hex>``), checked every time they are read.

A blob is named by the SHA-256 of its bytes. :class:`BlobDirectory` never hands out a
byte it has not counted and hashed: :meth:`~BlobDirectory.read` returns a small blob whole
after checking its size and digest, :meth:`~BlobDirectory.open` streams a large one
through a :class:`VerifiedReader` that refuses (``image_digest_mismatch``) at the end, or
as soon as more bytes than the descriptor's size arrive. Files are opened without
following a final symbolic link and must be regular files (a FIFO planted as a blob is
refused, never waited on). :meth:`~BlobDirectory.add` copies a blob in through the same
check into a temporary file and renames it into place, so a blob's name is only ever
bound to bytes that hash to it.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
from pathlib import Path
from typing import Final

from .image_limits import ImageRefused
from .oci_documents import check_digest

__all__ = ["BlobDirectory", "VerifiedReader"]

_CHUNK: Final = 1 << 20
_READ_FLAGS: Final = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK


def _open_regular(path: Path, digest: str) -> int:
    try:
        fd = os.open(path, _READ_FLAGS)
    except FileNotFoundError:
        raise ImageRefused("image_not_found", f"blob {digest} is not in the layout") from None
    except OSError:
        raise ImageRefused("image_not_found", f"blob {digest} cannot be opened as a file") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise ImageRefused("image_not_found", f"blob {digest} is not a regular file")
    os.set_blocking(fd, True)
    return fd


class VerifiedReader:
    """A file-like reader of one blob that checks its size and digest as it goes.

    ``read`` refuses as soon as more than ``size`` bytes arrive; at end of file (and in
    :meth:`finish`) it refuses unless exactly ``size`` bytes hashing to ``digest`` came.
    """

    def __init__(self, fd: int, digest: str, size: int) -> None:
        self._fd = fd
        self._digest = digest
        self._size = size
        self._hash = hashlib.sha256()
        self._count = 0
        self._checked = False

    def read(self, n: int = -1) -> bytes:
        """Up to ``n`` bytes (all remaining if ``n`` < 0), counted and hashed."""
        if n is None or n < 0:
            parts = []
            while chunk := self.read(_CHUNK):
                parts.append(chunk)
            return b"".join(parts)
        want = min(n, _CHUNK)
        data = os.read(self._fd, want) if want else b""
        self._count += len(data)
        if self._count > self._size:
            raise ImageRefused("image_digest_mismatch", f"blob {self._digest} is longer than its descriptor says")
        self._hash.update(data)
        if not data and want:
            self._check()
        return data

    def _check(self) -> None:
        if self._checked:
            return
        if self._count != self._size or "sha256:" + self._hash.hexdigest() != self._digest:
            raise ImageRefused("image_digest_mismatch", f"blob {self._digest} does not match its digest or size")
        self._checked = True

    def finish(self) -> None:
        """Read what is left and check the whole blob (call after a consumer stops early)."""
        while self.read(_CHUNK):
            pass
        self._check()

    def close(self) -> None:
        """Close the file (without checking; call :meth:`finish` first to check)."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> VerifiedReader:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


class BlobDirectory:
    """The ``blobs/sha256`` directory of an OCI layout (see the module docstring)."""

    def __init__(self, layout: str | os.PathLike[str]) -> None:
        self.directory: Final = Path(layout) / "blobs" / "sha256"

    def path(self, digest: str) -> Path:
        """Where the blob named ``digest`` lives (``digest`` must be a sha256 digest)."""
        return self.directory / check_digest(digest, "/digest").removeprefix("sha256:")

    def has(self, digest: str) -> bool:
        """Whether a regular file stands under ``digest``'s name (its bytes are not checked)."""
        try:
            return stat.S_ISREG(os.lstat(self.path(digest)).st_mode)
        except OSError:
            return False

    def open(self, digest: str, size: int) -> VerifiedReader:
        """A :class:`VerifiedReader` of the blob; refused early if its file size is not ``size``."""
        fd = _open_regular(self.path(digest), digest)
        if os.fstat(fd).st_size != size:
            os.close(fd)
            raise ImageRefused("image_digest_mismatch", f"blob {digest} does not have its descriptor's size")
        return VerifiedReader(fd, digest, size)

    def read(self, digest: str, size: int, max_bytes: int) -> bytes:
        """The bytes of a small blob (at most ``max_bytes``), checked against ``digest``/``size``."""
        if size > max_bytes:
            raise ImageRefused("image_too_large", f"blob {digest} is larger than a document may be")
        with self.open(digest, size) as reader:
            data = reader.read(-1)
            reader.finish()
        return data

    def put(self, data: bytes, digest: str) -> None:
        """Store the bytes of a small blob already in memory, if they hash to ``digest``."""
        if "sha256:" + hashlib.sha256(data).hexdigest() != check_digest(digest, "/digest"):
            raise ImageRefused("image_digest_mismatch", f"blob {digest} does not match its digest")
        if self.has(digest):
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        temporary = self.directory / f".tmp-{os.getpid()}-{os.urandom(6).hex()}"
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        os.rename(temporary, self.path(digest))

    def add(self, source: VerifiedReader, digest: str) -> None:
        """Copy ``source`` (a checked reader of ``digest``) in; a blob already present is kept."""
        self.directory.mkdir(parents=True, exist_ok=True)
        final = self.path(digest)
        if self.has(digest):
            source.finish()
            return
        temporary = self.directory / f".tmp-{os.getpid()}-{os.urandom(6).hex()}"
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        try:
            try:
                while chunk := source.read(_CHUNK):
                    view = memoryview(chunk)
                    while view:
                        view = view[os.write(fd, view) :]
                source.finish()
            finally:
                os.close(fd)
            os.rename(temporary, final)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
