"""The measured change of a profile experiment and the surfaces it alters.

A change is an ordered, non-empty list of strict profile patches (``AgentProfileDiff``):
a full resource replacement is a reset step followed by a replacement step. Each step must
change the profile, and a measured resource patch carries inline content (exact bytes),
never a reference to mutable content. :func:`changed_profile_improvement_surfaces` names the
improvement surfaces a change alters, in canonical order; an axis without a surface of its
own (model, harness, permissions, ...) counts as the complete ``agent-profile``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Final, Literal, Self

from pydantic import AfterValidator, Field, model_validator
from pydantic_core import PydanticCustomError

from agent_interface.core.errors import Refinement
from agent_interface.core.model import WireList
from agent_interface.core.registry import register_wire_models
from agent_interface.profile.diff import changed_agent_profile_axes
from agent_interface.profile.diff_schema import AgentProfileDiff

__all__ = [
    "AGENT_IMPROVEMENT_SURFACES",
    "AgentImprovementSurface",
    "AgentProfileImprovementChange",
    "AgentProfileImprovementChangeStep",
    "changed_profile_improvement_surfaces",
]

AGENT_IMPROVEMENT_SURFACES: Final = (
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


_DIRECT_SURFACES: Final = frozenset({"prompt", "tools", "mcp", "hooks", "subagents"})
_SURFACE_ORDER: Final[tuple[AgentImprovementSurface, ...]] = ("prompt", "skills", "tools", "mcp", "hooks", "subagents", "agent-profile")


def _resource_surfaces(step: AgentProfileDiff) -> tuple[set[str], bool]:
    granular: set[str] = set()
    other = False
    overlay = step.set.to_wire().get("resources") if step.set is not None else None
    if overlay is not None:
        for key in overlay:
            if key in ("skills", "tools"):
                granular.add(key)
            elif key == "agents":
                granular.add("subagents")
            else:
                other = True
        other = other or not overlay
    removal = step.remove.to_wire().get("resources") if step.remove is not None else None
    if removal is True:
        granular.update(("skills", "tools", "subagents"))
        other = True
    elif isinstance(removal, Mapping):
        for key, value in removal.items():
            if not (len(value) > 0 if isinstance(value, list) else value is True):
                continue
            if key in ("skills", "tools"):
                granular.add(key)
            elif key == "agents":
                granular.add("subagents")
            else:
                other = True
    return granular, other


def changed_profile_improvement_surfaces(
    change: tuple[AgentProfileDiff, ...] | list[AgentProfileDiff],
) -> list[AgentImprovementSurface]:
    """The improvement surfaces a profile change alters, in canonical order. A resource
    change other than skills, tools or agents counts as ``agent-profile``."""
    surfaces: set[str] = set()
    for step in change:
        for axis in changed_agent_profile_axes(step):
            if axis in _DIRECT_SURFACES:
                surfaces.add(axis)
            elif axis == "resources":
                granular, other = _resource_surfaces(step)
                surfaces.update(granular)
                if other:
                    surfaces.add("agent-profile")
            else:
                surfaces.add("agent-profile")
    return [surface for surface in _SURFACE_ORDER if surface in surfaces]


_RESOURCE_GROUPS: Final = ("files", "tools", "skills", "agents", "commands")


class AgentProfileImprovementChangeStep(AgentProfileDiff):
    """One strict canonical profile patch that changes the profile; resource patches carry
    inline content (exact bytes), never a reference."""

    @model_validator(mode="after")
    def _measurable(self) -> Self:
        issues = Refinement("AgentProfileImprovementChangeStep")
        if not changed_profile_improvement_surfaces([self]):
            issues.add(
                (), "profile_patch_empty", "profile improvement patch must change the agent profile"
            )
        resources = self.set.to_wire().get("resources") if self.set is not None else None
        if isinstance(resources, Mapping):
            for group in _RESOURCE_GROUPS:
                refs = resources.get(group) or []
                for index, ref in enumerate(refs):
                    target = ref.get("resource") if group == "files" else ref
                    if isinstance(target, Mapping) and target.get("kind") != "inline":
                        issues.add(
                            ("set", "resources", group, index),
                            "profile_patch_not_inline",
                            "measured profile resource patches require inline content with exact bytes",
                        )
            instructions = resources.get("instructions")
            if isinstance(instructions, Mapping) and instructions.get("kind") != "inline":
                issues.add(
                    ("set", "resources", "instructions"),
                    "profile_patch_not_inline",
                    "measured profile resource patches require inline content with exact bytes",
                )
        issues.check()
        return self


def _alters_a_surface(
    change: tuple[AgentProfileImprovementChangeStep, ...],
) -> tuple[AgentProfileImprovementChangeStep, ...]:
    if not changed_profile_improvement_surfaces(change):
        raise PydanticCustomError(
            "profile_change_empty",
            "profile improvement change must alter at least one supported surface",
        )
    return change


AgentProfileImprovementChange = Annotated[
    WireList[AgentProfileImprovementChangeStep],
    Field(min_length=1),
    AfterValidator(_alters_a_surface),
]
"""Ordered profile patches (a full resource replacement is a reset step, then a replacement)."""


register_wire_models(
    AgentProfileImprovementChange=AgentProfileImprovementChange,
    AgentProfileImprovementChangeStep=AgentProfileImprovementChangeStep,
)
