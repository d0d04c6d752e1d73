"""The cells of an experiment and how one cell is run, attempt by attempt.

:func:`experiment_cells` lists every ``(arm, task, repetition, seed)`` cell of an
:class:`~agent_interface.candidate.experiment.AgentCandidateExperiment`, task-major as the
suite orders its seeds (``seeds[taskIndex * reps + repetition]``), baseline before
candidate. A cell's :attr:`ExperimentCell.key` names its files in the run directory.

A :class:`CellRunner` runs one counted attempt of one cell and returns a
:class:`CellOutcome`: the materialization receipt and either the run receipt (with the
sealed ``CandidateExecutionEvidence``) or the invalid capture, or, when the attempt
could not run at all, a typed ``error``. :func:`run_cell` drives the attempts under the
task's retry policy: ``pre-model-infrastructure-only`` retries an attempt that failed
before its first model call, up to ``maxAttempts``; ``none`` never retries. Every
attempt has its own idempotency key (:func:`cell_execution_id`, derived from the
experiment digest, the cell and the attempt number), which is also the plan's execution
id, so an interrupted attempt run again is the same attempt with the same plan.

The default runner is :class:`~agent_interface.evaluator.experiment.cell_runner.ExactProcessCellRunner`
(the host exact-process provider, or any provider with the same surface).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol

from agent_interface.candidate.experiment import AgentCandidateExperiment
from agent_interface.candidate.run_cell import AgentCandidateRunArm
from agent_interface.core.canonical import canonical_digest

__all__ = [
    "CellOutcome",
    "CellRequest",
    "CellRunner",
    "ExperimentCell",
    "cell_execution_id",
    "experiment_cells",
    "failed_outcome",
    "run_cell",
]

CellState = Literal["done", "invalid", "failed"]


@dataclass(frozen=True, slots=True)
class ExperimentCell:
    """One cell: the arm, the task's index in the suite, the repetition and its seed."""

    arm: AgentCandidateRunArm
    task_index: int
    repetition: int
    seed: int

    @property
    def key(self) -> str:
        """The cell's name in the run directory: ``baseline-t0000-r0000``."""
        return f"{self.arm}-t{self.task_index:04d}-r{self.repetition:04d}"


def experiment_cells(experiment: AgentCandidateExperiment) -> list[ExperimentCell]:
    """Every cell of ``experiment``, task-major, baseline before candidate."""
    suite = experiment.benchmark.suite
    return [
        ExperimentCell(arm, task_index, repetition, suite.seeds[task_index * suite.reps + repetition])
        for task_index in range(len(suite.task_digests))
        for repetition in range(suite.reps)
        for arm in ("baseline", "candidate")
    ]


def cell_execution_id(experiment_digest: str, cell: ExperimentCell, attempt: int) -> str:
    """The idempotency key (and execution id) of one attempt of one cell."""
    digest = canonical_digest({"kind": "agent-interface.experiment-cell-attempt.v1", "experiment": experiment_digest,
                               "arm": cell.arm, "taskIndex": cell.task_index, "repetition": cell.repetition,
                               "attempt": attempt})
    return "cell-" + digest.removeprefix("sha256:")[:40]


@dataclass(frozen=True, slots=True)
class CellRequest:
    """One attempt to run: the cell, the counted attempt (from 1) and its idempotency key."""

    cell: ExperimentCell
    attempt: int
    execution_id: str


@dataclass(slots=True)
class CellOutcome:
    """What one attempt produced (wire documents, plain data: it crosses processes and Ray).

    ``state`` is ``done`` (``evidence`` holds the ``CandidateExecutionEvidence``),
    ``invalid`` (``invalid_capture``) or ``failed`` (``error``: ``path``, ``code``,
    ``message``). ``artifacts`` maps the CID of every artifact the cell stored to its
    bytes; ``model_calls`` counts calls through the endpoint; ``program_ms`` is the
    candidate process's run time and ``evaluator_ms`` the whole attempt's.
    """

    cell: ExperimentCell
    attempt: int
    execution_id: str
    state: CellState
    materialization_receipt: dict[str, Any] | None = None
    evidence: dict[str, Any] | None = None
    invalid_capture: dict[str, Any] | None = None
    error: dict[str, str] | None = None
    model_calls: int = 0
    artifacts: dict[str, bytes] = field(default_factory=dict)
    program_ms: int = 0
    evaluator_ms: int = 0


class CellRunner(Protocol):
    """Runs one attempt of one cell; never raises for anything the cell or its inputs did."""

    async def run(self, request: CellRequest) -> CellOutcome:
        """The outcome of ``request`` (a ``failed`` outcome for an attempt that could not run)."""
        ...


async def run_cell(runner: CellRunner, experiment: AgentCandidateExperiment, cell: ExperimentCell,
                   first_attempt: int = 1) -> CellOutcome:
    """Run ``cell`` from ``first_attempt`` under its task's retry policy; the last outcome."""
    task = experiment.benchmark.tasks[cell.task_index]
    policy = task.attempt
    attempt = first_attempt
    while True:
        request = CellRequest(cell, attempt, cell_execution_id(experiment.digest, cell, attempt))
        outcome = await runner.run(request)
        retry = (outcome.state == "failed" and outcome.model_calls == 0
                 and policy.retry_policy == "pre-model-infrastructure-only" and attempt < policy.max_attempts)
        if not retry:
            return outcome
        attempt += 1


def failed_outcome(request: CellRequest, path: str, code: str, message: str, **extra: Any) -> CellOutcome:
    """A ``failed`` outcome for ``request`` with a typed error."""
    outcome = CellOutcome(request.cell, request.attempt, request.execution_id, "failed",
                          error={"path": path, "code": code, "message": message})
    return replace(outcome, **extra) if extra else outcome
