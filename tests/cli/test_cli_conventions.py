"""The CLI never surprises: ``--json`` everywhere, errors included; exit codes in every
``--help``; reasons instead of "unreadable"; one did-you-mean for schema names."""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from agent_interface.cli.main import build_parser, main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
PROFILE = EXAMPLES / "profiles" / "reviewer.json"


def _leaves(parser: argparse.ArgumentParser, words: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    found = []
    subcommands = [action for action in parser._actions if isinstance(action, argparse._SubParsersAction)]
    if not subcommands:
        return [(words, parser)]
    for action in subcommands:
        for name, child in action.choices.items():
            found += _leaves(child, (*words, name))
    return found


LEAVES = _leaves(build_parser())
COMMANDS = [" ".join(words) for words, _ in LEAVES]


def test_the_leaf_commands_are_the_documented_ones() -> None:
    assert set(COMMANDS) == {
        "validate", "digest", "schema list", "schema export", "check", "measure",
        "profile digest", "kb compose", "candidate verify", "candidate receipt",
        "candidate materialize", "candidate run", "candidate new", "task new", "experiment new",
        "experiment plan", "experiment report", "experiment run", "suite new", "image build", "image list",
    }


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_takes_json(command: str) -> None:
    parser = dict(zip(COMMANDS, (p for _, p in LEAVES), strict=True))[command]
    assert "--json" in parser._option_string_actions


@pytest.mark.parametrize("command", ["", *COMMANDS, "schema", "profile", "kb", "candidate", "experiment", "suite",
                                     "image"])
def test_every_help_lists_the_exit_codes(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main([*command.split(), "--help"])
    assert caught.value.code == 0
    out = capsys.readouterr().out
    assert "exit status:" in out
    for line in ("0  accepted", "1  refused", "2  not run"):
        assert line in out, (command, out)


def _json_run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, Any, str]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, json.loads(captured.out), captured.err


def _error_cases(tmp_path: Path) -> list[tuple[list[str], str]]:
    missing = str(tmp_path / "missing.json")
    broken = tmp_path / "broken.json"
    broken.write_text("{not json", encoding="utf-8")
    directory = str(tmp_path)
    return [
        (["validate", "--schema", "AgentProfile", missing], "file_not_found"),
        (["validate", "--schema", "AgentProfile", directory], "is_a_directory"),
        (["validate", "--schema", "AgentProfile", str(broken)], "json_invalid"),
        (["validate", "--schema", "Nope", str(PROFILE)], "unknown_schema"),
        (["validate", "--jsonl", "--schema", "AgentProfile", missing], "file_not_found"),
        (["digest", missing], "file_not_found"),
        (["digest", directory], "is_a_directory"),
        (["measure", missing], "file_not_found"),
        (["profile", "digest", str(broken)], "json_invalid"),
        (["kb", "compose", directory], "is_a_directory"),
        (["candidate", "verify", missing], "file_not_found"),
        (["candidate", "verify", str(EXAMPLES / "candidate" / "bundle.json"), "--artifacts", missing], "not_a_directory"),
        (["candidate", "receipt", missing, "--context", missing], "file_not_found"),
        (["candidate", "materialize", missing, "--into", str(tmp_path / "into")], "file_not_found"),
        (["candidate", "materialize", str(EXAMPLES / "candidate" / "bundle.json"), "--into",
          str(tmp_path / "into"), "--artifacts", missing], "not_a_directory"),
        (["candidate", "materialize", str(EXAMPLES / "candidate" / "bundle.json"), "--into",
          str(tmp_path / "into"), "--repository", str(tmp_path / "nowhere")], "repository_unavailable"),
        (["candidate", "run", missing, "--task", missing, "--out", str(tmp_path / "out")], "file_not_found"),
        (["candidate", "run", str(EXAMPLES / "candidate" / "bundle.json"), "--task",
          str(EXAMPLES / "candidate" / "task.json"), "--out", str(tmp_path / "out"),
          "--repository", str(tmp_path / "nowhere")], "repository_unavailable"),
        (["candidate", "materialize", str(PROFILE)], "usage"),
        (["candidate", "materialize", str(PROFILE), "--into", directory, "--max-files", "0"], "usage"),
        (["check", str(tmp_path / "nowhere")], "directory_not_found"),
        (["check", str(PROFILE)], "not_a_directory"),
        (["schema", "export", str(PROFILE)], "not_a_directory"),
        (["validate", "--schema"], "usage"),
        (["validate", "--bogus", "x"], "usage"),
        (["candidate", "receipt", str(PROFILE)], "usage"),
        (["nope"], "usage"),
    ]


def test_every_error_is_json_with_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for argv, code in _error_cases(tmp_path):
        exit_code, payload, _ = _json_run([*argv, "--json"], capsys)
        assert exit_code == 2, argv
        assert payload["issues"][0]["code"] == code, argv
        assert payload["verdict"] in ("unreadable", "usage"), argv


def test_errors_without_json_are_one_line_on_stderr(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for argv, _ in _error_cases(tmp_path):
        assert main(argv) == 2, argv
        captured = capsys.readouterr()
        assert captured.out == "", argv
        assert "error" in captured.err or "agent-interface:" in captured.err, argv


def test_reasons_are_words(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["digest", str(tmp_path / "missing.json")]) == 2
    assert capsys.readouterr().err.strip().endswith("missing.json: file not found")
    assert main(["digest", str(tmp_path)]) == 2
    assert "is a directory, not a file" in capsys.readouterr().err


def test_an_endless_input_is_refused_at_the_bound(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["digest", "/dev/zero"]) == 2  # read up to the bound, never to the end
    assert capsys.readouterr().err.strip().endswith("/dev/zero: larger than 256 MiB, not read")
    assert main(["digest", "/dev/null"]) == 2  # an empty input is read, then refused as JSON
    assert "not valid JSON" in capsys.readouterr().err


# -- candidate -----------------------------------------------------------------


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    import subprocess

    target = tmp_path_factory.mktemp("clone") / "demo"
    subprocess.run(
        ["git", "clone", "-q", str(EXAMPLES / "candidate" / "repository.bundle"), str(target)],
        check=True,
    )
    return target


def test_candidate_verify_json_writes_only_json(clone: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for bundle, expected in (("bundle.json", 0), ("tampered-bundle.json", 1)):
        code, payload, err = _json_run(
            ["candidate", "verify", str(EXAMPLES / "candidate" / bundle), "--repository", str(clone), "--json"],
            capsys,
        )
        assert code == expected
        assert isinstance(payload, dict)
        assert "refused at check" not in err  # the refusal is in the JSON document only
    code, payload, _ = _json_run(
        ["candidate", "verify", str(EXAMPLES / "candidate" / "bundle.json"), "--repository",
         str(clone.parent / "absent"), "--json"],
        capsys,
    )
    assert code == 2
    assert payload["issues"][0]["code"] == "repository_unavailable"


def test_candidate_receipt_takes_json(clone: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, result, _ = _json_run(
        ["candidate", "verify", str(EXAMPLES / "candidate" / "bundle.json"), "--repository", str(clone), "--json"],
        capsys,
    )
    assert code == 0
    result_path = tmp_path / "result.json"
    result_path.write_text(json.dumps(result), encoding="utf-8")
    context = tmp_path / "context.json"
    context.write_text("{}", encoding="utf-8")
    code, payload, err = _json_run(
        ["candidate", "receipt", str(result_path), "--context", str(context), "--json"], capsys
    )
    assert code == 1
    assert payload["verdict"] == "refused"
    assert payload["document"] == str(context)
    assert err == ""


# -- check -----------------------------------------------------------------------


def _manifest(directory: Path, entries: list[Any]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "manifest.json").write_text(json.dumps(entries), encoding="utf-8")


def test_check_names_the_reason_an_entry_cannot_be_processed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copy(PROFILE, tmp_path / "reviewer.json")
    (tmp_path / "broken.json").write_text("{", encoding="utf-8")
    _manifest(
        tmp_path,
        [
            {"file": "reviewer.json", "schema": "AgentProfile"},
            {"file": "absent.json", "schema": "AgentProfile"},
            {"file": "reviewer.json", "schema": "Nope"},
            {"file": "reviewer.json", "schema": "agentprofil"},
            {"file": "broken.json", "schema": "AgentProfile"},
            {"schema": "AgentProfile"},
            {"file": "reviewer.json", "schema": "AgentProfile", "expect": "maybe"},
        ],
    )
    code, rows, _ = _json_run(["check", str(tmp_path), "--json"], capsys)
    assert code == 1
    reasons = [(row["verdict"], row["issues"][0]["code"] if row["issues"] else None,
                row["issues"][0]["message"] if row["issues"] else None) for row in rows]
    assert reasons[0] == ("accepted", None, None)
    assert reasons[1] == ("unreadable", "file_not_found", "file not found")
    assert reasons[2] == ("unreadable", "unknown_schema", "unknown schema 'Nope'")
    assert reasons[3][1] == "unknown_schema"
    assert reasons[3][2].startswith("unknown schema 'agentprofil' (did you mean: AgentProfile")
    assert reasons[4][1] == "json_invalid"
    assert reasons[5] == ("unreadable", "manifest_entry", 'the entry has no "file"')
    assert reasons[6][1] == "manifest_entry"
    assert main(["check", str(tmp_path)]) == 1
    table = capsys.readouterr().out
    assert "file not found" in table
    assert "unknown schema 'Nope'" in table
    assert "/: unreadable" not in table


def test_check_help_documents_the_manifest_and_its_default(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["check", "--help"])
    out = capsys.readouterr().out
    assert "(default: examples)" in out
    for word in ('"file"', '"schema"', '"expect"', '"digest"', "manifest.json"):
        assert word in out


# -- schema names ------------------------------------------------------------------


def test_one_did_you_mean_that_never_recases_what_was_typed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["validate", "--schema", "agentprofil", str(PROFILE)]) == 2
    err = capsys.readouterr().err
    assert "unknown schema 'agentprofil' (did you mean: AgentProfile" in err
    assert "Agentprofil" not in err
    shutil.copy(PROFILE, tmp_path / "reviewer.json")
    _manifest(tmp_path, [{"file": "reviewer.json", "schema": "agentprofil"}])
    _, rows, _ = _json_run(["check", str(tmp_path), "--json"], capsys)
    assert rows[0]["issues"][0]["message"].endswith(err.strip().split("unknown schema ", 1)[1])
    code, payload, _ = _json_run(["validate", "--schema", "agentprofil", str(PROFILE), "--json"], capsys)
    assert code == 2
    assert payload["suggestions"][0] == "AgentProfile"
    assert "Agentprofil" not in json.dumps(payload)


def test_no_suggestion_for_a_name_nothing_resembles(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "--schema", "Nope", str(PROFILE)]) == 2
    assert capsys.readouterr().err.strip() == "agent-interface: unknown schema 'Nope'"


# -- kb compose --------------------------------------------------------------------


def test_kb_compose_says_when_the_knowledge_base_has_no_entry(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["kb", "compose", str(PROFILE), "--harness", "no-such-harness", "--model", "no-such-model"]) == 0
    err = capsys.readouterr().err
    assert "no entry for harness 'no-such-harness'" in err
    assert "no entry for model 'no-such-model'" in err
    code, payload, _ = _json_run(
        ["kb", "compose", str(PROFILE), "--harness", "no-such-harness", "--json"], capsys
    )
    assert code == 0
    assert any("harness 'no-such-harness'" in notice for notice in payload["notices"])
    assert payload["blocks"] == [] or all(block["source"] for block in payload["blocks"])


def test_kb_compose_is_quiet_when_both_are_known(capsys: pytest.CaptureFixture[str]) -> None:
    code, payload, _ = _json_run(
        ["kb", "compose", str(PROFILE), "--harness", "claude-code", "--model", "claude-sonnet-4-5", "--json"], capsys
    )
    assert code == 0
    assert [notice for notice in payload["notices"] if "harness" in notice] == []


# -- required arguments --------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "option"), [("validate", "--schema"), ("candidate receipt", "--context")]
)
def test_required_options_are_listed_as_required(
    command: str, option: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main([*command.split(), "--help"])
    out = capsys.readouterr().out
    required = out.split("required options:", 1)[1].split("\n\n", 1)[0]
    assert option in required
    usage = out.split("\n\n", 1)[0]
    assert f"[{option}" not in usage
