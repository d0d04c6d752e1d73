"""Build the experiment document that pre-registers a baseline-versus-candidate comparison.

:class:`ExperimentBuilder` freezes the two bundles, the candidate's lineage, the held-out
suite with its tasks and the evaluation policy, and returns the sealed
:class:`~agent_interface.candidate.experiment.AgentCandidateExperiment`; the contract's
own rules (a generated candidate names the baseline as a parent, development and held-out
splits are disjoint, critical dimensions sorted) refuse with their JSON Pointers::

    experiment = (
        ExperimentBuilder(baseline, candidate)
        .lineage("human", parents=[baseline.digest])
        .suite(suite, tasks)
        .policy(min_productive_runs=3)
        .build()
    )

Running an experiment and reporting it is not this module's concern.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from typing import Any, Self

from agent_interface.candidate.bundle import AgentCandidateBundle
from agent_interface.candidate.experiment import AgentCandidateExperiment
from agent_interface.candidate.tasks import (
    AgentCandidateBenchmarkSuite,
    AgentCandidateBenchmarkTask,
)
from agent_interface.core.errors import ContractError

__all__ = ["DEFAULT_POLICY", "ExperimentBuilder"]

DEFAULT_POLICY: dict[str, Any] = {
    "confidenceLevel": 0.95, "resamples": 1000, "bootstrapSeed": 0, "deltaThreshold": 0.0,
    "minProductiveRuns": 3, "criticalDimensions": [], "regressionTolerance": 0.0,
}
"""The evaluation policy an experiment gets unless :meth:`ExperimentBuilder.policy` changes it."""


class ExperimentBuilder:
    """Baseline and candidate on one held-out suite under one policy; ``build()`` seals it."""

    def __init__(self, baseline: AgentCandidateBundle, candidate: AgentCandidateBundle) -> None:
        self._baseline, self._candidate = baseline, candidate
        self._lineage: dict[str, Any] = {"source": "human", "parentDigests": [baseline.digest]}
        self._suite: AgentCandidateBenchmarkSuite | None = None
        self._tasks: list[AgentCandidateBenchmarkTask] = []
        self._policy: dict[str, Any] = copy.deepcopy(DEFAULT_POLICY)

    def lineage(self, source: str, *, parents: Iterable[str] = (), **fields: Any) -> Self:
        """Where the candidate came from (``human``, ``optimizer``, ``import``, ``compound``),
        its parent bundle digests and other lineage fields by wire name."""
        self._lineage = {"source": source, **({"parentDigests": list(parents)} if parents else {}),
                         **copy.deepcopy(fields)}
        return self

    def suite(self, suite: AgentCandidateBenchmarkSuite, tasks: Sequence[AgentCandidateBenchmarkTask]) -> Self:
        """The held-out suite and its task documents, in the suite's order."""
        self._suite, self._tasks = suite, list(tasks)
        return self

    def policy(self, **fields: Any) -> Self:
        """Change the evaluation policy by Python or wire name (``min_productive_runs=5``,
        ``criticalDimensions=[...]``)."""
        for name, value in fields.items():
            wire = name if "_" not in name else name.split("_")[0] + "".join(p.title() for p in name.split("_")[1:])
            self._policy[wire] = copy.deepcopy(value)
        return self

    def build(self) -> AgentCandidateExperiment:
        """The sealed experiment; refused (``/benchmark``) without a suite."""
        if self._suite is None:
            raise ContractError.single("/benchmark", "suite_required", "declare the held-out suite: suite(...)",
                                       subject="experiment builder")
        return AgentCandidateExperiment.seal({
            "kind": "agent-candidate-experiment", "digestAlgorithm": "rfc8785-sha256",
            "baseline": self._baseline.to_wire(), "candidate": self._candidate.to_wire(),
            "candidateLineage": self._lineage,
            "benchmark": {"suite": self._suite.to_wire(), "tasks": [task.to_wire() for task in self._tasks]},
            "policy": self._policy,
        })
