"""Cost and size of the conformance kits: checks per kit, by status, and the wall time of
a full run on the example provider (``examples/provider``) and on the in-memory
implementations.

For each kit it prints how many checks the kit declares and how a run on an in-memory
implementation ended (passed / failed / skipped / not applicable), then the median wall
time of ``--runs`` full runs of the provider kit and the session-replay kit on the example
subprocess provider (the kits that apply to what it declares). Figures only; nothing is
asserted.

Run from the repository root:
``PYTHONPATH=src .venv/bin/python benchmarks/bench_conformance_kits.py [--runs 5]``.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "examples" / "provider")]

import agent_interface.conformance as kits  # noqa: E402
from agent_interface.testing import (  # noqa: E402
    InMemoryAgentEnvironmentProvider,
    InMemoryExactProcessProvider,
    InMemoryExactProcessStore,
    InMemoryInteractions,
    InMemoryInteractiveSessions,
    InMemoryRetainedSessionProvider,
    InMemoryWorkspaceBranching,
)

STATUSES = ("passed", "failed", "skipped", "not_applicable")


def _counts(report: Any) -> str:
    seen = [check.status for check in report.checks]
    return ", ".join(f"{status} {seen.count(status)}" for status in STATUSES if seen.count(status))


async def _interactions() -> Any:
    from tests.conformance.interaction_fixtures import World

    world = World(InMemoryInteractions())
    await world.start()
    return await kits.run_interaction_response_conformance_async(world.prepare, environment=world.environment, session=world.session)


async def _exact() -> Any:
    store = InMemoryExactProcessStore()
    create = {
        "image": "registry.example/exact@sha256:" + "a" * 64,
        "egress": {"mode": "blocked"},
        "maxLifetimeMs": 600_000,
        "resources": {"cpu": 1, "memoryMb": 512, "diskMb": 64},
        "metadata": {"suite": "bench"},
        "idempotencyKey": "bench",
    }
    return await kits.run_exact_process_conformance_async(
        lambda: InMemoryExactProcessProvider(store), create, kits.ExactProcessLaunches.simulated()
    )


IN_MEMORY: dict[str, tuple[str, Callable[[], Awaitable[Any]]]] = {
    "provider": ("PROVIDER_CHECKS", lambda: kits.run_provider_conformance_async(InMemoryAgentEnvironmentProvider())),
    "session replay": ("SESSION_REPLAY_CHECKS", lambda: kits.run_session_replay_conformance_async(InMemoryRetainedSessionProvider())),
    "workspace branching": ("BRANCHING_CHECKS", lambda: kits.run_branching_conformance_async(InMemoryWorkspaceBranching(provider="bench"))),
    "interactive session": ("INTERACTIVE_CHECKS", lambda: kits.run_interactive_session_conformance_async(InMemoryInteractiveSessions(initial_control_generation=2))),
    "interaction response": ("INTERACTION_CHECKS", _interactions),
    "exact-process": ("EXACT_PROCESS_CHECKS", _exact),
}


def _timed(runs: int, make: Callable[[], Any]) -> tuple[float, Any]:
    seconds = []
    report: Any = None
    for _ in range(runs):
        start = time.perf_counter()
        report = make()
        seconds.append(time.perf_counter() - start)
    return statistics.median(seconds), report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    print("kit                   declared  in-memory run (status counts)              seconds")
    for kit, (constant, make) in IN_MEMORY.items():
        declared = len(getattr(kits, constant))
        seconds, report = _timed(runs, lambda make=make: asyncio.run(make()))
        print(f"{kit:22}{declared:>8}  {_counts(report):44}{seconds:8.3f}")
    from subprocess_provider import SubprocessAgentProvider

    print(f"\nexample provider (examples/provider), median of {runs} full runs:")
    for kit, run in (
        ("provider", kits.run_provider_conformance),
        ("session replay", kits.run_session_replay_conformance),
    ):
        seconds, report = _timed(runs, lambda run=run: run(SubprocessAgentProvider()))
        print(f"  {kit:20} {len(report.checks):4} checks ({_counts(report)}): {seconds:.3f} s, ok={report.ok}")


if __name__ == "__main__":
    main()
