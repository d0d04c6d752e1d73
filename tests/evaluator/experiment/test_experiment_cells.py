"""Cells that cannot be scored become invalid captures, never crashes or lost cells: a grader
that hangs or floods, a diff over its bound (a link in the workspace is skipped and graded); the retry policy
counts attempts; the cell list follows the suite's seeds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent_interface.candidate.experiment import (
    AgentCandidateExperiment,
    CandidateExecutionEvidence,
)
from agent_interface.candidate.invalid_capture import CandidateInvalidCapture
from agent_interface.evaluator.experiment.cells import (
    CellOutcome,
    CellRequest,
    cell_execution_id,
    experiment_cells,
)
from agent_interface.evaluator.experiment.engine import ExperimentRunOptions, run_experiment
from agent_interface.evaluator.experiment.workers import CellContext
from tests.evaluator.experiment.helpers import PYTHON, make, needs_exact_process, results


def run(paths: dict[str, Path], out: Path, **options: Any) -> Any:
    return run_experiment(paths["experiment"].read_bytes(), ExperimentRunOptions(
        out=out, repository=paths["repository"], artifacts=paths["artifacts"], **options))


def invalid(out: Path, key: str) -> CandidateInvalidCapture:
    record = json.loads((out / "invalid" / f"{key}.json").read_bytes())
    return CandidateInvalidCapture.parse_wire(record["invalidCapture"]).verify_digest()


@needs_exact_process
def test_a_grader_that_hangs_or_floods_makes_invalid_cells(tmp_path: Path) -> None:
    hang = {"commands": [{"name": "tests", "executable": PYTHON, "timeoutMs": 1000,
                          "args": ["-I", "-c", "import time; time.sleep(60)"]}]}
    flood = {"commands": [{"name": "tests", "executable": PYTHON, "timeoutMs": 20000,
                           "args": ["-I", "-c", "import sys; sys.stdout.write('x' * 10_000_000)"]}],
             "maxOutputBytes": 4096}
    for name, grader, code in (("hang", hang, "grader_timeout"), ("flood", flood, "grader_output_truncated")):
        paths = make(tmp_path / name, grader=grader)
        summary = run(paths, tmp_path / f"run-{name}", workers=2)
        assert summary.counts["invalid"] == 2 and summary.counts["done"] == 0, summary
        for key in ("baseline-t0000-r0000", "candidate-t0000-r0000"):
            capture = invalid(tmp_path / f"run-{name}", key)
            assert [reason.code for reason in capture.reasons] == [code]
            assert list(capture.missing) == ["benchmarkResult"]
            if name == "flood":  # the output it wrote is kept, named in the message
                kept = capture.reasons[0].message.split("stdout artifacts/")[1].split(")")[0].split(",")[0]
                assert (tmp_path / f"run-{name}" / "artifacts" / kept).read_bytes() == b"x" * 4096
        assert [cell["reasons"] for cell in results(tmp_path / f"run-{name}")["cells"]] == [[code], [code]]


LINKER = """import json, os, sys, urllib.request
sys.stdin.read()
urllib.request.urlopen(urllib.request.Request(
    os.environ["OPENAI_BASE_URL"] + "/chat/completions",
    data=b'{"model": "demo-model", "messages": [{"role": "user", "content": "hi"}]}',
    headers={"Content-Type": "application/json", "Authorization": "Bearer " + os.environ["OPENAI_API_KEY"]}),
    timeout=30).read()
os.symlink("/etc/passwd", "calc_link.py")
"""


@needs_exact_process
def test_a_link_in_the_workspace_takes_no_part_and_the_cell_is_graded(tmp_path: Path) -> None:
    """A link is skipped by the capture and named in the grader's evidence; the cell is
    graded (a link cannot turn a failed task into an invalid capture)."""
    paths = make(tmp_path / "example", baseline_agent=LINKER)
    summary = run(paths, tmp_path / "run")
    assert summary.counts["done"] == 2, summary
    record = CandidateExecutionEvidence.parse_wire((tmp_path / "run" / "cells" / "baseline-t0000-r0000.json")
                                                  .read_bytes())
    result = record.receipt.benchmark_result.material
    assert result.passed is False
    cid = result.evidence.to_wire()["locator"]["cid"]
    evidence = json.loads((tmp_path / "run" / "artifacts" / cid).read_bytes())
    assert evidence["submission"]["left"] == [{"path": "calc_link.py", "action": "ignored",
                                              "reason": "unsupported-entry"}]


BIG = """import json, os, sys, urllib.request
sys.stdin.read()
urllib.request.urlopen(urllib.request.Request(
    os.environ["OPENAI_BASE_URL"] + "/chat/completions",
    data=b'{"model": "demo-model", "messages": [{"role": "user", "content": "hi"}]}',
    headers={"Content-Type": "application/json", "Authorization": "Bearer " + os.environ["OPENAI_API_KEY"]}),
    timeout=30).read()
with open("big.bin", "wb") as f:
    f.write(os.urandom(20 * 1024 * 1024))
"""


@needs_exact_process
def test_a_workspace_over_its_bound_is_an_invalid_capture(tmp_path: Path) -> None:
    paths = make(tmp_path / "example", baseline_agent=BIG)
    summary = run(paths, tmp_path / "run")
    assert summary.counts["invalid"] == 1 and summary.counts["done"] == 1
    capture = invalid(tmp_path / "run", "baseline-t0000-r0000")
    assert [reason.code for reason in capture.reasons] == ["workspace_too_large"]


def test_cells_follow_the_suite_task_major_with_one_seed_per_repetition(tmp_path: Path) -> None:
    paths = make(tmp_path / "example", reps=3)
    experiment = AgentCandidateExperiment.parse_wire(paths["experiment"].read_bytes())
    cells = experiment_cells(experiment)
    assert [(c.arm, c.repetition, c.seed) for c in cells] == [
        ("baseline", 0, 1), ("candidate", 0, 1), ("baseline", 1, 2), ("candidate", 1, 2),
        ("baseline", 2, 3), ("candidate", 2, 3)]
    ids = {cell_execution_id(experiment.digest, cell, attempt) for cell in cells for attempt in (1, 2)}
    assert len(ids) == 12  # one idempotency key per attempt of each cell
    assert cell_execution_id(experiment.digest, cells[0], 1) == cell_execution_id(experiment.digest, cells[0], 1)


class FlakyRunner:
    """Fails every first attempt before any model call; the second attempt is an invalid capture."""

    async def run(self, request: CellRequest) -> CellOutcome:
        if request.attempt == 1:
            return CellOutcome(request.cell, 1, request.execution_id, "failed",
                               error={"path": "", "code": "environment_unavailable", "message": "no environment"})
        capture = {"digest": "sha256:" + "0" * 64, "missing": ["usage"],
                   "reasons": [{"evidence": "usage", "code": "no_model_calls", "message": "none"}]}
        return CellOutcome(request.cell, request.attempt, request.execution_id, "invalid", invalid_capture=capture)


def flaky(context: CellContext) -> FlakyRunner:
    return FlakyRunner()


def test_attempts_are_counted_under_the_retry_policy(tmp_path: Path) -> None:
    import sqlite3

    retried = make(tmp_path / "retried", retry={"maxAttempts": 2, "retryPolicy": "pre-model-infrastructure-only"})
    summary = run(retried, tmp_path / "run-retried", runner=flaky, verify=False)
    assert summary.counts["invalid"] == 2 and summary.counts["failed"] == 0
    cells = results(tmp_path / "run-retried")["cells"]
    assert [cell["attempt"] for cell in cells] == [2, 2]
    with sqlite3.connect(tmp_path / "run-retried" / "ledger.sqlite3") as db:
        attempts = db.execute("SELECT key, attempt, state, error_code FROM attempts ORDER BY key, attempt").fetchall()
    assert attempts == [("baseline-t0000-r0000", 1, "failed", "environment_unavailable"),
                        ("baseline-t0000-r0000", 2, "invalid", None),
                        ("candidate-t0000-r0000", 1, "failed", "environment_unavailable"),
                        ("candidate-t0000-r0000", 2, "invalid", None)]

    single = make(tmp_path / "single")  # retryPolicy none: the failure is the cell's result
    summary = run(single, tmp_path / "run-single", runner=flaky, verify=False)
    assert summary.counts["failed"] == 2
    failed = json.loads((tmp_path / "run-single" / "failed" / "baseline-t0000-r0000.json").read_bytes())
    assert failed["error"]["code"] == "environment_unavailable"


@needs_exact_process
def test_an_output_task_is_graded_by_the_output_checks(tmp_path: Path) -> None:
    import subprocess

    from agent_interface.core.canonical import canonical_digest

    example = Path(__file__).resolve().parents[3] / "examples" / "candidate"
    clone = tmp_path / "demo"
    subprocess.run(["git", "clone", "-q", str(example / "repository.bundle"), str(clone)], check=True)
    bundle = json.loads((example / "bundle.json").read_bytes())
    material = {"kind": "agent-candidate-experiment", "digestAlgorithm": "rfc8785-sha256",
                "baseline": bundle, "candidate": bundle, "candidateLineage": {"source": "human"},
                "benchmark": {"suite": json.loads((example / "suite.json").read_bytes()),
                              "tasks": [json.loads((example / "task.json").read_bytes())]},
                "policy": {"confidenceLevel": 0.95, "resamples": 2000, "bootstrapSeed": 1, "deltaThreshold": 0,
                           "minProductiveRuns": 3, "budgetUsd": 1, "criticalDimensions": [],
                           "regressionTolerance": 0.05}}
    experiment = {**material, "digest": canonical_digest(material)}
    summary = run_experiment(json.dumps(experiment).encode(), ExperimentRunOptions(
        out=tmp_path / "run", repository=clone, artifacts=example / "artifacts"))
    assert summary.counts["done"] == 2, summary
    for cell in results(tmp_path / "run")["cells"]:
        assert cell["score"] == 1.0 and cell["passed"] is True
        assert [d["name"] for d in cell["dimensions"]] == ["asked-the-model", "greets", "one-line"]


SILENT = """import sys
sys.stdin.read()
with open("calc.py", "w") as f:
    f.write("def add(a, b):\\n    return a + b\\n")
"""


@needs_exact_process
def test_a_run_without_model_calls_settles_to_a_valid_zero_and_is_graded(tmp_path: Path) -> None:
    """The agent's only way out is the gateway, so a gateway that saw no call and settled is
    a valid zero: the cell is done (and graded: the silent agent fixed the bug)."""
    paths = make(tmp_path / "example", baseline_agent=SILENT)
    summary = run(paths, tmp_path / "run")
    assert summary.counts["done"] == 2, summary
    evidence = json.loads((tmp_path / "run" / "cells" / "baseline-t0000-r0000.json").read_bytes())
    settlement = evidence["receipt"]["modelSettlement"]["material"]
    assert settlement["usage"]["modelCalls"] == 0 and settlement["calls"] == [] and settlement["closed"]
    assert evidence["receipt"]["benchmarkResult"]["material"]["passed"] is True
