"""Message parts bound to one session and one message, with their ids handed out.

Every runner part (:class:`~agent_interface.runtime.parts.TextPart`,
:class:`~agent_interface.runtime.parts.ToolPart`, ...) requires its own ``id`` and the
``sessionID`` and ``messageID`` it belongs to. A :class:`PartFactory` is made once per
message and fills those in::

    parts = PartFactory(session_id="session-1", message_id="message-1")
    hello = parts.text("Hello")          # id "message-1:part-1"
    event = parts.updated(hello, delta="Hello")

Streaming one growing text keeps one part id: pass ``id=hello.id`` to the next
``parts.text(...)``, or use :meth:`PartFactory.text_stream`.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from agent_interface.core.model import WireModel, thaw
from agent_interface.runtime.events import MessagePartUpdatedEvent
from agent_interface.runtime.parts import (
    FilePart,
    Part,
    ReasoningPart,
    SubtaskPart,
    TextPart,
    ToolPart,
    ToolState,
)

__all__ = ["PartFactory", "TextStream"]


class PartFactory:
    """Makes the parts of one message: ``session_id`` and ``message_id`` are stamped on
    every part, and each part gets the next id from ``part_ids`` (by default
    ``"<message_id>:part-<n>"``) unless the call names one. Values are validated by the
    part models, so a refusal is a ``ContractError`` naming the field."""

    __slots__ = ("_counter", "_part_ids", "message_id", "session_id")

    def __init__(
        self, *, session_id: str, message_id: str, part_ids: Callable[[], str] | None = None
    ) -> None:
        self.session_id = session_id
        self.message_id = message_id
        self._counter = itertools.count(1)
        self._part_ids = part_ids

    def __repr__(self) -> str:
        return f"PartFactory(session_id={self.session_id!r}, message_id={self.message_id!r})"

    def next_id(self) -> str:
        """A part id this factory has not handed out."""
        if self._part_ids is not None:
            return self._part_ids()
        return f"{self.message_id}:part-{next(self._counter)}"

    def _bound(self, id: str | None) -> dict[str, Any]:
        return {
            "id": self.next_id() if id is None else id,
            "sessionID": self.session_id,
            "messageID": self.message_id,
        }

    def text(self, text: str, *, id: str | None = None) -> TextPart:
        """A text part (the whole text so far, when streaming)."""
        return TextPart.parse_wire({**self._bound(id), "type": "text", "text": text})

    def reasoning(self, text: str, *, id: str | None = None) -> ReasoningPart:
        """A reasoning part."""
        return ReasoningPart.parse_wire({**self._bound(id), "type": "reasoning", "text": text})

    def tool(
        self,
        tool: str,
        state: ToolState | Mapping[str, Any],
        *,
        call_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        id: str | None = None,
    ) -> ToolPart:
        """A tool part: ``state`` is a tool state model or its wire mapping
        (``{"status": "running", "input": {...}}``)."""
        fields: dict[str, Any] = {
            **self._bound(id),
            "type": "tool",
            "tool": tool,
            "state": state.to_wire() if isinstance(state, WireModel) else thaw(state),
        }
        if call_id is not None:
            fields["callID"] = call_id
        if metadata is not None:
            fields["metadata"] = thaw(metadata)
        return ToolPart.parse_wire(fields)

    def file(
        self,
        *,
        filename: str | None = None,
        media_type: str | None = None,
        url: str | None = None,
        id: str | None = None,
    ) -> FilePart:
        """A file part."""
        fields: dict[str, Any] = {**self._bound(id), "type": "file"}
        for key, value in (("filename", filename), ("mediaType", media_type), ("url", url)):
            if value is not None:
                fields[key] = value
        return FilePart.parse_wire(fields)

    def subtask(self, *, prompt: str, description: str, agent: str, id: str | None = None) -> SubtaskPart:
        """A subtask part: work handed to another agent."""
        return SubtaskPart.parse_wire(
            {**self._bound(id), "type": "subtask", "prompt": prompt, "description": description, "agent": agent}
        )

    def updated(self, part: Part, *, delta: str | None = None) -> MessagePartUpdatedEvent:
        """The canonical ``message.part.updated`` event for ``part``; ``delta`` is the
        text added since the previous update of the same part."""
        if delta is None:
            return MessagePartUpdatedEvent(type="message.part.updated", part=part)
        return MessagePartUpdatedEvent(type="message.part.updated", part=part, delta=delta)

    def text_stream(self, *, id: str | None = None) -> TextStream:
        """A text part that grows: each :meth:`TextStream.append` answers the update
        event carrying the whole text so far and the new ``delta``, under one part id."""
        return TextStream(self, self.next_id() if id is None else id)


class TextStream:
    """One text part of a message, streamed in pieces (see :meth:`PartFactory.text_stream`)."""

    __slots__ = ("_factory", "_pieces", "id")

    def __init__(self, factory: PartFactory, id: str) -> None:
        self._factory = factory
        self.id = id
        self._pieces: list[str] = []

    @property
    def text(self) -> str:
        """The text streamed so far."""
        return "".join(self._pieces)

    def append(self, delta: str) -> MessagePartUpdatedEvent:
        """Add ``delta`` and answer the update event (whole text, and the delta)."""
        text = self.text + delta
        part = self._factory.text(text, id=self.id)
        self._pieces.append(delta)
        return self._factory.updated(part, delta=delta)

    def __iter__(self) -> Iterator[str]:
        return iter(tuple(self._pieces))
