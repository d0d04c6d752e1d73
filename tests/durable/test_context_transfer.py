from __future__ import annotations

from typing import Any

import pytest

from agent_interface.core.canonical import canonical_digest
from agent_interface.core.model import wire_adapter
from agent_interface.core.registry import _TYPES as REGISTERED
from agent_interface.durable.context_transfer import (
    ContextTransferReceipt,
    ContextTransferRequest,
    ContextTransferResult,
    context_transfer_receipt_matches,
    context_transfer_request_digest,
    context_transfer_result_matches_request,
)
from agent_interface.durable.portable_context import (
    PortableContextPlan,
    PortableConversationContext,
)
from tests.durable.test_portable_context_fixtures import (
    absent,
    deep,
    destination,
    digest_of,
    plan,
    refusals,
    source,
    source_material,
)

RESULT = wire_adapter(ContextTransferResult)
RECEIPT = wire_adapter(ContextTransferReceipt)


def acceptance(accepted_by: str = "user", plan_digest: str | None = None) -> dict[str, Any]:
    return {
        "planDigest": plan_digest or plan().digest,
        "acceptedAt": "2026-08-01T20:01:00.000Z",
        "acceptedBy": accepted_by,
    }


def transfer_request(operation_id: str = "transfer-1") -> ContextTransferRequest:
    return ContextTransferRequest.seal(
        {"operationId": operation_id, "plan": plan(), "acceptance": acceptance()}
    )


def receipt(request: ContextTransferRequest, **changes: Any) -> dict[str, Any]:
    sealed = request.plan
    answer: dict[str, Any] = {
        "status": "accepted",
        "operationId": request.operation_id,
        "requestDigest": request.request_digest,
        "planDigest": sealed.digest,
        "contextDigest": sealed.context.digest,
        "source": sealed.source.source.to_wire(),
        "destination": sealed.destination.to_wire(),
        "provider": "cli-bridge",
        "environmentId": sealed.destination.environment_id,
        "sessionId": sealed.destination.session_id,
        "runId": sealed.destination.run_id,
        "executionId": sealed.destination.execution_id,
        "sessionCreatedForOperationId": request.operation_id,
        "sessionCreatedAt": "2026-08-01T20:01:00.500Z",
        "transferredMessageIds": ["message-1"],
        "omittedMessageIds": ["message-2"],
        "admittedAt": "2026-08-01T20:01:01.000Z",
    }
    answer.update(changes)
    return answer


# --- request -------------------------------------------------------------------------------


def test_request_digest_binds_operation_plan_digest_and_acceptance() -> None:
    request = transfer_request()
    expected = canonical_digest(
        {"operationId": "transfer-1", "planDigest": plan().digest, "acceptance": acceptance()}
    )
    assert request.request_digest == expected
    assert context_transfer_request_digest(request) == expected
    assert ContextTransferRequest.parse_wire(request.to_wire()) == request
    wire = request.to_wire()
    wire["operationId"] = "transfer-2"
    assert ("/requestDigest", "digest_mismatch") in refusals(lambda: ContextTransferRequest.parse_wire(wire))


def test_acceptance_must_name_the_executed_plan() -> None:
    material = {"operationId": "transfer-1", "plan": plan(), "acceptance": acceptance(plan_digest=source().digest)}
    assert ("/acceptance/planDigest", "plan_digest_mismatch") in refusals(
        lambda: ContextTransferRequest.seal(material)
    )


def test_transformed_plan_refuses_system_acceptance() -> None:
    material = {"operationId": "transfer-1", "plan": plan(), "acceptance": acceptance("system")}
    assert ("/acceptance/acceptedBy", "explicit_acceptance_required") in refusals(
        lambda: ContextTransferRequest.seal(material)
    )
    policy = {"operationId": "transfer-1", "plan": plan(), "acceptance": acceptance("policy")}
    assert ContextTransferRequest.seal(policy).acceptance.accepted_by == "policy"


def partial_unchanged_plan() -> PortableContextPlan:
    base = source_material()
    base["completeness"] = "partial"
    base["messages"] = base["messages"][:1]
    sealed = PortableConversationContext.seal(base).to_wire()
    return PortableContextPlan.seal(
        {
            "planId": "partial-plan",
            "source": sealed,
            "destination": destination(),
            "messages": [
                {"messageId": "message-1", "action": "include", "parts": [{"partIndex": 0, "action": "include"}]}
            ],
            "context": sealed,
            "estimatedTokens": 5,
            "requiresAcceptance": True,
        }
    )


def test_partial_plan_needs_explicit_acceptance_even_without_transformation() -> None:
    partial = partial_unchanged_plan()
    material = {
        "operationId": "partial-transfer",
        "plan": partial,
        "acceptance": acceptance("system", partial.digest),
    }
    assert ("/acceptance/acceptedBy", "explicit_acceptance_required") in refusals(
        lambda: ContextTransferRequest.seal(material)
    )
    material["acceptance"] = acceptance("user", partial.digest)
    assert ContextTransferRequest.seal(material).plan.requires_acceptance


def test_unchanged_complete_plan_may_be_accepted_by_system() -> None:
    base = source_material()
    base["messages"] = base["messages"][:1]
    sealed = PortableConversationContext.seal(base).to_wire()
    unchanged = PortableContextPlan.seal(
        {
            "planId": "unchanged",
            "source": sealed,
            "destination": destination(),
            "messages": [
                {"messageId": "message-1", "action": "include", "parts": [{"partIndex": 0, "action": "include"}]}
            ],
            "context": sealed,
            "requiresAcceptance": False,
        }
    )
    request = ContextTransferRequest.seal(
        {"operationId": "t", "plan": unchanged, "acceptance": acceptance("system", unchanged.digest)}
    )
    assert request.acceptance.accepted_by == "system"


# --- receipts ----------------------------------------------------------------------------


def test_receipt_matches_the_accepted_plan() -> None:
    request = transfer_request()
    assert context_transfer_receipt_matches(request, receipt(request))
    assert context_transfer_result_matches_request(request, receipt(request))
    assert context_transfer_result_matches_request(request, receipt(request, status="replayed"))


@pytest.mark.parametrize(
    "changes",
    [
        {"sessionId": "session-source"},
        {"sessionCreatedAt": "2026-08-01T20:00:59.999Z"},
        {"environmentId": "environment-source", "sessionId": "session-new-in-source-environment"},
        {"environmentId": "environment-source", "sessionId": "session-source"},
        {"destination": {**destination(), "runner": "kimi"}},
        {"sessionCreatedForOperationId": "another-transfer"},
        {"sessionId": "session-other", "planDigest": digest_of("c")},
        {"contextDigest": digest_of("c")},
        {"provider": "other-provider"},
        {"runId": "run-source"},
        {"executionId": "execution-other"},
        {"transferredMessageIds": ["message-1", "message-2"], "omittedMessageIds": []},
        {"transferredMessageIds": [], "omittedMessageIds": ["message-2"]},
        {"operationId": "another-operation"},
        {"requestDigest": digest_of("8")},
        {"source": {**source().source.to_wire(), "branchId": "b"}},
    ],
)
def test_receipt_for_another_destination_or_operation_is_refused(changes: dict[str, Any]) -> None:
    request = transfer_request()
    assert not context_transfer_receipt_matches(request, receipt(request, **changes))
    assert not context_transfer_result_matches_request(request, receipt(request, **changes))


def test_receipt_admitted_before_its_session_existed_is_invalid() -> None:
    request = transfer_request()
    late = receipt(request, admittedAt="2026-08-01T20:01:00.250Z")
    assert ("/sessionCreatedAt", "session_created_after_admission") in refusals(lambda: RECEIPT.parse(late))
    assert not context_transfer_receipt_matches(request, late)


def test_receipt_message_lists_are_disjoint_and_unique() -> None:
    request = transfer_request()
    found = refusals(lambda: RECEIPT.parse(receipt(request, transferredMessageIds=["message-1", "message-1"])))
    assert ("/transferredMessageIds", "duplicate_message_id") in found
    found = refusals(lambda: RECEIPT.parse(receipt(request, omittedMessageIds=["message-2", "message-2"])))
    assert ("/omittedMessageIds", "duplicate_message_id") in found
    found = refusals(lambda: RECEIPT.parse(receipt(request, omittedMessageIds=["message-1", "message-2"])))
    assert ("/omittedMessageIds", "message_both_transferred_and_omitted") in found


def test_receipt_refuses_an_empty_provider() -> None:
    request = transfer_request()
    assert ("/provider", "string_too_short") in refusals(lambda: RECEIPT.parse(receipt(request, provider="")))
    assert not context_transfer_receipt_matches(request, receipt(request, provider=""))


# --- every outcome --------------------------------------------------------------------------


def outcome(request: ContextTransferRequest, status: str) -> dict[str, Any]:
    if status in ("accepted", "replayed"):
        return receipt(request, status=status)
    base = {"status": status, "operationId": request.operation_id, "requestDigest": request.request_digest}
    if status == "conflict":
        return {**base, "existingRequestDigest": digest_of("9")}
    return {**base, "message": "not completed", "retryable": status == "transport_failure"}


@pytest.mark.parametrize("status", ["accepted", "replayed", "conflict", "unknown", "transport_failure"])
def test_every_outcome_is_bound_to_operation_and_digest(status: str) -> None:
    request = transfer_request()
    answer = outcome(request, status)
    assert RESULT.parse(answer).status == status
    assert context_transfer_result_matches_request(request, answer)
    assert not context_transfer_result_matches_request(request, {**answer, "operationId": "another-operation"})
    assert not context_transfer_result_matches_request(request, {**answer, "requestDigest": digest_of("8")})
    assert not context_transfer_result_matches_request(transfer_request("transfer-other"), answer)


def test_conflict_must_name_a_different_request() -> None:
    request = transfer_request()
    conflict = {
        "status": "conflict",
        "operationId": request.operation_id,
        "requestDigest": digest_of("1"),
        "existingRequestDigest": request.request_digest,
    }
    assert RESULT.parse(conflict).status == "conflict"
    selfish = {**conflict, "requestDigest": request.request_digest}
    assert ("/existingRequestDigest", "self_conflict") in refusals(lambda: RESULT.parse(selfish))
    assert not context_transfer_result_matches_request(request, selfish)


def test_unknown_outcome_states_message_and_retry_safety() -> None:
    request = transfer_request()
    answer = outcome(request, "unknown")
    del answer["retryable"]
    assert absent("/retryable", "missing", refusals(lambda: RESULT.parse(answer)))
    assert not context_transfer_result_matches_request(request, answer)


def test_request_with_incomplete_source_identity_is_refused() -> None:
    wire = transfer_request().to_wire()
    broken = deep(wire)
    del broken["plan"]["source"]["source"]["sessionId"]
    del broken["plan"]["context"]["source"]["sessionId"]
    assert ("/plan/source/source/sessionId", "missing") in refusals(lambda: ContextTransferRequest.parse_wire(broken))


def test_registered_names() -> None:
    for name in ("ContextPlanAcceptance", "ContextTransferRequest", "ContextTransferReceipt", "ContextTransferResult"):
        assert wire_adapter(REGISTERED[name], name).json_schema()
