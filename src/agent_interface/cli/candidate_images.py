"""``candidate run``'s container options: where the program runs and which image store feeds it.

* ``--executor auto|container|host`` (default ``auto``): ``auto`` runs a bundle that pins a
  container, or a task that selects one, in an OCI container (``runc``), and everything
  else as a host process; ``container`` forces a container (a bundle that delegates the
  choice then needs ``--image`` or a task container); ``host`` forces the host provider,
  which refuses container bundles (``container_unavailable``). See
  :mod:`agent_interface.evaluator.run.container_run`.
* ``--images STORE_DIR``: the OCI image store (an
  :class:`~agent_interface.evaluator.images.oci_store.OciImageStore` root) the image is
  found in, by name and index digest; the manifest for this host's platform is selected.
* ``--image-layout DIR`` / ``--image-archive FILE`` (``--image-archive-format oci|docker``,
  default ``oci``): import an OCI layout or an archive into ``--images`` first, through
  the store's checks, under the name the run needs (the bundle's pinned image, else the
  task's, else ``--image``'s).
* ``--image NAME@sha256:INDEX``: the evaluator's image, for a bundle that delegates the
  choice to the evaluator and a task that selects none.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agent_interface.cli.conventions import CommandError

__all__ = ["add_image_options", "experiment_image_options", "image_options"]


def add_image_options(parser: argparse.ArgumentParser) -> None:
    """Add the container options (module docstring) to ``candidate run`` (and ``experiment run``)."""
    parser.add_argument("--executor", choices=("auto", "container", "host"), default="auto",
                        help="run in an OCI container or as a host process (default auto: a container "
                             "when the bundle pins one or the task selects one)")
    parser.add_argument("--images", metavar="STORE_DIR", help="the OCI image store holding the container's image")
    parser.add_argument("--image-layout", metavar="DIR", help="import this OCI layout into --images first")
    parser.add_argument("--image-archive", metavar="FILE", help="import this archive into --images first")
    parser.add_argument("--image-archive-format", choices=("oci", "docker"), default="oci",
                        help="the archive's format: oci-archive or docker save (default oci)")
    parser.add_argument("--image", metavar="NAME@sha256:INDEX",
                        help="the evaluator's image when neither the bundle nor the task names one")


def _needed_name(bundle: Any, task: Any, image: str | None) -> str:
    from agent_interface.evaluator.images.image_reference import parse_digest_reference
    from agent_interface.evaluator.run.image_selection import repository_name

    environment = bundle.execution.environment
    if environment.kind == "pinned-container":
        return repository_name(environment.container.image)
    if task.evaluator_task_container is not None:
        return repository_name(task.evaluator_task_container.image)
    if image is not None:
        return parse_digest_reference(image)[0]
    raise CommandError("usage", "an import needs a name: the bundle, the task or --image must name the image")


def image_options(args: argparse.Namespace, bundle_bytes: bytes, task: Any) -> dict[str, Any]:
    """The run's ``executor``, ``images`` and ``image``, after any import asked for.

    An import the store refuses raises its ``ContractError`` (exit 1); bad usage a
    ``CommandError`` (exit 2).
    """
    from agent_interface.candidate.bundle import AgentCandidateBundle

    return _store_options(args, lambda: _needed_name(AgentCandidateBundle.parse_wire(bundle_bytes), task, args.image))


def experiment_image_options(args: argparse.Namespace, experiment_bytes: bytes) -> dict[str, Any]:
    """As :func:`image_options` for ``experiment run``: an import is named by the first
    bundle (baseline, then candidate) that pins an image, else the first task that
    selects one, else ``--image``."""
    def name() -> str:
        from agent_interface.candidate.experiment import AgentCandidateExperiment

        experiment = AgentCandidateExperiment.parse_wire(experiment_bytes)
        for bundle in (experiment.baseline, experiment.candidate):
            for task in experiment.benchmark.tasks:
                if bundle.execution.environment.kind == "pinned-container" or task.evaluator_task_container:
                    return _needed_name(bundle, task, args.image)
        return _needed_name(experiment.baseline, experiment.benchmark.tasks[0], args.image)

    return _store_options(args, name)


def _store_options(args: argparse.Namespace, needed_name: Callable[[], str]) -> dict[str, Any]:
    from agent_interface.evaluator.images.oci_import import (
        import_docker_archive,
        import_oci_archive,
    )
    from agent_interface.evaluator.images.oci_store import OciImageStore

    store = None
    importing = args.image_layout is not None or args.image_archive is not None
    if args.images is not None:
        path = Path(args.images)
        if (path.exists() or not importing) and not path.is_dir():  # an import may make a new store
            raise CommandError("not_a_directory", "not a directory", document=args.images)
        store = OciImageStore(args.images)
    if importing:
        if store is None:
            raise CommandError("usage", "--image-layout and --image-archive import into --images STORE_DIR")
        name = needed_name()
        if args.image_layout is not None:
            store.import_layout(args.image_layout, name=name)
        if args.image_archive is not None:
            importer = import_oci_archive if args.image_archive_format == "oci" else import_docker_archive
            importer(store, args.image_archive, name=name)
    return {"executor": args.executor, "images": store, "image": args.image}
