"""What one OCI environment is on the host, made and removed as one.

An environment's directory (``environments/<id>/`` under the provider's root) holds its
mounted root file system (``root/``, :mod:`.environment_root`), its control directories
(``processes/``), its own user namespace pinned at ``userns`` (owned by an unprivileged
uid of its own, :mod:`.user_namespace`) and, for ``strict`` egress, its network namespace
pinned at ``netns`` (:mod:`.network_namespace`). :func:`make_environment` makes what is
missing (so a creator that died halfway is finished by the next), one environment at a
time per OS process; :func:`tear_down_environment` removes it all (its containers are the
provider's to remove first).
"""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path
from typing import Final

from agent_interface.evaluator.container.environment_root import (
    mount_environment_root,
    unmount_environment_root,
)
from agent_interface.evaluator.container.network_namespace import (
    create_network_namespace,
    loopback_up_in_namespace,
    remove_network_namespace,
)
from agent_interface.evaluator.container.runtime_config import ID_RANGE
from agent_interface.evaluator.container.user_namespace import (
    create_user_namespace,
    environment_owner,
    remove_user_namespace,
    request_user_namespace,
)
from agent_interface.evaluator.images.image_root import ImageRoot
from agent_interface.evaluator.images.tree_removal import remove_tree

__all__ = ["make_environment", "network_namespace_pin", "tear_down_environment", "user_namespace_pin"]

_MAKING: Final = threading.Lock()


def network_namespace_pin(directory: Path) -> Path:
    """Where the environment in ``directory`` pins its network namespace (``strict``)."""
    return directory / "netns"


def user_namespace_pin(directory: Path) -> Path:
    """Where the environment in ``directory`` pins its owned user namespace."""
    return directory / "userns"


def make_environment(
    directory: Path, image: ImageRoot, *, disk_mb: int, strict: bool, id_base: int | None, overlay: bool, init: Path
) -> None:
    """Make what ``directory`` still lacks of an environment of ``image``: the mounted
    root (a writable layer of ``disk_mb``), the owned user namespace (when the containers
    are mapped from ``id_base``) and, with ``strict``, the network namespace (owned by
    that user namespace when there is one)."""
    userns, netns = user_namespace_pin(directory), network_namespace_pin(directory)
    owner = environment_owner(directory.name)
    with _MAKING:
        holder = None
        if id_base is not None and not os.path.ismount(userns):
            with contextlib.suppress(OSError):  # made while the root is mounted
                holder = request_user_namespace(owner, network=strict)
        try:
            if not (directory / "root" / "rootfs").is_mount():
                _mount(directory, image, disk_mb=disk_mb, id_base=id_base, overlay=overlay, init=init)
        except BaseException:
            if holder is not None:
                holder.close()
            raise
        if id_base is not None and not os.path.ismount(userns):
            remove_user_namespace(userns)  # files a creator that died left unmounted
            if strict:
                remove_network_namespace(netns)
            try:  # else runc makes a root-owned one, as before
                create_user_namespace(userns, owner, id_base, ID_RANGE, network=netns if strict else None, holder=holder)
                if strict:
                    loopback_up_in_namespace(netns)
            except OSError:
                remove_user_namespace(userns)
                remove_network_namespace(netns)
        if strict and not os.path.ismount(netns):
            remove_network_namespace(netns)  # a file a creator that died left unmounted
            create_network_namespace(netns)


def _mount(directory: Path, image: ImageRoot, *, disk_mb: int, id_base: int | None, overlay: bool, init: Path) -> None:
    directory.mkdir(mode=0o711, parents=True, exist_ok=True)
    if id_base is not None:  # only host root and the containers' root group enter:
        os.chown(directory, 0, id_base)  # no other host user reaches the image's
        os.chmod(directory, 0o710)  # world-writable directories (/tmp) in the environment
    (directory / "root").mkdir(mode=0o711, exist_ok=True)
    (directory / "processes").mkdir(mode=0o700, exist_ok=True)
    mount_environment_root(directory / "root", image.rootfs, disk_mb=disk_mb, id_base=id_base, overlay=overlay, init=init)


def tear_down_environment(directory: Path) -> None:
    """Unpin the environment's namespaces, unmount its root and delete ``directory``."""
    remove_network_namespace(network_namespace_pin(directory))
    remove_user_namespace(user_namespace_pin(directory))
    unmount_environment_root(directory / "root")
    if directory.exists():
        remove_tree(directory, ignore_errors=True)
