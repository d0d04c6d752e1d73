"""Candidate-bundle experiments, execution evidence and their measured comparison (the
promotion cases of the reference's ``agent-candidate-outcome-schema.test.ts``)."""

from __future__ import annotations

from typing import Any

import pytest

from agent_interface.candidate.experiment import (
    AgentCandidateExperiment,
    AgentImprovementMeasuredComparison,
    CandidateExecutionEvidence,
)
from agent_interface.candidate.promotion import AgentImprovementProposal
from agent_interface.core.errors import ContractError
from tests.candidate.reference_documents import accepted, sha


def proposal() -> dict[str, Any]:
    return accepted(
        "AgentImprovementProposal",
        lambda v: v["evaluation"]["kind"] == "agent-improvement-measured-comparison",
    )


def evidence() -> dict[str, Any]:
    value: dict[str, Any] = proposal()["evaluation"]["measurements"][0]["candidate"]
    return value


def plan(value: dict[str, Any]) -> dict[str, Any]:
    material: dict[str, Any] = value["materializationReceipt"]["executionPlan"]["material"]
    return material


def refused(model: Any, value: Any) -> ContractError:
    with pytest.raises(ContractError) as error:
        model.parse_wire(value)
    return error.value


def paths(error: ContractError) -> set[str]:
    return {issue.path for issue in error.issues}


def test_accepts_the_reference_proposal_and_its_parts() -> None:
    value = proposal()
    assert AgentImprovementProposal.parse_wire(value).to_wire() == value
    comparison = value["evaluation"]
    AgentImprovementMeasuredComparison.parse_wire(comparison)
    AgentCandidateExperiment.parse_wire(comparison["experiment"])
    assert CandidateExecutionEvidence.parse_wire(evidence()).to_wire() == evidence()


def test_execution_evidence_binds_the_plan_grant() -> None:
    value = evidence()
    value["receipt"]["modelSettlement"]["material"]["grantDigest"] = sha("f")
    assert "/receipt/modelSettlement/material/grantDigest" in paths(
        refused(CandidateExecutionEvidence, value)
    )


@pytest.mark.parametrize(
    ("change", "path"),
    [
        ({"maxInputTokens": 29}, "/receipt/modelSettlement/material/usage/inputTokens"),
        ({"maxTotalTokens": 41}, "/receipt/modelSettlement/material/usage/totalTokens"),
        ({"maxOutputTokens": 11}, "/receipt/modelSettlement/material/usage/outputTokens"),
        ({"maxModelCalls": 1}, "/receipt/modelSettlement/material/usage/modelCalls"),
        ({"maxSteps": 1}, "/receipt/steps"),
        ({"timeoutMs": 99}, "/receipt/timing/durationMs"),
        ({"maxCostUsd": 1}, "/receipt/modelSettlement/material/usage/costUsdNanos"),
    ],
)
def test_execution_stays_within_the_planned_limits(change: dict[str, Any], path: str) -> None:
    value = evidence()
    limits = plan(value)["limits"]
    plan(value)["limits"] = {**limits, **change}
    assert path in paths(refused(CandidateExecutionEvidence, value))


def test_total_tokens_count_accounted_input() -> None:
    value = evidence()
    usage = value["receipt"]["modelSettlement"]["material"]["usage"]
    plan(value)["limits"]["maxTotalTokens"] = usage["inputTokens"] + usage["outputTokens"]
    CandidateExecutionEvidence.parse_wire(value)


def test_execution_evidence_refuses_a_detached_receipt() -> None:
    value = evidence()
    del value["receipt"]
    refused(CandidateExecutionEvidence, {**value, "runReceiptDigest": sha("1")})


def test_a_timeout_is_still_valid_execution_evidence() -> None:
    value = evidence()
    value["receipt"]["termination"] = {"kind": "timeout", "timeoutMs": 1_000}
    CandidateExecutionEvidence.parse_wire(value)


def with_first_candidate(mutate: Any) -> dict[str, Any]:
    value = proposal()
    mutate(value["evaluation"]["measurements"][0]["candidate"])
    return value


@pytest.mark.parametrize(
    ("mutate", "suffix"),
    [
        (lambda e: plan(e)["limits"].update(maxCostUsd=4), "executionPlan/material/limits"),
        (lambda e: plan(e)["container"].update(manifestDigest=sha("f")), "executionPlan/material/container"),
        (lambda e: plan(e)["runCell"].update(attempt=2), "executionPlan/material/runCell"),
        (
            lambda e: plan(e)["model"]["access"].update(network={"mode": "disabled"}),
            "executionPlan/material/model/access/network",
        ),
    ],
)
def test_every_execution_reproduces_its_task_and_bundle(mutate: Any, suffix: str) -> None:
    error = refused(AgentImprovementProposal, with_first_candidate(mutate))
    assert any(path.endswith(suffix) for path in paths(error)), paths(error)


def test_grading_binds_the_signed_grader() -> None:
    def mutate(e: dict[str, Any]) -> None:
        e["receipt"]["benchmarkResult"]["material"]["grader"]["version"] = "0.4.0"

    assert "/evaluation/measurements/0/candidate/receipt/benchmarkResult/material/grader" in paths(
        refused(AgentImprovementProposal, with_first_candidate(mutate))
    )


def test_receipt_identities_are_not_reused() -> None:
    value = proposal()
    measurements = value["evaluation"]["measurements"]
    measurements[1]["candidate"]["receipt"]["digest"] = measurements[0]["candidate"]["receipt"]["digest"]
    refused(AgentImprovementProposal, value)


def test_experiment_lineage_and_held_out_split() -> None:
    experiment = proposal()["evaluation"]["experiment"]
    AgentCandidateExperiment.parse_wire(experiment)
    lineage = experiment["candidateLineage"]
    split = experiment["benchmark"]["tasks"][0]["benchmark"]["splitDigest"]
    error = refused(
        AgentCandidateExperiment,
        {**experiment, "candidateLineage": {**lineage, "developmentSplitDigest": split}},
    )
    assert "/candidateLineage/developmentSplitDigest" in paths(error)
    error = refused(
        AgentCandidateExperiment,
        {**experiment, "candidateLineage": {**lineage, "parentDigests": [sha("7")]}},
    )
    assert "/candidateLineage/parentDigests" in paths(error)


def test_summary_must_equal_the_signed_cells() -> None:
    value = proposal()
    value["evaluation"]["overall"].update(baseline=0.9, delta=-0.15)
    refused(AgentImprovementProposal, value)
    value = proposal()
    value["evaluation"]["overall"]["n"] = 12
    refused(AgentImprovementProposal, value)
    value = proposal()
    value["evaluation"]["experiment"]["policy"]["confidenceLevel"] = 0.99
    refused(AgentImprovementProposal, value)


@pytest.mark.parametrize("kind", ["cost", "latency"])
def test_cost_and_latency_are_always_measured(kind: str) -> None:
    value = proposal()
    objectives = value["evaluation"]["objectives"]
    for index, objective in enumerate(objectives):
        if objective["kind"] == kind:
            objectives[index] = {
                key: objective[key] for key in ("kind", "name", "direction", "unit")
            } | {"availability": "unavailable", "reason": "not captured"}
    refused(AgentImprovementProposal, value)


def test_a_dimension_names_a_present_quality_objective() -> None:
    value = proposal()
    for objective in value["evaluation"]["objectives"]:
        if objective["kind"] == "dimension":
            objective["objective"] = "missing-parent"
    refused(AgentImprovementProposal, value)


def test_a_candidate_proposal_needs_a_changed_bundle() -> None:
    value = proposal()
    experiment = value["evaluation"]["experiment"]
    same = experiment["baseline"]["digest"]
    experiment["candidate"]["digest"] = same
    experiment["candidateLineage"] = {"source": "human"}
    for measurement in value["evaluation"]["measurements"]:
        candidate = measurement["candidate"]
        candidate["materializationReceipt"]["bundleDigest"] = same
        plan(candidate)["runCell"]["bundleDigest"] = same
        candidate["receipt"]["bundleDigest"] = same
    assert paths(refused(AgentImprovementProposal, value)) == {"/evaluation/experiment/candidate/digest"}


def test_candidate_records_verify_their_digest_on_request() -> None:
    parsed = CandidateExecutionEvidence.parse_wire(evidence())
    with pytest.raises(ContractError):
        parsed.verify_digest()
    sealed = CandidateExecutionEvidence.seal(evidence())
    assert sealed.verify_digest() is sealed
