"""Small constructors the data modules use to write claims and sources tersely."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agent_interface.profile.harness import (
    HarnessType,
    ReasoningEffort,
)
from agent_interface.profile_kb.types import (
    ProfileKbClaim,
    ProfileKbClaimAudience,
    ProfileKbClaimBasis,
    ProfileKbHarness,
    ProfileKbModel,
    ProfileKbSource,
    ProfileKbSurface,
    project_claims,
)


def primary_source(url: str, locator: str, checked_at: str) -> ProfileKbSource:
    """A vendor's own page, with the section that supports the claim."""
    return ProfileKbSource(url=url, locator=locator, checked_at=checked_at, authority="primary")


def claim(
    text: str,
    source: ProfileKbSource,
    basis: ProfileKbClaimBasis = "documented",
    audience: ProfileKbClaimAudience = "operator",
) -> ProfileKbClaim:
    """A claim citing one source; documented and operator-facing unless stated."""
    return ProfileKbClaim(text=text, basis=basis, audience=audience, sources=(source,))


def harness_entry(
    *, id: HarnessType, name: str, version: str, claims: Sequence[ProfileKbClaim]
) -> ProfileKbHarness:
    """A harness record whose prompt, operator and sources arrays derive from its claims."""
    prompt, operator, sources = project_claims(claims)
    return ProfileKbHarness(
        id=id,
        name=name,
        version=version,
        sources=sources,
        prompt=prompt,
        operator=operator,
        claims=tuple(claims),
    )


def model_entry(
    *,
    id: str,
    name: str,
    vendor: str,
    surfaces: Sequence[ProfileKbSurface],
    aliases: Sequence[str],
    claims: Sequence[ProfileKbClaim],
    default_effort: ReasoningEffort | None = None,
) -> ProfileKbModel:
    """A model record whose prompt, operator and sources arrays derive from its claims."""
    prompt, operator, sources = project_claims(claims)
    fields: dict[str, Any] = {
        "id": id,
        "name": name,
        "vendor": vendor,
        "surfaces": tuple(surfaces),
        "aliases": tuple(aliases),
        "sources": sources,
        "prompt": prompt,
        "operator": operator,
        "claims": tuple(claims),
    }
    if default_effort is not None:
        fields["default_effort"] = default_effort
    return ProfileKbModel(**fields)
