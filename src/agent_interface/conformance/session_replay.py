"""Conformance checks for detached turns and event replay of retained sessions.

:func:`run_session_replay_conformance` creates one environment, dispatches one detached
turn and proves, like the reference testkit's session-replay runner:

* ``surface``: the environment declares detach and replay and has ``dispatch`` and
  ``session``;
* ``detach_control_reference``: the detached turn answers a control reference naming this
  provider, environment and session, and ``session(id, control_ref=...)`` binds it;
* ``competing_run_refused``: a reference to another run of the same session is refused
  (by ``session``, by the client's own reference, or by its ``events``);
* ``stable_event_ids``: the stream ends, every event has a non-empty id, the ids are
  unique, and reading the stream again gives the same ids;
* ``replay_after_cursor``: replay after each event id yields exactly the later events;
* ``reconnected_replay``: a client rebuilt through ``provider.get`` and
  ``environment.session(id, control_ref=...)`` (or a ``reconnect`` callable) has the same
  identity and gives the same events, in full and after a cursor;
* ``environment_cleanup``: the environment the kit created is destroyed, and afterwards
  ``provider.get`` no longer answers it as live and ``provider.list`` no longer lists it
  (when the provider has them).

A method the provider lacks is reported as skipped (or failed when its capability is
declared), never passed.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterable, Callable, Mapping
from dataclasses import replace
from typing import Any

from agent_interface.conformance.bounds import (
    MAX_EVENTS,
    CallTimedOut,
    being_cancelled,
    describe_error,
    safe_str,
    settle,
)
from agent_interface.conformance.consistency import (
    RESULT_CHECKS,
    STREAM_CONSISTENCY_CHECKS,
    check_result_agrees,
    check_stream_consistency,
    is_terminal_event,
    read_turn_result,
)
from agent_interface.conformance.provider_turns import check_event_order
from agent_interface.conformance.report import (
    CheckFailed,
    CheckRun,
    ConformanceReport,
    ConformanceUsageError,
    contained,
    expect,
    maybe_await,
    run_sync,
)
from agent_interface.core.errors import ContractError
from agent_interface.durable.portable_context import plain_wire
from agent_interface.environment.capabilities import AgentEnvironmentCapabilities
from agent_interface.environment.events import AgentEnvironmentEvent
from agent_interface.runtime.control import AgentRunControlRef, same_agent_run_control_ref

__all__ = [
    "SESSION_REPLAY_CHECKS",
    "SESSION_REPLAY_NOT_CERTIFIED",
    "run_session_replay_conformance",
    "run_session_replay_conformance_async",
]

SESSION_REPLAY_NOT_CERTIFIED = ("replay after a provider restart: the rebuilt client lives in the same process",)
"""What this kit cannot prove by calling its subject (``ConformanceReport.not_certified``)."""

REPLAY_STREAM_CHECKS = (
    "terminal_last", "one_terminal", "sequence", *STREAM_CONSISTENCY_CHECKS, *RESULT_CHECKS,
)
"""The checks recorded on the replayed events, after ``replay.``: the event order (ids are
``stable_event_ids``' to judge), what the events state twice, and their agreement with
the session's ``result()``."""

SESSION_REPLAY_CHECKS = (
    "surface",
    "detach_control_reference",
    "competing_run_refused",
    "stable_event_ids",
    *(f"replay.{name}" for name in REPLAY_STREAM_CHECKS),
    "replay_after_cursor",
    "reconnected_replay",
    "environment_cleanup",
)
"""Every check the session-replay kit records, in order."""

_MAX_CURSORS = 32


__all__ += ["is_terminal_event"]


async def _collect(events: Any, timeout: float) -> list[AgentEnvironmentEvent]:
    async def read() -> list[AgentEnvironmentEvent]:
        stream = await maybe_await(events)
        expect(isinstance(stream, AsyncIterable), "events() did not answer an async iterable")
        out: list[AgentEnvironmentEvent] = []
        async for event in stream:
            expect(len(out) < MAX_EVENTS, f"the event stream went on past {MAX_EVENTS:,} events; the kit stopped reading")
            try:
                out.append(AgentEnvironmentEvent.parse_wire(plain_wire(event)))
            except ContractError as error:
                raise CheckFailed(f"event {len(out)} is not a valid environment event: {describe_error(error)}") from None
            if len(out) % 64 == 0:
                await asyncio.sleep(0)  # a stream that never awaits still lets the timeout fire
        return out

    try:
        return await settle(read(), timeout, "the event stream")
    except CallTimedOut as timed_out:
        raise CheckFailed(f"{timed_out}: it did not end") from None


def _ids(events: list[AgentEnvironmentEvent]) -> list[str | None]:
    return [event.id for event in events]


@contained
async def run_session_replay_conformance_async(
    provider: Any,
    *,
    turn: Mapping[str, Any] | None = None,
    create_input: Mapping[str, Any] | None = None,
    reconnect: Callable[[Any], Any] | None = None,
    timeout: float = 30.0,
    subject: str | None = None,
) -> ConformanceReport:
    """Run every check against ``provider`` (an ``AgentEnvironmentProvider``).

    ``turn`` is the detached turn (wire names; a small prompt by default), ``create_input``
    extends the create input, ``reconnect(reference)`` rebuilds a session client when the
    provider has no ``get``, and ``timeout`` bounds each read of the event stream.
    Raises :class:`ConformanceUsageError` when ``provider`` cannot create environments.
    """
    if provider is None or not callable(getattr(provider, "create", None)):
        raise ConformanceUsageError("run_session_replay_conformance needs a provider with create()")
    name = getattr(provider, "name", None)
    run = CheckRun("session replay", subject or safe_str(name or type(provider).__name__), timeout=5 * timeout, call_timeout=timeout)
    nonce = uuid.uuid4().hex[:12]
    made: dict[str, Any] = {}

    async def start() -> None:
        document = await settle(provider.capabilities(), timeout, "capabilities()")
        made["provided"] = AgentEnvironmentCapabilities.parse_wire(plain_wire(document))
        made["environment"] = await settle(
            provider.create(
                {"profile": {"name": f"conformance-replay-{nonce}"}, "name": f"conformance-replay-{nonce}", **(create_input or {})}
            ),
            timeout,
            "create()",
        )

    try:
        await start()
    except KeyboardInterrupt:
        raise
    except BaseException as error:  # the provider could not be set up: every check says so
        if isinstance(error, asyncio.CancelledError) and being_cancelled():
            raise
        run.fail("surface", f"capabilities() or create() failed before any check: {describe_error(error)}")
        for check in SESSION_REPLAY_CHECKS[1:]:
            run.skip(check, "not run: no environment was created")
        return run.report(not_certified=SESSION_REPLAY_NOT_CERTIFIED)
    environment = made["environment"]
    try:
        await _checks(run, provider, environment, made["provided"], turn, reconnect, timeout, nonce)
    finally:
        destroy = getattr(environment, "destroy", None)
        checked = any(check.status != "skipped" for check in run.checks)
        if not callable(destroy):
            run.skip("environment_cleanup", "the environment has no destroy()")
        elif await run.check("environment_cleanup", lambda: _cleaned_up(provider, environment, destroy, timeout)) and not checked:
            # nothing else ran: a destroyed environment alone must not read as a pass
            run.checks[-1] = replace(run.checks[-1], status="skipped", message="nothing to replay; the environment was destroyed")
    return run.report(not_certified=SESSION_REPLAY_NOT_CERTIFIED)


_LIVE = ("running", "pending", "provisioning")


async def _cleaned_up(provider: Any, environment: Any, destroy: Callable[[], Any], timeout: float) -> None:
    """Destroy the kit's environment, then prove ``get`` and ``list`` no longer show it live."""
    await settle(destroy(), timeout, "destroy()")
    env_id = getattr(environment, "id", None)
    getter = getattr(provider, "get", None)
    if isinstance(env_id, str) and callable(getter):
        found = await settle(getter(env_id), timeout, "get() after destroy()")
        if found is not None:
            status = getattr(found, "status", None)
            state = await settle(status(), timeout, "status()") if callable(status) else status
            expect(state not in _LIVE, f"after destroy(), get() still answers the environment as {safe_str(state, 40)!r}")
    lister = getattr(provider, "list", None)
    if isinstance(env_id, str) and callable(lister):
        listed = await settle(lister(), timeout, "list() after destroy()")
        live = [
            item for item in listed or ()
            if getattr(item, "id", None) == env_id and getattr(item, "status", None) in _LIVE
        ]
        expect(not live, "after destroy(), list() still lists the environment as live")


async def _checks(
    run: CheckRun,
    provider: Any,
    environment: Any,
    provided: AgentEnvironmentCapabilities,
    turn: Mapping[str, Any] | None,
    reconnect: Callable[[Any], Any] | None,
    timeout: float,
    nonce: str,
) -> None:
    own = getattr(environment, "capabilities", None)
    capabilities = provided if own is None else AgentEnvironmentCapabilities.parse_wire(plain_wire(own))
    rest = SESSION_REPLAY_CHECKS[1:-1]
    if not (capabilities.streaming.detach and capabilities.streaming.replay):
        run.skip("surface", "the environment declares neither detach nor replay together: nothing to replay")
        for name in rest:
            run.skip(name, "detach and replay are not declared")
        return

    async def surface() -> None:
        missing = [name for name in ("dispatch", "session") if not callable(getattr(environment, name, None))]
        expect(not missing, f"detach and replay are declared but the environment has no {', '.join(missing)}()")

    if not await run.check("surface", surface):
        for name in rest:
            run.skip(name, "the environment lacks dispatch() or session()")
        return
    state: dict[str, Any] = {}
    detached = {"prompt": f"conformance replay {nonce}", "turnId": f"turn-{nonce}", **(turn or {}), "detach": True}

    async def detach() -> None:
        reference = await maybe_await(environment.dispatch(detached))
        control = getattr(reference, "control_ref", None)
        expect(control is not None, "the detached turn answered no control reference")
        control_ref = AgentRunControlRef.parse_wire(plain_wire(control))
        expect(
            control_ref.provider == provider.name
            and control_ref.environment_id == environment.id
            and control_ref.session_id == reference.id,
            "the control reference does not name this provider, environment and dispatched session",
        )
        state.update(reference=reference, control=control_ref)
        session = environment.session(reference.id, control_ref=control_ref)
        bound = getattr(session, "control_ref", None)
        expect(
            session.id == reference.id and bound is not None and same_agent_run_control_ref(bound, control_ref),
            "the session client's control reference differs from the dispatched one",
        )
        state["session"] = session

    if not await run.check("detach_control_reference", detach):
        for name in rest[1:]:
            run.skip(name, "no detached session was bound")
        return
    reference, control, session = state["reference"], state["control"], state["session"]
    execution = {"execution_id": control.execution_id} if control.execution_id else {}

    async def competing() -> None:
        wire = control.to_wire()
        wire["runId"] = f"{control.run_id}-competing"
        if control.execution_id:
            wire["executionId"] = f"{control.execution_id}-competing"
        other = AgentRunControlRef.parse_wire(wire)
        try:
            client = environment.session(reference.id, control_ref=other)
            bound = getattr(client, "control_ref", None)
            if bound is not None and same_agent_run_control_ref(bound, other):
                kwargs = {"execution_id": other.execution_id} if other.execution_id else {}
                await _collect(client.events(**kwargs), timeout)
            else:
                return  # the client is bound to the real run, not the competing one
        except CheckFailed:
            raise
        except Exception:
            return
        raise CheckFailed("a competing run's control reference was accepted and its events were served")

    await run.check("competing_run_refused", competing)

    async def stable() -> None:
        events = await _collect(session.events(), timeout)
        expect(len(events) > 1, f"the session has {len(events)} event(s); replay needs at least two")
        expect(any(is_terminal_event(event) for event in events), "the event stream never reports the end of the turn")
        ids = _ids(events)
        expect(all(isinstance(item, str) and item for item in ids), "an event of a replayable session has no id")
        expect(len(set(ids)) == len(ids), "event ids of a replayable session are not unique")
        again = await _collect(session.events(), timeout)
        expect(_ids(again) == ids, "reading the stream again gave other event ids")
        state["events"] = events

    if not await run.check("stable_event_ids", stable):
        for name in rest[3:]:
            run.skip(name, "no stable event ids to replay from")
        return
    events: list[AgentEnvironmentEvent] = state["events"]
    ids = _ids(events)
    await _replayed_stream(run, session, reference.id, events, timeout)

    async def after_cursor() -> None:
        for index, cursor in enumerate(ids[:-1][:_MAX_CURSORS]):
            replay = await _collect(session.events(since=cursor, **execution), timeout)
            expect(_ids(replay) == ids[index + 1:], f"replay after event {index} did not yield exactly the later events")

    await run.check("replay_after_cursor", after_cursor)

    async def reconnected() -> None:
        if reconnect is not None:
            client = await maybe_await(reconnect(reference))
        else:
            rebuilt = await maybe_await(provider.get(environment.id))
            expect(rebuilt is not None, "provider.get() does not find the environment")
            client = rebuilt.session(reference.id, control_ref=control)
        bound = getattr(client, "control_ref", None)
        expect(
            client.id == reference.id and bound is not None and same_agent_run_control_ref(bound, control),
            "the reconnected session's identity differs from the dispatched one",
        )
        full = await _collect(client.events(**execution), timeout)
        expect([event.to_wire() for event in full] == [event.to_wire() for event in events], "the reconnected client gives other events")
        replay = await _collect(client.events(since=ids[0], **execution), timeout)
        expect(_ids(replay) == ids[1:], "replay through the reconnected client differs after the cursor")

    if reconnect is None and not callable(getattr(provider, "get", None)):
        run.skip("reconnected_replay", "the provider has no get() and no reconnect was given")
    else:
        await run.check("reconnected_replay", reconnected)


async def _replayed_stream(
    run: CheckRun, session: Any, session_id: str, events: list[AgentEnvironmentEvent], timeout: float
) -> None:
    """The ``replay.*`` checks on the replayed events and the session's ``result()``."""
    check_event_order(run, events, "replay", ids=False)
    check_stream_consistency(run, events, session_id, "replay")
    result, missing = await read_turn_result(session, timeout)
    check_result_agrees(run, events, result, session_id, "replay", missing or "no result", bool(missing))


def run_session_replay_conformance(provider: Any, **options: Any) -> ConformanceReport:
    """Synchronous :func:`run_session_replay_conformance_async`."""
    return run_sync(run_session_replay_conformance_async(provider, **options))
