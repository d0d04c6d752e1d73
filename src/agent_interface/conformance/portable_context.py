"""Conformance of portable context planning, durable context transfer and native
continuation (the reference's ``runPortableContextConformance``).

:func:`run_portable_context_conformance` drives a planner (``plan``), the provider's
``context_transfer`` operation (``transfer`` and ``lookup``) and a retained session's
``context_boundary`` and ``continue_native``, and reads the implementation's effect
``counters`` between calls. It proves:

* ``plan.*``: planning creates no run and no session; a ready plan answers exactly its
  request and decides every source message and part; a result never answers another
  request (nor the same request id with other content); a real over-limit result
  dispatches nothing;
* ``transfer.*``: a plan digest or request digest that does not match dispatches
  nothing; a partial plan needs user or policy acceptance; an accepted request returns
  an exact receipt for one fresh session, once, even under concurrent same-request
  calls; a retry recovers that session, a changed retry conflicts, and ``lookup``
  recovers the outcome;
* ``continuation.*``: a stale boundary is refused without dispatch; a matching one
  continues once, sends no copied history and returns an exact result and control
  reference; a retry replays them without a second run; a changed turn under the same
  operation id is refused without dispatch; with ``admissionControl``, ``on_admission``
  is called exactly once with the new run, before its terminal output.

A part the subject does not offer is reported as skipped (failed when its capability is
declared); every other failure is a failed check, never an exception.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from agent_interface.conformance.portable_context_continuation import continuation_checks
from agent_interface.conformance.portable_context_helpers import (
    PortableContextKit,
    answer,
    changed_effects,
    coverage_problem,
    same_wire,
    wire,
)
from agent_interface.conformance.portable_context_transfer import transfer_checks
from agent_interface.conformance.report import (
    CheckRun,
    ConformanceReport,
    ConformanceUsageError,
    contained,
    describe_error,
    expect,
    run_sync,
)
from agent_interface.core.errors import ContractError
from agent_interface.durable.native_continuation import NativeContextContinuationTurn
from agent_interface.durable.portable_context import (
    PortableContextOverLimitResult,
    PortableContextPlanRequest,
    PortableContextPlanResult,
    PortableContextReadyResult,
    portable_context_plan_result_matches_request,
)
from agent_interface.environment.capabilities import AgentEnvironmentCapabilities
from agent_interface.runtime.control import AgentExactRunControlRef
from agent_interface.session.timestamps import iso_of_epoch_ms, system_clock_ms

__all__ = [
    "PORTABLE_CONTEXT_CHECKS",
    "run_portable_context_conformance",
    "run_portable_context_conformance_async",
]

PORTABLE_CONTEXT_CHECKS = (
    "plan.side_effect_free",
    "plan.ready_covers_request",
    "plan.over_limit_zero_dispatch",
    "plan.bound_to_request",
    "transfer.mismatched_digest_zero_dispatch",
    "transfer.partial_needs_acceptance",
    "transfer.accepted_receipt",
    "transfer.concurrent_calls_one_effect",
    "transfer.retry_recovers_session",
    "transfer.changed_retry_conflicts",
    "transfer.lookup_recovers",
    "continuation.stale_boundary_refused",
    "continuation.verified",
    "continuation.no_copied_history",
    "continuation.concurrent_calls_one_effect",
    "continuation.retry_replays",
    "continuation.changed_turn_refused",
    "continuation.admission_once",
    "continuation.admission_before_output",
)
"""Every check the kit can record, in the order it runs them."""

_TRANSFER_CHECKS = tuple(name for name in PORTABLE_CONTEXT_CHECKS if name.startswith("transfer."))
_CONTINUATION_CHECKS = tuple(name for name in PORTABLE_CONTEXT_CHECKS if name.startswith("continuation."))

NOT_CERTIFIED = (
    "that counters() reports every effect: the kit trusts the implementation's own counts",
    "that a fresh session holds exactly the transferred context (the kit sees the receipt only)",
    "recovery by lookup after the process that admitted a transfer is gone",
    "atomic boundary admission against another writer to the same session",
    "abort and timeout of one continuation attempt",
)

_DEFAULT_TURN = {"prompt": "Continue from the retained session."}


async def planning_checks(kit: PortableContextKit) -> None:
    """The ``plan.*`` checks."""
    request, rejection = kit.request, kit.rejection

    async def side_effect_free() -> None:
        before = await kit.counters()
        kit.state["before"] = before
        outcome = await kit.call("plan()", kit.plan, request)
        after = await kit.counters()
        kit.state["ready_answer"] = outcome
        expect(after.plans == before.plans + 1, f"the plan counter moved {before.plans} -> {after.plans}, not by one")
        moved = changed_effects(before, after)
        expect(not moved, f"planning created a run or session ({', '.join(moved)})")
        kit.state["after_plan"] = after

    await kit.run.check("plan.side_effect_free", side_effect_free)

    async def ready_covers_request() -> None:
        result = answer(PortableContextPlanResult, kit.state["ready_answer"], "the plan result")
        expect(isinstance(result, PortableContextReadyResult), f"the request was answered {result.status!r}, not 'ready'")
        expect(
            portable_context_plan_result_matches_request(request, result),
            "the ready result does not match its request or its token budget",
        )
        problem = coverage_problem(request, result.plan)
        expect(problem is None, str(problem))
        kit.state["ready"] = result

    await kit.step("plan.ready_covers_request", ready_covers_request, "ready_answer")

    async def over_limit_zero_dispatch() -> None:
        before = kit.state["before"]
        previous = await kit.counters()
        outcome = await kit.call("plan()", kit.plan, rejection)
        after = await kit.counters()
        result = answer(PortableContextPlanResult, outcome, "the over-limit plan result")
        kit.state["rejected"] = result
        expect(
            isinstance(result, PortableContextOverLimitResult),
            f"a request over its token budget was answered {result.status!r}",
        )
        expect(
            portable_context_plan_result_matches_request(rejection, result),
            "the over-limit result is not exact (request, limit, estimate or suggested boundary)",
        )
        ready = kit.state.get("ready")
        limit = rejection.max_input_tokens
        if (
            ready is not None
            and ready.plan.estimated_tokens is not None
            and limit is not None
            and same_wire(rejection.source, request.source)
            and same_wire(rejection.destination, request.destination)
        ):
            expect(
                ready.plan.estimated_tokens > limit,
                "over_limit was answered although the planner's own estimate fits the budget",
            )
        expect(after.plans == previous.plans + 1, "the plan counter did not move by one for the over-limit request")
        moved = changed_effects(before, after)
        expect(not moved, f"an over-limit plan dispatched ({', '.join(moved)})")

    await kit.step("plan.over_limit_zero_dispatch", over_limit_zero_dispatch, "before")

    async def bound_to_request() -> None:
        ready, rejected = kit.state["ready"], kit.state["rejected"]
        for result, own, what in ((ready, request, "the ready result"), (rejected, rejection, "the over-limit result")):
            expect(
                (result.request_id, result.request_digest) == (own.request_id, own.request_digest),
                f"{what} repeats another request's id or digest",
            )
        expect(
            not portable_context_plan_result_matches_request(request, rejected)
            and not portable_context_plan_result_matches_request(rejection, ready),
            "a plan result matches a request it does not answer",
        )
        rebound = _rebound(request, ready)
        if rebound is not None:
            before = await kit.counters()
            again = answer(PortableContextPlanResult, await kit.call("plan()", kit.plan, rebound), "the plan result")
            expect(
                again.request_digest == rebound.request_digest
                and portable_context_plan_result_matches_request(rebound, again),
                "a request reusing a request id with other content was answered for the old content",
            )
            expect(
                not portable_context_plan_result_matches_request(request, again),
                "one result answers two different requests under the same request id",
            )
            await kit.unchanged_since(before, "planning")

    await kit.step("plan.bound_to_request", bound_to_request, "ready", "rejected")


def _rebound(request: PortableContextPlanRequest, ready: PortableContextReadyResult) -> PortableContextPlanRequest | None:
    """The same request id with other content (another token budget), or None."""
    material = {k: v for k, v in request.to_wire().items() if k not in ("requestDigest", "maxInputTokens")}
    if request.max_input_tokens is not None:
        return PortableContextPlanRequest.seal(material)
    estimate = ready.plan.estimated_tokens
    if estimate is None:
        return None
    return PortableContextPlanRequest.seal({**material, "maxInputTokens": max(1, estimate)})


def _request(value: Any, what: str) -> PortableContextPlanRequest:
    try:
        return value if isinstance(value, PortableContextPlanRequest) else PortableContextPlanRequest.parse_wire(wire(value))
    except ContractError as error:
        raise ConformanceUsageError(f"{what} is not a valid PortableContextPlanRequest: {describe_error(error)}") from None


def _method(obj: Any, name: str) -> Any:
    try:
        found = getattr(obj, name, None)
    except Exception:
        return None
    return found if callable(found) else None


@contained
async def run_portable_context_conformance_async(
    *,
    plan: Callable[[PortableContextPlanRequest], Any],
    counters: Callable[[], Any],
    request: PortableContextPlanRequest | Mapping[str, Any],
    rejection_request: PortableContextPlanRequest | Mapping[str, Any],
    provider: Any = None,
    session: Any = None,
    run: AgentExactRunControlRef | Mapping[str, Any] | None = None,
    turn: NativeContextContinuationTurn | Mapping[str, Any] | None = None,
    accepted_at: str | None = None,
    capabilities: AgentEnvironmentCapabilities | Mapping[str, Any] | None = None,
    admission_control: bool | None = None,
    concurrency: int = 8,
    timeout: float | None = 30.0,
    name: str | None = None,
) -> ConformanceReport:
    """Run every portable-context check (see the module docstring).

    ``plan(request)`` answers a plan request; ``counters()`` reports the implementation's
    effects (plans, transfers, fresh sessions, native continuations and, when it can,
    terminal outputs). ``request`` must plan ready; ``rejection_request`` (another
    request id, with ``maxInputTokens``) must be over its budget. ``provider.context_transfer``
    is the transfer operation (``transfer``, ``lookup``); ``session`` offers
    ``context_boundary`` and ``continue_native`` for ``run`` (``session.control_ref`` by
    default) with ``turn``. ``capabilities`` says which parts are declared (a missing
    declared part fails, a missing undeclared part is skipped); ``admission_control``
    overrides ``nativeContinuation.admissionControl``. ``concurrency`` same-request calls
    are sent at once for the first transfer and the first continuation. Every call to the
    subject must answer within ``timeout`` seconds (``None``: no bound), or its check fails.
    """
    if not callable(plan) or not callable(counters):
        raise ConformanceUsageError("plan and counters must be callables")
    if concurrency < 1:
        raise ConformanceUsageError("concurrency must be at least 1")
    exact = _request(request, "request")
    rejection = _request(rejection_request, "rejection_request")
    if rejection.request_id == exact.request_id or rejection.max_input_tokens is None:
        raise ConformanceUsageError("rejection_request needs its own request id and a maxInputTokens budget")
    declared: AgentEnvironmentCapabilities | None = None
    if capabilities is not None:
        try:
            declared = (
                capabilities
                if isinstance(capabilities, AgentEnvironmentCapabilities)
                else AgentEnvironmentCapabilities.parse_wire(wire(capabilities))
            )
        except ContractError as error:
            raise ConformanceUsageError(f"capabilities are not a valid document: {describe_error(error)}") from None
    if admission_control is None:
        native = None if declared is None else declared.native_continuation
        admission_control = bool(native is not None and native.admission_control)

    subject = name or type(provider if provider is not None else session if session is not None else plan).__name__
    check_run = CheckRun("portable context", subject, timeout=None if timeout is None else 5 * timeout, call_timeout=timeout)
    kit = PortableContextKit(
        check_run,
        plan=plan,
        counters_of=counters,
        request=exact,
        rejection=rejection,
        accepted_at=accepted_at or iso_of_epoch_ms(system_clock_ms()),
        concurrency=concurrency,
        timeout=timeout,
    )
    await planning_checks(kit)

    transfer_op = getattr(provider, "context_transfer", None) if provider is not None else None
    operation, lookup = _method(transfer_op, "transfer"), _method(transfer_op, "lookup")
    transfer_declared = declared is not None and declared.context_transfer is not None
    if operation is None:
        _absent(check_run, _TRANSFER_CHECKS, "context_transfer.transfer", "/contextTransfer", transfer_declared)
    else:
        await transfer_checks(kit, operation, lookup)
        if lookup is None:
            _absent(check_run, ("transfer.lookup_recovers",), "context_transfer.lookup", "/contextTransfer/lookup", transfer_declared)

    native_declared = declared is not None and declared.native_continuation is not None
    if session is None or _method(session, "context_boundary") is None or _method(session, "continue_native") is None:
        _absent(check_run, _CONTINUATION_CHECKS, "session.context_boundary / continue_native", "/nativeContinuation", native_declared)
    else:
        exact_run, exact_turn = _continuation_inputs(session, run, turn)
        await continuation_checks(kit, session, exact_run, exact_turn, admission_control)
    return check_run.report(not_certified=NOT_CERTIFIED)


def _continuation_inputs(session: Any, run: Any, turn: Any) -> tuple[AgentExactRunControlRef, NativeContextContinuationTurn]:
    chosen = run if run is not None else getattr(session, "control_ref", None)
    if chosen is None:
        raise ConformanceUsageError("give run (or a session with control_ref) to check native continuation")
    try:
        exact_run = chosen if isinstance(chosen, AgentExactRunControlRef) else AgentExactRunControlRef.parse_wire(wire(chosen))
        exact_turn = NativeContextContinuationTurn.parse_wire(wire(turn if turn is not None else _DEFAULT_TURN))
    except ContractError as error:
        raise ConformanceUsageError(f"run or turn is not valid: {describe_error(error)}") from None
    return exact_run, exact_turn


def _absent(run: CheckRun, names: tuple[str, ...], member: str, pointer: str, declared: bool) -> None:
    for check in names:
        if declared:
            run.fail(check, f"{pointer} is declared but the subject has no {member}")
        else:
            run.skip(check, f"the subject has no {member}")


def run_portable_context_conformance(**options: Any) -> ConformanceReport:
    """Synchronous :func:`run_portable_context_conformance_async` (same keyword arguments)."""
    return run_sync(run_portable_context_conformance_async(**options))
