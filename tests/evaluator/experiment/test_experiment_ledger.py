"""The ledger's recovery after a crash at each point between claiming a cell and committing
its result, without running anything."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_interface.core.errors import ContractError
from agent_interface.evaluator.experiment.cells import CellOutcome, ExperimentCell
from agent_interface.evaluator.experiment.ledger import ExperimentLedger, RunDirectory, cell_summary
from agent_interface.evaluator.run.write_atomic import write_bytes_atomic

EXPERIMENT = b'{"digest": "sha256:' + b"a" * 64 + b'"}'
DIGEST = "sha256:" + "a" * 64
CELLS = [ExperimentCell("baseline", 0, 0, 1), ExperimentCell("candidate", 0, 0, 1)]


def invalid(cell: ExperimentCell, execution_id: str) -> CellOutcome:
    capture = {"digest": "sha256:" + "0" * 64, "missing": ["usage"],
               "reasons": [{"evidence": "usage", "code": "no_model_calls", "message": "none"}]}
    return CellOutcome(cell, 1, execution_id, "invalid", invalid_capture=capture)


def open_ledger(root: Path) -> tuple[RunDirectory, ExperimentLedger]:
    directory = RunDirectory(root)
    directory.open(EXPERIMENT, DIGEST)
    return directory, ExperimentLedger(directory, DIGEST, CELLS)


def test_a_crash_after_the_record_file_recovers_the_cell_without_running_it(tmp_path: Path) -> None:
    directory, ledger = open_ledger(tmp_path)
    ledger.claim(CELLS[0], 1, "cell-one")
    outcome = invalid(CELLS[0], "cell-one")
    summary = cell_summary(outcome)
    record = {"kind": "agent-interface.experiment-invalid-cell.v1", "executionId": "cell-one", "summary": summary}
    write_bytes_atomic(directory.record_path("invalid", CELLS[0].key), json.dumps(record).encode())  # then: kill -9
    ledger.close()
    directory.close()

    directory, ledger = open_ledger(tmp_path)
    assert ledger.recover() == {"recovered": 1, "rerun": 0}
    assert [cell for cell, _ in ledger.pending()] == [CELLS[1]]
    assert ledger.results()["cells"] == [summary]
    assert ledger.runs() == {CELLS[0].key: 1, CELLS[1].key: 0}
    ledger.close()
    directory.close()


def test_a_crash_before_the_record_file_runs_the_cell_again_under_the_same_key(tmp_path: Path) -> None:
    directory, ledger = open_ledger(tmp_path)
    ledger.claim(CELLS[0], 1, "cell-one")  # then: kill -9
    ledger.close()
    directory.close()
    directory, ledger = open_ledger(tmp_path)
    assert ledger.recover() == {"recovered": 0, "rerun": 1}
    assert ledger.pending() == [(CELLS[0], 1), (CELLS[1], 1)]
    ledger.close()
    directory.close()


def test_a_stale_record_of_another_attempt_is_not_taken_for_the_claimed_one(tmp_path: Path) -> None:
    directory, ledger = open_ledger(tmp_path)
    ledger.claim(CELLS[0], 1, "cell-one")
    record = {"executionId": "cell-other", "summary": cell_summary(invalid(CELLS[0], "cell-other"))}
    write_bytes_atomic(directory.record_path("invalid", CELLS[0].key), json.dumps(record).encode())
    assert ledger.recover() == {"recovered": 0, "rerun": 1}
    ledger.close()
    directory.close()


def test_a_settled_cell_whose_record_is_gone_or_altered_runs_again(tmp_path: Path) -> None:
    directory, ledger = open_ledger(tmp_path)
    for cell in CELLS:
        ledger.claim(cell, 1, f"id-{cell.arm}")
        outcome = invalid(cell, f"id-{cell.arm}")
        summary = cell_summary(outcome)
        ledger.settle(outcome, {"executionId": outcome.execution_id, "summary": summary}, summary)
    assert ledger.recover() == {"recovered": 0, "rerun": 0}
    directory.record_path("invalid", CELLS[0].key).unlink()
    directory.record_path("invalid", CELLS[1].key).write_text("{}")
    assert ledger.recover() == {"recovered": 0, "rerun": 2}
    assert [cell for cell, _ in ledger.pending()] == CELLS
    ledger.close()
    directory.close()


def test_the_ledger_of_another_experiment_is_refused(tmp_path: Path) -> None:
    directory, ledger = open_ledger(tmp_path)
    ledger.close()
    with pytest.raises(ContractError) as refused:
        ExperimentLedger(directory, "sha256:" + "b" * 64, CELLS)
    assert refused.value.issues[0].code == "experiment_changed"
    directory.close()
