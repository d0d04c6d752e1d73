"""Evidence that captured bytes are the canonical form of a material
(``agent-candidate-evidence-schema.ts``).

An evidence record is ``{kind, digest, material, artifact}``: the artifact's SHA-256 must
equal ``digest`` (the canonical digest of the material) and the artifact must carry bytes.
Subclass :class:`AgentCandidateEvidence` with a ``kind`` literal, a ``material`` type and an
``evidence_label`` naming the record in refusals; or call :func:`check_evidence_artifact`
from a model's own validator.
"""

from __future__ import annotations

from typing import ClassVar, Self

from pydantic import model_validator

from agent_interface.candidate.artifacts import (
    AgentCandidateArtifactRef,
    AgentCandidateCapturedArtifact,
    AgentCandidateEmbeddedArtifact,
)
from agent_interface.core.canonical import Sha256Digest
from agent_interface.core.errors import Refinement
from agent_interface.core.model import WireModel

__all__ = ["AgentCandidateEvidence", "check_evidence_artifact"]


def check_evidence_artifact(
    title: str,
    label: str,
    digest: str,
    artifact: AgentCandidateArtifactRef | AgentCandidateEmbeddedArtifact,
) -> None:
    """Refuse an evidence record whose artifact is not its material's non-empty bytes.

    Call from ``model_validator(mode="after")``; ``label`` names the record in messages
    (``"execution plan"``)."""
    refinement = Refinement(title)
    if artifact.sha256 != digest:
        refinement.add(
            ("artifact", "sha256"), "evidence_digest_mismatch",
            "{label} artifact hash must equal its canonical material digest", {"label": label},
        )
    if artifact.byte_length == 0:
        refinement.add(
            ("artifact", "byteLength"), "evidence_artifact_empty",
            "{label} artifact must contain canonical material bytes", {"label": label},
        )
    refinement.check()


class AgentCandidateEvidence(WireModel):
    """Base of ``{kind, digest, material, artifact}`` records (``agentCandidateEvidenceSchema``).

    A subclass declares ``kind: Literal[...]`` and ``material: <material model>`` and sets
    ``evidence_label``."""

    evidence_label: ClassVar[str] = "evidence"

    digest: Sha256Digest
    artifact: AgentCandidateCapturedArtifact

    @model_validator(mode="after")
    def _artifact_is_material(self) -> Self:
        check_evidence_artifact(type(self).__name__, self.evidence_label, self.digest, self.artifact)
        return self
