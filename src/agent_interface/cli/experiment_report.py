"""``experiment report DIR [--out OUT] [--json]``: the measured comparison and its page.

``DIR`` is a run directory (``experiment.json`` and ``cells/*.json``, see
:mod:`agent_interface.evaluator.experiment.report`), a directory holding
``comparison.json``, or that file. Writes ``OUT/comparison.json`` (when every cell of both
arms was measured) and ``OUT/report.html`` (always); ``OUT`` defaults to ``DIR`` (the
file's directory). Exit codes: 0 written with a comparison, 1 refused (an incomplete suite,
whose report is still written, or a refused document), 2 unreadable input.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from agent_interface.cli.conventions import EXIT_OK, EXIT_REFUSED, CommandError, emit_json
from agent_interface.core.errors import ContractError, printable
from agent_interface.evaluator.experiment.comparison import ComparisonContext
from agent_interface.evaluator.experiment.report import write_report

__all__ = ["cmd_experiment_report", "register"]

_UNREADABLE = frozenset({"unreadable", "not_json", "not_a_file", "document_too_large"})


def _refused(args: argparse.Namespace, error: ContractError) -> int:
    if any(issue.code in _UNREADABLE for issue in error.issues):
        issue = error.issues[0]
        raise CommandError(issue.code, issue.message, document=error.subject or args.directory)
    if args.json:
        emit_json(
            {
                "document": error.subject or args.directory,
                "verdict": "refused",
                "issues": [issue.to_dict() for issue in error.issues],
            }
        )
    else:
        print(printable(f"{error.subject or args.directory}: refused"), file=sys.stderr)
        for issue in error.issues:
            print(printable(f"  {issue}"), file=sys.stderr)
    return EXIT_REFUSED


def cmd_experiment_report(args: argparse.Namespace) -> int:
    """``experiment report DIR``: write the comparison and the report page."""
    source = Path(args.directory)
    if not source.exists():
        raise CommandError("file_not_found", "no such file or directory", document=args.directory)
    out = Path(args.out) if args.out else (source if source.is_dir() else source.parent)
    context = ComparisonContext(run_id=args.run_id, label=args.label)
    try:
        report = write_report(source, out, context)
    except ContractError as error:
        return _refused(args, error)
    summary = report.analysis.summary
    outcome = (report.comparison.decision.outcome if report.comparison else summary["decision"]["outcome"])
    payload: dict[str, Any] = {
        "document": args.directory,
        "verdict": "published" if report.comparison is not None else "incomplete",
        "decision": outcome,
        "comparison": str(report.comparison_path) if report.comparison_path else None,
        "report": str(report.html_path),
        "cells": report.analysis.metadata["agentInterface"]["cells"],
    }
    if args.json:
        emit_json(payload)
    else:
        overall = (report.comparison.to_wire() if report.comparison else summary).get("overall")
        print(f"decision: {outcome}")
        if overall is not None:
            ci = overall["confidenceInterval"]
            print(
                f"overall: {overall['baseline']:.4g} -> {overall['candidate']:.4g}, delta "
                f"{overall['delta']:+.4g} [{ci['lower']:+.4g}, {ci['upper']:+.4g}] "
                f"({ci['level']:g} interval, n={overall['n']})"
            )
        if report.comparison_path is not None:
            print(printable(f"wrote {report.comparison_path}"))
        else:
            cells = payload["cells"]
            print(
                f"no comparison: {cells['invalidCapture']} invalid captures and {cells['missing']} "
                "missing cells (the contract needs every cell of both arms)",
                file=sys.stderr,
            )
        print(printable(f"wrote {report.html_path}"))
    return EXIT_OK if report.comparison is not None else EXIT_REFUSED


def register(actions: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``report`` to the ``experiment`` group."""
    report = actions.add_parser(
        "report",
        help="write the measured comparison (comparison.json) and a self-contained report.html",
        description="Read a run directory (experiment.json and cells/*.json) or a "
        "comparison.json and write OUT/comparison.json (when every cell of both arms was "
        "measured) and OUT/report.html.",
    )
    report.add_argument("directory", metavar="DIR", help="run directory, or comparison.json")
    report.add_argument("--out", metavar="OUT", help="where to write (default: DIR)")
    report.add_argument("--run-id", help="the run's identity in the comparison's provenance")
    report.add_argument("--label", help="the candidate's label in the comparison")
    report.add_argument("--json", action="store_true", help="machine-readable output")
    report.set_defaults(handler=cmd_experiment_report)
