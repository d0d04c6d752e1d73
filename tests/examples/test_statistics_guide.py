"""The experiment-statistics page's Python runs as written, on a run directory it expects.

The page reads ``runs/nightly`` (an experiment and its cells, as ``experiment run``
writes them); the test makes one of 3 tasks x 2 repetitions in a scratch directory and
runs the page's blocks there, in order, in one namespace.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.evaluator.measured_fixtures import cell, experiment
from tests.examples.test_guide import GUIDE, python_blocks


def test_the_statistics_page_runs_on_a_run_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    exp = experiment(3, 2)
    directory = tmp_path / "runs" / "nightly"
    (directory / "cells").mkdir(parents=True)
    (directory / "experiment.json").write_text(json.dumps(exp.to_wire()))
    for index in range(6):
        task, rep = divmod(index, 2)
        for arm, score in (("baseline", 0.2 + index / 60), ("candidate", 0.5 + index / 60)):
            record = cell(exp, arm, task, rep, score)
            (directory / "cells" / f"{arm}-{index}.json").write_text(json.dumps(record.to_wire()))
    monkeypatch.chdir(tmp_path)
    page = GUIDE / "experiments-statistics.md"
    blocks = python_blocks(page.read_text(encoding="utf-8"))
    assert blocks
    namespace: dict[str, object] = {}
    for index, block in enumerate(blocks):
        exec(compile(block, f"{page.name}[block {index + 1}]", "exec"), namespace)
    assert (directory / "comparison.json").is_file() and (directory / "report.html").is_file()
