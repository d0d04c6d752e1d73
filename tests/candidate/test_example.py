"""The worked example under examples/candidate: reproducible, and verified by the CLI."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from agent_interface.cli.main import main
from tests.evaluator.git_fixtures import ENV

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "candidate"


def test_generator_reproduces_the_committed_bundles(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, str(EXAMPLE / "make_example.py"), "--out", str(tmp_path)], check=True
    )
    for name in ("bundle.json", "tampered-bundle.json"):
        assert (tmp_path / name).read_bytes() == (EXAMPLE / name).read_bytes(), name


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("example") / "demo"
    subprocess.run(
        ["git", "clone", "-q", str(EXAMPLE / "repository.bundle"), str(target)],
        check=True, env=ENV,
    )
    return target


def test_intact_bundle_verifies(clone: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["candidate", "verify", str(EXAMPLE / "bundle.json"), "--repository", str(clone)])
    out = capsys.readouterr().out
    assert code == 0
    assert "2c7a434ff30322ab2991939bfca5324f8338b5b3" in out


def test_tampered_bundle_is_refused_by_git(clone: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        ["candidate", "verify", str(EXAMPLE / "tampered-bundle.json"), "--repository", str(clone)]
    )
    err = capsys.readouterr().err
    assert code == 1
    assert "code_state" in err and "/code/candidateTree" in err and "candidate_tree_mismatch" in err


def test_clone_is_left_untouched(clone: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status = subprocess.run(
        ["git", "status", "--porcelain", "--ignored"], cwd=clone, env=ENV,
        capture_output=True, check=True,
    ).stdout
    main(["candidate", "verify", str(EXAMPLE / "bundle.json"), "--repository", str(clone)])
    capsys.readouterr()
    after = subprocess.run(
        ["git", "status", "--porcelain", "--ignored"], cwd=clone, env=ENV,
        capture_output=True, check=True,
    ).stdout
    assert after == status == b""
