"""``candidate run`` in OCI containers, through real ``runc``: pinned and task containers,
every instruction delivery, the model gateway (through strict egress) as the only way out,
receipts naming the
image and the container, refusals before anything runs, and distinct terminations."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_interface.candidate.receipt_binding import run_receipt_matches
from agent_interface.core.errors import ContractError
from agent_interface.evaluator.run.candidate_run import run_candidate
from tests.evaluator.container_run_fixtures import (
    ARTIFACTS,
    IMAGE_NAME,
    AgentImage,
    agent_image,
    bundle,
    pinned,
    task,
    task_container,
)
from tests.evaluator.oci_runtime_fixtures import requires_runc

pytestmark = requires_runc


@pytest.fixture(scope="module")
def image() -> Iterator[AgentImage]:
    directory = Path(tempfile.mkdtemp(prefix="crun-image-", dir="/var/tmp"))
    try:
        yield agent_image(directory)
    finally:
        subprocess.run(["rm", "-rf", str(directory)], check=False)


def _containers() -> set[str]:
    """Every host directory and mount a container run made (none must remain after it)."""
    directories = {str(path) for path in Path(tempfile.gettempdir()).glob("agent-interface-container-*")}
    mounts = {line.split()[1] for line in Path("/proc/mounts").read_text().splitlines()
              if "agent-interface-container-" in line}
    return directories | mounts


def run(tmp_path: Path, agent: AgentImage, mode: str, *, delivery: str = "stdin-utf8",
        environment: dict[str, Any] | None = None, the_task: Any = None, **options: Any) -> Any:
    before = _containers()
    document = bundle(mode, delivery=delivery, environment=environment or pinned(agent.index_digest))
    try:
        return run_candidate(document, repository=None, task=the_task or task(), out=tmp_path / "out",
                             artifacts=ARTIFACTS, images=options.pop("images", agent.store), **options)
    finally:
        assert _containers() == before


def executor_capture(tmp_path: Path, receipt: Any, out: str = "out") -> dict[str, Any]:
    cid = receipt.executor_capture.to_wire()["locator"]["cid"]
    return json.loads((tmp_path / out / "artifacts" / cid).read_bytes())


def test_a_pinned_container_runs_and_its_receipts_name_the_image_and_container(
        tmp_path: Path, image: AgentImage) -> None:
    result = run(tmp_path, image, "stdin")
    receipt = result.run_receipt
    assert receipt is not None, result.invalid_capture
    assert receipt.termination.to_wire() == {"kind": "exit", "exitCode": 0}
    assert receipt.benchmark_result.material.passed
    assert receipt.model_settlement.material.usage.model_calls == 1
    container = {"source": "pinned-container", "image": IMAGE_NAME, "indexDigest": image.index_digest,
                 "manifestDigest": image.manifest_digest, "platform": {"os": "linux", "architecture": "amd64"}}
    assert result.plan.material.container.to_wire() == container
    assert result.materialization_receipt.container.to_wire() == {
        key: value for key, value in container.items() if key != "source"} | {"source": "pinned-container"}
    run_receipt_matches(receipt, result.materialization_receipt, result.plan)
    capture = executor_capture(tmp_path, receipt)
    assert capture["provider"] == "oci-exact-process"
    assert capture["containerId"].startswith(capture["environmentId"] + "-")
    assert capture["oomKilled"] is False
    assert capture["image"] == {"reference": f"{IMAGE_NAME}@{image.manifest_digest}",
                                "indexDigest": image.index_digest, "manifestDigest": image.manifest_digest,
                                "platform": {"os": "linux", "architecture": "amd64"}}


def test_an_evaluator_task_container_runs(tmp_path: Path, image: AgentImage) -> None:
    result = run(tmp_path, image, "stdin", environment={"kind": "evaluator-task-container"},
                 the_task=task(task_container(image)))
    assert result.run_receipt is not None and result.run_receipt.benchmark_result.material.passed
    assert result.plan.material.container.to_wire() == task_container(image)
    assert result.materialization_receipt.container.source == "evaluator-task-container"


def test_the_evaluator_names_the_image_when_the_bundle_delegates(tmp_path: Path, image: AgentImage) -> None:
    result = run(tmp_path, image, "stdin", environment={"kind": "evaluator-task-container"},
                 image=f"{IMAGE_NAME}@{image.index_digest}")
    assert result.run_receipt is not None and result.run_receipt.benchmark_result.material.passed
    assert result.plan.material.container.manifest_digest == image.manifest_digest


@pytest.mark.parametrize(("mode", "delivery"), [("argv", "argv-append"), ("file", "utf8-file")])
def test_every_delivery_reaches_the_program_in_the_container(
        tmp_path: Path, image: AgentImage, mode: str, delivery: str) -> None:
    """``file`` also checks the task file can be neither written, chmodded nor removed, the
    working directory is ``/tangle/task`` and the task workspace is staged there."""
    result = run(tmp_path, image, mode, delivery=delivery)
    receipt = result.run_receipt
    assert receipt is not None, result.invalid_capture
    assert receipt.termination.to_wire() == {"kind": "exit", "exitCode": 0}, executor_capture(tmp_path, receipt)
    assert receipt.benchmark_result.material.passed


def test_no_host_unix_socket_is_within_reach(tmp_path: Path, image: AgentImage) -> None:
    """A host socket listening outside the binds cannot be reached from the container."""
    import socket

    directory = Path(tempfile.mkdtemp(prefix="crun-host-socket-", dir="/var/tmp"))
    os.chmod(directory, 0o711)
    host = socket.socket(socket.AF_UNIX)
    host.bind(str(directory / "host.sock"))
    os.chmod(directory / "host.sock", 0o666)
    host.listen()
    try:
        document = json.loads(bundle("escape", environment=pinned(image.index_digest)))
        document["execution"]["launch"]["args"].append({"kind": "public", "value": str(directory / "host.sock")})
        from agent_interface.core.canonical import canonical_digest

        document.pop("digest")
        document["digest"] = canonical_digest(document)
        result = run_candidate(json.dumps(document).encode(), repository=None, task=task(), out=tmp_path / "out",
                               artifacts=ARTIFACTS, images=image.store)
    finally:
        host.close()
        subprocess.run(["rm", "-rf", str(directory)], check=False)
    receipt = result.run_receipt  # no model call: a valid zero
    assert receipt is not None and receipt.model_settlement.material.usage.model_calls == 0
    capture = executor_capture(tmp_path, receipt)
    stdout = (tmp_path / "out" / "artifacts" / capture["stdout"]["cid"]).read_text()
    assert stdout == "escape 2\n"  # ENOENT: the host path does not exist in the container


@pytest.mark.parametrize(
    ("case", "code"),
    [
        ("missing-image", "container_image_unavailable"),
        ("another-name", "container_image_unavailable"),
        ("wrong-platform", "container_platform_unavailable"),
        ("mismatched-manifest", "container_manifest_mismatch"),
        ("no-store", "container_unavailable"),
        ("host-executor", "container_unavailable"),
        ("nothing-named", "container_image_required"),
        ("image-conflict", "container_image_conflict"),
    ],
)
def test_refusals_before_anything_runs(tmp_path: Path, image: AgentImage, case: str, code: str) -> None:
    environment: dict[str, Any] = pinned(image.index_digest)
    options: dict[str, Any] = {}
    the_task = task()
    if case == "missing-image":
        environment = pinned("sha256:" + "3" * 64)
    elif case == "another-name":
        environment = pinned(image.index_digest, image="test/other:1")
    elif case == "wrong-platform":
        environment = {"kind": "evaluator-task-container"}
        the_task = task(task_container(image, manifestDigest=image.other_manifest_digest,
                                       platform={"os": "linux", "architecture": "arm64"}))
    elif case == "mismatched-manifest":
        environment = {"kind": "evaluator-task-container"}
        the_task = task(task_container(image, manifestDigest=image.other_manifest_digest))
    elif case == "no-store":
        options["images"] = None
    elif case == "host-executor":
        options["executor"] = "host"
    elif case == "image-conflict":
        options["image"] = f"{IMAGE_NAME}@{image.index_digest}"
    elif case == "nothing-named":
        environment = {"kind": "evaluator-task-container"}
        options["executor"] = "container"
    with pytest.raises(ContractError) as refused:
        run(tmp_path, image, "stdin", environment=environment, the_task=the_task, **options)
    assert refused.value.issues[0].code == code
    assert os.listdir(tmp_path) == []


def test_a_timeout_is_recorded_as_a_timeout(tmp_path: Path, image: AgentImage) -> None:
    result = run(tmp_path, image, "sleep", the_task=task(timeoutMs=1500))
    assert result.run_receipt is not None, result.invalid_capture
    assert result.run_receipt.termination.to_wire() == {"kind": "timeout", "timeoutMs": 1500}


def test_a_non_zero_exit_is_recorded_as_such(tmp_path: Path, image: AgentImage) -> None:
    result = run(tmp_path, image, "fail")
    assert result.run_receipt is not None, result.invalid_capture
    assert result.run_receipt.termination.to_wire() == {"kind": "exit", "exitCode": 3}


def test_an_oom_kill_is_recorded_as_such(tmp_path: Path, image: AgentImage) -> None:
    result = run(tmp_path, image, "balloon", resources={"cpu": 1, "memoryMb": 64, "diskMb": 64})
    receipt = result.run_receipt
    assert receipt is not None, result.invalid_capture
    assert receipt.termination.to_wire() == {"kind": "signal", "signal": "SIGKILL"}
    assert executor_capture(tmp_path, receipt)["oomKilled"] is True


def test_a_cancelled_run_is_recorded_as_cancelled(tmp_path: Path, image: AgentImage) -> None:
    import asyncio

    from agent_interface.evaluator.run.candidate_run import run_candidate_async

    async def cancelled() -> Any:
        cancel = asyncio.Event()
        asyncio.get_running_loop().call_later(1.5, cancel.set)
        return await run_candidate_async(
            bundle("sleep", environment=pinned(image.index_digest)), repository=None, task=task(),
            out=tmp_path / "out", artifacts=ARTIFACTS, images=image.store, cancel=cancel)

    before = _containers()
    result = asyncio.run(cancelled())
    assert _containers() == before
    assert result.run_receipt is not None, result.invalid_capture
    assert result.run_receipt.termination.to_wire() == {"kind": "cancelled"}


def _cli(tmp_path: Path, image: AgentImage, *options: str) -> int:
    from agent_interface.cli.main import main

    (tmp_path / "bundle.json").write_bytes(bundle("stdin", environment=pinned(image.index_digest)))
    (tmp_path / "task.json").write_text(json.dumps(task().to_wire()))
    return main(["candidate", "run", str(tmp_path / "bundle.json"), "--task", str(tmp_path / "task.json"),
                 "--out", str(tmp_path / "run"), "--artifacts", str(ARTIFACTS), "--json", *options])


@pytest.mark.parametrize("source", ["layout", "oci-archive"])
def test_the_cli_imports_the_image_and_runs_the_pinned_container(
        tmp_path: Path, image: AgentImage, source: str) -> None:
    if source == "layout":
        options = ["--image-layout", str(image.layout)]
    else:
        archive = tmp_path / "image.tar"
        subprocess.run(["tar", "-C", str(image.layout), "-cf", str(archive), "."], check=True)
        options = ["--image-archive", str(archive)]
    assert _cli(tmp_path, image, "--images", str(tmp_path / "store"), *options) == 0
    receipt = json.loads((tmp_path / "run" / "materialization-receipt.json").read_text())
    assert receipt["container"]["manifestDigest"] == image.manifest_digest
    assert (tmp_path / "run" / "run-receipt.json").is_file()


def test_the_cli_imports_a_docker_archive(tmp_path: Path, image: AgentImage) -> None:
    """A ``docker save`` archive is converted to OCI on import (a manifest of its own, no
    index): the bundle pins that manifest's digest."""
    from agent_interface.evaluator.images.oci_import import import_docker_archive
    from agent_interface.evaluator.images.oci_store import OciImageStore

    archive = tmp_path / "docker.tar"
    subprocess.run(["skopeo", "--insecure-policy", "copy", "--quiet", f"oci:{image.layout}:agent",
                    f"docker-archive:{archive}:{IMAGE_NAME}:agent"], check=True, capture_output=True)
    converted = import_docker_archive(OciImageStore(tmp_path / "probe-store"), archive, name=IMAGE_NAME).digest
    (tmp_path / "bundle.json").write_bytes(bundle("stdin", environment=pinned(converted)))
    (tmp_path / "task.json").write_text(json.dumps(task().to_wire()))
    from agent_interface.cli.main import main

    code = main(["candidate", "run", str(tmp_path / "bundle.json"), "--task", str(tmp_path / "task.json"),
                 "--out", str(tmp_path / "run"), "--artifacts", str(ARTIFACTS), "--json",
                 "--images", str(tmp_path / "store"), "--image-archive", str(archive),
                 "--image-archive-format", "docker"])
    assert code == 0
    receipt = json.loads((tmp_path / "run" / "materialization-receipt.json").read_text())
    assert receipt["container"]["indexDigest"] == receipt["container"]["manifestDigest"] == converted


def test_the_cli_refuses_a_container_bundle_without_a_store(
        tmp_path: Path, image: AgentImage, capsys: pytest.CaptureFixture[str]) -> None:
    assert _cli(tmp_path, image) == 1
    printed = json.loads(capsys.readouterr().out)
    assert printed["verdict"] == "refused" and printed["issues"][0]["code"] == "container_unavailable"
    assert not (tmp_path / "run").exists()
    (tmp_path / "store").mkdir()
    assert _cli(tmp_path, image, "--images", str(tmp_path / "store"), "--executor", "host") == 1
    assert json.loads(capsys.readouterr().out)["issues"][0]["code"] == "container_unavailable"
    assert _cli(tmp_path, image, "--images", str(tmp_path / "absent")) == 2  # not made by a run
    assert not (tmp_path / "absent").exists()


def test_two_container_runs_at_once_do_not_meet(tmp_path: Path, image: AgentImage) -> None:
    import asyncio

    from agent_interface.evaluator.run.candidate_run import run_candidate_async

    async def both() -> list[Any]:
        return list(await asyncio.gather(*(
            run_candidate_async(bundle(mode, delivery=delivery, environment=pinned(image.index_digest)),
                                repository=None, task=task(), out=tmp_path / mode, artifacts=ARTIFACTS,
                                images=image.store)
            for mode, delivery in (("stdin", "stdin-utf8"), ("file", "utf8-file")))))

    before = _containers()
    results = asyncio.run(both())
    assert _containers() == before
    assert all(r.run_receipt is not None and r.run_receipt.benchmark_result.material.passed for r in results)
    ids = {executor_capture(tmp_path, r.run_receipt, out=name)["containerId"]
           for r, name in zip(results, ("stdin", "file"), strict=True)}
    assert len(ids) == 2


def test_a_host_without_the_runtime_refuses_and_says_why(tmp_path: Path, image: AgentImage) -> None:
    """Where the probe finds no runtime, the provider declares no ``exactProcess`` and the run
    is refused with the reason, before anything runs."""
    import asyncio

    from agent_interface.candidate.bundle import AgentCandidateBundle
    from agent_interface.evaluator.run.container_run import ContainerRun

    parsed = AgentCandidateBundle.parse_wire(bundle("stdin", environment=pinned(image.index_digest)))
    before = _containers()
    with pytest.raises(ContractError) as refused:
        asyncio.run(ContainerRun.open(parsed, task(), images=image.store, runc=str(tmp_path / "no-runc")))
    assert refused.value.issues[0].code == "container_unavailable"
    assert "runc is not installed" in refused.value.issues[0].message
    assert _containers() == before


def test_no_other_host_user_can_read_the_task_file(tmp_path: Path, image: AgentImage) -> None:
    """While the program runs (during its model call), ``nobody`` on the host cannot read its
    task file (for host root and the containers' group only)."""
    import asyncio
    import glob

    from agent_interface.evaluator.gateway import ScriptedUpstream

    tried: dict[str, str] = {}
    probe = ("import sys\n"
             "try:\n"
             "    open(sys.argv[1]).read(); print('read')\n"
             "except OSError as e: print(e.errno)\n")

    class Watching(ScriptedUpstream):
        async def send(self, call: Any) -> Any:
            [task_path] = glob.glob(f"{tempfile.gettempdir()}/agent-interface-container-*/input/task.txt")
            assert Path(task_path).read_text() == task().instruction
            done = await asyncio.to_thread(subprocess.run, ["/usr/bin/python3", "-c", probe, task_path],
                                           user=65534, group=65534, capture_output=True, check=True)
            tried["task"] = done.stdout.decode().strip()
            return await super().send(call)

    result = run(tmp_path, image, "file", delivery="utf8-file", upstream=Watching([{"echo": True}]))
    assert result.run_receipt is not None and result.run_receipt.benchmark_result.material.passed
    assert tried == {"task": "13"}  # EACCES
