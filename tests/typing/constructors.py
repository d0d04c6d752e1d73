"""Constructors type-check with snake_case attribute names, and only with them.

This module is checked by ``mypy --strict`` with the pydantic plugin (the project's
configuration), by ``mypy --strict`` without it (``tests/typing/mypy-without-plugin.ini``,
as a user's project may run it), and by pyright, in CI (``.ci/run``). Each line marked
``# type: ignore[call-arg]`` constructs a model with a wire name: it works at run time,
but a type checker must refuse it, and an ignore that is not needed fails the check
(``warn_unused_ignores``, pyright's ``reportUnnecessaryTypeIgnoreComment``).

``tests/typing/test_constructors.py`` imports this module (so every construction runs)
and checks that every model with a wire name other than its attribute's camelCase is
constructed here by that attribute's name.
"""

from __future__ import annotations

from agent_interface import (
    AgentProfile,
    AgentProfileCapabilityCounts,
    AgentProfileMeasurements,
    AgentProfilePrompt,
    AgentProfileSubagentCounts,
    AgentSessionRef,
    AgentTurnInput,
    AgentTurnResult,
    BackendMessage,
    FilePart,
    MessagePartUpdatedEvent,
    ReasoningPart,
    RuntimeEventEnvelope,
    SessionCapabilities,
    StatusEvent,
    SubtaskPart,
    TextPart,
    TokenUsage,
    ToolPart,
    ToolStateCompleted,
)
from agent_interface.candidate.measurement import LoopProvenance

DIGEST = "sha256:" + "0" * 64

# Models whose wire names are not the camelCase of their attributes (``sessionID``,
# ``callID``, ``continue``, ``canonicalBytes``, ``schema``): the attribute name is typed.
text_part = TextPart(id="p1", session_id="s1", message_id="m1", text="hello")
tool_part = ToolPart(
    id="p2",
    session_id="s1",
    message_id="m1",
    call_id="c1",
    tool="bash",
    state=ToolStateCompleted(input={"command": "ls"}, output="a b"),
)
reasoning_part = ReasoningPart(id="p3", session_id="s1", message_id="m1", text="thinking")
file_part = FilePart(id="p4", session_id="s1", message_id="m1", filename="a.txt")
subtask_part = SubtaskPart(
    id="p5", session_id="s1", message_id="m1", prompt="do", description="a task", agent="a1"
)
session_capabilities = SessionCapabilities(continue_=True, list=True, messages=False)
measurements = AgentProfileMeasurements(
    profile_digest=DIGEST,
    canonical_byte_count=2,
    prompt=(),
    tools=AgentProfileCapabilityCounts(declared=0, enabled=0, disabled=0),
    mcp=AgentProfileCapabilityCounts(declared=0, enabled=0, disabled=0),
    subagents=AgentProfileSubagentCounts(declared=0),
    resources=(),
)
provenance = LoopProvenance(
    kind="agent-eval-loop",
    schema_="agent-eval-loop/v1",
    run_id="run-1",
    record_digest=DIGEST,
    baseline_content_hash="a" * 64,
    candidate_content_hash="b" * 64,
)

# Models whose wire names are the camelCase of their attributes.
turn_input = AgentTurnInput(prompt="hi", session_id="s1", timeout_ms=1000, turn_id="t1")
turn_result = AgentTurnResult(
    text="done",
    success=True,
    session_id="s1",
    usage=TokenUsage(input_tokens=1, output_tokens=2, cache_read_input_tokens=0),
)
session_ref = AgentSessionRef(id="s1", provider="memory")
message = BackendMessage(
    id="m1", role="user", parts=({"type": "text", "text": "hi"},), timestamp="2026-11-30T09:15:00Z"
)
envelope = RuntimeEventEnvelope(
    run_id="r1",
    event_id="e1",
    sequence=0,
    received_at="2026-11-30T09:15:00Z",
    event=MessagePartUpdatedEvent(type="message.part.updated", part=text_part),
)
status = RuntimeEventEnvelope(
    run_id="r1",
    event_id="e2",
    sequence=1,
    received_at="2026-11-30T09:15:01Z",
    event=StatusEvent(type="status", status="completed"),
)
profile = AgentProfile(
    name="reviewer", prompt=AgentProfilePrompt(system_prompt="Review.", append_system_prompt="Be brief.")
)

# Wire names are for parse_wire: a type checker refuses them in a constructor.
wire_text_part = TextPart(id="p1", sessionID="s1", messageID="m1", text="hello")  # type: ignore[call-arg]
wire_turn_input = AgentTurnInput(sessionId="s1")  # type: ignore[call-arg]
counts = AgentProfileCapabilityCounts(declared=0, enabled=0, disabled=0)
subagents = AgentProfileSubagentCounts(declared=0)
wire_measured = AgentProfileMeasurements(profile_digest=DIGEST, canonicalBytes=2, prompt=(), tools=counts, mcp=counts, subagents=subagents, resources=())  # type: ignore[call-arg]
