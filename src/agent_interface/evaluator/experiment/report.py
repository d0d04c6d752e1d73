"""The report of an experiment: ``comparison.json`` and a self-contained ``report.html``.

The run directory contract (what ``experiment run --out DIR`` writes and
``experiment report DIR`` reads):

* ``DIR/experiment.json``: the :class:`AgentCandidateExperiment` (wire JSON);
* ``DIR/cells/*.json``: one document per cell record, either a
  :class:`CandidateExecutionEvidence` (``kind`` ``agent-candidate-execution-evidence``)
  or a :class:`CandidateInvalidCapture` (``kind``
  ``agent-interface.candidate-invalid-capture``); file names are free, order does not matter;
* optionally, ``DIR/artifacts/`` (the content-addressed store the engine writes), from
  which the page shows each workspace cell's grader output (:mod:`.grader_output`);
* optionally, as the experiment engine writes them, ``DIR/invalid/*.json`` (``kind``
  ``agent-interface.experiment-invalid-cell.v1``, the capture under ``invalidCapture``)
  and ``DIR/failed/*.json`` (``agent-interface.experiment-failed-cell.v1``: a cell that
  could not run, its typed ``error`` and its ``summary``); a failed cell is a missing cell,
  shown with its error.

A directory holding only ``comparison.json`` (an
:class:`AgentImprovementMeasuredComparison`), or that file itself, is read as it stands;
its summary is shown as the document states it, with a note when recomputing it from its
cells under its frozen policy gives other figures.

:func:`write_report` writes ``OUT/comparison.json`` (canonical JSON) when the suite is
complete, and ``OUT/report.html`` always. Every document is parsed by its wire model; a
file over :data:`MAX_DOCUMENT_BYTES`, anything but a regular file, a non-JSON file or a refused document is a typed
refusal naming the file.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from agent_interface.candidate.experiment import (
    AgentCandidateExperiment,
    AgentImprovementMeasuredComparison,
    CandidateExecutionEvidence,
    candidate_execution_cost_usd,
    candidate_execution_latency_ms,
)
from agent_interface.candidate.invalid_capture import CandidateInvalidCapture
from agent_interface.core.canonical import canonical_bytes
from agent_interface.core.errors import ContractError, ContractIssue
from agent_interface.evaluator.experiment.comparison import (
    CellRecord,
    ComparisonContext,
    ExperimentAnalysis,
    analyze_cells,
    mint_measured_comparison,
)
from agent_interface.evaluator.experiment.grader_output import grader_rows
from agent_interface.evaluator.experiment.report_html import (
    CellRow,
    GraderRow,
    InvalidRow,
    ReportView,
    render_report_html,
)

__all__ = [
    "MAX_DOCUMENT_BYTES",
    "ExperimentReport",
    "failed_cells",
    "load_run_directory",
    "report_view",
    "write_report",
]

MAX_DOCUMENT_BYTES: Final = 256 * 1024 * 1024
"""The largest document file read (a comparison of a large suite holds every cell)."""

_EVIDENCE = "agent-candidate-execution-evidence"
_INVALID = "agent-interface.candidate-invalid-capture"
_INVALID_CELL = "agent-interface.experiment-invalid-cell.v1"
_FAILED_CELL = "agent-interface.experiment-failed-cell.v1"


@dataclass(frozen=True, slots=True)
class ExperimentReport:
    """What :func:`write_report` wrote: the comparison (``None`` for an incomplete suite),
    the analysis it was shown from, and the two paths."""

    comparison: AgentImprovementMeasuredComparison | None
    analysis: ExperimentAnalysis
    comparison_path: Path | None
    html_path: Path


def _refuse(path: Path, code: str, message: str) -> ContractError:
    return ContractError([ContractIssue("", code, message)], subject=path.name)


def _read_json(path: Path) -> tuple[bytes, Any]:
    """The document's bytes (which ``parse_wire`` reads as JavaScript reads JSON) and value."""
    try:
        status = path.stat()
        if not stat.S_ISREG(status.st_mode):  # a FIFO or a device would block or never end
            raise _refuse(path, "not_a_file", "document is not a regular file")
        size = status.st_size
        if size > MAX_DOCUMENT_BYTES:
            raise _refuse(path, "document_too_large", f"document is over {MAX_DOCUMENT_BYTES} bytes")
        with path.open("rb") as handle:
            data = handle.read(MAX_DOCUMENT_BYTES + 1)
    except OSError as error:
        reason = error.strerror or type(error).__name__
        raise _refuse(path, "unreadable", f"cannot read the document ({reason})") from None
    try:
        return data, json.loads(data)
    except (ValueError, RecursionError):
        pass
    raise _refuse(path, "not_json", "document is not JSON")


def _parse(path: Path, model: Any, value: Any) -> Any:
    try:
        return model.parse_wire(value)
    except ContractError as error:
        issues = error.issues
    raise ContractError(list(issues), subject=path.name)


def load_run_directory(directory: Path) -> tuple[AgentCandidateExperiment, list[CellRecord]]:
    """The experiment and every cell record of a run directory (see the module docstring)."""
    path = directory / "experiment.json"
    experiment = _parse(path, AgentCandidateExperiment, _read_json(path)[0])
    records: list[CellRecord] = []
    for path in _documents(directory, "cells", "invalid"):
        data, value = _read_json(path)
        kind = value.get("kind") if isinstance(value, dict) else None
        document: Any = data
        if kind == _INVALID_CELL:
            document, kind = value.get("invalidCapture"), _INVALID
        if kind == _EVIDENCE:
            records.append(_parse(path, CandidateExecutionEvidence, document))
        elif kind == _INVALID:
            records.append(_parse(path, CandidateInvalidCapture, document))
        else:
            raise _refuse(path, "cell_kind", "cell document is neither execution evidence nor an invalid capture")
    return experiment, records


def _documents(directory: Path, *folders: str) -> list[Path]:
    paths: list[Path] = []
    for folder in folders:
        where = directory / folder
        if where.is_dir():
            paths += [where / name for name in sorted(os.listdir(where)) if name.endswith(".json")]
    return paths


def failed_cells(directory: Path) -> dict[tuple[str, int, int], str]:
    """Why each cell in ``DIR/failed`` could not run, by ``(arm, task index, repetition)``
    (for display only: such a cell is a missing cell). Unreadable files are skipped."""
    reasons: dict[tuple[str, int, int], str] = {}
    for path in _documents(directory, "failed"):
        try:
            _, value = _read_json(path)
        except ContractError:
            continue
        if not isinstance(value, dict) or value.get("kind") != _FAILED_CELL:
            continue
        summary, error = value.get("summary"), value.get("error")
        if not isinstance(summary, dict) or not isinstance(error, dict):
            continue
        key = (summary.get("arm"), summary.get("taskIndex"), summary.get("repetition"))
        if isinstance(key[0], str) and isinstance(key[1], int) and isinstance(key[2], int):
            reasons[(key[0], key[1], key[2])] = (
                f"could not run: {str(error.get('code', 'error'))[:200]}: "
                f"{str(error.get('message', ''))[:1000]}"
            )
    return reasons


def _task_label(experiment: AgentCandidateExperiment, index: int) -> str:
    return experiment.benchmark.tasks[index].scenario.id


def _end(record: CellRecord | None) -> str:
    if record is None:
        return "missing"
    if isinstance(record, CandidateInvalidCapture):
        return "invalid capture"
    termination = record.receipt.termination
    if termination.kind == "exit":
        return f"exit {termination.exit_code}"
    return termination.kind


def _why_missing(analysis: ExperimentAnalysis, index: int, arm: str, failed: str | None) -> str:
    later = analysis.later_attempts.get((index, arm))
    if later is not None:
        return (f"only attempt {later} has a record: a comparison publishes first attempts only"
                + (f" ({failed})" if failed else ""))
    return failed or "no first-attempt record"


def report_view(
    analysis: ExperimentAnalysis,
    comparison: AgentImprovementMeasuredComparison | None = None,
    notes: Sequence[str] = (),
    failed: Mapping[tuple[str, int, int], str] | None = None,
    graders: Sequence[GraderRow] = (),
) -> ReportView:
    """What the page shows of ``analysis`` (or of ``comparison``'s own summary, when given);
    ``failed`` says why cells without a record could not run; ``graders`` is each cell's
    grader output (:func:`.grader_output.grader_rows`)."""
    failed = failed or {}
    experiment = analysis.experiment
    rows = []
    invalid = []
    for index, pair in enumerate(analysis.pairs):
        values: dict[str, tuple[float | None, float | None, float | None]] = {}
        for arm in ("baseline", "candidate"):
            record = getattr(pair, arm)
            if isinstance(record, CandidateExecutionEvidence):
                values[arm] = (
                    record.receipt.benchmark_result.material.score,
                    candidate_execution_cost_usd(record),
                    candidate_execution_latency_ms(record),
                )
            else:
                values[arm] = (None, None, None)
                invalid.append(
                    InvalidRow(
                        _task_label(experiment, pair.task_index),
                        pair.repetition,
                        arm,
                        "everything" if record is None else ", ".join(record.missing),
                        _why_missing(analysis, index, arm, failed.get((arm, pair.task_index, pair.repetition)))
                        if record is None
                        else "; ".join(f"{gap.code}: {gap.message}" for gap in record.reasons),
                    )
                )
        b_end, c_end = _end(pair.baseline), _end(pair.candidate)
        rows.append(
            CellRow(
                _task_label(experiment, pair.task_index), pair.repetition, pair.seed,
                values["baseline"][0], values["candidate"][0],
                values["baseline"][1], values["candidate"][1],
                values["baseline"][2], values["candidate"][2],
                b_end if b_end == c_end else f"{b_end} / {c_end}",
            )
        )
    label, diff = None, ""
    if comparison is not None:
        wire = comparison.to_wire()
        summary = {key: wire[key] for key in ("overall", "objectives", "decision", "power")}
        evaluation, provenance, diff = wire["evaluation"], wire["provenance"], comparison.diff
        if comparison.candidate is not None:
            label = comparison.candidate.label or comparison.candidate.rationale
    else:
        summary, evaluation, provenance = analysis.summary, analysis.accounting, None
    info = analysis.metadata["agentInterface"]
    suite = experiment.benchmark.suite
    benchmark = experiment.benchmark.tasks[0].benchmark
    return ReportView(
        title="Experiment report",
        experiment_digest=experiment.digest,
        benchmark=f"{benchmark.name} {benchmark.version}",
        tasks=len(experiment.benchmark.tasks),
        reps=suite.reps,
        policy=experiment.policy.to_wire(),
        summary=summary,
        evaluation=evaluation,
        tokens=info["tokens"],
        cells=info["cells"],
        rows=rows,
        invalid=invalid,
        provenance=provenance,
        notes=tuple(notes),
        published=comparison is not None,
        label=label,
        diff=diff,
        graders=tuple(graders),
    )


def _recomputed_notes(
    comparison: AgentImprovementMeasuredComparison, analysis: ExperimentAnalysis
) -> list[str]:
    wire = comparison.to_wire()
    same = all(
        canonical_bytes(wire[key]) == canonical_bytes(analysis.summary.get(key))
        for key in ("overall", "objectives", "decision")
    )
    if same:
        return ["Recomputed from the document's cells under its frozen policy: the estimates and "
                "the decision are identical."]
    return ["Warning: recomputing the estimates and the decision from this document's cells under "
            "its frozen policy gives other figures than the document states; the page shows the "
            "document's own."]


def _write(path: Path, data: bytes) -> None:
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_bytes(data)
    os.replace(temporary, path)


def _from_comparison(
    comparison: AgentImprovementMeasuredComparison, context: ComparisonContext | None
) -> tuple[AgentImprovementMeasuredComparison, ExperimentAnalysis, list[str]]:
    cells = [record for m in comparison.measurements for record in (m.baseline, m.candidate)]
    analysis = analyze_cells(comparison.experiment, cells, context)
    return comparison, analysis, _recomputed_notes(comparison, analysis)


def _load(
    source: Path | str | AgentImprovementMeasuredComparison, context: ComparisonContext | None
) -> tuple[AgentImprovementMeasuredComparison | None, ExperimentAnalysis, list[str], list[GraderRow]]:
    if isinstance(source, AgentImprovementMeasuredComparison):
        return (*_from_comparison(source, context), [])
    path = Path(source)
    if path.is_dir() and (path / "experiment.json").exists():
        experiment, records = load_run_directory(path)
        analysis = analyze_cells(experiment, records, context)
        graders = grader_rows(path, experiment, records)
        if not analysis.complete:
            return None, analysis, [], graders
        comparison = mint_measured_comparison(experiment, analysis, context)
        return comparison, analysis, [], graders
    file = path / "comparison.json" if path.is_dir() else path
    parsed = _parse(file, AgentImprovementMeasuredComparison, _read_json(file)[0])
    return (*_from_comparison(parsed, context), [])


def write_report(
    source: Path | str | AgentImprovementMeasuredComparison,
    out_dir: Path | str,
    context: ComparisonContext | None = None,
) -> ExperimentReport:
    """Write ``comparison.json`` (complete suites) and ``report.html`` into ``out_dir``.

    ``source`` is a run directory, a directory or file holding ``comparison.json``, or a
    comparison. Refuses unreadable or refused documents (typed, naming the file).
    """
    comparison, analysis, notes, graders = _load(source, context)
    failed = failed_cells(Path(source)) if isinstance(source, (str, Path)) and Path(source).is_dir() else {}
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    comparison_path = None
    if comparison is not None:
        comparison_path = out / "comparison.json"
        _write(comparison_path, canonical_bytes(comparison.to_wire()))
    html_path = out / "report.html"
    page = render_report_html(report_view(analysis, comparison, notes, failed, graders))
    _write(html_path, page.encode("utf-8"))
    return ExperimentReport(comparison, analysis, comparison_path, html_path)
