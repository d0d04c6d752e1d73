"""Hostile experiment documents are refused, typed, before any cell runs and before the
run directory is made: a document over the size bound (not even parsed) and an
experiment whose cells (tasks x repetitions x 2 arms) exceed the cell bound."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from agent_interface.core.errors import ContractError
from agent_interface.evaluator.experiment.engine import (
    ExperimentRunOptions,
    prepare_experiment,
    run_experiment,
)
from tests.evaluator.experiment.helpers import make


def _options(tmp_path: Path, paths: dict[str, Path], **more: object) -> ExperimentRunOptions:
    return ExperimentRunOptions(out=tmp_path / "run", repository=paths["repository"], artifacts=paths["artifacts"],
                                verify=False, **more)  # type: ignore[arg-type]


def test_a_document_over_the_size_bound_is_refused_unread(tmp_path: Path) -> None:
    paths = make(tmp_path / "example", reps=1)
    document = paths["experiment"].read_bytes()
    prepare_experiment(document, _options(tmp_path, paths, max_document_bytes=len(document)))  # accepted at the bound
    huge = b"[" + b"1," * (40 << 20) + b"1]"  # 80 MiB of a JSON array: refused before any parsing
    started = time.monotonic()
    with pytest.raises(ContractError) as error:
        run_experiment(huge, _options(tmp_path, paths))
    assert error.value.issues[0].code == "experiment_too_large"
    assert time.monotonic() - started < 30  # a watchdog on a loaded machine, not a timing claim
    assert not (tmp_path / "run").exists()


def test_more_cells_than_the_bound_are_refused_before_any_cell(tmp_path: Path) -> None:
    paths = make(tmp_path / "example", reps=2)
    document = paths["experiment"].read_bytes()
    experiment, _ = prepare_experiment(document, _options(tmp_path, paths, max_cells=4))  # 1 task x 2 reps x 2 arms
    assert experiment.benchmark.suite.reps == 2
    with pytest.raises(ContractError) as error:
        run_experiment(document, _options(tmp_path, paths, max_cells=3))
    issue = error.value.issues[0]
    assert (issue.code, issue.path) == ("experiment_too_large", "/benchmark/suite/reps")
    assert not (tmp_path / "run").exists()
