"""The in-memory exact-process engine: its rules, one accepted and one refused example each."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from agent_interface.core.errors import ContractError
from agent_interface.testing import (
    InMemoryExactProcessProvider,
    InMemoryExactProcessStore,
    SimulatedRun,
    simulated_process_launch,
)

INPUT: dict[str, Any] = {
    "image": "registry.example/exact@sha256:" + "b" * 64,
    "egress": {"mode": "blocked"},
    "maxLifetimeMs": 600_000,
    "resources": {"cpu": 1, "memoryMb": 256, "diskMb": 16},
    "metadata": {"task": "t"},
    "idempotencyKey": "key-1",
}


def _code(error: pytest.ExceptionInfo[ContractError]) -> str:
    return error.value.issues[0].code


def test_concurrent_same_key_creates_have_one_effect() -> None:
    provider = InMemoryExactProcessProvider()

    async def main() -> set[str]:
        made = await asyncio.gather(*(provider.exact_process.create(INPUT) for _ in range(32)))
        return {environment.id for environment in made}

    assert len(asyncio.run(main())) == 1
    assert provider.store.create_effects == 1


def test_threads_racing_on_one_key_over_one_store_have_one_effect() -> None:
    store = InMemoryExactProcessStore()
    ids: list[str] = []
    barrier = threading.Barrier(8)

    def worker() -> None:
        provider = InMemoryExactProcessProvider(store)
        barrier.wait()
        ids.append(asyncio.run(provider.exact_process.create(INPUT)).id)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(ids)) == 1 and len(ids) == 8
    assert store.create_effects == 1


def test_changed_input_under_a_used_key_is_refused_before_any_effect() -> None:
    provider = InMemoryExactProcessProvider()
    asyncio.run(provider.exact_process.create(INPUT))
    with pytest.raises(ContractError) as error:
        asyncio.run(provider.exact_process.create({**INPUT, "maxLifetimeMs": 1}))
    assert _code(error) == "idempotency_conflict"
    assert provider.store.create_effects == 1


def test_undeclared_egress_is_refused_not_weakened() -> None:
    provider = InMemoryExactProcessProvider(egress=("blocked",))
    strict = {**INPUT, "egress": {"mode": "strict", "allowDomains": ["example.com"]}}
    with pytest.raises(ContractError) as error:
        asyncio.run(provider.exact_process.create(strict))
    assert _code(error) == "exact_process_egress_unsupported"
    assert provider.store.create_effects == 0


def test_a_mutable_image_is_refused() -> None:
    with pytest.raises(ContractError) as error:
        asyncio.run(InMemoryExactProcessProvider().exact_process.create({**INPUT, "image": "python:3"}))
    assert any(issue.code == "exact_process_mutable_image" for issue in error.value.issues)


def test_terminal_reasons_are_distinct() -> None:
    async def main() -> list[Any]:
        environment = await InMemoryExactProcessProvider().exact_process.create(INPUT)
        spawn = environment.process.spawn
        exited = await spawn(simulated_process_launch(exit_code=3))
        timed = await spawn(simulated_process_launch(duration_ms=None, timeout_ms=20))
        signalled = await spawn(simulated_process_launch(signal="SIGSEGV"))
        cancelled = await spawn(simulated_process_launch(duration_ms=None))
        await cancelled.kill()
        return [(await process.wait()).to_wire() for process in (exited, timed, signalled, cancelled)]

    assert asyncio.run(main()) == [
        {"kind": "exit", "exitCode": 3},
        {"kind": "timeout", "timeoutMs": 20},
        {"kind": "signal", "signal": "SIGSEGV"},
        {"kind": "cancelled"},
    ]


def test_a_process_that_ends_before_its_timeout_exits() -> None:
    async def main() -> Any:
        environment = await InMemoryExactProcessProvider().exact_process.create(INPUT)
        process = await environment.process.spawn(simulated_process_launch(duration_ms=5, timeout_ms=10_000))
        return (await process.wait()).to_wire()

    assert asyncio.run(main()) == {"kind": "exit", "exitCode": 0}


def test_kill_after_the_end_changes_nothing() -> None:
    async def main() -> tuple[Any, Any]:
        environment = await InMemoryExactProcessProvider().exact_process.create(INPUT)
        process = await environment.process.spawn(simulated_process_launch(exit_code=1))
        await process.wait()
        before = await process.status()
        await process.kill()
        return before, await process.status()

    before, after = asyncio.run(main())
    assert before == after and before.exit_code == 1


def test_shell_launch_is_refused_and_leaves_no_process() -> None:
    async def main() -> list[Any]:
        environment = await InMemoryExactProcessProvider().exact_process.create(INPUT)
        with pytest.raises(ContractError) as error:
            await environment.process.spawn(
                {"executable": "/bin/bash", "args": ["-c", "true"], "cwd": "/", "env": {}, "timeoutMs": 0}
            )
        assert any(issue.code == "exact_process_shell" for issue in error.value.issues)
        return await environment.process.list()

    assert asyncio.run(main()) == []


def test_custom_programs_and_unknown_executables() -> None:
    def echo(launch: Any) -> SimulatedRun:
        return SimulatedRun(stdout=" ".join(launch.args).encode())

    async def main() -> str:
        provider = InMemoryExactProcessProvider(programs={"/bin/echo": echo})
        environment = await provider.exact_process.create(INPUT)
        with pytest.raises(ContractError) as error:
            await environment.process.spawn(
                {"executable": "/bin/cat", "args": [], "cwd": "/", "env": {}, "timeoutMs": 0}
            )
        assert _code(error) == "exact_process_spawn_failed"
        process = await environment.process.spawn(
            {"executable": "/bin/echo", "args": ["a", "b"], "cwd": "/", "env": {}, "timeoutMs": 0}
        )
        return "".join([chunk async for chunk in process.stdout()])

    assert asyncio.run(main()) == "a b"


def test_files_are_exact_bytes_and_bounded() -> None:
    async def main() -> None:
        environment = await InMemoryExactProcessProvider().exact_process.create(INPUT)
        await environment.write_file("/w/a.bin", b"\xff\x00\x80", mode=0o600)
        assert await environment.read_file("/w/a.bin", max_bytes=3) == b"\xff\x00\x80"
        with pytest.raises(ContractError) as error:
            await environment.read_file("/w/a.bin", max_bytes=2)
        assert _code(error) == "exact_process_read_too_large"
        with pytest.raises(ContractError) as error:
            await environment.read_file("/w/../a.bin", max_bytes=3)
        assert _code(error) == "exact_process_path"

    asyncio.run(main())


def test_recovered_by_a_new_provider_object_over_the_store() -> None:
    store = InMemoryExactProcessStore()

    async def main() -> None:
        first = await InMemoryExactProcessProvider(store).exact_process.create(INPUT)
        running = await first.process.spawn(simulated_process_launch(duration_ms=None))
        again = InMemoryExactProcessProvider(store).exact_process
        recovered = await again.get(first.id)
        assert recovered is not None
        assert (await again.create(INPUT)).id == first.id
        handle = await recovered.process.get(running.pid)
        assert handle is not None
        await handle.kill()
        assert (await running.wait()).to_wire() == {"kind": "cancelled"}

    asyncio.run(main())


def test_destroy_ends_processes_and_lookups() -> None:
    async def main() -> None:
        exact = InMemoryExactProcessProvider().exact_process
        environment = await exact.create(INPUT)
        running = await environment.process.spawn(simulated_process_launch(duration_ms=None))
        await environment.destroy()
        assert (await running.wait()).to_wire() == {"kind": "cancelled"}
        assert await exact.get(environment.id) is None
        assert await exact.list({"metadata": {"task": "t"}}) == []
        with pytest.raises(ContractError) as error:
            await exact.create(INPUT)
        assert _code(error) == "exact_process_environment_destroyed"

    asyncio.run(main())
