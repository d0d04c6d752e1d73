"""The agent-interface command line: exit codes, output modes, schema export."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from agent_interface.cli.main import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def run(args: list[str], capsys: pytest.CaptureFixture[str], stdin: str | None = None,
        monkeypatch: pytest.MonkeyPatch | None = None) -> tuple[int, str, str]:
    if stdin is not None:
        assert monkeypatch is not None
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode())))
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_digest_of_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "doc.json"
    path.write_text('{"b": 1, "a": [1.0, "é"]}', encoding="utf-8")
    code, out, _ = run(["digest", str(path)], capsys)
    assert code == 0
    assert out.strip() == "sha256:8717ac25ea6b88548fae92fcf938c6f0764f85913ba025812e1859bf0166f5d8"


def test_digest_from_stdin_json_mode(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, _ = run(["digest", "--json", "-"], capsys, stdin="[1, 2]", monkeypatch=monkeypatch)
    assert code == 0
    assert json.loads(out)["digest"].startswith("sha256:")


def test_digest_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["digest", str(tmp_path / "missing.json")], capsys)[0] == 2
    bad = tmp_path / "bad.json"
    bad.write_text("{nope", encoding="utf-8")
    assert run(["digest", str(bad)], capsys)[0] == 2
    nan = tmp_path / "nan.json"
    nan.write_text("[NaN]", encoding="utf-8")
    assert run(["digest", str(nan)], capsys)[0] == 2
    big = tmp_path / "big.json"
    big.write_text("[18446744073709551617]", encoding="utf-8")
    code, _, err = run(["digest", str(big)], capsys)
    assert code == 1 and "/0" in err and "unsafe_integer" in err


def test_validate_accepts_and_refuses(capsys: pytest.CaptureFixture[str]) -> None:
    good = EXAMPLES / "foundation" / "input-part-text.json"
    code, out, _ = run(["validate", "--schema", "InputPart", str(good)], capsys)
    assert code == 0 and "accepted" in out
    bad = EXAMPLES / "foundation" / "invalid-input-part-null.json"
    code, _, err = run(["validate", "--schema", "InputPart", str(bad)], capsys)
    assert code == 1 and "/mediaType" in err and "null_not_allowed" in err
    code, out, _ = run(["validate", "--json", "--schema", "InputPart", str(bad)], capsys)
    report = json.loads(out)
    assert code == 1 and report["verdict"] == "refused"
    assert report["issues"][0]["path"] == "/mediaType"


def test_validate_unknown_schema_is_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["validate", "--schema", "NoSuchThing", "-"], capsys)
    assert code == 2 and "NoSuchThing" in err


def test_validate_jsonl(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "batch.jsonl"
    path.write_text(
        '{"type":"text","text":"a"}\n\n{"type":"text"}\nnot json\n', encoding="utf-8"
    )
    code, out, _ = run(["validate", "--jsonl", "--json", "--schema", "InputPart", str(path)], capsys)
    verdicts = [json.loads(line) for line in out.splitlines()]
    assert code == 1
    assert [(v["line"], v["verdict"]) for v in verdicts] == [
        (1, "accepted"), (3, "refused"), (4, "refused")
    ]
    assert verdicts[2]["issues"][0]["code"] == "json_invalid"


def test_schema_list_and_export(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["schema", "list", "--json"], capsys)
    names = {row["name"] for row in json.loads(out)}
    assert code == 0 and "BackendMessage" in names
    code, _, _ = run(["schema", "export", str(tmp_path / "schemas")], capsys)
    assert code == 0
    files = sorted((tmp_path / "schemas").glob("*.schema.json"))
    assert len(files) == len(names)
    for file in files:
        document = json.loads(file.read_text(encoding="utf-8"))
        assert document["$schema"].endswith("2020-12/schema")


def test_check_runs_the_bundled_examples(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["check", str(EXAMPLES)], capsys)
    assert code == 0, out
    assert "0 unexpected verdicts" in out


def test_check_reports_unexpected_verdicts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "doc.json").write_text('{"type":"text","text":"a"}', encoding="utf-8")
    (tmp_path / "manifest.json").write_text(
        '[{"file":"doc.json","schema":"InputPart","expect":"refused"}]', encoding="utf-8"
    )
    code, out, _ = run(["check", str(tmp_path)], capsys)
    assert code == 1 and "expected refused" in out
    assert run(["check", str(tmp_path / "empty")], capsys)[0] == 2
