"""Experiment engine throughput and footprint (prints figures; asserts nothing).

Run: ``PYTHONPATH=src python benchmarks/bench_experiment.py [--reps N] [--simulated 10000] [--no-ray]``.

* cells per minute for the example experiment (``examples/experiment``: each cell runs
  the agent, captures the workspace diff and runs the task's tests) with 1 and 2 local
  workers and on a local Ray cluster (a head and one worker node on 127.0.0.1, when
  ``ray`` is installed), with the evaluator's own time per cell against the candidate
  program's run time (``evaluator_ms - program_ms`` from the ledger);
* the driver's peak memory (RSS) and the ledger's size for ``--simulated`` quick cells
  (a runner that returns an invalid capture at once, so only the engine is measured).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import resource
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from agent_interface.evaluator.experiment.cells import CellOutcome, CellRequest
from agent_interface.evaluator.experiment.engine import ExperimentRunOptions, run_experiment
from agent_interface.evaluator.experiment.workers import CellContext

ROOT = Path(__file__).resolve().parents[1]
_SPEC = importlib.util.spec_from_file_location("make_experiment", ROOT / "examples" / "experiment" / "make_experiment.py")
assert _SPEC is not None and _SPEC.loader is not None
make_experiment = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(make_experiment)


class QuickRunner:
    """A cell that is settled at once (an invalid capture), to measure the engine alone."""

    async def run(self, request: CellRequest) -> CellOutcome:
        capture = {"digest": "sha256:" + "0" * 64, "missing": ["usage"],
                   "reasons": [{"evidence": "usage", "code": "no_model_calls", "message": "simulated"}]}
        return CellOutcome(request.cell, request.attempt, request.execution_id, "invalid", invalid_capture=capture)


def quick(context: CellContext) -> QuickRunner:
    return QuickRunner()


def timings(out: Path) -> tuple[float, float]:
    with sqlite3.connect(out / "ledger.sqlite3") as db:
        rows = db.execute("SELECT program_ms, evaluator_ms FROM cells WHERE program_ms IS NOT NULL").fetchall()
    program = sum(row[0] for row in rows) / len(rows)
    evaluator = sum(row[1] for row in rows) / len(rows)
    return program, evaluator


def measure(label: str, paths: dict[str, Path], out: Path, **options: Any) -> None:
    started = time.monotonic()
    summary = run_experiment(paths["experiment"].read_bytes(), ExperimentRunOptions(
        out=out, repository=paths["repository"], artifacts=paths["artifacts"], **options))
    seconds = time.monotonic() - started
    cells = sum(summary.counts[state] for state in ("done", "invalid", "failed"))
    program, evaluator = timings(out)
    print(f"{label:28} {cells} cells in {seconds:6.1f}s = {cells / seconds * 60:6.1f} cells/min; per cell: "
          f"program {program:6.0f} ms, attempt {evaluator:6.0f} ms, evaluator overhead {evaluator - program:6.0f} ms")


def ray_cluster() -> tuple[str, list[subprocess.Popen[bytes]]]:
    import ray

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    address = f"127.0.0.1:{port}"
    executable = str(Path(sys.executable).parent / "ray")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "RAY_USAGE_STATS_ENABLED": "0"}
    common = ["--block", "--node-ip-address=127.0.0.1", "--num-cpus=1", f"--object-store-memory={80 << 20}",
              "--disable-usage-stats"]
    nodes = [subprocess.Popen([executable, "start", "--head", f"--port={port}", "--include-dashboard=false", *common],
                              env=env, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    while True:
        try:
            ray.init(address=address, _node_ip_address="127.0.0.1", log_to_driver=False)
            break
        except Exception:
            time.sleep(1)
    nodes.append(subprocess.Popen([executable, "start", f"--address={address}", *common], env=env,
                                  start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    while len([node for node in ray.nodes() if node["Alive"]]) < 2:
        time.sleep(0.5)
    ray.shutdown()
    return address, nodes


def simulated(root: Path, count: int) -> None:
    paths = make_experiment.make(root / "simulated", count // 2)
    out = root / "simulated-run"
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.monotonic()
    summary = run_experiment(paths["experiment"].read_bytes(), ExperimentRunOptions(
        out=out, runner=quick, verify=False, workers=2))
    seconds = time.monotonic() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    ledger = sum(path.stat().st_size for path in out.glob("ledger.sqlite3*"))
    print(f"simulated: {summary.counts['invalid']} quick cells in {seconds:.1f}s "
          f"({summary.counts['invalid'] / seconds:.0f} cells/s, 2 workers); driver peak RSS {peak / 1024:.0f} MiB "
          f"(before the run {before / 1024:.0f} MiB); ledger {ledger / 1024 / 1024:.1f} MiB on disk")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=4, help="repetitions of the example task (2 cells each)")
    parser.add_argument("--simulated", type=int, default=10_000, help="quick cells for the footprint (0: skip)")
    parser.add_argument("--no-ray", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        if args.simulated:
            simulated(root, args.simulated)
        paths = make_experiment.make(root / "example", args.reps)
        measure("local, 1 worker", paths, root / "w1", workers=1)
        measure("local, 2 workers", paths, root / "w2", workers=2)
        if not args.no_ray and importlib.util.find_spec("ray") is not None:
            address, nodes = ray_cluster()
            try:
                measure("ray, head + 1 worker node", paths, root / "ray", engine="ray", address=address, workers=2)
            finally:
                for node in reversed(nodes):
                    os.killpg(node.pid, signal.SIGKILL)
                    node.wait()


if __name__ == "__main__":
    main()
