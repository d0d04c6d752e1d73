"""The ``transfer.*`` checks of the portable-context kit: durable context transfer through
``AgentEnvironmentProvider.context_transfer`` (``transfer`` and ``lookup``)."""

from __future__ import annotations

import asyncio
import functools
from typing import Any

from agent_interface.conformance.portable_context_helpers import (
    PortableContextKit,
    answer,
    operation_id,
    partial_input_plan,
    refusal_or_non_admission,
    same_wire,
    transfer_material,
    unsealed_transfer,
    wire,
)
from agent_interface.conformance.report import CheckFailed, describe_error, expect
from agent_interface.durable.context_transfer import (
    ContextTransferConflict,
    ContextTransferReceiptAccepted,
    ContextTransferReceiptReplayed,
    ContextTransferRequest,
    ContextTransferResult,
    ContextTransferUnknown,
    context_transfer_receipt_matches,
    context_transfer_result_matches_request,
)

__all__ = ["transfer_checks"]


def _same_receipt(left: Any, right: Any) -> bool:
    """Two receipts naming the same admission (their status aside)."""
    plain_left = {k: v for k, v in wire(left).items() if k != "status"}
    plain_right = {k: v for k, v in wire(right).items() if k != "status"}
    return same_wire(plain_left, plain_right)


async def transfer_checks(kit: PortableContextKit, operation: Any, lookup: Any) -> None:
    """The ``transfer.*`` checks against ``context_transfer.transfer`` and ``lookup``."""
    request = kit.request
    base = request.request_id
    by: dict[str, ContextTransferRequest] = {}

    async def mismatched_digest() -> None:
        ready = kit.state["ready"]
        before = await kit.counters()
        wrong_plan = transfer_material(
            operation_id(base, "mismatch"), ready.plan, request.source.digest, kit.accepted_at, "user"
        )
        await refusal_or_non_admission(
            functools.partial(kit.call, "transfer()", operation, unsealed_transfer(wrong_plan)), "a transfer accepting another plan digest"
        )
        material = transfer_material(
            operation_id(base, "tampered"), ready.plan, ready.plan.digest, kit.accepted_at, "user"
        )
        await refusal_or_non_admission(
            functools.partial(kit.call, "transfer()", operation, unsealed_transfer(material, ready.plan.digest)),
            "a transfer whose request digest does not match its content",
        )
        await kit.unchanged_since(before, "a refused transfer")

    await kit.step("transfer.mismatched_digest_zero_dispatch", mismatched_digest, "ready")

    async def partial_needs_acceptance() -> None:
        ready = kit.state["ready"]
        before = await kit.counters()
        plans = [ready.plan] if ready.plan.requires_acceptance else []
        if ready.plan.source.completeness == "complete":
            plans.append(partial_input_plan(ready.plan))
        for index, plan in enumerate(plans):
            material = transfer_material(
                operation_id(base, f"system-{index}"), plan, plan.digest, kit.accepted_at, "system"
            )
            what = "the planned transfer, which needs acceptance," if plan is ready.plan else "a plan cut from a partial source"
            sent = unsealed_transfer(material)
            await refusal_or_non_admission(
                functools.partial(kit.call, "transfer()", operation, sent),
                f"{what} accepted by 'system' only",
            )
        await kit.unchanged_since(before, "a transfer without explicit acceptance")

    await kit.step("transfer.partial_needs_acceptance", partial_needs_acceptance, "ready")

    async def accepted_receipt() -> None:
        ready = kit.state["ready"]
        by["user"] = ContextTransferRequest.seal(
            transfer_material(operation_id(base, "transfer"), ready.plan, ready.plan.digest, kit.accepted_at, "user")
        )
        before = await kit.counters()
        outcomes = await asyncio.gather(
            *(kit.call("transfer()", operation, by["user"]) for _ in range(kit.concurrency)), return_exceptions=True
        )
        after = await kit.counters()
        kit.state["transfer_outcomes"] = (before, outcomes, after)
        errors = [item for item in outcomes if isinstance(item, BaseException)]
        if errors and len(errors) == len(outcomes):
            raise CheckFailed(f"the transfer raised {describe_error(errors[0])}")
        results = [
            answer(ContextTransferResult, item, "the transfer result")
            for item in outcomes
            if not isinstance(item, BaseException)
        ]
        accepted = [item for item in results if isinstance(item, ContextTransferReceiptAccepted)]
        expect(accepted, f"no call answered 'accepted' (answers: {sorted({item.status for item in results})})")
        receipt = accepted[0]
        expect(
            context_transfer_result_matches_request(by["user"], receipt)
            and context_transfer_receipt_matches(by["user"], receipt),
            "the receipt does not name exactly the accepted plan and its fresh session",
        )
        expect(
            after.transfers > before.transfers and after.fresh_sessions > before.fresh_sessions,
            "an accepted transfer dispatched nothing into a fresh session",
        )
        kit.state["receipt"] = receipt

    await kit.step("transfer.accepted_receipt", accepted_receipt, "ready")

    async def concurrent_one_effect() -> None:
        before, outcomes, after = kit.state["transfer_outcomes"]
        errors = [item for item in outcomes if isinstance(item, BaseException)]
        expect(not errors, f"a concurrent same-request call raised {describe_error(errors[0]) if errors else ''}")
        results = [answer(ContextTransferResult, item, "the transfer result") for item in outcomes]
        statuses = [item.status for item in results]
        expect(statuses.count("accepted") == 1, f"{len(results)} same-request calls answered {statuses}")
        expect(
            all(isinstance(item, (ContextTransferReceiptAccepted, ContextTransferReceiptReplayed)) for item in results)
            and all(_same_receipt(item, results[0]) for item in results),
            "concurrent same-request calls did not all name one session",
        )
        expect(
            after.transfers == before.transfers + 1 and after.fresh_sessions == before.fresh_sessions + 1,
            f"{len(results)} same-request calls made {after.fresh_sessions - before.fresh_sessions} sessions "
            f"and {after.transfers - before.transfers} transfers, not one",
        )

    await kit.step("transfer.concurrent_calls_one_effect", concurrent_one_effect, "transfer_outcomes")

    async def retry_recovers() -> None:
        receipt = kit.state["receipt"]
        before = await kit.counters()
        again = answer(ContextTransferResult, await kit.call("transfer()", operation, by["user"]), "the transfer retry")
        expect(isinstance(again, ContextTransferReceiptReplayed), f"a retry answered {again.status!r}, not 'replayed'")
        expect(
            context_transfer_result_matches_request(by["user"], again) and _same_receipt(again, receipt),
            "the retry did not recover the original fresh session",
        )
        await kit.unchanged_since(before, "a transfer retry")
        kit.state["after_transfer"] = await kit.counters()

    await kit.step("transfer.retry_recovers_session", retry_recovers, "receipt")

    async def changed_retry_conflicts() -> None:
        ready = kit.state["ready"]
        before = await kit.counters()
        by["changed"] = ContextTransferRequest.seal(
            transfer_material(operation_id(base, "transfer"), ready.plan, ready.plan.digest, kit.accepted_at, "policy")
        )
        outcome = answer(ContextTransferResult, await kit.call("transfer()", operation, by["changed"]), "a changed retry")
        expect(isinstance(outcome, ContextTransferConflict), f"a changed retry answered {outcome.status!r}, not 'conflict'")
        expect(
            context_transfer_result_matches_request(by["changed"], outcome)
            and outcome.existing_request_digest == by["user"].request_digest,
            "the conflict does not name the changed request and the original one",
        )
        await kit.unchanged_since(before, "a changed transfer retry")

    await kit.step("transfer.changed_retry_conflicts", changed_retry_conflicts, "receipt")

    async def lookup_recovers() -> None:
        receipt, ready = kit.state["receipt"], kit.state["ready"]
        before = await kit.counters()
        found = answer(ContextTransferResult, await kit.call("lookup()", lookup, by["user"]), "lookup()")
        expect(
            isinstance(found, ContextTransferReceiptReplayed)
            and context_transfer_result_matches_request(by["user"], found)
            and _same_receipt(found, receipt),
            f"lookup of the admitted operation answered {found.status!r} without its session",
        )
        changed = by.get("changed") or ContextTransferRequest.seal(
            transfer_material(operation_id(base, "transfer"), ready.plan, ready.plan.digest, kit.accepted_at, "policy")
        )
        other = answer(ContextTransferResult, await kit.call("lookup()", lookup, changed), "lookup() of a changed request")
        expect(
            isinstance(other, ContextTransferConflict)
            and other.existing_request_digest == by["user"].request_digest,
            f"lookup of a changed request under the used operation id answered {other.status!r}",
        )
        unseen = ContextTransferRequest.seal(
            transfer_material(operation_id(base, "never-sent"), ready.plan, ready.plan.digest, kit.accepted_at, "user")
        )
        missing = answer(ContextTransferResult, await kit.call("lookup()", lookup, unseen), "lookup() of an unknown operation")
        expect(
            isinstance(missing, ContextTransferUnknown)
            and missing.status == "unknown"
            and missing.retryable
            and context_transfer_result_matches_request(unseen, missing),
            f"lookup of an operation never sent answered {missing.status!r}, not a retryable 'unknown'",
        )
        await kit.unchanged_since(before, "lookup")

    if lookup is None:
        return
    await kit.step("transfer.lookup_recovers", lookup_recovers, "receipt")
