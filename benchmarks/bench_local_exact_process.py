"""Cost of one exact process through the local provider: create, run ``/bin/true``, destroy.

Each run creates a fresh environment (its own idempotency key), spawns ``/bin/true``,
waits for its terminal reason and destroys the environment, all through
``LocalExactProcessProvider``; the figure is the wall time of those three steps. For
scale it also times ``/bin/true`` started directly with ``asyncio.create_subprocess_exec``
and the same behind the detected ``unshare`` prefix, and an empty interpreter (the floor
of the per-process supervisor), and prints whether a network namespace (``unshare -n``)
works here.

Run: ``.venv/bin/python benchmarks/bench_local_exact_process.py [--runs 50] [--pid-namespace|--no-pid-namespace]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable

from agent_interface.evaluator import LocalExactProcessProvider, detect_local_isolation

TRUE = "/bin/true"


def _figures(label: str, samples: list[float]) -> str:
    ms = sorted(sample * 1000 for sample in samples)
    return (
        f"{label:<44} median {statistics.median(ms):7.2f} ms   "
        f"range {ms[0]:7.2f} – {ms[-1]:7.2f} ms   (n={len(ms)})"
    )


async def _time(runs: int, once: Callable[[], Awaitable[None]]) -> list[float]:
    await once()  # warm-up, not counted
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        await once()
        samples.append(time.perf_counter() - start)
    return samples


async def main(runs: int, pid_namespace: bool) -> None:
    isolation = await detect_local_isolation(pid_namespace=pid_namespace)
    print(f"unshare -n (network namespace) works here: {isolation.network_namespace}")
    print(f"isolation: {isolation}")

    async def bare(prefix: tuple[str, ...] = (), argv: tuple[str, ...] = (TRUE,)) -> None:
        process = await asyncio.create_subprocess_exec(*prefix, *argv)
        await process.wait()

    print(_figures("/bin/true via create_subprocess_exec", await _time(runs, bare)))
    interpreter = (os.path.realpath(sys.executable), "-I", "-S", "-B", "-c", "pass")
    print(_figures("empty interpreter (the supervisor's floor)", await _time(runs, lambda: bare((), interpreter))))
    if isolation.prefix:
        print(_figures("/bin/true behind " + " ".join(isolation.prefix[1:]), await _time(runs, lambda: bare(isolation.prefix))))
    if not isolation.network_namespace:
        print("no network namespace: the provider declares no exactProcess; nothing more to time")
        return

    with tempfile.TemporaryDirectory() as root:
        provider = LocalExactProcessProvider(root, executables=[TRUE], isolation=isolation)
        exact = provider.exact_process
        assert exact is not None
        launch = {"executable": TRUE, "args": [], "cwd": "/", "env": {}, "timeoutMs": 10_000}

        async def create_run_destroy() -> None:
            environment = await exact.create(
                {
                    "image": provider.image,
                    "egress": {"mode": "blocked"},
                    "maxLifetimeMs": 60_000,
                    "resources": {"cpu": 1, "memoryMb": 256, "diskMb": 16},
                    "metadata": {"bench": "true"},
                    "idempotencyKey": uuid.uuid4().hex,
                }
            )
            process = await environment.process.spawn(launch)
            termination = await process.wait()
            assert termination.kind == "exit", termination
            await environment.destroy()

        print(_figures("create + run /bin/true + destroy (provider)", await _time(runs, create_run_destroy)))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--pid-namespace", action=argparse.BooleanOptionalAction, default=True)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.runs, arguments.pid_namespace))
