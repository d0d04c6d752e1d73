"""``examples/experiment/compare_harness_profiles.py`` without its minutes-long image build:
the experiment it writes (a repository task graded by its own tests in the ``python/codex``
image, two Codex bundles that differ only in their ``AGENTS.md`` instruction) is valid and
sealed, and its scripted model parses. With runc, root and the real image in the store named
by ``AGENT_INTERFACE_HARNESS_IMAGES`` (default ``/var/tmp/ai-images/store``), that experiment
also runs in containers and reports."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from agent_interface.candidate.experiment import AgentCandidateExperiment
from agent_interface.cli.main import main
from agent_interface.evaluator.experiment.report import arm_rows
from agent_interface.evaluator.gateway import ScriptedUpstream
from agent_interface.evaluator.images.oci_store import OciImageStore
from tests.evaluator.oci_fixtures import build_image

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "examples" / "experiment" / "compare_harness_profiles.py"
STORE = Path(os.environ.get("AGENT_INTERFACE_HARNESS_IMAGES", "/var/tmp/ai-images/store"))


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("compare_harness_profiles", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_experiment_compares_two_codex_profiles_on_a_task_in_the_image(tmp_path: Path) -> None:
    script = _script()
    image = build_image(tmp_path / "layout", {"bin/hello": b"hello\n"})
    stored = OciImageStore(tmp_path / "images").import_layout(image.layout, name=script.IMAGE_NAME)
    paths = script.write_experiment(tmp_path / "experiment", f"{script.IMAGE_NAME}@{stored.digest}",
                                    tmp_path / "images", 2)
    assert main(["validate", "--schema", "AgentCandidateExperiment", str(paths["experiment"])]) == 0
    experiment = AgentCandidateExperiment.parse_wire(json.loads(paths["experiment"].read_bytes()))
    task = experiment.benchmark.tasks[0].to_wire()
    assert task["evaluatorTaskContainer"]["image"] == "python/codex"
    assert task["outcome"]["kind"] == "workspace" and experiment.benchmark.suite.reps == 2
    differ = [row for row in arm_rows(experiment) if row[1] != row[2]]
    assert differ == [("/profile/prompt/instructions/0", "absent", json.dumps(script.PROFILES["candidate"][0]))]
    assert ("/execution/harness", '"codex"', '"codex"') in arm_rows(experiment)
    assert "ScriptedUpstream(replies=3" in repr(ScriptedUpstream.from_file(str(paths["script"])))
    assert sys.modules.get("make_experiment") is not None


def _real_image() -> str | None:
    if shutil.which("runc") is None or os.geteuid() != 0 or not (STORE / "index.json").is_file():
        return None
    found = [image.digest for image in OciImageStore(STORE).images() if image.name == "python/codex"]
    return f"python/codex@{found[-1]}" if found else None


REAL = _real_image()


@pytest.mark.skipif(REAL is None, reason=f"needs runc, root and the python/codex image in {STORE}")
def test_the_experiment_runs_in_containers_and_reports(tmp_path: Path) -> None:
    assert REAL is not None
    script = _script()
    paths = script.write_experiment(tmp_path / "experiment", REAL, STORE, 1)
    os.chmod(tmp_path, 0o711)
    run = subprocess.run([*script.cli(), "experiment", "run", str(paths["experiment"]), "--out", str(tmp_path / "run"),
                          "--artifacts", str(paths["artifacts"]), "--images", str(STORE), "--executor", "container",
                          "--model-upstream", f"scripted:{paths['script']}", "--json"],
                         capture_output=True, text=True, check=False, timeout=600)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert json.loads(run.stdout)["cells"]["done"] == 2
    for arm in ("baseline", "candidate"):
        receipt = json.loads((tmp_path / "run" / "cells" / f"{arm}-t0000-r0000.json").read_bytes())["receipt"]
        assert receipt["benchmarkResult"]["material"]["passed"] is True
        assert receipt["modelSettlement"]["material"]["usage"]["modelCalls"] == len(script.SCRIPT)
    assert main(["experiment", "report", str(tmp_path / "run")]) == 0  # published: inconclusive, one repetition
    page = (tmp_path / "run" / "report.html").read_text()
    assert '<section id="arms">' in page and "Run the tests" in page
