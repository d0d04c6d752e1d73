"""Every document the reference 1.6.0 test suite passes to its exported schemas (plus
deterministic mutations) gets the reference's verdict here, and accepted documents the
reference's RFC 8785 digest of its parsed output.

The lines come from ``tests/golden/reference-1.6.0-documents.jsonl.gz``; a schema is checked
once it is registered, so each family's lines start counting the moment it lands.
"""

from __future__ import annotations

import gzip
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from agent_interface.core.canonical import canonical_digest
from agent_interface.core.errors import CanonicalJsonError, ContractError
from agent_interface.core.registry import wire_schemas

GOLDEN = Path(__file__).resolve().parent / "golden" / "reference-1.6.0-documents.jsonl.gz"


def _lines() -> dict[str, list[dict[str, Any]]]:
    by_schema: dict[str, list[dict[str, Any]]] = defaultdict(list)
    with gzip.open(GOLDEN, "rt", encoding="utf-8") as handle:
        for line in handle:
            case = json.loads(line)
            by_schema[case["schema"]].append(case)
    return by_schema


LINES = _lines()
SCHEMAS = wire_schemas()
CHECKED = sorted(name for name in LINES if name in SCHEMAS)

# Known disagreements, each with the issue that owns it; strict, so a fix must remove it.
KNOWN: dict[str, str] = {}


def verdict(name: str, value: Any) -> tuple[bool, str | None]:
    """The package's verdict and digest for one document, as the golden lines record them."""
    adapter = SCHEMAS[name]
    try:
        parsed = adapter.parse_value(value)
    except ContractError:
        return False, None
    try:
        return True, canonical_digest(adapter.to_wire(parsed))
    except CanonicalJsonError:
        return True, None


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(name, marks=pytest.mark.xfail(reason=KNOWN[name], strict=True))
        if name in KNOWN
        else name
        for name in CHECKED
    ],
)
def test_schema_agrees_with_reference(name: str) -> None:
    disagreements = []
    for index, case in enumerate(LINES[name]):
        ok, digest = verdict(name, case["value"])
        if ok != case["ok"] or (ok and digest != case["digest"]):
            disagreements.append((index, case["ok"], ok, case.get("paths"), case["digest"], digest))
    assert not disagreements, f"{len(disagreements)} of {len(LINES[name])}: {disagreements[:5]}"


def test_every_schema_of_the_reference_documents_is_registered() -> None:
    assert sorted(name for name in LINES if name not in SCHEMAS) == []
