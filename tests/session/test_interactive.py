"""Interactive sessions: start identity, control claims, prompts, stop and status. One
accepted and one refused example per rule, plus the cases of the reference's
``environment-interactive.test.ts``. The receipts, refs and digests in
``interactive_session_fixtures.json`` were recorded from the reference 1.6.0."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_interface.core.canonical import canonical_digest
from agent_interface.core.errors import ContractError
from agent_interface.core.model import wire_adapter
from agent_interface.profile.canonical import canonical_agent_profile_digest
from agent_interface.session.interactive_control import (
    AgentInteractiveSessionAttach,
    AgentInteractiveSessionControlClaim,
    AgentInteractiveSessionControlClaimAcknowledgement,
    AgentInteractiveSessionControlClaimRequest,
    AgentInteractiveSessionPromptAcknowledgement,
    AgentInteractiveSessionPromptCommand,
    AgentInteractiveSessionRef,
    AgentInteractiveSessionStatus,
    AgentInteractiveSessionStopAcknowledgement,
    AgentInteractiveSessionStopCommand,
    agent_interactive_session_control_claim_acknowledgement_matches_request,
    agent_interactive_session_control_claim_is_newer,
    agent_interactive_session_control_claim_matches_ref,
    agent_interactive_session_control_claim_request_digest,
    agent_interactive_session_prompt_acknowledgement_matches_command,
    agent_interactive_session_prompt_request_digest,
    agent_interactive_session_status_matches_ref,
    agent_interactive_session_stop_acknowledgement_matches_command,
    agent_interactive_session_stop_request_digest,
)
from agent_interface.session.interactive_start import (
    AgentInteractiveSessionStart,
    agent_interactive_session_ref_matches_start,
    agent_interactive_session_request_digest,
    agent_interactive_session_run_ref,
    exact_agent_interactive_session_start,
)

FIXTURES = json.loads((Path(__file__).resolve().parents[1] / "golden" / "interactive_session_fixtures.json").read_text())
COORDINATES: dict[str, str] = FIXTURES["runCoordinates"]
PROFILE: dict[str, Any] = FIXTURES["profile"]
START_INPUT: dict[str, Any] = FIXTURES["startInput"]
RUN: dict[str, Any] = FIXTURES["run"]
REF: dict[str, Any] = FIXTURES["ref"]
RECEIPT: dict[str, Any] = FIXTURES["receipt"]
STATUS = wire_adapter(AgentInteractiveSessionStatus)


def sha(digit: str) -> str:
    return "sha256:" + digit * 64


def control_for(ref: dict[str, Any] = REF, generation: int = 1) -> dict[str, Any]:
    return {
        "refDigest": canonical_digest(ref),
        "generation": generation,
        "leaseId": f"interactive-lease-{generation}",
        "holderId": "braid-coordinator-1",
        "expiresAt": "2026-08-15T13:00:00.000Z",
    }


def refused(model: Any, value: Any) -> ContractError:
    with pytest.raises(ContractError) as caught:
        model.parse_wire(value)
    return caught.value


def codes(error: ContractError) -> list[tuple[str, str]]:
    return [(issue.path, issue.code) for issue in error.issues]


# --- start ---------------------------------------------------------------------------------


def test_reference_digests_and_run_identity() -> None:
    assert FIXTURES["profileDigest"] == canonical_agent_profile_digest(PROFILE)
    assert agent_interactive_session_request_digest(COORDINATES, START_INPUT) == FIXTURES["startRequestDigest"]
    assert agent_interactive_session_request_digest(COORDINATES, START_INPUT) == RUN["requestDigest"]
    assert agent_interactive_session_run_ref(COORDINATES, START_INPUT).to_wire() == RUN
    assert RUN["runId"] == "interactive-run-" + RUN["requestDigest"].removeprefix("sha256:")


def test_start_is_exact_and_matches_its_ref() -> None:
    assert "preparationReceipt" not in START_INPUT
    request = exact_agent_interactive_session_start({"run": RUN, **START_INPUT})
    replay = exact_agent_interactive_session_start(AgentInteractiveSessionStart.parse_wire({"run": RUN, **START_INPUT}))
    assert request == replay
    ref = AgentInteractiveSessionRef.parse_wire(REF)
    assert agent_interactive_session_ref_matches_start(request, ref)
    assert agent_interactive_session_ref_matches_start({"run": RUN, **START_INPUT}, REF)
    status = STATUS.parse_value({"state": "running", "ref": REF})
    assert agent_interactive_session_status_matches_ref(ref, status)
    assert ref.preparation_receipt.authored_profile_digest == FIXTURES["profileDigest"]


def test_changed_material_changes_the_run() -> None:
    changed = agent_interactive_session_run_ref(COORDINATES, {**START_INPUT, "initialPrompt": "Run a different task."})
    assert changed.request_digest != RUN["requestDigest"]
    moved = agent_interactive_session_run_ref({**COORDINATES, "executionId": "execution-2"}, START_INPUT)
    assert moved.run_id != RUN["runId"]
    # the profile itself enters only through its requested digest
    same = agent_interactive_session_request_digest(COORDINATES, {**START_INPUT, "profile": {"name": "other"}})
    assert same == RUN["requestDigest"]
    # each optional member changes the digest when present
    for key, value in (("cwd", "/workspace"), ("cols", 80), ("rows", 24)):
        assert agent_interactive_session_request_digest(COORDINATES, {**START_INPUT, key: value}) != RUN["requestDigest"]
    without_prompt = {k: v for k, v in START_INPUT.items() if k != "initialPrompt"}
    assert agent_interactive_session_request_digest(COORDINATES, without_prompt) != RUN["requestDigest"]


def test_start_refusals() -> None:
    no_harness = {k: v for k, v in PROFILE.items() if k != "harness"}
    with pytest.raises(ContractError) as caught:
        exact_agent_interactive_session_start(
            {"run": RUN, "profile": no_harness, "requestedProfileDigest": canonical_agent_profile_digest(no_harness)}
        )
    assert codes(caught.value) == [("/profile/harness", "interactive_profile_harness_missing")]
    with pytest.raises(ContractError) as caught:
        exact_agent_interactive_session_start({"run": RUN, "profile": PROFILE, "requestedProfileDigest": sha("2")})
    assert codes(caught.value) == [("/requestedProfileDigest", "interactive_profile_digest_mismatch")]
    with pytest.raises(ContractError) as caught:
        exact_agent_interactive_session_start({"run": {**RUN, "runId": "interactive-run-forged"}, **START_INPUT})
    assert codes(caught.value) == [("/run", "interactive_run_identity_mismatch")]
    with pytest.raises(ContractError):
        exact_agent_interactive_session_start(
            {"run": RUN, **START_INPUT, "initialPrompt": "Changed after the run identity was minted."}
        )
    for bad in ({"cols": 0}, {"rows": 10_001}, {"cwd": ""}, {"initialPrompt": "x" * 16_385}, {"extra": 1}):
        refused(AgentInteractiveSessionStart, {"run": RUN, **START_INPUT, **bad})
    with pytest.raises(ContractError):
        agent_interactive_session_request_digest({**COORDINATES, "runId": "x"}, START_INPUT)


def test_ref_refuses_private_and_unknown_fields() -> None:
    for extra in ({"pid": 42}, {"env": {"API_KEY": "secret"}}, {"requestedProfileDigest": sha("b")}):
        error = refused(AgentInteractiveSessionRef, {**REF, **extra})
        assert "secret" not in str(error)
    refused(AgentInteractiveSessionRef, {**REF, "startedAt": "2026-08-15T12:00:00+00:00"})
    refused(AgentInteractiveSessionRef, {**REF, "incarnationId": " x"})


def test_ref_answers_for_other_runs_receipts_or_incarnations_do_not_match() -> None:
    request = exact_agent_interactive_session_start({"run": RUN, **START_INPUT})
    assert not agent_interactive_session_ref_matches_start(request, {**REF, "run": {**RUN, "executionId": "execution-other"}})
    assert not agent_interactive_session_ref_matches_start(
        request, {**REF, "preparationReceipt": {**RECEIPT, "effectiveProfileDigest": sha("c")}}
    )
    assert not agent_interactive_session_ref_matches_start(
        request, {**REF, "preparationReceipt": FIXTURES["codexReceipt"]}
    )
    assert not agent_interactive_session_status_matches_ref(
        REF, {"state": "running", "ref": {**REF, "incarnationId": "interactive-replacement"}}
    )
    assert not agent_interactive_session_status_matches_ref(
        REF, {"state": "running", "ref": {**REF, "startedAt": "2026-08-15T12:00:01.000Z"}}
    )
    assert not agent_interactive_session_status_matches_ref(REF, {"state": "paused", "ref": REF})


def test_status_variants() -> None:
    exited = {"state": "exited", "ref": REF, "endedAt": "2026-08-15T12:30:00Z", "reason": "stopped", "exitCode": 0}
    assert STATUS.parse_value(exited).reason == "stopped"
    assert STATUS.parse_value({"state": "unknown", "ref": REF, "message": "lost", "retryable": True}).state == "unknown"
    for bad in (
        {**exited, "reason": "killed"},
        {**exited, "exitSignal": ""},
        {"state": "unknown", "ref": REF, "message": "lost"},
        {"state": "running"},
    ):
        with pytest.raises(ContractError):
            STATUS.parse_value(bad)


# --- control claims ------------------------------------------------------------------------


def claim_request(**change: Any) -> dict[str, Any]:
    material = {
        "operationId": "control-operation-1",
        "ref": REF,
        "holderId": "braid-coordinator-1",
        "expectedGeneration": 0,
        **change,
    }
    return {**material, "requestDigest": agent_interactive_session_control_claim_request_digest(material)}


def test_claims_bind_the_exact_ref() -> None:
    current, recovered = control_for(REF, 1), control_for(REF, 2)
    assert claim_request()["requestDigest"] == FIXTURES["claimRequestDigest"]
    assert agent_interactive_session_control_claim_matches_ref(REF, current)
    assert not agent_interactive_session_control_claim_matches_ref(REF, {**current, "refDigest": sha("e")})
    assert not agent_interactive_session_control_claim_matches_ref({**REF, "incarnationId": "other"}, current)
    AgentInteractiveSessionControlClaimRequest.parse_wire(claim_request())
    replay = {
        "operationId": "control-operation-1",
        "requestDigest": claim_request()["requestDigest"],
        "ref": REF,
        "status": "replayed",
        "control": current,
    }
    assert agent_interactive_session_control_claim_acknowledgement_matches_request(claim_request(), replay)
    assert not agent_interactive_session_control_claim_acknowledgement_matches_request(
        claim_request(holderId="other"), replay
    )
    assert not agent_interactive_session_control_claim_is_newer(current, recovered)
    assert agent_interactive_session_control_claim_is_newer(recovered, current)


def test_claim_ordering_rule() -> None:
    one, two = control_for(REF, 1), control_for(REF, 2)
    assert agent_interactive_session_control_claim_is_newer(two, one)
    assert not agent_interactive_session_control_claim_is_newer(one, two)
    assert not agent_interactive_session_control_claim_is_newer(one, one)  # equal generations never win
    other_process = control_for({**REF, "incarnationId": "interactive-other"}, 5)
    assert not agent_interactive_session_control_claim_is_newer(other_process, one)
    # expiry does not enter the ordering; an invalid claim never wins
    expired_newer = {**two, "expiresAt": "2020-01-01T00:00:00Z"}
    assert agent_interactive_session_control_claim_is_newer(expired_newer, one)
    assert not agent_interactive_session_control_claim_is_newer({**two, "generation": 0}, one)
    assert not agent_interactive_session_control_claim_is_newer(two, {**one, "generation": -1})


def test_claim_rules() -> None:
    claim = AgentInteractiveSessionControlClaim.parse_wire(control_for())
    assert claim.generation == 1
    for bad in ({"generation": 0}, {"generation": 2**53}, {"generation": 1.5}, {"leaseId": ""}, {"expiresAt": "soon"}):
        refused(AgentInteractiveSessionControlClaim, {**control_for(), **bad})
    refused(AgentInteractiveSessionAttach, {"cols": 120, "rows": 40})
    AgentInteractiveSessionAttach.parse_wire({"control": control_for(), "cols": 120, "rows": 40})
    refused(AgentInteractiveSessionAttach, {"control": control_for(), "cols": 10_001})


def test_claim_request_digest_is_checked() -> None:
    error = refused(AgentInteractiveSessionControlClaimRequest, {**claim_request(), "holderId": "someone-else"})
    assert codes(error) == [("/requestDigest", "interactive_request_digest_mismatch")]
    refused(AgentInteractiveSessionControlClaimRequest, {**claim_request(), "expectedGeneration": -1})
    sealed = AgentInteractiveSessionControlClaimRequest.seal(
        {"operationId": "control-operation-1", "ref": REF, "holderId": "braid-coordinator-1", "expectedGeneration": 0}
    )
    assert sealed.request_digest == FIXTURES["claimRequestDigest"]
    assert agent_interactive_session_control_claim_request_digest(sealed) == sealed.request_digest


class ClaimProvider:
    """The reference test's provider: operation ids bound to digests, CAS on generation."""

    def __init__(self) -> None:
        self.generation = 0
        self.stored: dict[str, tuple[str, dict[str, Any]]] = {}

    def claim(self, request: AgentInteractiveSessionControlClaimRequest) -> AgentInteractiveSessionControlClaimAcknowledgement:
        base = {"operationId": request.operation_id, "requestDigest": request.request_digest, "ref": REF}
        stored = self.stored.get(request.operation_id)
        if stored is not None:
            if stored[0] == request.request_digest:
                return AgentInteractiveSessionControlClaimAcknowledgement.parse_wire(
                    {**base, "status": "replayed", "control": stored[1]}
                )
            return AgentInteractiveSessionControlClaimAcknowledgement.parse_wire(
                {
                    **base,
                    "status": "conflict",
                    "conflictReason": "operation_reuse",
                    "currentGeneration": self.generation,
                    "existingRequestDigest": stored[0],
                }
            )
        if request.expected_generation != self.generation:
            return AgentInteractiveSessionControlClaimAcknowledgement.parse_wire(
                {**base, "status": "conflict", "conflictReason": "generation_mismatch", "currentGeneration": self.generation}
            )
        self.generation += 1
        control = control_for(REF, self.generation)
        self.stored[request.operation_id] = (request.request_digest, control)
        return AgentInteractiveSessionControlClaimAcknowledgement.parse_wire({**base, "status": "accepted", "control": control})


def test_claim_recovery_is_replay_safe_and_distinguishes_conflicts() -> None:
    provider = ClaimProvider()
    first = AgentInteractiveSessionControlClaimRequest.parse_wire(claim_request(operationId="claim-recovery-1"))
    accepted = provider.claim(first)
    replayed = provider.claim(first)  # the first acknowledgement was lost
    assert (accepted.status, replayed.status) == ("accepted", "replayed")
    assert replayed.control == accepted.control and provider.generation == 1
    assert agent_interactive_session_control_claim_acknowledgement_matches_request(first, replayed)

    stale = AgentInteractiveSessionControlClaimRequest.parse_wire(
        claim_request(operationId="claim-recovery-stale", holderId="recovered-coordinator")
    )
    stale_conflict = provider.claim(stale)
    assert stale_conflict.conflict_reason == "generation_mismatch" and stale_conflict.current_generation == 1
    assert stale_conflict.existing_request_digest is None

    changed = AgentInteractiveSessionControlClaimRequest.parse_wire(
        claim_request(operationId="claim-recovery-1", holderId="different-coordinator")
    )
    reuse = provider.claim(changed)
    assert reuse.conflict_reason == "operation_reuse" and reuse.existing_request_digest == first.request_digest

    error = refused(
        AgentInteractiveSessionControlClaimAcknowledgement, {**stale_conflict.to_wire(), "conflictReason": "operation_reuse"}
    )
    assert ("/existingRequestDigest", "interactive_claim_operation_reuse_digest_missing") in codes(error)
    error = refused(
        AgentInteractiveSessionControlClaimAcknowledgement, {**reuse.to_wire(), "conflictReason": "generation_mismatch"}
    )
    assert ("/existingRequestDigest", "interactive_claim_generation_mismatch_digest") in codes(error)

    recovered = AgentInteractiveSessionControlClaimRequest.parse_wire(
        claim_request(operationId="claim-recovery-2", holderId="recovered-coordinator", expectedGeneration=1)
    )
    taken = provider.claim(recovered)
    assert taken.control is not None and accepted.control is not None
    assert agent_interactive_session_control_claim_is_newer(taken.control, accepted.control)


ACK_BASE = {"operationId": "op-1", "requestDigest": sha("a"), "ref": REF}


@pytest.mark.parametrize(
    ("value", "code"),
    [
        ({"status": "accepted"}, "interactive_claim_control_missing"),
        ({"status": "unknown", "control": control_for(), "message": "m", "retryable": True}, "interactive_claim_control_unexpected"),
        ({"status": "conflict", "currentGeneration": 1}, "interactive_claim_conflict_reason_missing"),
        ({"status": "accepted", "control": control_for(), "conflictReason": "operation_reuse"}, "interactive_claim_conflict_reason_unexpected"),
        ({"status": "accepted", "control": {**control_for(), "refDigest": sha("e")}}, "interactive_claim_ref_mismatch"),
        ({"status": "conflict", "conflictReason": "generation_mismatch"}, "interactive_claim_current_generation_missing"),
        (
            {"status": "conflict", "conflictReason": "operation_reuse", "currentGeneration": 1, "existingRequestDigest": sha("a")},
            "interactive_self_conflict",
        ),
        ({"status": "accepted", "control": control_for(), "currentGeneration": 1}, "interactive_claim_conflict_state_unexpected"),
        ({"status": "unknown", "message": "lost"}, "interactive_unknown_not_retryable"),
        ({"status": "unknown", "retryable": True}, "interactive_unknown_not_retryable"),
    ],
)
def test_claim_acknowledgement_rules(value: dict[str, Any], code: str) -> None:
    error = refused(AgentInteractiveSessionControlClaimAcknowledgement, {**ACK_BASE, **value})
    assert code in [c for _, c in codes(error)]


def test_claim_acknowledgement_accepted_shapes() -> None:
    for value in (
        {"status": "accepted", "control": control_for()},
        {"status": "unknown", "message": "lost", "retryable": True},
        {"status": "conflict", "conflictReason": "generation_mismatch", "currentGeneration": 0},
    ):
        AgentInteractiveSessionControlClaimAcknowledgement.parse_wire({**ACK_BASE, **value})


# --- prompts and stop ----------------------------------------------------------------------


def prompt_command(**change: Any) -> dict[str, Any]:
    material = {
        "operationId": "prompt-operation-1",
        "ref": REF,
        "control": control_for(),
        "prompt": "Continue with the next test.",
        **change,
    }
    return {**material, "requestDigest": agent_interactive_session_prompt_request_digest(material)}


def test_prompt_is_replay_safe_and_bound() -> None:
    command = AgentInteractiveSessionPromptCommand.parse_wire(prompt_command())
    assert command.request_digest == FIXTURES["promptRequestDigest"]
    ack = {
        "operationId": command.operation_id,
        "requestDigest": command.request_digest,
        "ref": REF,
        "control": control_for(),
        "status": "accepted",
    }
    assert agent_interactive_session_prompt_acknowledgement_matches_command(command, ack)
    assert agent_interactive_session_prompt_acknowledgement_matches_command(command, {**ack, "status": "replayed"})
    error = refused(AgentInteractiveSessionPromptCommand, {**prompt_command(), "prompt": "A paid duplicate action."})
    assert codes(error) == [("/requestDigest", "interactive_request_digest_mismatch")]
    assert not agent_interactive_session_prompt_acknowledgement_matches_command(
        command, {**ack, "ref": {**REF, "incarnationId": "interactive-replacement"}}
    )
    assert not agent_interactive_session_prompt_acknowledgement_matches_command(
        command, {**ack, "control": control_for(REF, 2)}
    )
    assert not agent_interactive_session_prompt_acknowledgement_matches_command(command, {**ack, "operationId": "other"})
    # a claim of another generation is other material
    assert agent_interactive_session_prompt_request_digest(
        {k: v for k, v in prompt_command(control=control_for(REF, 2)).items() if k != "requestDigest"}
    ) != command.request_digest


def test_prompt_command_rules() -> None:
    error = refused(AgentInteractiveSessionPromptCommand, prompt_command(control={**control_for(), "refDigest": sha("e")}) if False else {**prompt_command(), "control": {**control_for(), "refDigest": sha("e")}})
    assert ("/control/refDigest", "interactive_claim_ref_mismatch") in codes(error)
    with pytest.raises(ContractError):
        agent_interactive_session_prompt_request_digest(
            {"operationId": "p", "ref": REF, "control": {**control_for(), "refDigest": sha("e")}, "prompt": "x"}
        )
    with pytest.raises(ContractError):
        agent_interactive_session_prompt_request_digest({"operationId": "p", "ref": REF, "control": control_for(), "prompt": ""})


def test_prompt_acknowledgement_outcomes() -> None:
    command = prompt_command(operationId="prompt-operation-2", prompt="Inspect the changed file.")
    base = {"operationId": command["operationId"], "ref": REF, "control": control_for()}
    conflict = AgentInteractiveSessionPromptAcknowledgement.parse_wire(
        {**base, "requestDigest": sha("d"), "status": "conflict", "existingRequestDigest": command["requestDigest"]}
    )
    assert conflict.existing_request_digest == command["requestDigest"]
    unknown = {**base, "requestDigest": command["requestDigest"], "status": "unknown", "message": "lost", "retryable": True}
    AgentInteractiveSessionPromptAcknowledgement.parse_wire(unknown)
    for bad, code in (
        ({**unknown, "retryable": False}, "interactive_unknown_not_retryable"),
        ({**unknown, "status": "conflict"}, "interactive_conflict_digest"),
        ({**unknown, "status": "conflict", "existingRequestDigest": command["requestDigest"]}, "interactive_conflict_digest"),
        ({**unknown, "status": "accepted", "existingRequestDigest": sha("1")}, "interactive_conflict_digest_unexpected"),
        ({**unknown, "control": {**control_for(), "refDigest": sha("e")}}, "interactive_claim_ref_mismatch"),
    ):
        assert code in [c for _, c in codes(refused(AgentInteractiveSessionPromptAcknowledgement, bad))]


def stop_command(**change: Any) -> dict[str, Any]:
    material = {"operationId": "stop-operation-1", "ref": REF, "control": control_for(), **change}
    return {**material, "requestDigest": agent_interactive_session_stop_request_digest(material)}


def test_stop_is_a_replay_safe_control_bound_mutation() -> None:
    command = AgentInteractiveSessionStopCommand.parse_wire(stop_command())
    assert command.request_digest == FIXTURES["stopRequestDigest"]
    sealed = AgentInteractiveSessionStopCommand.seal({"operationId": "stop-operation-1", "ref": REF, "control": control_for()})
    assert sealed == command
    acknowledged = {
        "operationId": command.operation_id,
        "requestDigest": command.request_digest,
        "ref": REF,
        "control": control_for(),
        "status": "accepted",
        "effect": "stop_requested",
    }
    replayed = {**acknowledged, "status": "replayed", "effect": "stopped"}
    assert agent_interactive_session_stop_acknowledgement_matches_command(command, acknowledged)
    assert agent_interactive_session_stop_acknowledgement_matches_command(command, replayed)
    refused(AgentInteractiveSessionStopCommand, {"operationId": command.operation_id, "ref": REF})
    refused(AgentInteractiveSessionStopCommand, {**stop_command(), "operationId": "stop-operation-2"})
    assert not agent_interactive_session_stop_acknowledgement_matches_command(command, {**acknowledged, "effect": "unknown"})


@pytest.mark.parametrize(
    ("change", "code"),
    [
        ({"status": "accepted", "effect": "unknown"}, "interactive_stop_effect"),
        ({"status": "unknown", "effect": "stopped", "message": "m", "retryable": True}, "interactive_stop_effect"),
        ({"status": "conflict", "effect": "unknown"}, "interactive_conflict_digest"),
        ({"status": "accepted", "effect": "not_live", "existingRequestDigest": sha("1")}, "interactive_conflict_digest_unexpected"),
        ({"status": "unknown", "effect": "unknown", "message": "m"}, "interactive_unknown_not_retryable"),
    ],
)
def test_stop_acknowledgement_rules(change: dict[str, Any], code: str) -> None:
    base = {"operationId": "s", "requestDigest": sha("a"), "ref": REF, "control": control_for()}
    assert code in [c for _, c in codes(refused(AgentInteractiveSessionStopAcknowledgement, {**base, **change}))]
    AgentInteractiveSessionStopAcknowledgement.parse_wire(
        {**base, "status": "conflict", "effect": "unknown", "existingRequestDigest": sha("b")}
    )


def test_matchers_fail_closed_on_invalid_input() -> None:
    assert not agent_interactive_session_control_claim_acknowledgement_matches_request({}, {})
    assert not agent_interactive_session_stop_acknowledgement_matches_command(stop_command(), {"status": "accepted"})
    assert not agent_interactive_session_prompt_acknowledgement_matches_command("x", None)
    assert not agent_interactive_session_control_claim_matches_ref(REF, None)
    assert not agent_interactive_session_ref_matches_start({"run": RUN}, REF)
