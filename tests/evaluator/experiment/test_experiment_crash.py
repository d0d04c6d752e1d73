"""``kill -9`` of a real ``experiment run`` process mid-experiment, then ``experiment run``
again: finished cells are kept as they were, the interrupted cell runs again under the
same idempotency key, no cell is counted twice, and the results are byte-identical to an
uninterrupted run's."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.evaluator.experiment.helpers import ROOT, cli_args, make, needs_exact_process

pytestmark = needs_exact_process


def start(args: list[str]) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.Popen([sys.executable, "-m", "agent_interface", *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)


def ledger_rows(out: Path) -> dict[str, tuple[str, str | None, int]]:
    try:
        with sqlite3.connect(f"file:{out / 'ledger.sqlite3'}?mode=ro", uri=True, timeout=1) as db:
            rows = db.execute("SELECT key, state, execution_id, runs FROM cells").fetchall()
    except sqlite3.Error:
        return {}
    return {key: (state, execution_id, runs) for key, state, execution_id, runs in rows}


def digests(out: Path) -> dict[str, str]:
    return {path.name: hashlib.sha256(path.read_bytes()).hexdigest() for path in (out / "cells").glob("*.json")}


@pytest.fixture(scope="module")
def uninterrupted_results(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """``results.json`` of the same experiment run without interruption (the example's ids
    are the same wherever it is made)."""
    root = tmp_path_factory.mktemp("clean")
    paths = make(root / "example", reps=2)
    clean = start(cli_args(paths, root / "run"))
    _, stderr = clean.communicate(timeout=300)
    assert clean.returncode == 0, stderr
    return (root / "run" / "results.json").read_bytes()


@pytest.mark.parametrize("settled_before_kill", [0, 2])
def test_kill_9_mid_experiment_then_resume(tmp_path: Path, settled_before_kill: int,
                                           uninterrupted_results: bytes) -> None:
    paths = make(tmp_path / "example", reps=2)
    out = tmp_path / "run"
    process = start(cli_args(paths, out))
    deadline = time.monotonic() + 120
    while True:
        assert process.poll() is None, process.communicate()
        rows = ledger_rows(out)
        settled = sum(state == "done" for state, _, _ in rows.values())
        if settled >= settled_before_kill and any(state == "running" for state, _, _ in rows.values()):
            break
        assert time.monotonic() < deadline, "the run never reached the point to kill it"
        time.sleep(0.05)
    os.kill(process.pid, signal.SIGKILL)
    process.communicate(timeout=120)  # no descendant of the killed run may keep its pipes open
    before = ledger_rows(out)
    kept = digests(out)
    interrupted = {key: row for key, row in before.items() if row[0] == "running"}
    assert len(interrupted) == 1

    resumed = start(cli_args(paths, out))
    stdout, stderr = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, stderr
    summary = json.loads(stdout)
    assert summary["cells"]["done"] == 4 and summary["cells"]["failed"] == 0
    assert summary["recovered"] + summary["ran"] == 4 - sum(row[0] == "done" for row in before.values())
    after = ledger_rows(out)
    for key, (state, execution_id, runs) in before.items():
        if state == "done":  # finished cells are kept, untouched
            assert after[key] == (state, execution_id, runs)
            assert digests(out)[f"{key}.json"] == kept[f"{key}.json"]
    for key, (_, execution_id, _) in interrupted.items():  # same idempotency key, once in the results
        assert after[key][1] == execution_id
    results = json.loads((out / "results.json").read_bytes())["cells"]
    assert sorted(cell["key"] for cell in results) == sorted(before)
    assert (out / "results.json").read_bytes() == uninterrupted_results
