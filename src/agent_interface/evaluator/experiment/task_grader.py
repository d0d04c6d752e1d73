"""The grader that runs a task's own checks on the patched workspace.

A workspace task pins the grader ``agent-interface/workspace-command`` version ``1``; its
artifact is a JSON document naming the commands to run, what a solution may change, and
their limits::

    {"kind": "agent-interface.workspace-command.v1",
     "commands": [{"name": "tests", "executable": "/usr/bin/python3",
                   "args": ["-I", "-m", "unittest", "discover", "-s", ".", "-p", "test_*.py"],
                   "timeoutMs": 30000}],
     "solutionPaths": ["calc.py", "src/**"],
     "restore": ["tests/"],
     "env": {"PATH": "/usr/bin:/bin"},
     "resources": {"memoryMb": 4096, "cpu": 2},
     "maxOutputBytes": 65536}

:func:`grade_workspace` writes the files the checks run on into a *fresh* exact-process
environment under the task root: the task's own files with only the changes of the
submission that the task allows (:mod:`.submission_policy`: ``solutionPaths``, the
``restore`` paths and the grader's own files, and the search-path hooks no wildcard
admits; what was left out is recorded). Each command runs there as its own exact
process: argv only, the document's ``env`` as the whole environment, working directory
the task root, network blocked, its own ``timeoutMs`` and output bound
(``maxOutputBytes`` per stream, the provider's capture bound), and the environment's
``resources`` (the cell's, with the document's ``resources`` in their place: its memory
is the provider's ``memoryMb``, a cgroup in a container). A command that exits 0 scores 1
on its dimension, any other exit 0; the score is the mean, passed means every command
passed. The evidence is each command's termination, the SHA-256 and size of its output,
the output itself as artifacts of the cell (bounded by ``maxOutputBytes``), and the
submission's changes the grader did not take.

The checks' own search paths are pinned, so nothing of the workspace is found by name
unless the checks ask for it: a Python command (``python``, ``python3``, ``python3.11``,
``pypy3``...) must run isolated (``-I``, or ``-P`` with ``-E`` and ``-s``); no entry of a
search-path variable (``PATH``, ``PYTHONPATH``, ``LD_LIBRARY_PATH``, ``LD_PRELOAD``,
``PERL5LIB``, ``RUBYLIB``, ``CLASSPATH``, ...) is relative or empty (refused when the
document is read) or inside the task root (refused when the cell grades); ``NODE_PATH``
and ``NODE_OPTIONS`` are refused. ``docs/security.md`` has the threat model.

A command that runs out of time, floods its output bound or cannot be started makes the
cell an invalid capture (:class:`GraderGap`: ``grader_timeout``,
``grader_output_truncated``, ``grader_failed``), never a crash and never a score; the
output it did write (bounded) is kept too, named in the reason's message. A
document that is not this grader, or breaks a rule above, is refused
(``grader_unsupported``, ``grader_search_path_unpinned``) before any cell runs.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from agent_interface.core.canonical import sha256_bytes
from agent_interface.core.errors import ContractError
from agent_interface.evaluator.experiment.submission_policy import (
    PolicyAction,
    SubmissionPolicy,
    pattern_refusal,
)
from agent_interface.evaluator.run.grader import OutputChecksGrade

__all__ = [
    "DEFAULT_TASK_ROOT",
    "SEARCH_PATH_VARIABLES",
    "WORKSPACE_COMMAND_GRADER",
    "GraderGap",
    "WorkspaceCommand",
    "WorkspaceCommandGrader",
    "grade_workspace",
    "parse_workspace_grader",
    "submission_policy",
]

WORKSPACE_COMMAND_GRADER: Final = ("agent-interface/workspace-command", "1")
"""``(name, version)`` of the grader that runs a task's commands."""

DEFAULT_TASK_ROOT: Final = "/tangle/task"
"""The task root the plan builders place a task workspace at (checked before any cell runs)."""

SEARCH_PATH_VARIABLES: Final = frozenset({
    "PATH", "PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONUSERBASE", "PYTHONPYCACHEPREFIX",
    "LD_LIBRARY_PATH", "LD_PRELOAD", "PERL5LIB", "PERLLIB", "RUBYLIB", "GEM_PATH", "GEM_HOME", "CLASSPATH",
    "BASH_ENV", "ENV", "GOPATH",
})
"""Environment variables whose entries name where programs and modules are found."""

_REFUSED_VARIABLES: Final = frozenset({"NODE_PATH", "NODE_OPTIONS", "PERL5OPT", "RUBYOPT", "PYTHONINSPECT"})
_KIND: Final = "agent-interface.workspace-command.v1"
_NAME_RE: Final = re.compile(r"[a-z0-9]+(?:[._-][a-z0-9]+)*")
_PYTHON_RE: Final = re.compile(r"(?:python|pypy)[0-9.]*")
_MAX_TIMEOUT_MS: Final = 3_600_000
_MAX_OUTPUT: Final = 16 * 1024 * 1024
_MAX_ACTIONS: Final = 1000
_KEYS: Final = frozenset({"kind", "commands", "restore", "env", "maxOutputBytes", "solutionPaths", "resources"})


@dataclass(frozen=True, slots=True)
class WorkspaceCommand:
    """One check: its dimension name, the absolute executable, its arguments and time limit."""

    name: str
    executable: str
    args: tuple[str, ...]
    timeout_ms: int


@dataclass(frozen=True, slots=True)
class WorkspaceCommandGrader:
    """A parsed grader document (``solution_paths`` ``None`` when the document has none)."""

    commands: tuple[WorkspaceCommand, ...]
    restore: tuple[str, ...]
    env: dict[str, str]
    max_output_bytes: int
    solution_paths: tuple[str, ...] | None = None
    resources: dict[str, Any] = field(default_factory=dict)

    @property
    def executables(self) -> list[str]:
        """Every executable the commands run (the image must hold them)."""
        return sorted({command.executable for command in self.commands})


class GraderGap(Exception):
    """Why the grader gave no verdict: an invalid-capture reason (``code``, ``message``)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def gap(self) -> dict[str, str]:
        """The invalid-capture reason (evidence ``benchmarkResult``)."""
        return {"evidence": "benchmarkResult", "code": self.code, "message": self.message}


def _refuse(message: str, code: str = "grader_unsupported") -> ContractError:
    return ContractError.single("/grader", code, message, subject="benchmark task")


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) and "\0" not in item for item in value)


def _python_isolated(args: Sequence[str]) -> bool:
    """Whether the interpreter options before the script, ``-m`` or ``-c`` pin its search
    path: ``-I``, or all of ``-P``, ``-E`` and ``-s``."""
    flags: set[str] = set()
    skip = False
    for arg in args:
        if skip:
            skip = False
            continue
        if not arg.startswith("-") or arg in ("-", "--") or arg.startswith("--"):
            break
        letters = arg[1:]
        for index, letter in enumerate(letters):
            if letter in "mc":
                return "I" in flags or {"P", "E", "s"} <= flags
            if letter in "WX":
                skip = index == len(letters) - 1
                break
            flags.add(letter)
    return "I" in flags or {"P", "E", "s"} <= flags


def _check_env(env: Mapping[str, str]) -> None:
    for name, value in env.items():
        if name in _REFUSED_VARIABLES:
            raise _refuse(f"the grader's env may not set {name}", "grader_search_path_unpinned")
        if name in SEARCH_PATH_VARIABLES and any(not entry.startswith("/") for entry in value.split(":")):
            raise _refuse(f"every entry of the grader's {name} is an absolute path", "grader_search_path_unpinned")


def _resources(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict) or set(value) - {"cpu", "memoryMb", "diskMb"}:
        raise _refuse("resources has cpu, memoryMb and diskMb only")
    cpu = value.get("cpu", 1)
    if isinstance(cpu, bool) or not isinstance(cpu, int | float) or not 0 < cpu <= 256:
        raise _refuse("resources.cpu is a positive number of CPUs up to 256")
    for key in ("memoryMb", "diskMb"):
        amount = value.get(key, 1)
        if type(amount) is not int or not 0 < amount <= 1_048_576:
            raise _refuse(f"resources.{key} is a whole number of MiB up to 1 TiB")
    return dict(value)


def parse_workspace_grader(name: str, version: str, artifact: bytes) -> WorkspaceCommandGrader:
    """The grader of a workspace-command artifact; refused unless it is this module's grader
    and its commands' search paths are pinned (see the module docstring)."""
    if (name, version) != WORKSPACE_COMMAND_GRADER:
        raise _refuse("a workspace task needs the agent-interface/workspace-command grader, version 1")
    try:
        document = json.loads(artifact)
    except (ValueError, UnicodeDecodeError):
        raise _refuse("the grader artifact is not JSON") from None
    if not isinstance(document, dict) or document.get("kind") != _KIND:
        raise _refuse("the grader artifact is not a workspace-command document")
    if set(document) - _KEYS:
        raise _refuse("the grader document has an unknown key")
    commands, names = [], set()
    raw = document.get("commands")
    if not isinstance(raw, list) or not raw:
        raise _refuse("the grader document lists at least one command")
    for entry in raw:
        if not isinstance(entry, dict) or set(entry) - {"name", "executable", "args", "timeoutMs"}:
            raise _refuse("a command has name, executable, args and timeoutMs only")
        command_name, executable = entry.get("name"), entry.get("executable")
        if not isinstance(command_name, str) or _NAME_RE.fullmatch(command_name) is None or command_name in names:
            raise _refuse("command names are unique lowercase dimension names")
        names.add(command_name)
        if not isinstance(executable, str) or not executable.startswith("/") or "\0" in executable:
            raise _refuse("a command's executable is an absolute path")
        args = entry.get("args", [])
        timeout = entry.get("timeoutMs")
        if not _strings(args):
            raise _refuse("a command's args are strings")
        if type(timeout) is not int or not 0 < timeout <= _MAX_TIMEOUT_MS:
            raise _refuse("a command's timeoutMs is a whole number of milliseconds up to one hour")
        if _PYTHON_RE.fullmatch(executable.rsplit("/", 1)[-1]) and not _python_isolated(args):
            raise _refuse("a Python command runs isolated: -I, or -P with -E and -s", "grader_search_path_unpinned")
        commands.append(WorkspaceCommand(command_name, executable, tuple(args), timeout))
    restore = document.get("restore", [])
    env = document.get("env", {})
    limit = document.get("maxOutputBytes", 1024 * 1024)
    if not _strings(restore):
        raise _refuse("restore lists workspace paths")
    if not isinstance(env, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
        raise _refuse("env maps names to strings")
    _check_env(env)
    if type(limit) is not int or not 0 < limit <= _MAX_OUTPUT:
        raise _refuse("maxOutputBytes is a positive whole number up to 16 MiB")
    solution = document.get("solutionPaths")
    if solution is not None and (why := pattern_refusal(solution)) is not None:
        raise _refuse(why)
    resources = _resources(document.get("resources", {}))
    commands.sort(key=lambda command: command.name)
    return WorkspaceCommandGrader(tuple(commands), tuple(restore), dict(env), limit,
                                  None if solution is None else tuple(solution), resources)


def _relative(path: str, task_root: str) -> str | None:
    root = task_root.rstrip("/")
    if path.startswith(root + "/"):
        return path[len(root) + 1:].strip("/") or None
    if path.startswith("/") or path.startswith("-"):
        return None
    parts = [part for part in path.split("/") if part not in ("", ".")]
    return None if not parts or ".." in parts else "/".join(parts)


def submission_policy(grader: WorkspaceCommandGrader, task_root: str,
                      task_files: Mapping[str, object]) -> SubmissionPolicy:
    """The policy of ``grader`` for a task rooted at ``task_root``: its ``solutionPaths``,
    its ``restore`` entries, and its own files (an executable inside the task root, and
    every command argument naming a file or directory of ``task_files``).

    Refused (``grader_search_path_unpinned``): a search-path variable of the grader's env
    with an entry inside the task root."""
    root = task_root.rstrip("/")
    for name, value in grader.env.items():
        if name in SEARCH_PATH_VARIABLES and any(
                entry.rstrip("/") == root or entry.startswith(root + "/") for entry in value.split(":")):
            raise _refuse(f"the grader's {name} names the task workspace", "grader_search_path_unpinned")
    directories = {path.rsplit("/", depth)[0] for path in task_files for depth in range(1, path.count("/") + 1)}
    own: list[str] = []
    for command in grader.commands:
        for candidate in (command.executable, *command.args):
            relative = _relative(candidate, task_root)
            if relative is not None and (relative in task_files or relative in directories
                                         or candidate == command.executable):
                own.append(relative)
    return SubmissionPolicy(grader.solution_paths, tuple(grader.restore), tuple(dict.fromkeys(own)))


def _termination(value: Any) -> dict[str, Any]:
    if isinstance(value, Mapping):
        return dict(value)
    wire: dict[str, Any] = value.to_wire()
    return wire


def _output(data: bytes, store: Any) -> dict[str, Any]:
    record: dict[str, Any] = {"sha256": sha256_bytes(data), "byteLength": len(data)}
    if store is not None:
        record["artifact"] = store.put(data).to_wire()
    return record


def _kept(stdout: bytes, stderr: bytes, store: Any) -> str:
    """Where a command's output that gave no verdict is kept (for the gap's message)."""
    if store is None:
        return ""
    names = [f"{label} artifacts/{store.put(data).to_wire()['locator']['cid']}"
             for label, data in (("stdout", stdout), ("stderr", stderr)) if data]
    return f" (its output is kept: {', '.join(names)})" if names else ""


async def grade_workspace(grader: WorkspaceCommandGrader, exact: Any, create: Mapping[str, Any], task_root: str,
                          files: Mapping[str, tuple[int, bytes]], *, actions: Sequence[PolicyAction] = (),
                          store: Any = None) -> tuple[OutputChecksGrade, int, int]:
    """Run the grader's commands on ``files`` in a fresh environment of ``exact`` (created
    with ``create``, its ``resources`` overridden by the document's); the grade and the
    grading start and end (epoch milliseconds).

    ``files`` are the files the checks run on (:func:`.submission_policy.graded_files`),
    ``actions`` the submission's changes left out, recorded in the evidence; with
    ``store`` (an artifact store) each command's output is kept there and named in the
    evidence. Raises :class:`GraderGap` when a command gives no verdict."""
    started = int(time.time() * 1000)
    request = dict(create)
    request["resources"] = {**dict(request.get("resources") or {}), **grader.resources}
    try:
        environment = await exact.create(request)
    except ContractError:
        raise GraderGap("grader_failed", "the grader's environment could not be created") from None
    verdicts: list[dict[str, Any]] = []
    try:
        for path, (mode, data) in sorted(files.items()):
            await environment.write_file(f"{task_root}/{path}", data, mode=mode)
        for command in grader.commands:
            try:
                process = await environment.process.spawn({
                    "executable": command.executable, "args": list(command.args), "cwd": task_root,
                    "env": dict(grader.env), "timeoutMs": command.timeout_ms})
                termination = _termination(await process.wait())
                stdout, stderr = await process.output_bytes("stdout"), await process.output_bytes("stderr")
                dropped = await process.output_dropped()
            except ContractError:
                raise GraderGap("grader_failed", "a grader command could not be started") from None
            kept = _kept(stdout[: grader.max_output_bytes], stderr[: grader.max_output_bytes], store)
            if termination.get("kind") == "timeout":
                raise GraderGap("grader_timeout", "a grader command ran out of time" + kept)
            if any(dropped.values()):
                raise GraderGap("grader_output_truncated", "a grader command wrote more than its output bound" + kept)
            if termination.get("kind") != "exit":
                raise GraderGap("grader_failed", "a grader command ended without an exit status" + kept)
            verdicts.append({"name": command.name, "passed": termination.get("exitCode") == 0,
                             "termination": termination,
                             "stdout": _output(stdout[: grader.max_output_bytes], store),
                             "stderr": _output(stderr[: grader.max_output_bytes], store)})
    finally:
        await environment.destroy()
    dimensions = tuple(sorted((str(v["name"]), 1.0 if v["passed"] else 0.0) for v in verdicts))
    score = sum(value for _, value in dimensions) / len(dimensions)
    submission = {"left": [action.to_wire() for action in actions[:_MAX_ACTIONS]], "leftCount": len(actions)}
    evidence = json.dumps({"kind": _KIND, "verdicts": verdicts, "score": score, "submission": submission},
                          sort_keys=True).encode()
    grade = OutputChecksGrade(score=score, passed=all(v["passed"] for v in verdicts), dimensions=dimensions,
                              evidence=evidence)
    return grade, started, max(int(time.time() * 1000), started)
