"""Which OCI image a containerized run runs: found in an image store, narrowed to a platform.

:func:`select_image` turns the container a run names into the plan's container record
and the unpacked image it runs, before anything runs. The container is named by

* the bundle (``execution.environment.kind == "pinned-container"``: image and index
  digest; the manifest is selected for this host's platform from the index);
* else the task (``evaluatorTaskContainer``: image, index, manifest and platform, all of
  which must be what the store selects for this host);
* else the evaluator (``image="name@sha256:<index>"``, only for a bundle that delegates
  the choice and a task that makes none).

The image must be in the :class:`~agent_interface.evaluator.images.oci_store.OciImageStore`
the caller names, under that name (the repository part of the reference, a tag dropped)
and that index digest; the digest is the identity. Refusals (``ContractError``), each
before any container exists:

* ``container_image_required``: nothing names a container (no pin, no task container,
  no evaluator image);
* ``container_image_unavailable``: the store holds no image with that digest under that
  name;
* ``container_platform_unavailable``: the index has no manifest for this host's
  platform, or the task's platform is not this host's;
* ``container_manifest_mismatch``: the manifest the store selects is not the task's;
* ``container_image_conflict``: an evaluator image given where the bundle or the task
  already names one;
* and the store's own refusals (``image_*``) when a blob or layer fails its check.

The image is unpacked (cached per manifest digest by the store) with its files owned by
the containers' root user (:data:`CONTAINER_ID_BASE`), so container root owns them and
nothing of the host.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from agent_interface.candidate.bundle import AgentCandidateBundle
from agent_interface.candidate.tasks import AgentCandidateBenchmarkTask
from agent_interface.core.errors import ContractError
from agent_interface.evaluator.images.image_limits import ImageRefused
from agent_interface.evaluator.images.image_reference import parse_digest_reference
from agent_interface.evaluator.images.image_root import ImageRoot, OciPlatform
from agent_interface.evaluator.images.layer_unpack import IdMapping
from agent_interface.evaluator.images.oci_store import OciImageStore, StoredImage

__all__ = ["CONTAINER_ID_BASE", "SelectedImage", "repository_name", "select_image", "select_task_image"]

CONTAINER_ID_BASE: Final = 100_000
"""The host id of the containers' root user (the OCI provider's default ``id_base``)."""


@dataclass(frozen=True, slots=True)
class SelectedImage:
    """The plan's container record, the unpacked image, and the store entry it came from."""

    container: dict[str, Any]
    root: ImageRoot
    stored: StoredImage

    def image_root(self, manifest_digest: str) -> ImageRoot | None:
        """As an ``ImageRootSource``: this one image, nothing else."""
        return self.root if manifest_digest == self.root.manifest_digest else None


def _refuse(pointer: str, code: str, message: str) -> ContractError:
    return ContractError.single(pointer, code, message, subject="container image")


def repository_name(image: str) -> str:
    """The repository part of an OCI reference (``ghcr.io/a/b:1`` -> ``ghcr.io/a/b``)."""
    name, colon, tag = image.rpartition(":")
    return name if colon and "/" not in tag else image


def _named(bundle: AgentCandidateBundle, task: AgentCandidateBenchmarkTask,
           image: str | None) -> tuple[str, dict[str, Any]]:
    """``(pointer, named container)``: who names the container, and what they name."""
    environment = bundle.execution.environment
    chosen = task.evaluator_task_container
    if environment.kind == "pinned-container":
        if image is not None:
            raise _refuse("/image", "container_image_conflict", "the bundle pins its container; no other image runs")
        return "/execution/environment/container", {"source": "pinned-container", **environment.container.to_wire()}
    if chosen is not None:
        if image is not None:
            raise _refuse("/image", "container_image_conflict", "the task selects its container; no other image runs")
        return "/evaluatorTaskContainer", chosen.to_wire()
    if image is None:
        raise _refuse("/image", "container_image_required",
                      "neither the bundle nor the task names a container, and no evaluator image was given")
    try:
        name, digest = parse_digest_reference(image)
    except ImageRefused as refused:
        raise _refuse("/image", refused.code, refused.issues[0].message) from None
    return "/image", {"source": "evaluator-task-container", "image": name, "indexDigest": digest}


def _stored(store: OciImageStore, pointer: str, name: str, digest: str) -> StoredImage:
    held = [entry for entry in store.images() if entry.digest == digest]
    for entry in held:
        if entry.name == name:
            return entry
    if held:
        raise _refuse(pointer, "container_image_unavailable",
                      f"the image store holds {digest} under another name, not {name}")
    raise _refuse(pointer, "container_image_unavailable", f"the image store holds no image {name}@{digest}")


def select_image(
    bundle: AgentCandidateBundle,
    task: AgentCandidateBenchmarkTask,
    store: OciImageStore,
    *,
    image: str | None = None,
) -> SelectedImage:
    """The container the run runs and its unpacked image (see the module docstring)."""
    pointer, named = _named(bundle, task, image)
    return _select(store, pointer, named)


def select_task_image(task: AgentCandidateBenchmarkTask, store: OciImageStore) -> SelectedImage:
    """The task's own container (``evaluatorTaskContainer``), whatever a bundle pins: where the
    task's grader runs. Refused (``container_image_required``) when the task selects none."""
    chosen = task.evaluator_task_container
    if chosen is None:
        raise _refuse("/evaluatorTaskContainer", "container_image_required", "the task selects no container")
    return _select(store, "/evaluatorTaskContainer", chosen.to_wire())


def _select(store: OciImageStore, pointer: str, named: dict[str, Any]) -> SelectedImage:
    name = repository_name(named["image"])
    stored = _stored(store, pointer, name, named["indexDigest"])
    host = store.platform
    want = host
    if "platform" in named:
        wire = named["platform"]
        want = OciPlatform(wire["os"], wire["architecture"], wire.get("variant"))
        if (want.os, want.architecture) != (host.os, host.architecture) or (
            want.variant is not None and host.variant is not None and want.variant != host.variant
        ):
            raise _refuse(pointer + "/platform", "container_platform_unavailable",
                          f"the task's image is for {want}; this host runs {host}")
    try:
        resolved = store.resolve(stored.digest, want)
    except ImageRefused as refused:
        if refused.code != "image_platform_unavailable":
            raise
        raise _refuse(pointer, "container_platform_unavailable", refused.issues[0].message) from None
    if resolved.index_digest != stored.digest:
        raise _refuse(pointer, "container_image_unavailable", "the digest names a manifest inside another index")
    if "manifestDigest" in named and named["manifestDigest"] != resolved.manifest_digest:
        raise _refuse(pointer + "/manifestDigest", "container_manifest_mismatch",
                      f"the store selects manifest {resolved.manifest_digest} for {want} from this index")
    root = store.image_root(resolved.manifest_digest, mapping=IdMapping(CONTAINER_ID_BASE, CONTAINER_ID_BASE))
    if root is None:
        raise _refuse(pointer, "container_image_unavailable", "the image store lost the selected manifest")
    container = named if "manifestDigest" in named else {
        **named, "manifestDigest": resolved.manifest_digest, "platform": resolved.platform.to_wire(),
    }
    return SelectedImage(container=container, root=root, stored=stored)
