"""``experiment plan``: the power preflight of an experiment's suite, before any cell runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_interface.cli.main import main
from tests.evaluator.measured_fixtures import experiment


def _write(tmp_path: Path, tasks: int, reps: int) -> str:
    path = tmp_path / f"e{tasks}x{reps}.json"
    path.write_text(json.dumps(experiment(tasks, reps).to_wire()), encoding="utf-8")
    return str(path)


def test_a_small_suite_is_warned_it_cannot_decide(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["experiment", "plan", _write(tmp_path, 3, 3)]) == 0
    out = capsys.readouterr().out
    assert "power preflight: 3 tasks x 3 repetitions, level 0.95 (one-sided 0.025)" in out
    assert "warning: fewer than 6 tasks can never decide at this level" in out


def test_a_large_suite_prints_its_minimum_detectable_improvement(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["experiment", "plan", _write(tmp_path, 60, 5), "--json", "--target", "0.2"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["verdict"] == "planned" and plan["tasks"] == 60 and plan["reps"] == 5
    assert 0 < plan["minimumDetectableDelta"] < 0.2 and plan["warnings"] == []
    assert plan["tasksForTarget"] <= 60


def test_a_refused_experiment_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"kind": "nope"}), encoding="utf-8")
    assert main(["experiment", "plan", str(path), "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["verdict"] == "refused"
    assert main(["experiment", "plan", str(path), "--target", "-1"]) == 2
