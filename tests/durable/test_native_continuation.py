from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agent_interface.core.canonical import canonical_digest
from agent_interface.core.errors import ContractError
from agent_interface.core.model import wire_adapter
from agent_interface.core.registry import _TYPES as REGISTERED
from agent_interface.durable.native_continuation import (
    NativeContextBoundaryProof,
    NativeContextContinuationAcknowledgement,
    NativeContextContinuationRequest,
    NativeContextContinuationTurn,
    native_context_continuation_acknowledgement_matches,
    native_context_continuation_request_digest,
    native_context_continuation_turn_digest,
)
from agent_interface.provider.continuation import (
    AgentNativeContextContinuationAdmitted,
    AgentNativeContextContinuationOptions,
    AgentNativeContextContinuationRefused,
    AgentNativeContextContinuationResult,
    NativeContinuationAborted,
    NativeContinuationLedger,
    agent_native_context_continuation_result_matches_request,
)
from agent_interface.provider.turn import AgentTurnResult
from agent_interface.runtime.control import AgentExactRunControlRef
from tests.durable.test_portable_context_fixtures import A64, absent, digest_of, refusals, source

RESULT = wire_adapter(AgentNativeContextContinuationResult)

EXACT_RUN = {
    "runId": "run-source",
    "provider": "cli-bridge",
    "environmentId": "environment-source",
    "sessionId": "session-source",
    "executionId": "execution-source",
    "requestDigest": A64,
}


def proof(**changes: Any) -> dict[str, Any]:
    value = {
        **EXACT_RUN,
        "boundary": {"kind": "messages", "messageIds": ["message-1", "message-2"], "digest": source().digest},
        "observedAt": "2026-08-01T20:02:00.000Z",
    }
    value.update(changes)
    return value


TURN = {"prompt": "continue"}


def request(operation_id: str = "continue-1", turn: Any = TURN, run: Any = None) -> NativeContextContinuationRequest:
    return NativeContextContinuationRequest.seal(
        operation_id=operation_id, turn=turn, run=run or EXACT_RUN, expected_boundary=proof()
    )


def ack(req: NativeContextContinuationRequest, status: str = "accepted", **fields: Any) -> dict[str, Any]:
    value = {
        "operationId": req.operation_id,
        "requestDigest": req.request_digest,
        "status": status,
        "historyMessagesSent": 0,
    }
    if status in ("accepted", "replayed"):
        value["actualBoundary"] = proof()
    value.update(fields)
    return value


# --- digests ---------------------------------------------------------------------------------


def test_turn_digest_is_canonical_digest_of_the_turn() -> None:
    assert native_context_continuation_turn_digest(TURN) == canonical_digest(TURN)
    with_parts = {"prompt": "go", "parts": [{"type": "text", "text": "x"}], "model": "m", "context": {"a": 1}}
    assert native_context_continuation_turn_digest(with_parts) == canonical_digest(with_parts)
    assert native_context_continuation_turn_digest({"prompt": "other"}) != canonical_digest(TURN)


def test_turn_refuses_runtime_controls() -> None:
    assert ("/timeoutMs", "extra_forbidden") in refusals(
        lambda: native_context_continuation_turn_digest({"prompt": "x", "timeoutMs": 5})
    )
    assert ("/signal", "extra_forbidden") in refusals(
        lambda: NativeContextContinuationTurn.parse_wire({"prompt": "x", "signal": {}})
    )


def test_request_digest_binds_operation_turn_run_and_boundary() -> None:
    req = request()
    material = {"operationId": "continue-1", "turnDigest": canonical_digest(TURN), "run": EXACT_RUN, "expectedBoundary": proof()}
    assert req.request_digest == canonical_digest(material)
    assert native_context_continuation_request_digest(material) == req.request_digest
    assert NativeContextContinuationRequest.parse_wire(req.to_wire()) == req
    changed = {**req.to_wire(), "turnDigest": digest_of("c")}
    assert ("/requestDigest", "digest_mismatch") in refusals(lambda: NativeContextContinuationRequest.parse_wire(changed))


@pytest.mark.parametrize("field", ["sessionId", "runId", "provider", "executionId", "environmentId"])
def test_proof_must_match_the_continued_run(field: str) -> None:
    wire = request().to_wire()
    wire["run"][field] = "other-value"
    assert ("/expectedBoundary", "boundary_run_mismatch") in refusals(
        lambda: NativeContextContinuationRequest.parse_wire(wire)
    )


def test_boundary_kinds_and_unique_message_ids() -> None:
    for boundary in (
        {"kind": "token", "token": "t-1"},
        {"kind": "revision", "revision": "r-1"},
        {"kind": "digest", "digest": digest_of("d")},
    ):
        assert NativeContextBoundaryProof.parse_wire(proof(boundary=boundary)).boundary.kind == boundary["kind"]
    duplicated = proof(boundary={"kind": "messages", "messageIds": ["message-1", "message-1"], "digest": source().digest})
    assert ("/boundary/messageIds", "duplicate_message_id") in refusals(
        lambda: NativeContextBoundaryProof.parse_wire(duplicated)
    )
    assert refusals(lambda: NativeContextBoundaryProof.parse_wire(proof(boundary={"kind": "offset", "offset": 1})))


def test_run_must_be_exact() -> None:
    loose = {k: v for k, v in EXACT_RUN.items() if k != "requestDigest"}
    with pytest.raises(ContractError):
        request(run=loose)


# --- acknowledgement -----------------------------------------------------------------------------


@pytest.mark.parametrize("status", ["accepted", "replayed"])
def test_admitted_acknowledgement_matches(status: str) -> None:
    req = request()
    assert native_context_continuation_acknowledgement_matches(req, ack(req, status))
    assert not native_context_continuation_acknowledgement_matches(req, ack(req, status, operationId="continue-other"))
    assert not native_context_continuation_acknowledgement_matches(req, ack(req, status, requestDigest=digest_of("2")))


def test_acknowledgement_with_copied_history_parses_but_never_matches() -> None:
    req = request()
    nonzero = ack(req, historyMessagesSent=2)
    assert NativeContextContinuationAcknowledgement.parse_wire(nonzero).history_messages_sent == 2
    assert not native_context_continuation_acknowledgement_matches(req, nonzero)


def test_acknowledgement_boundary_must_be_the_expected_one() -> None:
    req = request()
    assert not native_context_continuation_acknowledgement_matches(
        req, ack(req, actualBoundary=proof(boundary={"kind": "revision", "revision": "wrong"}))
    )
    assert not native_context_continuation_acknowledgement_matches(
        req, ack(req, actualBoundary=proof(observedAt="2026-08-01T20:01:59.999Z"))
    )
    assert native_context_continuation_acknowledgement_matches(
        req, ack(req, actualBoundary=proof(observedAt="2026-08-01T20:02:00.001Z"))
    )
    assert not native_context_continuation_acknowledgement_matches(req, ack(req, actualBoundary=proof(runId="run-other")))
    without = ack(req)
    del without["actualBoundary"]
    assert absent(
        "/actualBoundary",
        "actual_boundary_missing",
        refusals(lambda: NativeContextContinuationAcknowledgement.parse_wire(without)),
    )
    assert not native_context_continuation_acknowledgement_matches(req, without)


FAILURE_FIELDS: dict[str, dict[str, Any]] = {
    "conflict": {"existingRequestDigest": digest_of("2")},
    "boundary_mismatch": {"actualBoundary": proof(boundary={"kind": "revision", "revision": "different"})},
    "unverified": {},
    "unknown_session": {},
    "transport_failure": {"message": "network error", "retryable": True},
}


@pytest.mark.parametrize("status", list(FAILURE_FIELDS))
def test_failed_acknowledgements_never_match(status: str) -> None:
    req = request("continue-failure")
    value = ack(req, status, **FAILURE_FIELDS[status])
    assert NativeContextContinuationAcknowledgement.parse_wire(value).status == status
    assert not native_context_continuation_acknowledgement_matches(req, value)
    outcome = RESULT.parse({"acknowledgement": value})
    assert isinstance(outcome, AgentNativeContextContinuationRefused)
    assert not agent_native_context_continuation_result_matches_request(req, outcome)


def test_acknowledgement_field_rules() -> None:
    req = request()
    conflict = ack(req, "conflict")
    assert absent(
        "/existingRequestDigest", "existing_digest_missing", refusals(lambda: NativeContextContinuationAcknowledgement.parse_wire(conflict))
    )
    selfish = ack(req, "conflict", existingRequestDigest=req.request_digest)
    assert ("/existingRequestDigest", "self_conflict") in refusals(
        lambda: NativeContextContinuationAcknowledgement.parse_wire(selfish)
    )
    stray = ack(req, existingRequestDigest=digest_of("2"))
    assert ("/existingRequestDigest", "existing_digest_unexpected") in refusals(
        lambda: NativeContextContinuationAcknowledgement.parse_wire(stray)
    )
    failure = ack(req, "transport_failure", message="network error")
    assert absent(
        "/retryable", "retryable_missing", refusals(lambda: NativeContextContinuationAcknowledgement.parse_wire(failure))
    )
    silent = ack(req, "transport_failure", retryable=True)
    assert absent("/message", "message_missing", refusals(lambda: NativeContextContinuationAcknowledgement.parse_wire(silent)))


# --- AgentNativeContextContinuationResult --------------------------------------------------------


def admitted(req: NativeContextContinuationRequest, **changes: Any) -> dict[str, Any]:
    value = {
        "acknowledgement": ack(req),
        "result": {"text": "continued", "success": True, "sessionId": req.run.session_id},
        "controlRef": req.run.to_wire(),
    }
    value.update(changes)
    return value


def test_admitted_outcome_matches_request_and_retained_session() -> None:
    req = request()
    outcome = RESULT.parse(admitted(req))
    assert isinstance(outcome, AgentNativeContextContinuationAdmitted)
    assert isinstance(outcome.result, AgentTurnResult)
    assert RESULT.to_wire(outcome) == admitted(req)
    assert agent_native_context_continuation_result_matches_request(req, outcome)
    newer_run = {**req.run.to_wire(), "runId": "run-after", "executionId": "execution-after"}
    assert agent_native_context_continuation_result_matches_request(req, admitted(req, controlRef=newer_run))


@pytest.mark.parametrize(
    "control_change", [{"provider": "provider-wrong"}, {"environmentId": "environment-x"}, {"sessionId": "session-x"}]
)
def test_outcome_in_another_session_is_refused(control_change: dict[str, Any]) -> None:
    req = request()
    moved = {**req.run.to_wire(), **control_change}
    assert not agent_native_context_continuation_result_matches_request(req, admitted(req, controlRef=moved))


def test_outcome_result_session_must_be_the_current_one() -> None:
    req = request()
    other = admitted(req, result={"text": "x", "success": True, "sessionId": "session-x"})
    assert not agent_native_context_continuation_result_matches_request(req, other)
    unsaid = admitted(req, result={"text": "x", "success": True})
    assert agent_native_context_continuation_result_matches_request(req, unsaid)


def test_outcome_bound_to_operation_and_digest() -> None:
    req = request()
    assert not agent_native_context_continuation_result_matches_request(
        req, admitted(req, acknowledgement=ack(req, operationId="continue-other"))
    )
    assert not agent_native_context_continuation_result_matches_request(
        req, admitted(req, acknowledgement=ack(req, requestDigest=digest_of("5")))
    )
    assert not agent_native_context_continuation_result_matches_request(request("continue-2"), admitted(req))


def test_outcome_shape_rules() -> None:
    req = request()
    receipt_like = admitted(req, result={"text": "x", "success": True, "contextTransferReceipt": {"status": "accepted"}})
    assert refusals(lambda: RESULT.parse(receipt_like))
    failing = {"acknowledgement": ack(req, "transport_failure", message="network error", retryable=False)}
    assert ("/acknowledgement/retryable", "transport_failure_not_retryable") in refusals(lambda: RESULT.parse(failing))
    no_result = {"acknowledgement": ack(req)}
    assert ("/acknowledgement/status", "status_admitted_without_result") in refusals(lambda: RESULT.parse(no_result))
    with_result = admitted(req, acknowledgement=ack(req, "unverified"))
    assert ("/acknowledgement/status", "status_not_admitted") in refusals(lambda: RESULT.parse(with_result))


# --- the ledger, driven by a fake session ----------------------------------------------------------


class FakeSession:
    """A retained session that records what it was sent and lets the test order events."""

    def __init__(self, boundary: dict[str, Any] | None = None) -> None:
        self.boundary = boundary if boundary is not None else proof()
        self.sent: list[dict[str, Any]] = []
        self.events: list[str] = []
        self.release = asyncio.Event()
        self.ledger = NativeContinuationLedger(observe_boundary=self.observe, dispatch=self.dispatch)

    async def observe(self) -> NativeContextBoundaryProof | None:
        return None if self.boundary == {} else NativeContextBoundaryProof.parse_wire(self.boundary)

    async def dispatch(
        self, req: NativeContextContinuationRequest, turn: NativeContextContinuationTurn
    ) -> tuple[AgentExactRunControlRef, Any]:
        self.sent.append(turn.to_wire())
        self.events.append("dispatched")
        run = AgentExactRunControlRef.parse_wire(
            {**req.run.to_wire(), "runId": f"run-continued-{len(self.sent)}", "executionId": f"execution-{len(self.sent)}"}
        )

        async def finish() -> AgentTurnResult:
            await self.release.wait()
            self.events.append("terminal")
            return AgentTurnResult(text="continued", success=True, session_id=req.run.session_id)

        return run, finish()

    async def continue_native(self, req: Any, options: AgentNativeContextContinuationOptions) -> Any:
        return await self.ledger.continue_native(req, options)


def options(turn: Any = TURN, **fields: Any) -> AgentNativeContextContinuationOptions:
    return AgentNativeContextContinuationOptions(turn=NativeContextContinuationTurn.parse_wire(turn), **fields)


def test_accepted_continuation_sends_only_the_new_turn_and_admits_once() -> None:
    async def scenario() -> None:
        session = FakeSession()
        admissions: list[AgentExactRunControlRef] = []

        async def on_admission(run: AgentExactRunControlRef) -> None:
            session.events.append("admitted")
            admissions.append(run)
            session.release.set()

        req = request()
        outcome = await session.continue_native(req, options(on_admission=on_admission))
        assert isinstance(outcome, AgentNativeContextContinuationAdmitted)
        assert outcome.acknowledgement.status == "accepted"
        assert outcome.acknowledgement.history_messages_sent == 0
        assert session.sent == [TURN]
        assert session.events == ["dispatched", "admitted", "terminal"]
        assert len(admissions) == 1 and admissions[0] == outcome.control_ref
        assert outcome.control_ref.run_id == "run-continued-1"
        assert agent_native_context_continuation_result_matches_request(req, outcome)

        replay = await session.continue_native(req, options(on_admission=on_admission))
        assert isinstance(replay, AgentNativeContextContinuationAdmitted)
        assert replay.acknowledgement.status == "replayed"
        assert replay.result == outcome.result and replay.control_ref == outcome.control_ref
        assert agent_native_context_continuation_result_matches_request(req, replay)
        assert len(session.sent) == 1 and len(admissions) == 1

    asyncio.run(scenario())


def test_changed_request_with_same_operation_conflicts_without_dispatch() -> None:
    async def scenario() -> None:
        session = FakeSession()
        session.release.set()
        first = request()
        await session.continue_native(first, options())
        changed_turn = {"prompt": "do something else"}
        changed = request(turn=changed_turn)
        outcome = await session.continue_native(changed, options(changed_turn))
        assert isinstance(outcome, AgentNativeContextContinuationRefused)
        assert outcome.acknowledgement.status == "conflict"
        assert outcome.acknowledgement.existing_request_digest == first.request_digest
        assert outcome.acknowledgement.request_digest == changed.request_digest
        assert len(session.sent) == 1 and session.ledger.dispatch_count == 1
        assert not agent_native_context_continuation_result_matches_request(changed, outcome)

    asyncio.run(scenario())


def test_turn_that_does_not_match_its_digest_is_refused_before_dispatch() -> None:
    async def scenario() -> None:
        session = FakeSession()
        with pytest.raises(ContractError) as caught:
            await session.continue_native(request(), options({"prompt": "tampered"}))
        assert caught.value.issues[0].code == "turn_digest_mismatch"
        assert session.sent == []

    asyncio.run(scenario())


@pytest.mark.parametrize(
    ("boundary", "status"),
    [
        ({}, "unverified"),
        (proof(runId="run-elsewhere"), "unknown_session"),
        (proof(boundary={"kind": "revision", "revision": "moved-on"}), "boundary_mismatch"),
    ],
)
def test_unproven_boundary_is_refused_without_dispatch(boundary: dict[str, Any], status: str) -> None:
    async def scenario() -> None:
        session = FakeSession(boundary)
        req = request()
        outcome = await session.continue_native(req, options())
        assert isinstance(outcome, AgentNativeContextContinuationRefused)
        assert outcome.acknowledgement.status == status
        assert session.sent == []
        assert not agent_native_context_continuation_result_matches_request(req, outcome)
        assert RESULT.parse(RESULT.to_wire(outcome)) == outcome

    asyncio.run(scenario())


def test_timeout_is_a_retryable_failure_and_retry_replays_the_same_run() -> None:
    async def scenario() -> None:
        session = FakeSession()
        req = request()
        admissions: list[AgentExactRunControlRef] = []
        first = await session.continue_native(req, options(timeout_ms=1, on_admission=admissions.append))
        assert isinstance(first, AgentNativeContextContinuationRefused)
        assert first.acknowledgement.status == "transport_failure"
        assert first.acknowledgement.retryable is True
        session.release.set()
        second = await session.continue_native(req, options(on_admission=admissions.append))
        assert isinstance(second, AgentNativeContextContinuationAdmitted)
        assert second.acknowledgement.status == "replayed"
        assert len(session.sent) == 1 and len(admissions) == 1
        assert agent_native_context_continuation_result_matches_request(req, second)

    asyncio.run(scenario())


def test_abort_ends_the_attempt_and_retry_replays() -> None:
    async def scenario() -> None:
        session = FakeSession()
        req = request()
        abort = asyncio.Event()
        abort.set()
        with pytest.raises(NativeContinuationAborted):
            await session.continue_native(req, options(abort=abort))
        session.release.set()
        again = await session.continue_native(req, options())
        assert isinstance(again, AgentNativeContextContinuationAdmitted)
        assert again.acknowledgement.status == "replayed"
        assert session.ledger.dispatch_count == 1

    asyncio.run(scenario())


def test_registered_names() -> None:
    for name in (
        "NativeContextBoundary",
        "NativeContextBoundaryProof",
        "NativeContextContinuationTurn",
        "NativeContextContinuationRequest",
        "NativeContextContinuationAcknowledgement",
        "AgentNativeContextContinuationResult",
    ):
        assert wire_adapter(REGISTERED[name], name).json_schema()


def test_outcome_acknowledgement_drops_unknown_keys_at_every_depth() -> None:
    """The reference reads the acknowledgement as an intersection with a plain object: zod
    reports an unknown key there only when both sides refuse it, so an unknown key anywhere
    in the acknowledgement (its proof and boundary included) is stripped. Outside the
    acknowledgement the result stays strict."""
    acknowledgement = {
        "operationId": "continue-1",
        "requestDigest": digest_of("a"),
        "status": "unknown_session",
        "historyMessagesSent": 0,
    }
    parsed = RESULT.parse({"acknowledgement": {**acknowledgement, "vendorNote": 1}})
    assert RESULT.to_wire(parsed) == {"acknowledgement": acknowledgement}
    with pytest.raises(ContractError):
        RESULT.parse({"acknowledgement": acknowledgement, "vendorNote": 1})
    nested = {**acknowledgement, "status": "boundary_mismatch", "actualBoundary": proof()}
    expected = RESULT.to_wire(RESULT.parse({"acknowledgement": nested}))
    with_proof_key = {**nested, "actualBoundary": {**proof(), "vendorNote": 1}}
    boundary = {**proof()["boundary"], "vendorNote": 1}
    with_boundary_key = {**nested, "actualBoundary": {**proof(), "boundary": boundary}}
    for document in (with_proof_key, with_boundary_key):
        assert RESULT.to_wire(RESULT.parse({"acknowledgement": document})) == expected


def test_outcome_acknowledgement_with_a_dropped_key_skips_the_refinements_zod_skips() -> None:
    """zod skips the refinements of an object whose subtree held an unknown key (the strict
    side saw it), then the intersection drops the key: recorded from the reference 1.6.0."""
    conflict = {
        "operationId": "continue-1",
        "requestDigest": digest_of("a"),
        "status": "conflict",
        "historyMessagesSent": 0,
    }
    assert ("/acknowledgement/existingRequestDigest", "existing_digest_missing") in refusals(
        lambda: RESULT.parse({"acknowledgement": conflict})
    )
    RESULT.parse({"acknowledgement": {**conflict, "vendorNote": 1}})
    # Type and bound errors are still refusals.
    with pytest.raises(ContractError):
        RESULT.parse({"acknowledgement": {**conflict, "operationId": "", "vendorNote": 1}})
    # The outer rule (a transport failure must be retryable) is not inside the intersection.
    failure = {**conflict, "status": "transport_failure", "message": "m", "retryable": False}
    with pytest.raises(ContractError):
        RESULT.parse({"acknowledgement": {**failure, "vendorNote": 1}})


def _nested_arrays(nodes: int) -> dict[str, Any]:
    # isBoundedJsonValue counts every array and object twice: the record, the array "a",
    # k inner arrays of 8 zeros (9 values + 1 extra each), and r loose zeros.
    inner, loose = divmod(nodes - 4, 10)
    return {"a": [[0] * 8 for _ in range(inner)] + [0] * loose}


@pytest.mark.parametrize(("nodes", "accepted"), [(8_180, True), (8_192, True), (8_193, False), (8_202, False)])
def test_turn_records_count_containers_twice(nodes: int, accepted: bool) -> None:
    """Reference parity: a record of about 8,190 JSON values is refused once its objects
    and arrays, counted twice, pass the 8,192 node bound."""
    turn = {"context": _nested_arrays(nodes)}
    if accepted:
        NativeContextContinuationTurn.parse_wire(turn)
    else:
        assert ("/context", "bounded_json") in refusals(lambda: NativeContextContinuationTurn.parse_wire(turn))
