"""Overlaying one profile on another (``mergeAgentProfiles``): the overlay wins where it has a
value, lists concatenate, records merge shallowly, appended prompts join."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agent_interface.profile.agent_profile import AgentProfile
from agent_interface.profile.canonical import coerce_agent_profile

__all__ = [
    "merge_agent_profile_documents",
    "merge_agent_profiles",
]


# -- merge -------------------------------------------------------------------------------------


def _assign_defined(*sources: Mapping[str, Any] | None) -> dict[str, Any]:
    # Later sources win only where they carry a value; keys keep first-insertion order.
    merged: dict[str, Any] = {}
    for source in sources:
        if source is None:
            continue
        for key, value in source.items():
            if value is not None:
                merged[key] = value
    return merged


def _concat(base: Any, overlay: Any) -> list[Any] | None:
    if base is None and overlay is None:
        return None
    return [*(base or ()), *(overlay or ())]


def _merge_record(base: Any, overlay: Any) -> dict[str, Any] | None:
    # Entries are wire values, where JSON null (free metadata) is a value: it overrides.
    if base is None and overlay is None:
        return None
    return {**(base or {}), **(overlay or {})}


def _merge_appended(base: str | None, overlay: str | None) -> str | None:
    if base is None or base == "":
        return overlay if overlay is not None else base
    if overlay is None or overlay == "":
        return base
    return f"{base}\n\n{overlay}"


def merge_agent_profiles(
    base: AgentProfile | Mapping[str, Any] | None,
    overlay: AgentProfile | Mapping[str, Any] | None,
) -> AgentProfile | None:
    """``mergeAgentProfiles``: overlay values win where present; ``prompt.instructions``,
    resource lists and ``connections`` concatenate base-first; ``appendSystemPrompt`` values
    join with a blank line (an empty one adds no separator); record maps merge shallowly.
    The result is validated, so a merge that breaks a rule (for example a seat chain whose
    first stage no longer matches) raises :class:`ContractError`."""
    if base is None and overlay is None:
        return None
    left = coerce_agent_profile(base).to_wire() if base is not None else {}
    right = coerce_agent_profile(overlay).to_wire() if overlay is not None else {}
    return AgentProfile.parse_wire(merge_agent_profile_documents(left, right))


def merge_agent_profile_documents(
    left: Mapping[str, Any], right: Mapping[str, Any]
) -> dict[str, Any]:
    """The merge of :func:`merge_agent_profiles` over two wire documents, unvalidated: for
    callers that edit the result further (a diff's removals) before validating it once."""
    prompt = None
    if "prompt" in left or "prompt" in right:
        lp, rp = left.get("prompt", {}), right.get("prompt", {})
        prompt = _assign_defined(
            lp,
            rp,
            {
                "appendSystemPrompt": _merge_appended(
                    lp.get("appendSystemPrompt"), rp.get("appendSystemPrompt")
                ),
                "instructions": _concat(lp.get("instructions"), rp.get("instructions")),
            },
        )
    resources = None
    if "resources" in left or "resources" in right:
        lr, rr = left.get("resources", {}), right.get("resources", {})
        lists = {
            key: _concat(lr.get(key), rr.get(key))
            for key in ("files", "tools", "skills", "agents", "commands")
        }
        instructions = rr.get("instructions", lr.get("instructions"))
        resources = _assign_defined(lr, rr, {**lists, "instructions": instructions})
    merged = _assign_defined(
        left,
        right,
        {
            "prompt": prompt,
            "permissions": _merge_record(left.get("permissions"), right.get("permissions")),
            "tools": _merge_record(left.get("tools"), right.get("tools")),
            "mcp": _merge_record(left.get("mcp"), right.get("mcp")),
            "connections": _concat(left.get("connections"), right.get("connections")),
            "subagents": _merge_record(left.get("subagents"), right.get("subagents")),
            "resources": resources,
            "hooks": _merge_record(left.get("hooks"), right.get("hooks")),
            "modes": _merge_record(left.get("modes"), right.get("modes")),
            "metadata": _merge_record(left.get("metadata"), right.get("metadata")),
            "extensions": _merge_record(left.get("extensions"), right.get("extensions")),
        },
    )
    return merged
