"""``examples/experiment/run_in_containers.py`` without its minutes-long image build: the
experiment it writes selects the built image (name, digests, platform from the store) and is
a valid, sealed experiment whose task names that container and grades in it."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

from agent_interface.cli.main import main
from agent_interface.evaluator.images.oci_documents import host_platform
from agent_interface.evaluator.images.oci_store import OciImageStore
from tests.evaluator.oci_fixtures import build_image

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "examples" / "experiment" / "run_in_containers.py"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("run_in_containers", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_experiment_selects_the_image_built_into_the_store(tmp_path: Path) -> None:
    script = _script()
    image = build_image(tmp_path / "layout", {"bin/hello": b"hello\n"})
    stored = OciImageStore(tmp_path / "images").import_layout(image.layout, name=script.IMAGE_NAME)
    container = script.task_container(tmp_path / "images", {"manifestDigest": stored.digest})
    host = host_platform()
    assert container == {"source": "evaluator-task-container", "image": "task/python", "indexDigest": stored.digest,
                         "manifestDigest": image.manifest_digest,
                         "platform": {"os": host.os, "architecture": host.architecture}}
    paths = script.make(tmp_path / "experiment", 2, task_container=container,
                        grader={"commands": [{"name": "tests", "executable": "/usr/bin/python3",
                                              "args": ["-m", "pytest", "-q"], "timeoutMs": 60_000}]})
    assert main(["validate", "--schema", "AgentCandidateExperiment", str(paths["experiment"])]) == 0
    task = json.loads(paths["experiment"].read_text())["benchmark"]["tasks"][0]
    assert task["evaluatorTaskContainer"] == container
    assert script.CONTAINERFILE.is_file() and sys.modules.get("make_experiment") is not None
