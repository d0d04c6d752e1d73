"""Durable plan contract (plan.ts)."""

from __future__ import annotations

from typing import Any

import pytest

from agent_interface.core.errors import ContractError
from agent_interface.core.model import wire_adapter
from agent_interface.runtime.plan import (
    AgentExecutionOutcome,
    DurablePlan,
    PlanContinuation,
    PlanDecision,
    PlanProviderState,
    PlanSubmission,
)

CODEX = {"kind": "codex", "version": 1, "threadId": "thread-1"}
PLAN = {
    "id": "plan-1",
    "revision": 1,
    "body": "Implement the approved design",
    "submittedAt": "2026-07-10T00:00:00.000Z",
}


def refusal(tp: Any, data: Any) -> list[tuple[str, str]]:
    with pytest.raises(ContractError) as caught:
        wire_adapter(tp).parse(data)
    return [(issue.path, issue.code) for issue in caught.value.issues]


def test_submission_requires_non_blank_body() -> None:
    ok = PlanSubmission.parse_wire({"body": "Plan", "sourceToolCallId": "tool-1", "providerState": CODEX})
    assert ok.body == "Plan"
    assert ("/body", "string_too_short") in refusal(
        PlanSubmission, {"body": " ", "sourceToolCallId": "tool-1", "providerState": CODEX}
    )


def test_trimmed_strings_are_stored_trimmed() -> None:
    parsed = PlanSubmission.parse_wire(
        {"title": "  T ", "body": "\u00a0Plan\n", "sourceToolCallId": "tool-1", "providerState": CODEX}
    )
    assert parsed.to_wire()["title"] == "T"
    assert parsed.body == "Plan"


def test_provider_state_is_closed() -> None:
    for state in (
        CODEX,
        {"kind": "claude-code", "version": 1, "nativeSessionId": "s"},
        {"kind": "opencode", "version": 1},
    ):
        assert wire_adapter(PlanProviderState).to_wire(wire_adapter(PlanProviderState).parse(state)) == state
    assert refusal(PlanProviderState, {"kind": "factory-droids", "version": 1})[0][1] == "union_tag_invalid"
    assert ("/version", "literal_error") in refusal(PlanProviderState, {**CODEX, "version": 2})
    assert ("/version", "literal_error") in refusal(PlanProviderState, {**CODEX, "version": True})
    assert ("/threadId", "string_too_short") in refusal(PlanProviderState, {**CODEX, "threadId": ""})
    assert ("/extra", "extra_forbidden") in refusal(PlanProviderState, {**CODEX, "extra": 1})


def test_rejected_decision_needs_feedback() -> None:
    assert wire_adapter(PlanDecision).parse({"outcome": "approved"}).outcome == "approved"
    assert ("/feedback", "string_too_short") in refusal(PlanDecision, {"outcome": "rejected", "feedback": " "})
    assert ("/feedback", "missing") in refusal(PlanDecision, {"outcome": "rejected"})


def test_continuation_and_outcome() -> None:
    continuation = PlanContinuation.parse_wire(
        {"version": 1, "plan": PLAN, "sourceToolCallId": "tool-1", "decision": {"outcome": "approved"}, "providerState": CODEX}
    )
    assert continuation.decision.outcome == "approved"
    assert ("/decision/feedback", "string_too_short") in refusal(
        PlanContinuation,
        {"version": 1, "plan": PLAN, "sourceToolCallId": "tool-1", "decision": {"outcome": "rejected", "feedback": " "}, "providerState": CODEX},
    )
    outcome = wire_adapter(AgentExecutionOutcome).parse({"type": "awaiting_plan_decision", "plan": PLAN})
    assert outcome.plan.id == "plan-1"
    assert wire_adapter(AgentExecutionOutcome).parse({"type": "completed"}).type == "completed"
    assert ("/plan", "missing") in refusal(AgentExecutionOutcome, {"type": "awaiting_plan_decision"})


@pytest.mark.parametrize(
    "stamp",
    [
        "2026-07-10T00:00:00Z",
        "2026-07-10T00:00:00.5+02:00",
        "2024-02-29T23:59:59-11:30",
        "2026-07-10T00:00Z",  # zod 4.4.3 (pinned by the reference) makes seconds optional
        "2026-07-10T00:00+02:00",
    ],
)
def test_plan_timestamp_accepts_offsets(stamp: str) -> None:
    assert DurablePlan.parse_wire({**PLAN, "submittedAt": stamp}).submitted_at == stamp


@pytest.mark.parametrize("stamp", ["2026-07-10", "2026-07-10T00Z", "2025-02-29T00:00:00Z", "2026-07-10T00:00:00+24:00", "2026-07-10T00:00:00Z\n"])
def test_plan_timestamp_refuses_malformed(stamp: str) -> None:
    assert ("/submittedAt", "iso_datetime") in refusal(DurablePlan, {**PLAN, "submittedAt": stamp})


@pytest.mark.parametrize("revision", [0, -1, 1.5, True, "1"])
def test_plan_revision_is_positive_int(revision: Any) -> None:
    assert refusal(DurablePlan, {**PLAN, "revision": revision})[0][0] == "/revision"


def test_plan_revision_integral_float_reads_as_int() -> None:
    assert DurablePlan.parse_wire(b'{"id":"p","revision":2.0,"body":"b","submittedAt":"2026-07-10T00:00:00Z"}').revision == 2
