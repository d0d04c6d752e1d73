"""``candidate run`` and ``candidate materialize``: act on a verified bundle.

``candidate run BUNDLE --repository PATH --task TASK --out DIR [--suite SUITE]
[--artifacts DIR] [--cell-memory-mb MIB] [--cell-cpus N] [--json]`` verifies, plans, runs
the candidate in a local exact-process environment (an OCI container for container
bundles: the options of :mod:`agent_interface.cli.candidate_images`; its resources set by
:mod:`agent_interface.cli.cell_resources`) and writes ``materialization-receipt.json`` and ``run-receipt.json`` (or
``invalid-capture.json``) into ``DIR``. While it runs, a progress line is drawn on stderr
when stderr is a terminal (never with ``--json``).

``candidate materialize BUNDLE --repository PATH --into DIR [--artifacts DIR] [--json]``
verifies, then writes the code tree and the bundle's snapshots into ``DIR`` (see
``agent_interface.evaluator.run.materialize``).

Both follow the CLI conventions (:mod:`agent_interface.cli.conventions`): exit 0 done,
1 refused (the check, JSON Pointer and rule; with ``--json`` the refusal document on
stdout), 2 not run (unreadable input, an unusable repository, bad usage; with ``--json``
the error document). For ``run``, 0 means the candidate passed, 3 invalid capture
(``invalid-capture.json`` names what is missing) and 4 not passed (the run receipt is
written; the candidate failed the grader, exited non-zero, timed out, was killed or was
cancelled). The summary leads with how the process ended.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from typing import Any

from agent_interface.cli.candidate_images import add_image_options, image_options
from agent_interface.cli.candidate_inputs import (
    add_model_options,
    directory_option,
    read_document,
    refused,
    repository_error,
)
from agent_interface.cli.cell_resources import add_resource_options, resources_of
from agent_interface.cli.conventions import EXIT_OK, emit_json

__all__ = [
    "EXIT_INVALID_CAPTURE",
    "EXIT_NOT_PASSED",
    "cmd_candidate_materialize",
    "cmd_candidate_run",
    "register",
    "run_summary",
    "termination_text",
]

EXIT_INVALID_CAPTURE = 3
EXIT_NOT_PASSED = 4

_RUN_EXIT_HELP = (
    "besides the exit statuses below (0 means the candidate passed):\n"
    "  3  invalid capture: the run ended but its evidence is incomplete (invalid-capture.json)\n"
    "  4  not passed: the run receipt is written, but the candidate failed the grader, exited\n"
    "     non-zero, timed out, was killed by a signal or was cancelled"
)
_MIB = 1 << 20


def termination_text(termination: Mapping[str, Any] | None) -> str:
    """How the process ended, in words: ``exited 0``, ``timed out after 1.5 s``,
    ``was killed by SIGKILL``, ``was cancelled`` (``ended for no known reason`` when unknown)."""
    if not termination:
        return "ended for no known reason"
    kind = termination.get("kind")
    if kind == "exit":
        return f"exited {termination.get('exitCode')}"
    if kind == "timeout":
        return f"timed out after {termination.get('timeoutMs', 0) / 1000:g} s"
    if kind == "signal":
        return f"was killed by {termination.get('signal')}"
    return "was cancelled" if kind == "cancelled" else f"ended ({kind})"


def run_summary(result: Any, bundle: str) -> tuple[dict[str, Any], str, int]:
    """The ``--json`` summary of a run, its one-line headline and the exit status.

    Both lead with how the process ended. The verdict is ``passed`` (exit 0 and the grader
    passed; exit 0), ``failed`` (it ended by itself but did not pass), ``did-not-finish``
    (timed out, killed by a signal or cancelled: never passed, whatever its output held),
    both exit 4, or ``invalid-capture`` (exit 3, with the termination when one is known).
    """
    summary: dict[str, Any] = {"document": bundle}
    if result.run_receipt is not None:
        receipt = result.run_receipt
        termination = receipt.termination.to_wire()
        material = receipt.benchmark_result.material
        if termination["kind"] != "exit":
            verdict = "did-not-finish"
        else:
            verdict = "passed" if material.passed and termination["exitCode"] == 0 else "failed"
        summary.update(verdict=verdict, termination=termination, passed=verdict == "passed", score=material.score)
        label = {"passed": "passed", "failed": "not passed", "did-not-finish": "did not finish, not passed"}
        headline = f"{label[verdict]}: the process {termination_text(termination)}; score {material.score}"
        code = EXIT_OK if verdict == "passed" else EXIT_NOT_PASSED
    else:
        capture = result.invalid_capture
        wire = capture.to_wire()
        summary.update(verdict="invalid-capture", termination=wire.get("termination"), passed=False)
        reasons = ", ".join(reason.code for reason in capture.reasons)
        headline = (f"invalid capture: the process {termination_text(wire.get('termination'))}; "
                    f"missing {', '.join(capture.missing)} ({reasons})")
        code = EXIT_INVALID_CAPTURE
    summary.update(out=str(result.out), materializationReceipt=result.materialization_receipt.digest,
                   executionPlan=result.plan.digest)
    if result.run_receipt is not None:
        summary["runReceipt"] = result.run_receipt.digest
    else:
        summary.update(invalidCapture=result.invalid_capture.digest, missing=list(result.invalid_capture.missing),
                       reasons=[reason.code for reason in result.invalid_capture.reasons])
    return summary, headline, code


def _print_summary(summary: dict[str, Any], as_json: bool, headline: str | None = None) -> None:
    if as_json:
        emit_json(summary)
        return
    import json

    if headline is not None:
        print(headline)
    for key, value in summary.items():
        shown = json.dumps(value) if isinstance(value, dict | list) or value is None else value
        print(f"{key:24} {shown}")


class _ProgressLine:
    """One line on a terminal, redrawn in place; nothing when stderr is not a terminal."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled and sys.stderr.isatty()
        self.drawn = False

    def __call__(self, progress: Any) -> None:
        if not self.enabled:
            return
        elapsed = progress.elapsed_ms / 1000
        limit = progress.timeout_ms / 1000
        sys.stderr.write(f"\rrunning {elapsed:6.1f}s of {limit:.0f}s  model calls {progress.model_calls}  ")
        sys.stderr.flush()
        self.drawn = True

    def finish(self) -> None:
        if self.drawn:
            sys.stderr.write("\n")
            sys.stderr.flush()


def _git_limits(args: argparse.Namespace) -> Any:
    from agent_interface.evaluator.git.limits import GitLimits

    if args.git_timeout is None and args.max_blob_mib is None:
        return None
    options: dict[str, Any] = {}
    if args.git_timeout is not None:
        options["timeout_seconds"] = args.git_timeout
    if args.max_blob_mib is not None:
        options["max_blob_bytes"] = args.max_blob_mib * _MIB
    return GitLimits(**options)


def cmd_candidate_run(args: argparse.Namespace) -> int:
    """``candidate run``: see the module docstring."""
    import asyncio
    import signal

    from agent_interface.candidate.tasks import (
        AgentCandidateBenchmarkSuite,
        AgentCandidateBenchmarkTask,
    )
    from agent_interface.core.errors import ContractError
    from agent_interface.evaluator.gateway import upstream_from_spec
    from agent_interface.evaluator.git.tree import RepositoryUnavailable
    from agent_interface.evaluator.run.candidate_run import CandidateRunRefused, run_candidate_async
    from agent_interface.evaluator.run.output_directory import OutputDirectoryRefused

    bundle = read_document(args.bundle)
    task_bytes = read_document(args.task)
    suite_bytes = read_document(args.suite) if args.suite else None
    artifacts = directory_option("--artifacts", args.artifacts)
    try:
        task = AgentCandidateBenchmarkTask.parse_wire(task_bytes)
    except ContractError as error:
        return refused(args, args.task, error)
    try:
        suite = None if suite_bytes is None else AgentCandidateBenchmarkSuite.parse_wire(suite_bytes)
    except ContractError as error:
        return refused(args, args.suite, error)
    try:
        upstream = upstream_from_spec(args.model_upstream, args.model_key_env)
    except ContractError as error:
        return refused(args, "--model-upstream", error)
    progress = _ProgressLine(not args.json)

    async def run(options: dict[str, Any]) -> Any:
        cancel = asyncio.Event()
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGINT, cancel.set)
        try:
            return await run_candidate_async(
                bundle, repository=args.repository, task=task, suite=suite, out=args.out,
                artifacts=artifacts, progress=progress, cancel=cancel, git_limits=_git_limits(args),
                resources=resources_of(args), upstream=upstream, **options,
            )
        finally:
            loop.remove_signal_handler(signal.SIGINT)

    try:
        result = asyncio.run(run(image_options(args, bundle, task)))
    except RepositoryUnavailable as exc:
        raise repository_error(exc, args.bundle, args.repository) from None
    except CandidateRunRefused as error:
        documents = {"task": args.task, "out": args.out}
        return refused(args, documents.get(error.document, args.bundle), error)
    except OutputDirectoryRefused as error:
        return refused(args, args.out, error)
    except ContractError as error:
        return refused(args, args.bundle, error)
    finally:
        progress.finish()
    summary, headline, code = run_summary(result, args.bundle)
    _print_summary(summary, args.json, headline)
    return code


def cmd_candidate_materialize(args: argparse.Namespace) -> int:
    """``candidate materialize``: see the module docstring."""
    from agent_interface.core.errors import ContractError
    from agent_interface.evaluator.git.export import TreeExportLimits
    from agent_interface.evaluator.git.tree import RepositoryUnavailable
    from agent_interface.evaluator.run.materialize import materialize_candidate
    from agent_interface.evaluator.run.output_directory import OutputDirectoryRefused

    bundle = read_document(args.bundle)
    artifacts = directory_option("--artifacts", args.artifacts)
    defaults = TreeExportLimits()
    tree_limits = TreeExportLimits(
        max_entries=args.max_files or defaults.max_entries,
        max_file_bytes=(args.max_file_mib or 0) * _MIB or defaults.max_file_bytes,
        max_total_bytes=(args.max_total_mib or 0) * _MIB or defaults.max_total_bytes,
    )
    try:
        result = materialize_candidate(bundle, repository=args.repository, into=args.into, artifacts=artifacts,
                                       git_limits=_git_limits(args), tree_limits=tree_limits)
    except RepositoryUnavailable as exc:
        raise repository_error(exc, args.bundle, args.repository) from None
    except ContractError as error:
        return refused(args, args.into if isinstance(error, OutputDirectoryRefused) else args.bundle, error)
    _print_summary({"document": args.bundle, "verdict": "materialized", "into": args.into, **result.to_wire()},
                   args.json)
    return EXIT_OK


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("not a whole number") from None
    if value <= 0:
        raise argparse.ArgumentTypeError("must be positive")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError("not a number") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError("must be positive")
    return value


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("bundle", metavar="BUNDLE.json", help="candidate bundle, or - for stdin")
    parser.add_argument("--repository", metavar="PATH", help="local clone holding the bundle's base commit")
    parser.add_argument("--artifacts", metavar="DIR", help="external artifacts, files named by CID or sha256 hex")
    parser.add_argument("--git-timeout", metavar="SECONDS", type=_seconds,
                        help="deadline of the Git check and tree export (default 120)")
    parser.add_argument("--max-blob-mib", metavar="MIB", type=_positive,
                        help="largest blob a patch may write or declare (default 64)")


def register(actions: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``run`` and ``materialize`` under ``candidate``."""
    run = actions.add_parser(
        "run", help="verify, run the candidate on a task locally, and write its receipts",
        description="Verify the bundle, plan the run, run the candidate in a local exact-process "
        "environment and write its receipts into a new DIR.",
        epilog=_RUN_EXIT_HELP,
    )
    _common(run)
    run.add_argument("--task", metavar="TASK.json", required=True, help="the signed benchmark task")
    run.add_argument("--out", metavar="DIR", required=True, help="a new directory for receipts and artifacts")
    run.add_argument("--suite", metavar="SUITE.json", help="its suite (default: a one-task suite)")
    run.add_argument("--json", action="store_true", help="print the summary (and any error) as JSON")
    add_image_options(run)
    add_resource_options(run)
    add_model_options(run)
    run.set_defaults(handler=cmd_candidate_run)

    materialize = actions.add_parser(
        "materialize", help="verify, then write the candidate's files into a new DIR",
        description="Verify the bundle, then write its code tree (code/) and snapshots "
        "(workspace/, knowledge/) into DIR; a refusal leaves nothing behind.",
    )
    _common(materialize)
    materialize.add_argument("--into", metavar="DIR", required=True, help="a directory that is absent or empty")
    materialize.add_argument("--max-files", metavar="N", type=_positive,
                             help="most entries in the code tree (default 100000)")
    materialize.add_argument("--max-file-mib", metavar="MIB", type=_positive,
                             help="largest file of the code tree (default 256)")
    materialize.add_argument("--max-total-mib", metavar="MIB", type=_positive,
                             help="all files of the code tree together (default 1024)")
    materialize.add_argument("--json", action="store_true", help="print the result (and any error) as JSON")
    materialize.set_defaults(handler=cmd_candidate_materialize)
