"""One supervised local process, seen from the provider: start it, read it, end it.

A process lives in a control directory the provider keeps apart from everything a
program can reach (the local provider's ``ROOT/control/<environment>/<pid>``, mode 0700,
while the program runs as another uid): ``spec.marshal`` (what to
run, written by the provider, deleted by the supervisor once read), ``stdin`` (likewise),
the bounded ``stdout`` and ``stderr`` captures,
``supervisor.json`` (who supervises it: host pid, start time, boot id) and
``termination.json`` (why it ended, written last and atomically). Everything a handle
answers is read from these files, so a handle made by a new provider object, or in
another OS process, answers exactly what the first one would have.

A supervisor that vanished without writing ``termination.json`` (killed from outside,
or the machine rebooted) leaves a process that is *lost*: the first reader ends what is
left of its process group and records it as ``cancelled``.
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
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Final, Literal

from agent_interface.core.errors import ContractError
from agent_interface.core.model import wire_adapter
from agent_interface.environment.exact_process import (
    AgentExactProcessStatus,
    AgentExactProcessTermination,
)

__all__ = ["SUPERVISOR_SCRIPT", "OutputStream", "SupervisedProcess", "start_supervised"]

SUPERVISOR_SCRIPT: Final = str(Path(__file__).with_name("_supervisor.py"))
"""The standalone supervisor script."""

_BOOT: Final = "import marshal, sys; exec(marshal.loads(sys.stdin.buffer.read()))"
"""Runs the supervisor's code object read from stdin (compiled once, by this interpreter)."""


@functools.cache
def _supervisor_code() -> bytes:
    source = Path(SUPERVISOR_SCRIPT).read_bytes()
    return marshal.dumps(compile(source, SUPERVISOR_SCRIPT, "exec", dont_inherit=True))

OutputStream = Literal["stdout", "stderr"]

_HANDSHAKE_SECONDS: Final = 30.0
_KILL_SECONDS: Final = 10.0
_CHUNK: Final = 65536
_TERMINATION = wire_adapter(AgentExactProcessTermination)


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    value = json.loads(data)
    return value if isinstance(value, dict) else None


def _boot_id() -> str:
    return Path("/proc/sys/kernel/random/boot_id").read_text().strip()


def _start_ticks(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes().decode()
    except OSError:
        return None
    return int(stat.rpartition(")")[2].split()[19])


class SupervisedProcess:
    """The provider's view of one supervised process (by its control directory)."""

    def __init__(self, pid: int, control: Path) -> None:
        self.pid = pid
        self.control = control

    # -- state -------------------------------------------------------------------------

    def _supervisor_alive(self, record: dict[str, Any]) -> bool:
        try:
            same_boot = record["bootId"] == _boot_id()
        except OSError:
            same_boot = False
        return same_boot and _start_ticks(int(record["pid"])) == int(record["startTicks"])

    def _settle_lost(self) -> dict[str, Any] | None:
        """The termination record, settling a lost process as ``cancelled`` if need be."""
        path = self.control / "termination.json"
        record = _read_json(path)
        if record is not None:
            return record
        supervisor = _read_json(self.control / "supervisor.json")
        if supervisor is None or self._supervisor_alive(supervisor):
            return None
        group = supervisor.get("group")
        if isinstance(group, int) and group > 1 and supervisor["bootId"] == _boot_id():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(group, signal.SIGKILL)
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
        return _read_json(path)

    def termination_record(self) -> dict[str, Any] | None:
        """``termination.json`` as written (``None`` while the process runs)."""
        return self._settle_lost()

    def status(self) -> AgentExactProcessStatus:
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

    async def wait(self) -> AgentExactProcessTermination:
        delay = 0.001
        while True:
            record = self._settle_lost()
            if record is not None:
                termination: AgentExactProcessTermination = _TERMINATION.parse_value(
                    record["termination"]
                )
                return termination
            await asyncio.sleep(delay)
            delay = min(delay * 2, 0.05)

    async def kill(self) -> None:
        """End the whole process group (every process of its PID namespace) as cancelled.

        Liveness is asked of the supervisor itself (its host pid, start time and boot id),
        never of a record alone: a supervisor still alive is signalled even when a
        termination record exists.
        """
        supervisor = _read_json(self.control / "supervisor.json")
        alive = supervisor is not None and self._supervisor_alive(supervisor)
        if not alive and self._settle_lost() is not None:
            return
        if supervisor is not None and alive:
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(supervisor["pid"]), signal.SIGTERM)
        try:
            await asyncio.wait_for(self.wait(), _KILL_SECONDS)
        except TimeoutError:
            if supervisor is not None and self._supervisor_alive(supervisor):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(int(supervisor["pid"]), signal.SIGKILL)
            await self.wait()

    # -- output ------------------------------------------------------------------------

    async def follow(self, stream: OutputStream) -> AsyncIterator[str]:
        """The captured stream as UTF-8 text from its first byte, then live until the end."""
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        delay = 0.001
        with open(self.control / stream, "rb") as handle:
            while True:
                finished = self._settle_lost() is not None
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


def _write_private(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


async def start_supervised(
    pid: int,
    control: Path,
    spec: dict[str, Any],
    *,
    stdin: bytes | None,
    prefix: tuple[str, ...],
    python: str,
) -> SupervisedProcess:
    """Write ``spec``, start the supervisor through ``prefix`` and await its handshake.

    Refuses a working directory that is missing or reached through a link
    (``exact_process_cwd``) and an ``execve`` that failed (``exact_process_spawn_failed``).
    If this call is cancelled after the program started, the program is ended first.
    """
    control.mkdir(mode=0o700, parents=True)
    if stdin is not None:
        _write_private(control / "stdin", stdin)
    # marshal, not JSON: the supervisor runs on this very interpreter and starts faster.
    _write_private(control / "spec.marshal", marshal.dumps({**spec, "stdin": stdin is not None}))
    handle = SupervisedProcess(pid, control)
    launcher = await asyncio.create_subprocess_exec(
        *prefix, python, "-I", "-S", "-B", "-c", _BOOT, str(control),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env={},
        cwd=str(control),
        start_new_session=True,
    )
    try:
        assert launcher.stdin is not None and launcher.stdout is not None
        launcher.stdin.write(_supervisor_code())
        await launcher.stdin.drain()
        launcher.stdin.close()
        line = await asyncio.wait_for(launcher.stdout.readline(), _HANDSHAKE_SECONDS)
        await launcher.wait()
    except BaseException:
        with contextlib.suppress(ProcessLookupError):
            launcher.kill()
        await asyncio.shield(_end_quietly(handle, launcher))
        raise
    words = line.decode("ascii", "replace").split()
    if words == ["ok"]:
        return handle
    what = words[1] if len(words) > 1 and words[0] == "error" else "supervisor"
    if what == "cwd":
        raise ContractError.single(
            "/cwd",
            "exact_process_cwd",
            "the working directory does not exist in the environment or is reached through a link",
        )
    if what == "mounts":
        raise ContractError.single(
            "/", "exact_process_private_root_failed",
            "the process's private root could not be mounted",
        )
    if what == "exec":
        raise ContractError.single(
            "/executable", "exact_process_spawn_failed", "the executable could not be started"
        )
    raise ContractError.single(
        "/", "exact_process_spawn_failed", "the process supervisor did not start"
    )


async def _end_quietly(handle: SupervisedProcess, launcher: asyncio.subprocess.Process) -> None:
    """After a cancelled spawn: end the program if its supervisor got as far as starting it."""
    await launcher.wait()
    for _ in range(200):
        if (handle.control / "supervisor.json").exists():
            await handle.kill()
            return
        await asyncio.sleep(0.01)
