"""The surfaces an improvement can change, and which ones a profile change touches.

:data:`AGENT_IMPROVEMENT_SURFACES` is the one list every proposal, validator and producer
reads. :func:`changed_profile_improvement_surfaces` maps profile diff steps to the
surfaces they touch: prompt, tools, MCP, hooks and subagents by axis; resource changes to
``skills``, ``tools`` or ``subagents`` (``agents``) where they are that specific, and to
``agent-profile`` otherwise, as is every other axis. The result is in canonical order.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Final, Literal

if TYPE_CHECKING:
    from agent_interface.profile.diff import DiffInput

__all__ = [
    "AGENT_IMPROVEMENT_SURFACES",
    "AgentImprovementSurface",
    "changed_profile_improvement_surfaces",
]

AgentImprovementSurface = Literal[
    "prompt",
    "skills",
    "tools",
    "mcp",
    "hooks",
    "subagents",
    "agent-profile",
    "memory",
    "code",
    "knowledge",
    "rollout-policy",
]

AGENT_IMPROVEMENT_SURFACES: Final[tuple[AgentImprovementSurface, ...]] = (
    "prompt",
    "skills",
    "tools",
    "mcp",
    "hooks",
    "subagents",
    "agent-profile",
    "memory",
    "code",
    "knowledge",
    "rollout-policy",
)
"""Every surface an improvement proposal can name. ``rollout-policy`` is the inference-time
structural-rollout dials; ``knowledge`` is the corpus lane."""

_PROFILE_ORDER: Final[tuple[AgentImprovementSurface, ...]] = AGENT_IMPROVEMENT_SURFACES[:7]
_BY_AXIS: Final[frozenset[str]] = frozenset({"prompt", "tools", "mcp", "hooks", "subagents"})
_BY_RESOURCE_KEY: Final[dict[str, AgentImprovementSurface]] = {
    "skills": "skills",
    "tools": "tools",
    "agents": "subagents",
}


def _resource_surfaces(wire: dict[str, Any]) -> tuple[set[AgentImprovementSurface], bool]:
    granular: set[AgentImprovementSurface] = set()
    other = False
    overlay = wire.get("set", {}).get("resources")
    if isinstance(overlay, dict):
        for key in overlay:
            surface = _BY_RESOURCE_KEY.get(key)
            if surface is None:
                other = True
            else:
                granular.add(surface)
        other = other or not overlay
    removal = wire.get("remove", {}).get("resources")
    if removal is True:
        granular.update(("skills", "tools", "subagents"))
        other = True
    elif isinstance(removal, dict):
        for key, value in removal.items():
            if not (value is True or (isinstance(value, list) and value)):
                continue
            surface = _BY_RESOURCE_KEY.get(key)
            if surface is None:
                other = True
            else:
                granular.add(surface)
    return granular, other


def changed_profile_improvement_surfaces(
    change: Iterable[DiffInput],
) -> list[AgentImprovementSurface]:
    """The surfaces a sequence of profile diff steps changes, in canonical order
    (``changedProfileImprovementSurfaces``)."""
    # Imported here: the surface names alone (read by activations) should not build the
    # profile model at import.
    from agent_interface.profile.diff import changed_agent_profile_axes, define_agent_profile_diff

    surfaces: set[AgentImprovementSurface] = set()
    for item in change:
        step = define_agent_profile_diff(item)
        for axis in changed_agent_profile_axes(step):
            if axis in _BY_AXIS:
                surfaces.add(axis)  # type: ignore[arg-type]
            elif axis == "resources":
                granular, other = _resource_surfaces(step.to_wire())
                surfaces.update(granular)
                if other:
                    surfaces.add("agent-profile")
            else:
                surfaces.add("agent-profile")
    return [surface for surface in _PROFILE_ORDER if surface in surfaces]
