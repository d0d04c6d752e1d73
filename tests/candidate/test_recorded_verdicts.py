"""Replay verdicts recorded from the reference 1.6.0 build for mutated candidate documents
and SPDX expressions (recorded once with the reference's own parser; see
docs/parity/candidate.md)."""

from __future__ import annotations

import gzip
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from agent_interface.candidate.spdx import is_spdx_expression
from agent_interface.core.canonical import canonical_digest
from agent_interface.core.errors import CanonicalJsonError, ContractError
from agent_interface.core.registry import wire_schema

GOLDEN = Path(__file__).resolve().parents[1] / "golden"


def _documents() -> dict[str, list[dict[str, Any]]]:
    by_schema: dict[str, list[dict[str, Any]]] = defaultdict(list)
    with gzip.open(GOLDEN / "candidate-reference-verdicts.jsonl.gz", "rt", encoding="utf-8") as handle:
        for line in handle:
            case = json.loads(line)
            by_schema[case["schema"]].append(case)
    return by_schema


DOCUMENTS = _documents()


def _verdict(name: str, value: Any) -> tuple[bool, str | None]:
    adapter = wire_schema(name)
    try:
        parsed = adapter.parse_value(value)
    except ContractError:
        return False, None
    try:
        return True, canonical_digest(adapter.to_wire(parsed))
    except CanonicalJsonError:
        return True, None


@pytest.mark.parametrize("name", sorted(DOCUMENTS))
def test_recorded_document_verdicts(name: str) -> None:
    wrong = [
        (index, case["ok"])
        for index, case in enumerate(DOCUMENTS[name])
        if _verdict(name, case["value"]) != (case["ok"], case["digest"])
    ]
    assert not wrong, f"{len(wrong)} of {len(DOCUMENTS[name])}: {wrong[:5]}"


def test_recorded_spdx_verdicts() -> None:
    with gzip.open(GOLDEN / "spdx-reference-verdicts.jsonl.gz", "rt", encoding="utf-8") as handle:
        cases = [json.loads(line) for line in handle]
    wrong = [case["expression"] for case in cases if is_spdx_expression(case["expression"]) != case["standard"]]
    assert not wrong, wrong[:10]
