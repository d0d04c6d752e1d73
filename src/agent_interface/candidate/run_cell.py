"""One cell of a benchmark experiment: which arm ran which task, repetition, seed and counted
attempt (``agent-candidate-execution-plan-schema.ts``).

A cell's ``digest`` is the RFC 8785 digest of the cell without it. The schema parses the
structure only, as the reference does; :meth:`AgentCandidateRunCell.seal` computes the digest
and :meth:`AgentCandidateRunCell.verify_digest` checks a received one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, Self

from agent_interface.candidate.digests import seal_top_level_digest, verify_top_level_digest
from agent_interface.core.canonical import Sha256Digest
from agent_interface.core.contract_limits import NonNegativeSafeInt, PositiveSafeInt, SafeInt
from agent_interface.core.model import WireModel
from agent_interface.core.registry import register_wire_models

__all__ = [
    "AgentCandidateBenchmarkCellRef",
    "AgentCandidateRunArm",
    "AgentCandidateRunCell",
    "AgentCandidateRunCellMaterial",
]

AgentCandidateRunArm = Literal["baseline", "candidate"]


class AgentCandidateBenchmarkCellRef(WireModel):
    """A task repetition of a signed suite, by position."""

    suite_digest: Sha256Digest
    task_index: NonNegativeSafeInt
    repetition: NonNegativeSafeInt


class AgentCandidateRunCellMaterial(WireModel):
    """The identity of one run: experiment, arm, bundle, suite, task, repetition, seed and
    the counted attempt (from 1)."""

    kind: Literal["agent-candidate-run-cell"]
    experiment_digest: Sha256Digest
    arm: AgentCandidateRunArm
    bundle_digest: Sha256Digest
    suite_digest: Sha256Digest
    task_digest: Sha256Digest
    task_index: NonNegativeSafeInt
    repetition: NonNegativeSafeInt
    seed: SafeInt
    attempt: PositiveSafeInt


class AgentCandidateRunCell(AgentCandidateRunCellMaterial):
    """A run cell with its ``digest`` (RFC 8785 digest of the material)."""

    digest: Sha256Digest

    @classmethod
    def seal(cls, material: Mapping[str, Any] | AgentCandidateRunCellMaterial) -> Self:
        """The run cell of ``material`` (wire names) with its digest."""
        return seal_top_level_digest(cls, material)

    def verify_digest(self) -> Self:
        """Return ``self`` when ``digest`` matches the material; refuse otherwise."""
        return verify_top_level_digest(self)


register_wire_models(
    AgentCandidateBenchmarkCellRef=AgentCandidateBenchmarkCellRef,
    AgentCandidateRunCell=AgentCandidateRunCell,
    AgentCandidateRunCellMaterial=AgentCandidateRunCellMaterial,
)
