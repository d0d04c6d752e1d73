"""Seat chains: continuing one logical agent across subscriptions (``AgentProfile.seats``).

A profile may carry an ordered chain of stages; each stage pins a harness, a provider, a
model and an account selector (``{"kind": "all-eligible"}`` lets the account manager try
every eligible seat in its own order; ``{"kind": "seat", "accountId": ...}`` names one
account). The chain's own rules are checked when the profile is parsed:

* the first stage equals the profile's top-level ``harness``, ``model.provider`` and
  ``model.default`` (code ``seat_first_stage_mismatch``), so the initial run cannot silently
  change its authored model;
* the profile's reasoning effort and system-prompt intents are supported by every stage's
  harness (``seat_reasoning_effort_unsupported``, ``seat_system_prompt_replace_unsupported``,
  ``seat_system_prompt_append_unsupported``);
* a ``tools`` / ``permissions`` map named on the first stage equals the top-level map
  (``seat_first_stage_map_mismatch``).

For each segment an executor keeps the authored profile for identity and sends the provider
:func:`project_profile_for_stage`: the profile without ``seats``, with its harness and model
set to the stage, and with a later stage's maps replacing the profile's (``{}`` removes the
map; an omitted map inherits it). :func:`check_stage_support` refuses a stage whose native
harness cannot honor the projection. An omitted ``seats`` keeps the single-provider policy
and the profile's digest unchanged. A declared grant map does not prove which built-in
tools the harness actually exposes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agent_interface.core.errors import (
    ContractError,
    ContractIssue,
)
from agent_interface.profile.agent_profile import (
    AgentProfile,
    AgentProfileSeatAccountSelector,
    AgentProfileSeatAllEligible,
    AgentProfileSeatNamedAccount,
    AgentProfileSeatStage,
    seat_chain_issues,
)
from agent_interface.profile.canonical import coerce_agent_profile
from agent_interface.profile.capabilities import (
    AgentProfileCapabilities,
    check_profile_support,
)

__all__ = [
    "AgentProfileSeatAccountSelector",
    "AgentProfileSeatAllEligible",
    "AgentProfileSeatNamedAccount",
    "AgentProfileSeatStage",
    "check_stage_support",
    "project_profile_for_stage",
    "require_stage",
    "seat_chain_issues",
    "stage_count",
]


def stage_count(profile: AgentProfile) -> int:
    """Number of stages; 0 when the profile keeps the single-provider policy."""
    return len(profile.seats) if profile.seats else 0


def project_profile_for_stage(
    profile: AgentProfile | Mapping[str, Any] | str | bytes, index: int
) -> AgentProfile:
    """The provider-facing profile for stage ``index``: no ``seats``; ``harness``,
    ``model.provider`` and ``model.default`` set to the stage; other model hints kept;
    a stage's ``tools`` / ``permissions`` map replaces the profile's (``{}`` removes it).

    The authored profile keeps its own digest; the projection has its own. Refuses with
    ``seats_absent`` when the profile has no chain and ``seat_stage_out_of_range`` for an
    index outside it.
    """
    authored = coerce_agent_profile(profile)
    seats = authored.seats
    if not seats:
        raise ContractError.single(
            "/seats",
            "seats_absent",
            "the profile has no seat chain to project",
            subject="AgentProfile",
        )
    if not 0 <= index < len(seats):
        raise ContractError.single(
            "/seats",
            "seat_stage_out_of_range",
            f"stage index {index} is outside the chain of {len(seats)} stages",
            subject="AgentProfile",
        )
    stage = seats[index]
    wire = authored.to_wire()
    wire.pop("seats")
    wire["harness"] = stage.harness
    model = dict(wire.get("model", {}))
    model["provider"] = stage.provider
    model["default"] = stage.model
    wire["model"] = model
    for field in ("tools", "permissions"):
        replacement = getattr(stage, field)
        if index == 0 or replacement is None:
            continue
        if replacement:
            wire[field] = stage.to_wire()[field]
        else:
            wire.pop(field, None)
    return AgentProfile.parse_wire(wire)


def require_stage(
    profile: AgentProfile | Mapping[str, Any] | str | bytes,
    *,
    harness: str,
    provider: str,
    model: str,
) -> int:
    """Index of the first authored stage running ``model`` from ``provider`` on ``harness``.
    A continuation, cross-provider or not, needs such an explicit stage: without one this
    refuses with ``seat_stage_not_declared`` (``seats_absent`` when there is no chain)."""
    authored = coerce_agent_profile(profile)
    if not authored.seats:
        raise ContractError.single(
            "/seats",
            "seats_absent",
            "the profile has no seat chain; it keeps the single-provider policy",
            subject="AgentProfile",
        )
    for index, stage in enumerate(authored.seats):
        if (stage.harness, stage.provider, stage.model) == (harness, provider, model):
            return index
    raise ContractError.single(
        "/seats",
        "seat_stage_not_declared",
        "no authored stage runs that harness, provider and model",
        subject="AgentProfile",
    )


def check_stage_support(
    profile: AgentProfile | Mapping[str, Any] | str | bytes,
    index: int,
    capabilities: AgentProfileCapabilities | Mapping[str, Any],
) -> list[ContractIssue]:
    """Every reason the provider serving stage ``index`` cannot honor its projection
    (empty when it can). Paths point into the projected profile."""
    return check_profile_support(project_profile_for_stage(profile, index), capabilities)
