"""Checks that what a provider states twice agrees with itself.

A provider often states one fact in two places: the session a turn runs in (the turn it
was sent, every streamed part, the result), the turn's verdict (its terminal event and
its :class:`~agent_interface.provider.turn_result.AgentTurnResult`), its usage (cumulative
reports, the events' total and the result's), its events (the first delivery and a
replay), the times of one thing (a tool's start and end, a session's creation and last
update). A runtime that trusts one place and a runtime that trusts the other reach
opposite conclusions when they disagree, so every kit that reads both places checks them
with the functions here. ``docs/conformance.md`` lists every pair and the rule each
comes from.

Each function records named checks ``<prefix>.<name>`` on a
:class:`~agent_interface.conformance.report.CheckRun` and never raises; a pair the
subject does not state twice is ``not_applicable``, never passed.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Sequence
from typing import Any, Final, Literal

from agent_interface.conformance.bounds import (
    CallTimedOut,
    being_cancelled,
    describe_error,
    safe_str,
    settle,
)
from agent_interface.conformance.report import CheckRun
from agent_interface.durable.portable_context import plain_wire
from agent_interface.environment.events import AgentEnvironmentEvent
from agent_interface.provider.turn_result import AgentTurnResult
from agent_interface.runtime.usage import TokenUsage, aggregate_turn_usage

__all__ = [
    "RESULT_CHECKS",
    "STREAM_CONSISTENCY_CHECKS",
    "check_result_agrees",
    "check_stream_consistency",
    "is_terminal_event",
    "read_turn_result",
    "stated_sessions",
    "terminal_verdict",
]

STREAM_CONSISTENCY_CHECKS: Final = ("session_identity", "usage_cumulative", "times")
"""What :func:`check_stream_consistency` records, after its prefix."""

RESULT_CHECKS: Final = ("result_verdict", "result_session", "result_usage", "result_events")
"""What :func:`check_result_agrees` records, after its prefix."""

Verdict = Literal["success", "failure"]

_SUCCESS: Final = frozenset({"completed", "success", "succeeded"})
_FAILURE: Final = frozenset({"failed", "cancelled", "canceled", "error", "errored"})


def is_terminal_event(event: AgentEnvironmentEvent) -> bool:
    """Whether ``event`` ends a turn: a ``result``, ``done`` or ``final`` event, any
    ``*.completed`` or ``*.failed`` event, or a ``status`` event whose ``data.status`` is
    ``completed``, ``failed`` or ``cancelled`` (the reference testkit's rule)."""
    kind = event.type
    if kind in ("result", "done", "final") or kind.endswith((".completed", ".failed")):
        return True
    return kind == "status" and event.data.get("status") in ("completed", "failed", "cancelled")


def _wire(event: AgentEnvironmentEvent) -> dict[str, Any]:
    return event.to_wire()


def stated_sessions(event: AgentEnvironmentEvent) -> list[tuple[str, str]]:
    """Every session id ``event`` states, with where: a normalized part's ``sessionID``,
    a ``session.updated`` event's ``sessionId``, and ``data.sessionId``."""
    found: list[tuple[str, str]] = []
    data_session = event.data.get("sessionId")
    if isinstance(data_session, str):
        found.append(("data.sessionId", data_session))
    normalized = event.normalized
    if normalized is None:
        return found
    wire = normalized.to_wire() if hasattr(normalized, "to_wire") else {}
    part = wire.get("part") if isinstance(wire, dict) else None
    if isinstance(part, dict) and isinstance(part.get("sessionID"), str):
        found.append(("normalized.part.sessionID", part["sessionID"]))
    if isinstance(wire, dict) and wire.get("type") == "session.updated" and isinstance(wire.get("sessionId"), str):
        found.append(("normalized.sessionId", wire["sessionId"]))
    return found


def terminal_verdict(event: AgentEnvironmentEvent) -> Verdict | None:
    """What a terminal event says of the turn: ``success``, ``failure``, or ``None`` when it
    says neither (a bare ``done``). Read from the event type (``*.completed``,
    ``*.failed``), ``data.status``, ``data.success``, and a normalized status event."""
    kind = event.type
    if kind.endswith(".failed"):
        return "failure"
    if kind.endswith(".completed"):
        return "success"
    success = event.data.get("success")
    if isinstance(success, bool):
        return "success" if success else "failure"
    status = event.data.get("status")
    normalized = event.normalized
    if status is None and normalized is not None and getattr(normalized, "type", None) == "status":
        status = getattr(normalized, "status", None)
    if status in _SUCCESS:
        return "success"
    if status in _FAILURE:
        return "failure"
    return None


def _times(event: AgentEnvironmentEvent) -> list[str]:
    """What is wrong with the times one event states twice (start/end, created/updated)."""
    problems: list[str] = []
    normalized = event.normalized
    if normalized is None:
        return problems
    wire = normalized.to_wire() if hasattr(normalized, "to_wire") else {}
    if not isinstance(wire, dict):
        return problems
    part = wire.get("part")
    if isinstance(part, dict):
        state = part.get("state")
        span = state.get("time") if isinstance(state, dict) else None
        if isinstance(span, dict) and isinstance(span.get("end"), (int, float)) and span["end"] < span["start"]:
            problems.append(f"tool part {safe_str(part.get('id'), 60)!r} ends ({span['end']}) before it starts ({span['start']})")
    if wire.get("type") == "session.updated":
        time = wire.get("time")
        if isinstance(time, dict):
            created, updated = time.get("created"), time.get("updated")
            if isinstance(created, (int, float)) and isinstance(updated, (int, float)) and updated < created:
                problems.append(f"session {safe_str(wire.get('sessionId'), 60)!r} was updated ({updated}) before it was created ({created})")
    return problems


def _usage_drop(before: TokenUsage, after: TokenUsage) -> str | None:
    for name in ("input_tokens", "output_tokens", "total_tokens", "reasoning_tokens"):
        a, b = getattr(before, name), getattr(after, name)
        if a is not None and b is not None and b < a:
            return f"{name} went from {a} to {b}"
    return None


def check_stream_consistency(
    run: CheckRun, events: Sequence[AgentEnvironmentEvent], session_id: str | None, prefix: str = "stream"
) -> None:
    """``<prefix>.session_identity`` (every session id an event states is the turn's),
    ``<prefix>.usage_cumulative`` (a cumulative usage report never drops below the one
    before it) and ``<prefix>.times`` (no tool part ends before it starts, no session is
    updated before it was created)."""
    stated = [(index, where, value) for index, event in enumerate(events) for where, value in stated_sessions(event)]
    if session_id is None or not stated:
        run.not_applicable(f"{prefix}.session_identity", "no event states a session id" if stated == [] else "the turn names no session")
    else:
        wrong = [(index, where, value) for index, where, value in stated if value != session_id]
        if wrong:
            index, where, value = wrong[0]
            run.fail(f"{prefix}.session_identity",
                     f"event {index} states {where} {safe_str(value, 80)!r}, but the turn's session is "
                     f"{safe_str(session_id, 80)!r} ({len(wrong)} of {len(stated)} session ids differ)")
        else:
            run.passed(f"{prefix}.session_identity", f"all {len(stated)} session ids the events state are the turn's")
    cumulative = [(index, event.usage) for index, event in enumerate(events)
                  if event.usage_mode == "cumulative" and event.usage is not None]
    if len(cumulative) < 2:
        run.not_applicable(f"{prefix}.usage_cumulative", "fewer than two cumulative usage reports")
    else:
        drop = next(((a, b, why) for a, b in itertools.pairwise(cumulative)
                     if (why := _usage_drop(a[1], b[1])) is not None), None)
        if drop is None:
            run.passed(f"{prefix}.usage_cumulative", f"{len(cumulative)} cumulative usage reports never decrease")
        else:
            (first, _), (second, _), why = drop
            run.fail(f"{prefix}.usage_cumulative",
                     f"cumulative usage decreased between events {first} and {second}: {why}; a cumulative "
                     "report is the running total and cannot go down")
    problems = [f"event {index}: {problem}" for index, event in enumerate(events) for problem in _times(event)]
    timed = any(event.normalized is not None for event in events)
    if not timed:
        run.not_applicable(f"{prefix}.times", "no normalized event states a time")
    elif problems:
        run.fail(f"{prefix}.times", "; ".join(problems[:3]))
    else:
        run.passed(f"{prefix}.times", "no part ends before it starts and no session is updated before it was created")


def _same_usage(a: TokenUsage, b: TokenUsage) -> str | None:
    for name in ("input_tokens", "output_tokens", "total_tokens", "cache_read_input_tokens",
                 "cache_creation_input_tokens", "reasoning_tokens"):
        x, y = getattr(a, name), getattr(b, name)
        if x is not None and y is not None and x != y:
            return f"{name}: the events total {x}, the result {y}"
    return None


def check_result_agrees(
    run: CheckRun,
    events: Sequence[AgentEnvironmentEvent],
    result: AgentTurnResult | None,
    session_id: str | None,
    prefix: str = "stream",
    why_missing: str = "no result to compare",
    missing_is_failure_to_run: bool = False,
) -> None:
    """``<prefix>.result_verdict`` (the terminal event's verdict is the result's
    ``success``, and a successful result carries no ``error``), ``<prefix>.result_session``
    (the result's ``sessionId`` is the turn's), ``<prefix>.result_usage`` (the result's usage
    is the events' known total) and ``<prefix>.result_events`` (the events the result
    carries are the events delivered). Without a result every one is ``not_applicable``
    with ``why_missing`` (``skipped`` when ``missing_is_failure_to_run``: the subject offers
    a result but it could not be read)."""
    if result is None:
        for name in RESULT_CHECKS:
            if missing_is_failure_to_run:
                run.skip(f"{prefix}.{name}", f"not run: {why_missing}")
            else:
                run.not_applicable(f"{prefix}.{name}", why_missing)
        return
    terminals = [event for event in events if is_terminal_event(event)]
    verdict = terminal_verdict(terminals[-1]) if terminals else None
    if result.success and result.error is not None:
        run.fail(f"{prefix}.result_verdict", "the result says success and also carries an error")
    elif verdict is None:
        run.not_applicable(f"{prefix}.result_verdict", "the terminal event states no verdict (no status or success)")
    elif (verdict == "success") != result.success:
        run.fail(f"{prefix}.result_verdict",
                 f"the terminal {terminals[-1].type!r} event says {verdict}, but the result says success={result.success}")
    else:
        run.passed(f"{prefix}.result_verdict", f"the terminal event and the result both say {verdict}")
    if result.session_id is None or session_id is None:
        run.not_applicable(f"{prefix}.result_session", "the result names no session")
    elif result.session_id != session_id:
        run.fail(f"{prefix}.result_session",
                 f"the result names session {safe_str(result.session_id, 80)!r}, the turn ran in {safe_str(session_id, 80)!r}")
    else:
        run.passed(f"{prefix}.result_session", "the result names the turn's session")
    total = aggregate_turn_usage(events)
    if result.usage is None or total.usage is None:
        run.not_applicable(f"{prefix}.result_usage", "usage is not known both from the events and from the result")
    else:
        difference = _same_usage(total.usage, result.usage)
        if difference is None:
            run.passed(f"{prefix}.result_usage", "the result's usage is the events' total")
        else:
            run.fail(f"{prefix}.result_usage", f"the result's usage differs from the events' total ({difference})")
    carried = result.events
    if carried is None:
        run.not_applicable(f"{prefix}.result_events", "the result carries no events")
    else:
        delivered = [_wire(event) for event in events]
        kept = [_wire(event) for event in carried]
        if kept == delivered:
            run.passed(f"{prefix}.result_events", f"the result carries the {len(kept)} events delivered")
        else:
            first = next((i for i, (a, b) in enumerate(zip(kept, delivered, strict=False)) if a != b), min(len(kept), len(delivered)))
            run.fail(f"{prefix}.result_events",
                     f"the result carries {len(kept)} events, the stream delivered {len(delivered)}; they differ from event {first}")


async def read_turn_result(handle: Any, timeout: float) -> tuple[AgentTurnResult | None, str]:
    """What ``handle.result()`` answers within ``timeout`` seconds, parsed, or ``None`` and
    why there is none (no ``result()``, it timed out, raised or answered no valid
    :class:`AgentTurnResult`). Never raises but ``KeyboardInterrupt`` and the kit's own
    cancellation: a broken ``result()`` is the session kits' to judge."""
    result_of = getattr(handle, "result", None)
    if not callable(result_of):
        return None, "the session has no result()"
    try:
        return AgentTurnResult.parse_wire(plain_wire(await settle(result_of(), timeout, "result()"))), ""
    except CallTimedOut as timed_out:
        return None, str(timed_out)
    except KeyboardInterrupt:
        raise
    except asyncio.CancelledError:
        if being_cancelled():
            raise
        return None, "result() was cancelled"
    except BaseException as error:
        return None, f"result() gave no valid AgentTurnResult ({describe_error(error)})"
