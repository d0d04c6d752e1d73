"""A private root for local exact processes: environment paths are the process's paths,
chosen directories read-only, host directories bound; as root and in a user namespace."""

from __future__ import annotations

import json
import os
import shutil
import socket
from pathlib import Path
from typing import Any

import pytest

from agent_interface.conformance import ExactProcessLaunches, run_exact_process_conformance
from agent_interface.core.errors import ContractError
from agent_interface.evaluator import LocalExactProcessProvider, LocalIsolation
from tests.evaluator.local_fixtures import PYTHON, create_input, isolation, python_launch, run

PROBE = """
import json, os, socket
seen = {"cwd": os.getcwd(), "task": open("/tangle/input/task.txt").read()}
try:
    open("/tangle/input/task.txt", "w")
    seen["taskWritable"] = True
except OSError as error:
    seen["taskWritable"] = error.errno
try:
    open("/tangle/input/new", "w")
    seen["inputWritable"] = True
except OSError as error:
    seen["inputWritable"] = error.errno
open("answer.txt", "w").write("written in the task workspace")
client = socket.socket(socket.AF_UNIX)
client.connect("/tangle/model/endpoint.sock")
seen["endpoint"] = client.recv(16).decode()
print(json.dumps(seen))
"""


def _isolation() -> LocalIsolation:
    found = isolation()
    if not found.mount_namespace:
        pytest.skip("no private mount namespace can be made on this machine")
    return found


def _user_namespace_isolation() -> LocalIsolation:
    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("no unshare here")
    prefix = (unshare, "--user", "--map-current-user", "--net", "--pid", "--mount")
    return LocalIsolation(prefix, True, True, True, True)


def _provider(root: Path, host: Path, found: LocalIsolation, **options: Any) -> LocalExactProcessProvider:
    return LocalExactProcessProvider(
        root, executables=[PYTHON], isolation=found, private_root=True,
        read_only_paths=["/tangle/input"], host_directories={"/tangle/model": host}, **options,
    )


def _run_probe(tmp_path: Path, found: LocalIsolation) -> tuple[dict[str, Any], bytes]:
    host = tmp_path / "host-endpoint"
    host.mkdir()
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(host / "endpoint.sock"))
    os.chmod(host / "endpoint.sock", 0o666)  # as the model endpoint makes it: programs run as another user
    server.listen(1)
    server.settimeout(60)
    local = _provider(tmp_path / "provider", host, found)
    assert local.private_root

    async def main() -> tuple[dict[str, Any], bytes]:
        assert local.exact_process is not None
        environment = await local.exact_process.create(create_input(local.image))
        await environment.write_file("/tangle/input/task.txt", b"the instruction", mode=0o444)
        await environment.write_file("/tangle/task/.keep", b"", mode=0o644)
        try:
            process = await environment.process.spawn(python_launch(PROBE, cwd="/tangle/task"))
        except ContractError as error:
            if error.issues[0].code == "exact_process_private_root_failed":
                pytest.skip("this mount namespace cannot be made here")
            raise
        import asyncio

        connection, _ = await asyncio.to_thread(server.accept)
        connection.sendall(b"hello")
        connection.close()
        termination = (await process.wait()).to_wire()
        out = "".join([chunk async for chunk in process.stdout()])
        err = "".join([chunk async for chunk in process.stderr()])
        assert termination == {"kind": "exit", "exitCode": 0}, err
        answer = await environment.read_file("/tangle/task/answer.txt", max_bytes=1024)
        await environment.destroy()
        return json.loads(out), answer

    try:
        return run(main())
    finally:
        server.close()
        local.close()


def test_environment_paths_are_the_process_paths(tmp_path: Path) -> None:
    seen, answer = _run_probe(tmp_path, _isolation())
    assert seen["cwd"] == "/tangle/task"
    assert seen["task"] == "the instruction"
    assert seen["taskWritable"] == 30 and seen["inputWritable"] == 30  # EROFS
    assert seen["endpoint"] == "hello"
    assert answer == b"written in the task workspace"
    assert not Path("/tangle").exists()  # nothing was made on the host's root


def test_a_user_namespace_private_root_declares_nothing(tmp_path: Path) -> None:
    """In a user namespace the program would run as the provider's own host uid."""
    _isolation()  # the kernel's mount namespaces work at all
    host = tmp_path / "host"
    host.mkdir()
    local = _provider(tmp_path / "provider", host, _user_namespace_isolation())
    assert local.exact_process is None
    local.close()


def test_the_kit_passes_with_a_private_root(tmp_path: Path) -> None:
    found = _isolation()
    host = tmp_path / "host"
    host.mkdir()

    def factory() -> LocalExactProcessProvider:
        return _provider(tmp_path / "provider", host, found)

    report = run_exact_process_conformance(factory, create_input(factory().image), ExactProcessLaunches.python(PYTHON))
    report.raise_for_failures()


def test_a_link_at_a_mount_point_is_refused(tmp_path: Path) -> None:
    found = _isolation()
    host = tmp_path / "host"
    host.mkdir()
    local = _provider(tmp_path / "provider", host, found)

    async def main() -> str:
        assert local.exact_process is not None
        environment = await local.exact_process.create(create_input(local.image))
        files = tmp_path / "provider" / "environments" / environment.id / "fs"
        (files / "tangle").mkdir()
        os.symlink("/etc", files / "tangle" / "input")
        with pytest.raises(ContractError) as refused:
            await environment.process.spawn(python_launch("print(1)"))
        return refused.value.issues[0].code

    assert run(main()) == "exact_process_path_escape"


def test_no_private_root_without_a_mount_namespace(tmp_path: Path) -> None:
    found = isolation()
    without = LocalIsolation(found.prefix[:-1] if found.prefix[-1] == "--mount" else found.prefix,
                             found.network_namespace, found.pid_namespace, found.user_namespace, False)
    local = LocalExactProcessProvider(tmp_path, executables=[PYTHON], isolation=without, private_root=True)
    assert not local.private_root
    local.close()
