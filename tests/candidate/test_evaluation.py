"""The frozen evaluation policy of an experiment."""

from __future__ import annotations

from typing import Any

import pytest

from agent_interface.candidate.evaluation import AgentCandidateEvaluationPolicy
from agent_interface.core.errors import ContractError


def policy(**changes: Any) -> dict[str, Any]:
    value: dict[str, Any] = {
        "confidenceLevel": 0.95,
        "resamples": 2_000,
        "bootstrapSeed": 1_337,
        "deltaThreshold": 0,
        "minProductiveRuns": 3,
        "budgetUsd": 10,
        "criticalDimensions": ["lint", "tests"],
        "regressionTolerance": 0.05,
    }
    value.update(changes)
    return value


def test_accepts_a_complete_policy_and_keeps_its_wire_form() -> None:
    parsed = AgentCandidateEvaluationPolicy.parse_wire(policy())
    assert parsed.to_wire() == policy()


def test_budget_is_optional() -> None:
    value = policy()
    del value["budgetUsd"]
    assert AgentCandidateEvaluationPolicy.parse_wire(value).budget_usd is None


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("confidenceLevel", 1),
        ("confidenceLevel", 0),
        ("resamples", 99),
        ("minProductiveRuns", 2),
        ("deltaThreshold", -0.1),
        ("bootstrapSeed", 2**53),
        ("budgetUsd", None),
    ],
)
def test_refuses_out_of_range_statistics(field: str, value: Any) -> None:
    with pytest.raises(ContractError):
        AgentCandidateEvaluationPolicy.parse_wire(policy(**{field: value}))


@pytest.mark.parametrize("dimensions", [["tests", "lint"], ["lint", "lint"]])
def test_critical_dimensions_must_be_sorted_and_unique(dimensions: list[str]) -> None:
    with pytest.raises(ContractError) as refused:
        AgentCandidateEvaluationPolicy.parse_wire(policy(criticalDimensions=dimensions))
    assert [issue.path for issue in refused.value.issues] == ["/criticalDimensions"]
    assert refused.value.issues[0].code == "critical_dimensions_order"


def test_critical_dimensions_sort_by_utf16_code_units() -> None:
    # U+1F600 sorts after U+FF5E by code point but before it by UTF-16 code unit.
    AgentCandidateEvaluationPolicy.parse_wire(policy(criticalDimensions=["\U0001f600", "\uff5e"]))
    with pytest.raises(ContractError):
        AgentCandidateEvaluationPolicy.parse_wire(policy(criticalDimensions=["\uff5e", "\U0001f600"]))
