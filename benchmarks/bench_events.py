"""Throughput of RuntimeEventEnvelope validation from JSON Lines bytes.

Generates 100,000 mixed envelopes in memory (every canonical event variant, weighted
toward the common ones), then validates each line from bytes with one reused
adapter (``wire_adapter(RuntimeEventEnvelope).adapter.validate_json``). ``orjson.loads``
alone over the same lines is printed as the floor (parsing without validation).

Run: ``.venv/bin/python benchmarks/bench_events.py [count]``.
"""

from __future__ import annotations

import sys
import time
from typing import Any

import orjson

from agent_interface.core.model import wire_adapter
from agent_interface.runtime.events import RuntimeEventEnvelope
from agent_interface.runtime.interaction_requests import InteractionRequest


def _interaction() -> dict[str, Any]:
    request = InteractionRequest.create(
        {
            "id": "interaction-1", "kind": "question", "title": "Continue?",
            "answerSpec": {"fields": [{"type": "text", "name": "answer", "label": "Answer"}]},
            "binding": {
                "runId": "run-1", "provider": "bench", "environmentId": "env-1",
                "sessionId": "session-1", "executionId": "execution-1", "interactionId": "interaction-1",
            },
        }
    )
    return {"type": "interaction", "request": request.to_wire()}


def _events(index: int) -> list[dict[str, Any]]:
    part = {"id": f"part-{index}", "sessionID": "session-1", "messageID": f"msg-{index // 10}", "type": "text", "text": "token " * 8}
    tool = {
        "id": f"tool-{index}", "sessionID": "session-1", "messageID": f"msg-{index // 10}", "type": "tool",
        "callID": f"call-{index}", "tool": "shell",
        "state": {"status": "completed", "input": {"command": "ls -la"}, "output": "a\nb\nc", "time": {"start": 1, "end": 2}},
    }
    return [
        {"type": "message.part.updated", "part": part, "delta": "token "},
        {"type": "message.part.updated", "part": part, "delta": "more "},
        {"type": "message.part.updated", "part": tool},
        {"type": "tool-heartbeat", "toolName": "shell", "partId": f"tool-{index}", "elapsedMs": index % 5000},
        {"type": "tool-slow", "toolName": "shell", "partId": f"tool-{index}", "elapsedMs": 1200, "thresholdMs": 1000},
        {"type": "model-processing", "phase": "generating", "elapsedMs": 12.5},
        {"type": "status", "status": "processing"},
        {"type": "warning", "code": "slow", "message": "slow response"},
        {"type": "raw", "backend": "opencode", "event": {"kind": "vendor", "n": index}},
        {"type": "session.updated", "sessionId": "session-1", "time": {"created": 1, "updated": index}},
        {"type": "interaction.cancel", "id": "interaction-1", "reason": "timeout"},
        {"type": "plan.submitted", "plan": {"id": "plan-1", "revision": 1, "body": "1. Do it", "submittedAt": "2026-08-01T20:00:00.000Z"}},
        {"type": "child-task", "childId": f"child-{index % 7}", "status": "running", "time": {"started": 1000, "updated": 1000 + index}, "runner": "claude-code", "sourceEventId": f"src-{index}"},
        {"type": "native.session.observed", "provider": "claude-code", "nativeSessionId": "provider-conversation"},
    ]


def build(count: int) -> list[bytes]:
    interaction = _interaction()
    lines: list[bytes] = []
    for index in range(count):
        variants = _events(index)
        # ~1 in 50 events is an interaction request (its digest is recomputed on validation).
        event = interaction if index % 50 == 49 else variants[index % len(variants)]
        envelope = {
            "runId": "run-1", "eventId": f"event-{index}", "sequence": index, "cursor": f"{index}:0",
            "occurredAt": "2026-08-01T20:00:00.000Z", "receivedAt": "2026-08-01T20:00:00.010Z", "event": event,
        }
        lines.append(orjson.dumps(envelope))
    return lines


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    lines = build(count)
    stream = b"\n".join(lines) + b"\n"
    megabytes = len(stream) / 1_000_000
    print(f"{count} envelopes, {megabytes:.1f} MB of JSON Lines")

    wire = wire_adapter(RuntimeEventEnvelope)
    adapter = wire.adapter
    wire.parse(lines[0])  # warm up

    def validate(line: bytes) -> Any:
        # Wire names only, exactly as ``WireAdapter.parse`` validates bytes.
        return adapter.validate_json(line, by_alias=True, by_name=False)

    def run(label: str, parse: Any) -> None:
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            for line in stream.splitlines():
                parse(line)
            best = min(best, time.perf_counter() - start)
        print(f"{label:<38} {count / best:>12,.0f} envelopes/s {megabytes / best:>8.1f} MB/s ({best:.2f} s)")

    run("orjson.loads (floor, no validation)", orjson.loads)
    run("TypeAdapter.validate_json (reused)", validate)
    run("wire_adapter(...).parse (reused)", wire.parse)


if __name__ == "__main__":
    main()
