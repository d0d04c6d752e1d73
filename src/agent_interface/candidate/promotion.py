"""Proposing, reviewing and activating a measured improvement (``agent-candidate-promotion-schema.ts``).

* :class:`AgentImprovementProposal` carries a passing, sufficiently powered measured
  comparison (of candidate bundles or of profile states) and names the surfaces it changes;
  for a profile change those must be exactly the surfaces the measured change alters.
* :class:`AgentImprovementReview` is a reviewer's decision on one proposal digest.
* :class:`AgentImprovementActivation` authorizes applying (or restoring) the measured state on
  named targets, each with the base digest it expects, until an expiry; an ``agent-profile``
  target also names the runner that measured it.
* :class:`AgentImprovementActivationResult` records what an activation attempt did.

The review and activation records are defined in :mod:`agent_interface.candidate.activation`
(light on purpose) and are public here too.
"""

from __future__ import annotations

from typing import Annotated, Literal, Self

from pydantic import AfterValidator, Field, model_validator
from pydantic_core import PydanticCustomError

from agent_interface.candidate.activation import (  # public here too
    AgentImprovementActivation,
    AgentImprovementActivationIntent,
    AgentImprovementActivationOutcome,
    AgentImprovementActivationResult,
    AgentImprovementActivationTarget,
    AgentImprovementActivationTargetState,
    AgentImprovementActivationTargetTransition,
    AgentImprovementReview,
    AgentImprovementReviewDecision,
)
from agent_interface.candidate.experiment import AgentImprovementMeasuredComparison
from agent_interface.candidate.improvement_comparison import (
    AgentProfileImprovementMeasuredComparison,
)
from agent_interface.candidate.measurement import CanonicalJsonObject
from agent_interface.candidate.sealed import SealedRecord, refine_canonical
from agent_interface.candidate.surfaces import (
    AgentImprovementSurface,
    changed_profile_improvement_surfaces,
)
from agent_interface.core.canonical import Sha256Digest
from agent_interface.core.contract_limits import IsoDatetime, Utf16Length
from agent_interface.core.errors import Refinement
from agent_interface.core.model import WireList
from agent_interface.core.registry import register_wire_models

__all__ = [
    "AgentImprovementActivation",
    "AgentImprovementActivationIntent",
    "AgentImprovementActivationOutcome",
    "AgentImprovementActivationResult",
    "AgentImprovementActivationTarget",
    "AgentImprovementActivationTargetState",
    "AgentImprovementActivationTargetTransition",
    "AgentImprovementEvaluation",
    "AgentImprovementProposal",
    "AgentImprovementReview",
    "AgentImprovementReviewDecision",
]

AgentImprovementEvaluation = Annotated[
    AgentImprovementMeasuredComparison | AgentProfileImprovementMeasuredComparison,
    Field(discriminator="kind"),
]
"""A measured comparison of candidate bundles or of profile states."""


def _unique_surfaces(surfaces: tuple[str, ...]) -> tuple[str, ...]:
    if len(set(surfaces)) != len(surfaces):
        raise PydanticCustomError("surfaces_duplicate", "changed surfaces must be unique")
    return surfaces


class AgentImprovementProposal(SealedRecord):
    """A measured winner put forward for review."""

    kind: Literal["agent-improvement-proposal"]
    run_id: Annotated[str, Utf16Length(min=1, max=200)]
    changed_surfaces: Annotated[
        WireList[AgentImprovementSurface], Field(min_length=1), AfterValidator(_unique_surfaces)
    ]
    proposed_at: IsoDatetime
    findings: WireList[CanonicalJsonObject]
    evaluation: AgentImprovementEvaluation
    digest: Sha256Digest

    @model_validator(mode="after")
    def _passing(self) -> Self:
        issues = Refinement("AgentImprovementProposal")
        evaluation = self.evaluation
        if evaluation.decision.outcome != "ship":
            issues.add(
                ("evaluation", "decision", "outcome"),
                "proposal_not_shippable",
                "an improvement proposal requires a passing measured comparison",
            )
        if (
            not evaluation.power.sufficient
            or evaluation.overall.n < evaluation.experiment.policy.min_productive_runs
        ):
            issues.add(
                ("evaluation", "power"),
                "proposal_underpowered",
                "an improvement proposal requires sufficient pre-registered power",
            )
        if isinstance(evaluation, AgentImprovementMeasuredComparison):
            if evaluation.experiment.baseline.digest == evaluation.experiment.candidate.digest:
                issues.add(
                    ("evaluation", "experiment", "candidate", "digest"),
                    "proposal_unchanged",
                    "an improvement proposal requires a changed candidate bundle",
                )
        else:
            changed = changed_profile_improvement_surfaces(evaluation.experiment.change)
            claimed = self.changed_surfaces
            if len(claimed) != len(changed) or any(surface not in changed for surface in claimed):
                issues.add(
                    ("changedSurfaces",),
                    "proposal_surfaces",
                    "proposal changed surfaces must equal the measured profile changes",
                )
        refine_canonical(self, issues, "proposal")
        issues.check()
        return self


register_wire_models(AgentImprovementProposal=AgentImprovementProposal)
