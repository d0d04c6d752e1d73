"""Refusing a large document costs a small multiple of the document, not one error object
per refused member (pydantic-core keeps about 300 bytes per error).

Each case runs in a fresh interpreter, which writes the document, reads it back and
measures the refusal alone: the peak of Python allocations (tracemalloc) and the growth
of the process's peak resident size (which also sees pydantic-core's own allocations).
"""

from __future__ import annotations

import runpy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

# The probe is the refusal benchmark's own (one measurement, one owner).
_BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_refusals.py"
_probe: Callable[..., dict[str, float] | None] = runpy.run_path(str(_BENCH))["_probe"]


def _measure(mode: str, shape: str, count: int) -> dict[str, Any]:
    measured = _probe(shape, mode, count, trace=True, timeout=300)
    assert measured is not None, f"{shape}/{mode}: no answer within 300 s"
    return measured


@pytest.mark.parametrize("mode", ["text", "value"])
@pytest.mark.parametrize(
    ("shape", "count"),
    [("strings", 400_000), ("numbers", 600_000), ("map", 300_000), ("objects", 300_000)],
)
def test_refusing_a_large_document_costs_a_small_multiple_of_it(
    mode: str, shape: str, count: int
) -> None:
    measured = _measure(mode, shape, count)
    assert measured["issues"] >= 1
    size = measured["size"]
    assert measured["traced"] <= 5 * size, measured
    # The resident peak includes pydantic-core's own parse of the text: about 3 times an
    # array of strings, about 10 times an array of small objects (as when accepting it).
    assert measured["rss"] <= 12 * size, measured
