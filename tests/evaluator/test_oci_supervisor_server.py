"""The supervisor server: one interpreter per OS process forks every container's supervisor.

A spawn goes through the shared server (no interpreter started per spawn); a process's
supervisor does not depend on the server (a server killed with ``SIGKILL`` leaves running
processes running and settling as before, and the next spawn starts a new server); the
server ends when its socket's other end closes; the handle a spawn returns learns of the
process's end from its supervisor's pipe, not by polling; the per-spawn interpreter stays
available (``AGENT_INTERFACE_SUPERVISOR_SERVER=0``)."""

from __future__ import annotations

import gc
import json
import os
import signal
from pathlib import Path

import pytest

from agent_interface.evaluator.container.container_process import SUPERVISOR_SCRIPT
from agent_interface.evaluator.container.oci_provider import OciExactProcessProvider
from agent_interface.evaluator.container.supervisor_server import shared_supervisor_server
from agent_interface.evaluator.images.image_root import ImageRoot
from tests.evaluator.oci_runtime_fixtures import (
    DictImageSource,
    busybox_world,
    create_input,
    launch,
    requires_runc,
    run,
)

pytestmark = requires_runc


world = pytest.fixture(scope="module", name="world")(busybox_world)


def _parent(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat.rpartition(")")[2].split()[1])


def _server_pid() -> int:
    process = shared_supervisor_server(SUPERVISOR_SCRIPT)._process
    assert process is not None
    return process.pid


def test_spawns_share_one_server_and_a_killed_server_is_replaced(world: tuple[Path, ImageRoot]) -> None:
    scratch, image = world
    provider = run(OciExactProcessProvider.open(scratch / "shared", images=DictImageSource(image)))

    async def scenario() -> tuple[int, int, object, object]:
        assert provider.exact_process is not None
        environment = await provider.exact_process.create(create_input(image, "shared"))
        first = await environment.process.spawn(launch("/bin/true"))
        await first.wait()
        server = _server_pid()
        sleeper = await environment.process.spawn(launch("/bin/sleep", "1"))
        assert _server_pid() == server
        supervisor = json.loads((scratch / "shared" / "environments" / environment.id / "processes"
                                 / str(sleeper.pid) / "supervisor.json").read_text())["pid"]
        assert _parent(supervisor) == server  # forked by the server itself (no launcher)
        assert os.getsid(supervisor) == supervisor  # in a session of its own, not the server's
        os.kill(server, signal.SIGKILL)  # the server dies; the running process does not notice
        slept = await sleeper.wait()
        after = await environment.process.spawn(launch("/bin/helper", "out"))
        ended = await after.wait()
        replaced = _server_pid()
        await environment.destroy()
        return server, replaced, slept.to_wire(), ended.to_wire()

    server, replaced, slept, ended = run(scenario())
    assert slept == {"kind": "exit", "exitCode": 0}
    assert ended == {"kind": "exit", "exitCode": 7}
    assert replaced != server


def test_the_server_ends_when_its_socket_closes(world: tuple[Path, ImageRoot]) -> None:
    scratch, image = world
    provider = run(OciExactProcessProvider.open(scratch / "close", images=DictImageSource(image)))

    async def scenario() -> None:
        assert provider.exact_process is not None
        environment = await provider.exact_process.create(create_input(image, "close"))
        process = await environment.process.spawn(launch("/bin/true"))
        await process.wait()
        await environment.destroy()

    run(scenario())
    server = shared_supervisor_server(SUPERVISOR_SCRIPT)
    process = server._process
    assert process is not None
    server.close()
    assert process.returncode is not None  # it exited (and was reaped) at its socket's end


def test_the_per_spawn_interpreter_still_works(world: tuple[Path, ImageRoot], monkeypatch: pytest.MonkeyPatch) -> None:
    scratch, image = world
    monkeypatch.setenv("AGENT_INTERFACE_SUPERVISOR_SERVER", "0")
    shared_supervisor_server(SUPERVISOR_SCRIPT).close()
    provider = run(OciExactProcessProvider.open(scratch / "fresh", images=DictImageSource(image)))

    async def scenario() -> object:
        assert provider.exact_process is not None
        environment = await provider.exact_process.create(create_input(image, "fresh"))
        process = await environment.process.spawn(launch("/bin/helper", "out"))
        ended = await process.wait()
        await environment.destroy()
        return ended.to_wire()

    assert run(scenario()) == {"kind": "exit", "exitCode": 7}
    assert shared_supervisor_server(SUPERVISOR_SCRIPT)._process is None  # no server was started


def test_a_spawned_handle_learns_the_end_from_its_supervisor_and_keeps_no_descriptor(
        world: tuple[Path, ImageRoot], monkeypatch: pytest.MonkeyPatch) -> None:
    from agent_interface.evaluator.container.container_process import ContainerProcess

    scratch, image = world
    provider = run(OciExactProcessProvider.open(scratch / "pushed", images=DictImageSource(image)))

    async def polled(self: ContainerProcess) -> None:  # any poll fails the test
        raise AssertionError("the spawned handle polled the records")

    async def scenario() -> tuple[list[object], int, int]:
        assert provider.exact_process is not None
        environment = await provider.exact_process.create(create_input(image, "pushed"))
        first = await environment.process.spawn(launch("/bin/true"))
        await first.wait()
        gc.collect()
        before = len(os.listdir("/proc/self/fd"))
        with monkeypatch.context() as patched:
            patched.setattr(ContainerProcess, "_settled", polled)
            ended = []
            for program in ("/bin/true", "/bin/helper"):
                process = await environment.process.spawn(launch(program, "out"))
                end = process._process._end  # type: ignore[attr-defined]
                assert end is not None and end._close.alive  # the supervisor's pipe, open while it runs
                ended.append((await process.wait()).to_wire())
                assert not end._close.alive  # closed at its end of file
                ended.append((await process.wait()).to_wire())  # again: the pipe is closed by now
        gc.collect()
        after = len(os.listdir("/proc/self/fd"))
        # another handle of the same process polls, and agrees
        again = await environment.process.get(process.pid)
        assert again is not None
        ended.append((await again.wait()).to_wire())
        await environment.destroy()
        return ended, before, after

    ended, before, after = run(scenario())
    assert ended == [{"kind": "exit", "exitCode": 0}] * 2 + [{"kind": "exit", "exitCode": 7}] * 3
    assert after <= before  # other tests' objects may close theirs meanwhile; none of ours is left
