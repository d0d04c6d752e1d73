"""Durable, collision-safe idempotent recovery of the local provider (SQLite)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from agent_interface.core.errors import ContractError
from tests.evaluator.local_fixtures import (
    PYTHON,
    create_input,
    isolation,
    provider,
    python_launch,
    run,
)

ROOT = Path(__file__).resolve().parents[2]


def _environment_directories(root: Path) -> list[str]:
    return sorted(path.name for path in (root / "environments").iterdir())


def test_provider_objects_racing_on_one_key_make_one_environment(tmp_path: Path) -> None:
    image = provider(tmp_path).image

    async def main() -> set[str]:
        racers = [provider(tmp_path).exact_process for _ in range(6)]
        made = await asyncio.gather(*(exact.create(create_input(image)) for exact in racers if exact))
        return {environment.id for environment in made}

    ids = run(main())
    assert len(ids) == 1
    assert _environment_directories(tmp_path) == sorted(ids)


_RACER = textwrap.dedent(
    """
    import asyncio, json, sys, time
    from agent_interface.evaluator import LocalExactProcessProvider, LocalIsolation
    root, image_executable, prefix, start_at, mode = sys.argv[1:6]
    prefix = tuple(json.loads(prefix))
    isolation = LocalIsolation(prefix, True, False, False, "--mount" in prefix, separate_user=True)
    provider = LocalExactProcessProvider(root, executables=[image_executable], isolation=isolation)
    wire = {"image": provider.image, "egress": {"mode": "blocked"}, "maxLifetimeMs": 600000,
            "resources": {"cpu": 1, "memoryMb": 512, "diskMb": 8}, "metadata": {"task": "t"},
            "idempotencyKey": "raced"}
    while time.time() < float(start_at):
        pass
    async def main():
        environment = await provider.exact_process.create(wire)
        if mode == "spawn":
            process = await environment.process.spawn({
                "executable": image_executable, "args": ["-I", "-S", "-c", "import time; time.sleep(60)"],
                "cwd": "/", "env": {}, "timeoutMs": 0})
            return [environment.id, process.pid]
        return [environment.id]
    print(json.dumps(asyncio.run(main())))
    """
)


def _racer(tmp_path: Path, start_at: float, mode: str = "create") -> subprocess.Popen[str]:
    prefix = json.dumps(list(isolation().prefix))
    return subprocess.Popen(
        [sys.executable, "-c", _RACER, str(tmp_path), PYTHON, prefix, str(start_at), mode],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])},
    )


def test_os_processes_racing_on_one_key_make_one_environment(tmp_path: Path) -> None:
    provider(tmp_path)  # the schema exists before the race, as for any deployed root
    import time

    start_at = time.time() + 1.5
    racers = [_racer(tmp_path, start_at) for _ in range(4)]
    answers = [json.loads(racer.communicate(timeout=120)[0]) for racer in racers]
    assert all(racer.returncode == 0 for racer in racers)
    ids = {answer[0] for answer in answers}
    assert len(ids) == 1
    assert _environment_directories(tmp_path) == sorted(ids)


def test_a_process_outlives_the_os_process_that_started_it(tmp_path: Path) -> None:
    import time

    racer = _racer(tmp_path, time.time(), mode="spawn")
    environment_id, pid = json.loads(racer.communicate(timeout=120)[0])
    assert racer.returncode == 0

    async def main() -> object:
        again = provider(tmp_path).exact_process
        assert again is not None
        environment = await again.get(environment_id)
        assert environment is not None
        process = await environment.process.get(pid)
        assert process is not None
        assert (await process.status()).running
        await process.kill()
        termination = (await process.wait()).to_wire()
        await environment.destroy()
        return termination

    assert run(main()) == {"kind": "cancelled"}


def test_same_key_and_input_after_recreation_return_the_same_environment(tmp_path: Path) -> None:
    first = provider(tmp_path)
    assert first.exact_process is not None
    environment = run(first.exact_process.create(create_input(first.image)))
    process = run(environment.process.spawn(python_launch("print('once')")))
    run(process.wait())
    second = provider(tmp_path).exact_process
    assert second is not None
    again = run(second.create(create_input(first.image)))
    assert again.id == environment.id
    assert [status.pid for status in run(again.process.list())] == [process.pid]
    with pytest.raises(ContractError) as error:
        run(second.create(create_input(first.image, maxLifetimeMs=1)))
    assert error.value.issues[0].code == "idempotency_conflict"
