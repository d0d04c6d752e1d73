"""Authoring from the command line: a workspace task from a repository commit graded by its own
commands in a named image (``task new --repository``), a suite of many tasks with repetitions
and seeds (``suite new``), and option values that begin with ``-`` (``--arg -c``)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agent_interface.cli.main import main
from agent_interface.evaluator.images.oci_documents import host_platform
from agent_interface.evaluator.images.oci_store import OciImageStore
from tests.evaluator.oci_fixtures import build_image

ENV = {**{k: v for k, v in os.environ.items() if not k.startswith("GIT_")}, "GIT_CONFIG_NOSYSTEM": "1",
       "GIT_CONFIG_GLOBAL": os.devnull, "GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.com",
       "GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@example.com",
       "GIT_AUTHOR_DATE": "2026-12-01T09:00:00Z", "GIT_COMMITTER_DATE": "2026-12-01T09:00:00Z"}
PYTEST = "/usr/bin/python3 -I -m pytest -q -p no:cacheprovider"


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", *args], cwd=repo,
                          env=ENV, capture_output=True, check=True, text=True).stdout.strip()


@pytest.fixture
def calc(tmp_path: Path) -> Path:
    repo = tmp_path / "calc"
    (repo / "tests").mkdir(parents=True)
    (repo / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (repo / "tests" / "test_calc.py").write_text("from calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n")
    (repo / "README").write_text("calc\n")
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "calc")
    return repo


def _task_new(calc: Path, out: Path, *extra: str) -> int:
    return main(["task", "new", "--benchmark", "calc-bench", "--scenario", "fix-add", "--instruction", "Fix add.",
                 "--repository", str(calc), "--artifacts", str(out / "artifacts"), "--out", str(out / "task.json"),
                 *extra])


def _grader(out: Path, task: dict[str, Any]) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((out / "artifacts" / task["grader"]["artifact"]["locator"]["cid"]).read_bytes())
    return document


def test_a_task_from_a_commit_is_graded_by_its_own_tests_and_solutions_change_only_their_paths(
        calc: Path, tmp_path: Path) -> None:
    assert _task_new(calc, tmp_path, "--test", PYTEST, "--test", "lint=/usr/bin/python3 -m py_compile calc.py",
                     "--solution-path", "calc.py", "--identity", "example/calc") == 0
    task = json.loads((tmp_path / "task.json").read_text())
    assert task["outcome"] == {"kind": "workspace"}
    assert task["repository"] == {"identity": "example/calc", "rootIdentity": "example/calc",
                                  "baseCommit": _git(calc, "rev-parse", "HEAD"),
                                  "baseTree": _git(calc, "rev-parse", "HEAD^{tree}")}
    assert sorted(f["path"] for f in task["workspace"]["material"]["files"]) == ["README", "calc.py",
                                                                                  "tests/test_calc.py"]
    assert task["grader"]["name"] == "agent-interface/workspace-command"
    grader = _grader(tmp_path, task)
    assert grader["commands"] == [
        {"name": "tests", "executable": "/usr/bin/python3", "args": ["-I", "-m", "pytest", "-q", "-p", "no:cacheprovider"],
         "timeoutMs": 120_000},
        {"name": "lint", "executable": "/usr/bin/python3", "args": ["-m", "py_compile", "calc.py"],
         "timeoutMs": 120_000}]
    assert grader["restore"] == ["README", "tests/test_calc.py"]  # everything but the solution's paths
    assert "evaluatorTaskContainer" not in task
    assert main(["validate", "--schema", "AgentCandidateBenchmarkTask", str(tmp_path / "task.json")]) == 0


def test_a_directory_solution_path_and_explicit_restores(calc: Path, tmp_path: Path) -> None:
    assert _task_new(calc, tmp_path, "--test", PYTEST, "--solution-path", "tests/", "--restore", "calc.py",
                     "--commit", "main") == 0
    grader = _grader(tmp_path, json.loads((tmp_path / "task.json").read_text()))
    assert grader["restore"] == ["README", "calc.py"]


def test_the_task_selects_an_image_found_in_the_store(calc: Path, tmp_path: Path) -> None:
    image = build_image(tmp_path / "layout", {"bin/hello": b"hello\n"})
    store = OciImageStore(tmp_path / "store")
    stored = store.import_layout(image.layout, name="task/python")
    assert _task_new(calc, tmp_path, "--test", PYTEST, "--image", stored.reference,
                     "--images", str(tmp_path / "store")) == 0
    task = json.loads((tmp_path / "task.json").read_text())
    host = host_platform()
    assert task["evaluatorTaskContainer"] == {
        "source": "evaluator-task-container", "image": "task/python", "indexDigest": stored.digest,
        "manifestDigest": image.manifest_digest, "platform": {"os": host.os, "architecture": host.architecture}}


@pytest.mark.parametrize(("extra", "says"), [
    ((), "--test COMMAND"),
    (("--test", "python3 -m pytest"), "absolute executable"),
    (("--test", "/usr/bin/python3 'unbalanced"), "unbalanced quotes"),
    (("--test", PYTEST, "--image", "task/python@sha256:" + "a" * 64), "--images STORE_DIR"),
    (("--test", PYTEST, "--contains", "5"), "graded by --test"),
])
def test_repository_tasks_out_of_shape_are_usage_errors(calc: Path, tmp_path: Path, extra: tuple[str, ...],
                                                         says: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert _task_new(calc, tmp_path, *extra) == 2
    assert says in capsys.readouterr().err
    assert not (tmp_path / "task.json").exists()


def test_an_image_missing_from_the_store_and_a_bad_revision_are_refused(
        calc: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    OciImageStore(tmp_path / "store")
    assert _task_new(calc, tmp_path, "--test", PYTEST, "--image", "task/python@sha256:" + "a" * 64,
                     "--images", str(tmp_path / "store")) == 2
    assert "holds no image" in capsys.readouterr().err
    assert _task_new(calc, tmp_path, "--test", PYTEST, "--commit", "no-such-branch", "--json") == 1
    assert json.loads(capsys.readouterr().out)["issues"][0]["path"] == "/repository/baseCommit"


def test_a_suite_of_many_tasks_with_repetitions_and_seeds(calc: Path, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    tasks = []
    for scenario in ("one", "two", "three"):
        out = tmp_path / scenario
        assert main(["task", "new", "--benchmark", "b", "--scenario", scenario, "--instruction", scenario,
                     "--repository", str(calc), "--test", PYTEST, "--artifacts", str(tmp_path / "artifacts"),
                     "--out", str(out / "task.json")]) == 0
        tasks += ["--task", str(out / "task.json")]
    capsys.readouterr()
    assert main(["suite", "new", *tasks, "--reps", "2", "--out", str(tmp_path / "suite.json"), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["verdict"] == "written" and summary["seeds"] == [0, 1, 2, 3, 4, 5]
    suite = json.loads((tmp_path / "suite.json").read_text())
    digests = [json.loads((tmp_path / s / "task.json").read_text())["digest"] for s in ("one", "two", "three")]
    assert suite["taskDigests"] == digests and suite["reps"] == 2
    assert main(["suite", "new", *tasks, "--reps", "2", "--first-seed", "100", "--out", "-"]) == 0
    assert json.loads(capsys.readouterr().out)["seeds"] == [100, 101, 102, 103, 104, 105]
    assert main(["suite", "new", *tasks, "--seed", "1", "--out", str(tmp_path / "bad.json"), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["verdict"] == "refused"
    assert not (tmp_path / "bad.json").exists()
    assert main(["experiment", "new", "--baseline", str(_bundle(tmp_path, "b")), "--candidate",
                 str(_bundle(tmp_path, "c")), "--suite", str(tmp_path / "suite.json"), *tasks,
                 "--out", str(tmp_path / "experiment.json")]) == 0


def _bundle(tmp_path: Path, name: str) -> Path:
    path = tmp_path / f"{name}.json"
    assert main(["candidate", "new", "--no-code", "--name", name, "--command", "/usr/bin/python3", "--arg", "-c",
                 "--arg", "print(1)", "--out", str(path)]) == 0
    return path


def test_option_values_that_begin_with_a_dash(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spaced = _bundle(tmp_path, "spaced")
    capsys.readouterr()
    assert main(["candidate", "new", "--no-code", "--name", "spaced", "--command", "/usr/bin/python3",
                 "--arg=-c", "--arg=print(1)", "--out", str(tmp_path / "joined.json")]) == 0
    assert spaced.read_bytes() == (tmp_path / "joined.json").read_bytes()
    capsys.readouterr()
    launch = json.loads(spaced.read_text())["execution"]["launch"]
    assert [a["value"] for a in launch["args"]] == ["-c", "print(1)"]
    # "-" alone is still standard output, and an option without its value is still refused
    assert main(["candidate", "new", "--no-code", "--command", "/usr/bin/python3", "--arg", "-", "--out", "-"]) == 0
    assert json.loads(capsys.readouterr().out)["execution"]["launch"]["args"][0]["value"] == "-"
    assert main(["candidate", "new", "--no-code", "--out"]) == 2
    assert "expected one argument" in capsys.readouterr().err
    # a value that looks like a negative number reaches the option's own check
    assert main(["experiment", "new", "--baseline", str(spaced), "--candidate", str(spaced), "--suite", "s",
                 "--task", "t", "--min-productive-runs", "-1", "--out", "-"]) == 2
