"""Time and peak memory of `candidate materialize` and `candidate run` on the example.

Run: ``.venv/bin/python benchmarks/bench_candidate_run.py [--runs N] [--no-bytecode]``.
Each sample is a fresh CLI process (so import and verification are included); peak memory
is the child's maximum resident set (``ru_maxrss`` of the finished child). Also prints the
run's own process time (the receipt's ``timing.durationMs``) so the cost beyond the process
shows. The children write and use compiled bytecode as an installed package does (one
warm-up sample of each first), unless ``--no-bytecode`` (``PYTHONDONTWRITEBYTECODE`` set and
no cache: every module compiled on every start).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "candidate"
CLI = [sys.executable, "-m", "agent_interface"]


ENV = dict(os.environ)


def sample(args: list[str]) -> tuple[float, int]:
    start = time.perf_counter()
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    if status != 0:
        raise SystemExit(f"failed: {args}")
    return elapsed, usage.ru_maxrss


def report(name: str, values: list[float], unit: str) -> None:
    print(f"{name:34} median {statistics.median(values):9.1f} {unit}  range {min(values):.1f}-{max(values):.1f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--no-bytecode", action="store_true")
    options = parser.parse_args()
    runs = options.runs
    if options.no_bytecode:
        ENV["PYTHONDONTWRITEBYTECODE"] = "1"
        ENV["PYTHONPYCACHEPREFIX"] = tempfile.mkdtemp()  # an empty cache: nothing compiled is reused
    else:
        ENV.pop("PYTHONDONTWRITEBYTECODE", None)
    with tempfile.TemporaryDirectory() as scratch:
        demo = Path(scratch) / "demo"
        subprocess.run(["git", "clone", "-q", str(EXAMPLE / "repository.bundle"), str(demo)], check=True)
        results: dict[str, list[float]] = {k: [] for k in ("mt", "mm", "rt", "rm", "process", "beyond")}
        run_args = ["--task", str(EXAMPLE / "task.json"), "--artifacts", str(EXAMPLE / "artifacts")]
        sample([*CLI, "candidate", "materialize", str(EXAMPLE / "bundle.json"), "--repository", str(demo),
                "--into", f"{scratch}/warm-m"])
        sample([*CLI, "candidate", "run", str(EXAMPLE / "bundle.json"), "--repository", str(demo), *run_args,
                "--out", f"{scratch}/warm-r"])
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
        cache = "no bytecode cache" if options.no_bytecode else "bytecode cached"
        print(f"{runs} runs each, fresh CLI process per sample, {cache}")
        report("materialize: wall time", results["mt"], "ms")
        report("materialize: peak RSS", results["mm"], "MiB")
        report("run: wall time", results["rt"], "ms")
        report("run: peak RSS (CLI process tree max)", results["rm"], "MiB")
        report("run: candidate process (receipt)", results["process"], "ms")
        report("run: cost beyond the process", results["beyond"], "ms")


if __name__ == "__main__":
    main()
