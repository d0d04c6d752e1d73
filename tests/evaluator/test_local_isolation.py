"""Isolation of local exact processes: detected, enforced, or not declared at all."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import uuid
from pathlib import Path

import pytest

from agent_interface.core.errors import ContractError
from agent_interface.evaluator import (
    LocalExactProcessProvider,
    LocalIsolation,
    detect_local_isolation,
)
from tests.evaluator.local_fixtures import (
    PYTHON,
    create_input,
    isolation,
    live_marked_processes,
    provider,
    python_launch,
    run,
)

# -- detection: both paths -----------------------------------------------------------------


@pytest.mark.parametrize("unshare", [None, "/nonexistent/unshare", "/bin/false"])
def test_without_a_working_unshare_nothing_is_isolated(unshare: str | None) -> None:
    assert run(detect_local_isolation(unshare)) == LocalIsolation.none()


def test_without_isolation_the_capability_is_omitted(tmp_path: Path) -> None:
    local = LocalExactProcessProvider(tmp_path, executables=[PYTHON], isolation=LocalIsolation.none())
    assert local.exact_process is None
    capabilities = run(local.capabilities())
    assert capabilities.exact_process is None
    assert "exactProcess" not in capabilities.to_wire()


def test_with_a_network_namespace_only_blocked_egress_is_declared(tmp_path: Path) -> None:
    found = isolation()
    assert found.network_namespace and found.prefix[0].endswith("unshare")
    local = provider(tmp_path)
    assert run(local.capabilities()).to_wire()["exactProcess"] == {"egress": ["blocked"]}
    assert local.exact_process is not None


def test_egress_is_blocked_on_the_real_path(tmp_path: Path) -> None:
    local = provider(tmp_path)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    code = (
        "import json, socket\n"
        "seen = {'interfaces': [name for _, name in socket.if_nameindex()]}\n"
        "for host in ('127.0.0.1', '1.1.1.1'):\n"
        "    try:\n"
        f"        socket.create_connection((host, {port}), timeout=2).close()\n"
        "        seen[host] = 'connected'\n"
        "    except OSError as error:\n"
        "        seen[host] = type(error).__name__\n"
        "print(json.dumps(seen))\n"
    )

    async def main() -> dict[str, str]:
        assert local.exact_process is not None
        environment = await local.exact_process.create(create_input(local.image))
        process = await environment.process.spawn(python_launch(code))
        await process.wait()
        seen: dict[str, str] = json.loads("".join([chunk async for chunk in process.stdout()]))
        return seen

    try:
        seen = run(main())
    finally:
        listener.close()
    assert seen["interfaces"] == ["lo"]
    assert seen["127.0.0.1"] != "connected" and seen["1.1.1.1"] != "connected"


# -- process trees -------------------------------------------------------------------------


def _tree_code(marker: str, *, escape: bool, then: str) -> str:
    """A leader that starts a grandchild (argv carries ``marker``), then does ``then``."""
    grandchild = (
        "import os, time\n"
        + ("os.setsid()\n" if escape else "")
        + "time.sleep(120)\n"
    )
    return (
        "import subprocess, sys, time\n"
        f"subprocess.Popen([sys.executable, '-I', '-S', '-c', {grandchild!r}, {marker!r}])\n"
        "time.sleep(0.3)\n"
        f"{then}\n"
    )


async def _settled(marker: str) -> list[int]:
    for _ in range(100):
        alive = live_marked_processes(marker)
        if not alive:
            return []
        await asyncio.sleep(0.05)
    return live_marked_processes(marker)


@pytest.mark.parametrize("pid_namespace", [True, False], ids=["pid-namespace", "process-group"])
@pytest.mark.parametrize("ending", ["timeout", "cancel", "exit"])
def test_descendants_end_with_the_process(tmp_path: Path, pid_namespace: bool, ending: str) -> None:
    local = provider(tmp_path, pid_namespace=pid_namespace)
    marker = f"exact-grandchild-{uuid.uuid4().hex}"
    then = "time.sleep(60)" if ending != "exit" else "sys.exit(0)"
    launch = python_launch(
        _tree_code(marker, escape=False, then=then), timeout_ms=1500 if ending == "timeout" else 0
    )

    async def main() -> tuple[object, list[int], list[int]]:
        assert local.exact_process is not None
        environment = await local.exact_process.create(create_input(local.image))
        process = await environment.process.spawn(launch)
        for _ in range(100):
            if live_marked_processes(marker):
                break
            await asyncio.sleep(0.02)
        before = live_marked_processes(marker)
        if ending == "cancel":
            await process.kill()
        termination = (await process.wait()).to_wire()
        return termination, before, await _settled(marker)

    termination, before, after = run(main())
    assert before, "the grandchild never started"
    expected = {"timeout": {"kind": "timeout", "timeoutMs": 1500}, "cancel": {"kind": "cancelled"},
                "exit": {"kind": "exit", "exitCode": 0}}[ending]
    assert termination == expected
    assert after == [], "a descendant outlived the process"


def test_a_descendant_that_leaves_the_group_still_ends_in_a_pid_namespace(tmp_path: Path) -> None:
    if not isolation().pid_namespace:
        pytest.skip("no PID namespace here")
    local = provider(tmp_path)
    marker = f"exact-escapee-{uuid.uuid4().hex}"

    async def main() -> list[int]:
        assert local.exact_process is not None
        environment = await local.exact_process.create(create_input(local.image))
        process = await environment.process.spawn(
            python_launch(_tree_code(marker, escape=True, then="sys.exit(0)"))
        )
        await process.wait()
        return await _settled(marker)

    assert run(main()) == []


# -- resources -----------------------------------------------------------------------------


def test_resource_limits_are_applied(tmp_path: Path) -> None:
    local = provider(tmp_path)
    code = (
        "import json, os, resource\n"
        "print(json.dumps({'as': resource.getrlimit(resource.RLIMIT_AS),\n"
        "  'fsize': resource.getrlimit(resource.RLIMIT_FSIZE),\n"
        "  'core': resource.getrlimit(resource.RLIMIT_CORE),\n"
        "  'cpus': len(os.sched_getaffinity(0))}))\n"
    )

    async def main() -> dict[str, object]:
        assert local.exact_process is not None
        environment = await local.exact_process.create(
            create_input(local.image, resources={"cpu": 1, "memoryMb": 300, "diskMb": 2})
        )
        process = await environment.process.spawn(python_launch(code))
        await process.wait()
        seen: dict[str, object] = json.loads("".join([chunk async for chunk in process.stdout()]))
        return seen

    seen = run(main())
    assert seen == {"as": [300 << 20, 300 << 20], "fsize": [2 << 20, 2 << 20], "core": [0, 0], "cpus": 1}


def test_memory_and_file_size_limits_bite(tmp_path: Path) -> None:
    local = provider(tmp_path)

    async def main() -> tuple[object, object, str, int]:
        assert local.exact_process is not None
        environment = await local.exact_process.create(
            create_input(local.image, resources={"cpu": 1, "memoryMb": 200, "diskMb": 1})
        )
        memory = await environment.process.spawn(python_launch("x = bytearray(400 << 20)"))
        # Python ignores SIGXFSZ, so the write past RLIMIT_FSIZE fails with EFBIG instead.
        disk = await environment.process.spawn(python_launch("open('big', 'wb').write(b'x' * (2 << 20))"))
        results = (await memory.wait()).to_wire(), (await disk.wait()).to_wire()
        stderr = "".join([chunk async for chunk in disk.stderr()])
        written = await environment.read_file("/big", max_bytes=4 << 20)
        return *results, stderr, len(written)

    memory, disk, stderr, written = run(main())
    assert memory == {"kind": "exit", "exitCode": 1}  # MemoryError
    assert disk == {"kind": "exit", "exitCode": 1} and "File too large" in stderr
    assert written <= 1 << 20


def test_an_oversized_write_file_is_refused(tmp_path: Path) -> None:
    local = provider(tmp_path)

    async def main() -> None:
        assert local.exact_process is not None
        environment = await local.exact_process.create(
            create_input(local.image, resources={"cpu": 1, "memoryMb": 64, "diskMb": 1})
        )
        with pytest.raises(ContractError) as error:
            await environment.write_file("/big.bin", b"x" * ((1 << 20) + 1), mode=0o600)
        assert error.value.issues[0].code == "exact_process_write_too_large"

    run(main())


# -- a supervisor lost from outside -------------------------------------------------------


@pytest.mark.parametrize("pid_namespace", [True, False], ids=["pid-namespace", "process-group"])
def test_a_killed_supervisor_leaves_a_cancelled_process_and_no_stray(
    tmp_path: Path, pid_namespace: bool
) -> None:
    local = provider(tmp_path, pid_namespace=pid_namespace)
    marker = f"exact-orphan-{uuid.uuid4().hex}"

    async def main() -> tuple[object, list[int]]:
        assert local.exact_process is not None
        environment = await local.exact_process.create(create_input(local.image))
        process = await environment.process.spawn(
            python_launch(_tree_code(marker, escape=False, then="time.sleep(60)"), timeout_ms=0)
        )
        control = tmp_path / "control" / environment.id / str(process.pid)
        supervisor = json.loads((control / "supervisor.json").read_text())
        for _ in range(100):
            if live_marked_processes(marker):
                break
            await asyncio.sleep(0.02)
        with contextlib.suppress(ProcessLookupError):
            os.kill(supervisor["pid"], signal.SIGKILL)
        for _ in range(100):
            if not Path(f"/proc/{supervisor['pid']}/cmdline").exists() or Path(
                f"/proc/{supervisor['pid']}/cmdline"
            ).read_bytes() == b"":
                break
            await asyncio.sleep(0.02)
        termination = (await process.wait()).to_wire()
        return termination, await _settled(marker)

    termination, after = run(main())
    assert termination == {"kind": "cancelled"}
    assert after == []


def test_a_user_namespace_prefix_declares_nothing(tmp_path: Path) -> None:
    """The unprivileged path (``unshare --user --map-current-user``): the program would run
    as the provider's own host uid, able to rewrite its records and signal its supervisor,
    so the provider omits ``exactProcess`` rather than declare what it cannot enforce."""
    import shutil

    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("no unshare here")
    prefix = (unshare, "--user", "--map-current-user", "--net", "--pid")
    found = LocalIsolation(prefix, True, True, True)
    assert not found.separate_user
    local = LocalExactProcessProvider(tmp_path, executables=[PYTHON], isolation=found)
    assert local.exact_process is None
    assert run(local.capabilities()).exact_process is None
    local.close()
