"""What a container sees of the host through its mount table: no host path, no environment id.

The overlay root is mounted with ``/proc/self/fd/N`` names for its lower, upper and work
directories (overlay shows its options in ``mountinfo``), and the containers' init is bound
from the environment's own tmpfs, so neither the image store, the provider's root nor the
environment's id appears in ``/proc/self/mountinfo`` or ``/proc/mounts`` inside.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_interface.evaluator.container.oci_provider import OciExactProcessProvider
from agent_interface.evaluator.images.image_root import ImageRoot
from tests.evaluator.oci_runtime_fixtures import (
    DictImageSource,
    build_image,
    cleanup_root,
    create_input,
    launch,
    requires_runc,
    run,
    scratch_directory,
)

pytestmark = requires_runc


@pytest.fixture(scope="module")
def world() -> Iterator[tuple[Path, ImageRoot, OciExactProcessProvider]]:
    scratch = scratch_directory()
    try:
        image = build_image(scratch / "image")
        provider = run(OciExactProcessProvider.open(scratch / "root", images=DictImageSource(image)))
        assert provider.exact_process is not None, provider.reasons
        yield scratch, image, provider
    finally:
        cleanup_root(scratch)


def test_the_mount_table_inside_a_container_names_no_host_path_and_no_environment(
    world: tuple[Path, ImageRoot, OciExactProcessProvider],
) -> None:
    scratch, image, provider = world

    async def scenario() -> tuple[str, list[str]]:
        exact = provider.exact_process
        assert exact is not None
        environment = await exact.create(create_input(image, "visibility"))
        other = await exact.create(create_input(image, "visibility-other"))
        seen = []
        for path in ("/proc/self/mountinfo", "/proc/mounts", "/proc/1/mountinfo"):
            process = await environment.process.spawn(launch("/bin/cat", path))
            assert (await process.wait()).to_wire()["exitCode"] == 0
            seen.append((await process.output_bytes("stdout")).decode())
        return "\n".join(seen), [environment.id, other.id]

    text, ids = run(scenario())
    assert " / / " in text and "overlay" in text  # the root is the overlay, as before
    for secret in (str(scratch), str(image.rootfs), "/var/tmp", "/work", "environments", *ids):
        assert secret not in text, secret
