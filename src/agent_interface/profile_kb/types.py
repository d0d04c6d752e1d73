"""Record types of the profile knowledge base: sources, claims, and dated entries.

A harness or model entry is a list of claims. Each claim says one thing, states its
basis (documented fact, vendor guidance, local observation, or hypothesis) and its
audience (the agent, or the operator who launches it), and cites at least one dated
source. The legacy ``prompt``, ``operator`` and ``sources`` arrays are projections of
the claims: agent claims become prompt lines, operator claims operator lines, and
hypotheses stay readable in ``claims`` but project nowhere.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Annotated, Any, Final, Literal, Self

from pydantic import AfterValidator, Field, ValidationError, model_validator
from pydantic_core import InitErrorDetails, PydanticCustomError

from agent_interface.core.canonical import MAX_SAFE_INTEGER
from agent_interface.core.contract_limits import (
    CONTRACT_MAX_ARRAY_LENGTH,
    CONTRACT_MAX_STRING_LENGTH,
    BoundedIdentifier,
    Utf16Length,
    js_trim,
)
from agent_interface.core.model import (
    WireList,
    WireModel,
)
from agent_interface.profile.harness import (
    HarnessType,
    ReasoningEffort,
)

__all__ = [
    "PROFILE_KB_CLAIM_AUDIENCES",
    "PROFILE_KB_CLAIM_BASES",
    "PROFILE_KB_SOURCE_AUTHORITIES",
    "PROFILE_KB_SURFACES",
    "IsoDate",
    "ProfileKbClaim",
    "ProfileKbClaimAudience",
    "ProfileKbClaimBasis",
    "ProfileKbDiscrepancy",
    "ProfileKbHarness",
    "ProfileKbLearning",
    "ProfileKbLearningEvidence",
    "ProfileKbLearningScope",
    "ProfileKbModel",
    "ProfileKbSource",
    "ProfileKbSourceAuthority",
    "ProfileKbSurface",
    "is_iso_date",
    "project_claims",
]

ProfileKbClaimBasis = Literal["documented", "vendor-guidance", "local-observation", "hypothesis"]
ProfileKbClaimAudience = Literal["agent", "operator"]
ProfileKbSourceAuthority = Literal["primary", "secondary", "local"]
ProfileKbSurface = Literal["api", "codex", "chatgpt", "router"]
"""Where a model is reached; one model id can mean different things on each surface."""

PROFILE_KB_CLAIM_BASES: Final = ("documented", "vendor-guidance", "local-observation", "hypothesis")
PROFILE_KB_CLAIM_AUDIENCES: Final = ("agent", "operator")
PROFILE_KB_SOURCE_AUTHORITIES: Final = ("primary", "secondary", "local")
PROFILE_KB_SURFACES: Final = ("api", "codex", "chatgpt", "router")

_ISO_DATE: Final = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
_MONTH_DAYS: Final = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def is_iso_date(value: str) -> bool:
    """``YYYY-MM-DD`` naming a real calendar day (zod ``z.iso.date()``)."""
    match = _ISO_DATE.fullmatch(value)
    if match is None:
        return False
    year, month, day = (int(part) for part in match.groups())
    if not 1 <= month <= 12:
        return False
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    last = 29 if month == 2 and leap else _MONTH_DAYS[month - 1]
    return 1 <= day <= last


def _check_iso_date(value: str) -> str:
    if not is_iso_date(value):
        raise PydanticCustomError("iso_date", "must be an ISO calendar date like 2026-10-04")
    return value


IsoDate = Annotated[str, AfterValidator(_check_iso_date)]
"""A calendar date ``YYYY-MM-DD``."""


def _check_outer_whitespace(value: str) -> str:
    if js_trim(value) != value:
        raise PydanticCustomError("text_whitespace", "text cannot have outer whitespace")
    return value


KbText = Annotated[
    str,
    Utf16Length(max=CONTRACT_MAX_STRING_LENGTH, min=1),
    AfterValidator(_check_outer_whitespace),
]
"""Non-empty text of at most 16,384 UTF-16 code units, without outer whitespace."""

KbTexts = Annotated[WireList[KbText], Field(max_length=CONTRACT_MAX_ARRAY_LENGTH)]


class ProfileKbSource(WireModel):
    """Where a claim comes from, and the day someone read the page or ran the command.

    ``authority`` describes the source itself (a vendor's own page is ``primary``, a
    retained local artifact ``local``), independently of the claim's basis.
    ``locator`` names the section, lines, or artifact that supports the claim.
    """

    url: KbText
    checked_at: IsoDate
    note: KbText | None = None
    authority: ProfileKbSourceAuthority | None = None
    locator: KbText | None = None


Sources = Annotated[WireList[ProfileKbSource], Field(max_length=CONTRACT_MAX_ARRAY_LENGTH)]
CitedSources = Annotated[
    WireList[ProfileKbSource], Field(min_length=1, max_length=CONTRACT_MAX_ARRAY_LENGTH)
]


class ProfileKbClaim(WireModel):
    """One short claim, its qualifications kept in its own text, with at least one source.

    Keep applicability conditions in ``text``: composition copies the text and nothing
    else, so a condition held elsewhere would be lost.
    """

    text: KbText
    basis: ProfileKbClaimBasis
    audience: ProfileKbClaimAudience
    sources: CitedSources


def project_claims(
    claims: Iterable[ProfileKbClaim],
) -> tuple[tuple[str, ...], tuple[str, ...], tuple[ProfileKbSource, ...]]:
    """``(prompt, operator, sources)`` derived from claims.

    Prompt lines are the agent claims and operator lines the operator claims, in
    order, leaving out hypotheses. Sources are every claim's sources (hypotheses
    included), first occurrence first, equal sources once.
    """
    prompt: list[str] = []
    operator: list[str] = []
    sources: list[ProfileKbSource] = []
    for claim in claims:
        for source in claim.sources:
            if source not in sources:
                sources.append(source)
        if claim.basis == "hypothesis":
            continue
        (prompt if claim.audience == "agent" else operator).append(claim.text)
    return tuple(prompt), tuple(operator), tuple(sources)


_PROJECTED: Final = ("prompt", "operator", "sources")


class _ClaimedEntry(WireModel):
    """Common base: claims are canonical; ``prompt``/``operator``/``sources`` derive from them.

    When ``claims`` is present, absent projections are filled in and present ones must
    equal the derivation. Without ``claims`` (older records) the arrays stand alone.
    """

    sources: Sources
    prompt: KbTexts
    operator: KbTexts
    claims: (
        Annotated[WireList[ProfileKbClaim], Field(max_length=CONTRACT_MAX_ARRAY_LENGTH)] | None
    ) = None

    @model_validator(mode="before")
    @classmethod
    def _derive_projections(cls, data: Any) -> Any:
        if not isinstance(data, dict) or not isinstance(data.get("claims"), (list, tuple)):
            return data
        if all(key in data for key in _PROJECTED):
            return data
        try:
            claims = [
                claim if isinstance(claim, ProfileKbClaim) else ProfileKbClaim.model_validate(claim)
                for claim in data["claims"]
            ]
        except ValueError:
            # The claims' own errors are reported by field validation; do not add
            # "missing" errors for the arrays that would have been derived from them.
            return {key: () for key in _PROJECTED} | dict(data)
        prompt, operator, sources = project_claims(claims)
        filled = dict(data)
        filled.setdefault("prompt", list(prompt))
        filled.setdefault("operator", list(operator))
        filled.setdefault("sources", list(sources))
        return filled

    @model_validator(mode="after")
    def _check_projections(self) -> Self:
        if self.claims is None:
            return self
        derived = dict(zip(_PROJECTED, project_claims(self.claims), strict=True))
        mismatched = [name for name in _PROJECTED if getattr(self, name) != derived[name]]
        if mismatched:
            raise ValidationError.from_exception_data(
                type(self).__name__,
                [
                    InitErrorDetails(
                        type=PydanticCustomError(
                            "kb_projection_mismatch",
                            "must be derived from claims: agent and operator claims that are "
                            "not hypotheses, and every cited source once",
                        ),
                        loc=(name,),
                        input=None,
                    )
                    for name in mismatched
                ],
            )
        return self


class ProfileKbHarness(_ClaimedEntry):
    """Checked launch knowledge for one harness.

    ``prompt`` lines address the agent running inside the harness and are composed
    into its profile; ``operator`` lines are for whoever launches it and never reach a
    model. ``version`` is the CLI or upstream source the claims were checked against.
    """

    id: HarnessType
    name: BoundedIdentifier
    version: BoundedIdentifier


class ProfileKbModel(_ClaimedEntry):
    """API facts, dated observations, and conditional vendor guidance for one model.

    ``id`` is the vendor's canonical id; ``aliases`` are other spellings (router ids,
    harness aliases) that resolve to it. ``default_effort`` is the documented API
    default on the portable scale (a vendor ``max`` is ``ultracode``); a harness's own
    default can differ. A source establishes its stated surface, not current
    availability or task quality.
    """

    id: BoundedIdentifier
    name: BoundedIdentifier
    vendor: BoundedIdentifier
    surfaces: Annotated[WireList[ProfileKbSurface], Field(max_length=len(PROFILE_KB_SURFACES))]
    aliases: Annotated[WireList[BoundedIdentifier], Field(max_length=CONTRACT_MAX_ARRAY_LENGTH)]
    default_effort: ReasoningEffort | None = None


class ProfileKbLearningScope(WireModel):
    """The harness and/or model a learning was measured on; at least one is named."""

    harness: HarnessType | None = None
    model: BoundedIdentifier | None = None

    @model_validator(mode="after")
    def _check_named(self) -> Self:
        if self.harness is None and self.model is None:
            raise PydanticCustomError(
                "learning_scope_empty", "a learning must name the harness or model it applies to"
            )
        return self


class ProfileKbLearningEvidence(WireModel):
    """The agent-eval check that reproduced a learning, and how often it passed."""

    check: KbText
    reproductions: Annotated[int, Field(ge=2, le=MAX_SAFE_INTEGER)]
    """Independent passing reproductions; a single run does not admit a learning."""
    source: ProfileKbSource


class ProfileKbLearning(WireModel):
    """A lesson this platform measured itself, scoped to where it was measured.

    The learning selector matches only harness and model; keep any narrower limit
    (task family, versions, settings) in ``text``. Provenance does not revalidate a
    run or authorize an experiment.
    """

    id: BoundedIdentifier
    applies_to: ProfileKbLearningScope
    text: KbText
    evidence: ProfileKbLearningEvidence


class ProfileKbDiscrepancy(WireModel):
    """A dated naming or availability check where a request and the sources disagree."""

    subject: KbText
    requested: KbText
    observed: KbText
    sources: CitedSources
