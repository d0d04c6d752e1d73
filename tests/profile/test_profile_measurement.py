"""measure_agent_profile: content-free declaration measurements."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_interface.core.canonical import canonical_json
from agent_interface.core.errors import ContractError
from agent_interface.profile.canonical import canonical_agent_profile_digest
from agent_interface.profile.measurement import (
    AgentProfileMeasurements,
    logical_lines,
    measure_agent_profile,
    utf8_bytes,
)

SECRET_TEXT = "The hidden prompt text"
PROFILE: dict[str, Any] = {
    "prompt": {
        "systemPrompt": SECRET_TEXT + "\nsecond line",
        "appendSystemPrompt": "",
        "instructions": ["one\r\n", "é"],
    },
    "tools": {"read": True, "write": False, "exec": True},
    "mcp": {
        "remote": {
            "url": "https://mcp.example.com/private-path",
            "headers": {"Authorization": {"kind": "secret-ref", "key": "MCP_KEY_REF"}},
        },
        "local": {"command": "node", "args": [{"kind": "public", "value": "server-arg"}]},
        "off": {"enabled": False},
    },
    "subagents": {"a": {"prompt": "subagent prompt text"}, "b": {}},
    "resources": {
        "files": [
            {"path": "A.md", "resource": {"kind": "inline", "name": "a", "content": "file body\n"}},
            {
                "path": "B.md",
                "resource": {"kind": "github", "path": "docs/b.md", "repository": "o/r"},
            },
        ],
        "skills": [{"kind": "inline", "name": "skill", "content": "skill body"}],
        "commands": [{"kind": "github", "path": "c.md", "name": "cmd"}],
        "instructions": {"kind": "inline", "name": "ins", "content": "x\ry"},
    },
}


def test_measurement_rows_and_counts() -> None:
    result = measure_agent_profile(PROFILE)
    wire = result.to_wire()
    assert wire["version"] == 1
    assert wire["basis"] == "profile-declaration"
    assert wire["profileDigest"] == canonical_agent_profile_digest(PROFILE)
    assert wire["canonicalBytes"] == len(canonical_json(PROFILE).encode("utf-8"))
    assert wire["prompt"] == [
        {"path": "/prompt/systemPrompt", "bytes": 34, "lines": 2},
        {"path": "/prompt/appendSystemPrompt", "bytes": 0, "lines": 0},
        {"path": "/prompt/instructions/0", "bytes": 5, "lines": 1},
        {"path": "/prompt/instructions/1", "bytes": 2, "lines": 1},
    ]
    assert wire["tools"] == {"declared": 3, "enabled": 2, "disabled": 1}
    assert wire["mcp"] == {"declared": 3, "enabled": 2, "disabled": 1}
    assert wire["subagents"] == {"declared": 2}
    assert wire["resources"] == [
        {
            "path": "/resources/files/0/resource",
            "kind": "inline",
            "name": "a",
            "bytes": 10,
            "lines": 1,
        },
        {"path": "/resources/files/1/resource", "kind": "github", "bytes": None, "lines": None},
        {"path": "/resources/skills/0", "kind": "inline", "name": "skill", "bytes": 10, "lines": 1},
        {
            "path": "/resources/commands/0",
            "kind": "github",
            "name": "cmd",
            "bytes": None,
            "lines": None,
        },
        {
            "path": "/resources/instructions",
            "kind": "inline",
            "name": "ins",
            "bytes": 3,
            "lines": 2,
        },
    ]
    assert wire["coverage"] == {
        "tokens": "not-measured",
        "materialization": "not-assessed",
        "usage": "not-assessed",
    }
    assert AgentProfileMeasurements.parse_wire(wire) == result


def test_string_resource_instructions_are_an_inline_row_without_a_name() -> None:
    wire = measure_agent_profile({"resources": {"instructions": "a\nb\n"}}).to_wire()
    assert wire["resources"] == [
        {"path": "/resources/instructions", "kind": "inline", "bytes": 4, "lines": 2}
    ]


def test_empty_profile() -> None:
    wire = measure_agent_profile({}).to_wire()
    assert wire["prompt"] == [] and wire["resources"] == []
    assert wire["tools"] == {"declared": 0, "enabled": 0, "disabled": 0}
    assert wire["canonicalBytes"] == 2


def test_result_carries_no_content_or_configuration() -> None:
    text = json.dumps(measure_agent_profile(PROFILE).to_wire())
    for leaked in [
        SECRET_TEXT, "second line", "file body", "skill body", "subagent prompt text",
        "private-path", "mcp.example.com", "MCP_KEY_REF", "server-arg", "docs/b.md", "o/r",
        "node", "read", "remote",
    ]:  # fmt: skip
        assert leaked not in text


def test_invalid_profiles_are_refused() -> None:
    with pytest.raises(ContractError):
        measure_agent_profile({"prompt": {"systemPrompt": 1}})
    with pytest.raises(ContractError):
        measure_agent_profile({"prompt": {"systemPrompt": "\ud800"}})


@pytest.mark.parametrize(
    ("text", "lines"),
    [
        ("", 0),
        ("a", 1),
        ("a\n", 1),
        ("a\nb", 2),
        ("\n", 1),
        ("\n\n", 2),
        ("a\r\n", 1),
        ("a\r\nb", 2),
        ("a\r\n\r\n", 2),
        ("a\rb", 2),
        ("\r", 1),
        ("a\r", 1),
        ("\r\r\n", 2),
        ("\n\r", 2),
        ("a\u2028b", 1),
        ("a\x0bb\x0cc\x85d", 1),
    ],
)
def test_logical_lines(text: str, lines: int) -> None:
    assert logical_lines(text) == lines


@pytest.mark.parametrize(
    ("text", "size"), [("", 0), ("a", 1), ("é", 2), ("€", 3), ("\U0001f600", 4), ("\ud800", 3)]
)
def test_utf8_bytes(text: str, size: int) -> None:
    assert utf8_bytes(text) == size


@given(st.text(alphabet=st.sampled_from(["a", "é", "\n", "\r", " "]), max_size=40))
def test_logical_lines_counts_terminated_and_trailing_lines(text: str) -> None:
    pieces = re.split(r"\r\n|\r|\n", text)
    expected = 0 if text == "" else len(pieces) - (1 if pieces[-1] == "" else 0)
    assert logical_lines(text) == expected
    assert logical_lines(text + "x") == logical_lines(text) + (
        0 if text and text[-1] not in "\r\n" else 1
    )


@given(st.dictionaries(st.text(min_size=1, max_size=5), st.booleans(), max_size=6))
def test_tool_counts_add_up(tools: dict[str, bool]) -> None:
    counts = measure_agent_profile({"tools": tools}).tools
    assert counts.declared == len(tools) == counts.enabled + counts.disabled
    assert counts.enabled == sum(tools.values())
