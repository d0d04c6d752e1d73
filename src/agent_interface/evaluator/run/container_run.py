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

* ``input/task.txt`` for file delivery, bound read-only at ``/tangle/input``: the program
  can read the instruction at ``TANGLE_CANDIDATE_TASK_PATH`` but neither write, replace
  nor chmod it (the mount is read-only, and the program is not the file's owner);
* ``provider/``, the root of an :class:`~agent_interface.evaluator.container.oci_provider.OciExactProcessProvider`
  opened over that image with those binds.

The directory is a private tmpfs (:func:`~agent_interface.evaluator.container.environment_root.mount_scratch_tmpfs`,
room for eight times ``max_output_bytes`` besides 64 MiB): nothing in it outlives the run
(it is removed at :meth:`ContainerRun.close`, and nothing recovers a run's provider after a
crash), so the provider's SQLite store, control files and captures need no ``fsync`` to a
disk, which cost about 0.1 s per run on a loaded disk.

Every directory and file there is owned by host root with the containers' root group
(:data:`.image_selection.CONTAINER_ID_BASE`) and no access for others (0o710 directories,
0o440 task file, 0o550 input directory): the containers' user can reach them, no other
user of the host can list or read the instruction.

The model gateway is reached over the network, not through a file: with ``gateway`` (the
gateway's loopback address) the provider's strict-egress proxies route the gateway's
domain to it (:func:`.model_access.gateway_egress_settings`), and an environment created
with egress ``strict`` to that domain alone reaches the gateway and nothing else
(:mod:`.model_access`).

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
from agent_interface.evaluator.container.environment_root import (
    mount_scratch_tmpfs,
    unmount_environment_root,
    unmount_scratch_tmpfs,
)
from agent_interface.evaluator.container.oci_provider import (
    DEFAULT_MAX_OUTPUT_BYTES,
    OciExactProcesses,
    OciExactProcessProvider,
)
from agent_interface.evaluator.images.image_paths import find_executable
from agent_interface.evaluator.images.oci_store import OciImageStore
from agent_interface.evaluator.images.tree_removal import remove_tree
from agent_interface.evaluator.run.image_selection import (
    CONTAINER_ID_BASE,
    SelectedImage,
    select_image,
)
from agent_interface.evaluator.run.model_access import gateway_egress_settings

__all__ = ["ContainerRun", "Executor", "check_image_launch", "container_wanted"]

Executor = Literal["auto", "container", "host"]
"""Where ``candidate run`` runs the program (see the module docstring)."""

_MIB: Final = 1 << 20
_SCRATCH_MB: Final = 64
"""The scratch tmpfs's room besides the output captures (SQLite, control files, the init)."""
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


def check_image_launch(bundle: AgentCandidateBundle, selected: SelectedImage) -> None:
    """Refuse, before anything runs, a launch the selected image cannot start.

    An interpreter (or a container command) named by a bare name must be an executable
    file along the launch's ``PATH`` inside the image, links resolved in the image's own
    root (:func:`~agent_interface.evaluator.images.image_paths.find_executable`):
    otherwise ``interpreter_unavailable`` naming the image and the ``PATH``. An
    entrypoint without an interpreter runs directly, so its workspace file must have an
    execute bit (``entrypoint_not_executable``); a shebang line in it is the image's
    business. An absolute executable runs as written.
    """
    launch = bundle.execution.launch.to_wire()
    execution = bundle.execution.to_wire()
    if launch["kind"] == "candidate-entrypoint" and launch.get("interpreter") is None:
        files = ((execution.get("workspace") or {}).get("material") or {}).get("files") or []
        mode = next((file["mode"] for file in files if file["path"] == launch["entrypoint"]), 0)
        if not mode & 0o111:
            raise _refuse("/execution/launch/entrypoint", "entrypoint_not_executable",
                          "an entrypoint without an interpreter runs directly, so its workspace file "
                          "must be executable (mode with an execute bit)")
        return
    name = launch.get("interpreter") or launch.get("executable") or ""
    if name.startswith("/"):
        return
    pointer = "/execution/launch/" + ("interpreter" if launch["kind"] == "candidate-entrypoint" else "executable")
    value = (execution.get("env") or {}).get("PATH")
    image = selected.root.reference
    if value is None or value.get("kind") != "public":
        raise _refuse(pointer, "interpreter_unavailable",
                      f"{name} is a bare name, but the launch gives no public PATH to find it along in image {image}")
    search = str(value["value"])
    if find_executable(selected.root.rootfs, name, search) is None:
        shown = search if len(search) <= 512 else search[:509] + "..."
        raise _refuse(pointer, "interpreter_unavailable",
                      f"no executable {name} along PATH {shown} in image {image}")


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
        gateway: tuple[str, int] | None = None,
        check_launch: bool = True,
    ) -> ContainerRun:
        """Select the image, prepare the binds, open the provider; refused before anything runs.

        ``selected`` runs that image instead of selecting one (``images`` and ``image`` are
        then unused); ``max_output_bytes`` bounds each captured stream (the provider's
        default otherwise); ``gateway`` is the model gateway's loopback address, routed to
        by the strict-egress proxies (a task that allows model calls needs it);
        ``check_launch`` refuses a launch the image cannot start (:func:`check_image_launch`;
        off for a grader's container)."""
        if selected is None:
            store = _store(images, bundle)
            selected = await asyncio.to_thread(select_image, bundle, task, store, image=image)
        if check_launch:
            await asyncio.to_thread(check_image_launch, bundle, selected)
        directory = Path(tempfile.mkdtemp(prefix="agent-interface-container-"))
        try:
            output = max_output_bytes if max_output_bytes is not None else DEFAULT_MAX_OUTPUT_BYTES
            await asyncio.to_thread(mount_scratch_tmpfs, directory, size_mb=_SCRATCH_MB + 8 * -(-output // _MIB))
            _group_only(directory, 0o710)
            binds: dict[str, str | os.PathLike[str]] = {}
            if bundle.execution.instruction_delivery.kind == "utf8-file":
                binds[INPUT_DIRECTORY] = _task_file(directory / "input", task.instruction.encode())
            options: dict[str, Any] = {} if max_output_bytes is None else {"max_output_bytes": max_output_bytes}
            if gateway is not None:
                options["egress_settings"] = gateway_egress_settings(gateway)
            provider = await OciExactProcessProvider.open(
                directory / "provider", images=selected, runc=runc, id_base=CONTAINER_ID_BASE,
                read_only_binds=binds, **options)
            run = cls(directory, selected, provider)
            if provider.exact_process is None:
                run.close()
                raise _refuse("/", "container_unavailable",
                              "this host cannot run the container with every exact-process property enforced: "
                              + "; ".join(provider.reasons))
            if gateway is not None and "strict" not in provider.exact_process.egress_modes:
                run.close()
                raise _refuse("/limits/maxModelCalls", "model_gateway_unreachable",
                              "the task allows model calls, but this host cannot enforce strict egress, the only "
                              "way a container reaches the model gateway: "
                              + "; ".join(provider.strict_egress_reasons))
            return run
        except BaseException:
            _remove(directory)
            raise

    @property
    def proxy_port(self) -> int:
        """Where a strict environment's proxy listens inside its network namespace."""
        exact = self.provider.exact_process
        assert exact is not None
        return int(exact.egress_port)

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
    """Remove ``directory``, first unmounting any environment root a failed destroy left,
    then its scratch tmpfs."""
    environments = directory / "provider" / "environments"
    with contextlib.suppress(OSError):
        for environment in environments.iterdir():
            unmount_environment_root(environment / "root")
    with contextlib.suppress(OSError):
        os.chmod(directory / "input", 0o700)
    with contextlib.suppress(OSError):
        unmount_scratch_tmpfs(directory)
    remove_tree(directory, ignore_errors=True)
