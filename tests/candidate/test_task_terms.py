"""Task terms: resolved model, grader, repository, task container, limits and result shape."""

from __future__ import annotations

from typing import Any

import pytest

from agent_interface.candidate.task_terms import (
    AgentCandidateBenchmarkGraderIdentity,
    AgentCandidateExecutionLimits,
    AgentCandidateResolvedModel,
    AgentCandidateResolvedTaskContainer,
    AgentCandidateRetryPolicy,
    AgentCandidateTaskOutcomeSpec,
    AgentCandidateTaskRepository,
)
from agent_interface.core.canonical import canonical_digest
from agent_interface.core.errors import ContractError
from agent_interface.core.model import wire_adapter
from agent_interface.core.registry import wire_schema
from tests.candidate.plan_fixtures import LIMITS, RESOLVED, task


def issues(tp: Any, data: Any) -> list[tuple[str, str]]:
    with pytest.raises(ContractError) as caught:
        wire_adapter(tp).parse(data)
    return [(issue.path, issue.code) for issue in caught.value.issues]


def test_limits_accept_the_aggregate_token_ceiling() -> None:
    parsed = AgentCandidateExecutionLimits.parse_wire(LIMITS)
    assert parsed.max_total_tokens == 120_000
    without = {key: value for key, value in LIMITS.items() if key != "maxTotalTokens"}
    assert AgentCandidateExecutionLimits.parse_wire(without).to_wire() == without
    assert AgentCandidateExecutionLimits.parse_wire({**LIMITS, "maxTotalTokens": 2**53 - 1})


@pytest.mark.parametrize(
    ("value", "code"), [(-1, "greater_than_equal"), (1.5, "int_type"), (2**53, "less_than_equal"), ("1", "int_type")]
)
def test_limits_refuse_invalid_aggregate_tokens(value: Any, code: str) -> None:
    assert issues(AgentCandidateExecutionLimits, {**LIMITS, "maxTotalTokens": value}) == [("/maxTotalTokens", code)]


def test_limits_refuse_unknown_and_non_positive_fields() -> None:
    assert issues(AgentCandidateExecutionLimits, {**LIMITS, "maxAggregateTokens": 1}) == [
        ("/maxAggregateTokens", "extra_forbidden")
    ]
    assert issues(AgentCandidateExecutionLimits, {**LIMITS, "timeoutMs": 0}) == [("/timeoutMs", "greater_than_equal")]
    assert issues(AgentCandidateExecutionLimits, {**LIMITS, "maxSteps": True}) == [("/maxSteps", "int_type")]
    assert ("/maxCostUsd", "greater_than_equal") in issues(AgentCandidateExecutionLimits, {**LIMITS, "maxCostUsd": -0.5})


def test_limits_numbers_digest_as_javascript_numbers() -> None:
    parsed = AgentCandidateExecutionLimits.parse_wire({**LIMITS, "maxSteps": 50.0, "maxCostUsd": 5.0})
    assert parsed.max_steps == 50
    assert canonical_digest(parsed.to_wire()) == canonical_digest(LIMITS)
    assert AgentCandidateExecutionLimits.parse_wire({**LIMITS, "maxCostUsd": 0.1}).max_cost_usd == 0.1


def test_resolved_model_needs_every_identity_part() -> None:
    assert AgentCandidateResolvedModel.parse_wire(RESOLVED).to_wire() == RESOLVED
    for field in RESOLVED:
        partial = {key: value for key, value in RESOLVED.items() if key != field}
        assert issues(AgentCandidateResolvedModel, partial) == [(f"/{field}", "missing")]
    assert issues(AgentCandidateResolvedModel, {**RESOLVED, "provider": ""}) == [("/provider", "string_too_short")]
    assert issues(AgentCandidateResolvedModel, {**RESOLVED, "reasoningEffort": "max"}) == [
        ("/reasoningEffort", "literal_error")
    ]


def test_grader_artifact_must_hold_bytes() -> None:
    grader = task()["grader"]
    assert AgentCandidateBenchmarkGraderIdentity.parse_wire(grader)
    empty = {**grader, "artifact": {**grader["artifact"], "byteLength": 0}}
    assert issues(AgentCandidateBenchmarkGraderIdentity, empty) == [("/artifact/byteLength", "empty_grader_artifact")]
    assert issues(AgentCandidateBenchmarkGraderIdentity, {**grader, "format": "python"}) == [("/format", "literal_error")]


def test_repository_identity_bounds_and_object_format() -> None:
    repository = {"identity": "o/r", "rootIdentity": "o/r", "baseCommit": "a" * 40, "baseTree": "b" * 40}
    assert AgentCandidateTaskRepository.parse_wire(repository)
    assert issues(AgentCandidateTaskRepository, {**repository, "identity": "x" * 513}) == [
        ("/identity", "string_too_long")
    ]
    assert issues(AgentCandidateTaskRepository, {**repository, "baseTree": "b" * 64}) == [("", "git_object_format")]
    assert issues(AgentCandidateTaskRepository, {**repository, "baseTree": "B" * 40}) == [
        ("/baseTree", "string_pattern_mismatch")
    ]


def test_task_container_pins_index_manifest_and_platform() -> None:
    container = task()["evaluatorTaskContainer"]
    assert AgentCandidateResolvedTaskContainer.parse_wire(container).to_wire() == container
    with_variant = {**container, "platform": {**container["platform"], "variant": "v8"}}
    assert AgentCandidateResolvedTaskContainer.parse_wire(with_variant)
    assert issues(AgentCandidateResolvedTaskContainer, {**container, "platform": {"os": "linux"}}) == [
        ("/platform/architecture", "missing")
    ]
    assert issues(AgentCandidateResolvedTaskContainer, {**container, "platform": {**container["platform"], "os": "x" * 101}}) == [
        ("/platform/os", "string_too_long")
    ]
    assert issues(AgentCandidateResolvedTaskContainer, {**container, "image": "user:pass@registry.example.com/x"}) == [
        ("/image", "unsafe_oci_image")
    ]


def test_outcome_spec_and_retry_policy_are_closed() -> None:
    spec = wire_adapter(AgentCandidateTaskOutcomeSpec)
    assert spec.to_wire(spec.parse({"kind": "workspace"})) == {"kind": "workspace"}
    assert issues(AgentCandidateTaskOutcomeSpec, {"kind": "workspace", "maxBytes": 1}) == [("/maxBytes", "extra_forbidden")]
    assert issues(AgentCandidateTaskOutcomeSpec, {"kind": "output", "mediaType": "text/plain", "maxBytes": 0}) == [
        ("/maxBytes", "greater_than_equal")
    ]
    assert issues(AgentCandidateTaskOutcomeSpec, {"kind": "patch"}) == [("/kind", "union_tag_invalid")]
    assert wire_schema("AgentCandidateRetryPolicy").parse_value("none") == "none"
    with pytest.raises(ContractError) as caught:
        wire_adapter(AgentCandidateRetryPolicy).parse_value("always")
    assert caught.value.issues[0].code == "literal_error"
