"""``experiment``: run a baseline against a candidate on a whole suite.

``experiment run EXPERIMENT.json --out DIR [--workers N] [--engine local|ray --address
ADDR] [--repository R] [--artifacts A] [--executor auto|container|host] [--images STORE_DIR
[--image-layout DIR | --image-archive FILE]] [--image NAME@sha256:INDEX] [--cell-memory-mb MIB]
[--cell-cpus N] [--json]``
verifies both bundles, runs every cell
(see ``agent_interface.evaluator.experiment.engine``) into the run directory ``DIR`` and
writes ``results.json``; run it again on the same ``DIR`` to resume after any
interruption. While it runs, a progress bar (cells done, running, failed, invalid, ETA)
is drawn on stderr when stderr is a terminal (never with ``--json``). The container options
are ``candidate run``'s (:mod:`.candidate_images`): cells whose bundle pins a container or
whose task selects one run in it (see ``agent_interface.evaluator.experiment.container_cells``).
``--cell-memory-mb`` and ``--cell-cpus`` set every cell's resources (:mod:`.cell_resources`).

Exit status (the CLI conventions, :mod:`agent_interface.cli.conventions`): 0 every cell
settled with a receipt or an invalid capture; 1 refused (the experiment, a task or a
bundle does not verify, the directory holds another experiment or is busy); 2 not run
(unreadable input, no repository, ray missing or unreachable, bad usage); 3 some cells
failed (each with its typed error in ``failed/KEY.json`` and the summary).

The group's other actions live in modules of their own and are added here: ``experiment
new`` (:mod:`.authoring`) and ``experiment report`` (:mod:`.experiment_report`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Final

from agent_interface.cli import authoring, experiment_plan, experiment_report
from agent_interface.cli.candidate_images import add_image_options, experiment_image_options
from agent_interface.cli.candidate_inputs import add_model_options
from agent_interface.cli.cell_resources import add_resource_options, resources_of
from agent_interface.cli.conventions import EXIT_OK, EXIT_REFUSED, CommandError, emit_json

__all__ = ["EXIT_CELLS_FAILED", "cmd_experiment_run", "register"]

EXIT_CELLS_FAILED: Final = 3


_RUN_EXIT_HELP = (
    "besides the exit statuses below:\n"
    "  3  some cells failed: they could not run (each with its typed error in failed/KEY.json)"
)


class _ProgressBar:
    """A ``rich`` progress bar on stderr when it is a terminal; nothing otherwise."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled and sys.stderr.isatty()
        self._progress: Any = None
        self._task: Any = None

    def __call__(self, progress: Any) -> None:
        if not self.enabled:
            return
        if self._progress is None:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeRemainingColumn,
            )

            self._progress = Progress(TextColumn("cells"), BarColumn(), MofNCompleteColumn(),
                                      TextColumn("{task.fields[detail]}"), TimeRemainingColumn(),
                                      console=Console(stderr=True), transient=False)
            self._progress.start()
            self._task = self._progress.add_task("cells", total=progress.total, detail="")
        settled = progress.done + progress.invalid + progress.failed
        detail = (f"running {progress.running}  invalid {progress.invalid}  failed {progress.failed}"
                  + ("" if progress.eta_s is None else f"  eta {progress.eta_s:.0f}s"))
        self._progress.update(self._task, completed=settled, detail=detail)

    def finish(self) -> None:
        if self._progress is not None:
            self._progress.stop()


def _refused(args: argparse.Namespace, error: Any) -> int:
    if args.json:
        emit_json({"document": args.experiment, "verdict": "refused",
                   "issues": [issue.to_dict() for issue in error.issues]})
        return EXIT_REFUSED
    print(f"{args.experiment}: refused", file=sys.stderr)
    for issue in error.issues:
        print(f"  {issue.path or '/'}: {issue.message} [{issue.code}]", file=sys.stderr)
    return EXIT_REFUSED


def _directory(path: str | None) -> Path | None:
    if path is not None and not Path(path).is_dir():
        raise CommandError("not_a_directory", "not a directory", document=path)
    return None if path is None else Path(path)


def cmd_experiment_run(args: argparse.Namespace) -> int:
    """``experiment run``: see the module docstring."""
    from agent_interface.cli.main import parse_json_bytes, read_bytes
    from agent_interface.core.errors import ContractError
    from agent_interface.evaluator.experiment.engine import ExperimentRunOptions, run_experiment
    from agent_interface.evaluator.git.errors import RepositoryUnavailable

    data = read_bytes(args.experiment)
    parse_json_bytes(data, args.experiment)
    if args.engine != "ray" and args.address is not None:
        raise CommandError("usage", "--address goes with --engine ray")
    progress = _ProgressBar(not args.json)
    try:
        images = experiment_image_options(args, data)
        store = images["images"]
        options = ExperimentRunOptions(out=Path(args.out), repository=_directory(args.repository),
                                       artifacts=_directory(args.artifacts), workers=args.workers, engine=args.engine,
                                       address=args.address, progress=progress, executor=images["executor"],
                                       images=None if store is None else store.root, image=images["image"],
                                       resources=resources_of(args),
                                       model_upstream=args.model_upstream, model_key_env=args.model_key_env)
        summary = run_experiment(data, options)
    except RepositoryUnavailable as exc:
        raise CommandError("repository_unavailable", str(exc), document=args.repository) from None
    except ContractError as error:
        if error.issues[0].code in ("ray_unavailable", "ray_unreachable"):
            raise CommandError(error.issues[0].code, error.issues[0].message) from None
        return _refused(args, error)
    finally:
        progress.finish()
    failed = summary.counts["failed"]
    payload = {"document": args.experiment, "verdict": "ran" if not failed else "cells-failed",
               "out": str(summary.out), "experiment": summary.experiment, "cells": summary.counts,
               "recovered": summary.recovered, "rerun": summary.rerun, "ran": summary.ran,
               "seconds": round(summary.seconds, 3), "results": str(summary.results),
               "failures": [{"key": cell["key"], **cell["error"]} for cell in summary.failures]}
    if args.json:
        emit_json(payload)
    else:
        counts = summary.counts
        print(f"{summary.out}: {counts['done']} done, {counts['invalid']} invalid, {failed} failed "
              f"({summary.ran} run now, {summary.recovered} recovered) in {summary.seconds:.1f}s")
        for failure in payload["failures"]:
            print(f"  {failure['key']}: {failure['message']} [{failure['code']}]", file=sys.stderr)
    return EXIT_OK if not failed else EXIT_CELLS_FAILED


def _workers(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("not a whole number") from None
    if value <= 0:
        raise argparse.ArgumentTypeError("must be positive")
    return value


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``experiment`` group: ``run`` here, ``new`` and ``report`` from their modules."""
    experiment = subparsers.add_parser("experiment", help="run a baseline against a candidate on a suite")
    actions = experiment.add_subparsers(dest="experiment_command", required=True, metavar="ACTION")
    run = actions.add_parser(
        "run", help="run every cell of an experiment into a resumable run directory",
        description="Verify both bundles, run every (arm, task, repetition) cell and write the run "
        "directory (experiment.json, ledger.sqlite3, cells/, invalid/, failed/, artifacts/, results.json); "
        "run again on the same directory to resume.",
        epilog=_RUN_EXIT_HELP,
    )
    run.add_argument("experiment", metavar="EXPERIMENT.json", help="the AgentCandidateExperiment, or - for stdin")
    run.add_argument("--out", metavar="DIR", required=True, help="the run directory (created, or resumed)")
    run.add_argument("--workers", metavar="N", type=_workers, default=1,
                     help="cells at a time (local: at most this machine's CPUs; default 1)")
    run.add_argument("--engine", choices=("local", "ray"), default="local", help="where cells run (default local)")
    run.add_argument("--address", metavar="ADDR", help="the Ray cluster's address (with --engine ray)")
    run.add_argument("--repository", metavar="PATH", help="local clone holding the bundles' base commit")
    run.add_argument("--artifacts", metavar="DIR", help="external artifacts, files named by CID or sha256 hex")
    add_image_options(run)
    add_resource_options(run)
    add_model_options(run)
    run.add_argument("--json", action="store_true", help="print the summary (and any error) as JSON")
    run.set_defaults(handler=cmd_experiment_run)
    authoring.register_experiment_new(actions)
    experiment_plan.register(actions)
    experiment_report.register(actions)
