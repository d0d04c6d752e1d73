"""PartFactory: parts carry their session, message and a fresh id without being told."""

from __future__ import annotations

import pytest

from agent_interface import ContractError, FilePart, ReasoningPart, SubtaskPart, TextPart, ToolPart
from agent_interface.runtime.part_factory import PartFactory


def test_every_part_is_bound_to_its_session_and_message() -> None:
    parts = PartFactory(session_id="s-1", message_id="m-1")
    made = [
        parts.text("hi"),
        parts.reasoning("thinking"),
        parts.tool("grep", {"status": "running", "input": {"pattern": "x"}}, call_id="call-1"),
        parts.file(filename="a.txt", media_type="text/plain"),
        parts.subtask(prompt="p", description="d", agent="helper"),
    ]
    assert [type(part) for part in made] == [TextPart, ReasoningPart, ToolPart, FilePart, SubtaskPart]
    assert [part.id for part in made] == [f"m-1:part-{n}" for n in range(1, 6)]
    assert all(part.session_id == "s-1" and part.message_id == "m-1" for part in made)
    assert made[0].to_wire() == {"id": "m-1:part-1", "sessionID": "s-1", "messageID": "m-1", "type": "text", "text": "hi"}


def test_ids_from_an_injected_source_or_named_by_the_call() -> None:
    names = iter(["p-a", "p-b"])
    parts = PartFactory(session_id="s", message_id="m", part_ids=lambda: next(names))
    assert [parts.text("a").id, parts.text("b", id="mine").id, parts.text("c").id] == ["p-a", "mine", "p-b"]


def test_invalid_bindings_and_values_are_refused_with_their_field() -> None:
    with pytest.raises(ContractError) as caught:
        PartFactory(session_id=" s", message_id="m").text("hi")
    assert caught.value.issues[0].path == "/sessionID"
    with pytest.raises(ContractError) as caught:
        PartFactory(session_id="s", message_id="m").tool("grep", {"status": "done", "input": {}})
    assert caught.value.issues[0].path.startswith("/state")


def test_updated_event_and_text_stream_keep_one_part_id() -> None:
    parts = PartFactory(session_id="s", message_id="m")
    stream = parts.text_stream()
    first, second = stream.append("Hel"), stream.append("lo")
    assert first.part.id == second.part.id == stream.id
    assert (first.delta, second.delta, stream.text) == ("Hel", "lo", "Hello")
    assert isinstance(second.part, TextPart) and second.part.text == "Hello"
    assert list(stream) == ["Hel", "lo"]
    whole = parts.updated(parts.text("done"))
    assert whole.delta is None and whole.to_wire()["type"] == "message.part.updated"
