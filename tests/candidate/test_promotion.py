"""Proposals, reviews, activations and activation results (cases of the reference's
``agent-candidate-promotion-schema.test.ts`` and the promotion cases of
``agent-candidate-outcome-schema.test.ts``)."""

from __future__ import annotations

from typing import Any

import pytest

from agent_interface.candidate.promotion import (
    AgentImprovementActivation,
    AgentImprovementActivationResult,
    AgentImprovementProposal,
    AgentImprovementReview,
)
from agent_interface.core.canonical import canonical_digest
from agent_interface.core.errors import ContractError
from tests.candidate.reference_documents import accepted, sha


def signed(material: dict[str, Any]) -> dict[str, Any]:
    body = {key: value for key, value in material.items() if key != "digest"}
    return {**body, "digest": canonical_digest(body)}


def activation(**changes: Any) -> dict[str, Any]:
    return signed(
        {
            "kind": "agent-improvement-activation",
            "proposalDigest": sha("1"),
            "reviewDigest": sha("2"),
            "experimentDigest": sha("3"),
            "candidateDigest": sha("4"),
            "intent": "activate-candidate",
            "targets": [
                {"surface": "prompt", "identity": "agent-profile:support", "expectedBaseDigest": sha("5")}
            ],
            "fundingOwner": "tenant:test",
            "authorizedBy": "policy:tenant-admin",
            "authorizedAt": "2026-07-15T00:00:00.000Z",
            "expiresAt": "2026-07-15T00:05:00.000Z",
            **changes,
        }
    )


RUNNER = {
    "kind": "agent-profile-improvement-execution-ref",
    "identity": "platform-agent-profile-runner:fixture",
    "digest": sha("a"),
}
PROFILE_TARGET = [
    {"surface": "agent-profile", "identity": "agent-profile:support", "expectedBaseDigest": sha("5")}
]


def refused(model: Any, value: Any) -> ContractError:
    with pytest.raises(ContractError) as error:
        model.parse_wire(value)
    return error.value


def paths(error: ContractError) -> set[str]:
    return {issue.path for issue in error.issues}


# -- activation -----------------------------------------------------------------------------


def test_accepts_activation_and_restore_authority() -> None:
    for value in (activation(), activation(intent="restore-baseline")):
        parsed = AgentImprovementActivation.parse_wire(value)
        assert parsed.to_wire() == value
        assert parsed.verify_digest() is parsed


def test_profile_activation_names_the_measured_runner() -> None:
    AgentImprovementActivation.parse_wire(activation(targets=PROFILE_TARGET, executionRef=RUNNER))
    error = refused(AgentImprovementActivation, activation(targets=PROFILE_TARGET))
    assert paths(error) == {"/executionRef"}
    error = refused(AgentImprovementActivation, activation(executionRef=RUNNER))
    assert paths(error) == {"/executionRef"}


def test_activation_targets_are_unique_and_present() -> None:
    value = activation()
    error = refused(AgentImprovementActivation, {**value, "targets": value["targets"] * 2})
    assert paths(error) == {"/targets"}
    refused(AgentImprovementActivation, activation(targets=[]))
    refused(AgentImprovementActivation, activation(targets=[{**value["targets"][0], "surface": "research"}]))


@pytest.mark.parametrize(
    ("authorized", "expires", "ok"),
    [
        ("2026-07-15T00:00:00.000Z", "2026-07-15T00:00:00.000Z", False),
        ("2026-07-15T00:00:00.000Z", "2026-07-15T00:00:00.001Z", True),
        ("2026-07-15T00:00:00.0001Z", "2026-07-15T00:00:00Z", False),  # same millisecond
        ("2026-07-15T00:00Z", "2026-07-15T00:00:01Z", True),
        ("2026-12-31T23:59:59.999Z", "2027-01-01T00:00:00Z", True),
        ("2024-02-29T00:00:00Z", "2024-02-28T23:59:59Z", False),
    ],
)
def test_activation_expires_after_its_authorization(authorized: str, expires: str, ok: bool) -> None:
    value = activation(authorizedAt=authorized, expiresAt=expires)
    if ok:
        AgentImprovementActivation.parse_wire(value)
    else:
        assert paths(refused(AgentImprovementActivation, value)) == {"/expiresAt"}


def test_activation_digest_is_verified_on_request() -> None:
    parsed = AgentImprovementActivation.parse_wire({**activation(), "digest": sha("0")})
    with pytest.raises(ContractError):
        parsed.verify_digest()
    assert AgentImprovementActivation.seal(activation()).digest == activation()["digest"]


def test_activation_refuses_offset_timestamps_and_missing_values() -> None:
    refused(AgentImprovementActivation, activation(expiresAt="2026-07-15T00:05:00+00:00"))
    value = activation()
    del value["targets"][0]["identity"]
    refused(AgentImprovementActivation, value)


# -- activation results ---------------------------------------------------------------------

APPLIED = {
    "status": "applied",
    "transactionId": "profile-transaction:123",
    "targets": [
        {
            "surface": "prompt",
            "identity": "agent-profile:support",
            "beforeDigest": sha("5"),
            "afterDigest": sha("6"),
        }
    ],
}


def result(outcome: dict[str, Any] = APPLIED, **changes: Any) -> dict[str, Any]:
    return signed(
        {
            "kind": "agent-improvement-activation-result",
            "idempotencyKey": activation()["digest"],
            "attemptedAt": "2026-07-15T00:01:00.000Z",
            "completedAt": "2026-07-15T00:01:01.000Z",
            "outcome": outcome,
            **changes,
        }
    )


STATE = [{"surface": "prompt", "identity": "agent-profile:support", "currentDigest": sha("6")}]


@pytest.mark.parametrize(
    "outcome",
    [
        APPLIED,
        {"status": "already-applied", "targets": STATE},
        {"status": "conflict", "targets": STATE},
        {"status": "expired"},
        {"status": "unsupported", "code": "surface", "message": "no prompt store"},
        {"status": "failed", "code": "write", "message": "store refused the write"},
        {"status": "indeterminate", "code": "timeout", "message": "store did not answer"},
    ],
)
def test_accepts_every_activation_outcome(outcome: dict[str, Any]) -> None:
    value = result(outcome)
    assert AgentImprovementActivationResult.parse_wire(value).to_wire() == value


@pytest.mark.parametrize(
    "outcome",
    [
        {"status": "applied", "targets": APPLIED["targets"]},
        {"status": "conflict", "targets": []},
        {"status": "expired", "code": "late"},
        {"status": "failed", "code": "", "message": "x"},
        {"status": "rolled-back"},
    ],
)
def test_refuses_incomplete_or_unknown_outcomes(outcome: dict[str, Any]) -> None:
    refused(AgentImprovementActivationResult, result(outcome))


def test_completion_cannot_predate_the_attempt() -> None:
    error = refused(AgentImprovementActivationResult, result(completedAt="2026-07-15T00:00:59.999Z"))
    assert paths(error) == {"/completedAt"}
    AgentImprovementActivationResult.parse_wire(result(completedAt="2026-07-15T00:01:00.000Z"))


def test_outcome_targets_are_unique() -> None:
    error = refused(AgentImprovementActivationResult, result({"status": "conflict", "targets": STATE * 2}))
    assert paths(error) == {"/outcome/targets"}


# -- reviews --------------------------------------------------------------------------------

REVIEW = signed(
    {
        "kind": "agent-improvement-review",
        "proposalDigest": sha("2"),
        "decision": "approve",
        "reviewedBy": "operator@example.com",
        "reviewedAt": "2026-07-13T00:01:00.000Z",
        "reason": "Measured winner passed review.",
    }
)


def test_review_names_one_proposal_and_a_decision() -> None:
    assert AgentImprovementReview.parse_wire(REVIEW).to_wire() == REVIEW
    AgentImprovementReview.parse_wire({**REVIEW, "decision": "request-changes", "feedback": ""})
    refused(AgentImprovementReview, {key: v for key, v in REVIEW.items() if key != "proposalDigest"})
    refused(AgentImprovementReview, {**REVIEW, "candidateDigest": sha("a")})
    refused(AgentImprovementReview, {**REVIEW, "decision": "maybe"})
    refused(AgentImprovementReview, {**REVIEW, "reason": "ok \ud800"})


# -- proposals of a profile change ----------------------------------------------------------


def profile_proposal() -> dict[str, Any]:
    return accepted(
        "AgentImprovementProposal",
        lambda v: v["evaluation"]["kind"] == "agent-profile-improvement-measured-comparison",
    )


def test_accepts_a_passing_profile_proposal() -> None:
    value = profile_proposal()
    parsed = AgentImprovementProposal.parse_wire(value)
    assert parsed.to_wire() == value
    assert parsed.verify_digest() is parsed


def test_profile_proposal_surfaces_equal_the_measured_change() -> None:
    value = profile_proposal()
    value["changedSurfaces"] = ["skills"]
    assert paths(refused(AgentImprovementProposal, value)) == {"/changedSurfaces"}


@pytest.mark.parametrize("surfaces", [[], ["prompt", "prompt"], ["research"]])
def test_changed_surfaces_are_known_unique_and_present(surfaces: list[str]) -> None:
    refused(AgentImprovementProposal, {**profile_proposal(), "changedSurfaces": surfaces})


def test_a_proposal_needs_a_shippable_powered_comparison() -> None:
    value = profile_proposal()
    value["evaluation"]["decision"]["outcome"] = "hold"
    assert "/evaluation/decision/outcome" in paths(refused(AgentImprovementProposal, value))
    value = profile_proposal()
    value["evaluation"]["power"]["sufficient"] = False
    assert "/evaluation/power" in paths(refused(AgentImprovementProposal, value))


def test_proposal_refuses_extra_candidate_profile_fields() -> None:
    refused(AgentImprovementProposal, {**profile_proposal(), "candidateProfile": {"name": "x"}})


def test_findings_are_canonical_json_objects() -> None:
    value = profile_proposal()
    value["findings"] = [{"claim": "bad \ud800 text"}]
    refused(AgentImprovementProposal, value)
    value["findings"] = ["not an object"]
    refused(AgentImprovementProposal, value)
