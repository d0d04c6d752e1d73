"""AgentExecutionError and its immutable receipt (spec: "An adapter can reject with
AgentExecutionError and retain observed usage and timing in its immutable receipt.")."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic import ValidationError

from agent_interface.core.errors import ContractError
from agent_interface.environment.execution_errors import (
    AgentExecutionError,
    AgentExecutionFailureReceipt,
    AgentExecutionFailureRecord,
    ObservedTokenUsage,
    execution_failure_receipt,
    publish_failed_execution,
)
from agent_interface.runtime.usage import TokenUsage


def test_keeps_observed_usage_without_claiming_success() -> None:
    error = AgentExecutionError(
        "tool permission denied",
        {
            "tokenUsage": {"inputTokens": 19965, "outputTokens": 747, "cacheReadInputTokens": 29696},
            "timing": {"startedAt": 100, "completedAt": 300, "durationMs": 200},
        },
    )
    assert isinstance(error, Exception)
    assert str(error) == "tool permission denied"
    assert error.receipt.to_wire() == {
        "tokenUsage": {"inputTokens": 19965, "outputTokens": 747, "cacheReadInputTokens": 29696},
        "timing": {"startedAt": 100.0, "completedAt": 300.0, "durationMs": 200.0},
    }
    assert "outcome" not in error.receipt.to_wire()
    assert "cost" not in error.receipt.to_wire()["tokenUsage"]


def test_absent_fields_stay_unknown_never_zero() -> None:
    error = AgentExecutionError("could not start", {})
    assert error.receipt.to_wire() == {}
    assert error.receipt.token_usage is None
    partial = AgentExecutionError("interrupted", {"tokenUsage": {"outputTokens": 3}})
    assert partial.receipt.to_wire() == {"tokenUsage": {"outputTokens": 3}}
    assert partial.receipt.token_usage is not None
    assert partial.receipt.token_usage.input_tokens is None


def test_receipt_is_a_detached_immutable_snapshot() -> None:
    usage: dict[str, Any] = {"inputTokens": 12}
    receipt: dict[str, Any] = {"tokenUsage": usage}
    error = AgentExecutionError("interrupted", receipt)
    usage["inputTokens"] = 99
    receipt["timing"] = {"startedAt": 0, "completedAt": 0, "durationMs": 0}
    assert error.receipt.to_wire() == {"tokenUsage": {"inputTokens": 12}}
    with pytest.raises(ValidationError):
        error.receipt.token_usage = None  # type: ignore[misc]
    assert error.receipt.token_usage is not None
    with pytest.raises(ValidationError):
        error.receipt.token_usage.input_tokens = 1  # type: ignore[misc]


def test_cause_is_kept() -> None:
    cause = OSError("ENOENT")
    error = AgentExecutionError("could not start", {}, cause=cause)
    assert error.__cause__ is cause


@pytest.mark.parametrize("bad", [-1, float("nan"), float("inf"), 1.5, True, "1"])
def test_invalid_observed_counts_are_refused(bad: Any) -> None:
    with pytest.raises(ContractError) as caught:
        AgentExecutionError("failed", {"tokenUsage": {"inputTokens": bad}})
    assert caught.value.issues[0].path == "/tokenUsage/inputTokens"


def test_refusals_of_unknown_fields_and_bad_timing() -> None:
    with pytest.raises(ContractError) as caught:
        AgentExecutionError("failed", {"outcome": "success"})
    assert [(i.path, i.code) for i in caught.value.issues] == [("/outcome", "extra_forbidden")]
    with pytest.raises(ContractError) as caught:
        AgentExecutionError("failed", {"timing": {"startedAt": 1, "completedAt": 2}})
    assert [(i.path, i.code) for i in caught.value.issues] == [("/timing/durationMs", "missing")]
    with pytest.raises(ContractError) as caught:
        AgentExecutionError("failed", {"timing": {"startedAt": -1, "completedAt": 2, "durationMs": 3}})
    assert caught.value.issues[0].path == "/timing/startedAt"


def test_observed_usage_is_token_usage_made_partial() -> None:
    assert {f.alias for f in ObservedTokenUsage.model_fields.values()} == {
        f.alias for f in TokenUsage.model_fields.values()
    }
    assert all(not f.is_required() for f in ObservedTokenUsage.model_fields.values())


def test_host_publishes_a_failure_with_the_receipt() -> None:
    adapter_error = AgentExecutionError("quota", {"tokenUsage": {"inputTokens": 5}})
    try:
        try:
            raise adapter_error
        except AgentExecutionError as inner:
            raise RuntimeError("turn failed") from inner
    except RuntimeError as wrapped:
        record = publish_failed_execution(wrapped)
    assert record.to_wire() == {
        "status": "failed",
        "error": "turn failed",
        "accounting": "lower-bound",
        "receipt": {"tokenUsage": {"inputTokens": 5}},
    }
    assert record.receipt is adapter_error.receipt
    assert AgentExecutionFailureRecord.parse_wire(record.to_wire()) == record


def test_cancelled_stays_distinct_and_keeps_the_receipt() -> None:
    adapter_error = AgentExecutionError("stopped", {"timing": {"startedAt": 1, "completedAt": 2, "durationMs": 1}})
    cancelled = asyncio.CancelledError()
    cancelled.__context__ = adapter_error
    record = publish_failed_execution(cancelled)
    assert record.status == "cancelled"
    assert record.receipt == adapter_error.receipt
    assert publish_failed_execution(adapter_error, status="cancelled").status == "cancelled"
    with pytest.raises(ContractError):
        publish_failed_execution(adapter_error, status="completed")  # type: ignore[arg-type]


def test_no_receipt_means_unknown_usage() -> None:
    assert execution_failure_receipt(ValueError("x")) is None
    record = publish_failed_execution(ValueError("boom"))
    assert record.receipt == AgentExecutionFailureReceipt()
    assert record.receipt.to_wire() == {}
    group = ExceptionGroup("many", [ValueError("a"), AgentExecutionError("b", {"tokenUsage": {"outputTokens": 1}})])
    found = execution_failure_receipt(group)
    assert found is not None and found.to_wire() == {"tokenUsage": {"outputTokens": 1}}
