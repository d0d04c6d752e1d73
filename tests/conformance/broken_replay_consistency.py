"""Retained sessions whose replayed events, or whose result, contradict what the session
states elsewhere: each must fail the session-replay kit's ``replay.<check>`` that names it
(``test_session_replay_kit.py`` runs them with its other broken variants).

Every variant keeps ids unique and stable (so the kit gets past ``stable_event_ids``) and
changes one thing: an event after the terminal one, a second terminal event, a
``data.sequence`` that goes down, a ``data.sessionId`` naming another session, a
cumulative usage report that drops, a tool part ending before it starts, or a result
whose verdict, session, usage or events differ from the replayed events'.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

from agent_interface.environment.events import AgentEnvironmentEvent
from agent_interface.provider.turn import AgentTurnResult
from agent_interface.runtime.usage import TokenUsage
from agent_interface.testing import (
    InMemoryRetainedEnvironment,
    InMemoryRetainedSession,
    InMemoryRetainedSessionProvider,
)

Rewrite = Callable[[list[AgentEnvironmentEvent]], list[AgentEnvironmentEvent]]


def _event(kind: str, event_id: str, data: dict[str, Any] | None = None, **fields: Any) -> AgentEnvironmentEvent:
    return AgentEnvironmentEvent.parse_wire({"type": kind, "id": event_id, "data": data or {}, **fields})


def _variant(
    rewrite: Rewrite | None = None, result: Callable[[AgentTurnResult], AgentTurnResult] | None = None
) -> Callable[[], InMemoryRetainedSessionProvider]:
    """A provider whose sessions replay ``rewrite(events)`` and answer ``result(result)``."""

    class Session(InMemoryRetainedSession):
        async def events(self, *, since: str | None = None, execution_id: str | None = None) -> AsyncIterator[Any]:
            everything = [event async for event in super().events(execution_id=execution_id)]
            shown = rewrite(everything) if rewrite is not None else everything
            ids = [event.id for event in shown]
            start = ids.index(since) + 1 if since in ids else 0
            for event in shown[start:]:
                yield event

        async def result(self) -> AgentTurnResult:
            answer = await super().result()
            return result(answer) if result is not None else answer

    class Environment(InMemoryRetainedEnvironment):
        def session(self, id: str, *, control_ref: Any = None) -> Any:
            client = super().session(id, control_ref=control_ref)
            client.__class__ = Session
            return client

    class Provider(InMemoryRetainedSessionProvider):
        async def create(self, input: Any) -> Any:
            environment = await super().create(input)
            environment.__class__ = Environment
            return environment

        async def get(self, id: str) -> Any:
            environment = await super().get(id)
            if environment is not None:
                environment.__class__ = Environment
            return environment

    return Provider


def _numbered(events: list[AgentEnvironmentEvent]) -> list[AgentEnvironmentEvent]:
    count = len(events)
    return [event.model_copy(update={"data": {**event.data, "sequence": count - index}}) for index, event in enumerate(events)]


def _stating(session: str) -> Rewrite:
    return lambda events: [event.model_copy(update={"data": {**event.data, "sessionId": session}}) for event in events]


def _cumulative_drop(events: list[AgentEnvironmentEvent]) -> list[AgentEnvironmentEvent]:
    reports = [
        _event("message.part.updated", "usage-1", usage={"inputTokens": 5, "outputTokens": 1}, usageMode="cumulative"),
        _event("message.part.updated", "usage-2", usage={"inputTokens": 3, "outputTokens": 1}, usageMode="cumulative"),
    ]
    return [*reports, *events]


def _tool_backwards(events: list[AgentEnvironmentEvent]) -> list[AgentEnvironmentEvent]:
    part = {"id": "part-1", "sessionID": "s", "messageID": "m", "type": "tool", "tool": "bash",
            "state": {"status": "completed", "input": {}, "output": "ok", "time": {"start": 10.0, "end": 5.0}}}
    return [_event("message.part.updated", "tool-1", normalized={"type": "message.part.updated", "part": part}), *events]


def _delta_usage(events: list[AgentEnvironmentEvent]) -> list[AgentEnvironmentEvent]:
    return [_event("message.part.updated", "usage-1", usage={"inputTokens": 3, "outputTokens": 1}, usageMode="delta"), *events]


REPLAY_BROKEN: list[tuple[Any, str]] = [
    (_variant(lambda events: [*events, _event("message.part.updated", "late-1", {"delta": "late"})]), "replay.terminal_last"),
    (_variant(lambda events: [*events, _event("result", "again-1", {"finalText": "again"})]), "replay.one_terminal"),
    (_variant(_numbered), "replay.sequence"),
    (_variant(_stating("someone-else")), "replay.session_identity"),
    (_variant(_cumulative_drop), "replay.usage_cumulative"),
    (_variant(_tool_backwards), "replay.times"),
    (_variant(result=lambda answer: answer.model_copy(update={"success": not answer.success, "error": None})),
     "replay.result_verdict"),
    (_variant(result=lambda answer: answer.model_copy(update={"session_id": "someone-else"})), "replay.result_session"),
    (_variant(_delta_usage, lambda answer: answer.model_copy(update={"usage": TokenUsage(input_tokens=99, output_tokens=9)})),
     "replay.result_usage"),
    (_variant(result=lambda answer: answer.model_copy(update={"events": ()})), "replay.result_events"),
]
"""Each variant and the ``replay.*`` check it fails."""
