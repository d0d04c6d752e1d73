"""child-task events and the replay-safe ChildTaskTracker."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_interface.core.errors import ContractError
from agent_interface.core.model import wire_adapter
from agent_interface.runtime.child_tasks import (
    ChildTaskEvent,
    ChildTaskTracker,
)
from agent_interface.runtime.events import (
    RuntimeEventEnvelope,
    StreamEvent,
)

STARTED = {"type": "child-task", "childId": "child-1", "status": "started", "time": {"started": 1000, "updated": 1000}, "sourceEventId": "event-1"}
COMPLETED = {
    "type": "child-task", "childId": "child-2", "parentChildId": "child-1", "status": "completed",
    "title": "Write the failing test", "time": {"started": 1100, "updated": 1900, "ended": 1900},
    "runner": "opencode", "model": "gpt-5", "usage": {"inputTokens": 10, "outputTokens": 4, "totalTokens": 14},
    "terminalReason": "end_turn", "sourceEventId": "event-2", "raw": {"vendor": {"agentType": "tester"}},
}


def refusal(data: Any) -> list[tuple[str, str]]:
    with pytest.raises(ContractError) as caught:
        wire_adapter(StreamEvent).parse(data)
    return [(issue.path, issue.code) for issue in caught.value.issues]


def event(**doc: Any) -> ChildTaskEvent:
    return ChildTaskEvent.parse_wire({**STARTED, **doc})


def test_accepts_root_nested_terminal_and_running() -> None:
    for document in (STARTED, COMPLETED, {**STARTED, "status": "running", "time": {"started": 1000, "updated": 1500}, "sourceEventId": "event-3"}):
        assert wire_adapter(StreamEvent).to_wire(wire_adapter(StreamEvent).parse(document)) == document


@pytest.mark.parametrize("status", ["completed", "failed", "cancelled"])
def test_terminal_statuses_may_end(status: str) -> None:
    parsed = event(status=status, time={"started": 1, "updated": 2, "ended": 2}, terminalReason="why")
    assert parsed.terminal and parsed.status == status


WITHOUT_CHILD = {k: v for k, v in STARTED.items() if k != "childId"}
WITHOUT_SOURCE = {k: v for k, v in STARTED.items() if k != "sourceEventId"}


@pytest.mark.parametrize(
    ("document", "pointer", "code"),
    [
        (WITHOUT_CHILD, "/childId", "missing"),
        (WITHOUT_SOURCE, "/sourceEventId", "missing"),
        ({**STARTED, "childId": ""}, "/childId", "string_too_short"),
        ({**STARTED, "childId": " child-1"}, "/childId", "identifier_whitespace"),
        ({**STARTED, "parentChildId": "child-1"}, "/parentChildId", "own_parent"),
        ({**STARTED, "time": {"started": 1000, "updated": 1000, "ended": 1000}}, "/time/ended", "end_time_not_terminal"),
        ({**STARTED, "terminalReason": "end_turn"}, "/terminalReason", "terminal_reason_not_terminal"),
        ({**STARTED, "time": {"started": 1000, "updated": 900}}, "/time/updated", "updated_before_started"),
        ({**COMPLETED, "time": {"started": 1100, "updated": 1900, "ended": 1000}}, "/time/ended", "ended_before_started"),
        ({**STARTED, "time": {"started": -1, "updated": 1000}}, "/time/started", "greater_than_equal"),
        ({**STARTED, "time": {"started": 1000}}, "/time/updated", "missing"),
        ({**COMPLETED, "usage": {"inputTokens": -1, "outputTokens": 0}}, "/usage/inputTokens", "greater_than_equal"),
        ({**COMPLETED, "raw": ["not", "a", "record"]}, "/raw", "json_object"),
        ({**STARTED, "status": "paused"}, "/status", "literal_error"),
        ({**STARTED, "agentType": "tester"}, "/agentType", "extra_forbidden"),
        ({**STARTED, "sourceEventId": ""}, "/sourceEventId", "string_too_short"),
    ],
)
def test_refusals(document: dict[str, Any], pointer: str, code: str) -> None:
    assert (pointer, code) in refusal(document)


def test_envelope_round_trip_and_refusal() -> None:
    envelope = {"runId": "run-1", "eventId": "event-12", "sequence": 12, "cursor": "12:0", "occurredAt": "2026-08-20T10:00:00.000Z", "receivedAt": "2026-08-20T10:00:00.010Z", "event": COMPLETED}
    assert RuntimeEventEnvelope.parse_wire(envelope).to_wire() == envelope
    with pytest.raises(ContractError) as caught:
        RuntimeEventEnvelope.parse_wire({**envelope, "event": {**COMPLETED, "sourceEventId": ""}})
    assert caught.value.issues[0].path == "/event/sourceEventId"


def test_cancelled_is_distinct_from_failed() -> None:
    cancelled = event(status="cancelled", time={"started": 1, "updated": 2, "ended": 2})
    failed = event(status="failed", time={"started": 1, "updated": 2, "ended": 2})
    assert cancelled.status != failed.status


def test_tracker_reference_scenario() -> None:
    live = [
        STARTED,
        {**STARTED, "status": "running", "time": {"started": 1000, "updated": 1200}, "sourceEventId": "event-2"},
        {**COMPLETED, "sourceEventId": "event-3"},
        {**STARTED, "status": "completed", "time": {"started": 1000, "updated": 2000, "ended": 2000}, "sourceEventId": "event-4"},
    ]
    replayed = [live[0], live[1], live[1], live[2], live[2], live[3], live[0]]

    def tree(documents: list[dict[str, Any]]) -> tuple[int, list[tuple[str, str | None, str]]]:
        tracker = ChildTaskTracker()
        applied = tracker.apply_all(wire_adapter(StreamEvent).parse(d) for d in documents)
        return applied, [(c.child_id, c.parent_child_id, c.status) for c in tracker]

    assert tree(replayed) == tree(live) == (4, [("child-1", None, "completed"), ("child-2", "child-1", "completed")])


def test_tracker_ignores_raw_and_other_events() -> None:
    tracker = ChildTaskTracker()
    first = event(raw={"attempt": 1})
    copy_with_other_raw = event(raw={"attempt": 2}, status="running")
    assert tracker.apply(first)
    assert not tracker.apply(copy_with_other_raw)
    assert tracker.get("child-1") == first
    assert not tracker.apply(wire_adapter(StreamEvent).parse({"type": "status", "status": "processing"}))
    envelope = RuntimeEventEnvelope.parse_wire({"runId": "r", "eventId": "e", "sequence": 0, "receivedAt": "2026-08-20T10:00:00Z", "event": {**STARTED, "sourceEventId": "event-9", "status": "running"}})
    assert tracker.apply(envelope) and tracker.has_applied("event-9")
    assert len(tracker) == 1 and tracker.children_of(None) == (tracker.get("child-1"),)


# --- property tests -----------------------------------------------------------------

statuses = st.sampled_from(["started", "running", "completed", "failed", "cancelled"])


@st.composite
def child_updates(draw: st.DrawFn) -> list[ChildTaskEvent]:
    count = draw(st.integers(min_value=1, max_value=12))
    updates = []
    for index in range(count):
        status = draw(statuses)
        started = draw(st.integers(min_value=0, max_value=1000))
        updated = started + draw(st.integers(min_value=0, max_value=1000))
        document: dict[str, Any] = {
            "type": "child-task", "childId": f"child-{draw(st.integers(0, 3))}", "status": status,
            "time": {"started": started, "updated": updated}, "sourceEventId": f"src-{index}",
            "raw": {"noise": draw(st.integers())},
        }
        if status in ("completed", "failed", "cancelled"):
            document["time"]["ended"] = updated
        updates.append(ChildTaskEvent.parse_wire(document))
    return updates


@settings(max_examples=150, deadline=None)
@given(updates=child_updates(), data=st.data())
def test_replay_with_duplicates_builds_the_same_tree(updates: list[ChildTaskEvent], data: st.DataObject) -> None:
    live = ChildTaskTracker()
    applied = live.apply_all(updates)
    assert applied == len(updates)
    # A replay repeats a prefix (reconnect) then the whole stream, with copies interleaved.
    prefix = data.draw(st.integers(0, len(updates)))
    replay: list[ChildTaskEvent] = list(updates[:prefix])
    for item in updates:
        replay.append(item)
        if data.draw(st.booleans()):
            replay.append(item.model_copy(update={"raw": {"noise": -1}}))
    replayed = ChildTaskTracker()
    assert replayed.apply_all(replay) == len(updates)
    assert [(c.child_id, c.source_event_id) for c in replayed] == [(c.child_id, c.source_event_id) for c in live]


@settings(max_examples=150, deadline=None)
@given(updates=child_updates())
def test_applying_twice_is_idempotent(updates: list[ChildTaskEvent]) -> None:
    tracker = ChildTaskTracker()
    tracker.apply_all(updates)
    before = dict(tracker.children)
    assert tracker.apply_all(updates) == 0
    assert dict(tracker.children) == before
    # The current state of each child is its last update in stream order.
    last: dict[str, ChildTaskEvent] = {}
    for item in updates:
        last[item.child_id] = item
    assert before == last
