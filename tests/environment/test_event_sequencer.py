"""EventSequencer: ids, a monotonic sequence, cursors that replay, and exact timestamps."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta, timezone
from typing import get_args

import pytest

from agent_interface import (
    AgentEnvironmentEvent,
    ContractError,
    RuntimeEventEnvelope,
    StatusEvent,
    StreamEvent,
)
from agent_interface.conformance.provider_turns import is_terminal_event
from agent_interface.core.canonical import MAX_SAFE_INTEGER
from agent_interface.environment.event_sequencer import (
    EventSequencer,
    envelope_of,
    environment_event,
    events_after,
    iso_timestamp,
)

START = datetime(2026, 12, 3, 9, 15, 0, 250_000, tzinfo=UTC)


def _clock() -> datetime:
    ticks = itertools.count()
    return lambda: START + timedelta(milliseconds=next(ticks))  # type: ignore[return-value]


def _status(status: str = "processing") -> dict[str, str]:
    return {"type": "status", "status": status}


def test_sequence_cursor_and_ids_are_stamped_in_order() -> None:
    sequencer = EventSequencer("run-1", clock=_clock())
    envelopes = [sequencer.envelope(_status()) for _ in range(3)]
    assert [e.sequence for e in envelopes] == [1, 2, 3]
    assert [e.cursor for e in envelopes] == ["1", "2", "3"]
    assert [e.event_id for e in envelopes] == ["run-1:1", "run-1:2", "run-1:3"]
    assert [e.received_at for e in envelopes] == [
        "2026-12-03T09:15:00.250Z", "2026-12-03T09:15:00.251Z", "2026-12-03T09:15:00.252Z"
    ]
    assert all(e.run_id == "run-1" and e.occurred_at is None for e in envelopes)
    assert sequencer.next_sequence == 4


def test_injected_event_ids_and_a_continued_sequence() -> None:
    names = iter(["evt-a", "evt-b"])
    sequencer = EventSequencer("run-2", next_sequence=7, event_ids=lambda run, seq: next(names))
    first, second = sequencer.envelope(_status()), sequencer.envelope(_status())
    assert (first.event_id, first.sequence, second.event_id, second.sequence) == ("evt-a", 7, "evt-b", 8)


@pytest.mark.parametrize("value", [-1, MAX_SAFE_INTEGER + 1, True, 1.0])
def test_next_sequence_must_be_a_safe_non_negative_integer(value: object) -> None:
    with pytest.raises(ContractError) as caught:
        EventSequencer("run", next_sequence=value)  # type: ignore[arg-type]
    assert caught.value.issues[0].code == "sequence_invalid"


@pytest.mark.parametrize("run_id", ["", " run", "x" * 513])
def test_run_id_is_a_stable_identifier(run_id: str) -> None:
    with pytest.raises(ContractError) as caught:
        EventSequencer(run_id)
    assert caught.value.issues[0].path == "/runId"


def test_the_last_safe_sequence_is_used_then_refused() -> None:
    sequencer = EventSequencer("run", next_sequence=MAX_SAFE_INTEGER)
    assert sequencer.envelope(_status()).sequence == MAX_SAFE_INTEGER
    with pytest.raises(ContractError) as caught:
        sequencer.envelope(_status())
    assert caught.value.issues[0].code == "sequence_exhausted"


def test_a_refused_event_consumes_no_sequence() -> None:
    sequencer = EventSequencer("run")
    with pytest.raises(ContractError):
        sequencer.envelope({"type": "no-such-event"})
    with pytest.raises(ContractError):
        sequencer.envelope({"type": "status", "status": "finished"})
    assert sequencer.envelope(_status()).sequence == 1


def test_an_invalid_injected_event_id_is_refused_and_consumes_nothing() -> None:
    ids = iter([" padded ", "good"])
    sequencer = EventSequencer("run", event_ids=lambda run, seq: next(ids))
    with pytest.raises(ContractError) as caught:
        sequencer.envelope(_status())
    assert caught.value.issues[0].path == "/eventId"
    assert sequencer.envelope(_status()).sequence == 1


def test_timestamps_are_written_as_javascript_writes_them() -> None:
    plus_two = timezone(timedelta(hours=2))
    assert iso_timestamp(datetime(2026, 1, 2, 3, 4, 5, 678_999, tzinfo=plus_two)) == "2026-01-02T01:04:05.678Z"
    with pytest.raises(ContractError) as caught:
        iso_timestamp(datetime(2026, 1, 2))
    assert caught.value.issues[0].code == "naive_datetime"
    naive = EventSequencer("run", clock=lambda: datetime(2026, 1, 2))
    with pytest.raises(ContractError):
        naive.envelope(_status())
    assert naive.next_sequence == 1


def test_occurred_at_accepts_an_instant_or_iso_text_only() -> None:
    sequencer = EventSequencer("run", clock=_clock())
    assert sequencer.envelope(_status(), occurred_at=START).occurred_at == "2026-12-03T09:15:00.250Z"
    assert sequencer.envelope(_status(), occurred_at="2026-12-03T09:00:00Z").occurred_at == "2026-12-03T09:00:00Z"
    with pytest.raises(ContractError):
        sequencer.envelope(_status(), occurred_at="yesterday")


def test_environment_event_carries_the_envelope() -> None:
    sequencer = EventSequencer("run-3", clock=_clock())
    event = sequencer.event(
        StatusEvent(type="status", status="completed"), usage={"inputTokens": 3, "outputTokens": 5},
        usage_mode="delta",
    )
    assert isinstance(event, AgentEnvironmentEvent)
    assert (event.type, event.id, event.usage_mode) == ("status", "1", "delta")
    assert event.data["status"] == "completed" and event.data["cursor"] == "1" and event.data["sequence"] == 1
    assert event.normalized == StatusEvent(type="status", status="completed")
    assert is_terminal_event(event)
    envelope = envelope_of(event)
    assert envelope.to_wire() == {
        "runId": "run-3", "eventId": "run-3:1", "sequence": 1, "cursor": "1",
        "receivedAt": "2026-12-03T09:15:00.250Z", "event": {"type": "status", "status": "completed"},
    }
    assert environment_event(envelope, usage={"inputTokens": 3, "outputTokens": 5}, usage_mode="delta") == event


def test_usage_mode_without_usage_is_refused() -> None:
    with pytest.raises(ContractError) as caught:
        EventSequencer("run").event(_status(), usage_mode="delta")
    assert caught.value.issues[0].code == "usage_mode_without_usage"


def test_envelope_of_refuses_an_event_made_another_way() -> None:
    plain = AgentEnvironmentEvent(type="result", data={"finalText": "ok"})
    with pytest.raises(ContractError) as caught:
        envelope_of(plain)
    assert caught.value.issues[0].code == "not_sequenced"


def test_an_envelope_without_cursor_replays_by_event_id() -> None:
    envelope = RuntimeEventEnvelope.parse_wire(
        {"runId": "r", "eventId": "e-9", "sequence": 9, "receivedAt": "2026-12-03T09:15:00Z", "event": _status()}
    )
    assert environment_event(envelope).id == "e-9"


def test_events_after_replays_exactly_the_later_events() -> None:
    sequencer = EventSequencer("run", clock=_clock())
    events = [sequencer.event(_status()) for _ in range(4)]
    assert events_after(events, None) == events
    for index, event in enumerate(events):
        assert events_after(events, event.id) == events[index + 1:]
    envelopes = [envelope_of(event) for event in events]
    assert events_after(iter(envelopes), "2") == envelopes[2:]


def test_events_after_refuses_an_unknown_cursor() -> None:
    events = [EventSequencer("run").event(_status())]
    with pytest.raises(ContractError) as caught:
        events_after(events, "99")
    assert (caught.value.issues[0].path, caught.value.issues[0].code) == ("/since", "unknown_cursor")


def test_a_second_run_continues_the_session_log_without_reusing_a_cursor() -> None:
    first = EventSequencer("run-a")
    log = [first.event(_status()), first.event(_status("completed"))]
    second = EventSequencer("run-b", next_sequence=len(log) + 1)
    log += [second.event(_status()), second.event(_status("completed"))]
    assert [event.id for event in log] == ["1", "2", "3", "4"]
    assert [envelope_of(event).run_id for event in events_after(log, "2")] == ["run-b", "run-b"]


def test_identity_keys_never_collide_with_a_canonical_event_field() -> None:
    identity = {"runId", "eventId", "sequence", "cursor", "receivedAt", "occurredAt"}
    union = get_args(get_args(StreamEvent)[0])
    assert len(union) == 13
    for model in union:
        aliases = {field.alias or name for name, field in model.model_fields.items()}
        assert identity.isdisjoint(aliases), model.__name__
