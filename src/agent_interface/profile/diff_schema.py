"""Wire shapes of profile diffs (``agentProfileDiffSchema`` and its removal schemas).

An :class:`AgentProfileDiff` is a portable profile improvement: ``set`` is a whole
:class:`AgentProfile` overlay (merged as :func:`merge_agent_profiles` does) and ``remove``
deletes whole axes or named entries after the overlay. A remove list is ``true`` (the whole
axis) or a list of non-empty names. The functions that build, apply and prune diffs live in
:mod:`agent_interface.profile.diff`.
"""

from __future__ import annotations

from typing import Literal

from agent_interface.core.model import WireList, WireModel
from agent_interface.core.registry import register_wire_models
from agent_interface.profile.agent_profile import AgentProfile
from agent_interface.profile.scalars import NonEmptyString, ProfileJsonRecord, TrueOnly

__all__ = [
    "AgentProfileDiff",
    "AgentProfileDiffRemoval",
    "AgentProfileDiffSource",
    "AgentProfileDiffSourceKind",
    "AgentProfilePromptRemoval",
    "AgentProfileRemoveList",
    "AgentProfileResourceRemoval",
]

AgentProfileRemoveList = TrueOnly | WireList[NonEmptyString]
"""``true`` removes the whole axis; a list removes the named entries."""


class AgentProfilePromptRemoval(WireModel):
    """Which prompt parts a profile diff removes: the system prompt, the appended prompt and
    instructions."""

    system_prompt: TrueOnly | None = None
    append_system_prompt: TrueOnly | None = None
    instructions: AgentProfileRemoveList | None = None
    """``true``, or the exact instruction strings to drop."""


class AgentProfileResourceRemoval(WireModel):
    """Resource lists remove entries by name (a GitHub resource without a name by its
    path); ``files`` also match the mount path."""

    files: AgentProfileRemoveList | None = None
    tools: AgentProfileRemoveList | None = None
    skills: AgentProfileRemoveList | None = None
    agents: AgentProfileRemoveList | None = None
    commands: AgentProfileRemoveList | None = None
    instructions: TrueOnly | None = None
    fail_on_error: TrueOnly | None = None


class AgentProfileDiffRemoval(WireModel):
    """What a diff deletes. ``identity`` drops name, description and version; record axes
    take key lists; ``connections`` matches a connection id or alias.

    ``seats`` is ours: the reference profile has no seat chain (see
    ``docs/parity/profile-tooling.md``)."""

    identity: TrueOnly | None = None
    tags: AgentProfileRemoveList | None = None
    prompt: TrueOnly | AgentProfilePromptRemoval | None = None
    model: AgentProfileRemoveList | None = None
    harness: TrueOnly | None = None
    permissions: AgentProfileRemoveList | None = None
    tools: AgentProfileRemoveList | None = None
    mcp: AgentProfileRemoveList | None = None
    connections: AgentProfileRemoveList | None = None
    subagents: AgentProfileRemoveList | None = None
    resources: TrueOnly | AgentProfileResourceRemoval | None = None
    hooks: AgentProfileRemoveList | None = None
    modes: AgentProfileRemoveList | None = None
    confidential: TrueOnly | None = None
    metadata: AgentProfileRemoveList | None = None
    extensions: AgentProfileRemoveList | None = None
    seats: TrueOnly | None = None


AgentProfileDiffSourceKind = Literal["trace", "frontier-author", "human", "optimizer", "compound"]


class AgentProfileDiffSource(WireModel):
    """Where a profile diff came from: its kind, supporting artifacts and notes."""

    kind: AgentProfileDiffSourceKind
    artifacts: WireList[NonEmptyString] | None = None
    notes: WireList[str] | None = None


class AgentProfileDiff(WireModel):
    """A portable profile improvement artifact (``agentProfileDiffSchema``)."""

    kind: Literal["agent-profile-diff"]
    id: NonEmptyString | None = None
    title: NonEmptyString | None = None
    description: str | None = None
    rationale: str | None = None
    source: AgentProfileDiffSource | None = None
    set: AgentProfile | None = None
    """Overlay merged onto the base profile before ``remove`` runs."""
    remove: AgentProfileDiffRemoval | None = None
    metadata: ProfileJsonRecord | None = None


register_wire_models(
    AgentProfileDiff=AgentProfileDiff,
    AgentProfileDiffRemoval=AgentProfileDiffRemoval,
    AgentProfilePromptRemoval=AgentProfilePromptRemoval,
    AgentProfileResourceRemoval=AgentProfileResourceRemoval,
)
