"""How close envelope validation is to pydantic's own floor.

One RuntimeEventEnvelope wrapping a tool part (the commonest golden event), validated
10,000 times from JSON text by: this package (``wire_schema(...).parse``); a plain pydantic
model of the same shape with none of the contract's rules (plain ``str``, ``dict``,
``Any``: no UTF-16 bounds, no identifier or datetime patterns, no bounded JSON, no
freezing); and, with ``--reference DIR``, the reference under Node. The plain model is
the rate this package could reach if the rules cost nothing.

Run: ``.venv/bin/python benchmarks/bench_pydantic_floor.py [--reference DIR] [--rounds 7]``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Annotated, Any, Literal

from bench_validation import reference_rates
from pydantic import BaseModel, ConfigDict, Field

from agent_interface.core.registry import wire_schema


class _Plain(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)


class _Span(_Plain):
    start: float
    end: float


class _Completed(_Plain):
    status: Literal["completed"]
    input: dict[str, Any]
    output: Any
    title: str | None = None
    metadata: dict[str, Any] | None = None
    time: _Span | None = None


class _Failed(_Plain):
    status: Literal["error", "failed"]
    input: dict[str, Any]


class _ToolPart(_Plain):
    id: str
    sessionID: str  # wire names, as the plain model reads them
    messageID: str
    type: Literal["tool"]
    callID: str | None = None
    tool: str
    state: Annotated[_Completed | _Failed, Field(discriminator="status")]
    metadata: dict[str, Any] | None = None


class _PartUpdated(_Plain):
    type: Literal["message.part.updated"]
    part: _ToolPart
    delta: str | None = None


class _Envelope(_Plain):
    runId: str
    eventId: str
    sequence: int
    cursor: str | None = None
    occurredAt: str | None = None
    receivedAt: str
    event: _PartUpdated


DOCUMENT = json.dumps({
    "runId": "run-bench", "eventId": "event-1", "sequence": 1, "cursor": "1:0",
    "occurredAt": "2026-08-01T20:00:00.000Z", "receivedAt": "2026-08-01T20:00:00.010Z",
    "event": {
        "type": "message.part.updated",
        "part": {
            "id": "part-1", "sessionID": "session-1", "messageID": "message-1", "type": "tool",
            "callID": "call-1", "tool": "shell",
            "state": {
                "status": "completed", "input": {"cmd": "ls"}, "output": "s", "title": "ls",
                "metadata": {"exit": 0}, "time": {"start": 1, "end": 2},
            },
            "metadata": {"a": 1},
        },
    },
}).encode()


def best_rate(validate: Any, count: int, rounds: int) -> float:
    validate(DOCUMENT)
    best = 0.0
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(count):
            validate(DOCUMENT)
        best = max(best, count / (time.perf_counter() - start))
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", type=Path)
    parser.add_argument("--rounds", type=int, default=7)
    options = parser.parse_args()
    count = 10_000
    schema = wire_schema("RuntimeEventEnvelope")
    ours = best_rate(schema.parse, count, options.rounds)
    plain = best_rate(_Envelope.model_validate_json, count, options.rounds)
    print(f"RuntimeEventEnvelope with a tool part ({len(DOCUMENT)} bytes), best of "
          f"{options.rounds} rounds of {count:,}")
    print(f"  this package                 {ours:>10,.0f}/s")
    print(f"  plain pydantic, no rules     {plain:>10,.0f}/s  (the rules cost {plain / ours - 1:.0%})")
    if options.reference:
        theirs = max(reference_rates(
            options.reference, "RuntimeEventEnvelope", [DOCUMENT] * count, options.rounds
        ))
        print(f"  reference (zod 4)            {theirs:>10,.0f}/s")
        print(f"  ours / reference {ours / theirs:.2f}x; plain pydantic / reference {plain / theirs:.2f}x")


if __name__ == "__main__":
    main()
