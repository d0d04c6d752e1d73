"""Canonical stream events and the runtime event envelope."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent_interface.core.errors import ContractError
from agent_interface.core.model import wire_adapter
from agent_interface.core.registry import _TYPES
from agent_interface.runtime.events import (
    STREAM_EVENT_TYPES,
    CanonicalStreamEvent,
    ForwardCompatibleEnvelope,
    NativeSessionObservedEvent,
    RuntimeEventEnvelope,
    StreamEvent,
    UnknownStreamEvent,
    is_public_stream_event,
    parse_runtime_event_envelope,
    parse_stream_event,
    public_stream_events,
)
from agent_interface.runtime.interaction_requests import interaction_request_digest

PART = {"id": "part-1", "sessionID": "session-1", "messageID": "message-1", "type": "text", "text": "hello"}
BINDING = {
    "runId": "run-1", "provider": "cli-bridge", "environmentId": "environment-1",
    "sessionId": "session-1", "executionId": "execution-1", "interactionId": "interaction-1",
}
REQUEST_MATERIAL = {"id": "interaction-1", "kind": "question", "title": "Continue?", "answerSpec": {"fields": []}, "binding": BINDING}
REQUEST = {**REQUEST_MATERIAL, "requestDigest": interaction_request_digest(REQUEST_MATERIAL)}
PLAN = {"id": "plan-1", "revision": 1, "body": "1. Continue", "submittedAt": "2026-08-01T20:00:00.000Z"}
CHILD_STARTED = {"type": "child-task", "childId": "child-1", "status": "started", "time": {"started": 1000, "updated": 1000}, "sourceEventId": "event-1"}

# One valid example per variant, and refusals: (document, pointer, code).
VARIANTS: dict[str, tuple[dict[str, Any], list[tuple[dict[str, Any], str, str]]]] = {
    "message.part.updated": (
        {"type": "message.part.updated", "part": PART, "delta": "hello"},
        [({"type": "message.part.updated", "part": {**PART, "type": "video"}}, "/part/type", "union_tag_invalid"),
         ({"type": "message.part.updated"}, "/part", "missing")],
    ),
    "tool-heartbeat": (
        {"type": "tool-heartbeat", "toolName": "shell", "partId": "part-1", "elapsedMs": 10},
        [({"type": "tool-heartbeat", "toolName": "shell", "partId": "part-1", "elapsedMs": -1}, "/elapsedMs", "greater_than_equal"),
         ({"type": "tool-heartbeat", "toolName": " shell", "partId": "part-1", "elapsedMs": 1}, "/toolName", "identifier_whitespace")],
    ),
    "tool-slow": (
        {"type": "tool-slow", "toolName": "shell", "partId": "part-1", "elapsedMs": 1000, "thresholdMs": 500},
        [({"type": "tool-slow", "toolName": "shell", "partId": "part-1", "elapsedMs": 1000}, "/thresholdMs", "missing")],
    ),
    "model-processing": (
        {"type": "model-processing", "phase": "thinking", "elapsedMs": 5},
        [({"type": "model-processing", "phase": "dreaming"}, "/phase", "literal_error")],
    ),
    "status": (
        {"type": "status", "status": "completed", "detail": "done"},
        [({"type": "status", "status": "running"}, "/status", "literal_error"),
         ({"type": "status", "status": "completed", "adminOverride": True}, "/adminOverride", "extra_forbidden")],
    ),
    "warning": (
        {"type": "warning", "code": "slow", "message": "slow response"},
        [({"type": "warning", "code": "", "message": "m"}, "/code", "string_too_short")],
    ),
    "raw": (
        {"type": "raw", "backend": "pi", "event": {"vendor": True}},
        [({"type": "raw", "backend": "pi"}, "/event", "missing"),
         ({"type": "raw", "backend": "pi", "event": [[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]}, "/event", "bounded_json")],
    ),
    "session.updated": (
        {"type": "session.updated", "sessionId": "session-1", "time": {"created": 1, "updated": 2}},
        [({"type": "session.updated", "sessionId": "s", "time": {"created": "1"}}, "/time/created", "int_type"),
         ({"type": "session.updated", "sessionId": "s", "nativeSessionId": "n"}, "/nativeSessionId", "extra_forbidden")],
    ),
    "interaction": (
        {"type": "interaction", "request": REQUEST},
        [({"type": "interaction", "request": {**REQUEST, "title": "changed"}}, "/request/requestDigest", "digest_mismatch")],
    ),
    "interaction.cancel": (
        {"type": "interaction.cancel", "id": "interaction-1", "reason": "done"},
        [({"type": "interaction.cancel"}, "/id", "missing")],
    ),
    "plan.submitted": (
        {"type": "plan.submitted", "plan": PLAN},
        [({"type": "plan.submitted", "plan": {**PLAN, "body": "  "}}, "/plan/body", "string_too_short")],
    ),
    "child-task": (
        CHILD_STARTED,
        [({**CHILD_STARTED, "status": "paused"}, "/status", "literal_error"),
         ({k: v for k, v in CHILD_STARTED.items() if k != "childId"}, "/childId", "missing")],
    ),
    "native.session.observed": (
        {"type": "native.session.observed", "provider": "claude-code", "nativeSessionId": "provider-conversation"},
        [({"type": "native.session.observed", "provider": "", "nativeSessionId": "x"}, "/provider", "provider_name"),
         ({"type": "native.session.observed", "provider": "a", "nativeSessionId": " padded"}, "/nativeSessionId", "whitespace")],
    ),
}


def refusal(tp: Any, data: Any) -> list[tuple[str, str]]:
    with pytest.raises(ContractError) as caught:
        wire_adapter(tp).parse(data)
    return [(issue.path, issue.code) for issue in caught.value.issues]


def test_every_variant_is_covered() -> None:
    assert set(VARIANTS) == STREAM_EVENT_TYPES


@pytest.mark.parametrize("tag", sorted(VARIANTS))
def test_variant_accepted_and_round_trips(tag: str) -> None:
    document, _ = VARIANTS[tag]
    event = wire_adapter(StreamEvent).parse(document)
    assert event.type == tag
    assert wire_adapter(StreamEvent).to_wire(event) == document
    assert wire_adapter(StreamEvent).parse(json.dumps(document).encode()) == event
    assert CanonicalStreamEvent is StreamEvent


@pytest.mark.parametrize("tag", sorted(VARIANTS))
def test_variant_refused(tag: str) -> None:
    for document, pointer, code in VARIANTS[tag][1]:
        assert (pointer, code) in refusal(StreamEvent, document), document


@pytest.mark.parametrize("tag", sorted(VARIANTS))
def test_variant_refuses_unknown_field(tag: str) -> None:
    document, _ = VARIANTS[tag]
    assert ("/adminOverride", "extra_forbidden") in refusal(StreamEvent, {**document, "adminOverride": True})


@pytest.mark.parametrize("tag", sorted(VARIANTS))
def test_variant_in_envelope(tag: str) -> None:
    document, refusals = VARIANTS[tag]
    envelope = {"runId": "run-1", "eventId": "e-1", "sequence": 1, "receivedAt": "2026-08-01T20:00:00.000Z", "event": document}
    assert RuntimeEventEnvelope.parse_wire(envelope).to_wire() == envelope
    bad, pointer, code = refusals[0]
    assert ("/event" + pointer, code) in refusal(RuntimeEventEnvelope, {**envelope, "event": bad})


def test_unknown_variant_refused_by_canonical_schema() -> None:
    assert refusal(StreamEvent, {"type": "result", "data": {"success": True}}) == [("/type", "union_tag_invalid")]
    assert refusal(StreamEvent, {"status": "running"}) == [("/type", "union_tag_not_found")]
    with pytest.raises(ContractError):
        parse_stream_event({"type": "future.event"})
    with pytest.raises(ContractError):
        wire_adapter(_TYPES["CanonicalStreamEvent"]).parse({"type": "future.event"})


def test_forward_compatible_mode_is_explicit() -> None:
    unknown = parse_stream_event(b'{"type":"future.event","x":[1]}', allow_unknown=True)
    assert isinstance(unknown, UnknownStreamEvent)
    assert unknown.type == "future.event" and unknown.to_wire() == {"type": "future.event", "x": [1]}
    # A known type with invalid content is still refused.
    with pytest.raises(ContractError):
        parse_stream_event({"type": "status", "status": "running"}, allow_unknown=True)
    known = parse_stream_event({"type": "status", "status": "processing"}, allow_unknown=True)
    assert not isinstance(known, UnknownStreamEvent)
    envelope = {"runId": "run-1", "eventId": "e", "sequence": 3, "receivedAt": "2026-08-01T20:00:00Z", "event": {"type": "future.event"}}
    wrapped = parse_runtime_event_envelope(envelope, allow_unknown=True)
    assert isinstance(wrapped, ForwardCompatibleEnvelope) and wrapped.envelope["sequence"] == 3
    with pytest.raises(ContractError):
        parse_runtime_event_envelope({**envelope, "sequence": -1}, allow_unknown=True)
    with pytest.raises(ContractError):
        parse_runtime_event_envelope(envelope)
    with pytest.raises(ContractError):
        parse_stream_event(b"{not json", allow_unknown=True)


ENVELOPE = {
    "runId": "run-1", "eventId": "event-7", "sequence": 7, "cursor": "cursor-7",
    "occurredAt": "2026-08-01T20:00:00.000Z", "receivedAt": "2026-08-01T20:00:00.010Z",
    "event": {"type": "status", "status": "processing"},
}


def test_envelope_round_trip() -> None:
    parsed = RuntimeEventEnvelope.parse_wire(ENVELOPE)
    assert parsed.to_wire() == ENVELOPE
    assert parse_runtime_event_envelope(json.dumps(ENVELOPE)) == parsed


@pytest.mark.parametrize(
    ("change", "pointer", "code"),
    [
        ({"runId": ""}, "/runId", "string_too_short"),
        ({"eventId": " e"}, "/eventId", "identifier_whitespace"),
        ({"sequence": -1}, "/sequence", "greater_than_equal"),
        ({"sequence": 1.5}, "/sequence", "int_type"),
        ({"sequence": 2**53}, "/sequence", "less_than_equal"),
        ({"sequence": True}, "/sequence", "int_type"),
        ({"receivedAt": "yesterday"}, "/receivedAt", "iso_datetime"),
        ({"occurredAt": "2026-08-01T20:00:00+01:00"}, "/occurredAt", "iso_datetime"),
        ({"cursor": ""}, "/cursor", "string_too_short"),
        ({"extra": 1}, "/extra", "extra_forbidden"),
    ],
)
def test_envelope_refusals(change: dict[str, Any], pointer: str, code: str) -> None:
    assert (pointer, code) in refusal(RuntimeEventEnvelope, {**ENVELOPE, **change})


def test_envelope_requires_received_at_and_event() -> None:
    without = {k: v for k, v in ENVELOPE.items() if k not in ("receivedAt", "event")}
    issues = refusal(RuntimeEventEnvelope, without)
    assert ("/receivedAt", "missing") in issues and ("/event", "missing") in issues
    assert ("/occurredAt", "null_not_allowed") in refusal(RuntimeEventEnvelope, {**ENVELOPE, "occurredAt": None})


def test_cancelled_status_is_distinct_from_failed() -> None:
    cancelled = wire_adapter(StreamEvent).parse({"type": "status", "status": "cancelled", "detail": "run cancelled by caller"})
    failed = wire_adapter(StreamEvent).parse({"type": "status", "status": "failed"})
    assert cancelled.status == "cancelled" and failed.status == "failed" and cancelled != failed


# --- native.session.observed -------------------------------------------------------

NATIVE = {"type": "native.session.observed", "provider": "claude-code", "nativeSessionId": "provider-conversation"}


def test_native_session_observed_schema() -> None:
    assert NativeSessionObservedEvent.parse_wire(NATIVE).to_wire() == NATIVE
    assert NativeSessionObservedEvent.parse_wire({**NATIVE, "provider": "a" + "b" * 127}).provider
    assert NativeSessionObservedEvent.parse_wire({**NATIVE, "nativeSessionId": "x" * 512})


@pytest.mark.parametrize(
    ("document", "pointer", "code"),
    [
        ({**NATIVE, "provider": ""}, "/provider", "provider_name"),
        ({**NATIVE, "provider": "Claude"}, "/provider", "provider_name"),
        ({**NATIVE, "provider": "1claude"}, "/provider", "provider_name"),
        ({**NATIVE, "provider": "a" * 129}, "/provider", "provider_name"),
        ({**NATIVE, "nativeSessionId": ""}, "/nativeSessionId", "string_too_short"),
        ({**NATIVE, "nativeSessionId": " padded"}, "/nativeSessionId", "whitespace"),
        ({**NATIVE, "nativeSessionId": "a\u00a0b"}, "/nativeSessionId", "whitespace"),
        ({**NATIVE, "nativeSessionId": "a" * 513}, "/nativeSessionId", "string_too_long"),
        ({**NATIVE, "sessionId": "caller-resume"}, "/sessionId", "extra_forbidden"),
        ({"type": "session.updated", "sessionId": "caller-resume"}, "/type", "literal_error"),
    ],
)
def test_native_session_observed_refusals(document: dict[str, Any], pointer: str, code: str) -> None:
    assert (pointer, code) in refusal(NativeSessionObservedEvent, document)


def test_native_observation_is_private_and_session_updated_is_public() -> None:
    native = wire_adapter(StreamEvent).parse(NATIVE)
    updated = wire_adapter(StreamEvent).parse({"type": "session.updated", "sessionId": "caller-resume"})
    assert not is_public_stream_event(native) and not is_public_stream_event(NATIVE)
    assert is_public_stream_event(updated)
    envelope = RuntimeEventEnvelope.parse_wire({**ENVELOPE, "event": NATIVE})
    public = list(public_stream_events([updated, native, envelope, RuntimeEventEnvelope.parse_wire(ENVELOPE)]))
    assert native not in public and envelope not in public and len(public) == 2


def test_registered_names() -> None:
    for name in ("StreamEvent", "CanonicalStreamEvent", "RuntimeEventEnvelope", "NativeSessionObservedEvent", "ChildTaskEvent"):
        assert name in _TYPES
