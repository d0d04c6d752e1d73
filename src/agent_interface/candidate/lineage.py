"""Knowledge, memory and ancestry of a candidate (``agent-candidate-lineage-schema.ts``).

* Knowledge is an exact frozen knowledge candidate admitted through an approved review:
  its run, goal, base, candidate, evidence and promotion-plan hashes, the snapshot of the
  corpus, and the evaluation (and optional retrieval configuration) bytes.
* Memory is disabled, or isolated to one task and freshly created by the evaluator,
  optionally seeded from stored bytes.
* Lineage says where a candidate came from. Generated candidates (``optimizer``,
  ``compound``) name their parents, producing runs and development split; a compound
  names at least two parents. Listed ids are unique.
"""

from __future__ import annotations

from typing import Annotated, Literal, Self

from pydantic import Field, model_validator

from agent_interface.candidate.artifacts import (
    AgentCandidateArtifactRef,
    AgentCandidateCapturedArtifact,
    AgentCandidateWorkspaceSnapshotEvidence,
)
from agent_interface.candidate.common import duplicate_value_issues
from agent_interface.core.canonical import Sha256Digest
from agent_interface.core.contract_limits import Utf16Length
from agent_interface.core.errors import Refinement
from agent_interface.core.model import WireList, WireModel
from agent_interface.core.registry import register_wire_models

__all__ = [
    "AgentCandidateKnowledge",
    "AgentCandidateKnowledgeRef",
    "AgentCandidateLineage",
    "AgentCandidateLineageSource",
    "AgentCandidateMemoryPolicy",
    "AgentCandidateMemoryPolicyDisabled",
    "AgentCandidateMemoryPolicyIsolated",
]

_NonEmpty = Annotated[str, Utf16Length(min=1)]


class AgentCandidateKnowledgeRef(WireModel):
    """An exact frozen knowledge candidate admitted through an approved review."""

    kind: Literal["knowledge-improvement-candidate"]
    run_id: _NonEmpty
    candidate_id: _NonEmpty
    goal_hash: Sha256Digest
    base_hash: Sha256Digest
    candidate_hash: Sha256Digest
    evidence_hash: Sha256Digest
    promotion_plan_hash: Sha256Digest


class AgentCandidateKnowledge(WireModel):
    """A knowledge candidate: the knowledge it proposes, the snapshot it was taken from, its
    optional retrieval configuration and its evaluation."""

    candidate: AgentCandidateKnowledgeRef
    snapshot: AgentCandidateWorkspaceSnapshotEvidence
    retrieval_config: AgentCandidateCapturedArtifact | None = None
    evaluation: AgentCandidateCapturedArtifact


class AgentCandidateMemoryPolicyDisabled(WireModel):
    """The candidate uses no memory between or within tasks."""

    mode: Literal["disabled"]


class AgentCandidateMemoryPolicyIsolated(WireModel):
    """Fresh evaluator-scoped memory for exactly one task."""

    mode: Literal["isolated"]
    scope: Literal["task"]
    seed: AgentCandidateArtifactRef | None = None


AgentCandidateMemoryPolicy = Annotated[
    AgentCandidateMemoryPolicyDisabled | AgentCandidateMemoryPolicyIsolated, Field(discriminator="mode")
]

AgentCandidateLineageSource = Literal["optimizer", "human", "import", "compound"]


class AgentCandidateLineage(WireModel):
    """The evidence and ancestry that produced a candidate."""

    source: AgentCandidateLineageSource
    parent_digests: WireList[Sha256Digest] | None = None
    run_ids: WireList[_NonEmpty] | None = None
    profile_diff_ids: WireList[_NonEmpty] | None = None
    model_snapshots: WireList[_NonEmpty] | None = None
    development_split_digest: Sha256Digest | None = None
    """The exact development split a generated candidate was produced on."""

    @model_validator(mode="after")
    def _ancestry(self) -> Self:
        refinement = Refinement("AgentCandidateLineage")
        duplicate_value_issues(refinement, self.parent_digests, ("parentDigests",))
        duplicate_value_issues(refinement, self.run_ids, ("runIds",))
        duplicate_value_issues(refinement, self.profile_diff_ids, ("profileDiffIds",))
        duplicate_value_issues(refinement, self.model_snapshots, ("modelSnapshots",))
        parents = len(self.parent_digests or ())
        if self.source == "compound" and parents < 2:
            refinement.add(
                ("parentDigests",), "compound_parents",
                "compound candidates must name at least two distinct parents",
            )
        if self.source in ("optimizer", "compound"):
            if parents == 0:
                refinement.add(
                    ("parentDigests",), "generated_parent_missing",
                    "generated candidates must name at least one parent",
                )
            if not self.run_ids:
                refinement.add(
                    ("runIds",), "generated_run_missing",
                    "generated candidates must name their producing run",
                )
            if self.development_split_digest is None:
                refinement.add(
                    ("developmentSplitDigest",), "generated_split_missing",
                    "generated candidates must pin their development split",
                )
        refinement.check()
        return self


register_wire_models(
    AgentCandidateKnowledge=AgentCandidateKnowledge,
    AgentCandidateMemoryPolicy=AgentCandidateMemoryPolicy,
    AgentCandidateLineage=AgentCandidateLineage,
)
