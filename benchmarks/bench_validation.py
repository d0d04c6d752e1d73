"""Validation throughput: JSON text in, validated value out, for this package, the floor
and (with ``--reference DIR``) the reference 1.6.0 under Node in the same run.

Workloads (10,000 documents each, cycled from the golden files):

* RuntimeEventEnvelope: the accepted canonical events of ``tests/golden/events_parity.jsonl``,
  each put into an envelope (none of that file's envelope rows is accepted by the
  reference: they are all refusals);
* RuntimeEventEnvelope wrapping the accepted events of the reference's own test suite
  (``CanonicalStreamEvent`` / ``StreamEvent`` lines of the conformance documents);
* AgentProfile: accepted profiles of ``tests/golden/profile_parity.jsonl``;
* AgentProfile: accepted profiles of the reference's test suite (conformance documents).

Contenders: ``wire_schema(NAME).parse(bytes)`` (this package), ``orjson.loads`` (the
floor: parsing only), and ``JSON.parse`` + ``schema.safeParse`` of the reference. Rounds
are interleaved; the best and median rates of the rounds are printed.

Run: ``.venv/bin/python benchmarks/bench_validation.py [--reference DIR] [--rounds 5]``.
For figures against the reference, use ``benchmarks/side_by_side/run.py`` (bracketed
passes, long-lived workers on both sides, honest mixes, ranges).
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson

from agent_interface.core.registry import wire_schema

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden"
COUNT = 10_000

NODE_VALIDATE = """
const ref = await import(process.argv[1]);
const fs = await import("node:fs");
const name = process.argv[2];
const schema = ref[name + "Schema"] ?? ref[name[0].toLowerCase() + name.slice(1) + "Schema"];
const lines = fs.readFileSync(process.argv[3], "utf8").split("\\n").filter(Boolean);
const rounds = Number(process.argv[4]);
for (let i = 0; i < 2; i++) for (const line of lines) schema.safeParse(JSON.parse(line));
const rates = [];
for (let round = 0; round < rounds; round++) {
  const start = performance.now();
  let accepted = 0;
  for (const line of lines) accepted += schema.safeParse(JSON.parse(line)).success ? 1 : 0;
  rates.push(lines.length / ((performance.now() - start) / 1000));
}
console.log(JSON.stringify(rates));
"""


def _jsonl(path: Path) -> Iterator[dict[str, Any]]:
    opener: Callable[..., Any] = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)


def _envelope(index: int, event: Any) -> dict[str, Any]:
    return {
        "runId": "run-bench", "eventId": f"event-{index}", "sequence": index, "cursor": f"{index}:0",
        "occurredAt": "2026-08-01T20:00:00.000Z", "receivedAt": "2026-08-01T20:00:00.010Z",
        "event": event,
    }


def _text(value: Any) -> bytes:
    try:
        return orjson.dumps(value)
    except TypeError:  # a lone surrogate (a refusal case): escape it
        return json.dumps(value, separators=(",", ":")).encode("ascii")


def _cycle(values: list[Any], make: Callable[[int, Any], Any]) -> list[bytes]:
    if not values:
        raise SystemExit("no documents for a workload")
    return [_text(make(index, values[index % len(values)])) for index in range(COUNT)]


def workloads() -> list[tuple[str, str, list[bytes]]]:
    events = list(_jsonl(GOLDEN / "events_parity.jsonl"))
    golden_events = [row["doc"] for row in events if row.get("accepted") and row.get("schema") == "CanonicalStreamEvent"]
    suite = list(_jsonl(GOLDEN / "reference-1.6.0-documents.jsonl.gz"))
    suite_events = [
        row["value"] for row in suite
        if row["ok"] and row["schema"] in ("CanonicalStreamEvent", "StreamEvent")
    ]
    golden_profiles = [
        row["doc"] for row in _jsonl(GOLDEN / "profile_parity.jsonl")
        if row.get("accepted") and row.get("schema") == "AgentProfile"
    ]
    suite_profiles = [row["value"] for row in suite if row["ok"] and row["schema"] == "AgentProfile"]

    return [
        ("RuntimeEventEnvelope", "golden stream events in an envelope", _cycle(golden_events, _envelope)),
        ("RuntimeEventEnvelope", "reference test-suite events", _cycle(suite_events, _envelope)),
        ("AgentProfile", "golden profiles", _cycle(golden_profiles, lambda _i, doc: doc)),
        ("AgentProfile", "reference test-suite profiles", _cycle(suite_profiles, lambda _i, doc: doc)),
    ]


def rate(parse: Callable[[bytes], Any], lines: list[bytes]) -> float:
    start = time.perf_counter()
    for line in lines:
        parse(line)
    return len(lines) / (time.perf_counter() - start)


def _tolerant(parse: Callable[[bytes], Any]) -> Callable[[bytes], Any]:
    def run(line: bytes) -> Any:
        try:
            return parse(line)
        except ValueError:
            return None

    return run


def reference_rates(reference: Path, name: str, lines: list[bytes], rounds: int) -> list[float]:
    node = shutil.which("node")
    if node is None:
        raise SystemExit("--reference needs node on PATH")
    with tempfile.NamedTemporaryFile("wb", suffix=".jsonl", delete=False) as handle:
        handle.write(b"\n".join(lines) + b"\n")
        path = handle.name
    try:
        index = str((reference / "dist" / "index.js").resolve())
        result = subprocess.run(
            [node, "--input-type=module", "-e", NODE_VALIDATE, index, name, path, str(rounds)],
            capture_output=True, text=True, check=True,
        )
    finally:
        Path(path).unlink()
    return [float(value) for value in json.loads(result.stdout)]


def fmt(rates: list[float]) -> str:
    return f"{max(rates):>10,.0f} best {statistics.median(rates):>10,.0f} median"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", type=Path, help="built reference directory (dist/index.js)")
    parser.add_argument("--rounds", type=int, default=5)
    options = parser.parse_args()
    print(f"documents/s over {COUNT:,} documents, {options.rounds} interleaved rounds")
    for name, label, lines in workloads():
        size = sum(map(len, lines)) / len(lines)
        schema = wire_schema(name)
        parse = _tolerant(schema.parse)
        accepted = sum(parse(line) is not None for line in lines)
        ours: list[float] = []
        floor: list[float] = []
        theirs: list[float] = []
        for _ in range(options.rounds):
            ours.append(rate(parse, lines))
            floor.append(rate(_tolerant(orjson.loads), lines))
            if options.reference:
                theirs.extend(reference_rates(options.reference, name, lines, 1))
        print(f"\n{name}, {label} (~{size / 1000:.2f} KB, {accepted:,} of {len(lines):,} accepted here)")
        print(f"  {'this package':<30} {fmt(ours)}")
        print(f"  {'floor: orjson.loads':<30} {fmt(floor)}")
        if theirs:
            print(f"  {'reference (zod 4)':<30} {fmt(theirs)}")
            print(f"  ratio ours/reference: {statistics.median(ours) / statistics.median(theirs):.2f}x (medians)")


if __name__ == "__main__":
    main()
