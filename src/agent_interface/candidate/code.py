"""The code result of an improvement run (``agent-candidate-code-schema.ts``).

Three states, deliberately distinct:

* ``{kind: "disabled"}``: code is not a surface of this candidate. The specification
  qualifies it with ``reason: "control"`` (the fixed control) or ``"not-applicable"``
  (code kept while another surface is optimized); the reference 1.6.0 has no ``reason``.
  Both forms are accepted; ``reason`` is part of the digest when present, and nothing
  here adds it on its own (a 1.6.0 reader refuses it).
* ``{kind: "no-op"}``: a code proposer ran against the exact base tree and changed nothing.
* ``{kind: "git-patch"}``: a non-empty binary Git diff from the base tree to a different
  candidate tree.

Git object ids in one record share one object format (SHA-1 or SHA-256).
"""

from __future__ import annotations

from typing import Annotated, Literal, Self

from pydantic import Field, model_validator

from agent_interface.candidate.artifacts import AgentCandidateEmbeddedArtifact
from agent_interface.candidate.common import (
    AgentCandidateGitHubRepository,
    GitObjectId,
    same_git_object_format,
)
from agent_interface.core.errors import Refinement
from agent_interface.core.model import WireModel
from agent_interface.core.registry import register_wire_models

__all__ = [
    "AgentCandidateCode",
    "AgentCandidateCodeDisabled",
    "AgentCandidateCodeDisabledReason",
    "AgentCandidateCodeNoOp",
    "AgentCandidateGitPatch",
    "AgentCandidateGitPatchContent",
]

AgentCandidateCodeDisabledReason = Literal["control", "not-applicable"]

_MIXED_FORMAT = "Git object ids in one code record must use one object format"


class AgentCandidateCodeDisabled(WireModel):
    """Code is not a surface of this candidate; ``reason`` is the specification's optional
    qualifier (absent in the reference 1.6.0 form)."""

    kind: Literal["disabled"]
    reason: AgentCandidateCodeDisabledReason | None = None


class AgentCandidateCodeNoOp(WireModel):
    """A code proposer ran against this exact tree and returned no change."""

    kind: Literal["no-op"]
    reason: Literal["proposer-no-change"]
    repository: AgentCandidateGitHubRepository
    base_commit: GitObjectId
    base_tree: GitObjectId

    @model_validator(mode="after")
    def _one_format(self) -> Self:
        refinement = Refinement("AgentCandidateCodeNoOp")
        if not same_git_object_format(self.base_commit, self.base_tree):
            refinement.add((), "git_object_format_mixed", _MIXED_FORMAT)
        refinement.check()
        return self


class AgentCandidateGitPatchContent(WireModel):
    """The patch of a ``git-patch`` candidate: a ``git diff --binary`` embedded as an artifact."""

    format: Literal["git-diff-binary"]
    artifact: AgentCandidateEmbeddedArtifact


class AgentCandidateGitPatch(WireModel):
    """An immutable Git change from ``baseTree`` to a different ``candidateTree``."""

    kind: Literal["git-patch"]
    repository: AgentCandidateGitHubRepository
    base_commit: GitObjectId
    base_tree: GitObjectId
    candidate_tree: GitObjectId
    patch: AgentCandidateGitPatchContent

    @model_validator(mode="after")
    def _real_change(self) -> Self:
        refinement = Refinement("AgentCandidateGitPatch")
        if not same_git_object_format(self.base_commit, self.base_tree, self.candidate_tree):
            refinement.add((), "git_object_format_mixed", _MIXED_FORMAT)
        if self.base_tree == self.candidate_tree:
            refinement.add(
                ("candidateTree",), "git_patch_unchanged_tree",
                "git-patch must change the tree; use code.kind='no-op'",
            )
        if self.patch.artifact.byte_length == 0:
            refinement.add(
                ("patch", "artifact", "byteLength"), "git_patch_empty",
                "git-patch must contain bytes; use code.kind='no-op'",
            )
        refinement.check()
        return self


AgentCandidateCode = Annotated[
    AgentCandidateCodeDisabled | AgentCandidateCodeNoOp | AgentCandidateGitPatch,
    Field(discriminator="kind"),
]

register_wire_models(
    AgentCandidateCodeDisabled=AgentCandidateCodeDisabled,
    AgentCandidateCodeNoOp=AgentCandidateCodeNoOp,
    AgentCandidateGitPatch=AgentCandidateGitPatch,
    AgentCandidateCode=AgentCandidateCode,
)
