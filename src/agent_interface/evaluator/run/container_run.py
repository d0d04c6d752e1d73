"""Run a candidate in an OCI container: the executor ``candidate run`` uses for container bundles.

:func:`container_wanted` is the choice (``executor``):

* ``"auto"`` (the default): a container when the bundle pins one, the task selects one,
  or the evaluator names an image; otherwise the host-process provider, as before;
* ``"container"``: always a container (a bundle that delegates the choice, with a task
  that makes none, then needs the evaluator's ``image``);
* ``"host"``: never; a bundle or task that needs a container is then refused
  (``container_unavailable``), as the host provider cannot run an image.

:meth:`ContainerRun.open` prepares one run's container executor, before anything runs:
the image (:func:`.image_selection.select_image`, from the store the caller names), a
private host directory (removed at :meth:`ContainerRun.close`) holding

* ``model/``, the evaluator's model endpoint socket directory, bound read-only at
  ``/tangle/model`` (a socket stays connectable on a read-only mount): the endpoint is
  ``unix:/tangle/model/endpoint.sock``, and with the container's empty network namespace
  and its own root file system it is the only way out;
* ``input/task.txt`` for file delivery, bound read-only at ``/tangle/input``: the program
  can read the instruction at ``TANGLE_CANDIDATE_TASK_PATH`` but neither write, replace
  nor chmod it (the mount is read-only, and the program is not the file's owner);
* ``provider/``, the root of an :class:`~agent_interface.evaluator.container.oci_provider.OciExactProcessProvider`
  opened over that image with those binds.

Every directory and file there is owned by host root with the containers' root group
(:data:`.image_selection.CONTAINER_ID_BASE`) and no access for others (0o710 directories,
0o440 task file, 0o550 input directory): the containers' user can reach them, no other
user of the host can list, read the instruction or call the endpoint.

The provider probes this host at open; when it cannot declare ``exactProcess`` the run is
refused (``container_unavailable``, naming what the host could not enforce). Workspace
snapshots and profile files are then written into the environment through its
``write_file``, and stdin and argv delivery go through the launch, as on the host.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
from pathlib import Path
from typing import Any, Final, Literal

from agent_interface.candidate.bundle import AgentCandidateBundle
from agent_interface.candidate.execution_plan import TANGLE_CANDIDATE_TASK_FILE
from agent_interface.candidate.tasks import AgentCandidateBenchmarkTask
from agent_interface.core.errors import ContractError
from agent_interface.evaluator.container.environment_root import unmount_environment_root
from agent_interface.evaluator.container.oci_provider import (
    OciExactProcesses,
    OciExactProcessProvider,
)
from agent_interface.evaluator.images.oci_store import OciImageStore
from agent_interface.evaluator.images.tree_removal import remove_tree
from agent_interface.evaluator.run.image_selection import (
    CONTAINER_ID_BASE,
    SelectedImage,
    select_image,
)

__all__ = ["ContainerRun", "Executor", "container_wanted"]

Executor = Literal["auto", "container", "host"]
"""Where ``candidate run`` runs the program (see the module docstring)."""

MODEL_DIRECTORY: Final = "/tangle/model"
INPUT_DIRECTORY: Final = TANGLE_CANDIDATE_TASK_FILE.rsplit("/", 1)[0]


def _refuse(pointer: str, code: str, message: str) -> ContractError:
    return ContractError.single(pointer, code, message, subject="container run")


def container_wanted(bundle: AgentCandidateBundle, task: AgentCandidateBenchmarkTask, executor: Executor,
                     image: str | None = None) -> bool:
    """Whether this run goes to a container (``executor``: see the module docstring)."""
    if executor not in ("auto", "container", "host"):
        raise _refuse("/executor", "executor_unknown", "the executor is auto, container or host")
    if executor != "auto":
        return executor == "container"
    return (bundle.execution.environment.kind == "pinned-container" or task.evaluator_task_container is not None
            or image is not None)


def _store(images: OciImageStore | str | os.PathLike[str] | None, bundle: AgentCandidateBundle) -> OciImageStore:
    if isinstance(images, OciImageStore):
        return images
    if images is None:
        what = "the bundle pins" if bundle.execution.environment.kind == "pinned-container" else "this run needs"
        raise _refuse("/images", "container_unavailable",
                      f"no image store was named (images, --images), so the container {what} cannot be run")
    if not Path(images).is_dir():
        raise _refuse("/images", "container_unavailable", "the image store named is not a directory")
    return OciImageStore(images)


class ContainerRun:
    """One run's container executor: the selected image, the provider, its host directory.

    Used by :func:`agent_interface.evaluator.run.candidate_run.run_candidate_async` in the
    place of the host provider (same ``exact_process``, ``image``, ``name`` and ``close``).
    """

    private_root: Final = True
    """Every plan path is the program's own (its own root file system)."""

    def __init__(self, directory: Path, selected: SelectedImage, provider: OciExactProcessProvider) -> None:
        self.directory: Final = directory
        self.selected: Final = selected
        self.provider: Final = provider
        self.name: Final = provider.name
        self.model_directory: Final = directory / "model"
        """The host directory of the model endpoint's socket (bound at ``/tangle/model``)."""

    @classmethod
    async def open(
        cls,
        bundle: AgentCandidateBundle,
        task: AgentCandidateBenchmarkTask,
        *,
        images: OciImageStore | str | os.PathLike[str] | None,
        image: str | None = None,
        runc: str | None = None,
        selected: SelectedImage | None = None,
        max_output_bytes: int | None = None,
    ) -> ContainerRun:
        """Select the image, prepare the binds, open the provider; refused before anything runs.

        ``selected`` runs that image instead of selecting one (``images`` and ``image`` are
        then unused); ``max_output_bytes`` bounds each captured stream (the provider's
        default otherwise)."""
        if selected is None:
            store = _store(images, bundle)
            selected = await asyncio.to_thread(select_image, bundle, task, store, image=image)
        directory = Path(tempfile.mkdtemp(prefix="agent-interface-container-"))
        try:
            _group_only(directory, 0o710)
            (directory / "model").mkdir()
            _group_only(directory / "model", 0o710)
            binds: dict[str, str | os.PathLike[str]] = {MODEL_DIRECTORY: directory / "model"}
            if bundle.execution.instruction_delivery.kind == "utf8-file":
                binds[INPUT_DIRECTORY] = _task_file(directory / "input", task.instruction.encode())
            provider = await OciExactProcessProvider.open(
                directory / "provider", images=selected, runc=runc, id_base=CONTAINER_ID_BASE,
                read_only_binds=binds,
                **({} if max_output_bytes is None else {"max_output_bytes": max_output_bytes}))
            run = cls(directory, selected, provider)
            if provider.exact_process is None:
                run.close()
                raise _refuse("/", "container_unavailable",
                              "this host cannot run the container with every exact-process property enforced: "
                              + "; ".join(provider.reasons))
            return run
        except BaseException:
            _remove(directory)
            raise

    @property
    def exact_process(self) -> OciExactProcesses | None:
        """The provider's exact-process surface."""
        return self.provider.exact_process

    @property
    def image(self) -> str:
        """The create input's image: ``name@sha256:<manifest digest>``."""
        return self.selected.root.reference

    @property
    def plan_container(self) -> dict[str, Any]:
        """The plan's container record (source, image, index, manifest, platform)."""
        return dict(self.selected.container)

    def executor_record(self) -> dict[str, Any]:
        """What the executor capture adds about the image that ran."""
        root, stored = self.selected.root, self.selected.stored
        record: dict[str, Any] = {
            "image": {"reference": root.reference, "indexDigest": root.index_digest,
                      "manifestDigest": root.manifest_digest, "platform": root.platform.to_wire()},
        }
        if stored.source is not None:
            record["image"]["storeSource"] = stored.source
        return record

    def close(self) -> None:
        """Close the provider and remove the host directory (after the environment's destroy)."""
        self.provider.close()
        _remove(self.directory)


def _task_file(directory: Path, data: bytes) -> Path:
    """``directory/task.txt`` holding ``data``: readable by the containers' group, written by no one."""
    directory.mkdir(mode=0o700)
    path = directory / "task.txt"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o400)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fchown(fd, 0, CONTAINER_ID_BASE)
        os.fchmod(fd, 0o440)
    finally:
        os.close(fd)
    _group_only(directory, 0o550)
    return directory


def _group_only(path: Path, mode: int) -> None:
    """Host root owns ``path``, the containers' root group may use it (``mode``), others not."""
    os.chown(path, 0, CONTAINER_ID_BASE)
    os.chmod(path, mode)


def _remove(directory: Path) -> None:
    """Remove ``directory``, first unmounting any environment root a failed destroy left."""
    environments = directory / "provider" / "environments"
    with contextlib.suppress(OSError):
        for environment in environments.iterdir():
            unmount_environment_root(environment / "root")
    with contextlib.suppress(OSError):
        os.chmod(directory / "input", 0o700)
    remove_tree(directory, ignore_errors=True)
