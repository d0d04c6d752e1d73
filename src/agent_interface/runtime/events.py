"""Canonical stream events and the replayable runtime envelope (``stream-events.ts``
and the event schemas of ``runtime-control.ts``).

:data:`StreamEvent` (also registered as ``CanonicalStreamEvent``) is a discriminated
union on ``type``, validated in one pass; an unknown ``type`` is refused.
:class:`RuntimeEventEnvelope` wraps one event with its run, event id, sequence,
optional cursor and timestamps.

Forward-compatible reading is explicit: :func:`parse_stream_event` with
``allow_unknown=True`` returns an :class:`UnknownStreamEvent` for a ``type`` this
version does not know (a later minor release may add members), while a known
``type`` with invalid content is still refused. The canonical schema itself never
accepts an unknown member.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Final, Literal

from pydantic import AfterValidator, Field
from pydantic_core import PydanticCustomError

from agent_interface.core.contract_limits import (
    JS_WHITESPACE,
    BoundedIdentifier,
    BoundedJson,
    BoundedString,
    FiniteNumber,
    IsoDatetime,
    NonNegativeNumber,
    NonNegativeSafeInt,
    Utf16Length,
)
from agent_interface.core.errors import ContractError
from agent_interface.core.model import (
    FrozenDict,
    WireModel,
    deep_freeze,
    wire_adapter,
)
from agent_interface.core.registry import register_wire_models
from agent_interface.runtime.child_tasks import (
    ChildTaskEvent,
    ChildTaskStatus,
    ChildTaskTime,
)
from agent_interface.runtime.interaction_requests import InteractionRequest
from agent_interface.runtime.parts import Part
from agent_interface.runtime.plan_record import DurablePlan

__all__ = [
    "STREAM_EVENT_TYPES",
    "CanonicalStreamEvent",
    "ChildTaskEvent",
    "ChildTaskStatus",
    "ChildTaskTime",
    "InteractionCancelEvent",
    "InteractionEvent",
    "MessagePartUpdatedEvent",
    "ModelProcessingEvent",
    "NativeSessionObservedEvent",
    "PlanSubmittedEvent",
    "RawEvent",
    "RuntimeEventEnvelope",
    "SessionUpdatedEvent",
    "SessionUpdatedTime",
    "StatusEvent",
    "StreamEvent",
    "StreamStatus",
    "ToolHeartbeatEvent",
    "ToolSlowEvent",
    "UnknownStreamEvent",
    "WarningEvent",
    "is_public_stream_event",
    "parse_runtime_event_envelope",
    "parse_stream_event",
    "public_stream_events",
]

StreamStatus = Literal["started", "processing", "completed", "failed", "cancelled"]


class MessagePartUpdatedEvent(WireModel):
    """A message part was created or changed; ``delta`` is the appended text when the provider
    streams it."""

    type: Literal["message.part.updated"]
    part: Part
    delta: BoundedString | None = None


class ToolHeartbeatEvent(WireModel):
    """A tool call is still running, with the time elapsed."""

    type: Literal["tool-heartbeat"]
    tool_name: BoundedIdentifier
    part_id: BoundedIdentifier
    elapsed_ms: NonNegativeNumber


class ToolSlowEvent(WireModel):
    """A tool call has run longer than a threshold."""

    type: Literal["tool-slow"]
    tool_name: BoundedIdentifier
    part_id: BoundedIdentifier
    elapsed_ms: NonNegativeNumber
    threshold_ms: NonNegativeNumber


class ModelProcessingEvent(WireModel):
    """The model is working (after a tool result, generating or thinking), with the time elapsed."""

    type: Literal["model-processing"]
    phase: Literal["tool-result", "generating", "thinking"]
    tool_name: BoundedIdentifier | None = None
    elapsed_ms: NonNegativeNumber | None = None


class StatusEvent(WireModel):
    """The run's status changed (started, processing, completed, failed or cancelled)."""

    type: Literal["status"]
    status: StreamStatus
    detail: BoundedString | None = None


class WarningEvent(WireModel):
    """A non-fatal problem the run reports, with a code."""

    type: Literal["warning"]
    code: BoundedIdentifier
    message: BoundedString


class RawEvent(WireModel):
    """A provider event with no canonical form; ``event`` is bounded JSON (null allowed)."""

    type: Literal["raw"]
    backend: BoundedIdentifier
    event: BoundedJson


class SessionUpdatedTime(WireModel):
    """When a session was created and last updated, as the provider reports the times."""

    created: FiniteNumber | None = None
    updated: FiniteNumber | None = None


class SessionUpdatedEvent(WireModel):
    """A public session update. ``sessionId`` is the caller's resume key; it does not
    establish the provider's native conversation identity (see
    :class:`NativeSessionObservedEvent`)."""

    type: Literal["session.updated"]
    session_id: BoundedIdentifier
    title: BoundedString | None = None
    time: SessionUpdatedTime | None = None


class InteractionEvent(WireModel):
    """The agent asks the user something: the interaction request."""

    type: Literal["interaction"]
    request: InteractionRequest


class InteractionCancelEvent(WireModel):
    """An open interaction was withdrawn, with the reason."""

    type: Literal["interaction.cancel"]
    id: BoundedIdentifier
    reason: BoundedString | None = None


class PlanSubmittedEvent(WireModel):
    """The agent submitted a plan for approval."""

    type: Literal["plan.submitted"]
    plan: DurablePlan


_PROVIDER_NAME_CHARS: Final = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-")


def _check_provider_name(value: str) -> str:
    if (
        not value
        or len(value) > 128
        or not ("a" <= value[0] <= "z")
        or any(char not in _PROVIDER_NAME_CHARS for char in value)
    ):
        raise PydanticCustomError(
            "provider_name",
            "provider must be a lowercase name: a letter, then up to 127 of a-z, 0-9 or -",
        )
    return value


def _check_no_whitespace(value: str) -> str:
    if any(char in JS_WHITESPACE for char in value):
        raise PydanticCustomError("whitespace", "native session id cannot contain whitespace")
    return value


class NativeSessionObservedEvent(WireModel):
    """A private adapter observation of the provider's own conversation identity.

    Emitted after the adapter observed ``nativeSessionId`` from its bound provider
    process or API. The execution owner binds it to its execution and keeps it
    private: public and user-visible streams exclude it (:func:`public_stream_events`).
    It establishes identity only, not that native artifacts were captured completely.
    """

    type: Literal["native.session.observed"]
    provider: Annotated[str, AfterValidator(_check_provider_name)]
    native_session_id: Annotated[
        str, Utf16Length(max=512, min=1), AfterValidator(_check_no_whitespace)
    ]


StreamEvent = Annotated[
    MessagePartUpdatedEvent
    | ToolHeartbeatEvent
    | ToolSlowEvent
    | ModelProcessingEvent
    | StatusEvent
    | WarningEvent
    | RawEvent
    | SessionUpdatedEvent
    | InteractionEvent
    | InteractionCancelEvent
    | PlanSubmittedEvent
    | ChildTaskEvent
    | NativeSessionObservedEvent,
    Field(discriminator="type"),
]
"""Every canonical stream event, discriminated by ``type`` (``CanonicalStreamEventSchema``)."""

CanonicalStreamEvent = StreamEvent

STREAM_EVENT_TYPES: Final = frozenset(
    {
        "message.part.updated",
        "tool-heartbeat",
        "tool-slow",
        "model-processing",
        "status",
        "warning",
        "raw",
        "session.updated",
        "interaction",
        "interaction.cancel",
        "plan.submitted",
        "child-task",
        "native.session.observed",
    }
)

PRIVATE_STREAM_EVENT_TYPES: Final = frozenset({"native.session.observed"})
"""Control events that public and user-visible streams must exclude."""


class RuntimeEventEnvelope(WireModel):
    """An ordered, replayable envelope around one canonical event."""

    run_id: BoundedIdentifier
    event_id: BoundedIdentifier
    sequence: NonNegativeSafeInt
    cursor: BoundedIdentifier | None = None
    occurred_at: Annotated[IsoDatetime, Utf16Length(max=64)] | None = None
    received_at: Annotated[IsoDatetime, Utf16Length(max=64)]
    event: StreamEvent


@dataclass(frozen=True, slots=True)
class UnknownStreamEvent:
    """An event whose ``type`` this version does not know, kept as frozen JSON.

    Produced only by the explicit forward-compatible parse
    (``parse_stream_event(..., allow_unknown=True)``); it is never a canonical event.
    """

    type: str
    document: Mapping[str, Any]

    def to_wire(self) -> dict[str, Any]:
        from agent_interface.core.model import thaw

        wire: dict[str, Any] = thaw(self.document)
        return wire


_EVENT_ADAPTER = wire_adapter(StreamEvent, "StreamEvent")
_ENVELOPE_ADAPTER = wire_adapter(RuntimeEventEnvelope, "RuntimeEventEnvelope")


def _as_document(data: bytes | str | Any) -> Any:
    if isinstance(data, (bytes, bytearray, str)):
        try:
            return json.loads(data)
        except (ValueError, RecursionError):
            pass  # refused below, so the parser's error (which holds the text) is no context
        raise ContractError.single("", "json_invalid", "input is not valid JSON")
    return data


def _unknown_type(document: Any) -> str | None:
    if isinstance(document, Mapping):
        tag = document.get("type")
        if isinstance(tag, str) and tag not in STREAM_EVENT_TYPES:
            return tag
    return None


def parse_stream_event(
    data: bytes | str | Any, *, allow_unknown: bool = False
) -> StreamEvent | UnknownStreamEvent:
    """Validate one stream event.

    Strict by default: an unknown ``type`` is refused (``union_tag_invalid``). With
    ``allow_unknown=True`` an object whose ``type`` is a string this version does not
    know becomes an :class:`UnknownStreamEvent`; everything else is validated as usual.
    """
    if not allow_unknown:
        event: StreamEvent = _EVENT_ADAPTER.parse(data)
        return event
    document = _as_document(data)
    tag = _unknown_type(document)
    if tag is not None:
        return UnknownStreamEvent(tag, deep_freeze(document))
    parsed: StreamEvent = _EVENT_ADAPTER.parse(document)
    return parsed


@dataclass(frozen=True, slots=True)
class ForwardCompatibleEnvelope:
    """An envelope whose event ``type`` is unknown to this version (explicit mode only).

    The envelope fields are validated; ``event`` is kept as frozen JSON.
    """

    envelope: Mapping[str, Any]
    event: UnknownStreamEvent


def parse_runtime_event_envelope(
    data: bytes | str | Any, *, allow_unknown: bool = False
) -> RuntimeEventEnvelope | ForwardCompatibleEnvelope:
    """Validate one envelope; ``allow_unknown`` as in :func:`parse_stream_event`."""
    if not allow_unknown:
        envelope: RuntimeEventEnvelope = _ENVELOPE_ADAPTER.parse(data)
        return envelope
    document = _as_document(data)
    inner = document.get("event") if isinstance(document, Mapping) else None
    tag = _unknown_type(inner)
    if tag is None:
        parsed: RuntimeEventEnvelope = _ENVELOPE_ADAPTER.parse(document)
        return parsed
    placeholder = {"type": "status", "status": "processing"}
    # Validate every envelope field with a known stand-in event, then keep the real one.
    _ENVELOPE_ADAPTER.parse({**document, "event": placeholder})
    assert isinstance(inner, Mapping)
    return ForwardCompatibleEnvelope(
        FrozenDict({key: deep_freeze(value) for key, value in document.items() if key != "event"}),
        UnknownStreamEvent(tag, deep_freeze(inner)),
    )


def is_public_stream_event(event: Any) -> bool:
    """Whether ``event`` may appear on a public or user-visible stream.

    ``native.session.observed`` is private control data and never public.
    """
    tag = getattr(event, "type", None)
    if isinstance(event, Mapping):
        tag = event.get("type")
    return tag not in PRIVATE_STREAM_EVENT_TYPES


def public_stream_events(events: Iterable[Any]) -> Iterator[Any]:
    """``events`` without the private control events (for SSE and user-visible streams).

    Envelopes are filtered by the event they wrap.
    """
    for item in events:
        inner = item.event if isinstance(item, RuntimeEventEnvelope) else item
        if is_public_stream_event(inner):
            yield item


__all__ += ["PRIVATE_STREAM_EVENT_TYPES", "ForwardCompatibleEnvelope"]

register_wire_models(
    StreamEvent=StreamEvent,
    CanonicalStreamEvent=CanonicalStreamEvent,
    StreamStatus=StreamStatus,
    MessagePartUpdatedEvent=MessagePartUpdatedEvent,
    NativeSessionObservedEvent=NativeSessionObservedEvent,
    SessionUpdatedEvent=SessionUpdatedEvent,
    RuntimeEventEnvelope=RuntimeEventEnvelope,
)
