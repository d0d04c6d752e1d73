"""Pieces of the portable-context kit (:mod:`agent_interface.conformance.portable_context`):
reading an implementation's effect counters, the plan-coverage rule, boundary and
request variants the kit sends, and reading an answer or a refusal."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from agent_interface.conformance.bounds import CallTimedOut, settle
from agent_interface.conformance.report import (
    CheckFailed,
    CheckRun,
    describe_error,
    expect,
    maybe_await,
)
from agent_interface.core.canonical import canonical_digest
from agent_interface.core.contract_limits import CONTRACT_MAX_IDENTIFIER_LENGTH
from agent_interface.core.errors import ContractError
from agent_interface.core.model import WireModel, wire_adapter
from agent_interface.durable.context_transfer import (
    ContextTransferReceiptAccepted,
    ContextTransferReceiptReplayed,
    ContextTransferResult,
    context_transfer_request_digest,
)
from agent_interface.durable.portable_context import (
    PortableContextPlan,
    PortableContextPlanRequest,
    PortableConversationContext,
)
from agent_interface.testing.portable_context import PortableContextCounters

__all__ = [
    "EFFECTS",
    "PortableContextKit",
    "answer",
    "changed_effects",
    "coverage_problem",
    "different_boundary",
    "operation_id",
    "partial_input_plan",
    "read_counters",
    "refusal_or_non_admission",
    "same_wire",
    "transfer_material",
    "unsealed_transfer",
    "wire",
]

EFFECTS = ("transfers", "fresh_sessions", "native_continuations")
"""The counters that name a run or a session; planning and refusals leave them alone."""

_ZERO = "sha256:" + "0" * 64
_ONE = "sha256:" + "1" * 64


def wire(value: Any) -> Any:
    """Plain JSON data of what an implementation answered (models become their wire form)."""
    if isinstance(value, WireModel):
        return value.to_wire()
    if isinstance(value, Mapping):
        return {key: wire(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [wire(item) for item in value]
    return value


def same_wire(left: Any, right: Any) -> bool:
    """Equal RFC 8785 forms."""
    return canonical_digest(wire(left)) == canonical_digest(wire(right))


def answer(tp: Any, value: Any, what: str) -> Any:
    """``value`` re-read as ``tp`` from its wire form, or a failed check naming ``what``."""
    try:
        return wire_adapter(tp).parse_value(wire(value))
    except ContractError as error:
        raise CheckFailed(f"{what} is not a valid answer: {describe_error(error)}") from None


def _count(value: Any, snake: str, camel: str) -> Any:
    if isinstance(value, Mapping):
        return value.get(snake, value.get(camel))
    return getattr(value, snake, None)


def read_counters(value: Any) -> PortableContextCounters:
    """An implementation's counters: a :class:`PortableContextCounters`, or a mapping
    (snake_case or camelCase keys) or object carrying the same numbers."""
    if isinstance(value, PortableContextCounters):
        return value
    names = (
        ("plans", "plans"),
        ("transfers", "transfers"),
        ("fresh_sessions", "freshSessions"),
        ("native_continuations", "nativeContinuations"),
    )
    counts: dict[str, int] = {}
    for snake, camel in names:
        count = _count(value, snake, camel)
        if not isinstance(count, int) or isinstance(count, bool) or count < 0:
            raise CheckFailed(f"counters() reported no count of {snake}")
        counts[snake] = count
    terminal = _count(value, "terminal_outputs", "terminalOutputs")
    if terminal is not None and (not isinstance(terminal, int) or isinstance(terminal, bool) or terminal < 0):
        raise CheckFailed("counters() reported an invalid count of terminal_outputs")
    return PortableContextCounters(**counts, terminal_outputs=terminal)


def changed_effects(before: PortableContextCounters, after: PortableContextCounters) -> list[str]:
    """The run- and session-creating counters that moved between two readings."""
    return [
        f"{name} {getattr(before, name)} -> {getattr(after, name)}"
        for name in EFFECTS
        if getattr(before, name) != getattr(after, name)
    ]


def coverage_problem(request: PortableContextPlanRequest, plan: PortableContextPlan) -> str | None:
    """Why a ready plan does not cover its request exactly, or ``None``: the same source
    and destination, and a decision for every source message and every part of it."""
    if not same_wire(plan.source, request.source):
        return "the plan's source differs from the requested context"
    if not same_wire(plan.destination, request.destination):
        return "the plan's destination differs from the request"
    decided = {decision.message_id: decision for decision in plan.messages}
    for message in request.source.messages:
        decision = decided.get(message.id)
        if decision is None:
            return "the plan does not decide every source message"
        if sorted(part.part_index for part in decision.parts) != list(range(len(message.parts))):
            return "the plan does not decide every part of every source message"
    if len(decided) != len(request.source.messages):
        return "the plan decides a message that is not in the source"
    return None


def different_boundary(boundary: Any) -> dict[str, Any]:
    """A boundary of the same kind that differs from ``boundary``."""
    plain = wire(boundary)
    kind = plain["kind"]
    if kind in ("token", "revision"):
        value = plain[kind]
        changed = f"{value}-different"
        if len(changed) > CONTRACT_MAX_IDENTIFIER_LENGTH:
            changed = f"different-{value[:64]}"
        return {"kind": kind, kind: changed}
    return {**plain, "digest": _ONE if plain["digest"] == _ZERO else _ZERO}


def operation_id(base: str, suffix: str) -> str:
    """``<base>-<suffix>`` within the identifier bound."""
    room = CONTRACT_MAX_IDENTIFIER_LENGTH - len(suffix) - 1
    return f"{base[:room].strip() or 'conformance'}-{suffix}"


def transfer_material(operation: str, plan: Any, plan_digest: str, accepted_at: str, accepted_by: str) -> dict[str, Any]:
    """The material of a transfer request (wire names), not validated."""
    return {
        "operationId": operation,
        "plan": wire(plan),
        "acceptance": {"planDigest": plan_digest, "acceptedAt": accepted_at, "acceptedBy": accepted_by},
    }


def unsealed_transfer(material: Mapping[str, Any], request_digest: str | None = None) -> dict[str, Any]:
    """A transfer request as a caller might send it: ``material`` with ``requestDigest``
    (its own digest unless given), without the request's own refinements applied."""
    digest = request_digest if request_digest is not None else context_transfer_request_digest(material)
    return {"requestDigest": digest, **material}


def partial_input_plan(plan: PortableContextPlan) -> PortableContextPlan:
    """``plan`` cut from a partial source: the same decisions, so it needs acceptance."""
    source = PortableConversationContext.seal(
        {**{k: v for k, v in plan.source.to_wire().items() if k != "digest"}, "completeness": "partial"}
    )
    context = PortableConversationContext.seal(
        {**{k: v for k, v in plan.context.to_wire().items() if k != "digest"}, "completeness": "partial"}
    )
    material = {k: v for k, v in plan.to_wire().items() if k != "digest"}
    return PortableContextPlan.seal(
        {**material, "source": source.to_wire(), "context": context.to_wire(), "requiresAcceptance": True}
    )


async def refusal_or_non_admission(call: Callable[[], Awaitable[Any] | Any], what: str) -> None:
    """``call`` must refuse with a ``ContractError`` or answer a transfer outcome that
    admitted nothing; an admission or any other exception fails the check."""
    try:
        outcome = await maybe_await(call())
    except ContractError:
        return
    except CheckFailed:
        raise
    except Exception as error:
        raise CheckFailed(f"{what} raised {describe_error(error)}, not a ContractError refusal") from None
    result = answer(ContextTransferResult, outcome, what)
    expect(
        not isinstance(result, (ContextTransferReceiptAccepted, ContextTransferReceiptReplayed)),
        f"{what} was admitted ({result.status})",
    )


@dataclass
class PortableContextKit:
    """One run of the kit: the subject's planner and counters, the requests it plans,
    what it answered so far (``state``), and the report being recorded."""

    run: CheckRun
    plan: Callable[[PortableContextPlanRequest], Any]
    counters_of: Callable[[], Any]
    request: PortableContextPlanRequest
    rejection: PortableContextPlanRequest
    accepted_at: str
    concurrency: int
    timeout: float | None = None
    state: dict[str, Any] = field(default_factory=dict)

    async def call(self, what: str, method: Callable[..., Any], *args: Any) -> Any:
        """``method(*args)``, awaited when it returns an awaitable, within :attr:`timeout`
        seconds (a call that does not answer in time fails the running check)."""
        try:
            return await settle(method(*args), self.timeout, what)
        except CallTimedOut as timed_out:
            raise CheckFailed(str(timed_out)) from None

    async def counters(self) -> PortableContextCounters:
        """The subject's counters now."""
        return read_counters(await self.call("counters()", self.counters_of))

    async def unchanged_since(self, before: PortableContextCounters, what: str) -> PortableContextCounters:
        """Fail the running check when ``what`` created a run or a session since ``before``."""
        after = await self.counters()
        moved = changed_effects(before, after)
        expect(not moved, f"{what} created a run or session ({', '.join(moved)})")
        return after

    async def step(self, name: str, body: Callable[[], Awaitable[object]], *needs: str) -> bool:
        """Run check ``name``, or skip it when an earlier check did not establish ``needs``."""
        missing = [need for need in needs if need not in self.state]
        if missing:
            self.run.skip(name, f"not run: it needs {', '.join(missing)}, which an earlier check did not establish")
            return False
        return await self.run.check(name, body)
