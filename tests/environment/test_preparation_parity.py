"""Recorded answers of the reference 1.6.0's buildAgentExecutionPreparationReceipt for generated
authored/effective profile pairs and coverage rows (kept, overridden, unsupported, dropped,
pathless, shuffled): the same receipt, or a refusal with the same issue codes."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

from agent_interface.core.canonical import canonical_json
from agent_interface.environment.preparation import (
    AgentExecutionPreparationValidationError,
    build_agent_execution_preparation_receipt,
)
from agent_interface.environment.workspace_lease import build_agent_workspace_lease_record

GOLDEN = (
    Path(__file__).resolve().parent.parent / "golden" / "reference-1.6.0-preparation-builds.jsonl.gz"
)


def build(given: dict[str, Any]) -> tuple[bool, Any]:
    try:
        receipt = build_agent_execution_preparation_receipt(
            preparation_id=given["preparationId"],
            request_digest=given["requestDigest"],
            authored_profile=given["authoredProfile"],
            effective_profile=given["effectiveProfile"],
            backend=given["backend"],
            harness=given["harness"],
            harness_version=given["harnessVersion"],
            resolved_model=given["resolvedModel"],
            workspace_lease=build_agent_workspace_lease_record(given["workspaceLease"]),
            profile_activation=given["profileActivation"],
            axis_results=given["axisResults"],
            execution_plan_digest=given["executionPlanDigest"],
            materializer=given["materializer"],
            expires_at_ms=given["expiresAtMs"],
            now_ms=given["nowMs"],
        )
    except AgentExecutionPreparationValidationError as error:
        return False, sorted({issue.code for issue in error.issues})
    return True, receipt.to_wire()


def test_builds_agree_with_the_reference() -> None:
    with gzip.open(GOLDEN, "rt", encoding="utf-8") as handle:
        cases = [json.loads(line) for line in handle]
    assert len(cases) >= 500 and any(c["ok"] for c in cases) and not all(c["ok"] for c in cases)
    disagreements = []
    for case in cases:
        ok, value = build(case["input"])
        expected = case["receipt"] if case["ok"] else case["codes"]
        if ok != case["ok"] or canonical_json(value) != canonical_json(expected):
            disagreements.append(case)
    assert disagreements == [], f"{len(disagreements)} of {len(cases)}: {disagreements[:1]}"
