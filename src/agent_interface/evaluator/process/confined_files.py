"""Exact-byte file reads and writes that cannot leave an environment's directory.

An environment path (``/tmp/out.bin``) names a file under the environment's root
directory. Every component is opened relative to the previous one's directory file
descriptor with ``O_NOFOLLOW``, so a symbolic link anywhere on the path (one the launched
process planted included) is refused instead of followed, and ``..`` never appears.
Writes go to a fresh temporary file in the target directory and are renamed over the
target, so a reader sees the old bytes or the new ones, never a mix. A read refuses a
file larger than its bound before loading it, and a file that grows past the bound while
being read.
"""

from __future__ import annotations

import errno
import os
import stat
import uuid
from typing import Final

from agent_interface.core.errors import ContractError

__all__ = ["environment_path_components", "open_confined_directory", "read_confined", "write_confined"]

_DIRECTORY_FLAGS: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_CHUNK: Final = 1 << 20


def _refuse(code: str, message: str) -> ContractError:
    return ContractError.single("/path", code, message)


def environment_path_components(path: str) -> list[str]:
    """The components of an absolute environment path; ``.`` and ``..`` are refused."""
    if not path.startswith("/") or "\x00" in path:
        raise _refuse("exact_process_path", "path must be absolute and free of NUL")
    components = [part for part in path.split("/") if part]
    if any(part in (".", "..") for part in components):
        raise _refuse("exact_process_path", "path cannot contain '.' or '..' segments")
    return components


def open_confined_directory(
    root: str, components: list[str], *, create: bool, owner: tuple[int, int] | None = None
) -> int:
    """A directory descriptor for ``root/components`` reached without following a link.

    ``create`` makes missing directories (mode 0755, owned by ``owner``'s uid and gid when
    given). The caller closes the descriptor.
    """
    fd = os.open(root, _DIRECTORY_FLAGS)
    try:
        for component in components:
            try:
                child = os.open(component, _DIRECTORY_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise _refuse(
                        "exact_process_file_missing", "no such file in the environment"
                    ) from None
                made = True
                try:
                    os.mkdir(component, 0o755, dir_fd=fd)
                except FileExistsError:
                    made = False
                child = os.open(component, _DIRECTORY_FLAGS, dir_fd=fd)
                if made and owner is not None:
                    os.fchown(child, *owner)
            except OSError as error:
                if error.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise _refuse(
                        "exact_process_path_escape",
                        "every directory on the path must be a real directory, not a link",
                    ) from None
                raise
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def write_confined(
    root: str, path: str, data: bytes, mode: int, *, owner: tuple[int, int] | None = None
) -> None:
    """Write exactly ``data`` at ``path`` (mode ``mode``) under ``root``, atomically.

    ``owner`` (uid, gid) owns the file and every directory this call makes.
    """
    components = environment_path_components(path)
    if not components:
        raise _refuse("exact_process_not_a_file", "the environment root is not a file")
    directory = open_confined_directory(root, components[:-1], create=True, owner=owner)
    name = components[-1]
    temporary = f".exact-write-{uuid.uuid4().hex}"
    try:
        fd = os.open(
            temporary,
            os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
            0o600,
            dir_fd=directory,
        )
        try:
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                if owner is not None:
                    os.fchown(fd, *owner)
                os.fchmod(fd, mode)
            finally:
                os.close(fd)
            os.rename(temporary, name, src_dir_fd=directory, dst_dir_fd=directory)
        except BaseException as error:
            os.unlink(temporary, dir_fd=directory)
            if isinstance(error, OSError) and error.errno in (errno.EISDIR, errno.ENOTEMPTY):
                raise _refuse("exact_process_not_a_file", "the path names a directory") from None
            raise
    finally:
        os.close(directory)


def read_confined(root: str, path: str, max_bytes: int) -> bytes:
    """The exact bytes of the regular file at ``path``; more than ``max_bytes`` is refused."""
    components = environment_path_components(path)
    if not components:
        raise _refuse("exact_process_not_a_file", "the environment root is not a file")
    directory = open_confined_directory(root, components[:-1], create=False)
    try:
        try:
            fd = os.open(
                components[-1],
                os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                dir_fd=directory,
            )
        except FileNotFoundError:
            raise _refuse("exact_process_file_missing", "no such file in the environment") from None
        except OSError as error:
            if error.errno == errno.ELOOP:
                raise _refuse(
                    "exact_process_path_escape", "the file is a symbolic link, which is not followed"
                ) from None
            raise
    finally:
        os.close(directory)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _refuse("exact_process_not_a_file", "the path is not a regular file")
        if info.st_size > max_bytes:
            raise ContractError.single(
                "/maxBytes", "exact_process_read_too_large", "the file is larger than maxBytes"
            )
        chunks: list[bytes] = []
        total = 0
        while total <= max_bytes:
            chunk = os.read(fd, min(_CHUNK, max_bytes + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > max_bytes:
            raise ContractError.single(
                "/maxBytes", "exact_process_read_too_large", "the file grew past maxBytes while read"
            )
        return b"".join(chunks)
    finally:
        os.close(fd)
