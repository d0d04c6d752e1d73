"""Throughput and peak memory of ``canonical_digest`` from 1 KB to 10 MB.

For each size, one nested document (mixed keys, strings with non-ASCII and emoji,
integers, floats, booleans, nulls) is digested by:

* ``canonical_digest`` (the default path: orjson when the value allows it),
* the exact Python path alone (``canonical._exact_bytes`` + sha256),
* ``rfc8785.dumps`` + sha256 (another Python RFC 8785 implementation),
* ``orjson.dumps(OPT_SORT_KEYS)`` + sha256: the floor (not RFC 8785 in general),
* with ``--reference DIR`` (a built reference, ``DIR/dist/index.js``; Node on PATH), the
  reference's ``canonicalCandidateDigest`` on the same document in the same run.

Throughput is MB of canonical bytes per second (best of several timed rounds); peak
memory is the tracemalloc peak during one digest, as a multiple of the canonical size.

Run: ``.venv/bin/python benchmarks/bench_canonical.py [--reference DIR] [--seconds S]``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import shutil
import subprocess
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import rfc8785

from agent_interface.core.canonical import _exact_bytes, canonical_bytes, canonical_digest

SIZES = [1_000, 10_000, 100_000, 1_000_000, 10_000_000]

NODE_DIGEST = """
const ref = await import(process.argv[1]);
const fs = await import("node:fs");
const value = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const seconds = Number(process.argv[3]);
const expected = ref.canonicalCandidateDigest(value);
let best = 0;
for (let round = 0; round < 5; round++) {
  let count = 0;
  const start = performance.now();
  let now = start;
  while (now - start < seconds * 200) { ref.canonicalCandidateDigest(value); count++; now = performance.now(); }
  best = Math.max(best, count / ((now - start) / 1000));
}
console.log(JSON.stringify({ rate: best, digest: expected }));
"""


def make_document(target_bytes: int, seed: int) -> Any:
    rng = random.Random(seed)
    words = ["alpha", "beta", "gamma", "δέλτα", "epsilon", "zeta", "ημέρα", "😀", "run", "tool"]

    def leaf() -> Any:
        choice = rng.random()
        if choice < 0.35:
            return " ".join(rng.choice(words) for _ in range(rng.randint(1, 6)))
        if choice < 0.6:
            return rng.randint(-(10**9), 10**9)
        if choice < 0.8:
            return rng.uniform(-1e6, 1e6)
        return rng.choice([True, False, None])

    def node(depth: int) -> Any:
        if depth > 4 or rng.random() < 0.3:
            return leaf()
        if rng.random() < 0.5:
            return [node(depth + 1) for _ in range(rng.randint(1, 6))]
        return {f"{rng.choice(words)}{i}": node(depth + 1) for i in range(rng.randint(1, 6))}

    document: dict[str, Any] = {}
    size = 2
    index = 0
    while size < target_bytes:
        section = node(0)
        document[f"section{index}"] = section
        size += len(canonical_bytes(section)) + len(f'"section{index}":,')
        index += 1
    return document


def measure(fn: Callable[[Any], str], document: Any, seconds: float) -> float:
    """Best-of-5 documents per second."""
    rates = []
    for _ in range(5):
        count = 0
        start = time.perf_counter()
        deadline = start + seconds / 5
        while True:
            fn(document)
            count += 1
            now = time.perf_counter()
            if now >= deadline:
                break
        rates.append(count / (now - start))
    return max(rates)


def peak_memory(fn: Callable[[Any], str], document: Any) -> int:
    tracemalloc.start()
    try:
        fn(document)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def exact_digest(document: Any) -> str:
    return "sha256:" + hashlib.sha256(_exact_bytes(document)).hexdigest()


def rfc8785_digest(document: Any) -> str:
    return "sha256:" + hashlib.sha256(rfc8785.dumps(document)).hexdigest()


def orjson_floor(document: Any) -> str:
    return "sha256:" + hashlib.sha256(orjson.dumps(document, option=orjson.OPT_SORT_KEYS)).hexdigest()


def reference_rate(reference: Path, document: Any, seconds: float) -> tuple[float, str]:
    node = shutil.which("node")
    if node is None:
        raise SystemExit("--reference needs node on PATH")
    with tempfile.NamedTemporaryFile("w", suffix=".json", encoding="utf-8", delete=False) as handle:
        json.dump(document, handle, ensure_ascii=False)
        path = handle.name
    try:
        index = str((reference / "dist" / "index.js").resolve())
        result = subprocess.run(
            [node, "--input-type=module", "-e", NODE_DIGEST, index, path, str(seconds)],
            capture_output=True, text=True, check=True,
        )
    finally:
        Path(path).unlink()
    reply = json.loads(result.stdout)
    return float(reply["rate"]), str(reply["digest"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", type=Path, help="built reference directory (dist/index.js)")
    parser.add_argument("--seconds", type=float, default=1.5, help="timed seconds per contender and size")
    options = parser.parse_args()
    contenders: list[tuple[str, Callable[[Any], str]]] = [
        ("canonical_digest (default)", canonical_digest),
        ("exact Python path", exact_digest),
        ("rfc8785.dumps + sha256", rfc8785_digest),
        ("orjson sorted + sha256 (floor)", orjson_floor),
    ]
    print(f"{'size':>10} {'contender':<34} {'MB/s':>9} {'peak mem':>9}  ratio")
    for target in SIZES:
        document = make_document(target, target)
        size = len(canonical_bytes(document))
        expected = canonical_digest(document)
        assert exact_digest(document) == expected == rfc8785_digest(document)
        seconds = options.seconds * (2 if size > 1_000_000 else 1)
        rates: dict[str, float] = {}
        for name, fn in contenders:
            rates[name] = measure(fn, document, seconds) * size / 1e6
            memory = peak_memory(fn, document) / size
            print(f"{size:>10,} {name:<34} {rates[name]:>9.1f} {memory:>8.2f}x")
        ours = rates[contenders[0][0]]
        if options.reference:
            rate, digest = reference_rate(options.reference, document, seconds)
            assert digest == expected, "reference digest differs"
            mbps = rate * size / 1e6
            print(f"{size:>10,} {'reference canonicalCandidateDigest':<34} {mbps:>9.1f} {'':>9}  "
                  f"ours/reference {ours / mbps:.2f}x")
        print(f"{'':>10} ours/exact {ours / rates['exact Python path']:.2f}x,"
              f" share of the floor {ours / rates[contenders[3][0]]:.2f}")


if __name__ == "__main__":
    main()
