"""Materialization and run receipts: what ran, how it ended, and that no receipt stands in
for missing evidence."""

from __future__ import annotations

from typing import Any

import pytest

from agent_interface.candidate.receipts import (
    AgentCandidateBenchmarkInputEvidence,
    AgentCandidateMaterializationReceipt,
    AgentCandidateRunReceipt,
    AgentCandidateTraceEvidence,
)
from agent_interface.core.canonical import canonical_digest
from agent_interface.core.errors import ContractError
from agent_interface.core.model import wire_adapter
from agent_interface.core.registry import wire_schema
from tests.candidate.reference_documents import accepted, sha


def receipt() -> dict[str, Any]:
    return accepted("AgentCandidateRunReceipt")


def disabled_materialization() -> dict[str, Any]:
    return accepted("AgentCandidateMaterializationReceipt", lambda v: v["codeKind"] == "disabled")


def patch_materialization() -> dict[str, Any]:
    return accepted("AgentCandidateMaterializationReceipt", lambda v: v["codeKind"] == "git-patch")


def refused(model: Any, value: Any) -> ContractError:
    with pytest.raises(ContractError) as error:
        wire_adapter(model).parse_value(value)
    return error.value


def paths(error: ContractError) -> set[str]:
    return {issue.path for issue in error.issues}


# -- run receipts ------------------------------------------------------------------------------


def test_accepts_a_receipt_with_exact_spend_and_all_evidence() -> None:
    value = receipt()
    assert AgentCandidateRunReceipt.parse_wire(value).to_wire() == value


def test_refuses_unknown_keys_and_obsolete_version_markers() -> None:
    refused(AgentCandidateRunReceipt, {**receipt(), "schemaVersion": 3})
    refused(AgentCandidateMaterializationReceipt, {**disabled_materialization(), "schemaVersion": 2})


@pytest.mark.parametrize(
    "termination",
    [
        {"kind": "exit", "exitCode": 0},
        {"kind": "exit", "exitCode": -1},
        {"kind": "timeout", "timeoutMs": 60_000},
        {"kind": "signal", "signal": "SIGTERM"},
        {"kind": "cancelled"},
    ],
)
def test_accepts_every_terminal_result(termination: dict[str, Any]) -> None:
    parsed = AgentCandidateRunReceipt.parse_wire({**receipt(), "termination": termination})
    assert parsed.termination.to_wire() == termination


@pytest.mark.parametrize(
    "termination",
    [
        {"kind": "timeout", "timeoutMs": 60_000, "exitCode": 137},
        {"kind": "signal", "signal": "SIGKILL", "exitCode": 137},
        {"kind": "cancelled", "exitCode": 0},
        {"kind": "exit", "signal": "SIGTERM"},
        {"kind": "exit"},
        {"kind": "timeout", "timeoutMs": 0},
        {"kind": "signal", "signal": "TERM"},
        {"kind": "signal", "signal": "SIGterm"},
        {"kind": "killed"},
    ],
)
def test_timeout_signal_and_cancellation_stay_distinct_from_exit(termination: dict[str, Any]) -> None:
    error = refused(wire_schema("AgentCandidateTermination").type, termination)
    assert error.issues
    refused(AgentCandidateRunReceipt, {**receipt(), "termination": termination})


def test_a_timeout_with_complete_evidence_is_a_valid_receipt() -> None:
    AgentCandidateRunReceipt.parse_wire(
        {**receipt(), "termination": {"kind": "timeout", "timeoutMs": 1_000}}
    )


# -- missing evidence is invalid capture, never a zero-usage receipt ----------------------------


def zero_usage(value: dict[str, Any]) -> dict[str, Any]:
    material = value["modelSettlement"]["material"]
    material["calls"] = []
    material["usage"] = {key: 0 for key in material["usage"]} | {"costProvenance": "observed"}
    value["trace"]["modelCallCount"] = 0
    return value


def test_a_zero_usage_receipt_cannot_replace_a_missing_trace() -> None:
    value = zero_usage(receipt())
    AgentCandidateRunReceipt.parse_wire(value)  # a genuine run that made no model calls
    for trace_change in (
        {"eventCount": 0},
        {"artifact": {**value["trace"]["artifact"], "byteLength": 0}},
    ):
        stand_in = {**value, "trace": {**value["trace"], **trace_change}}
        refused(AgentCandidateRunReceipt, stand_in)


def test_a_zero_usage_settlement_cannot_replace_captured_model_calls() -> None:
    value = zero_usage(receipt())
    value["trace"]["modelCallCount"] = 2  # the trace saw two model calls
    assert "/trace/modelCallCount" in paths(refused(AgentCandidateRunReceipt, value))


def test_missing_settlement_or_trace_refuses_the_receipt() -> None:
    for key in ("modelSettlement", "trace", "taskOutcome", "benchmarkResult", "termination"):
        value = receipt()
        del value[key]
        refused(AgentCandidateRunReceipt, value)


def test_trace_holds_an_event_for_every_model_call() -> None:
    trace = receipt()["trace"]
    AgentCandidateTraceEvidence.parse_wire(trace)
    error = refused(AgentCandidateTraceEvidence, {**trace, "eventCount": 1})
    assert paths(error) == {"/eventCount"}
    error = refused(AgentCandidateRunReceipt, {**receipt(), "trace": {**trace, "modelCallCount": 3}})
    assert "/trace/modelCallCount" in paths(error)


def test_model_calls_happen_within_the_run_and_grading_after_it() -> None:
    value = receipt()
    value["modelSettlement"]["material"]["calls"][0]["startedAtMs"] = 999
    assert paths(refused(AgentCandidateRunReceipt, value)) == {"/modelSettlement/material/calls/0"}
    value = receipt()
    value["benchmarkResult"]["material"]["grading"]["timing"] = {
        "startedAtMs": 1_099,
        "endedAtMs": 1_119,
        "durationMs": 20,
    }
    assert paths(refused(AgentCandidateRunReceipt, value)) == {
        "/benchmarkResult/material/grading/timing/startedAtMs"
    }


def test_run_timing_is_consistent() -> None:
    value = receipt()
    value["timing"]["durationMs"] = 99
    assert paths(refused(AgentCandidateRunReceipt, value)) == {"/timing"}


@pytest.mark.parametrize(
    ("location", "path"),
    [
        (("modelSettlement", "material", "executionPlanDigest"), "/modelSettlement/material/executionPlanDigest"),
        (("taskOutcome", "material", "executionPlanDigest"), "/taskOutcome/material/executionPlanDigest"),
        (("benchmarkResult", "material", "executionPlanDigest"), "/benchmarkResult/material/executionPlanDigest"),
        (("benchmarkResult", "material", "taskOutcomeDigest"), "/benchmarkResult/material/taskOutcomeDigest"),
    ],
)
def test_evidence_binds_the_executed_plan_and_outcome(location: tuple[str, ...], path: str) -> None:
    value = receipt()
    node = value
    for key in location[:-1]:
        node = node[key]
    node[location[-1]] = sha("0")
    assert paths(refused(AgentCandidateRunReceipt, value)) == {path}


def test_isolated_memory_names_its_namespace_reset_and_states() -> None:
    value = receipt()
    snapshot = patch_materialization()["candidateWorkspace"]
    value["memory"] = {
        "mode": "isolated",
        "scope": "task",
        "effectiveNamespace": "candidate-task-1",
        "resetEvidenceDigest": sha("1"),
        "beforeStateDigest": sha("2"),
        "afterState": snapshot,
    }
    AgentCandidateRunReceipt.parse_wire(value)
    value["memory"]["scope"] = "suite"
    refused(AgentCandidateRunReceipt, value)


def test_receipt_digest_is_verified_on_request() -> None:
    value = receipt()
    parsed = AgentCandidateRunReceipt.parse_wire(value)
    with pytest.raises(ContractError) as error:
        parsed.verify_digest()
    assert error.value.issues[0].code == "digest_mismatch"
    sealed = AgentCandidateRunReceipt.seal(value)
    material = {key: item for key, item in value.items() if key != "digest"}
    assert sealed.digest == canonical_digest(material)
    assert sealed.verify_digest() is sealed


# -- materialization receipts ------------------------------------------------------------------


def test_benchmark_inputs_are_captured_canonical_bytes() -> None:
    benchmark = disabled_materialization()["benchmark"]
    AgentCandidateBenchmarkInputEvidence.parse_wire(benchmark)
    benchmark["task"]["material"]["sha256"] = sha("f")
    assert paths(refused(AgentCandidateBenchmarkInputEvidence, benchmark)) == {"/task/material/sha256"}
    benchmark = disabled_materialization()["benchmark"]
    benchmark["suite"]["material"]["byteLength"] = 0
    assert paths(refused(AgentCandidateBenchmarkInputEvidence, benchmark)) == {
        "/suite/material/byteLength"
    }


def test_accepts_disabled_and_patched_code_materializations() -> None:
    for value in (disabled_materialization(), patch_materialization()):
        assert AgentCandidateMaterializationReceipt.parse_wire(value).to_wire() == value


def test_disabled_code_claims_no_tree_entrypoint_or_workspace() -> None:
    value = disabled_materialization()
    value["materializedTree"] = "a" * 40
    error = refused(AgentCandidateMaterializationReceipt, value)
    assert "disabled_code_materialized" in {issue.code for issue in error.issues}


@pytest.mark.parametrize("key", ["materializedTree", "entrypoint", "candidateWorkspace"])
def test_active_code_names_its_tree_entrypoint_and_workspace(key: str) -> None:
    value = patch_materialization()
    del value[key]
    refused(AgentCandidateMaterializationReceipt, value)


def test_entrypoint_receipt_names_exact_workspace_bytes() -> None:
    value = patch_materialization()
    value["entrypoint"]["byteLength"] += 1
    assert "/entrypoint" in paths(refused(AgentCandidateMaterializationReceipt, value))
    value = patch_materialization()
    value["entrypoint"]["path"] = "../escape.js"
    refused(AgentCandidateMaterializationReceipt, value)


@pytest.mark.parametrize(
    ("change", "path"),
    [
        (lambda v: v.update(bundleDigest=sha("0")), "/executionPlan/material/runCell/bundleDigest"),
        (
            lambda v: v["benchmark"].update(
                suite={**v["benchmark"]["suite"], "digest": sha("0")}
                | {"material": {**v["benchmark"]["suite"]["material"], "sha256": sha("0")}}
            ),
            "/benchmark/suite/digest",
        ),
        (lambda v: v.update(harnessVersion="9.9.9"), "/executionPlan/material/harness"),
        (lambda v: v["container"].update(manifestDigest=sha("0")), "/executionPlan/material/container"),
        (lambda v: v["container"]["platform"].update(variant="v8"), "/executionPlan/material/container"),
        (
            lambda v: v["container"].update(source="pinned-container"),
            "/executionPlan/material/container",
        ),
        (
            lambda v: v["resolvedModel"].update(snapshot="other"),
            "/executionPlan/material/model/resolved",
        ),
        (
            lambda v: v.update(knowledgeManifestDigest=sha("0")),
            "/executionPlan/material/knowledgeManifestDigest",
        ),
    ],
)
def test_every_materialized_value_is_the_planned_one(change: Any, path: str) -> None:
    value = disabled_materialization()
    change(value)
    assert path in paths(refused(AgentCandidateMaterializationReceipt, value))


def test_materialization_binds_the_profile_plan_and_harness() -> None:
    value = disabled_materialization()
    value["profileActivation"]["profilePlan"]["material"]["harness"] = "claude-code"
    assert "/profileActivation/profilePlan/material/harness" in paths(
        refused(AgentCandidateMaterializationReceipt, value)
    )


def test_materialization_digest_is_verified_on_request() -> None:
    sealed = AgentCandidateMaterializationReceipt.seal(disabled_materialization())
    assert sealed.verify_digest() is sealed
    tampered = AgentCandidateMaterializationReceipt.parse_wire(
        {**sealed.to_wire(), "harnessVersion": sealed.harness_version}
        | {"digest": sha("0")}
    )
    with pytest.raises(ContractError):
        tampered.verify_digest()
