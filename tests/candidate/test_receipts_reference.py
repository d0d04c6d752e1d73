"""Replays ``tests/golden/candidate-receipts-reference.jsonl.gz``: the documents the reference
1.6.0 test suites of the outcome, receipt, limit, profile-improvement and promotion schemas
pass to those schemas (and the records nested in the accepted ones), each with the
reference's verdict and RFC 8785 digest, plus the reference's verdicts on deterministic
mutations of those (a key removed or added, a value of the wrong type, a lone surrogate, a
control character, an overlong string, an unsafe, negative or fractional number; half of them
re-signed so digest-verified records reach their other rules). Covers schemas the shared
conformance file lacks (settlement calls, repository states, terminations, memory and trace
evidence, profile improvement tasks, suites, experiments, run cells and receipts)."""

from __future__ import annotations

import gzip
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from agent_interface.core.registry import wire_schemas
from tests.test_reference_conformance import verdict

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "candidate-receipts-reference.jsonl.gz"


def _lines() -> dict[str, list[dict[str, Any]]]:
    by_schema: dict[str, list[dict[str, Any]]] = defaultdict(list)
    with gzip.open(GOLDEN, "rt", encoding="utf-8") as handle:
        for line in handle:
            case = json.loads(line)
            by_schema[case["schema"]].append(case)
    return by_schema


LINES = _lines()
CHECKED = sorted(name for name in LINES if name in wire_schemas())


@pytest.mark.parametrize("name", CHECKED)
def test_schema_agrees_with_reference_test_documents(name: str) -> None:
    disagreements = []
    for index, case in enumerate(LINES[name]):
        ok, digest = verdict(name, case["value"])
        if ok != case["ok"] or (ok and digest != case["digest"]):
            disagreements.append((index, case["ok"], ok))
    assert not disagreements, f"{len(disagreements)} of {len(LINES[name])}: {disagreements[:5]}"
