"""Replay the reference's verdicts for task, run-cell, profile-plan and execution-plan documents.

``tests/golden/candidate-plans-reference-1.6.0.jsonl.gz`` was recorded from the reference
1.6.0 (zod 4.4.3): valid documents modelled on its test fixtures, every path deleted,
retyped or set to edge values (empty, traversal, lone surrogates, unsafe integers, unsorted
and duplicate lists, private gateway hosts, overlapping roots). Each line is
``{"schema", "value", "ok", "digest", "paths"}`` as in the shared conformance file: an
accepted document must give the same RFC 8785 digest; a refused one must be refused with
an issue on, above or below one of the reference's first issue paths.
"""

from __future__ import annotations

import gzip
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from agent_interface.core.canonical import canonical_digest
from agent_interface.core.errors import CanonicalJsonError, ContractError, json_pointer
from agent_interface.core.registry import wire_schemas

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "candidate-plans-reference-1.6.0.jsonl.gz"


def _lines() -> dict[str, list[dict[str, Any]]]:
    by_schema: dict[str, list[dict[str, Any]]] = defaultdict(list)
    with gzip.open(GOLDEN, "rt", encoding="utf-8") as handle:
        for line in handle:
            case = json.loads(line)
            by_schema[case["schema"]].append(case)
    return by_schema


LINES = _lines()
SCHEMAS = wire_schemas()


def _related(left: str, right: str) -> bool:
    return left.startswith(right) or right.startswith(left)


def test_every_recorded_schema_is_registered() -> None:
    assert set(LINES) <= set(SCHEMAS)
    assert len(LINES) >= 20
    for cases in LINES.values():
        assert any(case["ok"] for case in cases)


@pytest.mark.parametrize("name", sorted(LINES))
def test_schema_agrees_with_reference(name: str) -> None:
    adapter = SCHEMAS[name]
    disagreements = []
    for index, case in enumerate(LINES[name]):
        try:
            parsed = adapter.parse_value(case["value"])
        except ContractError as error:
            ours = [issue.path for issue in error.issues]
            theirs = [json_pointer(path) for path in case["paths"] or []]
            if case["ok"] or (theirs and not any(_related(o, t) for o in ours for t in theirs)):
                disagreements.append((index, case["ok"], ours, theirs))
            continue
        try:
            digest: str | None = canonical_digest(adapter.to_wire(parsed))
        except CanonicalJsonError:
            digest = None
        if not case["ok"] or digest != case["digest"]:
            disagreements.append((index, case["ok"], digest, case["digest"]))
    assert not disagreements, f"{len(disagreements)} of {len(LINES[name])}: {disagreements[:5]}"
