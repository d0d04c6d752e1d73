"""The portable-context kit: the in-memory implementation passes it, and each deliberately
broken implementation fails it with the check that names its broken promise."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest

from agent_interface.conformance import (
    PORTABLE_CONTEXT_CHECKS,
    run_portable_context_conformance,
    run_portable_context_conformance_async,
)
from agent_interface.conformance.report import ConformanceReport, ConformanceUsageError
from agent_interface.durable.context_transfer import ContextTransferRequest
from agent_interface.durable.native_continuation import NativeContextContinuationRequest
from agent_interface.provider.continuation import AgentNativeContextContinuationOptions
from agent_interface.testing import InMemoryPortableContext
from tests.conformance.broken_portable_context import CORRECT_HAND_WRITTEN, VARIANTS
from tests.conformance.portable_fixtures import (
    ACCEPTED_AT,
    DESTINATION,
    MESSAGES,
    RUN,
    declared_capabilities,
    kit_options,
    plan_request,
    source,
)


def _run(portable: InMemoryPortableContext, **overrides: Any) -> ConformanceReport:
    session = portable.open_session(run=RUN, messages=MESSAGES)
    return run_portable_context_conformance(**kit_options(portable, session, **overrides))


def test_in_memory_implementation_passes_every_check() -> None:
    report = _run(InMemoryPortableContext(), capabilities=declared_capabilities(), admission_control=None)
    report.raise_for_failures()
    assert report.names("passed") == PORTABLE_CONTEXT_CHECKS
    assert report.not_certified


def test_hand_written_continuation_without_a_fault_passes() -> None:
    # The broken continuation variants share this code: with no fault it conforms,
    # so each variant fails because of its one fault.
    _run(CORRECT_HAND_WRITTEN()).raise_for_failures()


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_broken_variant_fails_the_check_that_names_it(variant: str) -> None:
    broken = VARIANTS[variant]
    report = _run(broken.build(), **dict(broken.options or {}))
    assert not report.ok
    assert report.check(broken.fails).failed, str(report)
    # No check failed because the kit itself broke on what the variant answered.
    for check in report.failed:
        assert not re.match(r"raised (IndexError|KeyError|TypeError|AttributeError|AssertionError)", check.message), check


def test_every_check_is_exercised_by_a_broken_variant() -> None:
    caught = {variant.fails for variant in VARIANTS.values()}
    assert caught == set(PORTABLE_CONTEXT_CHECKS)


def test_transferred_fresh_session_continues_natively() -> None:
    async def scenario() -> ConformanceReport:
        portable = InMemoryPortableContext()
        ready = (await portable.plan(plan_request("context-1", 32_000))).plan
        request = ContextTransferRequest.seal(
            {
                "operationId": "move-1",
                "plan": ready.to_wire(),
                "acceptance": {"planDigest": ready.digest, "acceptedAt": ACCEPTED_AT, "acceptedBy": "user"},
            }
        )
        receipt = await portable.context_transfer.transfer(request)
        fresh = portable.session(receipt.session_id)
        assert [message.id for message in fresh.messages] == ["message-1"]
        moved = source([message.to_wire() for message in fresh.messages], run=fresh.control_ref.to_wire())
        onward = {
            **DESTINATION,
            "environmentId": "environment-third",
            "sessionId": "session-third",
            "runId": "run-third",
            "executionId": "execution-third",
        }
        options = kit_options(
            portable,
            fresh,
            request=plan_request("context-2", 32_000, source=moved, destination=onward),
            rejection_request=plan_request("context-2-over", 1, source=moved, destination=onward),
        )
        return await run_portable_context_conformance_async(**options)

    report = asyncio.run(scenario())
    report.raise_for_failures()
    assert report.names("passed") == PORTABLE_CONTEXT_CHECKS


def test_missing_parts_are_skipped_never_passed() -> None:
    portable = InMemoryPortableContext()
    report = run_portable_context_conformance(
        plan=portable.plan,
        counters=portable.counters,
        request=plan_request("context-1", 32_000),
        rejection_request=plan_request("context-over-limit", 1),
    )
    assert report.ok
    assert report.names("passed") == tuple(name for name in PORTABLE_CONTEXT_CHECKS if name.startswith("plan."))
    assert all(name in report.names("skipped") for name in PORTABLE_CONTEXT_CHECKS if not name.startswith("plan."))


def test_declared_parts_that_are_missing_fail() -> None:
    portable = InMemoryPortableContext()
    report = run_portable_context_conformance(
        plan=portable.plan,
        counters=portable.counters,
        request=plan_request("context-1", 32_000),
        rejection_request=plan_request("context-over-limit", 1),
        capabilities=declared_capabilities(),
    )
    assert not report.ok
    assert report.check("continuation.verified").failed
    assert report.check("transfer.lookup_recovers").failed


def test_undeclared_admission_control_skips_the_admission_checks() -> None:
    report = _run(InMemoryPortableContext(), admission_control=False)
    assert report.ok
    assert report.check("continuation.admission_once").skipped
    assert report.check("continuation.admission_before_output").skipped


def test_usage_errors_are_not_failures() -> None:
    portable = InMemoryPortableContext()
    base = {"plan": portable.plan, "counters": portable.counters, "request": plan_request("context-1", 32_000)}
    with pytest.raises(ConformanceUsageError, match="own request id"):
        run_portable_context_conformance(**base, rejection_request=plan_request("context-1", 1))
    with pytest.raises(ConformanceUsageError, match="maxInputTokens"):
        run_portable_context_conformance(**base, rejection_request=plan_request("other", None))
    with pytest.raises(ConformanceUsageError, match="PortableContextPlanRequest"):
        run_portable_context_conformance(**base, rejection_request={"requestId": "x"})


def test_two_hundred_concurrent_same_key_transfers_have_one_effect() -> None:
    async def scenario() -> None:
        portable = InMemoryPortableContext()
        ready = (await portable.plan(plan_request("context-1", 32_000))).plan
        request = ContextTransferRequest.seal(
            {
                "operationId": "move-1",
                "plan": ready.to_wire(),
                "acceptance": {"planDigest": ready.digest, "acceptedAt": ACCEPTED_AT, "acceptedBy": "user"},
            }
        )
        answers = await asyncio.gather(*(portable.context_transfer.transfer(request) for _ in range(200)))
        assert sorted(answer.status for answer in answers).count("accepted") == 1
        assert {answer.session_id for answer in answers} == {"session-fresh"}
        counters = portable.counters()
        assert (counters.transfers, counters.fresh_sessions) == (1, 1)

    asyncio.run(asyncio.wait_for(scenario(), 60))


def test_two_hundred_concurrent_same_key_continuations_have_one_effect() -> None:
    async def scenario() -> None:
        portable = InMemoryPortableContext()
        session = portable.open_session(run=RUN, messages=MESSAGES)
        proof = await session.context_boundary()
        turn = {"prompt": "Continue."}
        request = NativeContextContinuationRequest.seal(operation_id="c-1", turn=turn, run=RUN, expected_boundary=proof)
        admitted: list[Any] = []
        options = AgentNativeContextContinuationOptions(turn=turn, on_admission=admitted.append)
        answers = await asyncio.gather(*(session.continue_native(request, options) for _ in range(200)))
        statuses = [answer.acknowledgement.status for answer in answers]
        assert statuses.count("accepted") == 1 and statuses.count("replayed") == 199
        assert len({answer.control_ref.run_id for answer in answers}) == 1
        assert session.continuations == 1 and session.terminal_outputs == 1
        assert len(admitted) == 1 and len(session.sent_turns) == 1

    asyncio.run(asyncio.wait_for(scenario(), 60))


def test_a_subject_that_never_answers_fails_instead_of_hanging() -> None:
    class Hangs(InMemoryPortableContext):
        async def plan(self, request: Any) -> Any:
            await asyncio.Event().wait()

    report = _run(Hangs(), timeout=0.05)
    assert report.check("plan.side_effect_free").failed
    assert "did not answer within" in report.check("plan.side_effect_free").message
