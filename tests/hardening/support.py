"""Shared helpers for the hardening tests: golden documents and a watchdog for hangs."""

from __future__ import annotations

import gzip
import json
import signal
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

GOLDEN = Path(__file__).resolve().parent.parent / "golden"


@cache
def accepted_documents() -> dict[str, list[Any]]:
    """Accepted documents of the reference conformance copy, by schema name."""
    by_schema: dict[str, list[Any]] = defaultdict(list)
    with gzip.open(GOLDEN / "reference-1.6.0-documents.jsonl.gz", "rt", encoding="utf-8") as handle:
        for line in handle:
            case = json.loads(line)
            if case["ok"]:
                by_schema[case["schema"]].append(case["value"])
    return dict(by_schema)


def first_accepted(name: str) -> Any:
    return json.loads(json.dumps(accepted_documents()[name][0]))


class Hang(Exception):
    """The watchdog fired: the call did not return in its generous time budget."""


@contextmanager
def watchdog(seconds: float) -> Iterator[None]:
    """Turn a hang into a failure (a budget far above the expected time, not a timing)."""

    def fire(_signum: int, _frame: Any) -> None:
        raise Hang(f"no answer within {seconds} s")

    previous = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def text(value: Any) -> bytes:
    """JSON text of ``value`` as JSON.stringify writes it (lone surrogates escaped)."""
    return json.dumps(value, separators=(",", ":")).encode("ascii")
