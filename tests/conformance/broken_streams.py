"""Deliberately broken streams and hostile providers: each must fail the provider kit's
check that names it (``test_broken_providers.py`` runs them with :data:`BROKEN`'s).

The event-order providers stream a turn whose terminal event is not last, that has two
terminal events, whose ``data.sequence`` goes 5, 5, 2, or whose event ids repeat. The
hostile ones ignore cancellation, block the kit's thread, raise ``SystemExit`` or
``GeneratorExit``, raise an exception whose ``__str__`` recurses or whose message is
megabytes long, or stream events without end: the kit must still answer, in bounded
time, with the check failed by name.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

from agent_interface.environment.events import AgentEnvironmentEvent
from agent_interface.provider.turn import CreateAgentEnvironmentInput
from tests.conformance.broken_providers import Broken, _stream_of, fake_with
from tests.conformance.fake_provider import DISABLED, FakeEnvironment, FakeProvider

_PART = AgentEnvironmentEvent(type="message.part.updated", data={"delta": "ok"})
_RESULT = AgentEnvironmentEvent(type="result", data={"finalText": "ok"})


def _numbered(sequence: int, kind: str = "message.part.updated", event_id: str | None = None) -> AgentEnvironmentEvent:
    data: dict[str, Any] = {"sequence": sequence}
    if kind == "result":
        data["finalText"] = "ok"
    return AgentEnvironmentEvent(type=kind, data=data, id=event_id)


# --- hostile streams and calls -------------------------------------------------------------------


class _SwallowsCancellation(FakeEnvironment):
    """A stream that never ends and keeps running when cancelled."""

    def stream(self, input: Any) -> AsyncIterator[AgentEnvironmentEvent]:
        async def emit() -> AsyncIterator[AgentEnvironmentEvent]:
            yield _PART
            while True:
                try:
                    await asyncio.sleep(30)
                except asyncio.CancelledError:  # the point: it ignores cancellation
                    continue

        return emit()


class _BlocksTheThread(FakeEnvironment):
    """A stream that blocks the kit's thread (a synchronous sleep inside async code)."""

    def stream(self, input: Any) -> AsyncIterator[AgentEnvironmentEvent]:
        async def emit() -> AsyncIterator[AgentEnvironmentEvent]:
            yield _PART
            time.sleep(0.7)
            yield _RESULT

        return emit()


class _Endless(FakeEnvironment):
    """A stream of events without end, as fast as it can."""

    def stream(self, input: Any) -> AsyncIterator[AgentEnvironmentEvent]:
        async def emit() -> AsyncIterator[AgentEnvironmentEvent]:
            while True:
                yield _PART

        return emit()


class _Recursing(Exception):
    def __str__(self) -> str:
        return str(self)

    def __repr__(self) -> str:
        return repr(self)


class _Huge(Exception):
    pass


def _raising(error: BaseException) -> type[FakeEnvironment]:
    class Raising(FakeEnvironment):
        def stream(self, input: Any) -> AsyncIterator[AgentEnvironmentEvent]:
            async def emit() -> AsyncIterator[AgentEnvironmentEvent]:
                raise error
                yield _PART  # pragma: no cover - makes this an async generator

            return emit()

    return Raising


class _CreateSystemExit(FakeProvider):
    async def create(self, input: CreateAgentEnvironmentInput) -> FakeEnvironment:
        raise SystemExit(3)


def _blind_to(field_name: str) -> type[FakeProvider]:
    class Blind(FakeProvider):
        """Compares a reused key's input without ``field_name``: a change there replays."""

        async def create(self, input: CreateAgentEnvironmentInput) -> FakeEnvironment:
            first = self.__dict__.setdefault("first_values", {})
            value = first.get(input.idempotency_key, getattr(input, field_name))
            environment = await super().create(input.model_copy(update={field_name: value}))
            first.setdefault(input.idempotency_key, value)  # bound only once a create succeeded
            return environment

    return Blind


HUGE_MESSAGE = "x" * (8 * 1024 * 1024)

_FAST = {"timeout": 0.3}
_PROFILE = frozenset({"refusal.turn_profile"})  # the same broken stream() serves the profile turn

STREAM_BROKEN: dict[str, list[Broken]] = {
    "stream.terminal_last": [
        Broken("the terminal event comes first", fake_with(_stream_of(_RESULT, _PART), DISABLED)),
    ],
    "stream.one_terminal": [
        Broken("a second terminal event follows the first", fake_with(_stream_of(_PART, _RESULT, _RESULT), DISABLED)),
    ],
    "stream.sequence": [
        Broken("data.sequence goes 5, 5, 2", fake_with(_stream_of(_numbered(5), _numbered(5), _numbered(2, "result")), DISABLED)),
    ],
    "stream.event_ids": [
        Broken(
            "two events share an id",
            fake_with(_stream_of(_numbered(1, event_id="e1"), _numbered(2, "result", event_id="e1")), DISABLED),
        ),
    ],
    "stream.terminal": [
        Broken("a stream that swallows cancellation", fake_with(_SwallowsCancellation, DISABLED), options=_FAST, also=_PROFILE),
    ],
    "stream.events": [
        Broken("a stream raises SystemExit", fake_with(_raising(SystemExit(2)), DISABLED), also=_PROFILE),
        Broken("a stream raises GeneratorExit", fake_with(_raising(GeneratorExit()), DISABLED), also=_PROFILE),
        Broken("a stream raises an exception whose __str__ recurses", fake_with(_raising(_Recursing()), DISABLED), also=_PROFILE),
        Broken("a stream raises an exception of 8 MiB", fake_with(_raising(_Huge(HUGE_MESSAGE)), DISABLED), also=_PROFILE),
        Broken("a stream of events without end", fake_with(_Endless, DISABLED), options={"timeout": 2.0}, also=_PROFILE),
    ],
    "stream.result": [
        Broken("a stream that blocks the kit's thread past the timeout", fake_with(_BlocksTheThread, DISABLED), options={"timeout": 0.4}, also=_PROFILE),
    ],
    "idempotency.conflict_fields": [
        Broken("a reused key with changed metadata replays", lambda: _blind_to("metadata")(DISABLED)),
        Broken("a reused key with a changed profile replays", lambda: _blind_to("profile")(DISABLED)),
    ],
    "create.basic": [
        Broken("create() raises SystemExit", lambda: _CreateSystemExit(DISABLED)),
    ],
}
"""The provider kit's checks these streams and providers break, with the providers."""
