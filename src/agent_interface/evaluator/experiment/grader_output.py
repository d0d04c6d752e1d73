"""What each cell's grader said, read back from a run directory for the report page.

The workspace grader (:mod:`.task_grader`) keeps, as artifacts of the cell in the run
directory's content-addressed ``artifacts/``, its evidence document (named by the run
receipt's ``benchmarkResult`` evidence) and each command's standard output and error
(named by the evidence). :func:`grader_rows` reads them back for every cell record that
has execution evidence: every read is bounded and checked against its CID, and anything
missing, unreadable, over its bound or of another grader is a note on the row (or no
row), never a refusal of the report. The text is decoded as UTF-8 with replacement; the
page escapes it (:mod:`.report_html`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from agent_interface.candidate.experiment import (
    AgentCandidateExperiment,
    CandidateExecutionEvidence,
)
from agent_interface.evaluator.experiment.comparison import CellRecord
from agent_interface.evaluator.experiment.report_html import (
    MAX_OUTPUT_CHARS,
    GraderCommandView,
    GraderRow,
)
from agent_interface.evaluator.verify.artifact_store import LocalArtifactStore

__all__ = ["MAX_EVIDENCE_BYTES", "grader_rows"]

MAX_EVIDENCE_BYTES: Final = 4 * 1024 * 1024
"""The largest grading evidence document read."""

_KIND: Final = "agent-interface.workspace-command.v1"
_MAX_LEFT: Final = 50
_TAIL_BYTES: Final = 4 * MAX_OUTPUT_CHARS


def _blob(store: LocalArtifactStore, reference: Any, limit: int) -> bytes | None:
    try:
        cid = reference["locator"]["cid"]
        if reference["locator"]["kind"] != "ipfs" or not isinstance(cid, str):
            return None
        return store.get(cid, max_bytes=limit)
    except Exception:  # missing, unreadable, over its bound, not its CID: not shown
        return None


def _tail(store: LocalArtifactStore, record: Any) -> tuple[str, int]:
    size = record.get("byteLength", 0) if isinstance(record, dict) else 0
    if not isinstance(size, int) or size == 0:
        return "", 0
    data = _blob(store, record.get("artifact"), 16 * 1024 * 1024)
    if data is None:
        return "(not kept in this run directory)", size
    return data[-_TAIL_BYTES:].decode("utf-8", errors="replace"), size


def _ended(termination: Any) -> str:
    if not isinstance(termination, dict):
        return "unknown"
    if termination.get("kind") == "exit":
        return f"exit {termination.get('exitCode')}"
    return str(termination.get("kind", "unknown"))[:100]


def _row(store: LocalArtifactStore, experiment: AgentCandidateExperiment,
         record: CandidateExecutionEvidence) -> GraderRow | None:
    cell = record.materialization_receipt.execution_plan.material.run_cell
    task = experiment.benchmark.tasks[cell.task_index]
    material = record.receipt.benchmark_result.material
    if task.outcome.kind != "workspace":
        return None
    task_id, repetition, arm, passed = task.scenario.id, cell.repetition, cell.arm, material.passed
    data = _blob(store, material.evidence.to_wire(), MAX_EVIDENCE_BYTES)
    try:
        evidence = json.loads(data) if data is not None else None
    except (ValueError, UnicodeDecodeError, RecursionError):
        evidence = None
    if not isinstance(evidence, dict) or evidence.get("kind") != _KIND:
        return GraderRow(task_id, repetition, arm, passed, commands=(),
                         note="the grading evidence is not in this run directory")
    commands = []
    for verdict in evidence.get("verdicts", []) if isinstance(evidence.get("verdicts"), list) else []:
        if not isinstance(verdict, dict):
            continue
        stdout, stdout_bytes = _tail(store, verdict.get("stdout"))
        stderr, stderr_bytes = _tail(store, verdict.get("stderr"))
        commands.append(GraderCommandView(str(verdict.get("name", "?"))[:100], verdict.get("passed") is True,
                                          _ended(verdict.get("termination")), stdout, stderr,
                                          stdout_bytes, stderr_bytes))
    found = evidence.get("submission")
    submission: dict[str, Any] = found if isinstance(found, dict) else {}
    items = submission.get("left")
    left = [(str(item.get("path", ""))[:1000], str(item.get("action", ""))[:20], str(item.get("reason", ""))[:40])
            for item in (items if isinstance(items, list) else [])[:_MAX_LEFT] if isinstance(item, dict)]
    count = submission.get("leftCount", len(left))
    return GraderRow(task_id, repetition, arm, passed, commands=tuple(commands), left=tuple(left),
                     left_count=count if isinstance(count, int) else len(left))


def grader_rows(directory: Path, experiment: AgentCandidateExperiment,
                records: Sequence[CellRecord]) -> list[GraderRow]:
    """The grader output of every cell of ``records`` that has execution evidence of a
    workspace task, ordered by task, repetition and arm (none without ``artifacts/``)."""
    if not (directory / "artifacts").is_dir():
        return []
    store = LocalArtifactStore(directory / "artifacts")
    rows: list[tuple[tuple[int, int, str], GraderRow]] = []
    for record in records:
        if isinstance(record, CandidateExecutionEvidence):
            row = _row(store, experiment, record)
            if row is not None:
                cell = record.materialization_receipt.execution_plan.material.run_cell
                rows.append(((cell.task_index, cell.repetition, cell.arm), row))
    return [row for _, row in sorted(rows, key=lambda item: item[0])]
