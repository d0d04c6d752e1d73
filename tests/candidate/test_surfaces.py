"""Improvement surfaces and the surfaces a profile change touches."""

from __future__ import annotations

from typing import Any

from agent_interface.candidate.surfaces import (
    AGENT_IMPROVEMENT_SURFACES,
    changed_profile_improvement_surfaces,
)

INLINE = {"kind": "inline", "name": "a", "content": "x"}


def diff(set_: dict[str, Any] | None = None, remove: dict[str, Any] | None = None) -> dict[str, Any]:
    step: dict[str, Any] = {"kind": "agent-profile-diff"}
    if set_ is not None:
        step["set"] = set_
    if remove is not None:
        step["remove"] = remove
    return step


def test_surface_list() -> None:
    assert AGENT_IMPROVEMENT_SURFACES == (
        "prompt", "skills", "tools", "mcp", "hooks", "subagents", "agent-profile",
        "memory", "code", "knowledge", "rollout-policy",
    )


def test_axes_map_to_surfaces_in_canonical_order() -> None:
    steps = [diff({"subagents": {"s": {}}, "prompt": {"systemPrompt": "x"}}), diff({"model": {"default": "m"}})]
    assert changed_profile_improvement_surfaces(steps) == ["prompt", "subagents", "agent-profile"]
    assert changed_profile_improvement_surfaces([diff({"name": "n"})]) == ["agent-profile"]
    assert changed_profile_improvement_surfaces([]) == []


def test_resources_are_granular_where_they_can_be() -> None:
    assert changed_profile_improvement_surfaces([diff({"resources": {"skills": [INLINE]}})]) == ["skills"]
    assert changed_profile_improvement_surfaces([diff({"resources": {"agents": [INLINE]}})]) == ["subagents"]
    assert changed_profile_improvement_surfaces(
        [diff({"resources": {"tools": [INLINE], "instructions": "x"}})]
    ) == ["tools", "agent-profile"]
    assert changed_profile_improvement_surfaces([diff({"resources": {}})]) == ["agent-profile"]
    assert changed_profile_improvement_surfaces([diff(remove={"resources": True})]) == [
        "skills", "tools", "subagents", "agent-profile",
    ]
    assert changed_profile_improvement_surfaces([diff(remove={"resources": {"skills": ["a"]}})]) == ["skills"]
