"""Profile intake and identity: validated profiles, their canonical JSON and digest
(``agent-profile-canonical.ts``, ``canonicalAgentProfileDigest``, ``defineAgentProfile``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agent_interface.core.canonical import (
    canonical_digest,
    canonical_json,
    is_well_formed_unicode,
)
from agent_interface.core.errors import (
    CanonicalJsonError,
    ContractIssue,
    json_pointer,
)
from agent_interface.profile.agent_profile import AgentProfile

__all__ = [
    "canonical_agent_profile_digest",
    "canonical_agent_profile_json",
    "canonical_agent_profile_value",
    "coerce_agent_profile",
    "define_agent_profile",
    "snapshot_agent_profile",
]


# -- identity ----------------------------------------------------------------------------------


def coerce_agent_profile(value: AgentProfile | Mapping[str, Any] | str | bytes) -> AgentProfile:
    """An :class:`AgentProfile` as is, or a wire document (mapping or JSON text) validated."""
    if isinstance(value, AgentProfile):
        return value
    return AgentProfile.parse_wire(value)


def define_agent_profile(profile: AgentProfile | Mapping[str, Any] | str | bytes) -> AgentProfile:
    """Author one profile (``defineAgentProfile``): a wire document is validated, so a
    profile defined in code is refused at the definition, not at first use."""
    return coerce_agent_profile(profile)


def _find_ill_formed(value: Any, path: list[str | int]) -> list[str | int] | None:
    if isinstance(value, str):
        return None if is_well_formed_unicode(value) else path
    if isinstance(value, Mapping):
        for key, item in value.items():
            found = _find_ill_formed(item, [*path, key])
            if found is not None:
                return found
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            found = _find_ill_formed(item, [*path, index])
            if found is not None:
                return found
    return None


def canonical_agent_profile_value(
    value: AgentProfile | Mapping[str, Any] | str | bytes,
) -> dict[str, Any]:
    """The validated wire form that profile identity hashes (absent fields omitted)."""
    profile = coerce_agent_profile(value)
    dumped = profile.model_dump(mode="python", by_alias=True)
    bad = _find_ill_formed(dumped, [])
    if bad is not None:
        raise CanonicalJsonError(
            [
                ContractIssue(
                    json_pointer(bad), "ill_formed_unicode", "string contains a lone surrogate"
                )
            ],
            subject="AgentProfile",
        )
    return profile.to_wire()


def canonical_agent_profile_json(value: AgentProfile | Mapping[str, Any] | str | bytes) -> str:
    """RFC 8785 text of the validated profile (``canonicalAgentProfileJson``)."""
    return canonical_json(canonical_agent_profile_value(value))


def canonical_agent_profile_digest(value: AgentProfile | Mapping[str, Any] | str | bytes) -> str:
    """``sha256:<hex>`` of :func:`canonical_agent_profile_json` (``canonicalAgentProfileDigest``)."""
    return canonical_digest(canonical_agent_profile_value(value))


def snapshot_agent_profile(value: AgentProfile | Mapping[str, Any] | str | bytes) -> AgentProfile:
    """Validate and detach one profile at an intake boundary. The result is deeply
    immutable (frozen models, tuples, :class:`FrozenDict`) and adds no defaults."""
    if isinstance(value, AgentProfile):
        return value
    return AgentProfile.parse_wire(value)
