"""The grader attacks in an OCI container through real ``runc``: a workspace task that selects
its container is captured and graded there (the image holds Debian's ``python3.11`` and the
standard library modules ``unittest`` needs); the baseline's agent (``python3.11 -I -c``)
attacks, the candidate's static agent fixes ``calc.py``. Each attack is graded as a failure
with its changes named in the grader's evidence, the fix passes."""

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
from agent_interface.core.canonical import canonical_digest
from agent_interface.evaluator.experiment.engine import ExperimentRunOptions, run_experiment
from agent_interface.evaluator.images.oci_documents import host_platform
from agent_interface.evaluator.images.oci_store import OciImageStore
from tests.evaluator.container_run_fixtures import IMAGE_NAME, bundle, compile_agent
from tests.evaluator.experiment.helpers import make, make_experiment
from tests.evaluator.experiment.test_experiment_containers import experiment
from tests.evaluator.experiment.test_task_grader_attacks import ATTACKS, PROJECT_FIRST, _cell
from tests.evaluator.oci_fixtures import (
    Entry,
    busybox_files,
    files_entries,
    tar_layer,
    write_index_image,
)
from tests.evaluator.oci_runtime_fixtures import requires_runc

pytestmark = requires_runc

PYTHON = "/usr/bin/python3.11"
_EXECUTABLES = ("usr/bin/python3.11", "lib64/ld-linux-x86-64.so.2")
_LOADED = ("import os, stat, sys, tarfile, json, socket, py_compile, runpy, importlib.util, unittest\n"
           "print(os.path.join(os.path.dirname(unittest.__file__), '__main__.py'))\n"
           "unittest.main(module=None, argv=['t', 'discover', '-s', '.', '-p', 'test_calc.py'], exit=False)\n"
           "print('\\n'.join(sorted({m.__file__ for m in list(sys.modules.values()) if getattr(m, '__file__', None)})))")


def _python_files(work: Path) -> dict[str, bytes | str]:
    """Debian's ``python3.11``, its shared libraries and every module the capture, the agent
    and a ``unittest`` discovery of the example's test load (``-I``, with ``site``)."""
    for name, data in make_experiment.CALC.items():
        (work / name).write_bytes(data)
    modules = [line for line in subprocess.run([PYTHON, "-I", "-c", _LOADED], cwd=work, capture_output=True,
                                               text=True, check=True).stdout.split() if line.startswith("/usr/")]
    libraries: set[str] = set()
    for binary in [PYTHON, *(module for module in modules if module.endswith(".so"))]:
        for line in subprocess.run(["ldd", binary], capture_output=True, text=True, check=True).stdout.splitlines():
            words = line.split()
            path = words[2] if "=>" in words and len(words) > 2 else words[0]
            if path.startswith("/"):
                libraries.add(path)
    files: dict[str, bytes | str] = {path.lstrip("/"): Path(path).read_bytes()
                                     for path in {PYTHON, *modules, *libraries}}
    files["usr/bin/python3"] = "->python3.11"
    return files


@pytest.fixture(scope="module")
def python_image() -> Iterator[tuple[OciImageStore, str, str]]:
    """``(store, index digest, manifest digest)`` of busybox, the static agent and Python."""
    if not Path(PYTHON).is_file():
        pytest.skip("needs Debian's /usr/bin/python3.11")
    directory = Path(tempfile.mkdtemp(prefix="grader-attacks-image-", dir="/var/tmp"))
    try:
        (directory / "calc").mkdir()
        files = {**busybox_files(), "bin/agent": compile_agent(directory), **_python_files(directory / "calc")}
        entries = [dataclasses.replace(entry, mode=0o755) if entry.name in _EXECUTABLES else entry
                   for entry in files_entries(files)]
        layer = tar_layer([*entries, Entry("tmp/", kind="dir", mode=0o1777)])
        host = host_platform()
        built = write_index_image(directory / "layout", {(host.os, host.architecture): [layer]}, tag="attacks")
        store = OciImageStore(directory / "store")
        store.import_layout(directory / "layout", name=IMAGE_NAME, tag="attacks")
        mine = built[(host.os, host.architecture)]
        assert mine.index_digest is not None
        yield store, mine.index_digest, mine.manifest_digest
    finally:
        subprocess.run(["rm", "-rf", str(directory)], check=False)


# The agent makes no model call (a valid zero now): its code is a public launch argument,
# where the contract refuses anything that reads like a credential (the gateway's token).
HEAD = "import os, sys\nsys.stdin.read()\n"


def _python_bundle(code: str) -> bytes:
    """A disabled-code bundle launching the image's ``python3.11 -I -c CODE`` (on one line: a
    public value holds no control character)."""
    material: dict[str, Any] = json.loads(bundle("stdin"))
    material.pop("digest")
    material["execution"]["launch"] = {"kind": "container-command", "executable": PYTHON, "args": [
        {"kind": "public", "value": "-I"}, {"kind": "public", "value": "-c"}, {"kind": "public", "value": f"exec({code!r})"}]}
    return json.dumps({**material, "digest": canonical_digest(material)}).encode()


@pytest.mark.parametrize("name", ["stdlib-unittest", "test-replaced-through-symlink", "unchecked-hash-pyc"])
def test_an_attack_in_a_container_is_graded_as_a_failure_and_the_fix_passes(
        tmp_path: Path, python_image: tuple[OciImageStore, str, str], name: str) -> None:
    store, index_digest, manifest_digest = python_image
    action, grader, left, _real = ATTACKS[name]
    commands = [{**command, "executable": PYTHON} for command in (grader or {}).get("commands", [])] or [
        {"name": "tests", "executable": PYTHON, "timeoutMs": 30_000,
         "args": ["-I", "-B", "-m", "unittest", "discover", "-s", ".", "-p", "test_calc.py"]}]
    assert commands[0]["args"] == PROJECT_FIRST["args"] or name != "stdlib-unittest"
    document = {"restore": ["test_calc.py"], "maxOutputBytes": 65536, **(grader or {}), "commands": commands}
    paths = make(tmp_path / "example", grader=document)
    wire = json.loads(paths["experiment"].read_bytes())["benchmark"]["tasks"][0]
    wire.pop("digest")
    host = host_platform()
    wire["evaluatorTaskContainer"] = {
        "source": "evaluator-task-container", "image": IMAGE_NAME, "indexDigest": index_digest,
        "manifestDigest": manifest_digest, "platform": {"os": host.os, "architecture": host.architecture}}
    data = experiment(_python_bundle(HEAD + action + "\n"), bundle("fix"), AgentCandidateBenchmarkTask.seal(wire))
    out = tmp_path / "run"
    summary = run_experiment(data, ExperimentRunOptions(out=out, artifacts=paths["artifacts"], images=store.root))
    assert summary.counts["done"] == 2, summary
    for arm in ("baseline", "candidate"):
        record = json.loads((out / "cells" / f"{arm}-t0000-r0000.json").read_bytes())
        assert record["materializationReceipt"]["container"]["source"] == "evaluator-task-container"
    passed, evidence = _cell(out, "baseline")
    assert passed is False and evidence["submission"]["left"] == left
    honest, fix = _cell(out, "candidate")
    assert honest is True and fix["submission"]["left"] == []
