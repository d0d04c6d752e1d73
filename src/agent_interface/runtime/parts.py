"""Message parts and portable messages (``parts.ts``, ``backend-message.ts``).

:data:`InputPart` is what a caller sends in a turn; :data:`Part` is what a runner
reports back; :class:`BackendMessage` is the portable conversation message that
context transfer reuses. The strict shapes follow the reference's zod schemas in
``portable-context-shared.ts`` and ``runtime-control.ts``.
"""

from __future__ import annotations

from typing import Annotated, Literal, TypeGuard

from pydantic import ConfigDict, Field

from agent_interface.core.contract_limits import (
    CONTRACT_MAX_ARRAY_LENGTH,
    BoundedIdentifier,
    BoundedJson,
    BoundedJsonRecord,
    BoundedString,
    IsoDatetime,
    js_trim,
)
from agent_interface.core.model import (
    WireList,
    WireModel,
    wire_names,
)
from agent_interface.core.registry import register_wire_models

__all__ = [
    "BackendMessage",
    "FilePart",
    "InputFilePart",
    "InputImagePart",
    "InputPart",
    "InputTextPart",
    "Part",
    "ReasoningPart",
    "SubtaskPart",
    "TextPart",
    "ToolPart",
    "ToolState",
    "ToolStateCompleted",
    "ToolStateError",
    "ToolStatePending",
    "ToolStateRunning",
    "is_file_part",
    "is_input_file_part",
    "is_input_image_part",
    "is_input_text_part",
    "is_reasoning_part",
    "is_subtask_part",
    "is_text_part",
    "is_tool_part",
    "normalize_input_parts",
    "render_input_parts_as_text",
]


class InputTextPart(WireModel):
    """Text sent to the agent in a turn."""

    type: Literal["text"] = "text"
    text: BoundedString


class InputFilePart(WireModel):
    """A file sent to the agent in a turn: by URL, path or inline content, with its name and media
    type."""

    type: Literal["file"] = "file"
    filename: BoundedString | None = None
    media_type: BoundedString | None = None
    url: BoundedString | None = None
    path: BoundedString | None = None
    content: BoundedString | None = None


class InputImagePart(WireModel):
    """An image sent to the agent in a turn, by URL or path, with its name and media type."""

    type: Literal["image"] = "image"
    filename: BoundedString | None = None
    media_type: BoundedString | None = None
    url: BoundedString | None = None
    path: BoundedString | None = None


InputPart = Annotated[InputTextPart | InputFilePart | InputImagePart, Field(discriminator="type")]
"""A part of a caller's turn input (``InputPartSchema``)."""


class _ToolTime(WireModel):
    start: float
    end: float | None = None


class _ToolStartTime(WireModel):
    start: float


class _ToolSpan(WireModel):
    start: float
    end: float


class ToolStatePending(WireModel):
    """A tool call that has been requested but not started: its input so far."""

    status: Literal["pending"] = "pending"
    input: BoundedJsonRecord
    raw: BoundedString | None = None


class ToolStateRunning(WireModel):
    """A tool call in progress: its input, title, metadata and start time."""

    status: Literal["running"] = "running"
    input: BoundedJsonRecord
    title: BoundedString | None = None
    metadata: BoundedJsonRecord | None = None
    time: _ToolStartTime | None = None


class ToolStateCompleted(WireModel):
    """A tool call that finished: its input and output, title, metadata and timing."""

    status: Literal["completed"] = "completed"
    input: BoundedJsonRecord
    output: BoundedJson
    title: BoundedString | None = None
    metadata: BoundedJsonRecord | None = None
    time: _ToolSpan | None = None


class ToolStateError(WireModel):
    """A tool call that failed (``error`` or ``failed``): its input, the error, any output, and
    timing."""

    status: Literal["error", "failed"]
    input: BoundedJsonRecord
    error: BoundedString | None = None
    output: BoundedJson | None = None
    metadata: BoundedJsonRecord | None = None
    time: _ToolTime | None = None


ToolState = Annotated[
    ToolStatePending | ToolStateRunning | ToolStateCompleted | ToolStateError,
    Field(discriminator="status"),
]


class _PartBase(WireModel):
    # The reference spells these ``sessionID``, ``messageID`` and ``callID`` on the wire.
    model_config = ConfigDict(
        alias_generator=wire_names(session_id="sessionID", message_id="messageID", call_id="callID")
    )

    id: BoundedIdentifier
    session_id: BoundedIdentifier
    message_id: BoundedIdentifier


class TextPart(_PartBase):
    """Text the agent wrote in a message."""

    type: Literal["text"] = "text"
    text: BoundedString


class ToolPart(_PartBase):
    """A tool call in a message: the tool, its call id and its state."""

    type: Literal["tool"] = "tool"
    call_id: BoundedIdentifier | None = None
    tool: BoundedIdentifier
    state: ToolState
    metadata: BoundedJsonRecord | None = None


class ReasoningPart(_PartBase):
    """The agent's reasoning text in a message."""

    type: Literal["reasoning"] = "reasoning"
    text: BoundedString


class FilePart(_PartBase):
    """A file in a message, by URL, with its name and media type."""

    type: Literal["file"] = "file"
    filename: BoundedString | None = None
    media_type: BoundedString | None = None
    url: BoundedString | None = None


class SubtaskPart(_PartBase):
    """A subtask the agent handed to another agent: the prompt, a description and the agent."""

    type: Literal["subtask"] = "subtask"
    prompt: BoundedString
    description: BoundedString
    agent: BoundedIdentifier


Part = Annotated[
    TextPart | ToolPart | ReasoningPart | FilePart | SubtaskPart, Field(discriminator="type")
]
"""A part of a runner's output message (the reference's runtime ``partSchema``)."""


# Type guards (``isTextPart`` ...): each reads the part's ``type`` tag only, as the reference.


def is_text_part(part: Part) -> TypeGuard[TextPart]:
    """True when ``part`` is a :class:`TextPart` (narrows the type)."""
    return part.type == "text"


def is_tool_part(part: Part) -> TypeGuard[ToolPart]:
    """True when ``part`` is a :class:`ToolPart` (narrows the type)."""
    return part.type == "tool"


def is_reasoning_part(part: Part) -> TypeGuard[ReasoningPart]:
    """True when ``part`` is a :class:`ReasoningPart` (narrows the type)."""
    return part.type == "reasoning"


def is_file_part(part: Part) -> TypeGuard[FilePart]:
    """True when ``part`` is a :class:`FilePart` (narrows the type)."""
    return part.type == "file"


def is_subtask_part(part: Part) -> TypeGuard[SubtaskPart]:
    """True when ``part`` is a :class:`SubtaskPart` (narrows the type)."""
    return part.type == "subtask"


def is_input_text_part(part: InputPart) -> TypeGuard[InputTextPart]:
    """True when ``part`` is an :class:`InputTextPart` (narrows the type)."""
    return part.type == "text"


def is_input_file_part(part: InputPart) -> TypeGuard[InputFilePart]:
    """True when ``part`` is an :class:`InputFilePart` (narrows the type)."""
    return part.type == "file"


def is_input_image_part(part: InputPart) -> TypeGuard[InputImagePart]:
    """True when ``part`` is an :class:`InputImagePart` (narrows the type)."""
    return part.type == "image"


class BackendMessage(WireModel):
    """A portable conversation message (``BackendMessageSchema``).

    ``parts`` are bounded JSON values: a :data:`Part`, an :data:`InputPart`, or a
    provider's own part that the receiver must treat as opaque.
    """

    id: BoundedIdentifier
    role: Literal["user", "assistant", "system"]
    parts: Annotated[WireList[BoundedJson], Field(max_length=CONTRACT_MAX_ARRAY_LENGTH)]
    timestamp: Annotated[IsoDatetime, Field(max_length=64)]
    metadata: BoundedJsonRecord | None = None


def normalize_input_parts(
    message: str | None = None, parts: tuple[InputPart, ...] | list[InputPart] | None = None
) -> tuple[InputPart, ...]:
    """``normalizeInputParts``: explicit parts win; else a non-empty message is one text part."""
    if parts:
        return tuple(parts)
    if message:
        return (InputTextPart(text=message),)
    return ()


def render_input_parts_as_text(parts: tuple[InputPart, ...] | list[InputPart]) -> str:
    """``renderInputPartsAsText``: text parts joined, attachments listed after them."""
    texts: list[str] = []
    attachments: list[str] = []
    for part in parts:
        if isinstance(part, InputTextPart):
            if part.text:
                texts.append(part.text)
            continue
        is_image = isinstance(part, InputImagePart)
        label = (
            part.path
            or part.filename
            or part.url
            or ("image attachment" if is_image else "file attachment")
        )
        attachments.append(f"[{'Image' if is_image else 'File'}: {label}]")
    text = js_trim("\n\n".join(texts))
    if not attachments:
        return text
    block = "Attached files:\n" + "\n".join(attachments)
    return f"{text}\n\n{block}" if text else block


register_wire_models(
    InputPart=InputPart,
    Part=Part,
    ToolState=ToolState,
    BackendMessage=BackendMessage,
)
