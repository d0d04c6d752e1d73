"""Build benchmark tasks and suites: what an evaluator signs before any candidate runs.

:class:`BenchmarkTaskBuilder` takes the benchmark's name and version, a scenario, the
instruction, the outcome, the task workspace (files, snapshotted), the grader, the model
and the limits, computes every digest and returns the sealed
:class:`~agent_interface.candidate.tasks.AgentCandidateBenchmarkTask`. The grader the local
evaluator runs is :meth:`~BenchmarkTaskBuilder.output_checks`; its document is an
artifact named by its CID, kept in :attr:`BenchmarkTaskBuilder.artifacts` for the
``--artifacts`` directory::

    builder = (
        BenchmarkTaskBuilder("calc-bench", "1", scenario="add-small-numbers")
        .instruction("What is 2 + 3?")
        .output(max_bytes=4096)
        .output_checks(contains=["5"], max_bytes=200)
    )
    task = builder.build()
    builder.artifacts.write_to("artifacts")

:class:`BenchmarkSuiteBuilder` orders tasks, repetitions and seeds into the sealed suite.
Refusals are the contract's ``ContractError``, whose JSON Pointer names the field.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Mapping
from typing import Any, Self

from agent_interface.candidate.tasks import (
    AgentCandidateBenchmarkSuite,
    AgentCandidateBenchmarkTask,
)
from agent_interface.core.canonical import canonical_digest
from agent_interface.core.errors import ContractError
from agent_interface.evaluator.author.artifacts import (
    ArtifactFiles,
    output_checks_document,
    workspace_snapshot,
)

__all__ = ["DEFAULT_LIMITS", "LOCAL_ECHO_MODEL", "BenchmarkSuiteBuilder", "BenchmarkTaskBuilder"]

LOCAL_ECHO_MODEL: Mapping[str, str] = {
    "requested": "demo-model", "provider": "local", "model": "echo", "snapshot": "echo-1", "reasoningEffort": "low",
}
"""The model the local evaluator serves by default (the gateway's offline ``echo`` upstream)."""

DEFAULT_LIMITS: Mapping[str, int] = {
    "timeoutMs": 60_000, "maxSteps": 8, "maxModelCalls": 4, "maxInputTokens": 10_000,
    "maxOutputTokens": 10_000, "maxTotalTokens": 20_000, "maxCostUsd": 0,
}
"""Execution limits a task gets unless :meth:`BenchmarkTaskBuilder.limits` changes them."""

_SUBJECT = "benchmark task builder"


def _refuse(pointer: str, code: str, message: str) -> ContractError:
    return ContractError.single(pointer, code, message, subject=_SUBJECT)


class BenchmarkTaskBuilder:
    """Declare one benchmark task; ``build()`` seals it. Every method returns the builder."""

    def __init__(self, benchmark: str, version: str, *, scenario: str, scenario_kind: str = "task",
                 split: str = "test") -> None:
        self._benchmark = {"name": benchmark, "version": version,
                           "splitDigest": canonical_digest({"kind": "agent-interface.benchmark-split",
                                                            "benchmark": benchmark, "split": split})}
        self._scenario = (scenario, scenario_kind)
        self._instruction: str | None = None
        self._outcome: dict[str, Any] = {"kind": "output", "mediaType": "text/plain", "maxBytes": 4096}
        self._files: Mapping[str, bytes | tuple[bytes, int]] = {}
        self._grader: dict[str, Any] | None = None
        self._model: dict[str, Any] = dict(LOCAL_ECHO_MODEL)
        self._limits: dict[str, Any] = dict(DEFAULT_LIMITS)
        self._attempt: dict[str, Any] = {"maxAttempts": 1, "retryPolicy": "none"}
        self._extra: dict[str, Any] = {}
        self.artifacts = ArtifactFiles()
        """Artifacts the task names by CID (the grader's document); write them with
        ``artifacts.write_to(DIR)`` and pass ``--artifacts DIR`` to ``candidate run``."""

    def instruction(self, text: str) -> Self:
        """The instruction the candidate receives (UTF-8 text)."""
        self._instruction = text
        return self

    def output(self, *, max_bytes: int = 4096, media_type: str = "text/plain") -> Self:
        """The result is the process's output (standard output), at most ``max_bytes``."""
        self._outcome = {"kind": "output", "mediaType": media_type, "maxBytes": max_bytes}
        return self

    def workspace(self, files: Mapping[str, bytes | tuple[bytes, int]]) -> Self:
        """The task workspace's files (path to bytes, or to ``(bytes, mode)``)."""
        self._files = dict(files)
        return self

    def output_checks(self, *, contains: Iterable[str] = (), max_bytes: int | None = None) -> Self:
        """The grader the local evaluator runs, ``agent-interface/output-checks`` 1: the output
        holds every text of ``contains`` and has at most ``max_bytes`` bytes."""
        document = output_checks_document(contains, max_bytes=max_bytes)
        return self.grader("agent-interface/output-checks", "1", document)

    def grader(self, name: str, version: str, document: bytes) -> Self:
        """Any pinned grader: its name, version and artifact bytes (kept by CID)."""
        self._grader = {"name": name, "version": version, "format": "tangle-grader",
                        "artifact": self.artifacts.add(document)}
        return self

    def workspace_outcome(self) -> Self:
        """The result is the change the candidate makes to the task workspace (graded by
        :meth:`workspace_commands`)."""
        self._outcome = {"kind": "workspace"}
        return self

    def repository(self, *, identity: str, commit: str, tree: str,
                   files: Mapping[str, bytes | tuple[bytes, int]]) -> Self:
        """The task's workspace is this commit of the repository ``identity`` (``owner/name``):
        its id, tree and files (read by
        :func:`~agent_interface.evaluator.author.git_range.read_commit`)."""
        self._extra["repository"] = {"identity": identity, "rootIdentity": identity, "baseCommit": commit,
                                     "baseTree": tree}
        self._files = dict(files)
        return self

    def workspace_commands(self, commands: Iterable[tuple[str, Iterable[str], int]], *,
                           restore: Iterable[str] = (), env: Mapping[str, str] | None = None,
                           max_output_bytes: int = 65536) -> Self:
        """The grader that runs the task's own commands on the patched workspace,
        ``agent-interface/workspace-command`` 1: each ``(name, argv, timeout_ms)`` is one
        dimension (``argv[0]`` an absolute path, in the task's image when it selects one);
        ``restore`` paths are put back to the task's bytes first (so a solution may change
        only the others); ``env`` is the commands' whole environment."""
        entries = [{"name": name, "executable": argv[0], "args": argv[1:], "timeoutMs": timeout}
                   for name, argv_items, timeout in commands for argv in [list(argv_items)]]
        if not entries or any(not entry["executable"] for entry in entries):
            raise _refuse("/grader", "grader_commands_required", "give at least one command with an executable")
        document = {"kind": "agent-interface.workspace-command.v1", "commands": entries,
                    "restore": sorted(set(restore)), "env": dict(env or {"PATH": "/usr/local/bin:/usr/bin:/bin"}),
                    "maxOutputBytes": max_output_bytes}
        return self.grader("agent-interface/workspace-command", "1",
                           json.dumps(document, sort_keys=True, separators=(",", ":")).encode())

    def task_container(self, *, image: str, index_digest: str, manifest_digest: str, os: str,
                       architecture: str, variant: str | None = None) -> Self:
        """The task selects its container: the image (name, index and manifest digests and
        platform) the candidate and its grader run in."""
        platform = {"os": os, "architecture": architecture} | ({"variant": variant} if variant else {})
        self._extra["evaluatorTaskContainer"] = {
            "source": "evaluator-task-container", "image": image, "indexDigest": index_digest,
            "manifestDigest": manifest_digest, "platform": platform}
        return self

    def model(self, *, requested: str, provider: str, model: str, snapshot: str,
              reasoning_effort: str = "low") -> Self:
        """The one model a run of this task uses, as the evaluator resolves it."""
        self._model = {"requested": requested, "provider": provider, "model": model, "snapshot": snapshot,
                       "reasoningEffort": reasoning_effort}
        return self

    def limits(self, **limits: int | float) -> Self:
        """Change execution limits by wire name (``timeoutMs``, ``maxModelCalls``, ...)."""
        self._limits.update(limits)
        return self

    def attempts(self, max_attempts: int, retry_policy: str) -> Self:
        """How many counted attempts the task allows (``none``: exactly one)."""
        self._attempt = {"maxAttempts": max_attempts, "retryPolicy": retry_policy}
        return self

    def field(self, name: str, value: Any) -> Self:
        """Any other task field by wire name (``repository``, ``datasetSnapshot``,
        ``evaluatorTaskContainer``); checked by ``build()``."""
        self._extra[name] = copy.deepcopy(value)
        return self

    def material(self) -> dict[str, Any]:
        """The task's wire material without its digest (what ``build()`` seals)."""
        if self._instruction is None:
            raise _refuse("/instruction", "instruction_required", "declare the instruction: instruction(text)")
        if self._grader is None:
            raise _refuse("/grader", "grader_required",
                          "declare the grader: output_checks(...) or grader(name, version, document)")
        scenario, kind = self._scenario
        return copy.deepcopy({
            "kind": "agent-candidate-benchmark-task",
            "digestAlgorithm": "rfc8785-sha256",
            "benchmark": self._benchmark,
            "scenario": {"id": scenario, "kind": kind,
                         "scenarioDigest": canonical_digest({"kind": "agent-interface.scenario", "id": scenario,
                                                             "instruction": self._instruction})},
            "instruction": self._instruction,
            "outcome": self._outcome,
            "workspace": workspace_snapshot(self._files).to_wire(),
            "grader": self._grader,
            "model": self._model,
            "attempt": self._attempt,
            "limits": self._limits,
            **self._extra,
        })

    def build(self) -> AgentCandidateBenchmarkTask:
        """The sealed task (its digest computed); refused with the contract's pointers."""
        return AgentCandidateBenchmarkTask.seal(self.material())


class BenchmarkSuiteBuilder:
    """Tasks in signed order, repetitions and one seed per task repetition."""

    def __init__(self) -> None:
        self._tasks: list[AgentCandidateBenchmarkTask] = []
        self._reps = 1
        self._seeds: list[int] | None = None

    def task(self, task: AgentCandidateBenchmarkTask) -> Self:
        """Add ``task`` (its digest checked first)."""
        self._tasks.append(task.verify_digest())
        return self

    def repetitions(self, reps: int, *, seeds: Iterable[int] | None = None) -> Self:
        """Run every task ``reps`` times; ``seeds`` (one per task repetition, task-major)
        default to 0, 1, 2, ..."""
        self._reps = reps
        self._seeds = None if seeds is None else list(seeds)
        return self

    @property
    def tasks(self) -> tuple[AgentCandidateBenchmarkTask, ...]:
        """The tasks added, in order."""
        return tuple(self._tasks)

    def build(self) -> AgentCandidateBenchmarkSuite:
        """The sealed suite; refused (``/taskDigests``) without a task."""
        if not self._tasks:
            raise _refuse("/taskDigests", "task_required", "add a task: task(...)")
        seeds = self._seeds if self._seeds is not None else list(range(len(self._tasks) * self._reps))
        return AgentCandidateBenchmarkSuite.seal({
            "kind": "agent-candidate-benchmark-suite", "digestAlgorithm": "rfc8785-sha256",
            "taskDigests": [task.digest for task in self._tasks], "reps": self._reps, "seeds": seeds,
        })
