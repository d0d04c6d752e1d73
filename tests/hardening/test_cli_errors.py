"""The command line never prints a traceback: an error is one line on standard error (one
JSON document under ``--json``, ``cli.conventions``) and exit 2; a verdict is exit 0 or 1."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

cli = importlib.import_module("agent_interface.cli.main")

SURROGATE = b'"a\\ud800"'


_ENTRY = "import sys; from agent_interface.cli.main import main; sys.exit(main())"


def _run(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-c", _ENTRY, *args],
        input=stdin,
        capture_output=True,
        timeout=120,
        check=False,
    )


def _no_traceback(result: subprocess.CompletedProcess[bytes]) -> None:
    assert b"Traceback" not in result.stderr + result.stdout
    result.stdout.decode("utf-8")
    result.stderr.decode("utf-8")


@pytest.mark.parametrize(
    "flags", [[], ["--json"], ["--jsonl"], ["--jsonl", "--json"]], ids=["plain", "json", "jsonl", "jsonl-json"]
)
def test_a_document_accepted_but_not_digestible_is_refused_without_traceback(flags: list[str]) -> None:
    result = _run("validate", "--schema", "InteractionFieldName", *flags, "-", stdin=SURROGATE + b"\n")
    _no_traceback(result)
    assert result.returncode == 1
    if "--json" in flags:
        answer = json.loads(result.stdout.decode().strip().splitlines()[0] if "--jsonl" in flags else result.stdout)
        assert answer["verdict"] == "refused"
        assert answer["issues"][0]["code"] == "ill_formed_unicode"


def test_a_refusal_about_lone_surrogates_prints_without_traceback(tmp_path: Path) -> None:
    document = tmp_path / "profile.json"
    document.write_bytes(b'{"tools":{"\\ud800":"x"},"metadata":{"\\udfff":{"\\ud800":[]}}}')
    for flags in ([], ["--json"]):
        result = _run("validate", "--schema", "AgentProfile", *flags, str(document))
        _no_traceback(result)
        assert result.returncode == 1


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")
def test_schema_export_into_an_unwritable_directory_is_one_line(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        result = _run("schema", "export", str(locked / "out"))
    finally:
        locked.chmod(0o700)
    _no_traceback(result)
    assert result.returncode == 2
    assert len(result.stderr.decode().strip().splitlines()) == 1


@pytest.mark.parametrize("json_flag", [False, True])
def test_schema_export_onto_an_existing_file_is_one_error(tmp_path: Path, json_flag: bool) -> None:
    target = tmp_path / "a-file"
    target.write_text("keep me")
    result = _run("schema", "export", *(["--json"] if json_flag else []), str(target))
    _no_traceback(result)
    assert result.returncode == 2
    assert target.read_text() == "keep me"
    if json_flag:
        assert json.loads(result.stdout)["verdict"] == "unreadable"
    else:
        assert len(result.stderr.decode().strip().splitlines()) == 1


def test_schema_export_under_a_path_through_a_file_is_one_error(tmp_path: Path) -> None:
    target = tmp_path / "a-file"
    target.write_text("x")
    result = _run("schema", "export", str(target / "below"))
    _no_traceback(result)
    assert result.returncode == 2


def test_any_failure_of_a_command_is_caught_by_the_guard(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(_args: Any) -> int:
        raise RuntimeError("secret detail that must not be printed")

    monkeypatch.setattr(cli, "cmd_schema_list", broken)
    assert cli.main(["schema", "list"]) == 2
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1 and "internal error" in captured.err
    assert "secret detail" not in captured.err + captured.out
    assert cli.main(["schema", "list", "--json"]) == 2
    answer = json.loads(capsys.readouterr().out)
    assert answer["issues"] == [
        {"path": "", "code": "internal_error", "message": "internal error (RuntimeError); please report it"}
    ]


@pytest.mark.parametrize(
    "stdin",
    [b"[" * 100_000, b'{"cpu": 1' + b"0" * 5000 + b"}", b"\xff\xfe", b"\xef\xbb\xbf{}", b'{"a":NaN}'],
)
def test_hostile_input_to_digest_and_validate_ends_in_a_verdict_or_one_line(stdin: bytes) -> None:
    for args in (["digest", "-"], ["validate", "--schema", "ResourceUseSample", "-"],
                 ["validate", "--jsonl", "--schema", "ResourceUseSample", "-"]):
        result = _run(*args, stdin=stdin)
        _no_traceback(result)
        assert result.returncode in (1, 2)
