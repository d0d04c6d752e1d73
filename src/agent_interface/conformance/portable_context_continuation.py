"""The ``continuation.*`` checks of the portable-context kit: same-session native
continuation through ``AgentSession.context_boundary`` and ``AgentSession.continue_native``,
with the ``on_admission`` callback of ``nativeContinuation.admissionControl``."""

from __future__ import annotations

import asyncio
from typing import Any

from agent_interface.conformance.portable_context_helpers import (
    PortableContextKit,
    answer,
    different_boundary,
    operation_id,
    same_wire,
)
from agent_interface.conformance.report import CheckFailed, describe_error, expect
from agent_interface.core.errors import ContractError
from agent_interface.durable.native_continuation import (
    NativeContextBoundaryProof,
    NativeContextContinuationRequest,
    NativeContextContinuationTurn,
    native_context_continuation_acknowledgement_matches,
)
from agent_interface.provider.continuation import (
    AgentNativeContextContinuationAdmitted,
    AgentNativeContextContinuationOptions,
    AgentNativeContextContinuationResult,
    agent_native_context_continuation_result_matches_request,
)
from agent_interface.runtime.control import AgentExactRunControlRef
from agent_interface.testing.portable_context import PortableContextCounters

__all__ = ["continuation_checks"]


async def continuation_checks(
    kit: PortableContextKit,
    session: Any,
    run: AgentExactRunControlRef,
    turn: NativeContextContinuationTurn,
    admission: bool,
) -> None:
    """The ``continuation.*`` checks against ``session.context_boundary`` and ``continue_native``."""
    base = kit.request.request_id
    # (label, the run it was given, counters then or why they were unreadable, call pending)
    calls: list[tuple[str, Any, PortableContextCounters | str, bool]] = []
    pending: dict[str, bool] = {}

    def options(label: str, for_turn: Any) -> AgentNativeContextContinuationOptions:
        async def on_admission(admitted: Any) -> None:
            still_pending = pending.get(label, False)
            snapshot: PortableContextCounters | str
            try:
                snapshot = await kit.counters()
            except Exception as error:  # reported by the admission checks, never raised into the subject
                snapshot = describe_error(error)
            calls.append((label, admitted, snapshot, still_pending))

        return AgentNativeContextContinuationOptions(turn=for_turn, on_admission=on_admission if admission else None)

    async def continue_native(label: str, request: Any, for_turn: Any) -> Any:
        pending[label] = True
        try:
            return await kit.call("continue_native()", session.continue_native, request, options(label, for_turn))
        finally:
            pending[label] = False

    async def stale_boundary() -> None:
        proof = answer(NativeContextBoundaryProof, await kit.call("context_boundary()", session.context_boundary), "context_boundary()")
        kit.state["proof"] = proof
        before = await kit.counters()
        stale = NativeContextContinuationRequest.seal(
            operation_id=operation_id(base, "continue-mismatch"),
            turn=turn,
            run=run,
            expected_boundary={**proof.to_wire(), "boundary": different_boundary(proof.boundary)},
        )
        outcome = answer(
            AgentNativeContextContinuationResult, await continue_native("stale", stale, turn), "a stale continuation"
        )
        ack = outcome.acknowledgement
        expect(ack.status == "boundary_mismatch", f"a stale boundary was answered {ack.status!r}, not 'boundary_mismatch'")
        expect(not native_context_continuation_acknowledgement_matches(stale, ack), "the refusal reads as an admission")
        await kit.unchanged_since(before, "a stale boundary")

    await kit.run.check("continuation.stale_boundary_refused", stale_boundary)

    async def verified() -> None:
        proof = kit.state.get("proof") or answer(
            NativeContextBoundaryProof, await kit.call("context_boundary()", session.context_boundary), "context_boundary()"
        )
        kit.state["proof"] = proof
        request = NativeContextContinuationRequest.seal(
            operation_id=operation_id(base, "continue"), turn=turn, run=run, expected_boundary=proof
        )
        kit.state["continuation"] = request
        before = await kit.counters()
        outcomes = await asyncio.gather(
            *(continue_native(f"first-{index}", request, turn) for index in range(kit.concurrency)),
            return_exceptions=True,
        )
        after = await kit.counters()
        kit.state["continuation_outcomes"] = (before, outcomes, after)
        answers = [
            answer(AgentNativeContextContinuationResult, item, "the continuation result")
            for item in outcomes
            if not isinstance(item, BaseException)
        ]
        if not answers:
            raise CheckFailed(f"continue_native raised {describe_error(outcomes[0])}")
        kit.state["continuation_answers"] = answers
        accepted = [item for item in answers if item.acknowledgement.status == "accepted"]
        expect(accepted, f"a matching boundary was answered {sorted({a.acknowledgement.status for a in answers})}")
        first = accepted[0]
        expect(
            isinstance(first, AgentNativeContextContinuationAdmitted),
            "the accepted continuation omitted its result or control reference",
        )
        expect(
            agent_native_context_continuation_result_matches_request(request, first),
            "the continuation result or control reference does not match the retained session",
        )
        expect(after.native_continuations > before.native_continuations, "a matching boundary continued nothing")
        kit.state["accepted"] = first

    await kit.run.check("continuation.verified", verified)

    async def no_copied_history() -> None:
        sent = [item.acknowledgement.history_messages_sent for item in kit.state["continuation_answers"]]
        expect(all(count == 0 for count in sent), f"a native continuation sent {max(sent)} copied history messages")

    await kit.step("continuation.no_copied_history", no_copied_history, "continuation_answers")

    async def concurrent_one_effect() -> None:
        before, outcomes, after = kit.state["continuation_outcomes"]
        errors = [item for item in outcomes if isinstance(item, BaseException)]
        expect(not errors, f"a concurrent same-request call raised {describe_error(errors[0]) if errors else ''}")
        answers = kit.state["continuation_answers"]
        statuses = [item.acknowledgement.status for item in answers]
        expect(statuses.count("accepted") == 1, f"{len(answers)} same-request calls answered {statuses}")
        expect(
            all(isinstance(item, AgentNativeContextContinuationAdmitted) for item in answers)
            and all(
                same_wire(item.control_ref, answers[0].control_ref) and same_wire(item.result, answers[0].result)
                for item in answers
            ),
            "concurrent same-request calls did not all answer one run",
        )
        expect(
            after.native_continuations == before.native_continuations + 1,
            f"{len(answers)} same-request calls started "
            f"{after.native_continuations - before.native_continuations} runs, not one",
        )

    await kit.step("continuation.concurrent_calls_one_effect", concurrent_one_effect, "continuation_outcomes")

    async def admission_once() -> None:
        accepted = kit.state["accepted"]
        stray = [label for label, *_ in calls if not label.startswith("first-")]
        if stray:
            raise CheckFailed(f"on_admission was called outside the admitting call (for the {stray[0]} request)")
        firsts = [call for call in calls if call[0].startswith("first-")]
        expect(firsts, "on_admission was never called for the admitted run")
        expect(len(firsts) == 1, f"on_admission was called {len(firsts)} times for one admitted run")
        _, given, _, still_pending = firsts[0]
        expect(still_pending, "on_admission was called after continue_native returned")
        ref = answer(AgentExactRunControlRef, given, "the run given to on_admission")
        expect(same_wire(ref, accepted.control_ref), "on_admission was not given the run the result names")
        expect(not same_wire(ref, run), "on_admission was given the continued run, not a new one")

    async def admission_before_output() -> None:
        before = kit.state["continuation_outcomes"][0]
        firsts = [call for call in calls if call[0].startswith("first-")]
        expect(firsts, "on_admission was never called for the admitted run")
        snapshot = firsts[0][2]
        if isinstance(snapshot, str):
            raise CheckFailed(f"counters() could not be read during on_admission: {snapshot}")
        expect(snapshot.native_continuations == before.native_continuations + 1, "on_admission came before the run existed")
        expect(
            snapshot.terminal_outputs == before.terminal_outputs,
            "on_admission came after the run's terminal output",
        )

    async def retry_replays() -> None:
        accepted, request = kit.state["accepted"], kit.state["continuation"]
        before = await kit.counters()
        again = answer(
            AgentNativeContextContinuationResult, await continue_native("retry", request, turn), "a continuation retry"
        )
        expect(
            again.acknowledgement.status == "replayed",
            f"a continuation retry answered {again.acknowledgement.status!r}, not 'replayed'",
        )
        expect(isinstance(again, AgentNativeContextContinuationAdmitted), "the replay omitted its result or control reference")
        expect(
            agent_native_context_continuation_result_matches_request(request, again)
            and same_wire(again.result, accepted.result)
            and same_wire(again.control_ref, accepted.control_ref),
            "the retry did not replay the original result and control reference",
        )
        await kit.unchanged_since(before, "a continuation retry")

    await kit.step("continuation.retry_replays", retry_replays, "accepted")

    async def changed_turn_refused() -> None:
        request, proof = kit.state["continuation"], kit.state["proof"]
        changed_turn = {**turn.to_wire(), "prompt": f"{turn.prompt or ''} changed"}
        changed = NativeContextContinuationRequest.seal(
            operation_id=request.operation_id, turn=changed_turn, run=run, expected_boundary=proof
        )
        before = await kit.counters()
        outcome = answer(
            AgentNativeContextContinuationResult,
            await continue_native("changed", changed, changed_turn),
            "a changed continuation",
        )
        ack = outcome.acknowledgement
        expect(ack.status == "conflict", f"a changed turn under a used operation id was answered {ack.status!r}")
        expect(
            ack.existing_request_digest == request.request_digest
            and not native_context_continuation_acknowledgement_matches(changed, ack),
            "the conflict does not name the original request",
        )
        await kit.unchanged_since(before, "a changed continuation")
        try:
            unbound = await continue_native("unbound", request, changed_turn)
        except ContractError:
            unbound = None
        if unbound is not None:
            status = answer(AgentNativeContextContinuationResult, unbound, "an unbound turn").acknowledgement.status
            expect(status not in ("accepted", "replayed"), f"a turn its request does not name was answered {status!r}")
        await kit.unchanged_since(before, "a turn its request does not name")

    await kit.step("continuation.changed_turn_refused", changed_turn_refused, "continuation")

    if not admission:
        for name in ("continuation.admission_once", "continuation.admission_before_output"):
            kit.run.skip(name, "nativeContinuation.admissionControl is not declared")
    else:
        await kit.step("continuation.admission_once", admission_once, "accepted")
        outcomes = kit.state.get("continuation_outcomes")
        if outcomes is not None and outcomes[0].terminal_outputs is None:
            kit.run.skip("continuation.admission_before_output", "counters() does not report terminal_outputs")
        else:
            await kit.step("continuation.admission_before_output", admission_before_output, "continuation_outcomes")
