"""OciExactProcessProvider through the real runtime: conformance, refusals, delivery, recovery."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from agent_interface.conformance import run_exact_process_conformance
from agent_interface.conformance.exact_process import EXACT_PROCESS_CHECKS
from agent_interface.core.errors import ContractError
from agent_interface.evaluator.container.oci_provider import OciExactProcessProvider
from agent_interface.evaluator.images.image_root import ImageRoot
from tests.evaluator.oci_runtime_fixtures import (
    DictImageSource,
    busybox_world,
    conformance_launches,
    create_input,
    launch,
    requires_runc,
    run,
    runc_ids,
)

pytestmark = requires_runc


world = pytest.fixture(scope="module", name="world")(busybox_world)


def _open(root: Path, image: ImageRoot, **options: Any) -> OciExactProcessProvider:
    provider: OciExactProcessProvider = run(OciExactProcessProvider.open(root, images=DictImageSource(image), **options))
    return provider


def test_the_conformance_kit_passes_on_the_real_runtime(world: tuple[Path, ImageRoot]) -> None:
    scratch, image = world
    root = scratch / "conformance"
    report = run_exact_process_conformance(
        lambda: OciExactProcessProvider.open(root, images=DictImageSource(image)),
        create_input(image, "kit"), conformance_launches(), timeout_s=60,
    )
    report.raise_for_failures()
    # this host enforces both egress modes, so there is no undeclared mode to refuse
    # (the refusal itself: test_unknown_images_and_strict_egress_are_refused)
    assert report.names("skipped") == ("exact-process-egress-refusal",)
    assert report.names("passed") == tuple(
        name for name in EXACT_PROCESS_CHECKS if name != "exact-process-egress-refusal"
    )
    assert runc_ids(root) == []


def test_a_host_without_runc_omits_the_capability_and_says_why(world: tuple[Path, ImageRoot]) -> None:
    scratch, image = world
    provider = _open(scratch / "no-runc", image, runc="/nonexistent/runc")
    assert provider.exact_process is None
    assert provider.reasons == ("runc is not installed",)
    assert run(provider.capabilities()).exact_process is None
    report = run_exact_process_conformance(lambda: provider, create_input(image, "none"), conformance_launches())
    assert not report.ok and report.names("skipped") == EXACT_PROCESS_CHECKS


def test_unknown_images_and_strict_egress_are_refused(
    world: tuple[Path, ImageRoot], monkeypatch: pytest.MonkeyPatch
) -> None:
    scratch, image = world

    async def no_strict(*args: Any) -> tuple[str, ...]:
        return ("stubbed: strict egress not observed",)

    # strict is refused where its probe did not observe it (test_oci_strict_egress covers
    # where it did)
    monkeypatch.setattr("agent_interface.evaluator.container.oci_provider.probe_strict_egress", no_strict)
    provider = _open(scratch / "shared", image)
    exact = provider.exact_process
    assert exact is not None
    other = "test/busybox@sha256:" + "e" * 64
    renamed = "other/name@" + image.manifest_digest
    for reference in (other, renamed):
        with pytest.raises(ContractError) as refused:
            run(exact.create(create_input(image, f"img-{reference[:5]}", image=reference)))
        assert refused.value.issues[0].code == "exact_process_image_unavailable"
    with pytest.raises(ContractError) as refused:
        run(exact.create(create_input(image, "strict", egress={"mode": "strict", "allowDomains": ["example.com"]})))
    assert refused.value.issues[0].code == "exact_process_egress_unsupported"
    with pytest.raises(ContractError) as refused:
        run(exact.create(create_input(image, "options", providerOptions={"privileged": True})))
    assert refused.value.issues[0].code == "exact_process_provider_options_unsupported"
    assert run(exact.list({"metadata": {"suite": "oci"}})) == []


def test_stdin_bytes_then_eof_and_read_only_binds(world: tuple[Path, ImageRoot]) -> None:
    scratch, image = world
    task = scratch / "task.txt"
    task.write_text("the task\n")
    os.chmod(task, 0o644)
    provider = _open(scratch / "binds", image, read_only_binds={"/task/task.txt": task})
    exact = provider.exact_process
    assert exact is not None

    async def body() -> None:
        environment = await exact.create(create_input(image, "stdin", resources={"cpu": 0.5, "memoryMb": 64, "diskMb": 8}))
        try:
            process = await environment.process.spawn(launch("/bin/cat", stdin="exact \u00e9 bytes"))
            assert (await process.wait()).to_wire() == {"kind": "exit", "exitCode": 0}
            assert await process.output_bytes("stdout") == "exact \u00e9 bytes".encode()
            process = await environment.process.spawn(launch("/bin/cat", "/task/task.txt"))
            await process.wait()
            assert await process.output_bytes("stdout") == b"the task\n"
            process = await environment.process.spawn(launch("/bin/dd", "if=/dev/zero", "of=/task/task.txt", "count=1"))
            assert (await process.wait()).to_wire() != {"kind": "exit", "exitCode": 0}
        finally:
            await environment.destroy()

    run(body())
    assert task.read_text() == "the task\n"
    assert runc_ids(scratch / "binds") == []


_KILLED_EVALUATOR = """
import asyncio, json, sys
sys.path.insert(0, {tree!r})
from tests.evaluator.oci_runtime_fixtures import DictImageSource, build_image, create_input, launch
from agent_interface.evaluator.images.image_root import ImageRoot, OciPlatform
from agent_interface.evaluator.container.oci_provider import OciExactProcessProvider
from pathlib import Path

async def main():
    image = ImageRoot(**json.loads(sys.argv[1]))
    provider = await OciExactProcessProvider.open(sys.argv[2], images=DictImageSource(image))
    environment = await provider.exact_process.create(create_input(image, "killed"))
    timed = await environment.process.spawn(launch("/bin/sleep", "60", timeout_ms=1500))
    lost = await environment.process.spawn(launch("/bin/sleep", "60", timeout_ms=0))
    print(json.dumps([environment.id, timed.pid, lost.pid]), flush=True)
    await asyncio.sleep(3600)

asyncio.run(main())
"""


def test_an_evaluator_killed_mid_run_leaves_a_state_the_next_provider_recovers(world: tuple[Path, ImageRoot]) -> None:
    scratch, image = world
    root = scratch / "killed"
    described = json.dumps({
        "name": image.name, "index_digest": image.index_digest, "manifest_digest": image.manifest_digest,
        "platform": image.platform, "rootfs": str(image.rootfs),
    }, default=lambda platform: None)
    script = _KILLED_EVALUATOR.format(tree=str(Path(__file__).parents[2]))
    script = script.replace("ImageRoot(**json.loads(sys.argv[1]))",
                            "ImageRoot(**{**json.loads(sys.argv[1]), 'platform': OciPlatform('linux', 'amd64'), "
                            "'rootfs': Path(json.loads(sys.argv[1])['rootfs'])})")
    evaluator = subprocess.Popen(
        [sys.executable, "-c", script, described, str(root)], stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    try:
        assert evaluator.stdout is not None
        environment_id, timed_pid, lost_pid = json.loads(evaluator.stdout.readline())
    finally:
        evaluator.send_signal(signal.SIGKILL)
        evaluator.wait()
    control = root / "environments" / environment_id / "processes"
    supervisor = json.loads((control / str(lost_pid) / "supervisor.json").read_text())
    os.kill(supervisor["pid"], signal.SIGKILL)  # the lost one: its supervisor dies too
    time.sleep(0.2)
    provider = _open(root, image)
    exact = provider.exact_process
    assert exact is not None

    async def body() -> None:
        environment = await exact.get(environment_id)
        assert environment is not None
        lost = await environment.process.get(lost_pid)
        assert lost is not None
        assert (await lost.status()).termination.to_wire() == {"kind": "cancelled"}
        assert f"{environment_id}-{lost_pid}" not in runc_ids(root)
        timed = await environment.process.get(timed_pid)
        assert timed is not None
        assert (await timed.wait()).to_wire() == {"kind": "timeout", "timeoutMs": 1500}
        await environment.destroy()

    run(body())
    assert runc_ids(root) == []


def test_a_missing_executable_is_a_typed_spawn_failure_with_nothing_left(world: tuple[Path, ImageRoot]) -> None:
    scratch, image = world
    root = scratch / "missing"
    provider = _open(root, image)
    exact = provider.exact_process
    assert exact is not None

    async def body() -> None:
        environment = await exact.create(create_input(image, "missing"))
        try:
            with pytest.raises(ContractError) as refused:
                await environment.process.spawn(launch("/bin/absent"))
            assert refused.value.issues[0].code == "exact_process_spawn_failed"
            assert await environment.process.list() == []
            process = await environment.process.spawn(launch("/bin/true", env={"SECRET": "s3cr3t"}))
            assert (await process.wait()).to_wire() == {"kind": "exit", "exitCode": 0}
            assert process.container_id == f"{environment.id}-{process.pid}"
            assert environment.image == image.reference
            control = root / "environments" / environment.id / "processes" / str(process.pid)
            at_rest = b"".join(path.read_bytes() for path in control.rglob("*") if path.is_file())
            assert b"s3cr3t" not in at_rest  # the launch environment is not kept beside the evidence
        finally:
            await environment.destroy()

    run(body())
    assert runc_ids(root) == []


@pytest.mark.parametrize("moment", [0.0, 0.005, 0.02, 0.04, "recording"])
def test_a_cancelled_spawn_leaves_no_container_running(
        world: tuple[Path, ImageRoot], moment: float | str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Cancelled at any moment (before the request, while runc starts the container, or
    once it runs while the spawn records it as started), a spawn leaves no container
    running: what it started it ends before the cancellation goes on."""
    from agent_interface.evaluator.container.oci_environment import OciExactProcessManager

    scratch, image = world
    name = f"cancelled-{moment}"
    root = scratch / name
    provider = _open(root, image)
    exact = provider.exact_process
    assert exact is not None
    if moment == "recording":  # hold the spawn in its last step, with the container running
        started = OciExactProcessManager._started

        def slow(self: OciExactProcessManager, pid: int) -> object:
            time.sleep(0.5)
            return started(self, pid)

        monkeypatch.setattr(OciExactProcessManager, "_started", slow)

    async def body() -> tuple[list[str], list[str]]:
        environment = await exact.create(create_input(image, name))
        task = asyncio.ensure_future(environment.process.spawn(launch("/bin/sleep", "60", timeout_ms=0)))
        running: list[str] = []
        if moment == "recording":
            for _ in range(200):
                running = runc_ids(root)
                if running:
                    break
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.05)
        else:
            assert isinstance(moment, float)
            await asyncio.sleep(moment)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass
        else:  # it finished first: then it is ours to end
            await task.result().kill()
        left = runc_ids(root)
        await environment.destroy()
        return running, left

    running, left = run(body())
    assert left == []
    assert moment != "recording" or running  # the container did run before the cancellation
    assert runc_ids(root) == []
