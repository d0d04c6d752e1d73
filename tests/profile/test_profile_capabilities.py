"""AgentProfileCapabilities and check_profile_support."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from agent_interface.core.errors import ContractError
from agent_interface.profile.capabilities import (
    AgentProfileCapabilities,
    check_profile_support,
    ensure_profile_supported,
)

NONE: dict[str, Any] = {
    "namedProfiles": False,
    "systemPrompt": {"replace": False, "append": False},
    "instructions": False,
    "tools": False,
    "permissions": False,
    "mcp": False,
    "subagents": False,
    "resources": {"files": False, "instructions": False},
    "runtimeUpdate": False,
    "validation": False,
}
ALL: dict[str, Any] = {
    "namedProfiles": True,
    "systemPrompt": {"replace": True, "append": True},
    "instructions": True,
    "tools": True,
    "permissions": True,
    "mcp": True,
    "subagents": True,
    "resources": {
        "files": True,
        "instructions": True,
        "tools": True,
        "skills": True,
        "agents": True,
        "commands": True,
    },
    "hooks": True,
    "modes": True,
    "runtimeUpdate": True,
    "validation": True,
    "extensions": ["opencode"],
}
INLINE = {"kind": "inline", "name": "n", "content": "c"}
# (profile fragment, capability path that grants it, refused path, code)
AXES: list[tuple[dict[str, Any], tuple[str, ...], str, str]] = [
    ({"prompt": {"systemPrompt": "x"}}, ("systemPrompt", "replace"), "/prompt/systemPrompt", "system_prompt_replace_unsupported"),
    ({"prompt": {"appendSystemPrompt": "x"}}, ("systemPrompt", "append"), "/prompt/appendSystemPrompt", "system_prompt_append_unsupported"),
    ({"prompt": {"instructions": []}}, ("instructions",), "/prompt/instructions", "instructions_unsupported"),
    ({"permissions": {"shell": "ask"}}, ("permissions",), "/permissions", "permissions_unsupported"),
    ({"tools": {}}, ("tools",), "/tools", "tools_unsupported"),
    ({"mcp": {"off": {"enabled": False}}}, ("mcp",), "/mcp", "mcp_unsupported"),
    ({"subagents": {"r": {}}}, ("subagents",), "/subagents", "subagents_unsupported"),
    ({"resources": {"files": []}}, ("resources", "files"), "/resources/files", "resource_files_unsupported"),
    ({"resources": {"tools": [INLINE]}}, ("resources", "tools"), "/resources/tools", "resource_tools_unsupported"),
    ({"resources": {"skills": [INLINE]}}, ("resources", "skills"), "/resources/skills", "resource_skills_unsupported"),
    ({"resources": {"agents": [INLINE]}}, ("resources", "agents"), "/resources/agents", "resource_agents_unsupported"),
    ({"resources": {"commands": [INLINE]}}, ("resources", "commands"), "/resources/commands", "resource_commands_unsupported"),
    ({"resources": {"instructions": ""}}, ("resources", "instructions"), "/resources/instructions", "resource_instructions_unsupported"),
    ({"hooks": {"h": []}}, ("hooks",), "/hooks", "hooks_unsupported"),
    ({"modes": {"m": {}}}, ("modes",), "/modes", "modes_unsupported"),
]  # fmt: skip


def grant(path: tuple[str, ...]) -> dict[str, Any]:
    caps = copy.deepcopy(NONE)
    node = caps
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = True
    return caps


@pytest.mark.parametrize(("fragment", "capability", "path", "code"), AXES)
def test_each_axis_is_refused_without_its_capability(
    fragment: dict[str, Any], capability: tuple[str, ...], path: str, code: str
) -> None:
    assert [(i.path, i.code) for i in check_profile_support(fragment, NONE)] == [(path, code)]
    assert check_profile_support(fragment, grant(capability)) == []
    assert check_profile_support(fragment, ALL) == []


def test_replace_is_never_satisfied_by_append() -> None:
    append_only = {**NONE, "systemPrompt": {"replace": False, "append": True}}
    issues = check_profile_support({"prompt": {"systemPrompt": "Stand-alone."}}, append_only)
    assert [(i.path, i.code) for i in issues] == [
        ("/prompt/systemPrompt", "system_prompt_replace_unsupported")
    ]
    replace_only = {**NONE, "systemPrompt": {"replace": True, "append": False}}
    issues = check_profile_support({"prompt": {"appendSystemPrompt": "More."}}, replace_only)
    assert [i.code for i in issues] == ["system_prompt_append_unsupported"]


def test_every_refusal_is_reported() -> None:
    profile = {
        "prompt": {"systemPrompt": "a", "appendSystemPrompt": "b", "instructions": ["c"]},
        "tools": {"x": True},
        "hooks": {"h": [{"command": "p"}]},
        "extensions": {"opencode": {}, "other": {}},
    }
    codes = [i.code for i in check_profile_support(profile, NONE)]
    assert codes == [
        "system_prompt_replace_unsupported",
        "system_prompt_append_unsupported",
        "instructions_unsupported",
        "tools_unsupported",
        "hooks_unsupported",
        "extension_unsupported",
        "extension_unsupported",
    ]
    with pytest.raises(ContractError) as caught:
        ensure_profile_supported(profile, NONE)
    assert len(caught.value.issues) == 7


def test_extensions_need_a_declared_namespace() -> None:
    profile = {"extensions": {"opencode": {"x": 1}, "codex": {}}}
    assert [(i.path, i.code) for i in check_profile_support(profile, ALL)] == [
        ("/extensions/codex", "extension_unsupported")
    ]


def test_seat_chains_are_not_provider_facing() -> None:
    profile = {
        "harness": "pi",
        "model": {"provider": "p", "default": "m"},
        "seats": [
            {"harness": "pi", "provider": "p", "model": "m", "account": {"kind": "all-eligible"}}
        ],
    }
    assert [(i.path, i.code) for i in check_profile_support(profile, ALL)] == [
        ("/seats", "seats_not_projected")
    ]


def test_unrelated_fields_need_no_capability() -> None:
    profile = {
        "name": "n",
        "harness": "codex",
        "model": {"default": "openai/gpt-5", "reasoningEffort": "high"},
        "connections": [{"connectionId": "c", "capabilities": ["r"]}],
        "confidential": {"tee": "tdx"},
        "metadata": {"k": 1},
    }
    assert check_profile_support(profile, NONE) == []
    assert ensure_profile_supported(profile, NONE).name == "n"


def test_capabilities_schema_requires_both_prompt_bits() -> None:
    assert AgentProfileCapabilities.parse_wire(ALL).to_wire() == ALL
    half = {**NONE, "systemPrompt": {"append": True}}
    with pytest.raises(ContractError) as caught:
        AgentProfileCapabilities.parse_wire(half)
    assert [(i.path, i.code) for i in caught.value.issues] == [("/systemPrompt/replace", "missing")]


@pytest.mark.parametrize(
    ("changes", "path"),
    [
        ({"systemPrompt": True}, "/systemPrompt"),
        (
            {"systemPrompt": {"replace": True, "append": True, "prepend": True}},
            "/systemPrompt/prepend",
        ),
        ({"resources": {"files": True}}, "/resources/instructions"),
        ({"resources": {"files": True, "instructions": True, "x": True}}, "/resources/x"),
        ({"hooks": "yes"}, "/hooks"),
        ({"extensions": [" padded"]}, "/extensions/0"),
        ({"extensions": [""]}, "/extensions/0"),
        ({"extensions": ["x"] * 1025}, "/extensions"),
        ({"unknown": True}, "/unknown"),
        ({"validation": None}, "/validation"),
    ],
)
def test_capabilities_schema_is_strict(changes: dict[str, Any], path: str) -> None:
    with pytest.raises(ContractError) as caught:
        AgentProfileCapabilities.parse_wire({**NONE, **changes})
    assert path in {i.path for i in caught.value.issues}


def test_invalid_capabilities_are_refused_by_the_check() -> None:
    with pytest.raises(ContractError):
        check_profile_support({}, {**NONE, "systemPrompt": {"append": True}})
