"""Provenance of an imported improvement input (``agent-improvement-source.ts``).

An :class:`AgentImprovementSource` names the provider object (``sourceIdentity``), the
exact source state consumed (``sourceDigest``), the provider's revision, and optionally
the licence, attribution and notices, and the ordered digest chain of the normalization
and transformation steps applied while importing it: the first input pins the fetched
bytes, adjacent steps join, and the last output is ``sourceDigest``. Every one of these
fields is part of the candidate digest.

Licences are an SPDX expression of standard ids (see :mod:`agent_interface.candidate.spdx`)
or custom terms pinned by the digest of their text. Text fields are public: credential-
looking values are refused without being repeated. Identities, revisions, references and
SPDX expressions are trimmed (JavaScript ``trim``) as the reference does; statements are
kept exactly.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Final, Literal, Self

from pydantic import AfterValidator, Field, StringConstraints, model_validator
from pydantic_core import PydanticCustomError

from agent_interface.candidate.spdx import is_spdx_expression
from agent_interface.core.canonical import Sha256Digest, is_well_formed_unicode
from agent_interface.core.contract_limits import NonNegativeSafeInt, Utf16Length, js_trim
from agent_interface.core.errors import ContractError, Refinement
from agent_interface.core.model import WireList, WireModel, wire_adapter
from agent_interface.core.registry import register_wire_models
from agent_interface.core.surrogate_text import marker_transparent
from agent_interface.profile.config import looks_like_credential

__all__ = [
    "AGENT_IMPROVEMENT_SOURCE_METADATA_KEY",
    "AgentCustomSourceLicense",
    "AgentImprovementSource",
    "AgentSourceLicense",
    "AgentSourceTransformation",
    "AgentSpdxSourceLicense",
    "agent_improvement_source_metadata",
    "read_agent_improvement_source",
]

AGENT_IMPROVEMENT_SOURCE_METADATA_KEY: Final = "agentImprovementSource"
"""Metadata key binding a measured improvement to its exact external source."""


def _public_text(label: str) -> AfterValidator:
    def check(value: str) -> str:
        if not is_well_formed_unicode(value):
            raise PydanticCustomError(
                "ill_formed_unicode", "{label} must be well-formed Unicode", {"label": label}
            )
        if looks_like_credential(value):
            raise PydanticCustomError(
                "source_credential", "{label} cannot carry credentials", {"label": label}
            )
        return value

    return AfterValidator(check)


def _trimmed_non_blank(label: str) -> AfterValidator:
    def check(value: str) -> str:
        trimmed = js_trim(value)
        if trimmed == "":
            raise PydanticCustomError("blank", "{label} cannot be blank", {"label": label})
        return trimmed

    return AfterValidator(check)


def _non_blank_statement(value: str) -> str:
    if js_trim(value) == "":
        raise PydanticCustomError("blank", "statement cannot be blank")
    return value


_SourceIdentity = Annotated[
    str, Utf16Length(max=256), _public_text("source identity"), _trimmed_non_blank("source identity")
]
_SourceRevisionText = Annotated[
    str, Utf16Length(max=256), _public_text("source revision"), _trimmed_non_blank("source revision")
]
_SourceRevision = Annotated[_SourceRevisionText | NonNegativeSafeInt, Field(union_mode="left_to_right")]
"""An opaque provider revision: text (trimmed) or a non-negative counter."""

_Statement = Annotated[
    str, Utf16Length(max=16_384), _public_text("source statement"), AfterValidator(_non_blank_statement)
]


def _unique_statements(values: tuple[str, ...]) -> tuple[str, ...]:
    if len(set(values)) != len(values):
        raise PydanticCustomError("duplicate_statement", "statements must be unique")
    return values


_Statements = Annotated[
    WireList[_Statement], Field(min_length=1, max_length=128), AfterValidator(_unique_statements)
]


@marker_transparent  # outer whitespace only (core.surrogate_text)
def _trim(value: str) -> str:
    return js_trim(value)


def _spdx(value: str) -> str:
    if not is_spdx_expression(value):
        raise PydanticCustomError(
            "spdx_expression",
            "license expression must use standard SPDX identifiers; "
            "content-pin custom terms with kind=custom",
        )
    return value


class AgentSpdxSourceLicense(WireModel):
    """Licence terms as an SPDX expression of standard ids (no ``LicenseRef-``)."""

    kind: Literal["spdx"]
    expression: Annotated[
        str, AfterValidator(_trim), Utf16Length(min=1, max=1_024), AfterValidator(_spdx)
    ]


class AgentCustomSourceLicense(WireModel):
    """Custom licence terms: where to recover them and the digest of their text."""

    kind: Literal["custom"]
    name: _SourceIdentity
    reference: Annotated[
        str,
        Utf16Length(max=2_048),
        _public_text("license reference"),
        _trimmed_non_blank("license reference"),
    ]
    """URL or repository-relative path of the exact terms."""
    terms_digest: Sha256Digest
    """Digest of the licence text itself, not of its URL or file name."""


AgentSourceLicense = Annotated[
    AgentSpdxSourceLicense | AgentCustomSourceLicense, Field(discriminator="kind")
]


class AgentSourceTransformation(WireModel):
    """One pinned content transition applied while importing a source."""

    kind: Literal["normalization", "transformation"]
    identity: _SourceIdentity
    revision: _SourceRevision
    procedure_digest: Sha256Digest
    """Pins the implementation and non-secret configuration of this step."""
    input_digest: Sha256Digest
    output_digest: Sha256Digest


class AgentImprovementSource(WireModel):
    """The exact external state an improvement candidate was made from."""

    kind: Annotated[
        str,
        AfterValidator(_trim),
        Utf16Length(min=1, max=100),
        StringConstraints(pattern=r"^[a-z][a-z0-9-]*$"),
    ]
    source_identity: _SourceIdentity
    source_digest: Sha256Digest
    source_revision: _SourceRevision
    license: AgentSourceLicense | None = None
    attribution: _Statements | None = None
    notices: _Statements | None = None
    transformations: Annotated[
        WireList[AgentSourceTransformation], Field(min_length=1, max_length=128)
    ] | None = None

    @model_validator(mode="after")
    def _chain_joins(self) -> Self:
        steps = self.transformations
        if steps is None:
            return self
        refinement = Refinement("AgentImprovementSource")
        for index in range(1, len(steps)):
            if steps[index].input_digest != steps[index - 1].output_digest:
                refinement.add(
                    ("transformations", index, "inputDigest"), "transformation_chain_broken",
                    "transformation input must equal the previous output",
                )
        if steps[-1].output_digest != self.source_digest:
            refinement.add(
                ("sourceDigest",), "source_digest_mismatch",
                "source digest must equal the final transformation output",
            )
        refinement.check()
        return self


def agent_improvement_source_metadata(
    source: AgentImprovementSource | Mapping[str, Any],
) -> dict[str, Any]:
    """``{AGENT_IMPROVEMENT_SOURCE_METADATA_KEY: <validated source>}`` for signed metadata."""
    parsed = source if isinstance(source, AgentImprovementSource) else AgentImprovementSource.parse_wire(source)
    return {AGENT_IMPROVEMENT_SOURCE_METADATA_KEY: parsed.to_wire()}


def read_agent_improvement_source(metadata: object) -> AgentImprovementSource:
    """The source reference recorded in signed improvement metadata.

    Refused (``ContractError``): metadata that is not a JSON object, a missing reference
    (``source_missing``), or an invalid one."""
    if not isinstance(metadata, Mapping) or not all(isinstance(key, str) for key in metadata):
        raise ContractError.single("", "json_object", "improvement metadata must be a JSON object")
    if AGENT_IMPROVEMENT_SOURCE_METADATA_KEY not in metadata:
        raise ContractError.single(
            f"/{AGENT_IMPROVEMENT_SOURCE_METADATA_KEY}", "source_missing",
            "signed improvement proposal is missing its source reference",
        )
    parsed: AgentImprovementSource = wire_adapter(AgentImprovementSource).parse_value(
        metadata[AGENT_IMPROVEMENT_SOURCE_METADATA_KEY]
    )
    return parsed


register_wire_models(
    AgentImprovementSource=AgentImprovementSource,
    AgentSourceLicense=AgentSourceLicense,
    AgentSourceTransformation=AgentSourceTransformation,
)
