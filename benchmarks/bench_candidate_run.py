"""Time and peak memory of `candidate materialize` and `candidate run` on the example.

Run: ``.venv/bin/python benchmarks/bench_candidate_run.py [--runs N]``. Each sample is a
fresh CLI process (so import and verification are included); peak memory is the child's
maximum resident set (``ru_maxrss`` of the finished child). Also prints the run's own
process time (the receipt's ``timing.durationMs``) so the cost beyond the process shows.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "candidate"
CLI = [sys.executable, "-m", "agent_interface"]


def sample(args: list[str]) -> tuple[float, int]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = __import__("os").wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    if status != 0:
        raise SystemExit(f"failed: {args}")
    del before
    return elapsed, usage.ru_maxrss


def report(name: str, values: list[float], unit: str) -> None:
    print(f"{name:34} median {statistics.median(values):9.1f} {unit}  range {min(values):.1f}-{max(values):.1f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as scratch:
        demo = Path(scratch) / "demo"
        subprocess.run(["git", "clone", "-q", str(EXAMPLE / "repository.bundle"), str(demo)], check=True)
        results: dict[str, list[float]] = {k: [] for k in ("mt", "mm", "rt", "rm", "process", "beyond")}
        for index in range(runs):
            seconds, rss = sample([*CLI, "candidate", "materialize", str(EXAMPLE / "bundle.json"),
                                   "--repository", str(demo), "--into", f"{scratch}/m{index}"])
            results["mt"].append(seconds * 1000)
            results["mm"].append(rss / 1024)
            out = Path(scratch) / f"r{index}"
            seconds, rss = sample([*CLI, "candidate", "run", str(EXAMPLE / "bundle.json"), "--repository",
                                   str(demo), "--task", str(EXAMPLE / "task.json"), "--artifacts",
                                   str(EXAMPLE / "artifacts"), "--out", str(out)])
            results["rt"].append(seconds * 1000)
            results["rm"].append(rss / 1024)
            receipt = json.loads((out / "run-receipt.json").read_text())
            results["process"].append(receipt["timing"]["durationMs"])
            results["beyond"].append(seconds * 1000 - receipt["timing"]["durationMs"])
        print(f"{runs} runs each, fresh CLI process per sample")
        report("materialize: wall time", results["mt"], "ms")
        report("materialize: peak RSS", results["mm"], "MiB")
        report("run: wall time", results["rt"], "ms")
        report("run: peak RSS (CLI process tree max)", results["rm"], "MiB")
        report("run: candidate process (receipt)", results["process"], "ms")
        report("run: cost beyond the process", results["beyond"], "ms")


if __name__ == "__main__":
    main()
