"""``experiment run`` end to end on the default engine with the example experiment: cells,
workspace outcomes graded by the task's own tests, the run directory, resumption of a
finished run, and the refusals that come before any cell runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_interface.candidate.experiment import (
    AgentCandidateExperiment,
    CandidateExecutionEvidence,
)
from agent_interface.cli.main import main
from agent_interface.core.canonical import canonical_digest
from agent_interface.core.errors import ContractError
from agent_interface.evaluator.experiment.engine import ExperimentRunOptions, run_experiment
from agent_interface.evaluator.experiment.ledger import RunDirectory
from tests.evaluator.experiment.helpers import cli_args, make, needs_exact_process

pytestmark = needs_exact_process


def run_json(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    code = main(args)
    return code, json.loads(capsys.readouterr().out)


def test_the_example_runs_end_to_end_and_resumes_to_nothing(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    paths = make(tmp_path / "example")
    out = tmp_path / "run"
    code, summary = run_json(cli_args(paths, out, "--workers", "2"), capsys)
    assert code == 0, summary
    assert summary["cells"] == {"pending": 0, "running": 0, "done": 2, "invalid": 0, "failed": 0}
    experiment = AgentCandidateExperiment.parse_wire(paths["experiment"].read_bytes())
    assert json.loads((out / "experiment.json").read_bytes())["digest"] == experiment.digest
    scores = {}
    for path in sorted((out / "cells").glob("*.json")):
        evidence = CandidateExecutionEvidence.parse_wire(path.read_bytes()).verify_digest()
        cell = evidence.materialization_receipt.execution_plan.material.run_cell
        assert cell.experiment_digest == experiment.digest and cell.attempt == 1 and cell.seed == 1
        outcome = evidence.receipt.task_outcome.material.outcome.to_wire()
        assert outcome["kind"] == "workspace"
        assert outcome["baseRepository"]["tree"] == experiment.benchmark.tasks[0].repository.base_tree
        diff = (out / "artifacts" / outcome["gitDiff"]["artifact"]["locator"]["cid"]).read_bytes()
        scores[cell.arm] = (evidence.receipt.benchmark_result.material.score, diff)
    assert scores["baseline"][0] == 0.0 and b"+    return a * b" in scores["baseline"][1]
    assert scores["candidate"][0] == 1.0 and b"+    return a + b" in scores["candidate"][1]
    first = (out / "results.json").read_bytes()

    code, again = run_json(cli_args(paths, out), capsys)
    assert code == 0 and again["ran"] == 0 and again["recovered"] == 0
    assert (out / "results.json").read_bytes() == first


def test_a_changed_experiment_in_the_same_directory_is_refused(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    paths = make(tmp_path / "example")
    out = tmp_path / "run"
    out.mkdir()
    (out / "experiment.json").write_text(json.dumps({"digest": canonical_digest({"other": 1})}))
    code, summary = run_json(cli_args(paths, out), capsys)
    assert code == 1 and summary["issues"][0]["code"] == "experiment_changed"
    assert not (out / "ledger.sqlite3").exists()


def test_a_busy_directory_is_refused(tmp_path: Path) -> None:
    paths = make(tmp_path / "example")
    experiment = paths["experiment"].read_bytes()
    holder = RunDirectory(tmp_path / "run")
    holder.open(experiment, json.loads(experiment)["digest"])
    try:
        with pytest.raises(ContractError) as refused:
            run_experiment(experiment, ExperimentRunOptions(out=tmp_path / "run", repository=paths["repository"],
                                                            artifacts=paths["artifacts"]))
        assert refused.value.issues[0].code == "run_directory_busy"
    finally:
        holder.close()


def reseal(document: dict[str, Any]) -> dict[str, Any]:
    material = {key: value for key, value in document.items() if key != "digest"}
    return {**material, "digest": canonical_digest(material)}


def refusal(tmp_path: Path, capsys: pytest.CaptureFixture[str], change: Any) -> dict[str, Any]:
    paths = make(tmp_path / "example")
    document = json.loads(paths["experiment"].read_bytes())
    change(document)
    paths["experiment"].write_text(json.dumps(document))
    code, summary = run_json(cli_args(paths, tmp_path / "run"), capsys)
    assert code == 1, summary
    assert not (tmp_path / "run").exists()
    issue: dict[str, Any] = summary["issues"][0]
    return issue


def test_an_experiment_whose_digest_does_not_match_is_refused(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    def change(document: dict[str, Any]) -> None:
        document["policy"]["bootstrapSeed"] = 7

    assert refusal(tmp_path, capsys, change)["code"] == "digest_mismatch"


def test_a_suite_whose_seeds_do_not_match_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def change(document: dict[str, Any]) -> None:
        suite = document["benchmark"]["suite"]
        document["benchmark"]["suite"] = reseal({**suite, "seeds": [1, 2]})
        document.update(reseal(document))

    issue = refusal(tmp_path, capsys, change)
    assert issue["code"] == "seed_count" and issue["path"] == "/benchmark/suite/seeds"


def test_a_task_that_does_not_verify_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def change(document: dict[str, Any]) -> None:
        document["benchmark"]["tasks"][0]["instruction"] = "Do something else."
        document.update(reseal(document))

    issue = refusal(tmp_path, capsys, change)
    assert issue["code"] == "digest_mismatch" and issue["path"].startswith("/benchmark/tasks/0")


def test_a_bundle_that_does_not_verify_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def change(document: dict[str, Any]) -> None:
        candidate = document["candidate"]
        candidate["code"]["candidateTree"] = candidate["code"]["baseTree"][:-1] + (
            "0" if candidate["code"]["baseTree"][-1] != "0" else "1")
        document["candidate"] = reseal(candidate)
        document.update(reseal(document))

    issue = refusal(tmp_path, capsys, change)
    assert issue["path"].startswith("/candidate")


def test_a_workspace_snapshot_that_is_not_the_base_tree_is_refused(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    def change(document: dict[str, Any]) -> None:
        task = document["benchmark"]["tasks"][0]
        task["repository"]["baseTree"] = "1" * 40
        task = reseal(task)
        document["benchmark"]["tasks"][0] = task
        document["benchmark"]["suite"] = reseal({**document["benchmark"]["suite"], "taskDigests": [task["digest"]]})
        document.update(reseal(document))

    issue = refusal(tmp_path, capsys, change)
    assert issue["code"] == "workspace_base_mismatch" and issue["path"] == "/benchmark/tasks/0/workspace"


def test_the_progress_bar_draws_done_running_invalid_failed_and_eta(monkeypatch: pytest.MonkeyPatch) -> None:
    import io
    import sys

    from agent_interface.cli.experiment import _ProgressBar
    from agent_interface.evaluator.experiment.engine import ExperimentProgress

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    bar = _ProgressBar(True)
    bar(ExperimentProgress(total=4, done=1, invalid=1, failed=0, running=2, elapsed_s=3.0, eta_s=6.0))
    bar.finish()
    drawn = terminal.getvalue()
    assert "2/4" in drawn and "running 2" in drawn and "invalid 1" in drawn and "failed 0" in drawn
    assert "eta 6s" in drawn


def test_a_missing_repository_or_unreadable_experiment_is_not_run(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    paths = make(tmp_path / "example")
    args = cli_args(paths, tmp_path / "run")
    args[args.index("--repository") + 1] = str(tmp_path / "nowhere")
    code, summary = run_json(args, capsys)
    assert code == 2 and summary["issues"][0]["code"] == "not_a_directory"
    (tmp_path / "broken.json").write_text("{")
    code, summary = run_json(["experiment", "run", str(tmp_path / "broken.json"), "--out", str(tmp_path / "run"),
                              "--json"], capsys)
    assert code == 2 and summary["issues"][0]["code"] == "json_invalid"
    code, summary = run_json(cli_args(paths, tmp_path / "run", "--address", "127.0.0.1:1"), capsys)
    assert code == 2 and summary["verdict"] == "usage"
    assert not (tmp_path / "run").exists()
