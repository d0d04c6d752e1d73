"""Frozen execution limits: reaching a limit is allowed, exceeding one is refused, and
``maxTotalTokens`` bounds accounted input plus output tokens for one arm
(cases of the reference's ``agent-execution-limits.test.ts``)."""

from __future__ import annotations

from typing import Any

import pytest

from agent_interface.candidate.limits import (
    AgentExecutionLimitObservation,
    assert_agent_execution_within_limits,
    refine_agent_execution_within_limits,
)
from agent_interface.candidate.task_terms import AgentCandidateExecutionLimits
from agent_interface.core.errors import ContractError, Refinement

LIMITS: dict[str, Any] = {
    "timeoutMs": 100,
    "maxSteps": 3,
    "maxModelCalls": 2,
    "maxInputTokens": 10,
    "maxOutputTokens": 8,
    "maxTotalTokens": 18,
    "maxCostUsd": 0.000000005,
}


def observation(**usage: Any) -> dict[str, Any]:
    return {
        "durationMs": 100,
        "steps": 3,
        "usage": {
            "inputTokens": 10,
            "outputTokens": 8,
            "cachedInputTokens": 0,
            "reasoningTokens": 0,
            "modelCalls": 2,
            "costUsdNanos": 5,
            "costProvenance": "observed",
            **usage,
        },
    }


def test_accepts_execution_facts_exactly_at_every_limit() -> None:
    assert_agent_execution_within_limits(LIMITS, observation())
    assert_agent_execution_within_limits(
        AgentCandidateExecutionLimits.parse_wire(LIMITS),
        AgentExecutionLimitObservation.parse_wire(observation()),
    )


def test_accepts_an_exact_nanodollar_limit_despite_binary_rounding() -> None:
    assert_agent_execution_within_limits(
        {**LIMITS, "maxCostUsd": 0.000000015}, observation(costUsdNanos=15)
    )


def test_does_not_round_a_fractional_nanodollar_limit_up() -> None:
    with pytest.raises(ContractError, match="costUsd"):
        assert_agent_execution_within_limits(
            {**LIMITS, "maxCostUsd": 0.0000000146}, observation(costUsdNanos=15)
        )


def test_total_tokens_bound_accounted_input_plus_output() -> None:
    with pytest.raises(ContractError, match="totalTokens") as error:
        assert_agent_execution_within_limits({**LIMITS, "maxTotalTokens": 17}, observation())
    assert [issue.path for issue in error.value.issues] == ["/usage/totalTokens"]
    assert error.value.issues[0].code == "execution_limit_exceeded"


def test_older_limit_records_need_no_aggregate_limit() -> None:
    legacy = {key: value for key, value in LIMITS.items() if key != "maxTotalTokens"}
    assert_agent_execution_within_limits(legacy, observation(inputTokens=10, outputTokens=8))


@pytest.mark.parametrize(
    ("label", "change"),
    [
        ("durationMs", {"durationMs": 101}),
        ("steps", {"steps": 4}),
        ("modelCalls", {"usage": {"modelCalls": 3}}),
        ("inputTokens", {"usage": {"inputTokens": 11}}),
        ("outputTokens", {"usage": {"outputTokens": 9}}),
        ("totalTokens", {"usage": {"inputTokens": 10, "outputTokens": 9}}),
        ("costUsd", {"usage": {"costUsdNanos": 6}}),
    ],
)
def test_refuses_each_value_above_its_limit(label: str, change: dict[str, Any]) -> None:
    value = observation(**change.get("usage", {}))
    value.update({key: item for key, item in change.items() if key != "usage"})
    with pytest.raises(ContractError, match=label):
        assert_agent_execution_within_limits(LIMITS, value)


def test_refuses_malformed_limits_and_observations() -> None:
    with pytest.raises(ContractError):
        assert_agent_execution_within_limits({**LIMITS, "maxSteps": 0}, observation())
    with pytest.raises(ContractError):
        assert_agent_execution_within_limits(LIMITS, {**observation(), "steps": -1})


def test_refinement_reports_usage_at_the_enclosing_record_path() -> None:
    issues = Refinement("CandidateExecutionEvidence")
    refine_agent_execution_within_limits(
        AgentCandidateExecutionLimits.parse_wire({**LIMITS, "maxInputTokens": 9, "maxSteps": 2}),
        AgentExecutionLimitObservation.parse_wire(observation()),
        issues,
        path_prefix=("receipt",),
        usage_path=("modelSettlement", "material", "usage"),
    )
    with pytest.raises(Exception) as error:
        issues.check()
    locations = {tuple(item["loc"]) for item in error.value.errors()}  # type: ignore[attr-defined]
    assert locations == {
        ("receipt", "steps"),
        ("receipt", "modelSettlement", "material", "usage", "inputTokens"),
    }

