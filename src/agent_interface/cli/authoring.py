"""Write the documents a candidate author and a benchmark author sign: ``candidate new``,
``task new`` and ``experiment new`` (document builders only; running an experiment is not
here).

``candidate new --repository R --base REV --head REV --entrypoint PATH --out B.json``
builds a git-patch bundle from a commit range (or ``--no-code`` for the disabled control),
seals it and verifies it against ``R`` before writing it (``evaluator.author``).
``task new --benchmark NAME --version V --scenario ID --instruction TEXT --contains TEXT
--out T.json --artifacts DIR`` writes a signed task whose grader is the local evaluator's
output checks, and the grader document into ``DIR`` (named by its CID); ``--suite S.json``
also writes its one-task suite. With ``--repository R [--commit REV] --test COMMAND...
[--solution-path GLOB...] [--image NAME@sha256:D --images STORE]`` the task is a workspace
task: the commit's tree, graded by its own commands (``agent-interface/workspace-command``)
in the named image, every file outside the solution paths restored before grading.
``suite new --task T.json... --reps N [--seed S... | --first-seed S] --out S.json`` writes a
suite of many tasks with repetitions and seeds. ``experiment new --baseline B --candidate C --suite S
--task T... --out E.json`` writes the pre-registered experiment.

Exit codes follow the CLI conventions: 0 written, 1 refused (the field's JSON Pointer, the
rule and the reason), 2 not run (unreadable input, an unusable repository, an unwritable
output, bad usage). ``--out -`` prints the document instead of writing it.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import re
import shlex
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from agent_interface.cli.candidate_inputs import read_document, refused, repository_error
from agent_interface.cli.conventions import EXIT_OK, CommandError, creation_reason, emit_json
from agent_interface.core.errors import ContractError

__all__ = ["cmd_candidate_new", "cmd_experiment_new", "cmd_suite_new", "cmd_task_new", "register",
           "register_candidate_new", "register_experiment_new"]


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
    builder = CandidateBundleBuilder(args.name, harness=args.harness, harness_version=args.harness_version)
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
        builder.instruction(args.delivery).env(**_pairs(args.env, "--env"))
        if args.system_prompt is not None:
            builder.system_prompt(args.system_prompt)
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
        if args.repository is not None:
            _repository_task(args, builder)
        else:
            if args.test or args.image or args.solution_path or args.restore:
                raise CommandError("usage", "--test, --image, --solution-path and --restore go with --repository")
            builder.output(max_bytes=args.max_output_bytes).output_checks(
                contains=args.contains or (), max_bytes=args.max_bytes)
        builder.limits(**limits)
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


_TEST_NAME = re.compile(r"[a-z0-9]+(?:[._-][a-z0-9]+)*")


def _tests(values: list[str], timeout_ms: int) -> list[tuple[str, list[str], int]]:
    """``[NAME=]COMMAND`` words split as a shell would split them (no shell runs them)."""
    commands = []
    for number, value in enumerate(values, start=1):
        name, separator, rest = value.partition("=")
        if not separator or not _TEST_NAME.fullmatch(name):
            name, rest = ("tests" if number == 1 else f"tests-{number}"), value
        try:
            argv = shlex.split(rest)
        except ValueError:
            raise CommandError("usage", f"--test {number}: unbalanced quotes") from None
        if not argv or not argv[0].startswith("/"):
            raise CommandError("usage", f"--test {number}: the command starts with an absolute executable path "
                               "(in the task's image), e.g. /usr/bin/python3 -I -m pytest -q (Python isolated: -I)")
        commands.append((name, argv, timeout_ms))
    return commands


def _restored(files: Iterable[str], solution_paths: list[str], restore: list[str]) -> list[str]:
    """Every file of the commit a solution may not change (not matching ``--solution-path``),
    with the ``--restore`` paths."""
    def may_change(path: str) -> bool:
        return any(fnmatch.fnmatchcase(path, pattern) or path.startswith(pattern.rstrip("/") + "/")
                   for pattern in solution_paths)

    kept = [path for path in files if not may_change(path)] if solution_paths else []
    return sorted({*kept, *restore})


def _repository_task(args: argparse.Namespace, builder: Any) -> None:
    """A workspace task from a commit, graded by ``--test`` commands, in ``--image`` if named."""
    from agent_interface.evaluator.author.git_range import read_commit
    from agent_interface.evaluator.git.errors import RepositoryUnavailable

    if not args.test:
        raise CommandError("usage", "a task from --repository is graded by its own commands: give --test COMMAND")
    if args.contains or args.max_bytes is not None:
        raise CommandError("usage", "--contains and --max-bytes grade output; a repository task is graded by --test")
    try:
        commit = read_commit(args.repository, args.commit)
    except RepositoryUnavailable as error:
        raise repository_error(error, args.out if args.out != "-" else "task", args.repository) from None
    identity = args.identity or f"local/{Path(os.path.abspath(args.repository)).name}"
    builder.repository(identity=identity, commit=commit.commit, tree=commit.tree, files=commit.files)
    builder.workspace_outcome().workspace_commands(
        _tests(args.test, args.test_timeout_ms), restore=_restored(commit.files, args.solution_path or [],
                                                                   args.restore or []),
        env=_pairs(args.test_env, "--test-env") or None)
    if args.image is not None:
        if args.images is None:
            raise CommandError("usage", "--image is looked up in --images STORE_DIR (its manifest and platform)")
        _task_image(builder, args.image, args.images)
    elif args.images is not None:
        raise CommandError("usage", "--images goes with --image NAME@sha256:DIGEST")


def _task_image(builder: Any, reference: str, images: str) -> None:
    from agent_interface.evaluator.images.image_reference import parse_digest_reference
    from agent_interface.evaluator.images.oci_store import OciImageStore

    if not os.path.isdir(images):
        raise CommandError("not_a_directory", "not a directory", document=images)
    name, digest = parse_digest_reference(reference)
    store = OciImageStore(images)
    if not any(image.name == name and image.digest == digest for image in store.images()):
        raise CommandError("image_not_found", f"the store holds no image {reference}", document=images)
    resolved = store.resolve(digest)
    builder.task_container(image=name, index_digest=digest, manifest_digest=resolved.manifest_digest,
                           os=resolved.platform.os, architecture=resolved.platform.architecture,
                           variant=resolved.platform.variant)


def cmd_suite_new(args: argparse.Namespace) -> int:
    """``suite new``: the sealed suite of the given tasks, repetitions and seeds."""
    from agent_interface.candidate.tasks import AgentCandidateBenchmarkTask
    from agent_interface.evaluator.author.task_builder import BenchmarkSuiteBuilder

    _check_out(args.out)
    builder = BenchmarkSuiteBuilder()
    for path in args.task:
        data = read_document(path)
        try:
            builder.task(AgentCandidateBenchmarkTask.parse_wire(data))
        except ContractError as error:
            return refused(args, path, error)
    seeds = None
    if args.seed:
        seeds = args.seed
    elif args.first_seed is not None:
        seeds = list(range(args.first_seed, args.first_seed + len(args.task) * args.reps))
    document = args.out if args.out != "-" else "suite"
    try:
        suite = builder.repetitions(args.reps, seeds=seeds).build()
    except ContractError as error:
        return refused(args, document, error)
    written = _write(args.out, suite.to_wire())
    wire = suite.to_wire()
    return _report(args, written, {"digest": suite.digest, "tasks": len(args.task), "reps": args.reps,
                                   "seeds": wire["seeds"]},
                   f"wrote {written}: {suite.digest} ({len(args.task)} tasks x {args.reps} repetitions)")


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
    from agent_interface.evaluator.experiment.power import DEFAULT_TARGET, plan_experiment

    plan = plan_experiment(experiment)  # the power preflight, as `experiment plan` prints it
    if written != "-" and not args.json:
        print("\n".join(plan.lines(DEFAULT_TARGET)), file=sys.stderr)
    return _report(args, written, {"digest": experiment.digest, "plan": plan.to_json(DEFAULT_TARGET)},
                   f"wrote {written}: {experiment.digest}")


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
    new.add_argument("--harness", default="codex", help="the harness (default: codex)")
    new.add_argument("--harness-version", default="0.1.0", metavar="VERSION", help="(default: 0.1.0)")
    new.add_argument("--owner", default="local", help="GitHub owner the repository belongs to")
    new.add_argument("--repo", help="GitHub repository name (default: the directory's name)")
    new.add_argument("--out", metavar="FILE", required=True, help="where to write the bundle (- for stdout)")
    new.add_argument("--json", action="store_true", help="print the result (and any error) as JSON")
    new.set_defaults(handler=cmd_candidate_new)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``task new`` and ``suite new`` to the main CLI (``experiment new`` joins the ``experiment`` group
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
    from_repo = new.add_argument_group(
        "a workspace task from a repository commit, graded by its own commands",
        "The workspace is the commit's tree; the result is the change a candidate makes to it; "
        "each --test runs on the changed workspace (in --image when named) and is one dimension.")
    from_repo.add_argument("--repository", metavar="PATH", help="the task's local Git repository")
    from_repo.add_argument("--commit", default="HEAD", metavar="REV", help="the task's commit (default HEAD)")
    from_repo.add_argument("--identity", metavar="OWNER/NAME",
                           help="the repository's identity (default local/DIRECTORY)")
    from_repo.add_argument("--test", action="append", metavar="[NAME=]COMMAND",
                           help="a grading command, split as a shell splits words (no shell runs it), "
                                "its executable an absolute path in the image (repeatable)")
    from_repo.add_argument("--test-timeout-ms", type=int, default=120_000, metavar="MS",
                           help="each command's time limit (default 120000)")
    from_repo.add_argument("--test-env", action="append", metavar="NAME=VALUE",
                           help="the commands' environment (default PATH=/usr/local/bin:/usr/bin:/bin)")
    from_repo.add_argument("--solution-path", action="append", metavar="GLOB",
                           help="a path a solution may change (a glob, or a directory); every other file of "
                                "the commit is restored before grading (repeatable)")
    from_repo.add_argument("--restore", action="append", metavar="PATH",
                           help="a file restored before grading (e.g. the tests; repeatable)")
    from_repo.add_argument("--image", metavar="NAME@sha256:DIGEST",
                           help="the task's container image (built with image build), found in --images")
    from_repo.add_argument("--images", metavar="STORE_DIR", help="the image store holding --image")
    new.set_defaults(handler=cmd_task_new)

    suite = subparsers.add_parser("suite", help="write signed benchmark suites")
    suite_actions = suite.add_subparsers(dest="suite_command", required=True, metavar="ACTION")
    new_suite = suite_actions.add_parser(
        "new", help="write a suite of tasks with repetitions and seeds",
        description="Write a sealed AgentCandidateBenchmarkSuite: the tasks in order, each run --reps times, "
        "one seed per task repetition (task-major; default 0, 1, 2, ...).",
    )
    new_suite.add_argument("--task", required=True, action="append", metavar="TASK.json",
                           help="a task, in the suite's order (repeatable)")
    new_suite.add_argument("--reps", type=int, default=1, metavar="N", help="repetitions of every task (default 1)")
    new_suite.add_argument("--seed", type=int, action="append", metavar="N",
                           help="one seed per task repetition, task-major (repeatable)")
    new_suite.add_argument("--first-seed", type=int, metavar="N", help="seeds N, N+1, ... instead")
    new_suite.add_argument("--out", metavar="FILE", required=True, help="where to write the suite (- for stdout)")
    new_suite.add_argument("--json", action="store_true", help="print the result (and any error) as JSON")
    new_suite.set_defaults(handler=cmd_suite_new)


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
