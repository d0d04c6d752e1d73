"""``agent-interface kb compose``: output, overrides, and exit codes."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from agent_interface.cli.main import main
from agent_interface.profile.canonical import canonical_agent_profile_digest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "kb"


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def load(name: str) -> Any:
    return json.loads((EXAMPLES / name).read_text(encoding="utf-8"))


def test_compose_prints_the_composed_profile(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["kb", "compose", str(EXAMPLES / "profile.json")], capsys)
    assert code == 0 and err == ""
    assert json.loads(out) == load("profile.composed.json")


def test_compose_is_idempotent_from_the_shell(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["kb", "compose", str(EXAMPLES / "profile.composed.json")], capsys)
    assert code == 0 and json.loads(out) == load("profile.composed.json")


def test_compose_with_a_harness_override(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(EXAMPLES / "profile.composed.json")
    code, out, _ = run(["kb", "compose", "--harness", "codex", path], capsys)
    assert code == 0 and json.loads(out) == load("profile.composed-for-codex.json")


def test_compose_with_a_model_override_drops_the_old_model_block(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = str(EXAMPLES / "profile.composed.json")
    code, out, _ = run(["kb", "compose", "--model", "gpt-6-sol", path], capsys)
    assert code == 0
    text = json.loads(out)["prompt"]["appendSystemPrompt"]
    assert 'source="harness" id="claude-code"' in text and 'source="model"' not in text


def test_compose_reads_standard_input(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    data = (EXAMPLES / "profile-codex.json").read_bytes()
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data)))
    code, out, _ = run(["kb", "compose", "-"], capsys)
    assert code == 0 and json.loads(out) == load("profile-codex.composed.json")


def test_compose_json_report(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["kb", "compose", "--json", str(EXAMPLES / "profile.json")], capsys)
    assert code == 0
    report = json.loads(out)
    composed = load("profile.composed.json")
    assert report["verdict"] == "composed"
    assert (report["harness"], report["model"], report["channel"]) == (
        "claude-code",
        "claude-opus-5-5",
        "appendSystemPrompt",
    )
    assert report["blocks"] == [
        {"source": "harness", "id": "claude-code"},
        {"source": "model", "id": "claude-opus-5-5"},
    ]
    assert report["profile"] == composed
    assert report["digest"] == canonical_agent_profile_digest(composed)
    assert report["issues"] == []


def test_compose_refuses_an_invalid_profile(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"harness": "vim", "prompt": {"appendSystemPrompt": 3}}))
    code, out, err = run(["kb", "compose", str(path)], capsys)
    assert code == 1 and out == ""
    assert "/harness: " in err and "[literal_error]" in err
    assert "/prompt/appendSystemPrompt: " in err
    code, out, err = run(["kb", "compose", "--json", str(path)], capsys)
    assert code == 1
    report = json.loads(out)
    assert report["verdict"] == "refused"
    assert {issue["path"] for issue in report["issues"]} == {
        "/harness",
        "/prompt/appendSystemPrompt",
    }


def test_compose_reports_unreadable_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "missing.json"
    code, out, err = run(["kb", "compose", str(missing)], capsys)
    assert code == 2 and out == "" and "missing.json" in err
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    code, _, err = run(["kb", "compose", str(broken)], capsys)
    assert code == 2 and "not valid JSON" in err


def test_kb_needs_an_action(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["kb"]) == 2
    assert "the following arguments are required: ACTION" in capsys.readouterr().err
