"""Experiment cells in OCI containers: which cells run in one, in which image, checked up front.

:class:`ContainerCells` is the experiment's container choice (``executor``, the image
store ``images`` and the evaluator's ``image``), as for ``candidate run``
(:mod:`agent_interface.evaluator.run.container_run`):

* an **attempt** runs in a container when :func:`~agent_interface.evaluator.run.container_run.container_wanted`
  says so for its arm's bundle and its task (``auto``: the bundle pins one, the task
  selects one, or ``image`` is named; ``container``: always; ``host``: never). It runs
  through :class:`~agent_interface.evaluator.run.container_run.ContainerRun`: the image the
  bundle pins, else the task's, else ``image``, found in the store by name and index
  digest; the plan's container record is the selection's (source, image, index,
  manifest, platform); the task file is bound read-only, and the model gateway is
  reached through the environment's strict-egress proxy (:mod:`agent_interface.evaluator.run.model_access`); the executor capture names the image, and the receipts the container. A
  workspace task's capture program runs in that same environment, so the image must
  hold a Python interpreter at :attr:`ContainerCells.capture_python`;
* a workspace task's **grader** runs in the task's own container
  (:func:`~agent_interface.evaluator.run.image_selection.select_task_image`) when the
  task selects one (its commands are then executables inside that image), and on the
  host provider otherwise;
* everything else keeps the host exact-process provider.

:meth:`ContainerCells.check` runs in the driver before any cell: every image a cell or
grader would run is selected (and unpacked into the store's cache), so a missing
image, platform or manifest is refused (``container_image_unavailable``,
``container_platform_unavailable``, ``container_manifest_mismatch``, ...) with the
experiment pointer of the bundle or task that names it; a container wanted without a
store is ``container_unavailable``. The store is read by path in every worker, so a Ray
cluster needs the store at the same path on every node (images are not fetched to nodes).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from agent_interface.candidate.bundle import AgentCandidateBundle
from agent_interface.candidate.experiment import AgentCandidateExperiment
from agent_interface.candidate.tasks import AgentCandidateBenchmarkTask
from agent_interface.core.errors import ContractError, ContractIssue
from agent_interface.evaluator.images.oci_store import OciImageStore
from agent_interface.evaluator.run.container_run import (
    ContainerRun,
    Executor,
    check_image_launch,
    container_wanted,
)
from agent_interface.evaluator.run.image_selection import (
    SelectedImage,
    select_image,
    select_task_image,
)

__all__ = ["DEFAULT_CAPTURE_PYTHON", "ContainerCells"]

DEFAULT_CAPTURE_PYTHON: Final = "/usr/bin/python3"
"""Where a container image holds the interpreter of the workspace capture program."""


def _refuse(pointer: str, code: str, message: str) -> ContractError:
    return ContractError.single(pointer, code, message, subject="experiment")


class ContainerCells:
    """Which cells of an experiment run in a container, and opening their executors.

    ``images`` is the image store's directory (``None``: no container can run);
    ``executor`` and ``image`` are ``candidate run``'s; ``runc`` the runtime binary
    (found on ``PATH`` by default); ``capture_python`` the interpreter path inside an
    image that runs a workspace task's capture program.
    """

    def __init__(self, images: str | os.PathLike[str] | None = None, executor: Executor = "auto",
                 image: str | None = None, *, runc: str | None = None,
                 capture_python: str = DEFAULT_CAPTURE_PYTHON) -> None:
        if executor not in ("auto", "container", "host"):
            raise _refuse("/executor", "executor_unknown", "the executor is auto, container or host")
        self.images = None if images is None else Path(images)
        self.executor: Executor = executor
        self.image = image
        self.runc = runc
        self.capture_python = capture_python
        self._store: OciImageStore | None = None
        self._selected: dict[tuple[str, str], SelectedImage] = {}

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> ContainerCells:
        """From a worker context's ``options`` (what :meth:`options` wrote)."""
        return cls(options.get("images"), options.get("executor", "auto"), options.get("image"),
                   runc=options.get("runc"), capture_python=options.get("capturePython", DEFAULT_CAPTURE_PYTHON))

    def options(self) -> dict[str, Any]:
        """Plain data for a worker context (processes and Ray nodes rebuild the choice from it)."""
        return {"images": None if self.images is None else str(self.images.resolve()), "executor": self.executor,
                "image": self.image, "runc": self.runc, "capturePython": self.capture_python}

    def wanted(self, bundle: AgentCandidateBundle, task: AgentCandidateBenchmarkTask) -> bool:
        """Whether an attempt of ``bundle`` on ``task`` runs in a container."""
        return container_wanted(bundle, task, self.executor, self.image)

    def grader_wanted(self, task: AgentCandidateBenchmarkTask) -> bool:
        """Whether ``task``'s grader runs in the task's container (it selects one, not ``host``)."""
        return task.evaluator_task_container is not None and self.executor != "host"

    def store(self) -> OciImageStore:
        """The image store (refused as ``container_unavailable`` when none was named)."""
        if self._store is None:
            if self.images is None:
                raise _refuse("/images", "container_unavailable",
                              "a cell needs a container but no image store was named (images, --images)")
            if not self.images.is_dir():
                raise _refuse("/images", "container_unavailable", "the image store named is not a directory")
            self._store = OciImageStore(self.images)
        return self._store

    def _select(self, key: tuple[str, str], bundle: AgentCandidateBundle | None,
                task: AgentCandidateBenchmarkTask) -> SelectedImage:
        selected = self._selected.get(key)
        if selected is None:
            store = self.store()
            selected = (select_task_image(task, store) if bundle is None
                        else select_image(bundle, task, store, image=self.image))
            self._selected[key] = selected
        return selected

    async def open_attempt(self, arm: str, task_index: int, bundle: AgentCandidateBundle,
                           task: AgentCandidateBenchmarkTask, max_output_bytes: int,
                           gateway: tuple[str, int] | None = None) -> ContainerRun:
        """The container executor of one attempt (the image selected once per arm and task);
        ``gateway`` is the model gateway's loopback address its strict-egress proxy routes to."""
        selected = await asyncio.to_thread(self._select, (arm, str(task_index)), bundle, task)
        return await ContainerRun.open(bundle, task, images=None, selected=selected, runc=self.runc,
                                       max_output_bytes=max_output_bytes, gateway=gateway)

    async def open_grader(self, task_index: int, bundle: AgentCandidateBundle, task: AgentCandidateBenchmarkTask,
                          max_output_bytes: int) -> ContainerRun:
        """The container executor of ``task``'s grader: the task's own image."""
        selected = await asyncio.to_thread(self._select, ("grader", str(task_index)), None, task)
        return await ContainerRun.open(bundle, task, images=None, selected=selected, runc=self.runc,
                                       max_output_bytes=max_output_bytes, check_launch=False)

    def runs_task_containers(self) -> bool:
        """Whether a task that selects a container can run here (not the ``host`` executor)."""
        return self.executor != "host"

    def check(self, experiment: AgentCandidateExperiment) -> None:
        """Select every image a cell or grader of ``experiment`` runs, or refuse (module docstring)."""
        for index, task in enumerate(experiment.benchmark.tasks):
            for arm in ("baseline", "candidate"):
                bundle = getattr(experiment, arm)
                if not self.wanted(bundle, task):
                    continue
                pointer = (f"/{arm}" if bundle.execution.environment.kind == "pinned-container"
                           else f"/benchmark/tasks/{index}")
                self._checked(pointer, (arm, str(index)), bundle, task)
                try:
                    check_image_launch(bundle, self._selected[(arm, str(index))])
                except ContractError as error:
                    issues = [ContractIssue(f"/{arm}" + issue.path, issue.code, issue.message) for issue in error.issues]
                    raise ContractError(issues, subject="experiment") from None
            if task.outcome.kind == "workspace" and self.grader_wanted(task):
                self._checked(f"/benchmark/tasks/{index}", ("grader", str(index)), None, task)

    def _checked(self, prefix: str, key: tuple[str, str], bundle: AgentCandidateBundle | None,
                 task: AgentCandidateBenchmarkTask) -> None:
        try:
            self._select(key, bundle, task)
        except ContractError as error:
            issues = [ContractIssue(issue.path if issue.path in ("/images", "/image") else prefix + issue.path,
                                    issue.code, issue.message) for issue in error.issues]
            raise ContractError(issues, subject="experiment") from None
