"""Input parts, runner parts and portable messages."""

from __future__ import annotations

import pytest

from agent_interface.core.errors import WireValidationError
from agent_interface.core.model import wire_adapter
from agent_interface.runtime.parts import (
    BackendMessage,
    InputFilePart,
    InputImagePart,
    InputPart,
    InputTextPart,
    Part,
    ToolPart,
    ToolStateCompleted,
    normalize_input_parts,
    render_input_parts_as_text,
)

input_parts = wire_adapter(InputPart)
parts = wire_adapter(Part)


def test_input_part_variants() -> None:
    assert isinstance(input_parts.parse({"type": "text", "text": "hi"}), InputTextPart)
    file_part = input_parts.parse({"type": "file", "path": "a.txt", "mediaType": "text/plain"})
    assert isinstance(file_part, InputFilePart) and file_part.media_type == "text/plain"
    assert isinstance(input_parts.parse({"type": "image", "url": "https://x"}), InputImagePart)


@pytest.mark.parametrize(
    ("doc", "path", "code"),
    [
        ({"type": "video"}, "/type", "union_tag_invalid"),
        ({"type": "text"}, "/text", "missing"),
        ({"type": "image", "content": "x"}, "/content", "extra_forbidden"),
        ({"type": "file", "media_type": "x"}, "/media_type", "extra_forbidden"),
    ],
)
def test_input_part_refusals(doc: dict[str, object], path: str, code: str) -> None:
    with pytest.raises(WireValidationError) as caught:
        input_parts.parse(doc)
    assert (caught.value.issues[0].path, caught.value.issues[0].code) == (path, code)


def test_runner_part_uses_reference_wire_names() -> None:
    doc = {
        "type": "tool",
        "id": "p1",
        "sessionID": "s1",
        "messageID": "m1",
        "callID": "c1",
        "tool": "bash",
        "state": {"status": "completed", "input": {"cmd": "ls"}, "output": ["a"]},
    }
    part = parts.parse(doc)
    assert isinstance(part, ToolPart) and isinstance(part.state, ToolStateCompleted)
    assert parts.to_wire(part) == doc


def test_runner_part_refuses_unknown_tool_status() -> None:
    with pytest.raises(WireValidationError) as caught:
        parts.parse(
            {"type": "tool", "id": "p", "sessionID": "s", "messageID": "m", "tool": "t",
             "state": {"status": "paused", "input": {}}}
        )
    assert caught.value.issues[0].path == "/state/status"


def test_backend_message() -> None:
    message = BackendMessage.parse_wire(
        {"id": "m1", "role": "user", "parts": [{"type": "text", "text": "hi"}, {"opaque": 1}],
         "timestamp": "2026-01-01T00:00:00.000Z"}
    )
    assert message.parts[1] == {"opaque": 1}
    with pytest.raises(WireValidationError) as caught:
        BackendMessage.parse_wire(
            {"id": "m1", "role": "tool", "parts": [], "timestamp": "2026-01-01T00:00:00Z"}
        )
    assert caught.value.issues[0].path == "/role"
    with pytest.raises(WireValidationError) as caught:
        BackendMessage.parse_wire(
            {"id": "m1", "role": "user", "parts": [], "timestamp": "yesterday"}
        )
    assert caught.value.issues[0].path == "/timestamp"


def test_normalize_and_render_input_parts() -> None:
    assert normalize_input_parts(message="hi") == (InputTextPart(text="hi"),)
    assert normalize_input_parts(message="") == ()
    explicit = [InputImagePart(filename="a.png")]
    assert normalize_input_parts(message="ignored", parts=explicit) == tuple(explicit)
    text = render_input_parts_as_text(
        [InputTextPart(text=" hello "), InputFilePart(path="src/a.py"), InputImagePart()]
    )
    assert text == "hello\n\nAttached files:\n[File: src/a.py]\n[Image: image attachment]"
    assert render_input_parts_as_text([InputFilePart()]) == "Attached files:\n[File: file attachment]"
