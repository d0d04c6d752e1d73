"""Settlement, task outcome and benchmark result records: one accepted and one refused
example per rule, and the cases of the reference's ``agent-candidate-outcome-schema.test.ts``."""

from __future__ import annotations

from typing import Any

import pytest

from agent_interface.candidate.outcomes import (
    AgentCandidateBenchmarkDimension,
    AgentCandidateBenchmarkResultEvidence,
    AgentCandidateBenchmarkResultMaterial,
    AgentCandidateFixedSpend,
    AgentCandidateModelSettlementCall,
    AgentCandidateModelSettlementEvidence,
    AgentCandidateModelSettlementMaterial,
    AgentCandidateRepositoryState,
    AgentCandidateTaskOutcomeEvidence,
    AgentCandidateTaskOutcomeMaterial,
)
from agent_interface.core.canonical import canonical_digest
from agent_interface.core.errors import ContractError
from tests.candidate.reference_documents import accepted, sha

MAX_SAFE = 2**53 - 1


def receipt() -> dict[str, Any]:
    return accepted("AgentCandidateRunReceipt")


def settlement() -> dict[str, Any]:
    material: dict[str, Any] = receipt()["modelSettlement"]["material"]
    return material


def refused(model: Any, value: Any) -> ContractError:
    with pytest.raises(ContractError) as error:
        model.parse_wire(value)
    return error.value


def codes(error: ContractError) -> set[str]:
    return {issue.code for issue in error.issues}


def paths(error: ContractError) -> set[str]:
    return {issue.path for issue in error.issues}


# -- fixed spend -------------------------------------------------------------------------------


def test_fixed_spend_is_exact_nonnegative_safe_integers() -> None:
    usage = settlement()["usage"]
    assert AgentCandidateFixedSpend.parse_wire(usage).to_wire() == usage
    refused(AgentCandidateFixedSpend, {**usage, "inputTokens": MAX_SAFE + 1})
    refused(AgentCandidateFixedSpend, {**usage, "costUsdNanos": 1.5})
    refused(AgentCandidateFixedSpend, {**usage, "outputTokens": -1})
    refused(AgentCandidateFixedSpend, {**usage, "costProvenance": "guessed"})
    refused(AgentCandidateFixedSpend, {**usage, "unexpected": True})


# -- router settlement -------------------------------------------------------------------------


def test_settlement_keeps_the_router_verdict_on_usage_within_limits() -> None:
    current = settlement()
    assert AgentCandidateModelSettlementMaterial.parse_wire(current).to_wire() == current
    over = AgentCandidateModelSettlementMaterial.parse_wire({**current, "usageWithinLimits": False})
    assert over.usage_within_limits is False
    del current["usageWithinLimits"]
    refused(AgentCandidateModelSettlementMaterial, current)


def test_every_call_carries_raw_and_accounted_input() -> None:
    call = settlement()["calls"][0]
    assert AgentCandidateModelSettlementCall.parse_wire(call).accounted_input_tokens == 10
    del call["accountedInputTokens"]
    refused(AgentCandidateModelSettlementCall, call)


def test_usage_input_total_is_the_accounted_input() -> None:
    current = settlement()
    current["calls"][0]["accountedInputTokens"] = 35
    accounted = {**current, "usage": {**current["usage"], "inputTokens": 55}}
    assert AgentCandidateModelSettlementMaterial.parse_wire(accounted).usage.input_tokens == 55
    # The raw provider input (30) is not the settled input total.
    error = refused(AgentCandidateModelSettlementMaterial, current)
    assert paths(error) == {"/usage"}
    assert codes(error) == {"settlement_usage_aggregate"}


def test_accounted_input_cannot_be_below_raw_input() -> None:
    current = settlement()
    current["calls"][0]["accountedInputTokens"] = 9
    error = refused(AgentCandidateModelSettlementMaterial, current)
    assert "/calls/0/accountedInputTokens" in paths(error)


@pytest.mark.parametrize(
    "field", ["outputTokens", "cachedInputTokens", "reasoningTokens", "costUsdNanos", "modelCalls"]
)
def test_usage_must_equal_the_exact_per_call_aggregate(field: str) -> None:
    current = settlement()
    current["usage"][field] += 1
    assert codes(refused(AgentCandidateModelSettlementMaterial, current)) == {
        "settlement_usage_aggregate"
    }


def test_one_estimated_call_makes_the_settlement_estimated() -> None:
    current = settlement()
    current["calls"][1]["costProvenance"] = "estimated"
    refused(AgentCandidateModelSettlementMaterial, current)
    current["usage"]["costProvenance"] = "estimated"
    AgentCandidateModelSettlementMaterial.parse_wire(current)


def test_call_trace_span_is_the_router_generation_and_calls_are_ordered() -> None:
    call = settlement()["calls"][0]
    error = refused(AgentCandidateModelSettlementCall, {**call, "traceSpanId": "caller-chosen"})
    assert paths(error) == {"/traceSpanId"}
    error = refused(AgentCandidateModelSettlementCall, {**call, "endedAtMs": 119})
    assert paths(error) == {"/endedAtMs"}
    refused(AgentCandidateModelSettlementCall, {**call, "startedAtMs": 0})


def test_router_identities_are_unique() -> None:
    current = settlement()
    first, second = current["calls"]
    error = refused(
        AgentCandidateModelSettlementMaterial, {**current, "calls": [first, {**second, "callId": "call-1"}]}
    )
    assert "/calls/1/callId" in paths(error)
    duplicate_span = {**second, "generationId": "span-1", "traceSpanId": "span-1"}
    error = refused(AgentCandidateModelSettlementMaterial, {**current, "calls": [first, duplicate_span]})
    assert {"/calls/1/traceSpanId", "/calls/1/generationId"} <= paths(error)


def test_every_call_uses_the_resolved_model() -> None:
    current = settlement()
    current["calls"][1]["model"] = "gpt-5.5"
    assert "/calls/1/model" in paths(refused(AgentCandidateModelSettlementMaterial, current))


def test_aggregate_beyond_the_safe_range_is_refused() -> None:
    current = settlement()
    for call in current["calls"]:
        call["outputTokens"] = MAX_SAFE
    assert "/calls/1/outputTokens" in paths(refused(AgentCandidateModelSettlementMaterial, current))


def test_a_settlement_is_closed() -> None:
    refused(AgentCandidateModelSettlementMaterial, {**settlement(), "closed": False})


def test_settlement_refuses_text_rfc_8785_cannot_hold() -> None:
    current = settlement()
    current["preparationId"] = "prep-\ud800"
    assert codes(refused(AgentCandidateModelSettlementMaterial, current)) == {"canonical_json"}


# -- evidence records --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "key"),
    [
        (AgentCandidateModelSettlementEvidence, "modelSettlement"),
        (AgentCandidateTaskOutcomeEvidence, "taskOutcome"),
        (AgentCandidateBenchmarkResultEvidence, "benchmarkResult"),
    ],
)
def test_evidence_artifact_is_the_digested_material(model: Any, key: str) -> None:
    evidence = receipt()[key]
    assert model.parse_wire(evidence).to_wire() == evidence
    mismatched = {**evidence, "artifact": {**evidence["artifact"], "sha256": sha("9")}}
    assert paths(refused(model, mismatched)) == {"/artifact/sha256"}
    empty = {**evidence, "artifact": {**evidence["artifact"], "byteLength": 0}}
    assert paths(refused(model, empty)) == {"/artifact/byteLength"}
    refused(model, {**evidence, "unexpected": True})


@pytest.mark.parametrize(
    ("model", "key"),
    [
        (AgentCandidateModelSettlementEvidence, "modelSettlement"),
        (AgentCandidateTaskOutcomeEvidence, "taskOutcome"),
        (AgentCandidateBenchmarkResultEvidence, "benchmarkResult"),
    ],
)
def test_sealed_evidence_digest_is_its_canonical_material(model: Any, key: str) -> None:
    material = receipt()[key]["material"]
    sealed = model.seal(material)
    assert sealed.digest == canonical_digest(material)
    assert sealed.verify_digest() is sealed
    # The fixture's digests are placeholders: the schema accepts them, verification does not.
    placeholder = model.parse_wire(receipt()[key])
    with pytest.raises(ContractError) as error:
        placeholder.verify_digest()
    assert error.value.issues[0].code == "digest_mismatch"


# -- task outcomes -----------------------------------------------------------------------------


def outcome_material() -> dict[str, Any]:
    material: dict[str, Any] = receipt()["taskOutcome"]["material"]
    return material


def output_material() -> dict[str, Any]:
    material = outcome_material()
    material["outcome"] = {
        "kind": "output",
        "spec": {"mediaType": "application/json", "maxBytes": 100},
        "artifact": {**material["outcome"]["gitDiff"]["artifact"], "byteLength": 50},
    }
    return material


def test_repository_state_uses_one_git_object_format() -> None:
    state = outcome_material()["outcome"]["baseRepository"]
    AgentCandidateRepositoryState.parse_wire(state)
    error = refused(AgentCandidateRepositoryState, {**state, "tree": "a" * 64})
    assert paths(error) == {"/tree"}


@pytest.mark.parametrize(
    ("field", "value", "path"),
    [
        ("identity", "pier/different-task", "/outcome/resultRepository/identity"),
        ("rootIdentity", "different-root", "/outcome/resultRepository/rootIdentity"),
    ],
)
def test_base_and_result_are_one_repository(field: str, value: str, path: str) -> None:
    material = outcome_material()
    AgentCandidateTaskOutcomeMaterial.parse_wire(material)
    material["outcome"]["resultRepository"][field] = value
    assert paths(refused(AgentCandidateTaskOutcomeMaterial, material)) == {path}


def test_base_and_result_share_one_object_format() -> None:
    material = outcome_material()
    material["outcome"]["resultRepository"]["commit"] = "c" * 64
    material["outcome"]["resultRepository"]["tree"] = "d" * 64
    assert paths(refused(AgentCandidateTaskOutcomeMaterial, material)) == {"/outcome/resultRepository"}


def test_git_diff_is_a_durable_artifact_reference() -> None:
    material = outcome_material()
    material["outcome"]["gitDiff"]["artifact"] = {
        "encoding": "base64",
        "content": "",
        "sha256": sha("1"),
        "byteLength": 0,
    }
    refused(AgentCandidateTaskOutcomeMaterial, material)
    material = outcome_material()
    material["outcome"]["gitDiff"]["unexpected"] = True
    refused(AgentCandidateTaskOutcomeMaterial, material)


def test_output_is_non_empty_and_within_its_signed_limit() -> None:
    material = output_material()
    assert AgentCandidateTaskOutcomeMaterial.parse_wire(material).to_wire() == material
    material["outcome"]["artifact"]["byteLength"] = 0
    assert codes(refused(AgentCandidateTaskOutcomeMaterial, material)) == {"empty_task_output"}
    material = output_material()
    material["outcome"]["spec"]["maxBytes"] = 49
    assert paths(refused(AgentCandidateTaskOutcomeMaterial, material)) == {
        "/outcome/artifact/byteLength"
    }
    material = output_material()
    material["outcome"]["spec"]["maxBytes"] = 64 * 1024 * 1024 + 1
    refused(AgentCandidateTaskOutcomeMaterial, material)


# -- benchmark results -------------------------------------------------------------------------


def result_material() -> dict[str, Any]:
    material: dict[str, Any] = receipt()["benchmarkResult"]["material"]
    material["dimensions"] = [{"name": "lint", "score": 1}, {"name": "tests", "score": 0.5}]
    return material


def test_dimensions_are_normalized_sorted_and_unique() -> None:
    material = result_material()
    AgentCandidateBenchmarkResultMaterial.parse_wire(material)
    lint, tests = material["dimensions"]
    for dimensions in ([tests, lint], [lint, lint]):
        error = refused(AgentCandidateBenchmarkResultMaterial, {**material, "dimensions": dimensions})
        assert codes(error) == {"dimension_order"}
    refused(AgentCandidateBenchmarkDimension, {"name": "Not Normalized", "score": 1})
    refused(AgentCandidateBenchmarkDimension, {"name": "tests", "score": -0.01})
    AgentCandidateBenchmarkDimension.parse_wire({"name": "code.lint-v2", "score": 0})


def test_score_is_normalized_and_independent_of_passed() -> None:
    material = result_material()
    refused(AgentCandidateBenchmarkResultMaterial, {**material, "score": 1.01})
    AgentCandidateBenchmarkResultMaterial.parse_wire({**material, "score": 0, "passed": True})
    AgentCandidateBenchmarkResultMaterial.parse_wire({**material, "score": 1, "passed": False})


def test_grading_evidence_is_durable_and_non_empty() -> None:
    material = result_material()
    empty = {**material, "evidence": {**material["evidence"], "byteLength": 0}}
    assert paths(refused(AgentCandidateBenchmarkResultMaterial, empty)) == {"/evidence/byteLength"}
    embedded = {
        **material,
        "evidence": {"encoding": "base64", "content": "e30=", "sha256": sha("c"), "byteLength": 2},
    }
    refused(AgentCandidateBenchmarkResultMaterial, embedded)
    del material["evidence"]
    refused(AgentCandidateBenchmarkResultMaterial, material)


def test_grader_timing_is_ordered_and_consistent() -> None:
    material = result_material()
    material["grading"]["timing"] = {"startedAtMs": 1_121, "endedAtMs": 1_101, "durationMs": 0}
    assert paths(refused(AgentCandidateBenchmarkResultMaterial, material)) == {"/grading/timing"}
    material["grading"]["timing"] = {"startedAtMs": 1_101, "endedAtMs": 1_121, "durationMs": 21}
    refused(AgentCandidateBenchmarkResultMaterial, material)
