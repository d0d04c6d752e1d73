"""The measured change of a profile experiment (``agentProfileImprovementChangeSchema``).

A change is an ordered, non-empty list of strict profile patches (``AgentProfileDiff``):
a full resource replacement is a reset step followed by a replacement step. Each step must
change the profile, and a measured resource patch carries inline content (exact bytes),
never a reference to mutable content; the change must alter at least one improvement
surface (:func:`agent_interface.candidate.surfaces.changed_profile_improvement_surfaces`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Final, Self

from pydantic import AfterValidator, Field, model_validator
from pydantic_core import PydanticCustomError

from agent_interface.candidate.surfaces import changed_profile_improvement_surfaces
from agent_interface.core.errors import Refinement
from agent_interface.core.model import WireList
from agent_interface.core.registry import register_wire_models
from agent_interface.profile.diff_schema import AgentProfileDiff

__all__ = [
    "AgentProfileImprovementChange",
    "AgentProfileImprovementChangeStep",
]

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
