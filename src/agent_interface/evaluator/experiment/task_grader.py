"""The grader that runs a task's own checks on the patched workspace.

A workspace task pins the grader ``agent-interface/workspace-command`` version ``1``; its
artifact is a JSON document naming the commands to run and their limits::

    {"kind": "agent-interface.workspace-command.v1",
     "commands": [{"name": "tests", "executable": "/usr/bin/python3",
                   "args": ["-I", "-m", "unittest", "-q"], "timeoutMs": 30000}],
     "restore": ["tests/test_calc.py"],
     "env": {"PATH": "/usr/bin:/bin"},
     "maxOutputBytes": 65536}

:func:`grade_workspace` writes the captured result files (with the ``restore`` paths put
back to the snapshot's bytes, so a candidate cannot grade itself by editing the tests)
into a *fresh* exact-process environment under the task root, and runs each command
there as its own exact process: argv only, the document's ``env`` as the whole
environment, working directory the task root, network blocked, its own ``timeoutMs``
and output bound (``maxOutputBytes`` per stream, the provider's capture bound). A command
that exits 0 scores 1 on its dimension, any other exit 0; the score is the mean, passed
means every command passed. The evidence is each command's termination and the SHA-256
and size of its output.

A command that runs out of time, floods its output bound or cannot be started makes the
cell an invalid capture (:class:`GraderGap`: ``grader_timeout``,
``grader_output_truncated``, ``grader_failed``), never a crash and never a score. A
document that is not this grader is refused (``grader_unsupported``) before any cell runs.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from agent_interface.core.canonical import sha256_bytes
from agent_interface.core.errors import ContractError
from agent_interface.evaluator.run.grader import OutputChecksGrade

__all__ = [
    "WORKSPACE_COMMAND_GRADER",
    "GraderGap",
    "WorkspaceCommand",
    "WorkspaceCommandGrader",
    "grade_workspace",
    "parse_workspace_grader",
]

WORKSPACE_COMMAND_GRADER: Final = ("agent-interface/workspace-command", "1")
"""``(name, version)`` of the grader that runs a task's commands."""

_KIND: Final = "agent-interface.workspace-command.v1"
_NAME_RE: Final = re.compile(r"[a-z0-9]+(?:[._-][a-z0-9]+)*")
_MAX_TIMEOUT_MS: Final = 3_600_000
_MAX_OUTPUT: Final = 16 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class WorkspaceCommand:
    """One check: its dimension name, the absolute executable, its arguments and time limit."""

    name: str
    executable: str
    args: tuple[str, ...]
    timeout_ms: int


@dataclass(frozen=True, slots=True)
class WorkspaceCommandGrader:
    """A parsed grader document."""

    commands: tuple[WorkspaceCommand, ...]
    restore: tuple[str, ...]
    env: dict[str, str]
    max_output_bytes: int

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


def _refuse(message: str) -> ContractError:
    return ContractError.single("/grader", "grader_unsupported", message, subject="benchmark task")


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) and "\0" not in item for item in value)


def parse_workspace_grader(name: str, version: str, artifact: bytes) -> WorkspaceCommandGrader:
    """The grader of a workspace-command artifact; refused unless it is this module's grader."""
    if (name, version) != WORKSPACE_COMMAND_GRADER:
        raise _refuse("a workspace task needs the agent-interface/workspace-command grader, version 1")
    try:
        document = json.loads(artifact)
    except (ValueError, UnicodeDecodeError):
        raise _refuse("the grader artifact is not JSON") from None
    if not isinstance(document, dict) or document.get("kind") != _KIND:
        raise _refuse("the grader artifact is not a workspace-command document")
    if set(document) - {"kind", "commands", "restore", "env", "maxOutputBytes"}:
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
        commands.append(WorkspaceCommand(command_name, executable, tuple(args), timeout))
    restore = document.get("restore", [])
    env = document.get("env", {})
    limit = document.get("maxOutputBytes", 1024 * 1024)
    if not _strings(restore):
        raise _refuse("restore lists workspace paths")
    if not isinstance(env, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
        raise _refuse("env maps names to strings")
    if type(limit) is not int or not 0 < limit <= _MAX_OUTPUT:
        raise _refuse("maxOutputBytes is a positive whole number up to 16 MiB")
    commands.sort(key=lambda command: command.name)
    return WorkspaceCommandGrader(tuple(commands), tuple(restore), dict(env), limit)


def _termination(value: Any) -> dict[str, Any]:
    if isinstance(value, Mapping):
        return dict(value)
    wire: dict[str, Any] = value.to_wire()
    return wire


async def grade_workspace(grader: WorkspaceCommandGrader, exact: Any, create: Mapping[str, Any], task_root: str,
                          files: Mapping[str, tuple[int, bytes]]) -> tuple[OutputChecksGrade, int, int]:
    """Run the grader's commands on ``files`` in a fresh environment of ``exact`` (created
    with ``create``); the grade and the grading start and end (epoch milliseconds).

    ``files`` are the result files with ``restore`` paths already put back by the caller.
    Raises :class:`GraderGap` when a command gives no verdict."""
    started = int(time.time() * 1000)
    try:
        environment = await exact.create(dict(create))
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
            if termination.get("kind") == "timeout":
                raise GraderGap("grader_timeout", "a grader command ran out of time")
            if any(dropped.values()):
                raise GraderGap("grader_output_truncated", "a grader command wrote more than its output bound")
            if termination.get("kind") != "exit":
                raise GraderGap("grader_failed", "a grader command ended without an exit status")
            verdicts.append({"name": command.name, "passed": termination.get("exitCode") == 0,
                             "termination": termination,
                             "stdout": {"sha256": sha256_bytes(stdout), "byteLength": len(stdout)},
                             "stderr": {"sha256": sha256_bytes(stderr), "byteLength": len(stderr)}})
    finally:
        await environment.destroy()
    dimensions = tuple(sorted((str(v["name"]), 1.0 if v["passed"] else 0.0) for v in verdicts))
    score = sum(value for _, value in dimensions) / len(dimensions)
    evidence = json.dumps({"kind": _KIND, "verdicts": verdicts, "score": score}, sort_keys=True).encode()
    grade = OutputChecksGrade(score=score, passed=all(v["passed"] for v in verdicts), dimensions=dimensions,
                              evidence=evidence)
    return grade, started, max(int(time.time() * 1000), started)
