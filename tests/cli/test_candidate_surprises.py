"""The evaluator CLI's surprises of issue 36, each fixed: relative repository paths, the
document and pointer at fault, the repository named once, one reason per error, and typed
refusals (never an internal error) for unusable output paths and unwritable file names."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agent_interface.cli.main import main
from agent_interface.core.errors import ContractError
from agent_interface.evaluator.run.materialize import materialize_candidate
from agent_interface.evaluator.verify.integrity import verify_candidate_bundle
from tests.candidate.bundle_fixtures import git_patch_bundle
from tests.evaluator.git_fixtures import commit_all, git, write

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "candidate"
BUNDLE = str(EXAMPLE / "bundle.json")


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("demo")
    subprocess.run(["git", "clone", "-q", str(EXAMPLE / "repository.bundle"), str(root / "demo")], check=True)
    return root


def cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


# -- relative repository paths -------------------------------------------------------


@pytest.mark.parametrize(("cwd", "repository"), [(".", "demo"), ("demo", "."), ("demo/.git", "..")])
def test_a_relative_repository_is_read_from_the_callers_directory(
    demo: Path, cwd: str, repository: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(demo / cwd)
    code, out, err = cli(["candidate", "verify", BUNDLE, "--repository", repository], capsys)
    assert code == 0, err
    assert "2c7a434ff30322ab2991939bfca5324f8338b5b3" in out


def test_the_python_api_takes_relative_paths_too(demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(demo)
    result = verify_candidate_bundle(Path(BUNDLE).read_bytes(), repository="demo")
    assert result.repository_checked
    written = materialize_candidate(Path(BUNDLE).read_bytes(), repository=Path("demo"), into="files")
    assert written.tree == result.materialized_tree and (demo / "files" / "code" / "src" / "agent.py").is_file()


# -- the repository named once, the bundle as the document -----------------------------


def test_a_plain_directory_is_named_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "plain").mkdir()
    code, _, err = cli(["candidate", "verify", BUNDLE, "--repository", "plain"], capsys)
    assert code == 2
    assert err.count("plain") == 1, err
    assert err.strip() == f"agent-interface: {BUNDLE}: --repository plain: not a Git repository"


def test_json_names_the_bundle_as_the_document(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, _ = cli(["candidate", "verify", BUNDLE, "--repository", "missing", "--json"], capsys)
    document = json.loads(out)
    assert code == 2 and document["document"] == BUNDLE
    assert document["issues"] == [{"path": "", "code": "repository_unavailable",
                                   "message": "--repository missing: not a directory"}]


def test_a_missing_repository_option_says_which_option(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = cli(["candidate", "verify", BUNDLE], capsys)
    assert code == 2 and "--repository PATH" in err


# -- one reason, the right one -------------------------------------------------------------


def test_nan_is_named_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "nan.json").write_text("NaN")
    code, _, err = cli(["digest", str(tmp_path / "nan.json")], capsys)
    assert code == 2
    assert err.count("not valid JSON") == 1 and "NaN is not a JSON number" in err


@pytest.mark.parametrize(
    ("directory", "reason"),
    [
        ("/proc/nope", "the file system there does not allow new directories"),
        ("{file}/x", "a parent of the path is a file, not a directory"),
        ("{tmp}/" + "n" * 300, "a name in the path is longer than the file system allows"),
    ],
)
def test_schema_export_says_why_a_directory_cannot_be_made(
    tmp_path: Path, directory: str, reason: str, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "file").write_text("")
    target = directory.format(file=tmp_path / "file", tmp=tmp_path)
    code, out, _ = cli(["schema", "export", target, "--json"], capsys)
    assert code == 2
    assert json.loads(out)["issues"][0]["message"] == f"cannot create the directory: {reason}"


# -- output paths: typed refusals, before the verification ------------------------------


def _targets(tmp_path: Path) -> dict[str, Path]:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "link").symlink_to(elsewhere)
    (tmp_path / "dangling").symlink_to(tmp_path / "nothing")
    (tmp_path / "file").write_text("")
    return {"link": tmp_path / "link", "dangling": tmp_path / "dangling", "under-file": tmp_path / "file" / "x",
            "proc": Path("/proc/x"), "long": tmp_path / ("n" * 300)}


@pytest.mark.parametrize(
    ("name", "code"),
    [("link", "output_is_symlink"), ("dangling", "output_is_symlink"),
     ("under-file", "output_parent_not_directory"), ("proc", "output_unwritable"), ("long", "output_unwritable")],
)
def test_unusable_into_is_refused_before_the_verification(
    tmp_path: Path, name: str, code: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = _targets(tmp_path)[name]

    def never(*_: Any, **__: Any) -> Any:
        raise AssertionError("the verification ran before the target was checked")

    monkeypatch.setattr("agent_interface.evaluator.run.materialize.verify_candidate_bundle", never)
    with pytest.raises(ContractError) as refused:
        materialize_candidate(Path(BUNDLE).read_bytes(), repository=tmp_path, into=target)
    assert [(issue.path, issue.code) for issue in refused.value.issues] == [("/into", code)]
    assert not (tmp_path / "elsewhere").exists() or os.listdir(tmp_path / "elsewhere") == []


@pytest.mark.parametrize("name", ["link", "dangling", "under-file", "proc", "long"])
def test_the_cli_refuses_them_with_exit_1(
    tmp_path: Path, demo: Path, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    target = _targets(tmp_path)[name]
    code, out, _ = cli(["candidate", "materialize", BUNDLE, "--repository", str(demo / "demo"), "--into",
                        str(target), "--json"], capsys)
    document = json.loads(out)
    assert code == 1 and document["verdict"] == "refused" and document["issues"][0]["path"] == "/into"
    assert document["document"] == str(target)


@pytest.mark.parametrize("name", ["link", "dangling", "under-file", "proc"])
def test_run_out_gets_the_same_refusals(tmp_path: Path, demo: Path, name: str,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    target = _targets(tmp_path)[name]
    code, out, _ = cli(["candidate", "run", BUNDLE, "--repository", str(demo / "demo"), "--task",
                        str(EXAMPLE / "task.json"), "--out", str(target), "--json"], capsys)
    document = json.loads(out)
    assert code == 1 and document["issues"][0]["path"] == "/out" and document["document"] == str(target)


def test_a_file_name_longer_than_the_file_system_takes_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    write(repo, {"src/agent.py": b"print(1)\n"})
    base_commit, base_tree = commit_all(repo, "base")
    blob = git(repo, "hash-object", "-w", "--stdin", stdin=b"hi\n")
    git(repo, "update-index", "--add", "--cacheinfo", f"100644,{blob},d/{'x' * 300}")
    candidate_tree = git(repo, "write-tree")
    patch = subprocess.run(["git", "diff", "--cached", "--binary", base_commit], cwd=repo, capture_output=True,
                           check=True).stdout
    git(repo, "reset", "-q")
    bundle = git_patch_bundle(base_commit, base_tree, candidate_tree, patch, {"src/agent.py": b"print(1)\n"})
    (tmp_path / "long.json").write_text(json.dumps(bundle))
    code, out, _ = cli(["candidate", "verify", str(tmp_path / "long.json"), "--repository", str(repo)], capsys)
    assert code == 0  # Git holds the name; only writing it out is impossible here
    code, out, _ = cli(["candidate", "materialize", str(tmp_path / "long.json"), "--repository", str(repo),
                        "--into", str(tmp_path / "files"), "--json"], capsys)
    document = json.loads(out)
    assert code == 1 and document["issues"][0]["code"] == "tree_name_too_long"
    assert document["issues"][0]["path"] == "/code/patch/artifact"
    assert not (tmp_path / "files").exists() and [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


# -- the document at fault, and the option that fixes it --------------------------------


def test_a_missing_grader_blames_the_task_and_suggests_artifacts(
    tmp_path: Path, demo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    task = str(EXAMPLE / "task.json")
    code, _, err = cli(["candidate", "run", BUNDLE, "--repository", str(demo / "demo"), "--task", task,
                        "--out", str(tmp_path / "run")], capsys)
    assert code == 1
    lines = err.splitlines()
    assert lines[0] == f"{task}: refused"
    assert lines[1].startswith("  /grader/artifact: the task's grader agent-interface/output-checks 1 (sha256:")
    assert lines[1].endswith("no local file holds this artifact [artifact_unavailable]")
    assert lines[2].startswith("  hint: pass --artifacts DIR")
    code, out, _ = cli(["candidate", "run", BUNDLE, "--repository", str(demo / "demo"), "--task", task,
                        "--out", str(tmp_path / "run"), "--json"], capsys)
    document = json.loads(out)
    assert document["document"] == task and document["issues"][0]["path"] == "/grader/artifact"
    assert document["hints"][0].startswith("pass --artifacts DIR")
    assert not (tmp_path / "run").exists()
