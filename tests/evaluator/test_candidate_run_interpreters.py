"""Git-patch candidates launched through an interpreter of their image, in OCI containers.

The launch matrix: ``python3`` and ``node`` (bare names, found along the launch's ``PATH``
inside the image), an executable entrypoint without an interpreter (its shebang names
``/usr/bin/python3``), each on an image that has what it needs and on one that does not;
through ``run_candidate``, ``agent-interface candidate run`` and ``experiment run``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_interface.candidate.tasks import AgentCandidateBenchmarkTask
from agent_interface.core.canonical import canonical_digest
from agent_interface.core.errors import ContractError
from agent_interface.evaluator.experiment.engine import ExperimentRunOptions, run_experiment
from agent_interface.evaluator.run.candidate_run import run_candidate
from tests.evaluator.interpreter_images import (
    NODE,
    PYTHON,
    InterpreterImage,
    candidate_repository,
    git_patch_bundle,
    greeting_task,
    interpreter_image,
    node_files,
    python_files,
)
from tests.evaluator.oci_runtime_fixtures import requires_runc

pytestmark = [
    requires_runc,
    pytest.mark.skipif(not (os.path.isfile(PYTHON) and os.path.isfile(NODE) and shutil.which("ldd")),
                       reason="needs the host's /usr/bin/python3.11, /usr/bin/node and ldd to build the images"),
]


@pytest.fixture(scope="module")
def world() -> Iterator[tuple[Path, InterpreterImage, InterpreterImage, Path]]:
    directory = Path(tempfile.mkdtemp(prefix="interpreters-", dir="/var/tmp"))
    try:
        python = interpreter_image(directory / "python", "test/python", python_files())
        node = interpreter_image(directory / "node", "test/node", node_files())
        yield directory, python, node, candidate_repository(directory / "repository")
    finally:
        subprocess.run(["rm", "-rf", str(directory)], check=False)


def _run(tmp_path: Path, repository: Path, image: InterpreterImage, entrypoint: str, interpreter: str | None,
         expected: str) -> tuple[object, str]:
    bundle = git_patch_bundle(repository, image, entrypoint, interpreter)
    task = greeting_task(tmp_path / "artifacts", expected)
    result = run_candidate(json.dumps(bundle.to_wire()).encode(), repository=repository, task=task,
                           out=tmp_path / "out", artifacts=tmp_path / "artifacts", images=image.store)
    receipt = result.run_receipt
    assert receipt is not None, result.invalid_capture
    return receipt.termination.to_wire(), json.dumps(receipt.benchmark_result.material.to_wire())


@pytest.mark.parametrize(("which", "entrypoint", "interpreter", "expected"), [
    ("python", "agent.py", "python3", "greeting from python 3 hello there"),
    ("node", "agent.js", "node", "greeting from node hello there"),
    ("python", "run.py", None, "greeting from a shebang hello there"),
])
def test_a_git_patch_candidate_runs_through_its_images_interpreter(
        tmp_path: Path, world: tuple[Path, InterpreterImage, InterpreterImage, Path],
        which: str, entrypoint: str, interpreter: str | None, expected: str) -> None:
    _, python, node, repository = world
    termination, result = _run(tmp_path, repository, python if which == "python" else node, entrypoint,
                               interpreter, expected)
    assert termination == {"kind": "exit", "exitCode": 0}
    assert '"passed":true' in result.replace(" ", ""), result


@pytest.mark.parametrize(("which", "entrypoint", "interpreter", "pointer", "code"), [
    ("python", "agent.js", "node", "/execution/launch/interpreter", "interpreter_unavailable"),
    ("node", "agent.py", "python3", "/execution/launch/interpreter", "interpreter_unavailable"),
    ("python", "agent.py", None, "/execution/launch/entrypoint", "entrypoint_not_executable"),
])
def test_a_launch_the_image_cannot_start_is_refused_before_anything_runs(
        tmp_path: Path, world: tuple[Path, InterpreterImage, InterpreterImage, Path],
        which: str, entrypoint: str, interpreter: str | None, pointer: str, code: str) -> None:
    _, python, node, repository = world
    image = python if which == "python" else node
    with pytest.raises(ContractError) as refused:
        _run(tmp_path, repository, image, entrypoint, interpreter, "x")
    issue = refused.value.issues[0]
    assert (issue.path, issue.code) == (pointer, code)
    if code == "interpreter_unavailable":
        assert f"{image.name}@{image.manifest_digest}" in issue.message
        assert "PATH /usr/local/bin:/usr/bin:/bin" in issue.message
    assert not (tmp_path / "out").exists()


def test_the_cli_runs_a_python_candidate_in_its_container(
        tmp_path: Path, world: tuple[Path, InterpreterImage, InterpreterImage, Path]) -> None:
    from agent_interface.cli.main import main

    _, python, _, repository = world
    bundle = git_patch_bundle(repository, python, "agent.py", "python3")
    task = greeting_task(tmp_path / "artifacts", "greeting from python 3 hello there")
    (tmp_path / "bundle.json").write_text(json.dumps(bundle.to_wire()))
    (tmp_path / "task.json").write_text(json.dumps(task.to_wire()))
    code = main(["candidate", "run", str(tmp_path / "bundle.json"), "--task", str(tmp_path / "task.json"),
                 "--repository", str(repository), "--out", str(tmp_path / "run"),
                 "--artifacts", str(tmp_path / "artifacts"), "--images", str(python.store.root), "--json"])
    assert code == 0
    receipt = json.loads((tmp_path / "run" / "run-receipt.json").read_text())
    assert receipt["termination"] == {"kind": "exit", "exitCode": 0}
    assert receipt["benchmarkResult"]["material"]["passed"] is True


def _experiment(baseline: dict[str, object], candidate: dict[str, object],
                task: AgentCandidateBenchmarkTask) -> bytes:
    def sealed(material: dict[str, object]) -> dict[str, object]:
        return {**material, "digest": canonical_digest(material)}

    suite = sealed({"kind": "agent-candidate-benchmark-suite", "digestAlgorithm": "rfc8785-sha256",
                    "taskDigests": [task.digest], "reps": 1, "seeds": [7]})
    return json.dumps(sealed({
        "kind": "agent-candidate-experiment", "digestAlgorithm": "rfc8785-sha256",
        "baseline": baseline, "candidate": candidate,
        "candidateLineage": {"source": "optimizer", "parentDigests": [baseline["digest"]], "runIds": ["dev-1"],
                             "developmentSplitDigest": canonical_digest({"split": "interpreters"})},
        "benchmark": {"suite": suite, "tasks": [task.to_wire()]},
        "policy": {"confidenceLevel": 0.95, "resamples": 200, "bootstrapSeed": 1, "deltaThreshold": 0,
                   "minProductiveRuns": 3, "budgetUsd": 1, "criticalDimensions": [],
                   "regressionTolerance": 0.05},
    })).encode()


def test_experiment_run_runs_a_python_baseline_and_a_node_candidate_in_containers(
        tmp_path: Path, world: tuple[Path, InterpreterImage, InterpreterImage, Path]) -> None:
    from agent_interface.evaluator.images.oci_store import OciImageStore

    directory, python, node, repository = world
    store = OciImageStore(tmp_path / "store")  # one store holding both images
    for image in (python, node):
        store.import_layout(directory / image.name.removeprefix("test/") / "layout", name=image.name, tag="t")
    task = greeting_task(tmp_path / "artifacts", "greeting from")
    data = _experiment(git_patch_bundle(repository, python, "agent.py", "python3").to_wire(),
                       git_patch_bundle(repository, node, "agent.js", "node").to_wire(), task)
    summary = run_experiment(data, ExperimentRunOptions(out=tmp_path / "run", repository=repository,
                                                        artifacts=tmp_path / "artifacts", images=store.root))
    assert summary.counts["done"] == 2, summary
    for arm in ("baseline", "candidate"):
        evidence = json.loads((tmp_path / "run" / "cells" / f"{arm}-t0000-r0000.json").read_bytes())
        assert evidence["receipt"]["termination"] == {"kind": "exit", "exitCode": 0}
        assert evidence["receipt"]["benchmarkResult"]["material"]["passed"] is True


def test_experiment_run_refuses_an_interpreter_the_image_lacks_before_any_cell(
        tmp_path: Path, world: tuple[Path, InterpreterImage, InterpreterImage, Path]) -> None:
    _, python, _, repository = world
    task = greeting_task(tmp_path / "artifacts", "greeting from")
    data = _experiment(git_patch_bundle(repository, python, "agent.py", "python3").to_wire(),
                       git_patch_bundle(repository, python, "agent.js", "node").to_wire(), task)
    with pytest.raises(ContractError) as refused:
        run_experiment(data, ExperimentRunOptions(out=tmp_path / "run", repository=repository,
                                                  artifacts=tmp_path / "artifacts", images=python.store.root))
    issue = refused.value.issues[0]
    assert (issue.path, issue.code) == ("/candidate/execution/launch/interpreter", "interpreter_unavailable")
    assert not (tmp_path / "run").exists()
