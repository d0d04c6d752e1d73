"""The control directory of one supervised process, as every reader sees it.

Both exact-process providers (the host-process one here and the OCI one in
``evaluator.container``) run each process under a standalone supervisor script that
keeps its state in a control directory no program can reach: ``supervisor.json`` (host
pid, start time, boot id, and what the provider needs to end it), the bounded ``stdout``
and ``stderr`` captures and ``termination.json`` (why it ended, written last and
atomically). :class:`ControlDirectoryProcess` answers status, waits and follows output
from these files alone, and settles a process whose supervisor vanished without a
record as *lost* (``cancelled``, ``"lost": true``); each provider says how a lost
process's remains are ended and how a live one is killed. :func:`run_supervisor` starts
a supervisor script (compiled once by this interpreter and handed over marshalled) and
reads its one-line handshake.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import functools
import json
import marshal
import os
import signal
import sys
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar, Final, Literal

from agent_interface.core.model import wire_adapter
from agent_interface.environment.exact_process import (
    AgentExactProcessStatus,
    AgentExactProcessTermination,
)

__all__ = [
    "ControlDirectoryProcess",
    "ExactProcessHandle",
    "OutputStream",
    "boot_id",
    "handshake_result",
    "read_json",
    "run_supervisor",
    "start_ticks",
    "supervisor_boot",
    "termination_of",
    "write_private",
]

OutputStream = Literal["stdout", "stderr"]
"""One of the two captured output streams."""

_BOOT: Final = "import marshal, sys; exec(marshal.loads(sys.stdin.buffer.read()))"
"""Runs the supervisor's code object read from stdin (compiled once, by this interpreter)."""

_BOOT_ARGS: Final = ("-I", "-S", "-B", "-c", _BOOT)
"""The interpreter's arguments that start a supervisor (isolated mode, then :data:`_BOOT`)."""

_CHUNK: Final = 65536
_FAST_WAIT_SECONDS: Final = 2.0
_TERMINATION = wire_adapter(AgentExactProcessTermination)


@functools.cache
def _supervisor_code(script: str) -> bytes:
    source = Path(script).read_bytes()
    return marshal.dumps(compile(source, script, "exec", dont_inherit=True))


def handshake_result(line: bytes) -> str | None:
    """A supervisor's handshake line read: ``None`` for ``ok``, else the word after
    ``error`` (``"supervisor"`` when there is none)."""
    words = line.decode("ascii", "replace").split()
    if words == ["ok"]:
        return None
    return words[1] if len(words) > 1 and words[0] == "error" else "supervisor"


def supervisor_boot(script: str) -> tuple[tuple[str, ...], bytes]:
    """How a supervisor ``script`` is started: the command (this interpreter, isolated
    mode, running the code object read from stdin; arguments follow) and that code."""
    return (os.path.realpath(sys.executable), *_BOOT_ARGS), _supervisor_code(script)


def termination_of(record: dict[str, Any]) -> AgentExactProcessTermination:
    """The terminal reason in a ``termination.json`` record."""
    termination: AgentExactProcessTermination = _TERMINATION.parse_value(record["termination"])
    return termination


def read_json(path: Path) -> dict[str, Any] | None:
    """The JSON object in ``path``; ``None`` when the file is missing or holds no object."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    value = json.loads(data)
    return value if isinstance(value, dict) else None


def boot_id() -> str:
    """This machine's boot id (a supervisor record names the boot it was written in)."""
    return Path("/proc/sys/kernel/random/boot_id").read_text().strip()


def start_ticks(pid: int, *, zombie_is_gone: bool = False) -> int | None:
    """The start time of process ``pid`` in clock ticks (``None`` when it is gone, and
    also when it is a zombie if ``zombie_is_gone``)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes().decode()
    except OSError:
        return None
    fields = stat.rpartition(")")[2].split()
    if zombie_is_gone and fields[0] in ("Z", "X"):
        return None
    return int(fields[19])


def write_private(path: Path, data: bytes) -> None:
    """Create ``path`` (mode 0600, never an existing file) holding exactly ``data``."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


class ControlDirectoryProcess:
    """The provider's view of one supervised process (by its control directory).

    A subclass says how the remains of a lost process are ended (:meth:`_end_lost`),
    how a live one is killed, and may read the records off the event loop
    (:meth:`_settled`).
    """

    _zombie_is_gone: ClassVar[bool] = False
    """Whether a zombie supervisor counts as gone."""
    _wait_delay_max: ClassVar[float] = 0.05
    """The longest pause between two reads of the records while waiting."""

    def __init__(self, pid: int, control: Path) -> None:
        self.pid = pid
        self.control = control

    # -- state -------------------------------------------------------------------------

    def _supervisor_alive(self, record: dict[str, Any]) -> bool:
        try:
            same_boot = record["bootId"] == boot_id()
        except OSError:
            same_boot = False
        return same_boot and start_ticks(
            int(record["pid"]), zombie_is_gone=self._zombie_is_gone
        ) == int(record["startTicks"])

    def _end_lost(self, supervisor: dict[str, Any]) -> None:
        """End what is left of a process whose supervisor vanished (``supervisor.json``)."""
        raise NotImplementedError

    def _settle_lost(self) -> dict[str, Any] | None:
        """The termination record, settling a lost process as ``cancelled`` if need be."""
        path = self.control / "termination.json"
        record = read_json(path)
        if record is not None:
            return record
        supervisor = read_json(self.control / "supervisor.json")
        if supervisor is None or self._supervisor_alive(supervisor):
            return None
        self._end_lost(supervisor)
        lost = {
            "termination": {"kind": "cancelled"},
            "exitCode": 128 + signal.SIGKILL,
            "exitSignal": "SIGKILL",
            "lost": True,
        }
        temporary = self.control / f".termination.{uuid.uuid4().hex}.tmp"
        temporary.write_text(json.dumps(lost, sort_keys=True))
        try:
            os.link(temporary, path)  # never replaces what the supervisor wrote first
        except FileExistsError:
            pass
        finally:
            temporary.unlink()
        return read_json(path)

    async def _settled(self) -> dict[str, Any] | None:
        """:meth:`_settle_lost`, from the event loop."""
        return self._settle_lost()

    async def kill(self) -> None:
        """End the process as ``cancelled``; nothing once it ended."""
        raise NotImplementedError

    async def _stop_supervisor(
        self, supervisor: dict[str, Any] | None, alive: bool, seconds: float
    ) -> None:
        """``SIGTERM`` the supervisor if ``alive``, wait ``seconds`` for the process to
        end, then ``SIGKILL`` the supervisor if it is still alive, and wait."""
        if supervisor is not None and alive:
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(supervisor["pid"]), signal.SIGTERM)
        try:
            await asyncio.wait_for(self.wait(), seconds)
        except TimeoutError:
            if supervisor is not None and self._supervisor_alive(supervisor):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(int(supervisor["pid"]), signal.SIGKILL)
            await self.wait()

    def termination_record(self) -> dict[str, Any] | None:
        """``termination.json`` as written (``None`` while the process runs)."""
        return self._settle_lost()

    def status(self) -> AgentExactProcessStatus:
        """Running, or how the process ended (read from ``termination.json``)."""
        record = self._settle_lost()
        if record is None:
            return AgentExactProcessStatus(pid=self.pid, running=True, exit_code=-1)
        return AgentExactProcessStatus.parse_wire(
            {
                "pid": self.pid,
                "running": False,
                "exitCode": record["exitCode"],
                **({"exitSignal": record["exitSignal"]} if record.get("exitSignal") else {}),
                "termination": record["termination"],
            }
        )

    def _worth_settling(self, polls: int) -> bool:
        """Whether a wait's ``polls``-th poll reads the records (a provider may skip the
        hand-off while a cheap look says nothing changed)."""
        return True

    async def wait(self) -> AgentExactProcessTermination:
        """How the process ended, once it has (polled: every ``_wait_delay_max`` at most
        for its first seconds, then every 50 ms at most)."""
        delay = 0.001
        slow_after = time.monotonic() + _FAST_WAIT_SECONDS
        polls = 0
        while True:
            record = await self._settled() if self._worth_settling(polls) else None
            polls += 1
            if record is not None:
                return termination_of(record)
            await asyncio.sleep(delay)
            cap = self._wait_delay_max if time.monotonic() < slow_after else max(self._wait_delay_max, 0.05)
            delay = min(delay * 2, cap)

    # -- output ------------------------------------------------------------------------

    async def follow(self, stream: OutputStream) -> AsyncIterator[str]:
        """The captured stream as UTF-8 text from its first byte, then live until the end."""
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        delay = 0.001
        with open(self.control / stream, "rb") as handle:
            while True:
                finished = await self._settled() is not None
                data = handle.read(_CHUNK)
                if data:
                    delay = 0.001
                    text = decoder.decode(data)
                    if text:
                        yield text
                    continue
                if finished:
                    tail = decoder.decode(b"", final=True)
                    if tail:
                        yield tail
                    return
                await asyncio.sleep(delay)
                delay = min(delay * 2, 0.05)

    def captured(self, stream: OutputStream) -> bytes:
        """The exact bytes captured so far on ``stream`` (at most the output bound)."""
        return (self.control / stream).read_bytes()


class ExactProcessHandle:
    """An exact process as the contract's ``AgentExactProcess``, over its control
    directory; any number of handles may read the same process."""

    def __init__(self, process: ControlDirectoryProcess) -> None:
        self._process = process

    @property
    def pid(self) -> int:
        """The process id within its environment (1, 2, ...), not a host pid."""
        return self._process.pid

    async def status(self) -> AgentExactProcessStatus:
        """Running, or how the process ended."""
        return await asyncio.to_thread(self._process.status)

    async def wait(self) -> AgentExactProcessTermination:
        """The terminal reason (an ``AgentExactProcessTermination``), once it ended."""
        return await self._process.wait()

    async def kill(self) -> None:
        """End the process (``cancelled``); nothing once it ended."""
        await self._process.kill()

    def stdout(self) -> AsyncIterator[str]:
        """The captured stdout as UTF-8 text from its first byte, then live until the end."""
        return self._process.follow("stdout")

    def stderr(self) -> AsyncIterator[str]:
        """The captured stderr, like :meth:`stdout`."""
        return self._process.follow("stderr")

    async def output_bytes(self, stream: OutputStream) -> bytes:
        """The exact bytes captured so far on ``stream``."""
        return await asyncio.to_thread(self._process.captured, stream)

    async def output_dropped(self) -> dict[str, int]:
        """Bytes past the output bound that were not kept, per stream (zero while running)."""
        record = await asyncio.to_thread(self._process.termination_record) or {}
        return {name: int(record.get(f"{name}Dropped", 0)) for name in ("stdout", "stderr")}

    def __repr__(self) -> str:
        return f"<{type(self).__name__} pid={self.pid}>"


async def run_supervisor(
    command: Sequence[str],
    script: str,
    control: Path,
    *,
    handshake_seconds: float,
    cleanup: Callable[[asyncio.subprocess.Process], Awaitable[None]],
) -> str | None:
    """Run the supervisor ``script`` on the Python ``command`` (isolated mode, no
    environment, in ``control``) and read its handshake: ``None`` for ``ok``, else the
    word after ``error`` (``"supervisor"`` when there is none).

    If this call fails or is cancelled after the launcher started, the launcher is
    killed and ``cleanup(launcher)`` runs, shielded, before the exception goes on.
    """
    creating = asyncio.ensure_future(asyncio.create_subprocess_exec(
        *command, *_BOOT_ARGS, str(control),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env={},
        cwd=str(control),
        start_new_session=True,
    ))
    try:
        launcher = await asyncio.shield(creating)
    except asyncio.CancelledError:  # the launcher may exist already: finish starting it, end it
        try:
            launcher = await creating
        except Exception:
            raise asyncio.CancelledError from None
        with contextlib.suppress(ProcessLookupError):
            launcher.kill()
        await asyncio.shield(cleanup(launcher))
        raise
    try:
        assert launcher.stdin is not None and launcher.stdout is not None
        launcher.stdin.write(_supervisor_code(script))
        await launcher.stdin.drain()
        launcher.stdin.close()
        line = await asyncio.wait_for(launcher.stdout.readline(), handshake_seconds)
        await launcher.wait()
    except BaseException:
        with contextlib.suppress(ProcessLookupError):
            launcher.kill()
        await asyncio.shield(cleanup(launcher))
        raise
    return handshake_result(line)
