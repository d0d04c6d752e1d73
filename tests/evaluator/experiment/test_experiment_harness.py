"""``experiment run`` of two harness bundles (``candidate new --no-code --harness codex``, two
profiles that differ in their instructions) on the example workspace task (fix ``add`` in
``calc.py``), in OCI containers on ``runc`` from an image that holds Codex and Python: the
real CLI edits ``calc.py`` through its own shell tool on the scripted upstream's reply, the
cell is captured and graded by the task's own tests in the container, and each cell's
executor capture names the harness, the observed version, and the gateway's count of calls
and tokens beside the harness's own (which agree).

The image is the ``images`` helper's ``python/codex`` from the store named by
``AGENT_INTERFACE_HARNESS_IMAGES`` (default ``/var/tmp/ai-images/store``); the test skips
when it is not built there, or without runc and root.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from agent_interface.cli.main import main
from agent_interface.core.canonical import canonical_digest
from agent_interface.evaluator.experiment.engine import ExperimentRunOptions, run_experiment
from agent_interface.evaluator.images.oci_documents import host_platform
from agent_interface.evaluator.images.oci_store import OciImageStore
from tests.evaluator.experiment.helpers import make

STORE = Path(os.environ.get("AGENT_INTERFACE_HARNESS_IMAGES", "/var/tmp/ai-images/store"))
IMAGE = "python/codex"


def _image() -> str | None:
    if shutil.which("runc") is None or os.geteuid() != 0 or not (STORE / "index.json").is_file():
        return None
    found = [image.digest for image in OciImageStore(STORE).images() if image.name == IMAGE]
    return found[-1] if found else None


DIGEST = _image()
pytestmark = pytest.mark.skipif(
    DIGEST is None,
    reason=f"needs runc, root and the {IMAGE} image in {STORE} (agent-interface image build "
           "examples/images/codex/Containerfile --on examples/images/python/Containerfile --name python/codex)")


def _sealed(material: dict[str, Any]) -> dict[str, Any]:
    return {**material, "digest": canonical_digest(material)}


def _bundle(tmp_path: Path, name: str, instructions: str) -> dict[str, Any]:
    out = tmp_path / f"{name}.json"
    assert main(["candidate", "new", "--no-code", "--harness", "codex", "--name", name,
                 "--instructions", instructions, "--out", str(out)]) == 0
    value: dict[str, Any] = json.loads(out.read_bytes())
    return value


def _experiment(tmp_path: Path) -> tuple[Path, Path]:
    """The example experiment with its task in the image and both arms Codex bundles."""
    assert DIGEST is not None
    host = host_platform()
    container = {"source": "evaluator-task-container", "image": IMAGE, "indexDigest": DIGEST,
                 "manifestDigest": DIGEST, "platform": {"os": host.os, "architecture": host.architecture}}
    tests = {"name": "tests", "executable": "/usr/bin/python3", "timeoutMs": 60_000,
             "args": ["-I", "-B", "-m", "unittest", "discover", "-s", ".", "-p", "test_calc.py"]}
    paths = make(tmp_path / "example", grader={"commands": [tests]}, task_container=container)
    document = json.loads(paths["experiment"].read_bytes())
    task = {key: value for key, value in document["benchmark"]["tasks"][0].items() if key != "digest"}
    task["limits"].update({"maxInputTokens": 10_000_000, "maxOutputTokens": 1_000_000, "maxTotalTokens": 11_000_000})
    task = _sealed(task)
    suite = _sealed({**{k: v for k, v in document["benchmark"]["suite"].items() if k != "digest"},
                     "taskDigests": [task["digest"]]})
    baseline = _bundle(tmp_path, "baseline", "Keep changes small.")
    candidate = _bundle(tmp_path, "candidate", "Run the tests before you answer.")
    material = {key: value for key, value in document.items() if key != "digest"}
    material.update({"baseline": baseline, "candidate": candidate, "benchmark": {"suite": suite, "tasks": [task]}})
    material["candidateLineage"]["parentDigests"] = [baseline["digest"]]
    experiment = tmp_path / "experiment.json"
    experiment.write_text(json.dumps(_sealed(material)))
    return experiment, paths["artifacts"]


def test_two_codex_profiles_run_as_an_experiment_graded_by_the_task_tests(tmp_path: Path) -> None:
    experiment, artifacts = _experiment(tmp_path)
    edit = {"name": "exec_command", "arguments": {"cmd": "sed -i 's/a - b/a + b/' calc.py"}}
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"toolCalls": [edit]}, {"text": "add() is fixed"}]))
    summary = run_experiment(experiment.read_bytes(), ExperimentRunOptions(
        out=tmp_path / "run", artifacts=artifacts, images=STORE, model_upstream=f"scripted:{script}"))
    assert summary.counts["done"] == 2, summary
    for arm in ("baseline", "candidate"):
        evidence = json.loads((tmp_path / "run" / "cells" / f"{arm}-t0000-r0000.json").read_bytes())
        receipt = evidence["receipt"]
        assert receipt["termination"] == {"kind": "exit", "exitCode": 0}
        assert receipt["benchmarkResult"]["material"]["passed"] is True
        usage = receipt["modelSettlement"]["material"]["usage"]
        cid = receipt["executorCapture"]["locator"]["cid"]
        harness = json.loads((tmp_path / "run" / "artifacts" / cid).read_bytes())["harness"]
        assert harness["harness"] == "codex" and harness["status"] == "completed"
        assert harness["observedVersion"] == "0.171.0"
        gateway = harness["gateway"]
        assert gateway["modelCalls"] == usage["modelCalls"] == 2 and harness["usageAgrees"] is True
        assert (gateway["inputTokens"], gateway["outputTokens"]) == (usage["inputTokens"], usage["outputTokens"])
        plan = evidence["materializationReceipt"]["profileActivation"]["profilePlan"]["material"]
        assert plan["flags"][:2] == [{"kind": "public", "value": "exec"}, {"kind": "public", "value": "--json"}]
