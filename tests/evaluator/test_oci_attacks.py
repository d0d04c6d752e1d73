"""Every attack of issue 32 on the OCI exact-process provider, through the real runtime.

A hostile program tries to leave its container (``setns``, ``unshare``, host sockets,
host paths), to fool the evaluator (forged records, signals at its supervisor), to
outlive its end (grandchildren after exit, timeout and destroy) and to exhaust the host
(fork bomb, memory balloon, disk fill, output flood). Each must fail, and the evaluator's
record must say what really happened.
"""

from __future__ import annotations

import asyncio
import os
import resource
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_interface.evaluator.container.host_probe import OciHostSupport
from agent_interface.evaluator.container.oci_environment import OciExactProcessEnvironment
from agent_interface.evaluator.container.oci_provider import OciExactProcessProvider
from agent_interface.evaluator.images.image_root import ImageRoot
from tests.evaluator.oci_runtime_fixtures import (
    ID_BASE,
    DictImageSource,
    build_image,
    cleanup_root,
    create_input,
    launch,
    requires_runc,
    run,
    runc_ids,
    scratch_directory,
)

pytestmark = requires_runc

FLOOD_MB = int(os.environ.get("OCI_FLOOD_MB", "256"))
"""Size of the stdout flood (the issue's 2 GiB runs in the benchmark)."""
MAX_PIDS = 64


class World:
    def __init__(self, scratch: Path, image: ImageRoot, provider: OciExactProcessProvider) -> None:
        self.scratch, self.image, self.provider = scratch, image, provider
        self.root = scratch / "root"

    async def environment(self, key: str, **changes: Any) -> OciExactProcessEnvironment:
        exact = self.provider.exact_process
        assert exact is not None
        return await exact.create(create_input(self.image, key, **changes))


@pytest.fixture(scope="module")
def world() -> Iterator[World]:
    scratch = scratch_directory()
    try:
        image = build_image(scratch / "image")
        provider = run(OciExactProcessProvider.open(
            scratch / "root", images=DictImageSource(image), max_pids=MAX_PIDS, max_output_bytes=1 << 20
        ))
        assert provider.exact_process is not None, provider.reasons
        yield World(scratch, image, provider)
    finally:
        cleanup_root(scratch)


async def _ran(environment: OciExactProcessEnvironment, *argv: str, **changes: Any) -> tuple[dict[str, Any], str]:
    process = await environment.process.spawn(launch(*argv, **changes))
    termination = (await process.wait()).to_wire()
    return termination, (await process.output_bytes("stdout")).decode(errors="replace")


def _uid_processes() -> list[int]:
    """Host pids of processes running as the containers' mapped ids in this provider's
    cgroups (another user of the same id range on this host is not counted)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            uids = next(line for line in (entry / "status").read_text().splitlines() if line.startswith("Uid:"))
            cgroups = (entry / "cgroup").read_text()
        except (OSError, StopIteration):
            continue
        if ID_BASE <= int(uids.split()[1]) < ID_BASE + 65536 and "/agent-interface-exact/" in cgroups:
            found.append(int(entry.name))
    return found


# x86-64 numbers of calls the seccomp profile refuses with EPERM (clone3: ENOSYS). Called
# with zero arguments, several would fail with another errno without the profile
# (io_uring_setup, keyctl, add_key, process_vm_readv, fsopen: EINVAL, EFAULT, ESRCH ...),
# and clone(CLONE_NEWUSER) would succeed (a nested user namespace needs no capability).
REFUSED = {
    "mount": 165, "umount2": 166, "pivot_root": 155, "chroot": 161, "ptrace": 101, "bpf": 321,
    "keyctl": 250, "add_key": 248, "perf_event_open": 298, "open_by_handle_at": 304,
    "userfaultfd": 323, "kexec_load": 246, "init_module": 175, "setns": 308, "unshare": 272,
    "process_vm_readv": 310, "process_vm_writev": 311, "swapon": 167, "reboot": 169,
    "io_uring_setup": 425, "fsopen": 430, "open_tree": 428,
}


def test_the_seccomp_profile_refuses_every_listed_call(world: World) -> None:
    async def body() -> None:
        environment = await world.environment("seccomp")
        try:
            numbers = [str(number) for number in (*REFUSED.values(), 435)]
            termination, out = await _ran(environment, "/bin/helper", "syscalls", *numbers)
            assert termination == {"kind": "exit", "exitCode": 0}, out
            found = dict(line.split() for line in out.splitlines())
            for name, number in REFUSED.items():
                assert found[str(number)] == "1", (name, found[str(number)])
            assert found["435"] == "38"  # clone3: ENOSYS, so C libraries fall back to clone
            assert found["clone-newuser"] == "1"
        finally:
            await environment.destroy()

    run(body())


def test_host_unix_sockets_and_paths_are_out_of_reach(world: World) -> None:
    path = world.scratch / "host.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    os.chmod(path, 0o777)
    listener.listen(1)
    listener.settimeout(0.5)
    secret = world.scratch / "secret.txt"
    secret.write_text("host secret")
    os.chmod(secret, 0o644)

    async def body() -> None:
        environment = await world.environment("reach")
        try:
            termination, out = await _ran(environment, "/bin/helper", "connect", str(path))
            assert termination == {"kind": "exit", "exitCode": 3} and out.startswith("connect "), out
            for target in (str(secret), "/etc/passwd", str(world.root / "state.sqlite3")):
                termination, _ = await _ran(environment, "/bin/cat", target)
                assert termination == {"kind": "exit", "exitCode": 1}
            termination, _ = await _ran(environment, "/bin/dd", "if=/dev/zero", f"of={secret}", "count=1")
            assert termination != {"kind": "exit", "exitCode": 0}
            _, out = await _ran(environment, "/bin/ls", "/")
            assert sorted(out.split()) == ["bin", "dev", "proc", "sys", "tmp"]
        finally:
            await environment.destroy()

    try:
        run(body())
        with pytest.raises(TimeoutError):
            listener.accept()
    finally:
        listener.close()
    assert secret.read_text() == "host secret"


def test_forged_records_and_signals_at_the_supervisor_change_nothing(world: World) -> None:
    async def body() -> None:
        environment = await world.environment("forge")
        try:
            forged = b'{"termination": {"kind": "exit", "exitCode": 0}, "exitCode": 0}'
            for name in ("termination.json", "stdout", "supervisor.json"):
                for directory in ("/", "/tmp"):
                    await environment.write_file(f"{directory.rstrip('/')}/{name}", forged, mode=0o666)
            process = await environment.process.spawn(launch("/bin/helper", "kill-all"))
            termination = (await process.wait()).to_wire()
            out = (await process.output_bytes("stdout")).decode()
            # PID 1 is the provider's init, which the program cannot signal; the supervisor
            # is not in its namespace at all; the program's status is its own.
            assert termination == {"kind": "exit", "exitCode": 0}, (termination, out)
            assert "kill1 " in out
            sleeper = await environment.process.spawn(launch("/bin/sleep", "60", timeout_ms=800))
            assert (await sleeper.wait()).to_wire() == {"kind": "timeout", "timeoutMs": 800}
        finally:
            await environment.destroy()

    run(body())


def test_no_descendant_outlives_exit_timeout_or_destroy(world: World) -> None:
    async def body() -> None:
        environment = await world.environment("orphans")
        try:
            termination, _ = await _ran(environment, "/bin/helper", "orphan")
            assert termination == {"kind": "exit", "exitCode": 0}
            assert _uid_processes() == []
            termination, _ = await _ran(environment, "/bin/helper", "orphan", "stay", timeout_ms=1500)
            assert termination == {"kind": "timeout", "timeoutMs": 1500}
            assert _uid_processes() == []
            await environment.process.spawn(launch("/bin/helper", "orphan", "stay", timeout_ms=0))
            for _ in range(100):  # the check sees them while they run: init, program, grandchild
                if len(_uid_processes()) >= 3:
                    break
                await asyncio.sleep(0.02)
            assert len(_uid_processes()) >= 3
        finally:
            await environment.destroy()
        assert _uid_processes() == []
        assert not [container for container in runc_ids(world.root) if container.startswith(environment.id)]

    run(body())


def test_a_fork_bomb_is_bounded_by_the_pids_limit(world: World) -> None:
    async def body() -> None:
        environment = await world.environment("forkbomb")
        try:
            termination, out = await _ran(environment, "/bin/helper", "forkbomb", timeout_ms=20_000)
            assert termination == {"kind": "exit", "exitCode": 0}
            assert 0 < int(out.split()[1]) < MAX_PIDS
        finally:
            await environment.destroy()
        assert _uid_processes() == []

    run(body())


def test_a_memory_balloon_is_killed_by_the_oom_killer_and_recorded(world: World) -> None:
    async def body() -> None:
        environment = await world.environment("balloon", resources={"cpu": 1, "memoryMb": 256, "diskMb": 16})
        try:
            process = await environment.process.spawn(launch("/bin/helper", "balloon", "2048", timeout_ms=60_000))
            assert (await process.wait()).to_wire() == {"kind": "signal", "signal": "SIGKILL"}
            assert await process.oom_killed()
        finally:
            await environment.destroy()

    run(body())


def test_a_fractional_cpu_is_a_cfs_quota(world: World) -> None:
    async def body() -> None:
        environment = await world.environment("cpu", resources={"cpu": 0.2, "memoryMb": 64, "diskMb": 8})
        try:
            termination, out = await _ran(environment, "/bin/helper", "spin", "1500")
            assert termination == {"kind": "exit", "exitCode": 0}
            assert int(out) < 1500 * 0.4, out  # 0.2 CPU: about 300 ms of CPU in 1.5 s
        finally:
            await environment.destroy()

    run(body())


def test_a_disk_fill_is_bounded_by_disk_mb(world: World) -> None:
    async def body() -> None:
        environment = await world.environment("disk", resources={"cpu": 1, "memoryMb": 256, "diskMb": 8})
        try:
            termination, _ = await _ran(environment, "/bin/dd", "if=/dev/zero", "of=/tmp/fill", "bs=1M", "count=64")
            assert termination == {"kind": "exit", "exitCode": 1}
            data = await environment.read_file("/tmp/fill", max_bytes=64 << 20)
            assert 0 < len(data) <= 8 << 20
            termination, _ = await _ran(environment, "/bin/dd", "if=/dev/zero", "of=/bin/more", "bs=1M", "count=64")
            assert termination == {"kind": "exit", "exitCode": 1}
        finally:
            await environment.destroy()

    run(body())


def test_a_stdout_flood_is_bounded_and_counted(world: World) -> None:
    async def body() -> None:
        environment = await world.environment("flood")
        try:
            process = await environment.process.spawn(
                launch("/bin/dd", "if=/dev/zero", "bs=1M", f"count={FLOOD_MB}", timeout_ms=120_000)
            )
            assert (await process.wait()).to_wire() == {"kind": "exit", "exitCode": 0}
            assert len(await process.output_bytes("stdout")) == 1 << 20
            assert (await process.output_dropped())["stdout"] == (FLOOD_MB - 1) << 20
        finally:
            await environment.destroy()

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    run(body())
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 64 * 1024  # KiB: the flood never passed here


def test_without_overlay_the_image_is_copied_into_the_bounded_layer(world: World) -> None:
    support = world.provider.support
    copying = OciExactProcessProvider(
        world.scratch / "copying", images=DictImageSource(world.image),
        support=OciHostSupport(support.runc, support.id_base, False, support.swap_limit),
    )
    exact = copying.exact_process
    assert exact is not None

    async def body() -> None:
        environment = await exact.create(create_input(world.image, "copy", resources={"cpu": 1, "memoryMb": 64, "diskMb": 8}))
        try:
            await environment.write_file("/tmp/in.txt", b"copied", mode=0o644)
            termination, out = await _ran(environment, "/bin/cat", "/tmp/in.txt")
            assert (termination, out) == ({"kind": "exit", "exitCode": 0}, "copied")
            termination, _ = await _ran(environment, "/bin/dd", "if=/dev/zero", "of=/tmp/fill", "bs=1M", "count=64")
            assert termination == {"kind": "exit", "exitCode": 1}
            assert len(await environment.read_file("/tmp/fill", max_bytes=64 << 20)) <= 8 << 20
        finally:
            await environment.destroy()

    run(body())
    assert runc_ids(world.scratch / "copying") == []


def test_the_image_is_never_written(world: World) -> None:
    before = sorted(str(path) for path in world.image.rootfs.rglob("*"))

    async def body() -> None:
        environment = await world.environment("image")
        try:
            await environment.write_file("/bin/new", b"x", mode=0o755)
            termination, _ = await _ran(environment, "/bin/dd", "if=/dev/zero", "of=/bin/helper", "count=1")
            assert termination == {"kind": "exit", "exitCode": 0}
        finally:
            await environment.destroy()

    run(body())
    assert sorted(str(path) for path in world.image.rootfs.rglob("*")) == before
    assert subprocess.run([str(world.image.rootfs / "bin" / "busybox"), "true"], check=False).returncode == 0
