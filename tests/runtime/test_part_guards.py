"""Message-part type guards: each accepts exactly its own ``type`` tag."""

from __future__ import annotations

from typing import Any

import pytest

from agent_interface import (
    is_file_part,
    is_input_file_part,
    is_input_image_part,
    is_input_text_part,
    is_reasoning_part,
    is_subtask_part,
    is_text_part,
    is_tool_part,
)
from agent_interface.core.model import wire_adapter
from agent_interface.runtime.parts import InputPart, Part

BASE = {"id": "p1", "sessionID": "s1", "messageID": "m1"}
PARTS: dict[str, dict[str, Any]] = {
    "text": {**BASE, "type": "text", "text": "hi"},
    "tool": {**BASE, "type": "tool", "tool": "bash", "state": {"status": "pending", "input": {}, "raw": ""}},
    "reasoning": {**BASE, "type": "reasoning", "text": "because"},
    "file": {**BASE, "type": "file", "filename": "a.txt"},
    "subtask": {**BASE, "type": "subtask", "prompt": "p", "description": "d", "agent": "a"},
}
GUARDS = {
    "text": is_text_part,
    "tool": is_tool_part,
    "reasoning": is_reasoning_part,
    "file": is_file_part,
    "subtask": is_subtask_part,
}
INPUT_PARTS = {
    "text": {"type": "text", "text": "hi"},
    "file": {"type": "file", "path": "a.txt"},
    "image": {"type": "image", "url": "https://x/a.png"},
}
INPUT_GUARDS = {"text": is_input_text_part, "file": is_input_file_part, "image": is_input_image_part}


@pytest.mark.parametrize("kind", PARTS)
def test_part_guards(kind: str) -> None:
    part = wire_adapter(Part).parse(PARTS[kind])
    assert {name for name, guard in GUARDS.items() if guard(part)} == {kind}


@pytest.mark.parametrize("kind", INPUT_PARTS)
def test_input_part_guards(kind: str) -> None:
    part = wire_adapter(InputPart).parse(INPUT_PARTS[kind])
    assert {name for name, guard in INPUT_GUARDS.items() if guard(part)} == {kind}
