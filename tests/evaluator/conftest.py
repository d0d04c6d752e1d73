"""Local provider tests leave no mount behind: an environment's files are a tmpfs mounted
in the host's mount namespace, and a test that does not destroy its environments would
leave one under its temporary directory."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

import pytest


def _mounts_under(directory: str) -> list[str]:
    found = []
    with open("/proc/self/mountinfo") as handle:
        for line in handle:
            point = line.split()[4].replace("\\040", " ")
            if point.startswith(directory.rstrip("/") + "/"):
                found.append(point)
    return sorted(found, key=len, reverse=True)


@pytest.fixture(autouse=True)
def _no_mount_left_behind(request: pytest.FixtureRequest) -> Iterator[None]:
    yield
    tmp_path = request.node.funcargs.get("tmp_path") if hasattr(request.node, "funcargs") else None
    if tmp_path is None:
        return
    from agent_interface.evaluator.process.environment_disk import unmount

    for point in _mounts_under(os.path.realpath(tmp_path)):
        with contextlib.suppress(OSError):
            unmount(point)
