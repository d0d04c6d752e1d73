"""Who runs and who grades a task: the resolved model (``agentCandidateResolvedModelSchema``)
and the pinned grader (``agentCandidateBenchmarkGraderIdentitySchema``).

A module of its own: outcomes, settlements and receipts name these without importing the
task's container and launch terms (:mod:`agent_interface.candidate.task_terms`, where
both names are public too).
"""

from __future__ import annotations

from typing import Literal, Self

from pydantic import model_validator

from agent_interface.candidate.artifacts import AgentCandidateArtifactRef
from agent_interface.core.errors import Refinement
from agent_interface.core.model import WireModel
from agent_interface.core.registry import register_wire_models
from agent_interface.profile.harness import ReasoningEffort
from agent_interface.profile.scalars import NonEmptyString

__all__ = ["AgentCandidateBenchmarkGraderIdentity", "AgentCandidateResolvedModel"]


class AgentCandidateResolvedModel(WireModel):
    """The one model a run uses: the requested literal and what the evaluator resolved it to."""

    requested: NonEmptyString
    provider: NonEmptyString
    model: NonEmptyString
    snapshot: NonEmptyString
    reasoning_effort: ReasoningEffort


class AgentCandidateBenchmarkGraderIdentity(WireModel):
    """The pinned grader: name, version and its non-empty artifact."""

    name: NonEmptyString
    version: NonEmptyString
    format: Literal["tangle-grader"]
    artifact: AgentCandidateArtifactRef

    @model_validator(mode="after")
    def _has_bytes(self) -> Self:
        if self.artifact.byte_length == 0:
            issues = Refinement("AgentCandidateBenchmarkGraderIdentity")
            issues.add(
                ("artifact", "byteLength"),
                "empty_grader_artifact",
                "pinned grader artifact must contain executable grader bytes",
            )
            issues.check()
        return self


register_wire_models(
    AgentCandidateBenchmarkGraderIdentity=AgentCandidateBenchmarkGraderIdentity,
    AgentCandidateResolvedModel=AgentCandidateResolvedModel,
)
