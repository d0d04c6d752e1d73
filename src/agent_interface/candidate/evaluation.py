"""The evaluation policy frozen before either arm of an experiment runs.

``AgentCandidateEvaluationPolicy`` (defined in ``agent-improvement-measurement-schema.ts``)
fixes how a paired comparison is judged: the confidence level and bootstrap resamples
every reported interval must use, the seed, the promotion threshold, the minimum number
of productive runs, an optional budget, and the critical dimensions (sorted, unique) whose
regression beyond the tolerance blocks promotion.
"""

from __future__ import annotations

from itertools import pairwise
from typing import Annotated

from pydantic import Field, model_validator

from agent_interface.candidate.numbers import NonNegativeNumber, OpenUnitInterval
from agent_interface.core.canonical import utf16_sort_key
from agent_interface.core.contract_limits import SafeInt, Utf16Length
from agent_interface.core.errors import Refinement
from agent_interface.core.model import WireList, WireModel
from agent_interface.core.registry import register_wire_models

__all__ = ["AgentCandidateEvaluationPolicy"]


class AgentCandidateEvaluationPolicy(WireModel):
    """Pre-registered statistics and promotion rules for one experiment."""

    confidence_level: OpenUnitInterval
    resamples: Annotated[SafeInt, Field(ge=100)]
    bootstrap_seed: SafeInt
    delta_threshold: NonNegativeNumber
    min_productive_runs: Annotated[SafeInt, Field(ge=3)]
    budget_usd: NonNegativeNumber | None = None
    critical_dimensions: WireList[Annotated[str, Utf16Length(min=1)]]
    regression_tolerance: NonNegativeNumber

    @model_validator(mode="after")
    def _sorted_unique_dimensions(self) -> AgentCandidateEvaluationPolicy:
        keys = [utf16_sort_key(name) for name in self.critical_dimensions]
        if any(previous >= current for previous, current in pairwise(keys)):
            issues = Refinement("AgentCandidateEvaluationPolicy")
            issues.add(
                ("criticalDimensions",),
                "critical_dimensions_order",
                "critical dimensions must be sorted and unique",
            )
            issues.check()
        return self


register_wire_models(AgentCandidateEvaluationPolicy=AgentCandidateEvaluationPolicy)
