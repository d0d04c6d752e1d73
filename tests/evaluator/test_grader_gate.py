"""The output-checks grader gates on the termination: a run that did not exit 0 neither
passes nor scores, and the evidence keeps what the checks said of its partial output."""

from __future__ import annotations

import json

import pytest

from agent_interface.evaluator.run.grader import finished_cleanly, grade_output


@pytest.mark.parametrize(
    "termination",
    [{"kind": "timeout", "timeoutMs": 10}, {"kind": "signal", "signal": "SIGKILL"}, {"kind": "cancelled"},
     {"kind": "exit", "exitCode": 3}],
)
def test_a_run_that_did_not_exit_0_neither_passes_nor_scores(termination: dict[str, object]) -> None:
    checks = [{"name": "greets", "contains": "hello"}]
    graded = grade_output(checks, b"hello", termination)
    assert (graded.passed, graded.score) == (False, 0.0)
    evidence = json.loads(graded.evidence)
    assert evidence["outputScore"] == 1.0 and evidence["termination"] == termination
    clean = grade_output(checks, b"hello", {"kind": "exit", "exitCode": 0})
    assert (clean.passed, clean.score) == (True, 1.0)


def test_finished_cleanly_means_exit_0_only() -> None:
    assert finished_cleanly({"kind": "exit", "exitCode": 0})
    assert not finished_cleanly({"kind": "exit", "exitCode": 1})
    assert not finished_cleanly(None) and not finished_cleanly({"kind": "cancelled"})
