"""What a worker (a local process or a Ray task) needs to run a cell: one picklable context.

:class:`CellContext` carries the experiment's wire bytes, each arm's verification (done
once by the driver), the external artifacts directory, the runner factory and the container choice
(``options``, :meth:`~.container_cells.ContainerCells.options`), so a
worker parses the experiment once per process (:func:`run_with_context` keeps the runner
per experiment digest) and needs nothing else from the driver. A runner factory is a
top-level function taking the context and returning a :class:`~.cells.CellRunner`
(:func:`exact_process_runner` by default).
"""

from __future__ import annotations

import asyncio
import ctypes
import multiprocessing
import os
import signal
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_interface.evaluator.experiment.cells import CellOutcome, CellRequest, CellRunner

__all__ = ["CellContext", "exact_process_runner", "init_worker", "run_in_worker", "run_with_context"]


@dataclass(frozen=True, slots=True)
class CellContext:
    """Everything a worker needs (plain data: it is pickled to processes and Ray nodes)."""

    experiment: bytes
    experiment_digest: str
    verifications: dict[str, dict[str, Any]]
    artifacts: str | None = None
    runner: Callable[[CellContext], CellRunner] | None = None
    options: dict[str, Any] = field(default_factory=dict)
    resources: dict[str, Any] | None = None
    scratch: str | None = None
    """The run's scratch directory (see :class:`~.ledger.RunDirectory`): every cell's
    temporary directory goes there (made on a Ray node that lacks it), or ``None``."""


def exact_process_runner(context: CellContext) -> CellRunner:
    """The default runner: :class:`~.cell_runner.ExactProcessCellRunner` on the host provider,
    and in containers as the context's ``options`` choose (:mod:`.container_cells`), its
    gateway on the upstream they name."""
    from agent_interface.candidate.experiment import AgentCandidateExperiment
    from agent_interface.candidate.verification_result import CandidateVerification
    from agent_interface.evaluator.experiment.cell_runner import ExactProcessCellRunner
    from agent_interface.evaluator.experiment.container_cells import ContainerCells
    from agent_interface.evaluator.gateway import upstream_from_spec

    if context.scratch is not None and not os.path.isdir(context.scratch):  # a Ray node other than the driver's
        os.makedirs(context.scratch, mode=0o700, exist_ok=True)
        os.chmod(context.scratch, 0o711)
    experiment = AgentCandidateExperiment.parse_wire(context.experiment)
    verifications = {arm: CandidateVerification.parse_wire(wire) for arm, wire in context.verifications.items()}
    return ExactProcessCellRunner(experiment, verifications,
                                  artifacts=None if context.artifacts is None else Path(context.artifacts),
                                  scratch=None if context.scratch is None else Path(context.scratch),
                                  containers=ContainerCells.from_options(context.options),
                                  resources=context.resources,
                                  upstream=upstream_from_spec(context.options.get("modelUpstream", "echo"),
                                                              context.options.get("modelKeyEnv")))


_RUNNERS: dict[str, CellRunner] = {}
_CONTEXT: list[CellContext] = []


def run_with_context(context: CellContext, request: CellRequest) -> CellOutcome:
    """Run one attempt in this process (the runner is built once per experiment)."""
    runner = _RUNNERS.get(context.experiment_digest)
    if runner is None:
        runner = (context.runner or exact_process_runner)(context)
        _RUNNERS.clear()
        _RUNNERS[context.experiment_digest] = runner
    return asyncio.run(runner.run(request))


def _die_with_parent() -> None:
    """Ask Linux to kill this worker when its parent (the driver) dies, even by ``kill -9``;
    a driver that died while this worker was still starting (before the request took) is
    seen by the worker's new parent, and the worker ends at once."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    parent = multiprocessing.parent_process()
    if parent is not None and os.getppid() != parent.pid:
        os._exit(1)


def init_worker(context: CellContext) -> None:
    """A local worker process's initializer: keep ``context``; die with the driver."""
    _die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if context.scratch is not None:  # every temporary directory of this worker's cells goes there
        tempfile.tempdir = context.scratch
    _CONTEXT[:] = [context]


def run_in_worker(request: CellRequest) -> CellOutcome:
    """Run one attempt in a local worker process (after :func:`init_worker`)."""
    return run_with_context(_CONTEXT[0], request)
