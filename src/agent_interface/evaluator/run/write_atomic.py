"""Write a file so that a reader finds the old content, the whole new content, or nothing.

Receipts are written with :func:`write_json_atomic`: a temporary file in the target
directory, ``fsync``, then a rename over the target (and an ``fsync`` of the directory),
so no half-written receipt is ever visible, even after a crash.
"""

from __future__ import annotations

import contextlib
import json
import os
import uuid
from pathlib import Path
from typing import Any

__all__ = ["write_bytes_atomic", "write_json_atomic"]


def write_bytes_atomic(path: str | os.PathLike[str], data: bytes, mode: int = 0o644) -> None:
    """Write ``data`` to ``path`` atomically."""
    target = Path(path)
    temporary = target.with_name(f".{target.name}.{uuid.uuid4().hex}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, mode)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    directory = os.open(target.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


def write_json_atomic(path: str | os.PathLike[str], document: Any) -> None:
    """Write ``document`` as indented UTF-8 JSON (a trailing newline) atomically."""
    write_bytes_atomic(path, (json.dumps(document, ensure_ascii=False, indent=2) + "\n").encode())
