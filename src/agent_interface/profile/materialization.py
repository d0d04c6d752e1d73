"""Materialization axes: the exact profile leaves one execution must account for
(``agent-profile-materialization.ts``).

A producer reports each requested leaf, never a compound parent (``model``, ``prompt``,
``resources``), so it cannot acknowledge a parent while silently dropping a child.
``systemPrompt`` and ``appendSystemPrompt`` are separate leaves, and so are the three model
token ceilings (``modelMaxVisibleOutputTokens``, ``modelMaxReasoningTokens``,
``modelMaxTotalOutputTokens``): a receipt covers each at its exact requested path, and a strict
profile refuses an unsupported ceiling instead of accepting it silently.

A profile with ``seats`` materializes per stage: pass ``stage`` to expand the provider-facing
projection of that stage (see :func:`project_profile_for_stage`). Without ``stage`` the
top-level fields are expanded, which is the first stage's projection; ``seats`` itself is
never an axis.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, Final, Literal, get_args

from agent_interface.core.canonical import utf16_sort_key
from agent_interface.core.errors import json_pointer
from agent_interface.core.model import WireModel

if TYPE_CHECKING:
    from agent_interface.profile.agent_profile import AgentProfile

__all__ = [
    "AGENT_PROFILE_MATERIALIZATION_AXES",
    "AgentProfileMaterializationAxis",
    "AgentProfileMaterializationRequest",
    "CanonicalAgentProfileMaterializationAxis",
    "profile_materialization_axes",
    "profile_materialization_requests",
]

AgentProfileMaterializationAxis = Literal[
    "name",
    "description",
    "version",
    "tags",
    "systemPrompt",
    "appendSystemPrompt",
    "instructions",
    "modelDefault",
    "modelSmall",
    "modelProvider",
    "modelReasoningEffort",
    "modelMaxVisibleOutputTokens",
    "modelMaxReasoningTokens",
    "modelMaxTotalOutputTokens",
    "modelMetadata",
    "harness",
    "permissions",
    "tools",
    "mcp",
    "connections",
    "subagents",
    "files",
    "resourceTools",
    "skills",
    "resourceAgents",
    "commands",
    "resourceInstructions",
    "resourceFailOnError",
    "hooks",
    "modes",
    "confidential",
    "metadata",
    "extensions",
]
CanonicalAgentProfileMaterializationAxis = AgentProfileMaterializationAxis

AGENT_PROFILE_MATERIALIZATION_AXES: Final[tuple[AgentProfileMaterializationAxis, ...]] = get_args(
    AgentProfileMaterializationAxis
)
"""The canonical profile leaves that can affect one execution, in canonical order."""

# Axis -> its root location in the profile's wire form.
_ROOTS: Final[dict[AgentProfileMaterializationAxis, tuple[str, ...]]] = {
    "name": ("name",),
    "description": ("description",),
    "version": ("version",),
    "tags": ("tags",),
    "systemPrompt": ("prompt", "systemPrompt"),
    "appendSystemPrompt": ("prompt", "appendSystemPrompt"),
    "instructions": ("prompt", "instructions"),
    "modelDefault": ("model", "default"),
    "modelSmall": ("model", "small"),
    "modelProvider": ("model", "provider"),
    "modelReasoningEffort": ("model", "reasoningEffort"),
    "modelMaxVisibleOutputTokens": ("model", "maxVisibleOutputTokens"),
    "modelMaxReasoningTokens": ("model", "maxReasoningTokens"),
    "modelMaxTotalOutputTokens": ("model", "maxTotalOutputTokens"),
    "modelMetadata": ("model", "metadata"),
    "harness": ("harness",),
    "permissions": ("permissions",),
    "tools": ("tools",),
    "mcp": ("mcp",),
    "connections": ("connections",),
    "subagents": ("subagents",),
    "files": ("resources", "files"),
    "resourceTools": ("resources", "tools"),
    "skills": ("resources", "skills"),
    "resourceAgents": ("resources", "agents"),
    "commands": ("resources", "commands"),
    "resourceInstructions": ("resources", "instructions"),
    "resourceFailOnError": ("resources", "failOnError"),
    "hooks": ("hooks",),
    "modes": ("modes",),
    "confidential": ("confidential",),
    "metadata": ("metadata",),
    "extensions": ("extensions",),
}
assert tuple(_ROOTS) == AGENT_PROFILE_MATERIALIZATION_AXES

_ABSENT: Final = object()


class AgentProfileMaterializationRequest(WireModel):
    """One requested leaf and its RFC 6901 JSON Pointer into the profile."""

    axis: AgentProfileMaterializationAxis
    path: str


def _read(document: Mapping[str, Any], location: tuple[str, ...]) -> Any:
    value: Any = document
    for key in location:
        if not isinstance(value, Mapping) or key not in value:
            return _ABSENT
        value = value[key]
    return value


def _wire(profile: AgentProfile | Mapping[str, Any] | str | bytes, stage: int | None) -> dict[str, Any]:
    # Imported here: the axis names (embedded by the preparation receipt) should not build
    # the whole profile model at import.
    from agent_interface.profile.canonical import coerce_agent_profile
    from agent_interface.profile.seats import project_profile_for_stage

    if stage is None:
        return coerce_agent_profile(profile).to_wire()
    return project_profile_for_stage(profile, stage).to_wire()


def profile_materialization_axes(
    profile: AgentProfile | Mapping[str, Any] | str | bytes, *, stage: int | None = None
) -> tuple[AgentProfileMaterializationAxis, ...]:
    """Every axis the profile requests, in canonical order (``profileMaterializationAxes``).
    Any explicit value is a request, including ``""``, ``[]``, ``{}``, ``null``, ``false`` and
    ``0``; only an absent leaf is left out."""
    document = _wire(profile, stage)
    return tuple(axis for axis, root in _ROOTS.items() if _read(document, root) is not _ABSENT)


def _leaf_paths(value: Any, location: list[str | int]) -> Iterator[str]:
    # Objects and arrays expand to their explicit leaves; an empty one is its own request.
    if isinstance(value, Mapping):
        entries: list[tuple[str | int, Any]] = [
            (key, value[key]) for key in sorted(value, key=utf16_sort_key)
        ]
    elif isinstance(value, (list, tuple)):
        entries = list(enumerate(value))
    else:
        yield json_pointer(location)
        return
    if not entries:
        yield json_pointer(location)
    for key, child in entries:
        yield from _leaf_paths(child, [*location, key])


def profile_materialization_requests(
    profile: AgentProfile | Mapping[str, Any] | str | bytes, *, stage: int | None = None
) -> tuple[AgentProfileMaterializationRequest, ...]:
    """Every requested leaf with its exact JSON Pointer (``profileMaterializationRequests``):
    one row per explicit scalar inside a map or list (object keys in UTF-16 order, as the
    reference sorts them), and the axis root for an empty map or list, so an explicit request
    to clear an axis is not lost."""
    document = _wire(profile, stage)
    # Axis and path are computed here, never caller input: construct without re-validation.
    return tuple(
        AgentProfileMaterializationRequest.model_construct(axis=axis, path=path)
        for axis, root in _ROOTS.items()
        if (value := _read(document, root)) is not _ABSENT
        for path in _leaf_paths(value, list(root))
    )
