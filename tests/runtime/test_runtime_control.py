"""Retained run control: references, cancellation and control requests and
acknowledgements, and the retainedControl declaration rule."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
import rfc8785

from agent_interface.core.errors import ContractError
from agent_interface.runtime.control import (
    AgentExactRunControlRef,
    AgentRunCancellationAcknowledgement,
    AgentRunCancellationRequest,
    AgentRunControlAcknowledgement,
    AgentRunControlRef,
    AgentRunControlRequest,
    agent_run_cancellation_acknowledgement_matches_request,
    agent_run_cancellation_request_digest,
    agent_run_control_acknowledgement_matches_request,
    agent_run_control_request_digest,
    check_retained_control,
    retained_control_issues,
    same_agent_run_control_ref,
)

DIGEST_A = "sha256:" + "a" * 64
DIGEST_B = "sha256:" + "b" * 64
REF = {"runId": "run-1", "provider": "cli-bridge", "environmentId": "local-1", "sessionId": "session-1", "executionId": "execution-1", "requestDigest": DIGEST_A}


def refusal(model: Any, data: Any) -> list[tuple[str, str]]:
    with pytest.raises(ContractError) as caught:
        model.parse_wire(data)
    return [(issue.path, issue.code) for issue in caught.value.issues]


def jcs(value: Any) -> str:
    return "sha256:" + hashlib.sha256(rfc8785.dumps(value)).hexdigest()


# --- references ---------------------------------------------------------------------


def test_run_control_ref() -> None:
    assert AgentRunControlRef.parse_wire(REF).to_wire() == REF
    minimal = {"runId": "r", "provider": "p", "environmentId": "e"}
    assert AgentRunControlRef.parse_wire(minimal).to_wire() == minimal
    assert ("/provider", "identifier_whitespace") in refusal(AgentRunControlRef, {**REF, "provider": " cli-bridge"})
    assert ("/requestDigest", "string_pattern_mismatch") in refusal(AgentRunControlRef, {**REF, "requestDigest": "sha256:AB"})


def test_exact_ref_requires_session_execution_and_admission_digest() -> None:
    assert AgentExactRunControlRef.parse_wire(REF).request_digest == DIGEST_A
    for key in ("sessionId", "executionId", "requestDigest"):
        assert (f"/{key}", "missing") in refusal(AgentExactRunControlRef, {k: v for k, v in REF.items() if k != key})


def test_same_ref_compares_canonical_forms() -> None:
    changed = {"runId": "run-2", "provider": "tangle", "environmentId": "local-2", "sessionId": "session-2", "executionId": "execution-2", "requestDigest": DIGEST_B}
    for key in REF:
        assert not same_agent_run_control_ref(REF, {**REF, key: changed[key]}), key
    assert same_agent_run_control_ref(REF, dict(REF))
    assert same_agent_run_control_ref(AgentRunControlRef.parse_wire(REF), dict(reversed(list(REF.items()))))
    without = {k: v for k, v in REF.items() if k != "requestDigest"}
    assert not same_agent_run_control_ref(REF, without)
    # A changed admission digest means changed input: reconstruction must not reuse the run.
    assert not same_agent_run_control_ref(REF, {**REF, "requestDigest": DIGEST_B})


# --- cancellation ------------------------------------------------------------------

MATERIAL = {"operationId": "cancel-1", "run": {**REF, "requestDigest": DIGEST_B}, "reason": "user requested stop"}


def test_cancellation_digest_is_canonical_material() -> None:
    digest = agent_run_cancellation_request_digest(MATERIAL)
    assert digest == jcs(MATERIAL)
    by_hand = (
        b'{"operationId":"cancel-1","reason":"user requested stop","run":{"environmentId":"local-1",'
        b'"executionId":"execution-1","provider":"cli-bridge","requestDigest":"' + DIGEST_B.encode()
        + b'","runId":"run-1","sessionId":"session-1"}}'
    )
    assert digest == "sha256:" + hashlib.sha256(by_hand).hexdigest()
    no_reason = {k: v for k, v in MATERIAL.items() if k != "reason"}
    assert agent_run_cancellation_request_digest(no_reason) == jcs(no_reason)
    with pytest.raises(ContractError):
        agent_run_cancellation_request_digest({**MATERIAL, "run": {k: v for k, v in REF.items() if k != "executionId"}})


def test_cancellation_request_round_trip_and_refusals() -> None:
    request = AgentRunCancellationRequest.create(MATERIAL)
    assert request.to_wire() == {**MATERIAL, "requestDigest": agent_run_cancellation_request_digest(MATERIAL)}
    assert agent_run_cancellation_request_digest(request) == request.request_digest
    assert ("/requestDigest", "digest_mismatch") in refusal(AgentRunCancellationRequest, {**request.to_wire(), "reason": "changed"})
    assert ("/reason", "string_too_long") in refusal(AgentRunCancellationRequest, {**request.to_wire(), "reason": "x" * 2049})
    assert ("/reason", "string_too_short") in refusal(AgentRunCancellationRequest, {**request.to_wire(), "reason": ""})
    assert ("/run/sessionId", "missing") in refusal(
        AgentRunCancellationRequest, {**request.to_wire(), "run": {k: v for k, v in REF.items() if k != "sessionId"}}
    )


REQUEST = AgentRunCancellationRequest.create(MATERIAL)
ACK: dict[str, Any] = {"operationId": "cancel-1", "requestDigest": REQUEST.request_digest, "run": REQUEST.run.to_wire()}


@pytest.mark.parametrize(
    "extra",
    [
        {"status": "accepted", "effect": "cancel_requested"},
        {"status": "accepted", "effect": "cancelled"},
        {"status": "replayed", "effect": "not_live"},
        {"status": "conflict", "effect": "unknown", "existingRequestDigest": DIGEST_A},
        {"status": "unknown", "effect": "unknown", "message": "lost", "retryable": False},
    ],
)
def test_cancellation_acknowledgement_accepted(extra: dict[str, Any]) -> None:
    ack = AgentRunCancellationAcknowledgement.parse_wire({**ACK, **extra})
    assert ack.to_wire() == {**ACK, **extra}
    assert agent_run_cancellation_acknowledgement_matches_request(REQUEST, ack)


@pytest.mark.parametrize(
    ("extra", "pointer", "code"),
    [
        ({"status": "accepted", "effect": "unknown"}, "/effect", "effect_certainty_mismatch"),
        ({"status": "replayed", "effect": "unknown"}, "/effect", "effect_certainty_mismatch"),
        ({"status": "conflict", "effect": "cancelled", "existingRequestDigest": DIGEST_A}, "/effect", "effect_certainty_mismatch"),
        ({"status": "unknown", "effect": "cancelled", "message": "m", "retryable": False}, "/effect", "effect_certainty_mismatch"),
        ({"status": "conflict", "effect": "unknown"}, "/existingRequestDigest", "conflict_without_existing_digest"),
        ({"status": "conflict", "effect": "unknown", "existingRequestDigest": REQUEST.request_digest}, "/existingRequestDigest", "conflict_with_same_digest"),
        ({"status": "accepted", "effect": "cancelled", "existingRequestDigest": DIGEST_A}, "/existingRequestDigest", "existing_digest_without_conflict"),
        ({"status": "unknown", "effect": "unknown", "message": "m"}, "/retryable", "unknown_outcome_not_explicit"),
        ({"status": "unknown", "effect": "unknown", "message": "m", "retryable": True}, "/retryable", "unknown_outcome_not_explicit"),
        ({"status": "done", "effect": "cancelled"}, "/status", "literal_error"),
        ({"status": "accepted", "effect": "stopped"}, "/effect", "literal_error"),
        ({"status": "accepted", "effect": "cancelled", "answer": 1}, "/answer", "extra_forbidden"),
    ],
)
def test_cancellation_acknowledgement_refused(extra: dict[str, Any], pointer: str, code: str) -> None:
    assert (pointer, code) in refusal(AgentRunCancellationAcknowledgement, {**ACK, **extra})


def test_cancellation_matcher_requires_exact_coordinates() -> None:
    ok = {**ACK, "status": "accepted", "effect": "cancelled"}
    assert agent_run_cancellation_acknowledgement_matches_request(REQUEST.to_wire(), ok)
    assert not agent_run_cancellation_acknowledgement_matches_request(REQUEST, {**ok, "operationId": "cancel-2"})
    assert not agent_run_cancellation_acknowledgement_matches_request(REQUEST, {**ok, "requestDigest": DIGEST_A})
    assert not agent_run_cancellation_acknowledgement_matches_request(REQUEST, {**ok, "run": {**ACK["run"], "executionId": "execution-2"}})
    assert not agent_run_cancellation_acknowledgement_matches_request({**REQUEST.to_wire(), "reason": "tampered"}, ok)
    assert not agent_run_cancellation_acknowledgement_matches_request(REQUEST, {**ok, "effect": "unknown"})


# --- other control requests ----------------------------------------------------------


@pytest.mark.parametrize("action", ["steer", "cancel", "status", "reconnect"])
def test_control_request_digest(action: str) -> None:
    material: dict[str, Any] = {"operationId": f"op-{action}", "action": action, "run": REF}
    if action == "steer":
        material["payload"] = {"message": "focus on tests"}
    digest = agent_run_control_request_digest(material)
    assert digest == jcs(material)
    request = AgentRunControlRequest.create(material)
    assert request.request_digest == digest and request.to_wire() == {**material, "requestDigest": digest}
    assert ("/requestDigest", "digest_mismatch") in refusal(AgentRunControlRequest, {**request.to_wire(), "operationId": "other"})
    ack = AgentRunControlAcknowledgement.parse_wire({"operationId": request.operation_id, "requestDigest": digest, "run": REF, "status": "accepted"})
    assert agent_run_control_acknowledgement_matches_request(request, ack)
    assert not agent_run_control_acknowledgement_matches_request(request, {**ack.to_wire(), "run": {**REF, "runId": "run-9"}})


def test_control_request_refusals() -> None:
    base = {"operationId": "op", "action": "status", "run": REF}
    assert ("/action", "literal_error") in refusal(AgentRunControlRequest, {**base, "action": "pause", "requestDigest": DIGEST_A})
    assert ("/payload", "json_object") in refusal(AgentRunControlRequest, {**base, "payload": [1], "requestDigest": DIGEST_A})


@pytest.mark.parametrize(
    ("extra", "ok"),
    [
        ({"status": "accepted"}, True),
        ({"status": "replayed"}, True),
        ({"status": "conflict", "existingRequestDigest": DIGEST_B}, True),
        ({"status": "unknown", "message": "lost", "retryable": False}, True),
        ({"status": "conflict"}, False),
        ({"status": "conflict", "existingRequestDigest": DIGEST_A}, False),
        ({"status": "accepted", "existingRequestDigest": DIGEST_B}, False),
        ({"status": "unknown", "message": "lost"}, False),
        ({"status": "unknown", "retryable": False}, False),
    ],
)
def test_control_acknowledgement(extra: dict[str, Any], ok: bool) -> None:
    ack = {"operationId": "op", "requestDigest": DIGEST_A, "run": REF, **extra}
    if ok:
        assert AgentRunControlAcknowledgement.parse_wire(ack).to_wire() == ack
    else:
        assert refusal(AgentRunControlAcknowledgement, ack)


# --- retainedControl ----------------------------------------------------------------

CAPS = {
    "streaming": {"live": True, "replay": True, "detach": True, "turnIdempotency": True},
    "sessions": {"continue": True, "list": False, "messages": False},
    "retainedControl": {"exactRunIdentity": True, "resultIdentity": True, "eventIdentity": True, "cancellationIdempotency": True},
}


def test_retained_control_complete_declaration() -> None:
    assert retained_control_issues(CAPS) == ()
    check_retained_control(CAPS)
    assert retained_control_issues({k: v for k, v in CAPS.items() if k != "retainedControl"}) == ()


@pytest.mark.parametrize(
    ("section", "flag"),
    [("retainedControl", "exactRunIdentity"), ("retainedControl", "resultIdentity"), ("retainedControl", "eventIdentity"),
     ("retainedControl", "cancellationIdempotency"), ("streaming", "replay"), ("streaming", "detach"),
     ("streaming", "turnIdempotency"), ("sessions", "continue")],
)
def test_retained_control_refuses_any_missing_piece(section: str, flag: str) -> None:
    caps = {**CAPS, section: {**CAPS[section], flag: False}}
    issues = retained_control_issues(caps)
    assert [(i.path, i.code) for i in issues] == [("/retainedControl", "retained_control_incomplete")]
    assert f"{section}.{flag}" in issues[0].message
    with pytest.raises(ContractError):
        check_retained_control(caps)


# --- parity fixes (see docs/parity/events.md) ---


@pytest.mark.parametrize("material", [None, "s", 1, True, []])
def test_request_digests_refuse_a_non_object(material: Any) -> None:
    from agent_interface.runtime.control import (
        agent_run_cancellation_request_digest,
        agent_run_control_request_digest,
    )

    for digest in (agent_run_cancellation_request_digest, agent_run_control_request_digest):
        with pytest.raises(ContractError) as caught:
            digest(material)
        assert caught.value.issues[0].path == ""
