"""The in-memory portable context: each rule with one accepted and one refused example."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agent_interface.core.errors import ContractError
from agent_interface.durable.context_transfer import (
    ContextTransferConflict,
    ContextTransferReceiptAccepted,
    ContextTransferReceiptReplayed,
    ContextTransferRequest,
    ContextTransferUnknown,
    context_transfer_request_digest,
    context_transfer_result_matches_request,
)
from agent_interface.durable.native_continuation import NativeContextContinuationRequest
from agent_interface.durable.portable_context import (
    PortableContextOverLimitResult,
    PortableContextReadyResult,
    PortableContextUnsupportedResult,
    portable_context_plan_result_matches_request,
)
from agent_interface.provider.continuation import (
    AgentNativeContextContinuationAdmitted,
    AgentNativeContextContinuationOptions,
    AgentNativeContextContinuationRefused,
    agent_native_context_continuation_result_matches_request,
)
from agent_interface.testing import InMemoryPortableContext, PortableContextCounters
from tests.conformance.portable_fixtures import (
    ACCEPTED_AT,
    DESTINATION,
    MESSAGES,
    RUN,
    plan_request,
    source,
)


def _transfer(plan: Any, operation: str = "move-1", accepted_by: str = "user") -> ContextTransferRequest:
    return ContextTransferRequest.seal(
        {
            "operationId": operation,
            "plan": plan.to_wire(),
            "acceptance": {"planDigest": plan.digest, "acceptedAt": ACCEPTED_AT, "acceptedBy": accepted_by},
        }
    )


def _ready(portable: InMemoryPortableContext, request: Any) -> Any:
    result = asyncio.run(portable.plan(request))
    assert isinstance(result, PortableContextReadyResult)
    return result.plan


def test_planning_keeps_portable_parts_and_omits_the_others_with_a_reason() -> None:
    portable = InMemoryPortableContext()
    request = plan_request("context-1", 32_000)
    result = asyncio.run(portable.plan(request))
    assert isinstance(result, PortableContextReadyResult)
    assert portable_context_plan_result_matches_request(request, result)
    plan = result.plan
    decisions = {decision.message_id: decision for decision in plan.messages}
    assert decisions["message-1"].action == "include"
    assert decisions["message-2"].action == "omit" and decisions["message-2"].reason
    assert plan.requires_acceptance and plan.context.completeness == "partial"
    assert [message.id for message in plan.context.messages] == ["message-1"]
    assert portable.counters() == PortableContextCounters(1, 0, 0, 0, 0)


def test_an_unchanged_complete_source_needs_no_acceptance() -> None:
    portable = InMemoryPortableContext()
    only_text = source(MESSAGES[:1])
    plan = _ready(portable, plan_request("context-1", None, source=only_text))
    assert not plan.requires_acceptance and plan.context.completeness == "complete"


def test_over_budget_answers_over_limit_with_a_boundary_that_fits() -> None:
    portable = InMemoryPortableContext()
    long_text = [
        {**MESSAGES[0], "id": f"message-{index}", "parts": [{"type": "text", "text": "x" * 40}]}
        for index in range(1, 4)
    ]
    fits = _ready(portable, plan_request("fits", None, source=source(long_text)))
    per_message = fits.estimated_tokens // 3
    request = plan_request("over", per_message, source=source(long_text))
    result = asyncio.run(portable.plan(request))
    assert isinstance(result, PortableContextOverLimitResult)
    assert portable_context_plan_result_matches_request(request, result)
    assert result.suggested_boundary_message_id == "message-3"
    tiny = asyncio.run(portable.plan(plan_request("tiny", 1, source=source(long_text))))
    assert isinstance(tiny, PortableContextOverLimitResult) and tiny.suggested_boundary_message_id is None


def test_a_runner_it_does_not_plan_for_is_unsupported() -> None:
    portable = InMemoryPortableContext(runners=["claude"])
    request = plan_request("context-1", 32_000)
    result = asyncio.run(portable.plan(request))
    assert isinstance(result, PortableContextUnsupportedResult)
    assert portable_context_plan_result_matches_request(request, result)
    assert isinstance(asyncio.run(InMemoryPortableContext(runners=["codex"]).plan(request)), PortableContextReadyResult)


def test_an_invalid_plan_request_is_refused_and_not_counted() -> None:
    portable = InMemoryPortableContext()
    tampered = {**plan_request("context-1", 32_000).to_wire(), "requestDigest": "sha256:" + "0" * 64}
    with pytest.raises(ContractError):
        asyncio.run(portable.plan(tampered))
    assert portable.counters().plans == 0


def test_transfer_admits_once_replays_conflicts_and_looks_up() -> None:
    async def scenario() -> None:
        portable = InMemoryPortableContext()
        plan = (await portable.plan(plan_request("context-1", 32_000))).plan
        request = _transfer(plan)
        first = await portable.context_transfer.transfer(request)
        assert isinstance(first, ContextTransferReceiptAccepted)
        assert context_transfer_result_matches_request(request, first)
        again = await portable.context_transfer.transfer(request.to_wire())
        assert isinstance(again, ContextTransferReceiptReplayed) and again.session_id == first.session_id
        changed = _transfer(plan, accepted_by="policy")
        conflict = await portable.context_transfer.transfer(changed)
        assert isinstance(conflict, ContextTransferConflict)
        assert conflict.existing_request_digest == request.request_digest
        assert isinstance(await portable.context_transfer.lookup(request), ContextTransferReceiptReplayed)
        unknown = await portable.context_transfer.lookup(_transfer(plan, operation="never"))
        assert isinstance(unknown, ContextTransferUnknown) and unknown.retryable
        assert portable.session("session-fresh").control_ref.run_id == "run-fresh"
        counters = portable.counters()
        assert (counters.transfers, counters.fresh_sessions) == (1, 1)

    asyncio.run(scenario())


def test_transfer_refuses_before_any_effect() -> None:
    async def scenario() -> None:
        portable = InMemoryPortableContext()
        plan = (await portable.plan(plan_request("context-1", 32_000))).plan
        system = {
            "operationId": "by-system",
            "plan": plan.to_wire(),
            "acceptance": {"planDigest": plan.digest, "acceptedAt": ACCEPTED_AT, "acceptedBy": "system"},
        }
        with pytest.raises(ContractError) as unaccepted:
            await portable.context_transfer.transfer({**system, "requestDigest": context_transfer_request_digest(system)})
        assert unaccepted.value.issues[0].code == "explicit_acceptance_required"
        await portable.context_transfer.transfer(_transfer(plan))
        with pytest.raises(ContractError) as refused:
            await portable.context_transfer.transfer(_transfer(plan, operation="move-2"))
        assert refused.value.issues[0].code == "destination_not_fresh"
        same_as_source = plan_request("context-2", 32_000, destination={**DESTINATION, "sessionId": RUN["sessionId"]})
        other = (await portable.plan(same_as_source)).plan
        with pytest.raises(ContractError):
            await portable.context_transfer.transfer(_transfer(other, operation="move-3"))
        counters = portable.counters()
        assert (counters.transfers, counters.fresh_sessions) == (1, 1)

    asyncio.run(scenario())


def test_a_failed_admission_frees_the_operation_for_a_retry() -> None:
    async def scenario() -> None:
        portable = InMemoryPortableContext()
        transfer = portable.context_transfer
        original = transfer._admit
        calls = {"n": 0}

        async def flaky(request: Any) -> Any:
            calls["n"] += 1
            if calls["n"] == 1:
                raise ConnectionError("provider went away")
            return await original(request)

        transfer._admit = flaky  # type: ignore[method-assign]
        plan = (await portable.plan(plan_request("context-1", 32_000))).plan
        with pytest.raises(ConnectionError):
            await transfer.transfer(_transfer(plan))
        assert isinstance(await transfer.lookup(_transfer(plan)), ContextTransferUnknown)
        assert isinstance(await transfer.transfer(_transfer(plan)), ContextTransferReceiptAccepted)

    asyncio.run(scenario())


def test_native_continuation_sends_only_the_new_turn_and_moves_the_boundary() -> None:
    async def scenario() -> None:
        portable = InMemoryPortableContext()
        session = portable.open_session(run=RUN, messages=MESSAGES)
        proof = await session.context_boundary()
        turn = {"prompt": "Continue."}
        request = NativeContextContinuationRequest.seal(operation_id="c-1", turn=turn, run=RUN, expected_boundary=proof)
        admitted: list[Any] = []
        outcome = await session.continue_native(
            request, AgentNativeContextContinuationOptions(turn=turn, on_admission=admitted.append)
        )
        assert isinstance(outcome, AgentNativeContextContinuationAdmitted)
        assert agent_native_context_continuation_result_matches_request(request, outcome)
        assert outcome.acknowledgement.history_messages_sent == 0
        assert [sent.prompt for sent in session.sent_turns] == ["Continue."]
        assert admitted == [outcome.control_ref] and session.control_ref == outcome.control_ref
        moved = await session.context_boundary()
        assert moved.boundary != proof.boundary
        # The old boundary is now stale: a new operation from it is refused without a run.
        stale = NativeContextContinuationRequest.seal(
            operation_id="c-2", turn=turn, run=outcome.control_ref, expected_boundary={**moved.to_wire(), "boundary": proof.boundary.to_wire()}
        )
        refused = await session.continue_native(stale, AgentNativeContextContinuationOptions(turn=turn))
        assert isinstance(refused, AgentNativeContextContinuationRefused)
        assert refused.acknowledgement.status == "boundary_mismatch"
        assert session.continuations == 1

    asyncio.run(scenario())


def test_open_session_refuses_a_duplicate_and_session_refuses_an_unknown_id() -> None:
    portable = InMemoryPortableContext()
    portable.open_session(run=RUN, messages=MESSAGES)
    with pytest.raises(ContractError):
        portable.open_session(run=RUN)
    with pytest.raises(ContractError):
        portable.session("missing")
    assert portable.session(RUN["sessionId"]).id == RUN["sessionId"]
