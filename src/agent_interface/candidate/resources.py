"""Frozen profile resources inside a candidate (``agent-candidate-artifact-schema.ts``).

A candidate resource is content-addressed: inline text with its UTF-8 SHA-256 and length,
or a file of a GitHub repository pinned to a full commit plus the expected content
digest. Either may carry its :class:`~agent_interface.candidate.source.AgentImprovementSource`,
whose ``sourceDigest`` must equal the resource digest. Unlike a mutable profile resource,
nothing here resolves a branch or an ambient repository, and resource loading always
fails on error (``failOnError: true``).
"""

from __future__ import annotations

import hashlib
from typing import Annotated, Literal, Self

from pydantic import Field, model_validator

from agent_interface.candidate.common import (
    AgentCandidateGitHubRepository,
    GitObjectId,
    WellFormedText,
    relative_path,
)
from agent_interface.candidate.source import AgentImprovementSource
from agent_interface.core.canonical import Sha256Digest
from agent_interface.core.contract_limits import NonNegativeSafeInt, Utf16Length
from agent_interface.core.errors import ContractError, Refinement
from agent_interface.core.model import WireList, WireModel
from agent_interface.core.registry import register_wire_models
from agent_interface.profile.scalars import TrueOnly

__all__ = [
    "AgentCandidateFileMount",
    "AgentCandidateGitHubResource",
    "AgentCandidateInlineResource",
    "AgentCandidateResourceRef",
    "AgentCandidateResources",
    "define_candidate_github_resource",
    "define_candidate_inline_resource",
]

_Name = Annotated[WellFormedText, Utf16Length(min=1)]


def _source_matches(refinement: Refinement, source: AgentImprovementSource | None, sha256: str) -> None:
    if source is not None and source.source_digest != sha256:
        refinement.add(
            ("source", "sourceDigest"), "source_digest_mismatch",
            "resource source digest must equal the frozen resource digest",
        )


class AgentCandidateInlineResource(WireModel):
    """Text embedded in the bundle; ``byteLength`` is its UTF-8 length."""

    kind: Literal["inline"]
    name: _Name
    content: WellFormedText
    sha256: Sha256Digest
    byte_length: NonNegativeSafeInt
    source: AgentImprovementSource | None = None
    """Immutable origin, licence obligations and import history."""

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        refinement = Refinement("AgentCandidateInlineResource")
        if len(self.content.encode("utf-8")) != self.byte_length:
            refinement.add(
                ("byteLength",), "byte_length_mismatch", "byteLength must match UTF-8 content"
            )
        _source_matches(refinement, self.source, self.sha256)
        refinement.check()
        return self


class AgentCandidateGitHubResource(WireModel):
    """A repository file pinned to a full commit id and its expected content digest."""

    kind: Literal["github"]
    repository: AgentCandidateGitHubRepository
    path: Annotated[
        str,
        relative_path(
            allow_dot=False,
            code="unsafe_resource_path",
            message="path must be a canonical repository-relative path",
        ),
    ]
    commit: GitObjectId
    name: _Name | None = None
    sha256: Sha256Digest
    byte_length: NonNegativeSafeInt
    source: AgentImprovementSource | None = None
    """Immutable origin, licence obligations and import history."""

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        refinement = Refinement("AgentCandidateGitHubResource")
        _source_matches(refinement, self.source, self.sha256)
        refinement.check()
        return self


AgentCandidateResourceRef = Annotated[
    AgentCandidateInlineResource | AgentCandidateGitHubResource, Field(discriminator="kind")
]


class AgentCandidateFileMount(WireModel):
    """A resource mounted as a file in the candidate's workspace, at a canonical relative path,
    optionally executable."""

    path: Annotated[
        str,
        relative_path(
            allow_dot=False,
            code="unsafe_mount_path",
            message="mount path must be a canonical workspace-relative path",
        ),
    ]
    resource: AgentCandidateResourceRef
    executable: bool | None = None


class AgentCandidateResources(WireModel):
    """Content-addressed resources of a candidate profile; loading fails on any error."""

    files: WireList[AgentCandidateFileMount] | None = None
    tools: WireList[AgentCandidateResourceRef] | None = None
    skills: WireList[AgentCandidateResourceRef] | None = None
    agents: WireList[AgentCandidateResourceRef] | None = None
    commands: WireList[AgentCandidateResourceRef] | None = None
    instructions: Annotated[
        WellFormedText | AgentCandidateResourceRef, Field(union_mode="left_to_right")
    ] | None = None
    fail_on_error: TrueOnly


def define_candidate_inline_resource(
    name: str, content: str, *, source: AgentImprovementSource | None = None
) -> AgentCandidateInlineResource:
    """An inline resource whose digest and length are computed from ``content``."""
    data = content.encode("utf-8", "replace")
    return AgentCandidateInlineResource(
        kind="inline",
        name=name,
        content=content,
        sha256="sha256:" + hashlib.sha256(data).hexdigest(),
        byte_length=len(data),
        source=source,
    )


def define_candidate_github_resource(
    repository: str | AgentCandidateGitHubRepository,
    path: str,
    *,
    commit: str,
    content: bytes | None = None,
    sha256: str | None = None,
    byte_length: int | None = None,
    name: str | None = None,
    source: AgentImprovementSource | None = None,
) -> AgentCandidateGitHubResource:
    """A GitHub resource pinned to ``commit``. ``repository`` is ``"owner/repo"`` or a
    repository model. Give the file's ``content`` (its digest and length are computed),
    or both ``sha256`` and ``byte_length``."""
    if isinstance(repository, str):
        owner, slash, repo = repository.partition("/")
        if not slash:
            raise ContractError.single("/repository", "github_repository", "repository must be owner/repo")
        repository = AgentCandidateGitHubRepository(kind="github", owner=owner, repo=repo)
    if content is not None:
        sha256 = "sha256:" + hashlib.sha256(content).hexdigest()
        byte_length = len(content)
    if sha256 is None or byte_length is None:
        raise ContractError.single(
            "", "resource_pin_missing", "give content, or both sha256 and byte_length"
        )
    return AgentCandidateGitHubResource(
        kind="github",
        repository=repository,
        path=path,
        commit=commit,
        name=name,
        sha256=sha256,
        byte_length=byte_length,
        source=source,
    )


register_wire_models(
    AgentCandidateInlineResource=AgentCandidateInlineResource,
    AgentCandidateGitHubResource=AgentCandidateGitHubResource,
    AgentCandidateResourceRef=AgentCandidateResourceRef,
    AgentCandidateFileMount=AgentCandidateFileMount,
    AgentCandidateResources=AgentCandidateResources,
)
