"""Materialization axes and exact request paths, token ceilings and seat stages."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent_interface.core.errors import ContractError
from agent_interface.profile.agent_profile import (
    AgentProfileModelHintsBase,
    enforce_model_token_bounds,
)
from agent_interface.profile.materialization import (
    AGENT_PROFILE_MATERIALIZATION_AXES,
    profile_materialization_axes,
    profile_materialization_requests,
)

FULL: dict[str, Any] = {
    "name": "researcher",
    "description": "Tests mechanisms",
    "version": "1",
    "tags": ["science"],
    "prompt": {
        "systemPrompt": "Run discriminating experiments.",
        "appendSystemPrompt": "Report the exact command you ran.",
        "instructions": ["Keep exact evidence."],
    },
    "model": {
        "default": "openai/gpt-5.4",
        "small": "openai/gpt-5.4-mini",
        "provider": "openai",
        "reasoningEffort": "high",
        "maxVisibleOutputTokens": 1000,
        "maxReasoningTokens": 2000,
        "maxTotalOutputTokens": 3000,
        "metadata": {"route": "research"},
    },
    "harness": "codex",
    "permissions": {"shell": "ask"},
    "tools": {"shell": True},
    "mcp": {"papers": {"transport": "http", "url": "https://papers.example.test/mcp"}},
    "connections": [{"connectionId": "literature", "capabilities": ["search"]}],
    "subagents": {"critic": {"prompt": "Find confounds."}},
    "resources": {
        "files": [
            {
                "path": "inputs/protocol.txt",
                "resource": {"kind": "inline", "name": "protocol", "content": "falsify"},
            }
        ],
        "tools": [{"kind": "inline", "name": "tool", "content": "tool"}],
        "skills": [{"kind": "inline", "name": "skill", "content": "skill"}],
        "agents": [{"kind": "inline", "name": "agent", "content": "agent"}],
        "commands": [{"kind": "inline", "name": "command", "content": "command"}],
        "instructions": "Read every observation.",
        "failOnError": False,
    },
    "hooks": {"afterTool": [{"command": "./capture-result"}]},
    "modes": {"adversarial": {"prompt": "Try to falsify the claim."}},
    "confidential": {"sealed": True},
    "metadata": {"role": "driver"},
    "extensions": {"codex": {"sandbox": "workspace-write"}},
}


def rows(profile: Any, **kwargs: Any) -> list[tuple[str, str]]:
    return [(r.axis, r.path) for r in profile_materialization_requests(profile, **kwargs)]


def test_every_leaf_is_an_axis() -> None:
    assert len(AGENT_PROFILE_MATERIALIZATION_AXES) == 33
    assert profile_materialization_axes(FULL) == AGENT_PROFILE_MATERIALIZATION_AXES
    assert profile_materialization_axes({}) == ()


def test_token_ceilings_are_separate_leaves_at_their_exact_paths() -> None:
    requests = rows({"model": {"maxVisibleOutputTokens": 1, "maxReasoningTokens": 2, "maxTotalOutputTokens": 3}})
    assert requests == [
        ("modelMaxVisibleOutputTokens", "/model/maxVisibleOutputTokens"),
        ("modelMaxReasoningTokens", "/model/maxReasoningTokens"),
        ("modelMaxTotalOutputTokens", "/model/maxTotalOutputTokens"),
    ]


def test_compound_axes_expand_to_exact_pointers() -> None:
    profile = {
        "prompt": {"instructions": ["first", "second"]},
        "model": {"metadata": {"routing": {"tier": "large"}}},
        "tools": {"a/b~c": True, "shell": True, "web": False},
        "resources": {
            "files": [
                {
                    "path": "notes/a~b.txt",
                    "executable": False,
                    "resource": {"kind": "inline", "name": "a/b", "content": "bytes"},
                }
            ]
        },
    }
    assert rows(profile) == [
        ("instructions", "/prompt/instructions/0"),
        ("instructions", "/prompt/instructions/1"),
        ("modelMetadata", "/model/metadata/routing/tier"),
        ("tools", "/tools/a~1b~0c"),
        ("tools", "/tools/shell"),
        ("tools", "/tools/web"),
        ("files", "/resources/files/0/executable"),
        ("files", "/resources/files/0/path"),
        ("files", "/resources/files/0/resource/content"),
        ("files", "/resources/files/0/resource/kind"),
        ("files", "/resources/files/0/resource/name"),
    ]


def test_explicit_empty_null_false_and_zero_are_requests() -> None:
    profile = {
        "name": " ",
        "tags": [],
        "prompt": {"systemPrompt": "", "appendSystemPrompt": "", "instructions": []},
        "tools": {},
        "resources": {"failOnError": False},
        "metadata": {"blank": "", "empty": {}, "list": [], "nil": None, "retries": 0},
    }
    assert profile_materialization_axes(profile) == (
        "name",
        "tags",
        "systemPrompt",
        "appendSystemPrompt",
        "instructions",
        "tools",
        "resourceFailOnError",
        "metadata",
    )
    assert rows(profile) == [
        ("name", "/name"),
        ("tags", "/tags"),
        ("systemPrompt", "/prompt/systemPrompt"),
        ("appendSystemPrompt", "/prompt/appendSystemPrompt"),
        ("instructions", "/prompt/instructions"),
        ("tools", "/tools"),
        ("resourceFailOnError", "/resources/failOnError"),
        ("metadata", "/metadata/blank"),
        ("metadata", "/metadata/empty"),
        ("metadata", "/metadata/list"),
        ("metadata", "/metadata/nil"),
        ("metadata", "/metadata/retries"),
    ]


def test_hostile_keys_are_escaped_and_sorted_by_utf16_units() -> None:
    keys = ["/", "__proto__", "a/b~c", "constructor", "toString", "~", "\U0001f600", "\uff5e"]
    profile = json.loads(json.dumps({"tools": {key: False for key in reversed(keys)}}))
    assert [path for _, path in rows(profile)] == [
        "/tools/~1",
        "/tools/__proto__",
        "/tools/a~1b~0c",
        "/tools/constructor",
        "/tools/toString",
        "/tools/~0",
        "/tools/\U0001f600",  # a surrogate pair sorts before U+FF5E in UTF-16
        "/tools/\uff5e",
    ]


SEATED: dict[str, Any] = {
    "harness": "claude-code",
    "model": {"provider": "anthropic", "default": "anthropic/claude-opus-4-6", "maxTotalOutputTokens": 9},
    "tools": {"shell": True},
    "seats": [
        {
            "harness": "claude-code",
            "provider": "anthropic",
            "model": "anthropic/claude-opus-4-6",
            "account": {"kind": "all-eligible"},
        },
        {
            "harness": "codex",
            "provider": "openai",
            "model": "openai/gpt-5",
            "account": {"kind": "seat", "accountId": "team-b"},
            "tools": {},
        },
    ],
}


def test_seat_profiles_materialize_per_stage_from_the_projection() -> None:
    first = rows(SEATED)
    assert first == rows(SEATED, stage=0)
    assert not any(path.startswith("/seats") for _, path in first)
    second = dict(rows(SEATED, stage=1))
    assert ("harness", "/harness") in rows(SEATED, stage=1)
    assert "tools" not in second  # the stage's {} removes the profile's map from the projection
    assert ("tools", "/tools/shell") in first
    assert ("modelDefault", "/model/default") in rows(SEATED, stage=1)
    assert ("modelMaxTotalOutputTokens", "/model/maxTotalOutputTokens") in rows(SEATED, stage=1)
    with pytest.raises(ContractError):
        rows(SEATED, stage=2)


def test_enforce_model_token_bounds() -> None:
    enforce_model_token_bounds({"maxVisibleOutputTokens": 5, "maxTotalOutputTokens": 5})
    enforce_model_token_bounds({"maxVisibleOutputTokens": 50})
    with pytest.raises(ContractError) as caught:
        enforce_model_token_bounds(
            AgentProfileModelHintsBase(
                max_visible_output_tokens=6, max_reasoning_tokens=7, max_total_output_tokens=5
            )
        )
    assert [(i.path, i.code) for i in caught.value.issues] == [
        ("/maxVisibleOutputTokens", "token_ceiling_exceeds_total"),
        ("/maxReasoningTokens", "token_ceiling_exceeds_total"),
    ]
