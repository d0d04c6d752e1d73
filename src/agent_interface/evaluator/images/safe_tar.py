"""Unpack a tar archive into an empty directory without trusting a byte of it.

A workspace snapshot carries its files as a tar archive. :func:`unpack_tar` writes it
under a directory it was given, entry by entry, and refuses the whole archive
(:class:`ArchiveRefused`, a ``ContractError`` whose issue names the entry) on:

* a name that is not a canonical relative path: absolute, with ``..`` / ``.`` / empty
  segments, a backslash, a control character, a ``.git`` segment (``tar_path_unsafe``);
* a hard link (``tar_hardlink``), a symbolic link unless ``allow_symlinks`` and its
  target stays inside the directory (``tar_symlink``), a device, FIFO or any other
  special entry (``tar_special_entry``);
* a second entry for a path already written, or a file where a directory is needed
  (``tar_duplicate_path``);
* more than ``max_entries`` entries, a file over ``max_file_bytes`` or a total over
  ``max_total_bytes`` (``tar_too_large``), and an archive Python cannot read
  (``tar_unreadable``).

Files are created with ``O_EXCL | O_NOFOLLOW`` relative to directory descriptors opened
without following links, so nothing is ever written outside the directory or over an
existing file. The caller removes the directory on refusal (see
:mod:`.materialize`). File modes are the entry's permission bits (``& 0o777``).
"""

from __future__ import annotations

import hashlib
import io
import os
import posixpath
import tarfile
from dataclasses import dataclass
from typing import IO, Final, Literal

from agent_interface.core.contract_limits import is_safe_relative_path
from agent_interface.core.errors import ContractError, ContractIssue

__all__ = ["ArchiveEntry", "ArchiveLimits", "ArchiveRefused", "unpack_tar"]

_DIR_FLAGS: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NEW_FILE: Final = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_CHUNK: Final = 1 << 20


class ArchiveRefused(ContractError):
    """The archive cannot be unpacked safely; ``code`` names the rule, ``entry`` the name."""

    def __init__(self, code: str, message: str, entry: str | None = None) -> None:
        where = "" if entry is None else f" (entry {entry!r})"
        super().__init__([ContractIssue("", code, message + where)], subject="tar archive")
        self.code = code
        self.entry = entry


@dataclass(frozen=True, slots=True)
class ArchiveLimits:
    """Bounds on one archive: entries, bytes of one file, bytes in all, and the depth (path
    segments) of one entry's name (refused above as ``tar_too_large``: nothing that reads the
    unpacked tree afterwards meets a path deeper than it)."""

    max_entries: int = 100_000
    max_file_bytes: int = 1 << 30
    max_total_bytes: int = 4 << 30
    max_depth: int = 256


@dataclass(frozen=True, slots=True)
class ArchiveEntry:
    """One unpacked file or link: its path, mode, size and SHA-256 (``sha256:<hex>``)."""

    path: str
    kind: Literal["file", "symlink"]
    mode: int
    byte_length: int
    sha256: str


def _open_parent(root_fd: int, parts: list[str], made: set[str], name: str) -> int:
    fd = os.dup(root_fd)
    walked: list[str] = []
    for part in parts:
        walked.append(part)
        try:
            child = os.open(part, _DIR_FLAGS, dir_fd=fd)
        except FileNotFoundError:
            os.mkdir(part, 0o755, dir_fd=fd)
            made.add("/".join(walked))
            child = os.open(part, _DIR_FLAGS, dir_fd=fd)
        except (NotADirectoryError, OSError):
            os.close(fd)
            raise ArchiveRefused(
                "tar_duplicate_path", "an entry needs a directory where a file already is", name
            ) from None
        os.close(fd)
        fd = child
    return fd


def _write_file(parent: int, leaf: str, source: IO[bytes], size: int, mode: int, name: str) -> str:
    try:
        fd = os.open(leaf, _NEW_FILE, 0o600, dir_fd=parent)
    except FileExistsError:
        raise ArchiveRefused("tar_duplicate_path", "the archive names one path twice", name) from None
    digest = hashlib.sha256()
    written = 0
    try:
        while written < size:
            chunk = source.read(min(_CHUNK, size - written))
            if not chunk:
                raise ArchiveRefused("tar_unreadable", "the archive ends inside a file", name)
            digest.update(chunk)
            view = memoryview(chunk)
            while view:
                view = view[os.write(fd, view) :]
            written += len(chunk)
        os.fchmod(fd, mode)
    finally:
        os.close(fd)
    return "sha256:" + digest.hexdigest()


def _symlink_stays_inside(path: str, target: str) -> bool:
    if not target or target.startswith("/") or "\x00" in target:
        return False
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
    return joined != ".." and not joined.startswith("../") and is_safe_relative_path(joined, True)


def unpack_tar(
    archive: bytes,
    into: str | os.PathLike[str],
    *,
    limits: ArchiveLimits = ArchiveLimits(),
    allow_symlinks: bool = False,
) -> list[ArchiveEntry]:
    """Write the files of ``archive`` under the existing directory ``into``; the entries.

    Directories are created as needed (``0o755``); ``into`` should be empty. See the module
    docstring for what is refused.
    """
    root_fd = os.open(into, _DIR_FLAGS)
    entries: list[ArchiveEntry] = []
    seen: set[str] = set()
    directories: set[str] = set()
    total = 0
    try:
        try:
            tar = tarfile.open(fileobj=io.BytesIO(archive), mode="r:")  # noqa: SIM115 - closed below
        except (tarfile.TarError, EOFError, ValueError):
            raise ArchiveRefused("tar_unreadable", "the bytes are not a tar archive") from None
        with tar:
            count = 0
            while True:
                try:
                    member = tar.next()
                except (tarfile.TarError, EOFError, ValueError, UnicodeError):
                    raise ArchiveRefused("tar_unreadable", "an archive header cannot be read") from None
                if member is None:
                    break
                count += 1
                if count > limits.max_entries:
                    raise ArchiveRefused("tar_too_large", "the archive has too many entries")
                name = member.name[:-1] if member.name.endswith("/") else member.name
                if not is_safe_relative_path(name, False):
                    raise ArchiveRefused("tar_path_unsafe", "an entry name leaves the directory", member.name)
                parts = name.split("/")
                if len(parts) > limits.max_depth:
                    raise ArchiveRefused("tar_too_large", "an entry's name is deeper than allowed")
                if name in seen:
                    raise ArchiveRefused("tar_duplicate_path", "the archive names one path twice", name)
                if member.isdir():
                    parent = _open_parent(root_fd, parts, directories, name)
                    os.close(parent)
                    continue
                if any("/".join(parts[: i + 1]) in seen for i in range(len(parts) - 1)):
                    raise ArchiveRefused(
                        "tar_duplicate_path", "an entry needs a directory where a file already is", name
                    )
                if name in directories:
                    raise ArchiveRefused("tar_duplicate_path", "a file replaces a directory", name)
                if member.islnk():
                    raise ArchiveRefused("tar_hardlink", "hard links are not unpacked", name)
                if member.issym():
                    if not allow_symlinks or not _symlink_stays_inside(name, member.linkname):
                        raise ArchiveRefused("tar_symlink", "a symbolic link is not allowed here", name)
                elif not member.isreg():
                    raise ArchiveRefused(
                        "tar_special_entry", "devices, FIFOs and other special entries are refused", name
                    )
                if member.size > limits.max_file_bytes:
                    raise ArchiveRefused("tar_too_large", "an entry is larger than allowed", name)
                total += member.size
                if total > limits.max_total_bytes:
                    raise ArchiveRefused("tar_too_large", "the archive holds more bytes than allowed")
                seen.add(name)
                parent = _open_parent(root_fd, parts[:-1], directories, name)
                try:
                    if member.issym():
                        try:
                            os.symlink(member.linkname, parts[-1], dir_fd=parent)
                        except FileExistsError:
                            raise ArchiveRefused(
                                "tar_duplicate_path", "the archive names one path twice", name
                            ) from None
                        target = os.fsencode(member.linkname)
                        entries.append(
                            ArchiveEntry(name, "symlink", 0o777, len(target),
                                         "sha256:" + hashlib.sha256(target).hexdigest())
                        )
                        continue
                    source = tar.extractfile(member)
                    if source is None:
                        raise ArchiveRefused("tar_unreadable", "an entry's bytes cannot be read", name)
                    mode = member.mode & 0o777
                    digest = _write_file(parent, parts[-1], source, member.size, mode, name)
                    entries.append(ArchiveEntry(name, "file", mode, member.size, digest))
                finally:
                    os.close(parent)
    finally:
        os.close(root_fd)
    return entries
