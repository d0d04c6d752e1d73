"""``agent-interface candidate verify``: exit codes, output modes, progress, local artifacts."""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from agent_interface.cli.main import main
from tests.candidate.bundle_fixtures import (
    EXTERNAL_BYTES,
    disabled_bundle,
    git_patch_bundle,
    seal,
    with_external_artifacts,
)
from tests.evaluator.git_fixtures import PatchedRepository, patched_repository

WORKSPACE = {"src/agent.py": b"print('hello, candidate')\n"}


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> PatchedRepository:
    return patched_repository(tmp_path_factory.mktemp("cli"))


@pytest.fixture
def bundle(repo: PatchedRepository) -> dict[str, Any]:
    return git_patch_bundle(
        repo.base_commit, repo.base_tree, repo.candidate_tree, repo.patch, WORKSPACE
    )


def _write(tmp_path: Path, document: Any, name: str = "bundle.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(document), encoding="utf-8")
    return str(path)


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_verified_bundle_prints_digest_tree_and_rows(
    tmp_path: Path, bundle: dict[str, Any], repo: PatchedRepository,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = _write(tmp_path, bundle)
    code, out, _ = run(["candidate", "verify", path, "--repository", str(repo.path)], capsys)
    assert code == 0
    assert bundle["digest"] in out
    assert repo.candidate_tree in out
    assert "/code/patch/artifact" in out


def test_json_output_is_the_result_document(
    tmp_path: Path, bundle: dict[str, Any], repo: PatchedRepository,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = _write(tmp_path, bundle)
    code, out, _ = run(
        ["candidate", "verify", path, "--repository", str(repo.path), "--json"], capsys
    )
    assert code == 0
    result = json.loads(out)
    assert result["kind"] == "agent-candidate-verification"
    assert result["materializedTree"] == repo.candidate_tree
    assert {row["source"] for row in result["artifacts"]} == {"embedded", "inline"}


def test_refused_bundle_names_check_pointer_and_reason(
    tmp_path: Path, bundle: dict[str, Any], repo: PatchedRepository,
    capsys: pytest.CaptureFixture[str],
) -> None:
    tampered = copy.deepcopy(bundle)
    tampered["code"]["candidateTree"] = "d" * 40
    path = _write(tmp_path, seal(tampered))
    code, _, err = run(["candidate", "verify", path, "--repository", str(repo.path)], capsys)
    assert code == 1
    assert "code_state" in err and "/code/candidateTree" in err
    code, out, _ = run(
        ["candidate", "verify", path, "--repository", str(repo.path), "--json"], capsys
    )
    assert code == 1
    assert json.loads(out)["check"] == "code_state"


def test_unreadable_inputs_exit_2(
    tmp_path: Path, bundle: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["candidate", "verify", str(tmp_path / "absent.json")], capsys)[0] == 2
    broken = tmp_path / "broken.json"
    broken.write_text("{not json", encoding="utf-8")
    assert run(["candidate", "verify", str(broken)], capsys)[0] == 2
    path = _write(tmp_path, bundle)
    code, _, err = run(["candidate", "verify", path], capsys)  # git-patch without --repository
    assert code == 2 and "repository" in err
    code, _, _ = run(
        ["candidate", "verify", path, "--repository", str(tmp_path / "nowhere")], capsys
    )
    assert code == 2
    assert run(["candidate", "verify", path, "--artifacts", str(tmp_path / "none")], capsys)[0] == 2


def test_wire_shape_refusal_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["candidate", "verify", _write(tmp_path, {"kind": "x"})], capsys)
    assert code == 1 and "wire_shape" in err


def test_artifacts_directory_serves_external_bytes(
    tmp_path: Path, bundle: dict[str, Any], repo: PatchedRepository,
    capsys: pytest.CaptureFixture[str],
) -> None:
    store = tmp_path / "store"
    store.mkdir()
    for digest, content in EXTERNAL_BYTES.items():
        (store / digest.removeprefix("sha256:")).write_bytes(content)
    path = _write(tmp_path, with_external_artifacts(bundle))
    args = ["candidate", "verify", path, "--repository", str(repo.path), "--artifacts", str(store)]
    code, out, _ = run(args, capsys)
    assert code == 0
    assert "/memory/seed" in out and "github" in out
    first = sorted(store.iterdir())[0]
    first.write_bytes(b"other bytes")
    code, _, err = run(args, capsys)
    assert code == 1 and "external_artifact" in err


def test_progress_on_stderr_for_many_artifacts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    many = copy.deepcopy(disabled_bundle())
    tools = []
    for index in range(14):
        text = f"tool {index}\n".encode()
        tools.append(
            {
                "kind": "inline",
                "name": f"tool-{index}",
                "content": text.decode(),
                "sha256": "sha256:" + hashlib.sha256(text).hexdigest(),
                "byteLength": len(text),
            }
        )
    many["profile"]["resources"]["tools"] = tools
    code, out, err = run(["candidate", "verify", _write(tmp_path, seal(many))], capsys)
    assert code == 0
    assert "verified 11:" in err and "verified 15:" in err
    assert "verified 11:" not in out
    few_code, _, few_err = run(["candidate", "verify", _write(tmp_path, disabled_bundle())], capsys)
    assert few_code == 0 and few_err == ""
