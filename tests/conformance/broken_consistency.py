"""Providers that state one fact twice and contradict themselves: each must fail the
provider kit's consistency check that names it (``test_broken_providers.py`` runs them).

Each builds a :class:`FakeProvider` whose turns (streamed and dispatched alike) carry the
contradiction, so it fails the ``stream.<check>`` and the ``session.<check>`` of the same
rule; each is listed under both names. The contradictions: a streamed part naming another
session, a cumulative usage report that goes down, a tool part that ends before it starts,
a session updated before it was created, a terminal event that says ``failed`` while the
result says ``success`` (and the reverse, and a successful result carrying an error), a
result naming another session, a result whose usage is not the events' total, and a
result carrying other events than those delivered. The event-order checks are proven on
the dispatched turn's events too (``session.terminal_last`` ...).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agent_interface.environment.events import AgentEnvironmentEvent
from agent_interface.provider.turn import AgentTurnInput, AgentTurnResult
from tests.conformance.broken_providers import Broken
from tests.conformance.fake_provider import FakeEnvironment, FakeProvider, FakeSession, document

DETACHING = document(streaming={"live": True, "replay": False, "detach": True, "turnIdempotency": False})
"""A document declaring detached turns, so the kit reads a dispatched turn back too."""


def _event(kind: str, data: dict[str, Any] | None = None, **fields: Any) -> AgentEnvironmentEvent:
    return AgentEnvironmentEvent.parse_wire({"type": kind, "data": data or {}, **fields})


def _part(session_id: str, **part: Any) -> AgentEnvironmentEvent:
    body = {"id": "part-1", "sessionID": session_id, "messageID": "message-1", **(part or {"type": "text", "text": "ok"})}
    return _event("message.part.updated", normalized={"type": "message.part.updated", "part": body})


_RESULT = _event("result", {"finalText": "ok"})
_COMPLETED = _event("status", {"status": "completed"})
_FAILED = _event("status", {"status": "failed"})


def _build(
    events: Callable[[str], list[AgentEnvironmentEvent]],
    result: Callable[[str, list[AgentEnvironmentEvent]], AgentTurnResult] | None = None,
) -> Callable[[], FakeProvider]:
    """A provider whose every turn in session ``s`` has ``events(s)`` and whose
    ``session(s).result()`` answers ``result(s, events(s))``."""

    class Session(FakeSession):
        async def result(self) -> AgentTurnResult:
            if result is None:
                return await super().result()
            return result(self.id, events(self.id))

    class Environment(FakeEnvironment):
        def events_for(self, turn: AgentTurnInput) -> list[AgentEnvironmentEvent]:
            return events(turn.session_id or f"{self.id}-session")

        def _session(self, session_id: str) -> FakeSession:
            return Session(self, session_id)

    def build() -> FakeProvider:
        provider = FakeProvider(DETACHING)
        provider.environment_class = Environment
        return provider

    return build


def _ok(session: str, delivered: list[AgentEnvironmentEvent], **fields: Any) -> AgentTurnResult:
    return AgentTurnResult(**{"text": "ok", "success": True, "session_id": session, **fields})


_TOOL_BACKWARDS = {"type": "tool", "tool": "bash", "state": {"status": "completed", "input": {}, "output": "ok",
                                                             "time": {"start": 10.0, "end": 5.0}}}
_SESSION_BACKWARDS = {"type": "session.updated", "sessionId": "s", "time": {"created": 10, "updated": 5}}


def _session_backwards(session: str) -> list[AgentEnvironmentEvent]:
    normalized = {**_SESSION_BACKWARDS, "sessionId": session}
    return [_event("session.updated", normalized=normalized), _RESULT]


def _usage(*reports: tuple[int, int, str]) -> list[AgentEnvironmentEvent]:
    return [
        _event("message.part.updated", {"delta": "ok"}, usage={"inputTokens": i, "outputTokens": o}, usageMode=mode)
        for i, o, mode in reports
    ]


CASES: dict[str, list[tuple[str, Callable[[], FakeProvider]]]] = {
    "session_identity": [
        ("a streamed part names another session than the turn's",
         _build(lambda s: [_part("someone-else"), _RESULT])),
        ("an event's data.sessionId names another session",
         _build(lambda s: [_event("message.part.updated", {"delta": "ok", "sessionId": s + "-other"}), _RESULT])),
    ],
    "usage_cumulative": [
        ("a cumulative usage report goes down (5 then 3 input tokens)",
         _build(lambda s: [*_usage((5, 1, "cumulative"), (3, 2, "cumulative")), _RESULT])),
    ],
    "times": [
        ("a tool part ends before it starts", _build(lambda s: [_part(s, **_TOOL_BACKWARDS), _RESULT])),
        ("a session is updated before it was created", _build(_session_backwards)),
    ],
    "result_verdict": [
        ("the terminal status says failed, the result says success", _build(lambda s: [_part(s), _FAILED], _ok)),
        ("the terminal status says completed, the result says failure",
         _build(lambda s: [_part(s), _COMPLETED], lambda s, e: _ok(s, e, success=False, error="boom"))),
        ("a successful result carries an error",
         _build(lambda s: [_part(s), _COMPLETED], lambda s, e: _ok(s, e, error="boom"))),
    ],
    "result_session": [
        ("the result names another session", _build(lambda s: [_part(s), _COMPLETED], lambda s, e: _ok(s + "-other", e))),
    ],
    "result_usage": [
        ("the result's usage is not the events' total",
         _build(lambda s: [*_usage((3, 1, "delta"), (3, 1, "delta")), _COMPLETED],
                lambda s, e: _ok(s, e, usage={"input_tokens": 9, "output_tokens": 9}))),
    ],
    "result_events": [
        ("the result carries other events than those delivered",
         _build(lambda s: [_part(s), _COMPLETED], lambda s, e: _ok(s, e, events=[e[-1]]))),
    ],
}

_ORDER: dict[str, tuple[str, Callable[[], FakeProvider]]] = {
    "terminal_last": ("the dispatched turn's terminal event comes first", _build(lambda s: [_RESULT, _part(s)])),
    "one_terminal": ("the dispatched turn has two terminal events", _build(lambda s: [_part(s), _RESULT, _RESULT])),
    "sequence": ("the dispatched turn's data.sequence goes 5, 5, 2",
                 _build(lambda s: [_event("message.part.updated", {"sequence": 5}), _event("message.part.updated", {"sequence": 5}),
                                   _event("result", {"sequence": 2})])),
    "event_ids": ("two events of the dispatched turn share an id",
                  _build(lambda s: [_event("message.part.updated", id="e1"), _event("result", id="e1")])),
}


def _entries() -> dict[str, list[Broken]]:
    entries: dict[str, list[Broken]] = {}
    for check, cases in CASES.items():
        for why, build in cases:
            both = frozenset({f"stream.{check}", f"session.{check}"})
            for prefix in ("stream", "session"):
                entries.setdefault(f"{prefix}.{check}", []).append(Broken(why, build, also=both))
    for check, (why, build) in _ORDER.items():
        entries[f"session.{check}"] = [Broken(why, build, also=frozenset({f"stream.{check}"}))]
    return entries


CONSISTENCY_BROKEN: dict[str, list[Broken]] = _entries()
"""The provider kit's consistency checks these providers break."""
