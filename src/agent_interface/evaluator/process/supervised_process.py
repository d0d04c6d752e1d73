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
import contextlib
import marshal
import os
import signal
from pathlib import Path
from typing import Any, Final

from agent_interface.core.errors import ContractError
from agent_interface.evaluator.process.control_directory import (
    ControlDirectoryProcess,
    OutputStream,
    boot_id,
    read_json,
    run_supervisor,
    write_private,
)

__all__ = ["SUPERVISOR_SCRIPT", "OutputStream", "SupervisedProcess", "start_supervised"]

SUPERVISOR_SCRIPT: Final = str(Path(__file__).with_name("_supervisor.py"))
"""The standalone supervisor script."""

_HANDSHAKE_SECONDS: Final = 30.0
_KILL_SECONDS: Final = 10.0


class SupervisedProcess(ControlDirectoryProcess):
    """The provider's view of one supervised process (by its control directory)."""

    def _end_lost(self, supervisor: dict[str, Any]) -> None:
        """Kill what is left of the lost process's group (same boot only)."""
        group = supervisor.get("group")
        if isinstance(group, int) and group > 1 and supervisor["bootId"] == boot_id():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(group, signal.SIGKILL)

    async def kill(self) -> None:
        """End the whole process group (every process of its PID namespace) as cancelled.

        Liveness is asked of the supervisor itself (its host pid, start time and boot id),
        never of a record alone: a supervisor still alive is signalled even when a
        termination record exists.
        """
        supervisor = read_json(self.control / "supervisor.json")
        alive = supervisor is not None and self._supervisor_alive(supervisor)
        if not alive and self._settle_lost() is not None:
            return
        await self._stop_supervisor(supervisor, alive, _KILL_SECONDS)


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
        write_private(control / "stdin", stdin)
    # marshal, not JSON: the supervisor runs on this very interpreter and starts faster.
    write_private(control / "spec.marshal", marshal.dumps({**spec, "stdin": stdin is not None}))
    handle = SupervisedProcess(pid, control)
    what = await run_supervisor(
        (*prefix, python), SUPERVISOR_SCRIPT, control,
        handshake_seconds=_HANDSHAKE_SECONDS,
        cleanup=lambda launcher: _end_quietly(handle, launcher),
    )
    if what is None:
        return handle
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
