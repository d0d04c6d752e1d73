"""Run every cell of an experiment into a run directory, on local workers or a Ray cluster.

:func:`run_experiment` does, in order:

1. **refuse** what cannot run: an experiment, suite or task whose digest does not match
   (a suite whose seeds do not match its tasks and repetitions is refused when the
   experiment is parsed), a bundle the integrity verifier refuses (each bundle is verified
   once, against ``repository``), and, for the default runner, what no cell could run on
   the host provider or whose container image the store cannot give
   (:func:`~.cell_runner.check_experiment_inputs`, :mod:`.container_cells`);
2. **open** the run directory (:mod:`.ledger`): refused when it holds another experiment
   or another process holds it; recover the cells a crash interrupted;
3. **run** the pending cells, at most ``workers`` at a time, each attempt in a local
   worker process (bounded by this machine's CPUs) or a Ray task (``engine="ray"``);
   a failed attempt is tried again as the task's retry policy allows; a worker that dies
   under an attempt has the same attempt run again (it is idempotent), at most twice;
4. **record** each outcome as it arrives: its artifacts into the shared store, its record
   file, then its ledger row; at the end ``results.json``.

Progress is reported through ``progress`` after every change.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import os
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from agent_interface.candidate.experiment import AgentCandidateExperiment
from agent_interface.core.errors import ContractError, ContractIssue
from agent_interface.evaluator.experiment.cells import (
    CellOutcome,
    CellRequest,
    CellRunner,
    cell_execution_id,
    experiment_cells,
    failed_outcome,
)
from agent_interface.evaluator.experiment.container_cells import ContainerCells
from agent_interface.evaluator.experiment.ledger import ExperimentLedger, RunDirectory, cell_summary
from agent_interface.evaluator.experiment.workers import CellContext, init_worker, run_in_worker
from agent_interface.evaluator.git.limits import GitLimits
from agent_interface.evaluator.run.container_run import Executor
from agent_interface.evaluator.verify.artifact_store import LocalArtifactStore

__all__ = [
    "CellExecutor",
    "ExperimentProgress",
    "ExperimentRunOptions",
    "ExperimentRunSummary",
    "LocalCellExecutor",
    "max_local_workers",
    "prepare_experiment",
    "run_experiment",
]

_WORKER_LOSSES = 2


@dataclass(frozen=True, slots=True)
class ExperimentProgress:
    """Counts of cells by state, time so far and the estimated time left (``None`` until known)."""

    total: int
    done: int
    invalid: int
    failed: int
    running: int
    elapsed_s: float
    eta_s: float | None


@dataclass(slots=True)
class ExperimentRunOptions:
    """How to run: the run directory, the bundles' repository, external artifacts, the engine
    and its width; ``runner`` replaces the default runner factory (see :mod:`.workers`);
    ``executor``, ``images`` (an image store directory) and ``image`` choose which cells
    run in an OCI container (see :mod:`.container_cells`); ``resources`` (``cpu``,
    ``memoryMb``, ``diskMb``) replace the default resources of every cell's environments
    and of its grader's (where the grader document sets none); ``model_upstream`` (an
    :func:`~agent_interface.evaluator.gateway.upstream_from_spec` spec: ``echo``,
    ``scripted:PATH``, ``openai:URL``, ``anthropic:URL``) and ``model_key_env`` (the name of
    the environment variable holding the upstream's key, read at call time) are the model
    behind each worker's gateway."""

    out: Path
    repository: Path | None = None
    artifacts: Path | None = None
    workers: int = 1
    engine: Literal["local", "ray"] = "local"
    address: str | None = None
    progress: Callable[[ExperimentProgress], None] | None = None
    runner: Callable[[CellContext], CellRunner] | None = None
    git_limits: GitLimits | None = None
    verify: bool = True
    executor: Executor = "auto"
    images: Path | None = None
    image: str | None = None
    max_document_bytes: int = 64 << 20
    """The experiment document's size, refused above (``experiment_too_large``) before it is parsed."""
    max_cells: int = 100_000
    """The cells (tasks x repetitions x 2 arms), refused above (``experiment_too_large``) before any runs."""
    resources: dict[str, Any] | None = None
    model_upstream: str = "echo"
    model_key_env: str | None = None


@dataclass(slots=True)
class ExperimentRunSummary:
    """What a run left: the counts by state, what recovery did, and where the results are."""

    out: Path
    experiment: str
    counts: dict[str, int]
    recovered: int
    rerun: int
    ran: int
    seconds: float
    results: Path
    failures: list[dict[str, Any]] = field(default_factory=list)


class CellExecutor(Protocol):
    """Where attempts run: submit, wait for some, read a result, close."""

    def submit(self, request: CellRequest) -> Any:
        """Start ``request``; a handle."""
        ...

    def wait(self, handles: Iterable[Any], timeout: float) -> list[Any]:
        """The handles finished within ``timeout`` seconds."""
        ...

    def result(self, handle: Any) -> CellOutcome:
        """The outcome of a finished handle (raises when the worker was lost)."""
        ...

    def close(self) -> None:
        """Stop the workers."""
        ...


def max_local_workers() -> int:
    """The CPUs this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


class LocalCellExecutor:
    """Attempts in local worker processes (``spawn``ed; each dies with the driver)."""

    def __init__(self, context: CellContext, workers: int) -> None:
        self._context = context
        self._workers = workers
        self._pool = self._new_pool()

    def _new_pool(self) -> concurrent.futures.ProcessPoolExecutor:
        return concurrent.futures.ProcessPoolExecutor(
            max_workers=self._workers, mp_context=multiprocessing.get_context("spawn"),
            initializer=init_worker, initargs=(self._context,))

    def submit(self, request: CellRequest) -> Any:
        """Start ``request`` in a worker (a new pool when the last one broke)."""
        try:
            return self._pool.submit(run_in_worker, request)
        except concurrent.futures.BrokenExecutor:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = self._new_pool()
            return self._pool.submit(run_in_worker, request)

    def wait(self, handles: Iterable[Any], timeout: float) -> list[Any]:
        """The futures finished within ``timeout`` seconds."""
        done, _ = concurrent.futures.wait(list(handles), timeout=timeout,
                                          return_when=concurrent.futures.FIRST_COMPLETED)
        return list(done)

    def result(self, handle: Any) -> CellOutcome:
        """The outcome of a finished future."""
        outcome: CellOutcome = handle.result()
        return outcome

    def close(self) -> None:
        """Stop the pool, cancelling attempts not started."""
        self._pool.shutdown(wait=True, cancel_futures=True)


def _prefixed(error: ContractError, prefix: str) -> ContractError:
    return ContractError([ContractIssue(prefix + issue.path, issue.code, issue.message) for issue in error.issues],
                         subject="experiment")


def prepare_experiment(experiment_bytes: bytes, options: ExperimentRunOptions
                       ) -> tuple[AgentCandidateExperiment, dict[str, dict[str, Any]]]:
    """The parsed experiment and each arm's verification (wire), or a refusal (step 1)."""
    from agent_interface.evaluator.run.candidate_run import local_artifact_resolver
    from agent_interface.evaluator.verify.integrity import verify_candidate_bundle

    if len(experiment_bytes) > options.max_document_bytes:
        raise ContractError.single("", "experiment_too_large",
                                   f"the experiment document is larger than {options.max_document_bytes} bytes",
                                   subject="experiment")
    experiment = AgentCandidateExperiment.parse_wire(experiment_bytes)
    suite = experiment.benchmark.suite
    if len(suite.task_digests) * suite.reps * 2 > options.max_cells:
        raise ContractError.single("/benchmark/suite/reps", "experiment_too_large",
                                   f"the experiment has more than {options.max_cells} cells", subject="experiment")
    experiment.verify_digest()
    experiment.benchmark.suite.verify_digest()
    for index, task in enumerate(experiment.benchmark.tasks):
        try:
            task.verify_digest()
        except ContractError as error:
            raise _prefixed(error, f"/benchmark/tasks/{index}") from None
    verifications: dict[str, dict[str, Any]] = {}
    resolver = local_artifact_resolver(options.artifacts)
    for arm in ("baseline", "candidate"):
        if not options.verify:
            continue
        try:
            repository = None if options.repository is None else options.repository.resolve()
            verification = verify_candidate_bundle(getattr(experiment, arm).to_wire(), repository=repository,
                                                   resolver=resolver, git_limits=options.git_limits)
        except ContractError as error:
            if error.issues[0].code == "repository_unavailable":
                raise
            raise _prefixed(error, f"/{arm}") from None
        verifications[arm] = verification.to_wire()
    if options.runner is None:
        from agent_interface.evaluator.experiment.cell_runner import check_experiment_inputs
        from agent_interface.evaluator.gateway import upstream_from_spec

        upstream_from_spec(options.model_upstream, options.model_key_env)  # refused here, not in a worker

        check_experiment_inputs(experiment, options.artifacts, _containers(options))
    return experiment, verifications


def _containers(options: ExperimentRunOptions) -> ContainerCells:
    return ContainerCells(options.images, options.executor, options.image)


def _record(outcome: CellOutcome, summary: dict[str, Any]) -> dict[str, Any]:
    if outcome.state == "done":
        assert outcome.evidence is not None
        return outcome.evidence
    record: dict[str, Any] = {"kind": f"agent-interface.experiment-{outcome.state}-cell.v1",
                              "executionId": outcome.execution_id, "summary": summary}
    if outcome.materialization_receipt is not None:
        record["materializationReceipt"] = outcome.materialization_receipt
    if outcome.invalid_capture is not None:
        record["invalidCapture"] = outcome.invalid_capture
    if outcome.error is not None:
        record["error"] = outcome.error
    return record


def _retryable(experiment: AgentCandidateExperiment, outcome: CellOutcome) -> bool:
    policy = experiment.benchmark.tasks[outcome.cell.task_index].attempt
    return (outcome.state == "failed" and outcome.model_calls == 0
            and policy.retry_policy == "pre-model-infrastructure-only" and outcome.attempt < policy.max_attempts)


def run_experiment(experiment_bytes: bytes, options: ExperimentRunOptions) -> ExperimentRunSummary:
    """Run (or resume) the experiment into ``options.out``; see the module docstring."""
    started = time.monotonic()
    directory = RunDirectory(options.out)
    with directory.driver_scratch():  # the driver's own temporary directories, swept on resume
        experiment, verifications = prepare_experiment(experiment_bytes, options)
        directory.open(experiment_bytes, experiment.digest)
        return _open_run(experiment, experiment_bytes, verifications, options, directory, started)


def _open_run(experiment: AgentCandidateExperiment, experiment_bytes: bytes,
              verifications: dict[str, dict[str, Any]], options: ExperimentRunOptions, directory: RunDirectory,
              started: float) -> ExperimentRunSummary:
    try:
        cells = experiment_cells(experiment)
        ledger = ExperimentLedger(directory, experiment.digest, cells)
        try:
            return _run(experiment, experiment_bytes, verifications, options, directory, ledger, len(cells), started)
        finally:
            ledger.close()
    finally:
        directory.close()


def _run(experiment: AgentCandidateExperiment, experiment_bytes: bytes, verifications: dict[str, dict[str, Any]],
         options: ExperimentRunOptions, directory: RunDirectory, ledger: ExperimentLedger, total: int,
         started: float) -> ExperimentRunSummary:
    recovery = ledger.recover()
    pending = deque(ledger.pending())
    context = CellContext(experiment_bytes, experiment.digest, verifications,
                          None if options.artifacts is None else str(options.artifacts.resolve()), options.runner,
                          options={**_containers(options).options(), "modelUpstream": options.model_upstream,
                                   "modelKeyEnv": options.model_key_env},
                          resources=options.resources,
                          scratch=str(directory.scratch.resolve()))
    store = LocalArtifactStore(directory.artifacts)
    ran = 0
    settled_now = 0
    in_flight: dict[Any, CellRequest] = {}
    losses: dict[str, int] = {}

    def report() -> None:
        if options.progress is None:
            return
        counts = ledger.counts()
        elapsed = time.monotonic() - started
        remaining = len(pending) + len(in_flight)
        eta = elapsed / settled_now * remaining if settled_now else None
        options.progress(ExperimentProgress(total, counts["done"], counts["invalid"], counts["failed"],
                                            len(in_flight), elapsed, eta))

    executor: CellExecutor = _NoExecutor()
    if options.engine == "ray":
        width = options.workers
        if pending:
            from agent_interface.evaluator.experiment.ray_engine import ray_executor

            executor = ray_executor(options.address, context)
    else:
        width = max(1, min(options.workers, max_local_workers()))
        if pending:
            executor = LocalCellExecutor(context, width)
    try:
        report()
        while pending or in_flight:
            while pending and len(in_flight) < width:
                cell, attempt = pending.popleft()
                request = CellRequest(cell, attempt, cell_execution_id(experiment.digest, cell, attempt))
                ledger.claim(cell, attempt, request.execution_id)
                in_flight[executor.submit(request)] = request
                ran += 1
            report()
            for handle in executor.wait(in_flight, timeout=0.5):
                request = in_flight.pop(handle)
                try:
                    outcome = executor.result(handle)
                except Exception:  # the worker died under the attempt (or Ray gave up on it)
                    lost = losses[request.cell.key] = losses.get(request.cell.key, 0) + 1
                    if lost <= _WORKER_LOSSES:
                        pending.appendleft((request.cell, request.attempt))
                        continue
                    outcome = failed_outcome(request, "", "cell_worker_lost",
                                             "the worker running this attempt died, again")
                if _retryable(experiment, outcome):
                    ledger.retry(outcome)
                    pending.append((outcome.cell, outcome.attempt + 1))
                    continue
                for data in outcome.artifacts.values():
                    store.put(data)
                summary = cell_summary(outcome)
                ledger.settle(outcome, _record(outcome, summary), summary)
                settled_now += 1
                report()
    finally:
        executor.close()
    ledger.write_results()
    counts = ledger.counts()
    failures = [cell for cell in ledger.results()["cells"] if cell["state"] == "failed"]
    return ExperimentRunSummary(directory.root, experiment.digest, counts, recovery["recovered"], recovery["rerun"],
                                ran, time.monotonic() - started, directory.results, failures)


class _NoExecutor:
    """Nothing left to run: no worker is started."""

    def submit(self, request: CellRequest) -> Any:
        raise AssertionError("nothing to submit")

    def wait(self, handles: Iterable[Any], timeout: float) -> list[Any]:
        return []

    def result(self, handle: Any) -> CellOutcome:
        raise AssertionError("no result")

    def close(self) -> None:
        return None
