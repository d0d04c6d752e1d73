"""Side by side with the reference: validation, canonical digest and cold start, in one run.

Both sides run in long-lived workers (``py_worker.py``, and ``node_worker.mjs`` importing
the built reference given by ``--reference DIR``, i.e. ``DIR/dist/index.js``), warmed
(three passes each before timing), and read the same JSON-text files. Passes alternate
``Z P Z P Z ...``: every Python pass ``P`` sits between two reference passes ``Z``, and its
ratio is the mean time of those two over its own time, so drift of a shared machine
cancels. Each figure is the median of ``--rounds`` such ratios, with their range. Verdicts
(validation) and digests are compared between the two sides before timing.

Cold start runs fresh processes, interleaved the same way (``N P N P N ...``): the wall time
of a Python process that imports the registry and validates one document
(``py_worker.py cold``), of ``agent-interface validate --schema NAME FILE``, and of Node
importing the reference and validating the same document (``node_worker.mjs cold``).
Bytecode is written by one unmeasured run first.

Suites: ``validation`` (``workloads.py`` says what each document mix holds), ``digest``
(1.5 KB to 10 MB, the documents of ``benchmarks/bench_canonical.py``), ``cold`` (one
schema per family, the CLI), ``cold-all`` (every registered schema the reference exports,
``--cold-repeat`` rounds each).

Run::

    .venv/bin/python benchmarks/side_by_side/run.py --reference /path/to/ref-build \\
        [--shared ../shared] [--suite validation digest cold] [--rounds 11] [--out FILE]
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import importlib.util
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))

import workloads as wl  # noqa: E402

DIGEST_SIZES = (1_000, 10_000, 100_000, 1_000_000, 10_000_000)

# The schemas of the cold-start table, and one more per family.
COLD_SCHEMAS = (
    ("profile", "AgentProfile"),
    ("runtime", "RuntimeEventEnvelope"),
    ("runtime", "InteractionRequest"),
    ("durable", "NativeContextContinuationAcknowledgement"),
    ("environment", "AgentEnvironmentCapabilities"),
    ("provider", "AgentEnvironmentCreation"),
    ("provider", "AgentTurnInput"),
    ("session", "TerminalSessionRef"),
    ("candidate", "AgentCandidateBundle"),
)
CLI_SCHEMAS = ("AgentProfile", "RuntimeEventEnvelope", "AgentCandidateBundle")


class Report:
    """Prints and keeps every line, for ``--out``."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def __call__(self, line: str = "") -> None:
        print(line, flush=True)
        self.lines.append(line)

    def table(self, header: list[str], rows: Iterable[list[str]]) -> None:
        self("| " + " | ".join(header) + " |")
        self("| " + " | ".join("---" for _ in header) + " |")
        for row in rows:
            self("| " + " | ".join(row) + " |")


class Worker:
    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env, bufsize=1
        )

    def call(self, **command: Any) -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(command) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise SystemExit(f"worker {self.process.args!r} stopped")
        reply: dict[str, Any] = json.loads(line)
        if "error" in reply:
            raise SystemExit(f"worker error on {command['op']}: {reply['error']}")
        return reply

    def close(self) -> None:
        with contextlib.suppress(SystemExit, BrokenPipeError, OSError):
            self.call(op="quit")
        self.process.wait(timeout=10)

    def timer(self, **command: Any) -> Callable[[], float]:
        """A pass of ``command``: returns its wall seconds."""
        return lambda: float(self.call(**command)["seconds"])


PYTHON = sys.executable
PYTHONPATH: str | None = None


def child_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if PYTHONPATH:
        env["PYTHONPATH"] = PYTHONPATH
    return env


def bracketed(zod: Callable[[], float], ours: Callable[[], float], rounds: int) -> tuple[list[float], list[float], list[float]]:
    """Times of ``Z P Z P ... Z`` and the per-round ratios mean(Z before, Z after) / P."""
    z_times = [zod()]
    p_times: list[float] = []
    ratios: list[float] = []
    for _ in range(rounds):
        p_times.append(ours())
        z_times.append(zod())
        ratios.append((z_times[-2] + z_times[-1]) / 2 / p_times[-1])
    return z_times, p_times, ratios


def ratio_cell(ratios: list[float]) -> str:
    return f"{statistics.median(ratios):.2f}x ({min(ratios):.2f}-{max(ratios):.2f})"


def rate_cell(count: float, times: list[float]) -> str:
    value = count / statistics.median(times)
    if value >= 1e6:
        return f"{value / 1e6:.2f}M/s"
    if value >= 1e3:
        return f"{value / 1e3:.1f}k/s"
    return f"{value:.1f}/s"


def versions(reference: Path, node: str) -> list[str]:
    from importlib.metadata import version

    def safe(name: str) -> str:
        try:
            return version(name)
        except Exception:
            return "?"

    tree = Path(PYTHONPATH).parent if PYTHONPATH else ROOT
    commit = subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(tree), "status", "--porcelain", "--", "src"],
                           capture_output=True, text=True).stdout.strip()
    node_version = subprocess.run([node, "--version"], capture_output=True, text=True).stdout.strip()
    info = (reference / "BUILD-INFO.txt")
    build = " ".join(info.read_text().split()) if info.exists() else "?"
    cpu = "?"
    with open("/proc/cpuinfo", encoding="utf-8") as handle:
        for line in handle:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return [
        f"date: {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC; this package at {commit}"
        + (" (src modified)" if dirty else ""),
        f"machine: {cpu}, {os.cpu_count()} CPUs, {platform.system()} {platform.release()};"
        f" load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}",
        f"python {platform.python_version()}, pydantic {safe('pydantic')}, pydantic-core"
        f" {safe('pydantic-core')}, orjson {safe('orjson')}",
        f"node {node_version}; reference build: {build}",
    ]


# ---------------------------------------------------------------- validation


def run_validation(out: Report, workers: Callable[[], tuple[Worker, Worker]],
                   documents: list[wl.Document], options: argparse.Namespace, tmp: Path) -> None:
    fresh = "a fresh pair of workers per workload" if options.fresh_workers else "one pair of workers"
    out(f"\n## Validation: JSON text in, validated value out ({options.count:,} documents a pass,"
        f" {fresh}; median of {options.rounds} bracketed rounds, range in brackets)\n")
    rows = []
    notes = []
    py, zod = workers()
    for workload in wl.validation_workloads(documents):
        if options.only and not any(part in workload.key for part in options.only):
            continue
        if options.fresh_workers:
            py.close()
            zod.close()
            py, zod = workers()
        workload.build(options.count)
        path = tmp / f"{workload.key}.jsonl"
        path.write_bytes(b"\n".join(workload.texts) + b"\n")
        ours = py.call(op="load", key=workload.key, schema=workload.schema, path=str(path))
        theirs = zod.call(op="load", key=workload.key, schema=workload.schema, path=str(path))
        differ = sum(a != b for a, b in zip(ours["verdicts"], theirs["verdicts"], strict=True))
        accepted = theirs["verdicts"].count("1")
        z_times, p_times, ratios = bracketed(
            zod.timer(op="validate", key=workload.key), py.timer(op="validate", key=workload.key),
            options.rounds,
        )
        rows.append([
            f"{workload.schema}, {workload.label}", f"{accepted:,}/{options.count:,}",
            rate_cell(options.count, z_times), rate_cell(options.count, p_times),
            ratio_cell(ratios), "yes" if differ == 0 else f"NO ({differ} differ)",
        ])
        notes.append(f"- {workload.schema}, {workload.label}: {workload.composition()}"
                     + (f"; {workload.note}" if workload.note else ""))
        print(f"  .. {workload.key}: {ratio_cell(ratios)}", file=sys.stderr)
    py.close()
    zod.close()
    out.table(["workload", "accepted by both", "reference (zod)", "this package", "ratio (ours/zod)",
               "same verdicts"], rows)
    out("\nWhat each mix holds:\n")
    for note in notes:
        out(note)


# ---------------------------------------------------------------- digest


def _make_document(target: int) -> Any:
    spec = importlib.util.spec_from_file_location("bench_canonical", ROOT / "benchmarks" / "bench_canonical.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.make_document(target, target)


def run_digest(out: Report, py: Worker, zod: Worker, options: argparse.Namespace, tmp: Path) -> None:
    out(f"\n## Canonical digest: `canonical_digest` against the reference's `canonicalCandidateDigest`"
        f" (median of {options.rounds} bracketed rounds)\n")
    rows = []
    for target in DIGEST_SIZES:
        key = f"digest-{target}"
        path = tmp / f"{key}.json"
        path.write_text(json.dumps(_make_document(target), ensure_ascii=False), encoding="utf-8")
        ours = py.call(op="load_digest", key=key, path=str(path))
        theirs = zod.call(op="load_digest", key=key, path=str(path))
        one = py.call(op="digest", key=key, iterations=1)["seconds"]
        iterations = max(1, round(0.2 / max(one, 1e-6)))
        for _ in range(2):  # warm both
            py.call(op="digest", key=key, iterations=iterations)
            zod.call(op="digest", key=key, iterations=iterations)
        z_times, p_times, ratios = bracketed(
            zod.timer(op="digest", key=key, iterations=iterations),
            py.timer(op="digest", key=key, iterations=iterations),
            options.rounds,
        )
        size = ours["size"]
        mb = size * iterations / 1e6
        rows.append([
            f"{size / 1e3:,.1f} KB" if size < 1e6 else f"{size / 1e6:,.1f} MB",
            f"{mb / statistics.median(z_times):,.1f} MB/s", f"{mb / statistics.median(p_times):,.1f} MB/s",
            ratio_cell(ratios), f"{ours['peak'] / size:.2f}x",
            "yes" if ours["digest"] == theirs["digest"] else "NO",
        ])
        print(f"  .. {key}: {ratio_cell(ratios)}", file=sys.stderr)
    out.table(["canonical size", "reference", "this package", "ratio (ours/reference)",
               "peak memory / size", "same digest"], rows)


# ---------------------------------------------------------------- cold start


def _timed(args: list[str], env: dict[str, str]) -> tuple[float, dict[str, Any] | None]:
    start = time.perf_counter()
    result = subprocess.run(args, capture_output=True, text=True, env=env, check=False)
    wall = (time.perf_counter() - start) * 1e3
    try:
        reply = json.loads(result.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        reply = None
    return wall, reply


def _cold_pair(py_args: list[str], node_args: list[str], env: dict[str, str], rounds: int) -> dict[str, Any]:
    _timed(py_args, env)  # bytecode, file cache
    _timed(node_args, env)
    inner: dict[str, list[float]] = {"py": [], "node": []}
    verdicts: dict[str, set[Any]] = {"py": set(), "node": set()}

    def one(side: str, args: list[str]) -> float:
        wall, reply = _timed(args, env)
        if reply is not None:
            inner[side].append(reply["ms"])
            verdicts[side].add(reply["accepted"])
        return wall

    n_walls, p_walls, ratios = bracketed(lambda: one("node", node_args), lambda: one("py", py_args), rounds)
    return {"node": n_walls, "py": p_walls, "ratios": [1 / r for r in ratios], "inner": inner,
            "verdicts": verdicts}


def _ms(values: list[float]) -> str:
    return f"{statistics.median(values):.0f}" if values else "-"


def _ratio_ms(ratios: list[float]) -> str:
    return f"{statistics.median(ratios):.2f}x ({min(ratios):.2f}-{max(ratios):.2f})"


def run_cold(out: Report, documents: list[wl.Document], options: argparse.Namespace, tmp: Path,
             node: str, index: str, schemas: Iterable[tuple[str, str]], rounds: int, title: str,
             cli: bool) -> None:
    env = child_env()
    python = PYTHON
    worker = str(HERE / "py_worker.py")
    node_worker = str(HERE / "node_worker.mjs")
    out(f"\n## {title} (wall ms of fresh processes, median of {rounds} bracketed rounds;"
        " in-process: from the script's first line)\n")
    floors = []
    for label, args in (
        ("python -c pass", [python, "-c", "pass"]),
        ("python: import pydantic, build and validate a one-field model",
         [python, "-c", "from pydantic import BaseModel\nclass A(BaseModel):\n    x: int\nA.model_validate({'x': 1})"]),
        ("node -e ''", [node, "-e", ""]),
    ):
        _timed(args, env)
        walls = [_timed(args, env)[0] for _ in range(rounds)]
        floors.append(f"{label}: {_ms(walls)} ms")
    out("Floors: " + "; ".join(floors) + "\n")
    rows = []
    for family, name in schemas:
        doc = wl.first_document(documents, name)
        if doc is None:
            continue
        path = tmp / f"cold-{name}.json"
        path.write_bytes(doc.text)
        result = _cold_pair([python, worker, "cold", name, str(path)],
                            [node, node_worker, "cold", index, name, str(path)], env, rounds)
        same = result["verdicts"]["py"] == result["verdicts"]["node"] and len(result["verdicts"]["py"]) == 1
        rows.append([
            f"{name} ({family}, {'accepted' if doc.accepted else 'refused'} document)",
            _ms(result["node"]), _ms(result["py"]), _ratio_ms(result["ratios"]),
            f"{_ms(result['inner']['node'])} / {_ms(result['inner']['py'])}",
            "yes" if same else "NO",
        ])
        print(f"  .. cold {name}: {_ratio_ms(result['ratios'])}", file=sys.stderr)
    if cli:
        # What the installed console script runs.
        command = [python, "-c", "import sys\nfrom agent_interface.cli import main\nsys.exit(main())"]
        for name in CLI_SCHEMAS:
            doc = wl.first_document(documents, name)
            assert doc is not None
            path = tmp / f"cold-{name}.json"
            path.write_bytes(doc.text)
            result = _cold_pair([*command, "validate", "--schema", name, str(path)],
                                [node, node_worker, "cold", index, name, str(path)], env, rounds)
            rows.append([f"`agent-interface validate --schema {name}`", _ms(result["node"]),
                         _ms(result["py"]), _ratio_ms(result["ratios"]), "-", "-"])
            print(f"  .. cli {name}: {_ratio_ms(result['ratios'])}", file=sys.stderr)
    out.table(["first use", "reference wall", "this package wall", "ratio (ours/reference)",
               "in-process ref / ours", "same verdict"], rows)
    if len(rows) > 12:
        ratios = sorted(float(row[3].split("x")[0]) for row in rows)
        out(f"\n{len(rows)} schemas: median ratio {statistics.median(ratios):.2f}x, highest {ratios[-1]:.2f}x,"
            f" {sum(r > 0.6 for r in ratios)} above 0.6x")


def reference_schemas(node: str, index: str) -> set[str]:
    script = (f"const r = await import({json.dumps(Path(index).as_uri())});"
              "console.log(JSON.stringify(Object.keys(r).filter(k => k.endsWith('Schema'))))")
    keys = json.loads(subprocess.run([node, "--input-type=module", "-e", script], capture_output=True,
                                     text=True, check=True).stdout)
    return {key[: -len("Schema")][:1].upper() + key[1 : -len("Schema")] for key in keys}


# ---------------------------------------------------------------- main


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", type=Path, required=True, help="built reference (DIR/dist/index.js)")
    parser.add_argument("--shared", type=Path, help="the shared directory (conformance/ documents)")
    parser.add_argument("--suite", nargs="+", default=["validation", "digest", "cold"],
                        choices=["validation", "digest", "cold", "cold-all"])
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--cold-repeat", type=int, default=3, help="rounds per schema for cold-all")
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--fresh-workers", action="store_true",
                        help="a new pair of workers for each validation workload")
    parser.add_argument("--only", nargs="*", help="validation workloads whose key contains one of these")
    parser.add_argument("--out", type=Path, help="also write the report to this file")
    parser.add_argument("--python", default=sys.executable, help="interpreter of the Python side")
    parser.add_argument("--pythonpath", help="prepended to the Python side's import path")
    options = parser.parse_args()
    global PYTHON, PYTHONPATH
    PYTHON, PYTHONPATH = options.python, options.pythonpath
    node = shutil.which("node")
    if node is None:
        raise SystemExit("node is not on PATH")
    index = str((options.reference / "dist" / "index.js").resolve())
    out = Report()
    out("# Side by side with the reference")
    out()
    for line in versions(options.reference, node):
        out(f"- {line}")
    out(f"- command: {' '.join(sys.argv)}")
    documents = wl.load_documents(options.shared)
    env = child_env()
    with tempfile.TemporaryDirectory() as directory:
        tmp = Path(directory)
        def workers() -> tuple[Worker, Worker]:
            return (Worker([PYTHON, str(HERE / "py_worker.py"), "serve"], env),
                    Worker([node, str(HERE / "node_worker.mjs"), "serve", index], env))

        if "validation" in options.suite:
            run_validation(out, workers, documents, options, tmp)
        if "digest" in options.suite:
            py, zod = workers()
            try:
                run_digest(out, py, zod, options, tmp)
            finally:
                py.close()
                zod.close()
        if "cold" in options.suite:
            run_cold(out, documents, options, tmp, node, index, COLD_SCHEMAS, options.rounds,
                     "Cold start: import and first validation", cli=True)
        if "cold-all" in options.suite:
            sys.path.insert(0, PYTHONPATH or str(ROOT / "src"))
            from agent_interface.core._schema_index import SCHEMA_MODULES

            exported = reference_schemas(node, index)
            names = [(SCHEMA_MODULES[name].split(".")[1], name) for name in sorted(SCHEMA_MODULES)
                     if name in exported]
            missing = sorted(set(SCHEMA_MODULES) - exported)
            run_cold(out, documents, options, tmp, node, index, names, options.cold_repeat,
                     "Cold start of every registered schema the reference exports", cli=False)
            out(f"\nRegistered here but not exported by the reference ({len(missing)}): {', '.join(missing)}")
    out(f"\n- load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    if options.out:
        options.out.parent.mkdir(parents=True, exist_ok=True)
        options.out.write_text("\n".join(out.lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
