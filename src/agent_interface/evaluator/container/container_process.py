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
import contextlib
import json
import marshal
import os
import subprocess
import sys
import weakref
from pathlib import Path
from typing import Any, ClassVar, Final

from agent_interface.core.errors import ContractError
from agent_interface.environment.exact_process import AgentExactProcessTermination
from agent_interface.evaluator.container.supervisor_server import (
    SUPERVISOR_SCRIPT,
    server_enabled,
    shared_supervisor_server,
)
from agent_interface.evaluator.process.control_directory import (
    ControlDirectoryProcess,
    OutputStream,
    read_json,
    run_supervisor,
    termination_of,
    write_private,
)

__all__ = ["SUPERVISOR_SCRIPT", "ContainerProcess", "OutputStream", "remove_container", "start_container"]

_HANDSHAKE_SECONDS: Final = 60.0
_KILL_SECONDS: Final = 15.0


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


class _SupervisorEnd:
    """The read end of a supervisor's handshake pipe, kept by the handle that spawned the
    process: its end of file is the supervisor's end (``termination.json`` is written, or
    the supervisor died). Closed at that end of file, or when the handle is collected."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._close = weakref.finalize(self, os.close, fd)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ended: asyncio.Future[None] | None = None

    async def wait(self) -> None:
        """Until the supervisor ended (at once when this pipe was watched from another
        event loop: the caller's polling then sees the end)."""
        loop = asyncio.get_running_loop()
        if not self._close.alive or (self._loop is not None and self._loop is not loop):
            return
        if self._ended is None:
            self._loop, self._ended = loop, loop.create_future()
            os.set_blocking(self._fd, False)
            loop.add_reader(self._fd, self._readable)
        await asyncio.shield(self._ended)

    def _readable(self) -> None:
        try:
            chunk = os.read(self._fd, 64)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if chunk:
            return
        assert self._loop is not None and self._ended is not None
        self._loop.remove_reader(self._fd)
        self._close()
        if not self._ended.done():
            self._ended.set_result(None)


class ContainerProcess(ControlDirectoryProcess):
    """The provider's view of one container process (by its control directory).

    A zombie supervisor counts as gone, and the records are read off the event loop
    (settling a lost process runs ``runc``). The handle a spawn returns learns of the
    process's end from its supervisor's handshake pipe (``ended``); any other handle
    polls the records.
    """

    _zombie_is_gone: ClassVar[bool] = True
    _wait_delay_max: ClassVar[float] = 0.005  # a short program's end is seen within 5 ms

    def __init__(self, pid: int, control: Path, ended: int | None = None) -> None:
        super().__init__(pid, control)
        self._end = None if ended is None else _SupervisorEnd(ended)

    async def wait(self) -> AgentExactProcessTermination:
        """How the process ended, once it has (see :meth:`ControlDirectoryProcess.wait`)."""
        if self._end is not None:
            await self._end.wait()
            record = read_json(self.control / "termination.json")  # written before the end
            if record is not None:
                return termination_of(record)
        return await super().wait()

    def _end_lost(self, supervisor: dict[str, Any]) -> None:
        """Remove the lost process's container and its cgroup."""
        remove_container(
            supervisor["runc"], supervisor["runcRoot"], supervisor["containerId"], supervisor.get("cgroup")
        )

    async def _settled(self) -> dict[str, Any] | None:
        return await asyncio.to_thread(self._settle_lost)

    def _worth_settling(self, polls: int) -> bool:
        """Read the records (a worker-thread hand-off) once ``termination.json`` exists, and
        every 20th poll anyway (so a lost supervisor is still noticed)."""
        return polls % 20 == 0 or (self.control / "termination.json").exists()

    async def kill(self) -> None:
        """End the container as ``cancelled``; nothing once the process ended."""
        if await asyncio.to_thread(self._settle_lost) is not None:
            return
        supervisor = read_json(self.control / "supervisor.json")
        alive = supervisor is not None and self._supervisor_alive(supervisor)
        await self._stop_supervisor(supervisor, alive, _KILL_SECONDS)


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
    write_private(bundle / "config.json", json.dumps(config).encode())
    if stdin is not None:
        write_private(control / "stdin", stdin)
    # marshal, not JSON: the supervisor runs on this very interpreter and starts faster.
    write_private(control / "spec.marshal", marshal.dumps({**spec, "bundle": str(bundle), "stdin": stdin is not None}))
    handle = ContainerProcess(pid, control)
    if not server_enabled():  # one interpreter per spawn
        what = await run_supervisor(
            (os.path.realpath(sys.executable),), SUPERVISOR_SCRIPT, control,
            handshake_seconds=_HANDSHAKE_SECONDS,
            cleanup=lambda launcher: _end_quietly(handle, launcher, spec),
        )
    else:
        what, ended = await shared_supervisor_server(SUPERVISOR_SCRIPT).launch(
            control, handshake_seconds=_HANDSHAKE_SECONDS, cleanup=lambda: _end_started(handle, spec),
        )
        if ended is not None:
            handle = ContainerProcess(pid, control, ended)
    if what is None:
        return handle
    message = {
        "exec": "the executable could not be run in the container",
        "create": "the container runtime could not create and start the container",
    }.get(what, "the process supervisor did not start")
    raise ContractError.single(
        "/executable" if what == "exec" else "/", "exact_process_spawn_failed", message
    )


async def _end_started(handle: ContainerProcess, spec: dict[str, Any]) -> None:
    """After a cancelled or silent spawn whose launcher ended: end what it started."""
    if (handle.control / "supervisor.json").exists():
        await handle.kill()
    else:
        await asyncio.to_thread(remove_container, spec["runc"], spec["runcRoot"], spec["id"], spec["cgroup"])


async def _end_quietly(handle: ContainerProcess, launcher: asyncio.subprocess.Process, spec: dict[str, Any]) -> None:
    """After a cancelled spawn: end the container whatever the supervisor got to."""
    await launcher.wait()
    for _ in range(500):
        if (handle.control / "supervisor.json").exists():
            await handle.kill()
            return
        await asyncio.sleep(0.01)
    await asyncio.to_thread(remove_container, spec["runc"], spec["runcRoot"], spec["id"], spec["cgroup"])
