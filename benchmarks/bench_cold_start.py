"""Cold start: import, first validation of one schema per family, and CLI wall time.

Every figure is measured in a fresh process (bytecode cached: one unmeasured warm-up run
writes it). For each family the child process times ``import`` of the registry plus the
first ``wire_schema(NAME).parse(document)`` of a small accepted document taken from
``tests/golden/reference-1.6.0-documents.jsonl.gz``; the whole process's wall time is
printed beside it. Floors: an empty interpreter, and ``pydantic`` importing and building
a one-field model. ``--reference DIR`` (a built reference, ``DIR/dist/index.js``; Node on
PATH) adds Node importing the reference and validating the same document.

Run: ``.venv/bin/python benchmarks/bench_cold_start.py [--repeat 11] [--reference DIR]``.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden" / "reference-1.6.0-documents.jsonl.gz"

# One representative schema per contract family (the largest module trees).
FAMILIES = {
    "profile": "AgentProfile",
    "profile_kb": "ProfileKbHarness",
    "runtime": "RuntimeEventEnvelope",
    "environment": "AgentEnvironmentCapabilities",
    "durable": "NativeContextContinuationAcknowledgement",
    "provider": "AgentEnvironmentCreation",
}

_PROFILE_KB_HARNESS = {"harness": "codex"}

CHILD = """
import sys, time
start = time.perf_counter()
from agent_interface.core.registry import wire_schema
schema = wire_schema(sys.argv[1])
try:
    schema.parse(open(sys.argv[2], "rb").read())
except Exception:
    pass
print((time.perf_counter() - start) * 1e3)
"""

NODE_CHILD = """
const start = performance.now();
const ref = await import(process.argv[1]);
const fs = await import("node:fs");
const name = process.argv[2];
const schema = ref[name + "Schema"] ?? ref[name[0].toLowerCase() + name.slice(1) + "Schema"];
schema.safeParse(JSON.parse(fs.readFileSync(process.argv[3], "utf8")));
console.log(performance.now() - start);
"""


def documents() -> dict[str, Any]:
    found: dict[str, Any] = {}
    with gzip.open(GOLDEN, "rt", encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            if row["ok"] and row["schema"] in FAMILIES.values() and row["schema"] not in found:
                found[row["schema"]] = row["value"]
    found.setdefault("ProfileKbHarness", _PROFILE_KB_HARNESS)
    return found


def timed(args: list[str], env: dict[str, str]) -> tuple[float, str]:
    start = time.perf_counter()
    result = subprocess.run(args, capture_output=True, text=True, env=env, check=False)
    wall = (time.perf_counter() - start) * 1e3
    return wall, result.stdout.strip()


def series(args: list[str], env: dict[str, str], repeat: int) -> tuple[list[float], list[float]]:
    """Process wall times and the child's own reported times (ms), after one warm-up."""
    timed(args, env)  # warm-up: writes bytecode (env has no PYTHONDONTWRITEBYTECODE)
    walls: list[float] = []
    inner: list[float] = []
    for _ in range(repeat):
        wall, out = timed(args, env)
        walls.append(wall)
        with contextlib.suppress(ValueError, IndexError):
            inner.append(float(out.splitlines()[-1]))
    return walls, inner


def fmt(values: list[float]) -> str:
    if not values:
        return "-"
    return f"{statistics.median(values):7.1f} (min {min(values):6.1f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=11)
    parser.add_argument("--reference", type=Path, help="built reference directory (dist/index.js)")
    options = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    python = sys.executable
    node = shutil.which("node") if options.reference else None
    docs = documents()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, median of {options.repeat} fresh processes, ms")
    print(f"{'workload':<52} {'in-process':>22} {'process wall':>22}")

    def row(label: str, args: list[str]) -> None:
        walls, inner = series(args, env, options.repeat)
        print(f"{label:<52} {fmt(inner):>22} {fmt(walls):>22}")

    row("python -c pass (floor)", [python, "-c", "print(0)"])
    row("import pydantic + one-field model (floor)", [
        python, "-c",
        "import time; s=time.perf_counter()\nfrom pydantic import BaseModel\n"
        "class A(BaseModel):\n    x: int\nA.model_validate({'x': 1})\n"
        "print((time.perf_counter()-s)*1e3)",
    ])
    row("import agent_interface", [
        python, "-c", "import time; s=time.perf_counter(); import agent_interface; print((time.perf_counter()-s)*1e3)"
    ])
    with tempfile.TemporaryDirectory() as tmp:
        paths: dict[str, str] = {}
        for name, value in docs.items():
            path = Path(tmp) / f"{name}.json"
            path.write_text(json.dumps(value), encoding="utf-8")
            paths[name] = str(path)
        for family, name in FAMILIES.items():
            row(f"import + first {name} ({family})", [python, "-c", CHILD, name, paths[name]])
        script = Path(python).parent / "agent-interface"
        cli = [str(script)] if script.exists() else [python, "-m", "agent_interface"]
        for name in ("AgentProfile", "RuntimeEventEnvelope"):
            row(f"agent-interface validate --schema {name}", [*cli, "validate", "--schema", name, paths[name]])
        if node and options.reference:
            index = str((options.reference / "dist" / "index.js").resolve())
            for name in ("AgentProfile", "RuntimeEventEnvelope"):
                row(f"reference: node import + first {name}", [
                    node, "--input-type=module", "-e", NODE_CHILD, index, name, paths[name]
                ])


if __name__ == "__main__":
    main()
