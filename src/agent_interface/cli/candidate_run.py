"""``candidate run`` and ``candidate materialize``: act on a verified bundle.

``candidate run BUNDLE --repository PATH --task TASK --out DIR [--suite SUITE]
[--artifacts DIR] [--json]`` verifies, plans, runs the candidate in a local exact-process
environment and writes ``materialization-receipt.json`` and ``run-receipt.json`` (or
``invalid-capture.json``) into ``DIR``. While it runs, a progress line is drawn on stderr
when stderr is a terminal. Exit codes: 0 receipts written, 1 refused (check, JSON Pointer
and rule on stderr), 2 unusable input, 3 invalid capture (``invalid-capture.json`` names
what is missing).

``candidate materialize BUNDLE --repository PATH --into DIR [--artifacts DIR] [--json]``
verifies, then writes the bundle's snapshots into ``DIR`` (see
``agent_interface.evaluator.materialize``). Exit codes as for ``candidate verify``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
from pathlib import Path

from agent_interface.candidate.git_tree import RepositoryUnavailable
from agent_interface.candidate.tasks import (
    AgentCandidateBenchmarkSuite,
    AgentCandidateBenchmarkTask,
)
from agent_interface.candidate.verification_result import CandidateVerificationRefused
from agent_interface.cli.main import EXIT_OK, EXIT_REFUSED, EXIT_UNREADABLE
from agent_interface.core.errors import ContractError

__all__ = ["EXIT_INVALID_CAPTURE", "cmd_candidate_materialize", "cmd_candidate_run", "register"]

EXIT_INVALID_CAPTURE = 3


def _read(source: str) -> bytes | None:
    from agent_interface.cli.main import Unreadable, parse_json_bytes, read_bytes

    try:
        data = read_bytes(source)
        parse_json_bytes(data, source)
    except Unreadable as exc:
        print(f"agent-interface: {exc}", file=sys.stderr)
        return None
    return data


def _refused(source: str, error: ContractError) -> int:
    check = getattr(error, "check", None)
    print(f"{source}: refused" + (f" at check {check}" if check else ""), file=sys.stderr)
    for issue in error.issues:
        print(f"  {issue.path or '/'}: {issue.message} [{issue.code}]", file=sys.stderr)
    return EXIT_REFUSED


class _ProgressLine:
    """One line on a terminal, redrawn in place; nothing when stderr is not a terminal."""

    def __init__(self) -> None:
        self.enabled = sys.stderr.isatty()
        self.drawn = False

    def __call__(self, progress: object) -> None:
        if not self.enabled:
            return
        elapsed = getattr(progress, "elapsed_ms", 0) / 1000
        limit = getattr(progress, "timeout_ms", 0) / 1000
        calls = getattr(progress, "model_calls", 0)
        sys.stderr.write(f"\rrunning {elapsed:6.1f}s of {limit:.0f}s  model calls {calls}  ")
        sys.stderr.flush()
        self.drawn = True

    def finish(self) -> None:
        if self.drawn:
            sys.stderr.write("\n")
            sys.stderr.flush()


def cmd_candidate_run(args: argparse.Namespace) -> int:
    """``candidate run``: see the module docstring."""
    from agent_interface.evaluator.run import run_candidate_async

    bundle = _read(args.bundle)
    task_bytes = _read(args.task)
    suite_bytes = _read(args.suite) if args.suite else b""
    if bundle is None or task_bytes is None or suite_bytes is None:
        return EXIT_UNREADABLE
    if args.artifacts is not None and not Path(args.artifacts).is_dir():
        print(f"agent-interface: {args.artifacts}: not a directory", file=sys.stderr)
        return EXIT_UNREADABLE
    progress = _ProgressLine()

    async def run() -> object:
        cancel = asyncio.Event()
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGINT, cancel.set)
        try:
            task = AgentCandidateBenchmarkTask.parse_wire(task_bytes)
            suite = AgentCandidateBenchmarkSuite.parse_wire(suite_bytes) if suite_bytes else None
            return await run_candidate_async(
                bundle, repository=args.repository, task=task, suite=suite, out=args.out,
                artifacts=args.artifacts, progress=progress, cancel=cancel,
            )
        finally:
            loop.remove_signal_handler(signal.SIGINT)

    try:
        result = asyncio.run(run())
    except RepositoryUnavailable as exc:
        progress.finish()
        print(f"agent-interface: {exc}", file=sys.stderr)
        return EXIT_UNREADABLE
    except (CandidateVerificationRefused, ContractError) as error:
        progress.finish()
        return _refused(args.bundle, error)
    progress.finish()
    from agent_interface.evaluator.run import CandidateRunResult

    assert isinstance(result, CandidateRunResult)
    summary: dict[str, object] = {
        "out": str(result.out),
        "materializationReceipt": result.materialization_receipt.digest,
        "executionPlan": result.plan.digest,
    }
    if result.run_receipt is not None:
        material = result.run_receipt.benchmark_result.material
        summary.update(runReceipt=result.run_receipt.digest, termination=result.run_receipt.termination.to_wire(),
                       score=material.score, passed=material.passed)
    else:
        assert result.invalid_capture is not None
        summary.update(invalidCapture=result.invalid_capture.digest,
                       missing=list(result.invalid_capture.missing),
                       reasons=[reason.code for reason in result.invalid_capture.reasons])
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        for key, value in summary.items():
            print(f"{key:24} {value if not isinstance(value, (dict, list)) else json.dumps(value)}")
    return EXIT_OK if result.run_receipt is not None else EXIT_INVALID_CAPTURE


def cmd_candidate_materialize(args: argparse.Namespace) -> int:
    """``candidate materialize``: see the module docstring."""
    from agent_interface.evaluator.materialize import materialize_candidate

    bundle = _read(args.bundle)
    if bundle is None:
        return EXIT_UNREADABLE
    if args.artifacts is not None and not Path(args.artifacts).is_dir():
        print(f"agent-interface: {args.artifacts}: not a directory", file=sys.stderr)
        return EXIT_UNREADABLE
    try:
        result = materialize_candidate(bundle, repository=args.repository, into=args.into,
                                       artifacts=args.artifacts)
    except RepositoryUnavailable as exc:
        print(f"agent-interface: {exc}", file=sys.stderr)
        return EXIT_UNREADABLE
    except (CandidateVerificationRefused, ContractError) as error:
        return _refused(args.bundle, error)
    if args.json:
        print(json.dumps(result.to_wire(), indent=2))
    else:
        for key, value in result.to_wire().items():
            print(f"{key:24} {value if not isinstance(value, (dict, list)) else json.dumps(value)}")
    return EXIT_OK


def register(actions: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``run`` and ``materialize`` under ``candidate``."""
    run = actions.add_parser("run", help="verify, run the candidate on a task locally, and write its receipts")
    run.add_argument("bundle", metavar="BUNDLE.json")
    run.add_argument("--repository", metavar="PATH", help="local clone holding the bundle's base commit")
    run.add_argument("--task", metavar="TASK.json", required=True, help="the signed benchmark task")
    run.add_argument("--suite", metavar="SUITE.json", help="its suite (default: a one-task suite)")
    run.add_argument("--out", metavar="DIR", required=True, help="a new directory for receipts and artifacts")
    run.add_argument("--artifacts", metavar="DIR", help="external artifacts, files named by CID or sha256 hex")
    run.add_argument("--json", action="store_true", help="print the summary as JSON")
    run.set_defaults(handler=cmd_candidate_run)

    materialize = actions.add_parser("materialize", help="verify, then write the candidate's files into a new DIR")
    materialize.add_argument("bundle", metavar="BUNDLE.json")
    materialize.add_argument("--repository", metavar="PATH", help="local clone holding the bundle's base commit")
    materialize.add_argument("--into", metavar="DIR", required=True, help="a directory that is absent or empty")
    materialize.add_argument("--artifacts", metavar="DIR", help="external artifacts, files named by sha256 hex")
    materialize.add_argument("--json", action="store_true", help="print the result document")
    materialize.set_defaults(handler=cmd_candidate_materialize)
