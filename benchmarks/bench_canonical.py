"""Throughput of ``canonical_digest`` beside ``rfc8785`` and an ``orjson`` floor.

Run: ``.venv/bin/python benchmarks/bench_canonical.py``. Prints documents/s and MB/s
for a ~10 KB nested document and a ~1 MB document. ``orjson.dumps`` with sorted keys
is not RFC 8785 (it sorts by code point and formats numbers its own way); it is the
floor: the cost of serializing and hashing at all.
"""

from __future__ import annotations

import hashlib
import random
import time
from collections.abc import Callable
from typing import Any

import orjson
import rfc8785

from agent_interface.core.canonical import (
    canonical_bytes,
    canonical_digest,
)


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
    index = 0
    while len(canonical_bytes(document)) < target_bytes:
        document[f"section{index}"] = node(0)
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


def rfc8785_digest(document: Any) -> str:
    return "sha256:" + hashlib.sha256(rfc8785.dumps(document)).hexdigest()


def orjson_floor(document: Any) -> str:
    return "sha256:" + hashlib.sha256(orjson.dumps(document, option=orjson.OPT_SORT_KEYS)).hexdigest()


def main() -> None:
    cases = [("~10 KB nested", make_document(10_000, 1), 2.0), ("~1 MB", make_document(1_000_000, 2), 6.0)]
    contenders: list[tuple[str, Callable[[Any], str]]] = [
        ("agent_interface.canonical_digest", canonical_digest),
        ("rfc8785.dumps + sha256", rfc8785_digest),
        ("orjson.dumps(OPT_SORT_KEYS) + sha256 (floor)", orjson_floor),
    ]
    for label, document, seconds in cases:
        size = len(canonical_bytes(document))
        assert canonical_digest(document) == rfc8785_digest(document)
        print(f"\n{label} document: {size:,} canonical bytes")
        results = {}
        for name, fn in contenders:
            rate = measure(fn, document, seconds)
            results[name] = rate
            print(f"  {name:48s} {rate:10,.1f} docs/s {rate * size / 1e6:8.2f} MB/s")
        ours = results["agent_interface.canonical_digest"]
        print(f"  speed-up over rfc8785: {ours / results['rfc8785.dumps + sha256']:.2f}x;"
              f" share of the orjson floor: {ours / results[contenders[2][0]]:.3f}")


if __name__ == "__main__":
    main()
