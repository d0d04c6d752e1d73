"""Experiment cells in OCI containers, through real ``runc``: a baseline and a candidate that
pin a busybox image with a static C agent run end to end, every cell's receipts name the
image and the container, a missing task image is refused before any cell runs, and a
resumed run after completion runs nothing; a workspace task that selects its container is
captured in it and graded by its own commands in it (an image that also holds Debian's
``python3.11``, the capture program's interpreter)."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_interface.candidate.tasks import AgentCandidateBenchmarkTask
from agent_interface.cli.main import main
from agent_interface.core.canonical import canonical_digest
from agent_interface.core.errors import ContractError
from agent_interface.evaluator.experiment.engine import ExperimentRunOptions, run_experiment
from agent_interface.evaluator.images.oci_documents import host_platform
from agent_interface.evaluator.images.oci_store import OciImageStore
from tests.evaluator.container_run_fixtures import (
    ARTIFACTS,
    IMAGE_NAME,
    AgentImage,
    agent_image,
    bundle,
    compile_agent,
    pinned,
    task,
    task_container,
)
from tests.evaluator.experiment.helpers import make
from tests.evaluator.oci_fixtures import (
    Entry,
    busybox_files,
    files_entries,
    tar_layer,
    write_index_image,
)
from tests.evaluator.oci_runtime_fixtures import requires_runc

pytestmark = requires_runc


@pytest.fixture(scope="module")
def image() -> Iterator[AgentImage]:
    directory = Path(tempfile.mkdtemp(prefix="expcontainer-image-", dir="/var/tmp"))
    try:
        yield agent_image(directory)
    finally:
        subprocess.run(["rm", "-rf", str(directory)], check=False)


def _sealed(material: dict[str, Any]) -> dict[str, Any]:
    return {**material, "digest": canonical_digest(material)}


def experiment(baseline: bytes, candidate: bytes, the_task: Any) -> bytes:
    """A one-task, one-repetition experiment of ``baseline`` against ``candidate``."""
    base = json.loads(baseline)
    suite = _sealed({"kind": "agent-candidate-benchmark-suite", "digestAlgorithm": "rfc8785-sha256",
                     "taskDigests": [the_task.digest], "reps": 1, "seeds": [7]})
    document = _sealed({
        "kind": "agent-candidate-experiment", "digestAlgorithm": "rfc8785-sha256",
        "baseline": base, "candidate": json.loads(candidate),
        "candidateLineage": {"source": "optimizer", "parentDigests": [base["digest"]], "runIds": ["dev-1"],
                             "developmentSplitDigest": canonical_digest({"split": "containers"})},
        "benchmark": {"suite": suite, "tasks": [the_task.to_wire()]},
        "policy": {"confidenceLevel": 0.95, "resamples": 200, "bootstrapSeed": 1, "deltaThreshold": 0,
                   "minProductiveRuns": 3, "budgetUsd": 1, "criticalDimensions": [],
                   "regressionTolerance": 0.05},
    })
    return json.dumps(document).encode()


def _containers() -> set[str]:
    directories = {str(path) for path in Path(tempfile.gettempdir()).glob("agent-interface-container-*")}
    mounts = {line.split()[1] for line in Path("/proc/mounts").read_text().splitlines()
              if "agent-interface-container-" in line}
    return directories | mounts


def test_pinned_container_cells_run_end_to_end_and_resume_runs_nothing(tmp_path: Path, image: AgentImage) -> None:
    """The candidate reads its instruction from the bound task file, which it must not be
    able to write, chmod or remove (the agent checks, and fails the cell otherwise)."""
    environment = pinned(image.index_digest)
    data = experiment(bundle("stdin", environment=environment),
                      bundle("file", delivery="utf8-file", environment=environment), task())
    before = _containers()
    options = ExperimentRunOptions(out=tmp_path / "run", artifacts=ARTIFACTS, images=image.store.root)
    summary = run_experiment(data, options)
    assert _containers() == before
    assert summary.counts == {"pending": 0, "running": 0, "done": 2, "invalid": 0, "failed": 0}, summary
    assert summary.ran == 2
    container = {"source": "pinned-container", "image": IMAGE_NAME, "indexDigest": image.index_digest,
                 "manifestDigest": image.manifest_digest}
    for arm in ("baseline", "candidate"):
        evidence = json.loads((tmp_path / "run" / "cells" / f"{arm}-t0000-r0000.json").read_bytes())
        materialization = evidence["materializationReceipt"]
        assert {key: materialization["container"][key] for key in container} == container
        receipt = evidence["receipt"]
        assert receipt["termination"] == {"kind": "exit", "exitCode": 0}
        assert receipt["benchmarkResult"]["material"]["passed"] is True
        cid = receipt["executorCapture"]["locator"]["cid"]
        capture = json.loads((tmp_path / "run" / "artifacts" / cid).read_bytes())
        assert capture["provider"] == "oci-exact-process"
        assert capture["containerId"].startswith(capture["environmentId"] + "-")
        assert capture["image"]["manifestDigest"] == image.manifest_digest
        assert capture["image"]["indexDigest"] == image.index_digest
    again = run_experiment(data, options)
    assert again.ran == 0 and again.recovered == 0 and again.counts["done"] == 2


def test_a_task_image_missing_from_the_store_is_refused_before_any_cell(tmp_path: Path, image: AgentImage) -> None:
    missing = "sha256:" + "0" * 64
    delegating = {"kind": "evaluator-task-container"}
    data = experiment(bundle("stdin", environment=delegating), bundle("argv", delivery="argv-append",
                      environment=delegating), task(task_container(image, indexDigest=missing)))
    with pytest.raises(ContractError) as refused:
        run_experiment(data, ExperimentRunOptions(out=tmp_path / "run", artifacts=ARTIFACTS,
                                                  images=image.store.root))
    issue = refused.value.issues[0]
    assert (issue.code, issue.path) == ("container_image_unavailable", "/benchmark/tasks/0/evaluatorTaskContainer")
    assert not (tmp_path / "run").exists()


def test_a_container_cell_without_an_image_store_or_on_the_host_executor_is_refused(
        tmp_path: Path, image: AgentImage) -> None:
    environment = pinned(image.index_digest)
    data = experiment(bundle("stdin", environment=environment), bundle("argv", delivery="argv-append",
                      environment=environment), task())
    for executor in ("auto", "host"):
        with pytest.raises(ContractError) as refused:
            run_experiment(data, ExperimentRunOptions(out=tmp_path / "run", artifacts=ARTIFACTS,
                                                      executor=executor))  # type: ignore[arg-type]
        assert refused.value.issues[0].code == "container_unavailable"
    assert not (tmp_path / "run").exists()


def test_forced_container_cells_run_in_the_evaluator_image(tmp_path: Path, image: AgentImage) -> None:
    """Bundles that delegate, a task that selects none: ``executor="container"`` with the
    evaluator's ``image``; the plan binds that image as the evaluator's choice."""
    delegating = {"kind": "evaluator-task-container"}
    data = experiment(bundle("stdin", environment=delegating), bundle("argv", delivery="argv-append",
                      environment=delegating), task())
    summary = run_experiment(data, ExperimentRunOptions(
        out=tmp_path / "run", artifacts=ARTIFACTS, images=image.store.root, executor="container",
        image=f"{IMAGE_NAME}@{image.index_digest}"))
    assert summary.counts["done"] == 2, summary
    evidence = json.loads((tmp_path / "run" / "cells" / "candidate-t0000-r0000.json").read_bytes())
    container = evidence["materializationReceipt"]["container"]
    assert (container["source"], container["manifestDigest"]) == ("evaluator-task-container", image.manifest_digest)


def test_experiment_run_cli_takes_the_image_store(tmp_path: Path, image: AgentImage,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """``--images`` and ``--image-layout`` (imported under the name the bundles pin)."""
    environment = pinned(image.index_digest)
    path = tmp_path / "experiment.json"
    path.write_bytes(experiment(bundle("stdin", environment=environment),
                                bundle("argv", delivery="argv-append", environment=environment), task()))
    store = tmp_path / "store"
    code = main(["experiment", "run", str(path), "--out", str(tmp_path / "run"), "--artifacts", str(ARTIFACTS),
                 "--images", str(store), "--image-layout", str(image.layout), "--json"])
    payload = json.loads(capsys.readouterr().out)
    assert code == 0, payload
    assert payload["cells"]["done"] == 2


PYTHON = Path("/usr/bin/python3.11")
_EXECUTABLES = ("usr/bin/python3.11", "lib64/ld-linux-x86-64.so.2")  # the kernel execs the ELF interpreter too
_IMPORTED = ("import os, stat, sys, tarfile; print('\\n'.join(sorted({m.__file__ for m in list(sys.modules.values())"
             " if getattr(m, '__file__', None)})))")


def _python_files() -> dict[str, bytes | str]:
    """Debian's ``python3.11``, the shared libraries it and its loaded extensions need, and the
    standard library modules the capture program imports (``-I -S``): nothing else."""
    modules = subprocess.run([str(PYTHON), "-I", "-S", "-c", _IMPORTED], capture_output=True, text=True,
                             check=True).stdout.split()
    libraries: set[str] = set()
    for binary in [str(PYTHON), *(module for module in modules if module.endswith(".so"))]:
        for line in subprocess.run(["ldd", binary], capture_output=True, text=True, check=True).stdout.splitlines():
            words = line.split()
            path = words[2] if "=>" in words and len(words) > 2 else words[0]
            if path.startswith("/"):
                libraries.add(path)
    files: dict[str, bytes | str] = {path.lstrip("/"): Path(path).read_bytes()
                                     for path in {str(PYTHON), *modules, *libraries}}
    files["usr/bin/python3"] = "->python3.11"
    return files


@pytest.fixture(scope="module")
def python_image() -> Iterator[tuple[OciImageStore, str, str]]:
    """``(store, index digest, manifest digest)`` of busybox, the agent and ``python3.11``."""
    if not PYTHON.is_file():
        pytest.skip("needs Debian's /usr/bin/python3.11 (the capture program's interpreter in the image)")
    directory = Path(tempfile.mkdtemp(prefix="expcontainer-python-", dir="/var/tmp"))
    try:
        files = {**busybox_files(), "bin/agent": compile_agent(directory), **_python_files(),
                 "opt/grade/grep": "->/bin/busybox"}  # busybox runs the applet named by argv[0]
        entries = [dataclasses.replace(entry, mode=0o755) if entry.name in _EXECUTABLES else entry
                   for entry in files_entries(files)]
        layer = tar_layer([*entries, Entry("tmp/", kind="dir", mode=0o1777)])
        host = host_platform()
        built = write_index_image(directory / "layout", {(host.os, host.architecture): [layer]}, tag="python")
        store = OciImageStore(directory / "store")
        store.import_layout(directory / "layout", name=IMAGE_NAME, tag="python")
        mine = built[(host.os, host.architecture)]
        assert mine.index_digest is not None
        yield store, mine.index_digest, mine.manifest_digest
    finally:
        subprocess.run(["rm", "-rf", str(directory)], check=False)


def test_a_workspace_task_in_its_container_is_captured_and_graded_there(
        tmp_path: Path, python_image: tuple[OciImageStore, str, str]) -> None:
    """The baseline leaves the bug, the candidate's ``fix`` rewrites ``calc.py``; the grader's
    command is ``/opt/grade/grep`` (busybox), an executable of the task's image only: on the
    host it would not start and the cells would be invalid (``grader_failed``)."""
    assert not Path("/opt/grade/grep").exists()
    store, index_digest, manifest_digest = python_image
    grep = {"name": "tests", "executable": "/opt/grade/grep", "args": ["-q", "a + b", "calc.py"], "timeoutMs": 30_000}
    # grep names calc.py, the solution: a solutionPaths entry naming it releases it (else a
    # file a command names is the grader's own, restored before the checks).
    paths = make(tmp_path / "example", grader={"commands": [grep], "restore": [], "solutionPaths": ["calc.py"]})
    wire = json.loads(paths["experiment"].read_bytes())["benchmark"]["tasks"][0]
    wire.pop("digest")
    host = host_platform()
    wire["evaluatorTaskContainer"] = {
        "source": "evaluator-task-container", "image": IMAGE_NAME, "indexDigest": index_digest,
        "manifestDigest": manifest_digest, "platform": {"os": host.os, "architecture": host.architecture}}
    delegating = {"kind": "evaluator-task-container"}
    data = experiment(bundle("stdin", environment=delegating), bundle("fix", environment=delegating),
                      AgentCandidateBenchmarkTask.seal(wire))
    summary = run_experiment(data, ExperimentRunOptions(out=tmp_path / "run", artifacts=paths["artifacts"],
                                                        images=store.root))
    assert summary.counts["done"] == 2, summary
    passed = {}
    for arm in ("baseline", "candidate"):
        evidence = json.loads((tmp_path / "run" / "cells" / f"{arm}-t0000-r0000.json").read_bytes())
        assert evidence["materializationReceipt"]["container"]["source"] == "evaluator-task-container"
        passed[arm] = evidence["receipt"]["benchmarkResult"]["material"]["passed"]
    assert passed == {"baseline": False, "candidate": True}
