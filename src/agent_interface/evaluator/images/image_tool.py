"""Run an image tool (``skopeo``) as an argv list, bounded, in a minimal environment.

:func:`run_tool` never uses a shell: ``argv`` is executed as given, with standard input
closed, in a new session, with an environment of ``PATH``, ``HOME`` and ``TMPDIR`` only
(``HOME`` and ``TMPDIR`` are the caller's scratch directory, so no user configuration or
stored credential is read), under a deadline after which the whole process group is
killed. Its output (standard output and error together) is drained as it comes and only
the first ``max_output_bytes`` are kept (and, with ``tail_bytes``, the last ``tail_bytes``
too, so a long build log's error is not lost). A missing tool, a non-zero exit or a timeout is
an :class:`~.image_limits.ImageRefused` ``image_tool_failed`` whose message holds the
tool's name, the exit status and the last printable line of its output (at most 300
characters); credentials are only ever passed in a file named by the caller, never in
argv or the environment, so they cannot appear there.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from collections.abc import Sequence
from typing import IO, Final

from .image_limits import ImageRefused

__all__ = ["run_tool"]

_PATH: Final = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"


def _drain(stream: IO[bytes], keep: int, sink: bytearray, tail: bytearray, tail_bytes: int) -> None:
    while chunk := stream.read(1 << 16):
        room = keep - len(sink)
        if room > 0:
            sink.extend(chunk[:room])
        if tail_bytes:
            tail.extend(chunk)
            del tail[:-tail_bytes]


def _excerpt(output: bytes) -> str:
    lines = [line for line in output.decode("utf-8", "replace").splitlines() if line.strip()]
    last = lines[-1] if lines else ""
    return "".join(c if c.isprintable() else "?" for c in last)[:300]


def run_tool(argv: Sequence[str], *, scratch: str | os.PathLike[str], timeout_s: float, max_output_bytes: int,
             tail_bytes: int = 0) -> bytes:
    """The kept output of ``argv`` run to a zero exit (see the module docstring)."""
    tool = os.path.basename(argv[0])
    env = {"PATH": _PATH, "HOME": os.fspath(scratch), "TMPDIR": os.fspath(scratch), "LC_ALL": "C"}
    try:
        process = subprocess.Popen(  # an argv list, never a shell
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=os.fspath(scratch),
            start_new_session=True,
            close_fds=True,
        )
    except OSError:
        raise ImageRefused("image_tool_failed", f"{tool} cannot be started (is it installed?)") from None
    output, tail = bytearray(), bytearray()
    assert process.stdout is not None
    reader = threading.Thread(target=_drain, args=(process.stdout, max_output_bytes, output, tail, tail_bytes),
                              daemon=True)
    reader.start()
    try:
        status = process.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        status = None
    finally:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        reader.join(timeout=5)
        process.stdout.close()
    if status is None:
        raise ImageRefused("image_tool_failed", f"{tool} did not finish within {timeout_s:g} s")
    if status != 0:
        raise ImageRefused("image_tool_failed", f"{tool} failed (exit {status}): {_excerpt(bytes(tail or output))}")
    return bytes(output)
