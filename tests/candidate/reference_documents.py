"""Documents the reference 1.6.0 test suite passes to the receipt and improvement schemas,
with the reference's verdict and digest (``tests/golden``), as fixtures for the rule tests."""

from __future__ import annotations

import copy
import gzip
import json
from functools import cache
from pathlib import Path
from typing import Any

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
FILES = ("candidate-receipts-reference.jsonl.gz", "reference-1.6.0-documents.jsonl.gz")


@cache
def documents() -> tuple[dict[str, Any], ...]:
    rows: list[dict[str, Any]] = []
    for name in FILES:
        with gzip.open(GOLDEN / name, "rt", encoding="utf-8") as handle:
            rows.extend(json.loads(line) for line in handle)
    return tuple(rows)


def accepted(schema: str, predicate: Any = None) -> dict[str, Any]:
    """A fresh copy of the first document of ``schema`` the reference accepts."""
    for row in documents():
        if row["schema"] == schema and row["ok"] and (predicate is None or predicate(row["value"])):
            value: dict[str, Any] = copy.deepcopy(row["value"])
            return value
    raise LookupError(schema)


def sha(digit: str) -> str:
    return "sha256:" + digit * 64
