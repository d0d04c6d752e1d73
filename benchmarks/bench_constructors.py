"""Constructor throughput: keyword construction of wire models, accepted and refused.

Measures ``Model(**kwargs)`` (pydantic validation from Python values, snake_case names) on
a few representative models, the same through ``model_validate``, and a refused
construction (which builds a ``WireValidationError`` with JSON Pointers). The rows marked
"pydantic's own" call ``BaseModel.__init__`` on the same model in the same rounds: the
cost of ``WireModel.__init__`` (which only changes the error type) is the difference.
Figures are the median (and range) of interleaved rounds, constructions per second.

Run: ``.venv/bin/python benchmarks/bench_constructors.py [--rounds N] [--count N]``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from agent_interface import (
    AgentProfile,
    AgentTurnInput,
    RuntimeEventEnvelope,
    StatusEvent,
    TextPart,
    TokenUsage,
)

PART = {"id": "p1", "session_id": "s1", "message_id": "m1", "text": "hello world"}
TURN = {"prompt": "hi", "session_id": "s1", "timeout_ms": 1000, "turn_id": "t1"}
USAGE = {"input_tokens": 10, "output_tokens": 20, "cache_read_input_tokens": 3}
PROFILE = {"name": "reviewer", "tags": ("a", "b"), "metadata": {"team": "x", "n": 1}}
STATUS = StatusEvent(type="status", status="completed")
ENVELOPE = {
    "run_id": "r1",
    "event_id": "e1",
    "sequence": 1,
    "received_at": "2026-11-30T09:15:00Z",
    "event": STATUS,
}


def refused_part() -> None:
    try:
        TextPart(id="p1", session_id="", message_id="m1", text="x")
    except ValueError:
        return
    raise AssertionError("the empty identifier was accepted")


def pydantic_init() -> None:
    BaseModel.__init__(TextPart.__new__(TextPart), **PART)


def pydantic_refused() -> None:
    try:
        BaseModel.__init__(
            TextPart.__new__(TextPart), id="p1", session_id="", message_id="m1", text="x"
        )
    except ValueError:
        return
    raise AssertionError("the empty identifier was accepted")


WORKLOADS: dict[str, Callable[[], Any]] = {
    "TextPart(**kwargs)": lambda: TextPart(**PART),
    "TextPart, pydantic's own __init__": pydantic_init,
    "AgentTurnInput(**kwargs)": lambda: AgentTurnInput(**TURN),
    "TokenUsage(**kwargs)": lambda: TokenUsage(**USAGE),
    "AgentProfile(**kwargs)": lambda: AgentProfile(**PROFILE),
    "RuntimeEventEnvelope(**kwargs)": lambda: RuntimeEventEnvelope(**ENVELOPE),
    "TextPart.model_validate(dict)": lambda: TextPart.model_validate(PART),
    "TextPart refused (empty id)": refused_part,
    "TextPart refused, pydantic's own": pydantic_refused,
}


def rate(work: Callable[[], Any], count: int) -> float:
    start = time.perf_counter()
    for _ in range(count):
        work()
    return count / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--count", type=int, default=20_000)
    args = parser.parse_args()
    for work in WORKLOADS.values():
        work()  # build the validators first
    rates: dict[str, list[float]] = {name: [] for name in WORKLOADS}
    for _ in range(args.rounds):
        for name, work in WORKLOADS.items():
            rates[name].append(rate(work, args.count))
    width = max(map(len, WORKLOADS))
    print(f"{'workload':<{width}}  median/s    min/s    max/s")
    for name, values in rates.items():
        print(
            f"{name:<{width}}  {statistics.median(values):>8,.0f} "
            f"{min(values):>8,.0f} {max(values):>8,.0f}"
        )


if __name__ == "__main__":
    main()
