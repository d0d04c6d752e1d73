"""``candidate run`` summaries lead with how the process ended and never call a timed-out,
killed or failing run passed: not in the receipt, not in the plain or ``--json`` summary,
not in the exit status; an invalid capture shows the termination too."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_interface.cli.main import main
from tests.evaluator.test_candidate_run import ARTIFACTS, GOOD, bundle, pytestmark, task

__all__ = ["pytestmark"]

PRINTS_THEN = GOOD + "sys.stdout.flush()\nimport time, signal\n"
CASES = {
    "timeout": (PRINTS_THEN + "time.sleep(30)\n", {"kind": "timeout", "timeoutMs": 1500}, "did-not-finish",
                "did not finish, not passed: the process timed out after 1.5 s; score 0.0"),
    "sigkill": (PRINTS_THEN + "os.kill(os.getpid(), signal.SIGKILL)\n", {"kind": "signal", "signal": "SIGKILL"},
                "did-not-finish", "did not finish, not passed: the process was killed by SIGKILL; score 0.0"),
    "exit-3": (PRINTS_THEN + "sys.exit(3)\n", {"kind": "exit", "exitCode": 3}, "failed",
               "not passed: the process exited 3; score 0.0"),
    "exit-0": (GOOD, {"kind": "exit", "exitCode": 0}, "passed", "passed: the process exited 0; score 1.0"),
}


def _files(tmp_path: Path, script: str) -> list[str]:
    (tmp_path / "bundle.json").write_bytes(bundle(script))
    (tmp_path / "task.json").write_text(json.dumps(task(script, timeoutMs=1500).to_wire()))
    return ["candidate", "run", str(tmp_path / "bundle.json"), "--task", str(tmp_path / "task.json"),
            "--artifacts", str(ARTIFACTS)]


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_summary_leads_with_the_termination(
    tmp_path: Path, case: str, capsys: pytest.CaptureFixture[str]
) -> None:
    script, termination, verdict, headline = CASES[case]
    args = _files(tmp_path, script)
    code = main([*args, "--out", str(tmp_path / "plain")])
    out = capsys.readouterr().out.splitlines()
    assert out[0] == headline
    assert code == (0 if verdict == "passed" else 4)
    receipt = json.loads((tmp_path / "plain" / "run-receipt.json").read_text())
    assert receipt["termination"] == termination
    assert receipt["benchmarkResult"]["material"]["passed"] is (verdict == "passed")
    code = main([*args, "--out", str(tmp_path / "json"), "--json"])
    summary = json.loads(capsys.readouterr().out)
    assert list(summary)[:5] == ["document", "verdict", "termination", "passed", "score"]
    assert (summary["verdict"], summary["termination"], summary["passed"]) == (verdict, termination,
                                                                               verdict == "passed")
    assert code == (0 if verdict == "passed" else 4)


def test_an_invalid_capture_after_a_timeout_shows_the_termination(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = _files(tmp_path, "import time\ntime.sleep(30)\n")
    code = main([*args, "--out", str(tmp_path / "plain")])
    out = capsys.readouterr().out.splitlines()
    assert code == 3
    assert out[0] == "invalid capture: the process timed out after 1.5 s; missing taskOutcome (task_output_empty)"
    code = main([*args, "--out", str(tmp_path / "json"), "--json"])
    summary = json.loads(capsys.readouterr().out)
    assert code == 3 and summary["verdict"] == "invalid-capture" and summary["passed"] is False
    assert summary["termination"] == {"kind": "timeout", "timeoutMs": 1500}



@pytest.mark.parametrize(("options", "code"), [
    (["--model-upstream", "gpt-4o"], "upstream_spec"),
    (["--model-upstream", "anthropic:https://api.anthropic.com"], "upstream_key_env"),
])
def test_an_unusable_model_upstream_is_refused_before_anything_runs(
    tmp_path: Path, options: list[str], code: str, capsys: pytest.CaptureFixture[str]
) -> None:
    args = _files(tmp_path, GOOD)
    exit_code = main([*args, "--out", str(tmp_path / "out"), "--json", *options])
    payload = json.loads(capsys.readouterr().out)
    assert exit_code == 1 and payload["document"] == "--model-upstream"
    assert [issue["code"] for issue in payload["issues"]] == [code]
    assert not (tmp_path / "out").exists()
