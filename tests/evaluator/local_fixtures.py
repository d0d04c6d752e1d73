"""Shared pieces of the local exact-process provider tests."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from agent_interface.evaluator import (
    LocalExactProcessProvider,
    LocalIsolation,
    detect_local_isolation,
)
from agent_interface.evaluator.images.host_image import program_python

T = TypeVar("T")

PYTHON = program_python()
"""The interpreter the tests launch (it is the image's executable). Programs run as a
user of their own, so it is one that such a user can execute: the system's ``python3``
when the test interpreter sits in a private home directory."""

WATCHDOG_SECONDS = 120.0


def run(awaitable: Awaitable[T]) -> T:
    """Run to completion, turning a hang into a failure (a watchdog, not a timing check)."""

    async def bounded() -> T:
        return await asyncio.wait_for(awaitable, WATCHDOG_SECONDS)

    return asyncio.run(bounded())


_ISOLATION: dict[bool, LocalIsolation] = {}


def isolation(pid_namespace: bool = True) -> LocalIsolation:
    """The namespaces that work here; the test is skipped when egress cannot be blocked."""
    if pid_namespace not in _ISOLATION:
        _ISOLATION[pid_namespace] = run(detect_local_isolation(pid_namespace=pid_namespace))
    found = _ISOLATION[pid_namespace]
    if not found.network_namespace:
        pytest.skip("no network namespace can be made on this machine")
    return found


def provider(root: Path, *, pid_namespace: bool = True, **options: Any) -> LocalExactProcessProvider:
    executables = options.pop("executables", [PYTHON, "/usr/bin/env"])
    return LocalExactProcessProvider(
        root, executables=executables, isolation=isolation(pid_namespace), **options
    )


def create_input(image: str, key: str = "key-1", **changes: Any) -> dict[str, Any]:
    return {
        "image": image,
        "egress": {"mode": "blocked"},
        "maxLifetimeMs": 600_000,
        "resources": {"cpu": 1, "memoryMb": 512, "diskMb": 8},
        "metadata": {"task": "t"},
        "idempotencyKey": key,
        **changes,
    }


def python_launch(code: str, *, timeout_ms: int = 60_000, **changes: Any) -> dict[str, Any]:
    return {
        "executable": PYTHON,
        "args": ["-I", "-S", "-c", code],
        "cwd": "/",
        "env": {},
        "timeoutMs": timeout_ms,
        **changes,
    }


def live_marked_processes(marker: str) -> list[int]:
    """Host pids of running (not zombie) processes whose argv contains ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rpartition(")")[2].split()[0]
        except OSError:
            continue
        if marker.encode() in argv and state != "Z" and int(entry.name) != os.getpid():
            found.append(int(entry.name))
    return found
