"""The local exact-process provider: the kit, and each promise on its real execution path."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from agent_interface.conformance import ExactProcessLaunches, run_exact_process_conformance
from agent_interface.core.errors import ContractError
from agent_interface.evaluator import LocalExactProcessProvider
from tests.evaluator.local_fixtures import (
    PYTHON,
    create_input,
    isolation,
    provider,
    python_launch,
    run,
)


@pytest.mark.parametrize("pid_namespace", [True, False], ids=["pid-namespace", "process-group"])
def test_passes_the_exact_process_kit(tmp_path: Path, pid_namespace: bool) -> None:
    isolation(pid_namespace)  # skips where egress cannot be blocked

    def factory() -> LocalExactProcessProvider:
        return provider(tmp_path, pid_namespace=pid_namespace)

    report = run_exact_process_conformance(
        factory, create_input(factory().image), ExactProcessLaunches.python(PYTHON)
    )
    report.raise_for_failures()
    assert not report.skipped


def _code(error: pytest.ExceptionInfo[ContractError]) -> str:
    return error.value.issues[0].code


def test_the_process_environment_is_replaced_not_inherited(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AMBIENT_SECRET", "do-not-leak")
    local = provider(tmp_path)

    async def main() -> str:
        assert local.exact_process is not None
        environment = await local.exact_process.create(create_input(local.image))
        process = await environment.process.spawn(
            {"executable": "/usr/bin/env", "args": [], "cwd": "/", "env": {"ONLY": "this"}, "timeoutMs": 10_000}
        )
        await process.wait()
        return "".join([chunk async for chunk in process.stdout()])

    assert run(main()) == "ONLY=this\n"


def test_stdin_is_delivered_exactly_then_eof(tmp_path: Path) -> None:
    local = provider(tmp_path)

    async def main() -> str:
        assert local.exact_process is not None
        environment = await local.exact_process.create(create_input(local.image))
        process = await environment.process.spawn(
            python_launch("import sys; sys.stdout.write(repr(sys.stdin.buffer.read()))", stdin="caf\u00e9\n")
        )
        await process.wait()
        return "".join([chunk async for chunk in process.stdout()])

    assert run(main()) == repr("caf\u00e9\n".encode())


def test_cwd_and_files_are_the_environment_s(tmp_path: Path) -> None:
    local = provider(tmp_path)

    async def main() -> bytes:
        assert local.exact_process is not None
        environment = await local.exact_process.create(create_input(local.image))
        await environment.write_file("/work/in.txt", b"42", mode=0o600)
        process = await environment.process.spawn(
            python_launch(
                "data = open('in.txt', 'rb').read(); open('out.bin', 'wb').write(data * 2)",
                cwd="/work",
            )
        )
        assert (await process.wait()).to_wire() == {"kind": "exit", "exitCode": 0}
        return await environment.read_file("/work/out.bin", max_bytes=4)

    assert run(main()) == b"4242"


def test_output_is_bounded_and_what_was_dropped_is_counted(tmp_path: Path) -> None:
    local = provider(tmp_path, max_output_bytes=1000)

    async def main() -> tuple[bytes, dict[str, int], str]:
        assert local.exact_process is not None
        environment = await local.exact_process.create(create_input(local.image))
        process = await environment.process.spawn(
            python_launch("import sys; sys.stdout.write('x' * 5000); sys.stderr.write('e')")
        )
        await process.wait()
        text = "".join([chunk async for chunk in process.stdout()])
        return await process.output_bytes("stdout"), await process.output_dropped(), text

    captured, dropped, text = run(main())
    assert captured == b"x" * 1000 and text == "x" * 1000
    assert dropped == {"stdout": 4000, "stderr": 0}


def test_invalid_utf8_output_is_replaced_in_text_and_exact_in_bytes(tmp_path: Path) -> None:
    local = provider(tmp_path)

    async def main() -> tuple[str, bytes]:
        assert local.exact_process is not None
        environment = await local.exact_process.create(create_input(local.image))
        process = await environment.process.spawn(
            python_launch("import sys; sys.stdout.buffer.write(b'a\\xffb\\xe2\\x9c\\x93')")
        )
        await process.wait()
        return "".join([chunk async for chunk in process.stdout()]), await process.output_bytes("stdout")

    assert run(main()) == ("a\ufffdb\u2713", b"a\xffb\xe2\x9c\x93")


def test_spawn_refusals_are_typed_and_leave_no_process(tmp_path: Path) -> None:
    local = provider(tmp_path)

    async def main() -> None:
        assert local.exact_process is not None
        environment = await local.exact_process.create(create_input(local.image))
        cases = [
            ({"executable": "/bin/sh", "args": ["-c", "true"], "cwd": "/", "env": {}, "timeoutMs": 0}, "exact_process_shell"),
            ({"executable": "/bin/true", "args": [], "cwd": "/", "env": {}, "timeoutMs": 0}, "exact_process_executable_not_in_image"),
            (python_launch("pass", cwd="/missing"), "exact_process_cwd"),
            (python_launch("pass", cwd="/a/../b"), "exact_process_path"),
            ({"executable": "python3", "args": [], "cwd": "/", "env": {}, "timeoutMs": 0}, "exact_process_executable_path"),
        ]
        for launch, code in cases:
            with pytest.raises(ContractError) as error:
                await environment.process.spawn(launch)
            assert code in {issue.code for issue in error.value.issues}, (launch, error.value)
        assert await environment.process.list() == []

    run(main())


def test_a_bare_executable_is_resolved_along_the_launch_s_own_path(tmp_path: Path) -> None:
    local = provider(tmp_path)
    directory, name = PYTHON.rsplit("/", 1)

    async def main() -> object:
        assert local.exact_process is not None
        environment = await local.exact_process.create(create_input(local.image))
        process = await environment.process.spawn(
            {"executable": name, "args": ["-I", "-S", "-c", "pass"], "cwd": "/",
             "env": {"PATH": f"/nonexistent:{directory}"}, "timeoutMs": 10_000}
        )
        return (await process.wait()).to_wire()

    assert run(main()) == {"kind": "exit", "exitCode": 0}


def test_create_refusals(tmp_path: Path) -> None:
    local = provider(tmp_path)
    exact = local.exact_process
    assert exact is not None
    cases = [
        (create_input("other@sha256:" + "c" * 64), "exact_process_image_unavailable"),
        (create_input(local.image, egress={"mode": "strict", "allowDomains": ["example.com"]}), "exact_process_egress_unsupported"),
        (create_input(local.image, resources={"cpu": 0.5, "memoryMb": 64, "diskMb": 1}), "exact_process_resources_unsupported"),
        (create_input(local.image, providerOptions={"gpu": True}), "exact_process_provider_options_unsupported"),
    ]
    for value, code in cases:
        with pytest.raises(ContractError) as error:
            run(exact.create(value))
        assert _code(error) == code
    assert run(exact.list()) == []
    assert not (tmp_path / "environments").exists()


def test_changed_input_under_a_used_key_conflicts(tmp_path: Path) -> None:
    local = provider(tmp_path)
    assert local.exact_process is not None
    run(local.exact_process.create(create_input(local.image)))
    with pytest.raises(ContractError) as error:
        run(provider(tmp_path).exact_process.create(create_input(local.image, metadata={"task": "u"})))  # type: ignore[union-attr]
    assert _code(error) == "idempotency_conflict"


def test_lifetime_ends_the_environment_and_its_processes(tmp_path: Path) -> None:
    local = provider(tmp_path)

    async def main() -> None:
        assert local.exact_process is not None
        environment = await local.exact_process.create(create_input(local.image, maxLifetimeMs=1500))
        process = await environment.process.spawn(python_launch("import time; time.sleep(60)", timeout_ms=0))
        assert (await process.wait()).to_wire() == {"kind": "cancelled"}
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and await local.exact_process.get(environment.id) is not None:
            await asyncio.sleep(0.05)
        assert await local.exact_process.get(environment.id) is None
        with pytest.raises(ContractError) as error:
            await environment.process.spawn(python_launch("pass"))
        assert _code(error) == "exact_process_environment_gone"

    run(main())


def test_destroy_ends_processes_and_removes_the_files(tmp_path: Path) -> None:
    local = provider(tmp_path)

    async def main() -> None:
        assert local.exact_process is not None
        environment = await local.exact_process.create(create_input(local.image))
        await environment.write_file("/keep.bin", b"x", mode=0o600)
        process = await environment.process.spawn(python_launch("import time; time.sleep(60)", timeout_ms=0))
        await environment.destroy()
        assert (tmp_path / "environments" / environment.id).exists() is False
        await environment.destroy()  # idempotent
        assert await local.exact_process.get(environment.id) is None
        with pytest.raises(ContractError):
            await environment.read_file("/keep.bin", max_bytes=1)
        with pytest.raises(ContractError) as error:
            await local.exact_process.create(create_input(local.image))
        assert _code(error) == "exact_process_environment_destroyed"
        del process

    run(main())


def test_state_is_recorded_in_sqlite_with_wal(tmp_path: Path) -> None:
    import sqlite3

    local = provider(tmp_path)
    assert local.exact_process is not None
    environment = run(local.exact_process.create(create_input(local.image)))
    connection = sqlite3.connect(tmp_path / "state.sqlite3")
    try:
        assert connection.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        rows = connection.execute("SELECT id, state, input_json FROM environments").fetchall()
    finally:
        connection.close()
    assert [(row[0], row[1]) for row in rows] == [(environment.id, "ready")]
    assert json.loads(rows[0][2])["idempotencyKey"] == "key-1"


@pytest.mark.parametrize("delay", [0.0, 0.005, 0.03])
def test_a_cancelled_spawn_leaves_no_process_running(tmp_path: Path, delay: float) -> None:
    import uuid

    from tests.evaluator.local_fixtures import live_marked_processes

    local = provider(tmp_path)
    marker = f"exact-cancelled-spawn-{uuid.uuid4().hex}"

    async def main() -> list[int]:
        assert local.exact_process is not None
        environment = await local.exact_process.create(create_input(local.image))
        task = asyncio.ensure_future(
            environment.process.spawn(
                python_launch(f"import time; time.sleep(60)  # {marker}", timeout_ms=0)
            )
        )
        await asyncio.sleep(delay)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass
        else:  # it finished first: then it must be ours to end
            await task.result().kill()
        for _ in range(100):
            if not live_marked_processes(marker):
                break
            await asyncio.sleep(0.05)
        return live_marked_processes(marker)

    assert run(main()) == []


def test_a_spawn_cancelled_while_recording_its_start_ends_the_program(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The last step of a spawn (recording the process as started) is held while the
    program runs; a cancellation there ends the program before it goes on."""
    import uuid

    from agent_interface.evaluator.process.process_store import ExactProcessStore
    from tests.evaluator.local_fixtures import live_marked_processes

    local = provider(tmp_path)
    marker = f"exact-cancelled-recording-{uuid.uuid4().hex}"
    record = ExactProcessStore.set_process_state

    def slow(self: ExactProcessStore, environment_id: str, pid: int, state: str) -> None:
        if state == "started":
            time.sleep(0.5)
        record(self, environment_id, pid, state)  # type: ignore[arg-type]

    monkeypatch.setattr(ExactProcessStore, "set_process_state", slow)

    async def main() -> tuple[list[int], list[int]]:
        assert local.exact_process is not None
        environment = await local.exact_process.create(create_input(local.image))
        task = asyncio.ensure_future(
            environment.process.spawn(python_launch(f"import time; time.sleep(60)  # {marker}", timeout_ms=0))
        )
        running: list[int] = []
        for _ in range(300):
            running = live_marked_processes(marker)
            if running:
                break
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        for _ in range(100):
            if not live_marked_processes(marker):
                break
            await asyncio.sleep(0.05)
        return running, live_marked_processes(marker)

    running, left = run(main())
    assert running  # the program ran before the cancellation
    assert left == []


def test_launch_secrets_do_not_stay_at_rest(tmp_path: Path) -> None:
    local = provider(tmp_path)
    secret = "s3cret-" + "7" * 20

    async def main() -> object:
        assert local.exact_process is not None
        environment = await local.exact_process.create(create_input(local.image))
        process = await environment.process.spawn(
            python_launch("import sys; sys.stdin.read()", env={"TOKEN": secret}, stdin=secret)
        )
        assert secret not in repr(process)
        return (await process.wait()).to_wire()

    assert run(main()) == {"kind": "exit", "exitCode": 0}
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path


def test_an_os_failure_in_a_file_operation_is_a_typed_refusal(tmp_path: Path) -> None:
    import shutil

    from agent_interface.evaluator.process.environment_disk import unmount

    local = provider(tmp_path)

    async def main() -> None:
        assert local.exact_process is not None
        environment = await local.exact_process.create(create_input(local.image))
        files = tmp_path / "environments" / environment.id / "fs"
        unmount(files)  # lost from outside (as after a reboot), then removed
        shutil.rmtree(files)
        for call, code in (
            (environment.write_file("/a", b"x", mode=0o600), "exact_process_environment_lost"),
            (environment.read_file("/a", max_bytes=1), "exact_process_file_error"),
        ):
            with pytest.raises(ContractError) as error:
                await call
            assert error.value.issues[0].code == code
            assert str(tmp_path) not in str(error.value)

    run(main())
