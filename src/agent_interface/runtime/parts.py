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
    type: Literal["text"] = "text"
    text: BoundedString


class InputFilePart(WireModel):
    type: Literal["file"] = "file"
    filename: BoundedString | None = None
    media_type: BoundedString | None = None
    url: BoundedString | None = None
    path: BoundedString | None = None
    content: BoundedString | None = None


class InputImagePart(WireModel):
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
    status: Literal["pending"] = "pending"
    input: BoundedJsonRecord
    raw: BoundedString | None = None


class ToolStateRunning(WireModel):
    status: Literal["running"] = "running"
    input: BoundedJsonRecord
    title: BoundedString | None = None
    metadata: BoundedJsonRecord | None = None
    time: _ToolStartTime | None = None


class ToolStateCompleted(WireModel):
    status: Literal["completed"] = "completed"
    input: BoundedJsonRecord
    output: BoundedJson
    title: BoundedString | None = None
    metadata: BoundedJsonRecord | None = None
    time: _ToolSpan | None = None


class ToolStateError(WireModel):
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
    type: Literal["text"] = "text"
    text: BoundedString


class ToolPart(_PartBase):
    type: Literal["tool"] = "tool"
    call_id: BoundedIdentifier | None = None
    tool: BoundedIdentifier
    state: ToolState
    metadata: BoundedJsonRecord | None = None


class ReasoningPart(_PartBase):
    type: Literal["reasoning"] = "reasoning"
    text: BoundedString


class FilePart(_PartBase):
    type: Literal["file"] = "file"
    filename: BoundedString | None = None
    media_type: BoundedString | None = None
    url: BoundedString | None = None


class SubtaskPart(_PartBase):
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
    return part.type == "text"


def is_tool_part(part: Part) -> TypeGuard[ToolPart]:
    return part.type == "tool"


def is_reasoning_part(part: Part) -> TypeGuard[ReasoningPart]:
    return part.type == "reasoning"


def is_file_part(part: Part) -> TypeGuard[FilePart]:
    return part.type == "file"


def is_subtask_part(part: Part) -> TypeGuard[SubtaskPart]:
    return part.type == "subtask"


def is_input_text_part(part: InputPart) -> TypeGuard[InputTextPart]:
    return part.type == "text"


def is_input_file_part(part: InputPart) -> TypeGuard[InputFilePart]:
    return part.type == "file"


def is_input_image_part(part: InputPart) -> TypeGuard[InputImagePart]:
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
