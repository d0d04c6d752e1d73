"""One process in its own container, seen from the provider: start it, read it, end it.

A process lives in a control directory on the host that no container can reach:
``spec.marshal`` and ``stdin`` (written by the provider, deleted by the supervisor once
read), ``bundle/config.json`` (deleted once ``runc`` read it), the bounded
``stdout`` and ``stderr`` captures, ``supervisor.json`` (host pid, start time, boot id,
container id) and ``termination.json`` (why it ended, written last and atomically).
Every answer a handle gives is read from these files, so a handle made by another
provider object, or in another OS process, answers the same.

A supervisor that vanished without writing ``termination.json`` (killed from outside)
leaves a *lost* process: the first reader removes its container (``runc delete -f``)
and records it as ``cancelled`` with ``"lost": true``.
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
import subprocess
import sys
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

__all__ = ["SUPERVISOR_SCRIPT", "ContainerProcess", "OutputStream", "remove_container", "start_container"]

SUPERVISOR_SCRIPT: Final = str(Path(__file__).with_name("_oci_supervisor.py"))
"""The standalone supervisor script (run by this interpreter, isolated mode)."""

_BOOT: Final = "import marshal, sys; exec(marshal.loads(sys.stdin.buffer.read()))"
"""Runs the supervisor's code object read from stdin (compiled once, by this interpreter)."""


@functools.cache
def _supervisor_code() -> bytes:
    source = Path(SUPERVISOR_SCRIPT).read_bytes()
    return marshal.dumps(compile(source, SUPERVISOR_SCRIPT, "exec", dont_inherit=True))

OutputStream = Literal["stdout", "stderr"]

_HANDSHAKE_SECONDS: Final = 60.0
_KILL_SECONDS: Final = 15.0
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
    """The start time of a live process ``pid`` (``None`` when gone or a zombie)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes().decode()
    except OSError:
        return None
    fields = stat.rpartition(")")[2].split()
    return None if fields[0] in ("Z", "X") else int(fields[19])


def remove_container(runc: str, runc_root: str, container_id: str, cgroup: str | None = None) -> None:
    """``runc kill KILL`` then ``runc delete -f`` (nothing when it does not exist), then
    the empty cgroup directories ``cgroup`` it may have left."""
    for args in (["kill", container_id, "KILL"], ["delete", "-f", container_id]):
        subprocess.run(
            [runc, "--root", runc_root, *args],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}, check=False, timeout=60,
        )
    if cgroup is not None:
        base = Path("/sys/fs/cgroup")
        for directory in (base, *base.iterdir()):
            with contextlib.suppress(OSError):
                os.rmdir(str(directory) + cgroup)


class ContainerProcess:
    """The provider's view of one container process (by its control directory)."""

    def __init__(self, pid: int, control: Path) -> None:
        self.pid = pid
        self.control = control

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
        remove_container(
            supervisor["runc"], supervisor["runcRoot"], supervisor["containerId"], supervisor.get("cgroup")
        )
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
            record = await asyncio.to_thread(self._settle_lost)
            if record is not None:
                termination: AgentExactProcessTermination = _TERMINATION.parse_value(record["termination"])
                return termination
            await asyncio.sleep(delay)
            delay = min(delay * 2, 0.02)

    async def kill(self) -> None:
        """End the container as ``cancelled``; nothing once the process ended."""
        if await asyncio.to_thread(self._settle_lost) is not None:
            return
        supervisor = _read_json(self.control / "supervisor.json")
        if supervisor is not None and self._supervisor_alive(supervisor):
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(supervisor["pid"]), signal.SIGTERM)
        try:
            await asyncio.wait_for(self.wait(), _KILL_SECONDS)
        except TimeoutError:
            if supervisor is not None and self._supervisor_alive(supervisor):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(int(supervisor["pid"]), signal.SIGKILL)
            await self.wait()

    async def follow(self, stream: OutputStream) -> AsyncIterator[str]:
        """The captured stream as UTF-8 text from its first byte, then live until the end."""
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        delay = 0.001
        with open(self.control / stream, "rb") as handle:
            while True:
                finished = await asyncio.to_thread(self._settle_lost) is not None
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


async def start_container(
    pid: int, control: Path, spec: dict[str, Any], config: dict[str, Any], *, stdin: bytes | None
) -> ContainerProcess:
    """Write the bundle and spec, start the supervisor and await its handshake.

    A container ``runc`` could not create or start, or whose executable could not be
    run, is refused (``exact_process_spawn_failed``), with nothing left behind.
    """
    control.mkdir(mode=0o700, parents=True)
    bundle = control / "bundle"
    bundle.mkdir(mode=0o700)
    _write_private(bundle / "config.json", json.dumps(config).encode())
    if stdin is not None:
        _write_private(control / "stdin", stdin)
    # marshal, not JSON: the supervisor runs on this very interpreter and starts faster.
    _write_private(control / "spec.marshal", marshal.dumps({**spec, "bundle": str(bundle), "stdin": stdin is not None}))
    handle = ContainerProcess(pid, control)
    launcher = await asyncio.create_subprocess_exec(
        os.path.realpath(sys.executable), "-I", "-S", "-B", "-c", _BOOT, str(control),
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
        await asyncio.shield(_end_quietly(handle, launcher, spec))
        raise
    words = line.decode("ascii", "replace").split()
    if words == ["ok"]:
        return handle
    what = words[1] if len(words) > 1 and words[0] == "error" else "supervisor"
    message = {
        "exec": "the executable could not be run in the container",
        "create": "the container runtime could not create and start the container",
    }.get(what, "the process supervisor did not start")
    raise ContractError.single(
        "/executable" if what == "exec" else "/", "exact_process_spawn_failed", message
    )


async def _end_quietly(handle: ContainerProcess, launcher: asyncio.subprocess.Process, spec: dict[str, Any]) -> None:
    """After a cancelled spawn: end the container whatever the supervisor got to."""
    await launcher.wait()
    for _ in range(500):
        if (handle.control / "supervisor.json").exists():
            await handle.kill()
            return
        await asyncio.sleep(0.01)
    await asyncio.to_thread(remove_container, spec["runc"], spec["runcRoot"], spec["id"], spec["cgroup"])
