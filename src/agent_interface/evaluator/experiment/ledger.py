"""The run directory of an experiment and its SQLite ledger, built to survive ``kill -9``.

A run directory ``DIR`` holds:

* ``experiment.json``: the experiment, written once; a later run with another experiment
  in the same directory is refused (``experiment_changed``);
* ``ledger.sqlite3``: one row per cell (state ``pending``, ``running``, ``done``,
  ``invalid`` or ``failed``; the counted attempt and its idempotency key; the digests of
  the materialization receipt, run receipt, execution evidence or invalid capture and of
  the record file; the typed error of a failed cell; run times) and one row per attempt;
* ``cells/KEY.json``: the ``CandidateExecutionEvidence`` of each ``done`` cell (the input
  of the measured comparison and the report); ``invalid/KEY.json``: the materialization
  receipt and ``CandidateInvalidCapture`` of each ``invalid`` cell; ``failed/KEY.json``:
  the typed error of each ``failed`` cell;
* ``artifacts/``: the content-addressed store every cell's evidence points into (one
  copy of each blob, shared by cells);
* ``results.json``: the cells' deterministic results (no wall-clock time), the same bytes
  for the same cells whichever engine ran them.

Every file is written atomically (a temporary file renamed) and the ledger commits in
WAL mode with ``synchronous=FULL``. The order is: claim the cell (``running``), run it,
write its artifacts and record file, then commit its state. After a crash,
:meth:`ExperimentLedger.recover` settles each ``running`` cell from its record file when
that file holds the claimed attempt (recovered), and otherwise returns it to ``pending``
(run again under the same idempotency key); a settled cell whose record file is missing
or altered is run again too. A cell is never counted twice: its row is its one result.
One process at a time holds the directory (``run_directory_busy``).

The local workers' temporary directories (the cells' providers, workspaces and diffs) go
under one scratch directory of the run, ``$TMPDIR/aic-run-<16 hex of the directory's
path>`` (short, as the Unix socket paths inside need; mode 0o711, traversable by a
container's user as a container provider's root needs but not listable, owned by the runner,
a pre-existing one of anyone else's refused): opening the run directory sweeps it (what a
run killed by ``kill -9`` left, mounts under it detached first), closing it removes it, so
no ``agent-interface-cell-*`` directory outlives a resumed run in the temporary directory.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import sqlite3
import stat
import tempfile
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Final

from agent_interface.core.errors import ContractError
from agent_interface.evaluator.experiment.cells import CellOutcome, ExperimentCell
from agent_interface.evaluator.images.tree_removal import detach_mounts_below, remove_tree
from agent_interface.evaluator.run.write_atomic import write_bytes_atomic

_SCRATCH_MODE: Final = 0o711
__all__ = ["ExperimentLedger", "RunDirectory", "cell_summary"]

_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS cells (
    key TEXT PRIMARY KEY, position INTEGER NOT NULL, arm TEXT NOT NULL, task_index INTEGER NOT NULL,
    repetition INTEGER NOT NULL, seed INTEGER NOT NULL, state TEXT NOT NULL DEFAULT 'pending',
    attempt INTEGER NOT NULL DEFAULT 1, execution_id TEXT, runs INTEGER NOT NULL DEFAULT 0,
    materialization_digest TEXT, receipt_digest TEXT, evidence_digest TEXT, invalid_digest TEXT,
    record_path TEXT, record_digest TEXT, error_code TEXT, error_message TEXT, summary TEXT,
    program_ms INTEGER, evaluator_ms INTEGER, updated_at_ms INTEGER);
CREATE TABLE IF NOT EXISTS attempts (
    key TEXT NOT NULL, attempt INTEGER NOT NULL, execution_id TEXT NOT NULL, state TEXT NOT NULL,
    error_code TEXT, model_calls INTEGER NOT NULL, PRIMARY KEY (key, attempt));
"""
_SETTLED: Final = ("done", "invalid", "failed")


def _refuse(code: str, message: str) -> ContractError:
    return ContractError.single("/out", code, message, subject="experiment run directory")


def _digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _json_bytes(document: Any) -> bytes:
    return (json.dumps(document, ensure_ascii=False, indent=2, sort_keys=False) + "\n").encode()


class RunDirectory:
    """The paths of a run directory (see the module docstring) and its lock."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)
        self.experiment = self.root / "experiment.json"
        self.ledger = self.root / "ledger.sqlite3"
        self.cells = self.root / "cells"
        self.invalid = self.root / "invalid"
        self.failed = self.root / "failed"
        self.artifacts = self.root / "artifacts"
        self.results = self.root / "results.json"
        digest = hashlib.sha256(os.fsencode(self.root.resolve())).hexdigest()[:16]
        self.scratch = Path(tempfile.gettempdir()) / f"aic-run-{digest}"
        self._lock: int | None = None

    def open(self, experiment_bytes: bytes, experiment_digest: str) -> None:
        """Create or reopen the directory for this experiment; lock it for this process.

        Refused: another experiment already there (``experiment_changed``), or another
        process holding the directory (``run_directory_busy``)."""
        self.root.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.root / ".lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise _refuse("run_directory_busy", "another process is running this experiment directory") from None
        self._lock = fd
        if self.experiment.exists():
            try:
                existing = json.loads(self.experiment.read_bytes()).get("digest")
            except (ValueError, AttributeError):
                existing = None
            if existing != experiment_digest:
                self.close()
                raise _refuse("experiment_changed",
                              "this directory holds the run of another experiment; use a new directory")
        else:
            write_bytes_atomic(self.experiment, experiment_bytes)
        for directory in (self.cells, self.invalid, self.failed, self.artifacts):
            directory.mkdir(exist_ok=True)
        self.sweep_scratch()

    @contextlib.contextmanager
    def driver_scratch(self) -> Iterator[None]:
        """While inside, this process's temporary directories (``tempfile``) go under the
        run's scratch directory (made if missing, never swept here: :meth:`open` sweeps it
        under the lock), so a driver killed mid-step leaves nothing in ``$TMPDIR`` itself."""
        made = False
        with contextlib.suppress(FileExistsError):
            os.mkdir(self.scratch, 0o700)
            os.chmod(self.scratch, _SCRATCH_MODE)
            made = True
        status = os.lstat(self.scratch)
        if not stat.S_ISDIR(status.st_mode) or status.st_uid != os.geteuid() or stat.S_IMODE(status.st_mode) != _SCRATCH_MODE:
            raise _refuse("run_directory_scratch", "the run's scratch directory cannot be made as a private directory")
        before = tempfile.tempdir
        tempfile.tempdir = str(self.scratch)
        try:
            yield
        finally:
            tempfile.tempdir = before
            if made and self._lock is None:  # refused before the run opened: leave nothing
                with contextlib.suppress(OSError):
                    os.rmdir(self.scratch)

    def sweep_scratch(self, *, make: bool = True) -> None:
        """Empty the run's scratch directory (what a killed run's workers left) and, with
        ``make``, make it anew: mode 0o711, owned by this process's user, else refused."""
        for _ in range(3):
            if self.scratch.is_dir() and not self.scratch.is_symlink():
                detach_mounts_below(self.scratch)
            remove_tree(self.scratch, ignore_errors=True)
            if not make:
                return
            try:
                os.mkdir(self.scratch, 0o700)
            except FileExistsError:
                continue
            os.chmod(self.scratch, _SCRATCH_MODE)
            status = os.lstat(self.scratch)
            if stat.S_ISDIR(status.st_mode) and status.st_uid == os.geteuid() and stat.S_IMODE(status.st_mode) == _SCRATCH_MODE:
                return
        raise _refuse("run_directory_scratch", "the run's scratch directory cannot be made as a private directory")

    def close(self) -> None:
        """Remove the run's scratch directory and release the directory's lock."""
        if self._lock is not None:
            self.sweep_scratch(make=False)
            os.close(self._lock)
            self._lock = None

    def record_path(self, outcome_state: str, key: str) -> Path:
        """Where a settled cell's record file is kept."""
        folder = {"done": self.cells, "invalid": self.invalid, "failed": self.failed}[outcome_state]
        return folder / f"{key}.json"


def cell_summary(outcome: CellOutcome) -> dict[str, Any]:
    """The deterministic result of a settled cell (no wall-clock time, no run-specific path)."""
    cell = outcome.cell
    summary: dict[str, Any] = {"key": cell.key, "arm": cell.arm, "taskIndex": cell.task_index,
                               "repetition": cell.repetition, "seed": cell.seed, "state": outcome.state,
                               "attempt": outcome.attempt, "executionId": outcome.execution_id}
    receipt = outcome.materialization_receipt
    if receipt is not None:
        summary["materializationReceipt"] = receipt["digest"]
        summary["executionPlan"] = receipt["executionPlan"]["digest"]
    if outcome.evidence is not None:
        run = outcome.evidence["receipt"]
        result = run["benchmarkResult"]["material"]
        summary.update(taskOutcome=run["taskOutcome"]["digest"], score=result["score"], passed=result["passed"],
                       dimensions=result["dimensions"], termination=run["termination"])
    if outcome.invalid_capture is not None:
        summary.update(missing=outcome.invalid_capture["missing"],
                       reasons=[reason["code"] for reason in outcome.invalid_capture["reasons"]])
    if outcome.error is not None:
        summary["error"] = outcome.error
    return summary


class ExperimentLedger:
    """The SQLite ledger of one run directory (one writer: the engine's driver)."""

    def __init__(self, directory: RunDirectory, experiment_digest: str, cells: Iterable[ExperimentCell]) -> None:
        self.directory = directory
        self._db = sqlite3.connect(directory.ledger, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.executescript(_SCHEMA)
        with self._transaction():
            row = self._db.execute("SELECT value FROM meta WHERE key='experiment'").fetchone()
            if row is not None and row[0] != experiment_digest:
                raise _refuse("experiment_changed", "the ledger belongs to another experiment")
            self._db.execute("INSERT OR IGNORE INTO meta VALUES ('experiment', ?)", (experiment_digest,))
            self._db.executemany(
                "INSERT OR IGNORE INTO cells (key, position, arm, task_index, repetition, seed) VALUES (?,?,?,?,?,?)",
                [(c.key, i, c.arm, c.task_index, c.repetition, c.seed) for i, c in enumerate(cells)])

    def _transaction(self) -> Any:
        db = self._db

        class _Tx:
            def __enter__(self) -> None:
                db.execute("BEGIN IMMEDIATE")

            def __exit__(self, kind: Any, *_: Any) -> None:
                db.execute("COMMIT" if kind is None else "ROLLBACK")

        return _Tx()

    def close(self) -> None:
        """Close the database."""
        self._db.close()

    def recover(self) -> dict[str, int]:
        """Settle or reset every interrupted cell (module docstring); counts of each action."""
        counts = {"recovered": 0, "rerun": 0}
        rows = self._db.execute(
            "SELECT key, state, execution_id, record_path, record_digest, arm, task_index, repetition, seed, attempt "
            "FROM cells WHERE state != 'pending'").fetchall()
        for key, state, execution_id, record_path, record_digest, arm, task, rep, seed, attempt in rows:
            if state in _SETTLED:
                path = Path(record_path) if record_path else None
                if path is not None and path.is_file() and _digest(path.read_bytes()) == record_digest:
                    continue
                self._reset(key)
                counts["rerun"] += 1
                continue
            cell = ExperimentCell(arm, task, rep, seed)
            record = self._record_of(cell, attempt, execution_id)
            if record is None:
                self._reset(key)
                counts["rerun"] += 1
            else:
                state_found, path, data, summary = record
                with self._transaction():
                    self._db.execute(
                        "UPDATE cells SET state=?, record_path=?, record_digest=?, summary=? WHERE key=?",
                        (state_found, str(path), _digest(data), json.dumps(summary), key))
                counts["recovered"] += 1
        return counts

    def _record_of(self, cell: ExperimentCell, attempt: int,
                   execution_id: str | None) -> tuple[str, Path, bytes, dict[str, Any]] | None:
        """A record file holding the claimed attempt of ``cell``, if one was written."""
        for state in _SETTLED:
            path = self.directory.record_path(state, cell.key)
            if not path.is_file():
                continue
            data = path.read_bytes()
            try:
                document = json.loads(data)
                if state == "done":
                    found = document["materializationReceipt"]["executionPlan"]["material"]["executionId"]
                    summary = cell_summary(CellOutcome(cell, attempt, found, "done",
                                                       materialization_receipt=document["materializationReceipt"],
                                                       evidence=document))
                else:
                    found, summary = document["executionId"], document["summary"]
            except (ValueError, KeyError, TypeError):
                return None
            if found == execution_id:
                return state, path, data, summary
        return None

    def _reset(self, key: str) -> None:
        with self._transaction():
            self._db.execute("UPDATE cells SET state='pending', record_path=NULL, record_digest=NULL WHERE key=?",
                             (key,))

    def pending(self) -> list[tuple[ExperimentCell, int]]:
        """The cells still to run, in order, each with the attempt to run next."""
        rows = self._db.execute("SELECT arm, task_index, repetition, seed, attempt FROM cells "
                                "WHERE state='pending' ORDER BY position").fetchall()
        return [(ExperimentCell(arm, task, rep, seed), attempt) for arm, task, rep, seed, attempt in rows]

    def claim(self, cell: ExperimentCell, attempt: int, execution_id: str) -> None:
        """Mark ``cell`` running ``attempt`` under ``execution_id``."""
        with self._transaction():
            self._db.execute("UPDATE cells SET state='running', attempt=?, execution_id=?, runs=runs+1, "
                             "updated_at_ms=? WHERE key=?",
                             (attempt, execution_id, int(time.time() * 1000), cell.key))

    def retry(self, outcome: CellOutcome) -> None:
        """Record a failed attempt and make the cell pending for the next one."""
        with self._transaction():
            self._attempt(outcome)
            self._db.execute("UPDATE cells SET state='pending', attempt=? WHERE key=?",
                             (outcome.attempt + 1, outcome.cell.key))

    def _attempt(self, outcome: CellOutcome) -> None:
        self._db.execute("INSERT OR REPLACE INTO attempts VALUES (?,?,?,?,?,?)",
                         (outcome.cell.key, outcome.attempt, outcome.execution_id, outcome.state,
                          (outcome.error or {}).get("code"), outcome.model_calls))

    def settle(self, outcome: CellOutcome, record: dict[str, Any], summary: dict[str, Any]) -> None:
        """Write the cell's record file atomically, then commit its state and digests."""
        path = self.directory.record_path(outcome.state, outcome.cell.key)
        data = _json_bytes(record)
        write_bytes_atomic(path, data)
        receipt = outcome.materialization_receipt or {}
        evidence = outcome.evidence or {}
        with self._transaction():
            self._attempt(outcome)
            self._db.execute(
                "UPDATE cells SET state=?, attempt=?, execution_id=?, materialization_digest=?, receipt_digest=?, "
                "evidence_digest=?, invalid_digest=?, record_path=?, record_digest=?, error_code=?, error_message=?, "
                "summary=?, program_ms=?, evaluator_ms=?, updated_at_ms=? WHERE key=?",
                (outcome.state, outcome.attempt, outcome.execution_id, receipt.get("digest"),
                 (evidence.get("receipt") or {}).get("digest"), evidence.get("digest"),
                 (outcome.invalid_capture or {}).get("digest"), str(path), _digest(data),
                 (outcome.error or {}).get("code"), (outcome.error or {}).get("message"), json.dumps(summary),
                 outcome.program_ms, outcome.evaluator_ms, int(time.time() * 1000), outcome.cell.key))

    def counts(self) -> dict[str, int]:
        """How many cells are in each state."""
        counts = dict.fromkeys(("pending", "running", "done", "invalid", "failed"), 0)
        for state, count in self._db.execute("SELECT state, COUNT(*) FROM cells GROUP BY state"):
            counts[state] = count
        return counts

    def runs(self) -> dict[str, int]:
        """How many times each cell was started (a re-run after a crash counts here, once per start)."""
        return dict(self._db.execute("SELECT key, runs FROM cells").fetchall())

    def results(self) -> dict[str, Any]:
        """Every settled cell's summary, in cell order (``results.json``)."""
        rows = self._db.execute("SELECT summary FROM cells WHERE state IN ('done','invalid','failed') "
                                "ORDER BY position").fetchall()
        experiment = self._db.execute("SELECT value FROM meta WHERE key='experiment'").fetchone()[0]
        return {"kind": "agent-interface.experiment-results.v1", "experiment": experiment,
                "cells": [json.loads(row[0]) for row in rows]}

    def write_results(self) -> None:
        """Write ``results.json`` atomically (sorted keys: the same cells give the same bytes)."""
        write_bytes_atomic(self.directory.results,
                           (json.dumps(self.results(), sort_keys=True, indent=2) + "\n").encode())

    def timings(self) -> list[tuple[int, int]]:
        """``(program_ms, evaluator_ms)`` of every cell run to a receipt or invalid capture."""
        rows = self._db.execute("SELECT program_ms, evaluator_ms FROM cells WHERE state IN ('done','invalid') "
                                "AND program_ms IS NOT NULL").fetchall()
        return [(int(a), int(b)) for a, b in rows]
