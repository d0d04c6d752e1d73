"""The host is not a container's resource: a container's user namespace is owned by an
unprivileged uid of its environment, so the per-user kernel limits it spends (inotify
instances here, ``fs.inotify.max_user_instances``) are that owner's, not host root's
nor another environment's.

Before: ``runc`` made the namespace, owned by host root; a container holding 127 inotify
instances left host root 1 (measured: 2 of 128 while it ran).
"""

from __future__ import annotations

import asyncio
import ctypes
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_interface.evaluator.container.oci_provider import OciExactProcessProvider
from agent_interface.evaluator.container.user_namespace import OWNER_BASE, environment_owner
from agent_interface.evaluator.images.image_root import ImageRoot
from tests.evaluator.oci_runtime_fixtures import (
    ID_BASE,
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

INOTIFY = r"""
#include <stdio.h>
#include <stdlib.h>
#include <sys/inotify.h>
#include <unistd.h>
int main(int argc, char **argv) {
    int n = 0, want = atoi(argv[1]);
    while (n < want && inotify_init() >= 0) n++;
    printf("%d\n", n); fflush(stdout);
    sleep(atoi(argv[2]));
    return 0;
}
"""
MAX_INSTANCES = int(Path("/proc/sys/fs/inotify/max_user_instances").read_text())


@pytest.fixture(scope="module")
def world() -> Iterator[tuple[ImageRoot, OciExactProcessProvider]]:
    scratch = scratch_directory()
    try:
        image = build_image(scratch / "image")
        source = scratch / "inotify.c"
        source.write_text(INOTIFY)
        program = image.rootfs / "bin" / "inotify"
        subprocess.run(["gcc", "-static", "-O1", "-o", str(program), str(source)], check=True)
        os.lchown(program, ID_BASE, ID_BASE)
        provider = run(OciExactProcessProvider.open(scratch / "root", images=DictImageSource(image)))
        assert provider.exact_process is not None, provider.reasons
        yield image, provider
    finally:
        cleanup_root(scratch)


def _host_instances(limit: int) -> int:
    """How many inotify instances this (host root) process can open now (all closed again)."""
    libc = ctypes.CDLL(None, use_errno=True)
    opened = []
    try:
        while len(opened) < limit:
            fd = libc.inotify_init()
            if fd < 0:
                break
            opened.append(fd)
        return len(opened)
    finally:
        for fd in opened:
            os.close(fd)


@pytest.mark.skipif(shutil.which("setpriv") is None or shutil.which("unshare") is None, reason="needs util-linux")
def test_a_container_exhausting_inotify_instances_leaves_the_host_and_other_environments_theirs(
    world: tuple[ImageRoot, OciExactProcessProvider],
) -> None:
    image, provider = world
    before = _host_instances(MAX_INSTANCES)

    async def scenario() -> tuple[str, int, int, str]:
        exact = provider.exact_process
        assert exact is not None
        hog = await exact.create(create_input(image, "inotify-hog"))
        other = await exact.create(create_input(image, "inotify-other"))
        holding = await hog.process.spawn(launch("/bin/inotify", str(MAX_INSTANCES * 2), "30"))
        for _ in range(500):  # until it has opened all it could
            if (await holding.output_bytes("stdout")).strip():
                break
            await asyncio.sleep(0.02)
        held = (await holding.output_bytes("stdout")).decode().strip()
        host = _host_instances(MAX_INSTANCES)
        probe = await other.process.spawn(launch("/bin/inotify", "8", "0"))
        await probe.wait()
        other_got = int((await probe.output_bytes("stdout")).decode().strip())
        uid_map = await other.process.spawn(launch("/bin/cat", "/proc/self/uid_map"))
        await uid_map.wait()
        mapping = (await uid_map.output_bytes("stdout")).decode()
        await holding.kill()
        for environment in (hog, other):
            await environment.destroy()
        return held, host, other_got, mapping

    held, host, other_got, mapping = run(scenario())
    assert int(held) >= MAX_INSTANCES - 1, held  # the container spent its whole owner's allowance
    assert host == before, (host, before)  # host root kept every instance it had
    assert other_got == 8  # another environment is charged to its own owner
    assert mapping.split() == ["0", str(ID_BASE), "65536"]


def test_every_environment_has_an_unprivileged_owner_of_its_own() -> None:
    owners = {environment_owner(f"oxp-{index:032x}") for index in range(1000)}
    assert len(owners) > 990 and min(owners) >= OWNER_BASE
