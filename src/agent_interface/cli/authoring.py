"""Write the documents a candidate author and a benchmark author sign: ``candidate new``,
``task new`` and ``experiment new`` (document builders only; running an experiment is not
here).

``candidate new --repository R --base REV --head REV --entrypoint PATH --out B.json``
builds a git-patch bundle from a commit range (or ``--no-code`` for the disabled control),
seals it and verifies it against ``R`` before writing it (``evaluator.author``).
``candidate new --no-code --harness claude-code|codex|opencode [--instructions TEXT]
[--system-prompt TEXT] [--append-system-prompt TEXT] --out B.json`` (no ``--entrypoint``
or ``--command``) makes a candidate run by that real CLI (``evaluator.harness``), its
version the pinned CLI's unless ``--harness-version`` says otherwise.
``task new --benchmark NAME --version V --scenario ID --instruction TEXT --contains TEXT
--out T.json --artifacts DIR`` writes a signed task whose grader is the local evaluator's
output checks, and the grader document into ``DIR`` (named by its CID); ``--suite S.json``
also writes its one-task suite. ``experiment new --baseline B --candidate C --suite S
--task T... --out E.json`` writes the pre-registered experiment.

Exit codes follow the CLI conventions: 0 written, 1 refused (the field's JSON Pointer, the
rule and the reason), 2 not run (unreadable input, an unusable repository, an unwritable
output, bad usage). ``--out -`` prints the document instead of writing it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from agent_interface.cli.candidate_inputs import read_document, refused, repository_error
from agent_interface.cli.conventions import EXIT_OK, CommandError, creation_reason, emit_json
from agent_interface.core.errors import ContractError

__all__ = ["cmd_candidate_new", "cmd_experiment_new", "cmd_task_new", "register", "register_candidate_new",
           "register_experiment_new"]


def _check_out(out: str) -> None:
    """Refuse (exit 2), before any work, an ``--out`` that can never be written."""
    if out == "-":
        return
    path = Path(out)
    if os.path.isdir(path) or os.path.islink(path):
        raise CommandError("not_a_file", "--out names a directory or a symbolic link, not a file", document=out)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise CommandError("unwritable", creation_reason(error).replace("the directory", "the file"),
                           document=out) from None


def _write(out: str, document: dict[str, Any]) -> str:
    """Write ``document`` to ``out`` atomically (``-``: standard output); exit 2 when not."""
    text = json.dumps(document, ensure_ascii=False, indent=2) + "\n"
    if out == "-":
        sys.stdout.write(text)
        return "-"
    from agent_interface.evaluator.run.write_atomic import write_bytes_atomic

    path = Path(out)
    if os.path.isdir(path) or os.path.islink(path):
        raise CommandError("not_a_file", "--out names a directory or a symbolic link, not a file", document=out)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_bytes_atomic(path, text.encode())
    except OSError as error:
        reason = creation_reason(error).replace("the directory", "the file")
        raise CommandError("unwritable", reason, document=out) from None
    return out


def _report(args: argparse.Namespace, written: str, summary: dict[str, Any], line: str) -> int:
    if written == "-":
        return EXIT_OK
    if args.json:
        emit_json({"document": written, "verdict": "written", **summary})
    else:
        print(line)
    return EXIT_OK


def _pairs(values: list[str] | None, option: str) -> dict[str, str]:
    result = {}
    for value in values or []:
        name, separator, text = value.partition("=")
        if not separator or not name:
            raise CommandError("usage", f"{option} takes NAME=VALUE", document=None)
        result[name] = text
    return result


def cmd_candidate_new(args: argparse.Namespace) -> int:
    """``candidate new``: see the module docstring."""
    from agent_interface.evaluator.author.bundle_builder import CandidateBundleBuilder
    from agent_interface.evaluator.git.errors import RepositoryUnavailable

    document = args.out if args.out != "-" else "candidate"
    _check_out(args.out)
    from agent_interface.evaluator.harness.bundle_plan import HARNESS_EXECUTABLES, pinned_version

    harness_cli = args.entrypoint is None and args.command is None and args.harness in HARNESS_EXECUTABLES
    version = args.harness_version or (pinned_version(args.harness) if harness_cli else None) or "0.1.0"
    builder = CandidateBundleBuilder(args.name, harness=args.harness, harness_version=version)
    try:
        if args.no_code:
            builder.no_code()
        else:
            if args.repository is None or args.base is None or args.head is None:
                raise CommandError("usage", "give --repository, --base and --head (or --no-code)")
            builder.code_from_git(args.repository, base=args.base, head=args.head, owner=args.owner,
                                  repo=args.repo)
        if args.entrypoint is not None:
            builder.entrypoint(args.entrypoint, interpreter=args.interpreter, args=tuple(args.arg or ()))
        elif args.command is not None:
            builder.command(args.command, *(args.arg or ()))
        if harness_cli:
            builder.harness_cli(HARNESS_EXECUTABLES[args.harness])
        else:
            builder.instruction(args.delivery)
        builder.env(**_pairs(args.env, "--env"))
        prompt = {key: value for key, value in (("systemPrompt", args.system_prompt),
                                                ("appendSystemPrompt", args.append_system_prompt),
                                                ("instructions", args.instructions)) if value}
        if prompt:
            builder.profile(prompt=prompt)
        bundle = builder.build()
    except RepositoryUnavailable as error:
        raise repository_error(error, document, args.repository) from None
    except ContractError as error:
        return refused(args, document, error)
    written = _write(args.out, bundle.to_wire())
    code = bundle.to_wire()["code"]
    detail = f"{code['kind']}" + (f", {code['baseCommit'][:12]} -> tree {code['candidateTree'][:12]}"
                                  if code["kind"] == "git-patch" else "")
    return _report(args, written, {"digest": bundle.digest, "codeKind": code["kind"]},
                   f"wrote {written}: {bundle.digest} ({detail}; verified)")


def _workspace_files(directory: str | None) -> dict[str, bytes]:
    if directory is None:
        return {}
    root = Path(directory)
    if not os.path.isdir(root):
        raise CommandError("not_a_directory", f"--workspace {directory}: not a directory", document=directory)
    files = {}
    for path in sorted(root.rglob("*")):
        if path.is_symlink() or not (path.is_file() or path.is_dir()):
            raise CommandError("workspace_unsupported", f"{path}: only regular files are snapshotted",
                               document=directory)
        if path.is_file():
            files[path.relative_to(root).as_posix()] = path.read_bytes()
    return files


def cmd_task_new(args: argparse.Namespace) -> int:
    """``task new``: see the module docstring."""
    from agent_interface.evaluator.author.task_builder import (
        BenchmarkSuiteBuilder,
        BenchmarkTaskBuilder,
    )

    document = args.out if args.out != "-" else "task"
    _check_out(args.out)
    if args.suite:
        _check_out(args.suite)
    if args.artifacts is None and args.out != "-":
        raise CommandError("usage", "give --artifacts DIR: the grader's document is written there, named by its "
                           "CID, for candidate run --artifacts DIR", document=document)
    instruction = args.instruction
    if args.instruction_file is not None:
        instruction = read_document_text(args.instruction_file)
    if instruction is None:
        raise CommandError("usage", "give --instruction TEXT or --instruction-file FILE")
    builder = (BenchmarkTaskBuilder(args.benchmark, args.version, scenario=args.scenario)
               .instruction(instruction).workspace(_workspace_files(args.workspace)))
    limits = {name: value for name, value in (("timeoutMs", args.timeout_ms), ("maxModelCalls", args.max_model_calls))
              if value is not None}
    try:
        builder.output(max_bytes=args.max_output_bytes).output_checks(
            contains=args.contains or (), max_bytes=args.max_bytes).limits(**limits)
        task = builder.build()
        suite = BenchmarkSuiteBuilder().task(task).build() if args.suite else None
    except ContractError as error:
        return refused(args, document, error)
    if args.artifacts is not None:
        try:
            builder.artifacts.write_to(args.artifacts)
        except OSError as error:
            raise CommandError("unwritable", creation_reason(error), document=args.artifacts) from None
        except ContractError as error:
            return refused(args, args.artifacts, error)
    written = _write(args.out, task.to_wire())
    if suite is not None:
        _write(args.suite, suite.to_wire())
    summary = {"digest": task.digest, "artifacts": sorted(builder.artifacts.files)}
    if suite is not None:
        summary["suite"] = suite.digest
    return _report(args, written, summary, f"wrote {written}: {task.digest}"
                   + (f"; suite {args.suite}: {suite.digest}" if suite is not None else "")
                   + (f"; grader in {args.artifacts}" if args.artifacts else ""))


def read_document_text(source: str) -> str:
    """The UTF-8 text of a file (``-``: standard input); ``CommandError`` (exit 2) when not."""
    from agent_interface.cli.main import read_bytes

    try:
        return read_bytes(source).decode("utf-8")
    except UnicodeDecodeError:
        raise CommandError("not_utf8", "not UTF-8 text", document=source) from None


def cmd_experiment_new(args: argparse.Namespace) -> int:
    """``experiment new``: see the module docstring."""
    from agent_interface.candidate.bundle import AgentCandidateBundle
    from agent_interface.candidate.tasks import (
        AgentCandidateBenchmarkSuite,
        AgentCandidateBenchmarkTask,
    )
    from agent_interface.evaluator.author.experiment_builder import ExperimentBuilder

    _check_out(args.out)
    parsed: dict[str, Any] = {}
    for name, path, model in (("baseline", args.baseline, AgentCandidateBundle),
                              ("candidate", args.candidate, AgentCandidateBundle),
                              ("suite", args.suite, AgentCandidateBenchmarkSuite)):
        data = read_document(path)
        try:
            parsed[name] = model.parse_wire(data)
        except ContractError as error:
            return refused(args, path, error)
    tasks = []
    for path in args.task:
        data = read_document(path)
        try:
            tasks.append(AgentCandidateBenchmarkTask.parse_wire(data))
        except ContractError as error:
            return refused(args, path, error)
    document = args.out if args.out != "-" else "experiment"
    try:
        experiment = (ExperimentBuilder(parsed["baseline"], parsed["candidate"])
                      .lineage(args.lineage, parents=[parsed["baseline"].digest])
                      .suite(parsed["suite"], tasks).policy(min_productive_runs=args.min_productive_runs)
                      .build())
    except ContractError as error:
        return refused(args, document, error)
    written = _write(args.out, experiment.to_wire())
    return _report(args, written, {"digest": experiment.digest}, f"wrote {written}: {experiment.digest}")


def register_candidate_new(actions: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``new`` under ``candidate``."""
    new = actions.add_parser(
        "new", help="build, seal and verify a candidate bundle from a Git commit range",
        description="Build a candidate bundle from the change between two commits of a local repository "
        "(the binary patch, both trees and the head's files as the candidate workspace), seal it, verify "
        "it against the repository, and write it.",
    )
    new.add_argument("--repository", metavar="PATH", help="the candidate's local Git repository")
    new.add_argument("--base", metavar="REV", help="the commit the change starts from (e.g. HEAD~1)")
    new.add_argument("--head", metavar="REV", help="the commit holding the candidate (e.g. HEAD)")
    new.add_argument("--no-code", action="store_true", help="no code change: the disabled control")
    new.add_argument("--entrypoint", metavar="PATH", help="the candidate's file to launch")
    new.add_argument("--interpreter", metavar="NAME", help="run --entrypoint through this interpreter")
    new.add_argument("--command", metavar="EXECUTABLE", help="launch this executable instead of an entrypoint")
    new.add_argument("--arg", action="append", metavar="VALUE", help="a public argument (repeatable)")
    new.add_argument("--delivery", choices=("stdin", "argv", "file"), default="stdin",
                     help="how the instruction reaches the process (default: stdin)")
    new.add_argument("--env", action="append", metavar="NAME=VALUE", help="a public variable (repeatable)")
    new.add_argument("--name", default="candidate", help="the profile's name (default: candidate)")
    new.add_argument("--system-prompt", metavar="TEXT", help="the profile's system prompt")
    new.add_argument("--append-system-prompt", metavar="TEXT", help="text the profile adds to the harness's prompt")
    new.add_argument("--instructions", action="append", metavar="TEXT",
                     help="a project instruction of the profile (CLAUDE.md / AGENTS.md; repeatable)")
    new.add_argument("--harness", default="codex",
                     help="the harness (default: codex); claude-code, codex or opencode without --entrypoint "
                     "or --command makes a candidate run by that real CLI")
    new.add_argument("--harness-version", metavar="VERSION",
                     help="(default: the pinned CLI's version for a real-CLI candidate, else 0.1.0)")
    new.add_argument("--owner", default="local", help="GitHub owner the repository belongs to")
    new.add_argument("--repo", help="GitHub repository name (default: the directory's name)")
    new.add_argument("--out", metavar="FILE", required=True, help="where to write the bundle (- for stdout)")
    new.add_argument("--json", action="store_true", help="print the result (and any error) as JSON")
    new.set_defaults(handler=cmd_candidate_new)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``task new`` to the main CLI (``experiment new`` joins the ``experiment`` group
    through :func:`register_experiment_new`)."""
    task = subparsers.add_parser("task", help="write signed benchmark tasks")
    task_actions = task.add_subparsers(dest="task_command", required=True, metavar="ACTION")
    new = task_actions.add_parser(
        "new", help="write a signed benchmark task graded by output checks",
        description="Write a signed AgentCandidateBenchmarkTask whose grader is the local evaluator's output "
        "checks, and the grader's document into --artifacts DIR (named by its CID).",
    )
    new.add_argument("--benchmark", required=True, metavar="NAME", help="the benchmark's name")
    new.add_argument("--version", default="1", help="the benchmark's version (default: 1)")
    new.add_argument("--scenario", required=True, metavar="ID", help="the scenario this task covers")
    new.add_argument("--instruction", metavar="TEXT", help="the instruction")
    new.add_argument("--instruction-file", metavar="FILE", help="read the instruction from FILE")
    new.add_argument("--contains", action="append", metavar="TEXT", help="the output must hold TEXT (repeatable)")
    new.add_argument("--max-bytes", type=int, metavar="N", help="the output must have at most N bytes (a check)")
    new.add_argument("--max-output-bytes", type=int, default=4096, metavar="N",
                     help="the largest output captured (default 4096)")
    new.add_argument("--workspace", metavar="DIR", help="the task workspace's files (default: none)")
    new.add_argument("--timeout-ms", type=int, metavar="MS", help="the run's time limit (default 60000)")
    new.add_argument("--max-model-calls", type=int, metavar="N", help="(default 4)")
    new.add_argument("--artifacts", metavar="DIR", help="where to write the grader's document")
    new.add_argument("--suite", metavar="FILE", help="also write the one-task suite here")
    new.add_argument("--out", metavar="FILE", required=True, help="where to write the task (- for stdout)")
    new.add_argument("--json", action="store_true", help="print the result (and any error) as JSON")
    new.set_defaults(handler=cmd_task_new)


def register_experiment_new(actions: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``new`` to the ``experiment`` group (see :mod:`agent_interface.cli.experiment`)."""
    new = actions.add_parser(
        "new", help="write a baseline-versus-candidate experiment on a held-out suite",
        description="Write a sealed AgentCandidateExperiment: the baseline and candidate bundles, the "
        "candidate's lineage, the suite with its tasks, and the evaluation policy.",
    )
    new.add_argument("--baseline", required=True, metavar="BUNDLE.json")
    new.add_argument("--candidate", required=True, metavar="BUNDLE.json")
    new.add_argument("--suite", required=True, metavar="SUITE.json")
    new.add_argument("--task", required=True, action="append", metavar="TASK.json",
                     help="each task of the suite, in its order (repeatable)")
    new.add_argument("--lineage", default="human", choices=("human", "optimizer", "import", "compound"),
                     help="where the candidate came from (default: human)")
    new.add_argument("--min-productive-runs", type=int, default=3, metavar="N", help="(default 3)")
    new.add_argument("--out", metavar="FILE", required=True, help="where to write it (- for stdout)")
    new.add_argument("--json", action="store_true", help="print the result (and any error) as JSON")
    new.set_defaults(handler=cmd_experiment_new)
