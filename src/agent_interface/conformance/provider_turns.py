"""The turn, session, workspace and capability-surface checks of the provider kit.

:func:`~agent_interface.conformance.provider.run_provider_conformance_async` calls these
on the environment it created; each records named checks on the run's
:class:`~agent_interface.conformance.report.CheckRun`. They are public so another kit can
reuse one (say, the turn checks on an environment it obtained another way).
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from agent_interface.conformance.bounds import (
    MAX_EVENTS,
    CallTimedOut,
    being_cancelled,
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
from agent_interface.conformance.report import (
    CheckFailed,
    CheckRun,
    describe_error,
    expect,
)
from agent_interface.core.errors import ContractError
from agent_interface.durable.portable_context import plain_wire
from agent_interface.environment.capabilities import AgentEnvironmentCapabilities
from agent_interface.environment.events import AgentEnvironmentEvent
from agent_interface.environment.workspace import ExecResult
from agent_interface.profile.agent_profile import AgentProfile
from agent_interface.provider.protocols import (
    capability_surface_members,
    check_capability_surface,
)
from agent_interface.provider.turn import AgentSessionRef, AgentTurnInput

__all__ = [
    "DEFAULT_PROMPT",
    "ORDER_CHECKS",
    "SESSION_METHODS",
    "STREAM_CHECKS",
    "TurnProbe",
    "check_capability_surface_by_member",
    "check_dispatch_and_session",
    "check_event_order",
    "check_stream",
    "check_turn_profile_refusal",
    "check_workspace",
    "is_terminal_event",
    "read_stream",
    "within",
]

T = TypeVar("T")

DEFAULT_PROMPT = "Return the word ok."
"""The prompt of the kit's turns unless the caller passes another (the reference's)."""

SESSION_METHODS = ("status", "events", "result", "prompt", "cancel")
"""What every ``AgentSession`` handle answers."""

WORKSPACE_TEXT = "conformance \u2713 \U0001f642\n\tsecond line\n"
"""What the workspace check writes and expects back exactly: non-ASCII, an astral
character (two UTF-16 code units), a tab and a trailing newline."""


async def within(timeout: float, value: Awaitable[T] | T, what: str) -> T:
    """Await what a provider call answered, failing the running check when it takes more
    than ``timeout`` seconds (a hang becomes a failure, never a stuck kit; a call that
    ignores cancellation is abandoned). A ``BaseException`` the call raises other than
    ``KeyboardInterrupt`` comes back as an ``Exception``
    (:class:`~agent_interface.conformance.bounds.ProviderEscape`)."""
    try:
        return await settle(value, timeout, what)
    except CallTimedOut as timed_out:
        raise CheckFailed(str(timed_out)) from None


@dataclass
class TurnProbe:
    """What the turn checks send and what they learned: the prompt, the session ids the
    kit names, the per-call ``timeout`` in seconds, and the session id ``dispatch()``
    answered (``None`` until it did)."""

    prompt: str
    session_id: str
    turn_id: str
    dispatch_session_id: str
    timeout: float
    require_usage: bool = False
    require_dispatch: bool = False
    dispatched: str | None = None
    events: list[AgentEnvironmentEvent] = field(default_factory=list)

    def turn(self, session_id: str, **fields: Any) -> AgentTurnInput:
        return AgentTurnInput(prompt=self.prompt, session_id=session_id, **fields)


# --- capability surface --------------------------------------------------------------------


def check_capability_surface_by_member(
    run: CheckRun,
    subject: object,
    capabilities: AgentEnvironmentCapabilities,
    kind: Literal["provider", "environment", "session"],
) -> None:
    """One check per optional member of a ``kind`` object, named
    ``surface.<kind>.<member>``: present exactly when its capability says so."""
    issues = {issue.member: issue for issue in check_capability_surface(subject, capabilities, kind=kind)}
    declared = {issue.member for issue in check_capability_surface(_NoMembers(), capabilities, kind=kind)}
    for member in capability_surface_members(kind):
        issue = issues.get(member)
        if issue is not None:
            run.fail(f"surface.{kind}.{member}", issue.message)
        elif member not in declared and _member(subject, member) is None:
            run.not_applicable(f"surface.{kind}.{member}", f"{member} is not offered and the document does not require it")
        else:
            run.passed(f"surface.{kind}.{member}", f"{member} matches the capability document")


def _member(subject: object, name: str) -> Any:
    """``subject.name``, or ``None`` when it is missing or reading it raises."""
    try:
        return getattr(subject, name, None)
    except KeyboardInterrupt:
        raise
    except BaseException:  # a hostile property is a missing member, never a crash
        return None


class _NoMembers:
    """An object with no optional member: what a missing session handle offers."""


def _declared_session_members(capabilities: AgentEnvironmentCapabilities) -> set[str]:
    return {
        issue.member
        for issue in check_capability_surface(_NoMembers(), capabilities, kind="session")
        if issue.code == "missing_declared_capability"
    }


# --- one streamed turn ---------------------------------------------------------------------


def _event(value: Any, index: int) -> AgentEnvironmentEvent:
    try:
        return AgentEnvironmentEvent.parse_wire(plain_wire(value))
    except ContractError as error:
        raise CheckFailed(f"event {index} is not a valid AgentEnvironmentEvent: {describe_error(error)}") from None


class _TooManyEvents(Exception):
    """A stream went on past :data:`~agent_interface.conformance.bounds.MAX_EVENTS`."""


async def _drain(
    stream: Callable[[AgentTurnInput], Any], turn: AgentTurnInput, into: list[Any], limit: int = MAX_EVENTS
) -> None:
    iterator = stream(turn)
    if inspect.iscoroutine(iterator):
        iterator.close()
        raise CheckFailed("stream() answered a coroutine; it must return an async iterator of events")
    if not hasattr(iterator, "__aiter__"):
        raise CheckFailed(f"stream() answered {type(iterator).__name__}, not an async iterator of events")
    async for item in iterator:
        if len(into) >= limit:
            raise _TooManyEvents(f"stream() emitted more than {limit:,} events in one turn; the kit stopped reading")
        into.append(item)
        if len(into) % 64 == 0:
            await asyncio.sleep(0)  # a stream that never awaits still lets a timeout fire


async def read_stream(
    stream: Callable[[AgentTurnInput], Any], turn: AgentTurnInput, timeout: float, limit: int = MAX_EVENTS
) -> tuple[list[Any], str]:
    """The items one turn's ``stream(turn)`` yielded within ``timeout`` seconds (at most
    ``limit``), and how reading ended: ``""`` when the stream ended by itself, otherwise a
    sentence (timed out, emitted too many events, raised...). Never raises but
    ``KeyboardInterrupt`` (and the kit's own cancellation)."""
    raw: list[Any] = []
    try:
        await settle(_drain(stream, turn, raw, limit), timeout, "stream()")
    except CallTimedOut as timed_out:
        return raw, f"{timed_out} after {len(raw)} events"
    except (CheckFailed, _TooManyEvents) as failure:
        return raw, safe_str(failure)
    except KeyboardInterrupt:
        raise
    except asyncio.CancelledError:
        if being_cancelled():
            raise
        return raw, "stream() raised CancelledError"
    except BaseException as error:  # a broken stream is reported, never raised
        return raw, f"stream() raised {describe_error(error)}"
    return raw, ""


def _sequence_of(event: AgentEnvironmentEvent) -> int | None:
    value = event.data.get("sequence")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def check_event_order(
    run: CheckRun, events: list[AgentEnvironmentEvent], prefix: str = "stream", ids: bool = True
) -> None:
    """``<prefix>.terminal_last`` (the turn's last event is terminal), ``<prefix>.one_terminal``
    (exactly one terminal event), ``<prefix>.sequence`` (every ``data.sequence`` strictly
    increases; not applicable when no event carries one) and, unless ``ids`` is false (a
    kit that checks ids itself), ``<prefix>.event_ids`` (no two events share an ``id`` or a
    ``data.eventId``; not applicable when none carries one)."""
    terminals = [index for index, event in enumerate(events) if is_terminal_event(event)]
    if not terminals:
        for name in ("terminal_last", "one_terminal"):
            run.skip(f"{prefix}.{name}", "not run: the turn emitted no terminal event")
    else:
        last = len(events) - 1
        run.add(
            f"{prefix}.terminal_last",
            terminals[-1] == last,
            "the turn's last event is its terminal event" if terminals[-1] == last else
            f"event {terminals[-1]} ({events[terminals[-1]].type}) is terminal, but {last - terminals[-1]} event(s) follow it, "
            f"the last a {events[last].type!r} event",
        )
        run.add(
            f"{prefix}.one_terminal",
            len(terminals) == 1,
            "the turn has exactly one terminal event" if len(terminals) == 1 else
            f"the turn has {len(terminals)} terminal events, at indexes {terminals[:8]}",
        )
    numbered = [(index, sequence) for index, event in enumerate(events) if (sequence := _sequence_of(event)) is not None]
    if not numbered:
        run.not_applicable(f"{prefix}.sequence", "no event carries data.sequence")
    else:
        broken = next(((a, b) for a, b in itertools.pairwise(numbered) if b[1] <= a[1]), None)
        run.add(
            f"{prefix}.sequence",
            broken is None,
            f"data.sequence strictly increases over {len(numbered)} events" if broken is None else
            f"data.sequence goes {broken[0][1]} (event {broken[0][0]}) then {broken[1][1]} (event {broken[1][0]}); it must strictly increase",
        )
    if not ids:
        return
    problems: list[str] = []
    carried = False
    for label, values in (
        ("id", [event.id for event in events]),
        ("data.eventId", [event.data.get("eventId") for event in events]),
    ):
        present = [value for value in values if isinstance(value, str)]
        carried = carried or bool(present)
        repeated = sorted({value for value in present if present.count(value) > 1})
        if repeated:
            problems.append(f"{len(repeated)} {label} value(s) repeat, e.g. {safe_str(repeated[0], 80)!r}")
    if not carried:
        run.not_applicable(f"{prefix}.event_ids", "no event carries an id or data.eventId")
    else:
        run.add(f"{prefix}.event_ids", not problems, "no two events share an id" if not problems else "; ".join(problems))


ORDER_CHECKS = ("terminal_last", "one_terminal", "sequence", "event_ids")
"""The event-order checks :func:`check_event_order` records, after its prefix."""

STREAM_CHECKS = (*ORDER_CHECKS, *STREAM_CONSISTENCY_CHECKS, *RESULT_CHECKS)
"""Every check recorded on one turn's events, after its prefix (``stream.`` for the
streamed turn, ``session.`` for the dispatched one): the event order, what the events
state twice, and the agreement with the turn's result."""


async def _session_result(environment: Any, session_id: str, timeout: float) -> tuple[Any, str]:
    """The :class:`AgentTurnResult` ``environment.session(session_id).result()`` answers, or
    ``None`` and why there is none to compare (no ``session()``, it raised, it is invalid)."""
    factory = _member(environment, "session")
    if not callable(factory):
        return None, "the environment has no session() to read the turn's result from"
    try:
        handle = factory(session_id)
    except KeyboardInterrupt:
        raise
    except BaseException as error:  # the session kits judge session() itself
        return None, f"session(id) raised {describe_error(error)}"
    if inspect.iscoroutine(handle):
        handle.close()
        return None, "session(id) answered a coroutine"
    return await read_turn_result(handle, timeout)


async def check_stream(
    run: CheckRun, environment: Any, capabilities: AgentEnvironmentCapabilities, probe: TurnProbe
) -> None:
    """``stream.events``, ``stream.terminal``, the event-order checks of
    :func:`check_event_order`, ``stream.result`` and ``stream.usage`` for one real turn
    sent through ``environment.stream``."""
    stream = _member(environment, "stream")
    raw: list[Any] = []
    ending = "the environment has no stream()"
    if callable(stream):
        raw, ending = await read_stream(stream, probe.turn(probe.session_id, turn_id=probe.turn_id), probe.timeout)
    timed_out = "timed out" in ending

    async def events() -> None:
        expect(callable(stream), "the environment has no stream()")
        if ending and not raw:
            raise CheckFailed(ending)
        expect(raw, "stream() ended without a single event")
        parsed: list[AgentEnvironmentEvent] = []
        for index, item in enumerate(raw):
            parsed.append(_event(item, index))
            if index % 64 == 63:
                await asyncio.sleep(0)  # the kit's own work never starves its heartbeat
        probe.events[:] = parsed
        if ending and not timed_out:
            terminal = any(is_terminal_event(event) for event in probe.events)
            expect(terminal, f"the turn broke after {len(raw)} events: {ending}")

    dependents = ("stream.terminal", *(f"stream.{name}" for name in STREAM_CHECKS), "stream.result", "stream.usage")
    if not await run.check("stream.events", events, "one turn streamed valid events"):
        for name in dependents:
            run.skip(name, "not run: the turn streamed no valid event")
        return

    async def terminal() -> None:
        if any(is_terminal_event(event) for event in probe.events):
            return
        if timed_out:
            raise CheckFailed(f"{ending}, none of them terminal: the kit gave up waiting for the turn to end")
        kinds = [event.type for event in probe.events]
        raise CheckFailed(f"no terminal result/done/final/status event among {kinds[:8]}")

    ended = await run.check("stream.terminal", terminal, "the turn emitted a terminal event")
    check_event_order(run, probe.events)
    check_stream_consistency(run, probe.events, probe.session_id)
    if ended:
        result, missing = await _session_result(environment, probe.session_id, probe.timeout)
        offered = callable(_member(environment, "session"))
        check_result_agrees(run, probe.events, result, probe.session_id, "stream", missing, offered)
    else:
        for name in RESULT_CHECKS:
            run.skip(f"stream.{name}", "not run: the turn emitted no terminal event")
    if ended:

        async def result() -> None:
            expect(not ending, f"after its terminal event, {ending}")

        await run.check("stream.result", result, "the stream ended with the turn's result")
    else:
        run.skip("stream.result", "not run: the turn emitted no terminal event")

    if capabilities.usage or probe.require_usage:

        async def usage() -> None:
            expect(
                any(event.usage is not None for event in probe.events),
                "usage is declared but no event of the turn reports usage",
            )

        await run.check("stream.usage", usage, "the turn reported usage")
    else:
        run.skip("stream.usage", "usage is not declared")


async def check_turn_profile_refusal(
    run: CheckRun, environment: Any, capabilities: AgentEnvironmentCapabilities, probe: TurnProbe
) -> None:
    """``refusal.turn_profile``: without ``profile.runtimeUpdate`` a turn carrying a
    profile is refused (``ContractError``) before it emits anything."""
    name = "refusal.turn_profile"
    if capabilities.profile.runtime_update:
        run.skip(name, "profile.runtimeUpdate is declared: a per-turn profile is honoured")
        return
    stream = _member(environment, "stream")
    if not callable(stream):
        run.skip(name, "the environment has no stream()")
        return
    emitted: list[Any] = []

    async def body() -> None:
        turn = probe.turn(f"{probe.session_id}-profile", profile=AgentProfile(name="conformance-turn-profile"))
        try:
            await settle(_drain(stream, turn, emitted), probe.timeout, "stream()")
        except CallTimedOut:
            raise CheckFailed(
                f"a turn carrying a profile was neither refused nor finished: timed out after {probe.timeout:g} s"
            ) from None
        except ContractError as error:
            expect(not emitted, f"a per-turn profile was refused only after {len(emitted)} events ({describe_error(error)})")
            return
        except CheckFailed:
            raise
        except Exception as error:
            raise CheckFailed(
                f"a per-turn profile must be refused with a ContractError before dispatch; stream() raised {describe_error(error)}"
            ) from None
        raise CheckFailed("runtimeUpdate is false, but a turn carrying a profile was dispatched")

    await run.check(name, body, "a per-turn profile is refused before dispatch")


# --- dispatch and sessions -----------------------------------------------------------------


async def check_dispatch_and_session(
    run: CheckRun, environment: Any, capabilities: AgentEnvironmentCapabilities, probe: TurnProbe
) -> None:
    """``dispatch.session_id`` (with ``streaming.detach``), ``session.handle`` (whenever
    ``session()`` is there) and ``surface.session.<member>`` on that handle."""
    dispatch = _member(environment, "dispatch")
    if not (capabilities.streaming.detach or probe.require_dispatch):
        run.skip("dispatch.session_id", "streaming.detach is not declared")
    elif not callable(dispatch) and capabilities.streaming.detach:
        run.skip("dispatch.session_id", "no dispatch() to call (see surface.environment.dispatch)")
    elif not callable(dispatch):
        run.fail("dispatch.session_id", "require_dispatch was asked for, but the environment has no dispatch()")
    else:

        async def dispatched() -> None:
            answer = await within(probe.timeout, dispatch(probe.turn(probe.dispatch_session_id)), "dispatch()")
            expect(answer is not None, "dispatch() answered None instead of a session reference")
            try:
                ref = AgentSessionRef.parse_wire(plain_wire(answer))
            except ContractError as error:
                raise CheckFailed(f"dispatch() answered no valid AgentSessionRef: {describe_error(error)}") from None
            probe.dispatched = ref.id

        await run.check("dispatch.session_id", dispatched, "dispatch() answered a session id")

    factory = _member(environment, "session")
    handle: Any = None
    if callable(factory):
        session_id = probe.dispatched or probe.session_id

        async def opened() -> None:
            nonlocal handle
            answer = factory(session_id)
            if inspect.iscoroutine(answer):
                answer.close()
                raise CheckFailed("session(id) answered a coroutine; it must return the session handle")
            expect(answer is not None, "session(id) answered None instead of a session handle")
            expect(getattr(answer, "id", None) == session_id, f"session({session_id!r}) answered a handle with id {getattr(answer, 'id', None)!r}")
            missing = [method for method in SESSION_METHODS if not callable(getattr(answer, method, None))]
            expect(not missing, f"the session handle has no {', '.join(missing)}")
            handle = answer

        await run.check("session.handle", opened, "session(id) answered a handle for that session")
    else:
        run.skip("session.handle", "the environment has no session()")

    if handle is not None:
        check_capability_surface_by_member(run, handle, capabilities, "session")
        if probe.dispatched is not None:
            await _check_dispatched(run, handle, probe)
        else:
            for name in STREAM_CHECKS:
                run.skip(f"session.{name}", "no turn was dispatched")
        return
    for name in STREAM_CHECKS:
        run.skip(f"session.{name}", "no session handle to read the dispatched turn from")
    declared = _declared_session_members(capabilities)
    for member in capability_surface_members("session"):
        if member in declared:
            run.fail(f"surface.session.{member}", f"{member} is declared, but there is no session handle to carry it")
        else:
            run.skip(f"surface.session.{member}", "no session handle to inspect")


async def _check_dispatched(run: CheckRun, handle: Any, probe: TurnProbe) -> None:
    """The stream checks (:data:`STREAM_CHECKS`, prefix ``session.``) on the dispatched turn:
    its result, then its events read back through ``handle.events()``."""
    assert probe.dispatched is not None
    # let the detached turn finish; its outcome is the session kits' to judge
    result, missing = await read_turn_result(handle, probe.timeout)
    events_of = _member(handle, "events")
    raw: list[Any] = []
    ending = "the session handle has no events()"
    if callable(events_of):
        raw, ending = await read_stream(lambda _turn: events_of(), probe.turn(probe.dispatched), probe.timeout)
    parsed: list[AgentEnvironmentEvent] = []
    broken = ending
    for index, item in enumerate(raw):
        try:
            parsed.append(AgentEnvironmentEvent.parse_wire(plain_wire(item)))
        except ContractError as error:
            broken = f"event {index} is not a valid AgentEnvironmentEvent: {describe_error(error)}"
            break
    if broken or not parsed:
        for name in STREAM_CHECKS:
            run.skip(f"session.{name}", f"not run: the dispatched turn's events could not be read ({broken or 'none'})")
        return
    check_event_order(run, parsed, "session")
    check_stream_consistency(run, parsed, probe.dispatched, "session")
    check_result_agrees(run, parsed, result, probe.dispatched, "session", missing or "no result", bool(missing))


# --- workspace -----------------------------------------------------------------------------


async def check_workspace(
    run: CheckRun, environment: Any, capabilities: AgentEnvironmentCapabilities, path: str, timeout: float
) -> None:
    """``workspace.write``, ``workspace.read`` (the exact text written comes back) and
    ``workspace.exec`` (``true`` answers exit code 0, ``false`` exit code 1), each for a
    declared method; a method that is missing is the surface check's failure."""
    declared = capabilities.workspace
    write = _member(environment, "write")
    read = _member(environment, "read")
    exec_ = _member(environment, "exec")
    written = False
    if not declared.write:
        run.skip("workspace.write", "workspace.write is not declared")
    elif not callable(write):
        run.skip("workspace.write", "no write() to call (see surface.environment.write)")
    else:

        async def wrote() -> None:
            await within(timeout, write(path, WORKSPACE_TEXT), "write()")

        written = await run.check("workspace.write", wrote, "write() stored a file")

    if not declared.read:
        run.skip("workspace.read", "workspace.read is not declared")
    elif not callable(read):
        run.skip("workspace.read", "no read() to call (see surface.environment.read)")
    elif not written:
        # nothing to compare with, but a declared read() must at least be implemented
        implemented = True
        try:
            await within(timeout, read(path), "read()")
        except NotImplementedError:
            implemented = False
        except Exception:
            pass  # a missing file may well be refused
        if implemented:
            run.skip("workspace.read", "not run: nothing was written to read back")
        else:
            run.fail("workspace.read", "workspace.read is declared, but read() raises NotImplementedError")
    else:

        async def read_back() -> None:
            text = await within(timeout, read(path), "read()")
            expect(isinstance(text, str), f"read() answered {type(text).__name__}, not the file's text")
            expect(
                text == WORKSPACE_TEXT,
                f"read() answered {len(text)} characters that differ from the {len(WORKSPACE_TEXT)} written",
            )

        await run.check("workspace.read", read_back, "read() answered exactly what write() stored")

    if not declared.exec:
        run.skip("workspace.exec", "workspace.exec is not declared")
    elif not callable(exec_):
        run.skip("workspace.exec", "no exec() to call (see surface.environment.exec)")
    else:

        async def executed() -> None:
            for command, code in (("true", 0), ("false", 1)):
                answer = await within(timeout, exec_(command), f"exec({command!r})")
                expect(answer is not None, f"exec({command!r}) answered None instead of an ExecResult")
                try:
                    result = ExecResult.parse_wire(plain_wire(answer))
                except ContractError as error:
                    raise CheckFailed(f"exec({command!r}) answered no valid ExecResult: {describe_error(error)}") from None
                expect(result.exit_code == code, f"exec({command!r}) answered exit code {result.exit_code}, not {code}")

        await run.check("workspace.exec", executed, "exec() answered each command's exit code")
