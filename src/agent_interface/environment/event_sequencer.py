"""Stamp run identity, order, cursor and time onto canonical stream events.

A provider that turns its agent's output into :data:`~agent_interface.runtime.events.StreamEvent`
values hands each one to an :class:`EventSequencer` (one per run), which answers either the
:class:`~agent_interface.runtime.events.RuntimeEventEnvelope` (``envelope``) or the
:class:`~agent_interface.environment.events.AgentEnvironmentEvent` an environment streams
(``event``)::

    sequencer = EventSequencer("run-1")
    first = sequencer.event(StatusEvent(type="status", status="started"))
    assert (first.id, first.data["sequence"]) == ("1", 1)

The stamps:

* ``sequence`` starts at ``next_sequence`` (1 unless given) and grows by one per event;
* ``cursor`` is the sequence in decimal; the environment event's ``id`` is that cursor, so
  a session serves replay after a cursor with :func:`events_after` (``events(since=id)``);
* ``eventId`` is ``"<runId>:<sequence>"`` unless an ``event_ids`` source is given;
* ``receivedAt`` is the clock's instant as JavaScript's ``toISOString`` writes it
  (milliseconds, ``Z``); ``occurredAt`` only when the caller knows it.

The environment event's ``data`` is the canonical event's own fields plus ``runId``,
``eventId``, ``sequence``, ``cursor``, ``receivedAt`` and ``occurredAt`` (as the reference's
CLI bridge writes them); :func:`envelope_of` reads the envelope back from it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Final, TypeVar

from agent_interface.core.canonical import MAX_SAFE_INTEGER
from agent_interface.core.contract_limits import BoundedIdentifier
from agent_interface.core.errors import ContractError
from agent_interface.core.model import WireModel, thaw, wire_adapter
from agent_interface.environment.events import AgentEnvironmentEvent
from agent_interface.runtime.events import (
    RuntimeEventEnvelope,
    StreamEvent,
    parse_stream_event,
)
from agent_interface.runtime.usage import TokenUsage, UsageModeLiteral

__all__ = [
    "EventSequencer",
    "envelope_of",
    "environment_event",
    "events_after",
    "iso_timestamp",
]

_IDENTITY_KEYS: Final = ("runId", "eventId", "sequence", "cursor", "receivedAt", "occurredAt")
"""What :func:`environment_event` adds to ``data``; no canonical event has these fields."""

_RUN_ID = wire_adapter(BoundedIdentifier, "runId")


def iso_timestamp(moment: datetime) -> str:
    """``moment`` as JavaScript's ``Date.prototype.toISOString`` writes it
    (``2026-12-03T09:15:00.250Z``). A naive ``datetime`` names no instant and is refused."""
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ContractError.single("", "naive_datetime", "a timestamp needs a time zone")
    utc = moment.astimezone(UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def _system_clock() -> datetime:
    return datetime.now(UTC)


def _default_event_id(run_id: str, sequence: int) -> str:
    return f"{run_id}:{sequence}"


class EventSequencer:
    """Stamps the events of one run: ids, a monotonic sequence, cursors and timestamps.

    ``run_id`` is the run every envelope names. ``next_sequence`` is the first sequence
    to hand out (pass the count already stored to continue a log after a restart).
    ``clock`` answers an aware ``datetime`` for ``receivedAt``; ``event_ids(run_id,
    sequence)`` answers each ``eventId``. Both are injectable so tests are exact.
    A refused event (invalid, or an invalid id from ``event_ids``) consumes no sequence.
    """

    __slots__ = ("_clock", "_event_ids", "_next", "_run_id")

    def __init__(
        self,
        run_id: str,
        *,
        next_sequence: int = 1,
        clock: Callable[[], datetime] | None = None,
        event_ids: Callable[[str, int], str] | None = None,
    ) -> None:
        try:
            self._run_id: str = _RUN_ID.parse(json.dumps(run_id) if isinstance(run_id, str) else run_id)
        except ContractError as error:
            issue = error.issues[0]
            raise ContractError.single("/runId", issue.code, issue.message) from None
        if isinstance(next_sequence, bool) or not isinstance(next_sequence, int) or not (
            0 <= next_sequence <= MAX_SAFE_INTEGER
        ):
            raise ContractError.single(
                "/sequence", "sequence_invalid", "next_sequence must be a safe non-negative integer"
            )
        self._next = next_sequence
        self._clock = clock or _system_clock
        self._event_ids = event_ids or _default_event_id

    def __repr__(self) -> str:
        return f"EventSequencer(run_id={self._run_id!r}, next_sequence={self._next})"

    @property
    def run_id(self) -> str:
        """The run every envelope of this sequencer names."""
        return self._run_id

    @property
    def next_sequence(self) -> int:
        """The sequence the next event receives."""
        return self._next

    def envelope(
        self,
        event: StreamEvent | Mapping[str, Any],
        *,
        occurred_at: datetime | str | None = None,
    ) -> RuntimeEventEnvelope:
        """The next envelope around ``event`` (a model, or its wire mapping parsed
        strictly). ``occurred_at`` is when the agent says it happened, if known."""
        if self._next > MAX_SAFE_INTEGER:
            raise ContractError.single(
                "/sequence", "sequence_exhausted", "this run has used every safe sequence number"
            )
        canonical = event if isinstance(event, WireModel) else parse_stream_event(thaw(event))
        sequence = self._next
        fields: dict[str, Any] = {
            "runId": self._run_id,
            "eventId": self._event_ids(self._run_id, sequence),
            "sequence": sequence,
            "cursor": str(sequence),
            "receivedAt": iso_timestamp(self._clock()),
            "event": canonical.to_wire(),
        }
        if occurred_at is not None:
            fields["occurredAt"] = (
                iso_timestamp(occurred_at) if isinstance(occurred_at, datetime) else occurred_at
            )
        envelope = RuntimeEventEnvelope.parse_wire(fields)
        self._next = sequence + 1
        return envelope

    def event(
        self,
        event: StreamEvent | Mapping[str, Any],
        *,
        usage: TokenUsage | Mapping[str, Any] | None = None,
        usage_mode: UsageModeLiteral | None = None,
        occurred_at: datetime | str | None = None,
    ) -> AgentEnvironmentEvent:
        """The next envelope around ``event``, as the environment event a provider
        streams (see :func:`environment_event`); ``usage`` and ``usage_mode`` report
        token usage on it (``"delta"`` adds, ``"cumulative"`` replaces the turn total)."""
        return environment_event(
            self.envelope(event, occurred_at=occurred_at), usage=usage, usage_mode=usage_mode
        )


def environment_event(
    envelope: RuntimeEventEnvelope,
    *,
    usage: TokenUsage | Mapping[str, Any] | None = None,
    usage_mode: UsageModeLiteral | None = None,
) -> AgentEnvironmentEvent:
    """The environment event carrying ``envelope``: ``type`` is the canonical event's,
    ``normalized`` the canonical event, ``id`` the envelope's cursor (its event id when it
    has none), and ``data`` the event's fields plus the envelope's identity."""
    event = envelope.event
    data: dict[str, Any] = {key: value for key, value in event.to_wire().items() if key != "type"}
    identity = envelope.to_wire()
    for key in _IDENTITY_KEYS:
        if key in identity:
            data[key] = identity[key]
    fields: dict[str, Any] = {
        "type": event.type,
        "id": envelope.cursor if envelope.cursor is not None else envelope.event_id,
        "data": data,
        "normalized": event.to_wire(),
    }
    if usage is not None:
        fields["usage"] = usage.to_wire() if isinstance(usage, WireModel) else thaw(usage)
    if usage_mode is not None:
        fields["usageMode"] = usage_mode
    return AgentEnvironmentEvent.parse_wire(fields)


def envelope_of(event: AgentEnvironmentEvent) -> RuntimeEventEnvelope:
    """The envelope an :func:`environment_event` carries, read back from its ``data`` and
    ``normalized`` event. An event made another way is refused (``not_sequenced``)."""
    data = event.data
    if event.normalized is None or not all(key in data for key in ("runId", "eventId", "sequence", "receivedAt")):
        raise ContractError.single(
            "/data", "not_sequenced", "the event carries no envelope identity and normalized event"
        )
    fields = {key: thaw(data[key]) for key in _IDENTITY_KEYS if key in data}
    fields["event"] = event.normalized.to_wire()
    return RuntimeEventEnvelope.parse_wire(fields)


E = TypeVar("E", AgentEnvironmentEvent, RuntimeEventEnvelope)


def _replay_id(item: AgentEnvironmentEvent | RuntimeEventEnvelope) -> str | None:
    if isinstance(item, RuntimeEventEnvelope):
        return item.cursor if item.cursor is not None else item.event_id
    return item.id


def events_after(events: Iterable[E], since: str | None) -> list[E]:
    """The events after the one whose replay id is ``since`` (an environment event's
    ``id``, an envelope's ``cursor``), in order; every event when ``since`` is ``None``.
    A cursor that names no event is refused (``unknown_cursor``), never read as "from the
    start": a consumer that lost its place must be told."""
    stored: Sequence[E] = events if isinstance(events, Sequence) else list(events)
    if since is None:
        return list(stored)
    for index, item in enumerate(stored):
        if _replay_id(item) == since:
            return list(stored[index + 1:])
    raise ContractError.single("/since", "unknown_cursor", "since names no event of this log")
