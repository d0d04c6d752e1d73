"""A paired comparison of two profile states from ordinary profile executions
(``agentProfileImprovementMeasuredComparisonSchema``).

Every signed cell of the suite is present, task-major then repetition, and each receipt
binds the experiment, its arm and state, the runner, the first attempt of its task,
repetition and seed, the task's grader, model and limits, and the dimensions every other
receipt reports. No execution, run cell, receipt, run record or billing record is used
twice, and a shippable comparison holds no failed execution. The summary must equal what
the receipts report (see :mod:`agent_interface.candidate.measurement`).
"""

from __future__ import annotations

from typing import Literal, Self

from pydantic import model_validator

from agent_interface.candidate.improvement import (
    AgentProfileImprovementExperiment,
    AgentProfileImprovementRunReceipt,
    profile_improvement_evidence_key,
)
from agent_interface.candidate.measurement import (
    MeasuredComparisonIdentity,
    MeasuredComparisonSummary,
    MeasuredValues,
    create_measured_comparison_identity_registry,
    refine_measured_comparison_summary,
)
from agent_interface.candidate.sealed import refine_canonical
from agent_interface.core.errors import Refinement
from agent_interface.core.model import WireList, WireModel
from agent_interface.core.registry import register_wire_models

__all__ = [
    "AgentProfileImprovementMeasuredComparison",
    "AgentProfileImprovementMeasurement",
    "profile_improvement_execution_cost_usd",
    "profile_improvement_execution_latency_ms",
]

Receipt = AgentProfileImprovementRunReceipt


class AgentProfileImprovementMeasurement(WireModel):
    """One paired result from the exact same task, seed and evaluator."""

    baseline: AgentProfileImprovementRunReceipt
    candidate: AgentProfileImprovementRunReceipt


def profile_improvement_execution_cost_usd(receipt: Receipt) -> float:
    """Agent plus grader spend of one execution, in dollars."""
    return (receipt.usage.cost_usd_nanos + receipt.grading.usage.cost_usd_nanos) / 1_000_000_000


def profile_improvement_execution_latency_ms(receipt: Receipt) -> float:
    """Agent plus grader duration of one execution."""
    return receipt.timing.duration_ms + receipt.grading.timing.duration_ms


def _cost_provenance(receipt: Receipt) -> str:
    observed = (
        receipt.usage.cost_provenance == "observed"
        and receipt.grading.usage.cost_provenance == "observed"
    )
    return "observed" if observed else "estimated"


def _dimension(receipt: Receipt, name: str) -> float | None:
    return next((d.score for d in receipt.grading.dimensions if d.name == name), None)


_VALUES: MeasuredValues[Receipt] = MeasuredValues(
    score=lambda receipt: receipt.grading.score,
    dimension=_dimension,
    cost=profile_improvement_execution_cost_usd,
    cost_provenance=_cost_provenance,
    latency=profile_improvement_execution_latency_ms,
)


class AgentProfileImprovementMeasuredComparison(MeasuredComparisonSummary):
    """Portable paired comparison of a profile experiment."""

    kind: Literal["agent-profile-improvement-measured-comparison"]
    experiment: AgentProfileImprovementExperiment
    measurements: WireList[AgentProfileImprovementMeasurement]

    @model_validator(mode="after")
    def _complete_and_bound(self) -> Self:
        issues = Refinement("AgentProfileImprovementMeasuredComparison")
        experiment = self.experiment
        suite, tasks = experiment.benchmark.suite, experiment.benchmark.tasks
        expected_n = len(tasks) * suite.reps
        if (
            self.provenance.baseline_content_hash != experiment.baseline.state_digest
            or self.provenance.candidate_content_hash != experiment.candidate.state_digest
        ):
            issues.add(
                ("provenance",),
                "comparison_provenance",
                "profile comparison provenance must bind both complete measured states",
            )
        if len(self.measurements) != expected_n:
            issues.add(
                ("measurements",),
                "comparison_incomplete",
                "profile comparison must contain every signed benchmark cell",
            )
        record = create_measured_comparison_identity_registry(issues, "profile measurements")
        expected_dimensions = (
            [d.name for d in self.measurements[0].baseline.grading.dimensions]
            if self.measurements
            else []
        )
        execution_ref = experiment.execution_ref.to_wire()
        for task_index, task in enumerate(tasks):
            grader, model, limits = task.grader.to_wire(), task.model.to_wire(), task.limits.to_wire()
            for repetition in range(suite.reps):
                index = task_index * suite.reps + repetition
                if index >= len(self.measurements):
                    continue
                measurement = self.measurements[index]
                seed = suite.seeds[index] if index < len(suite.seeds) else None
                for arm in ("baseline", "candidate"):
                    receipt: Receipt = getattr(measurement, arm)
                    cell = receipt.run_cell
                    arm_path: tuple[str | int, ...] = ("measurements", index, arm)
                    checks: list[tuple[bool, tuple[str | int, ...], str]] = [
                        (
                            cell.experiment_digest == experiment.digest,
                            (*arm_path, "runCell", "experimentDigest"),
                            "profile run receipt must bind the measured experiment",
                        ),
                        (
                            receipt.execution_ref.to_wire() == execution_ref,
                            (*arm_path, "executionRef"),
                            "profile run receipt must bind the measured executor",
                        ),
                        (
                            cell.arm == arm,
                            (*arm_path, "runCell", "arm"),
                            "profile run receipt must bind its measured arm",
                        ),
                        (
                            cell.state_digest == getattr(experiment, arm).state_digest,
                            (*arm_path, "runCell", "stateDigest"),
                            "profile run receipt must bind the experiment arm state",
                        ),
                        (
                            cell.suite_digest == suite.digest
                            and cell.task_digest == task.digest
                            and cell.task_index == task_index
                            and cell.repetition == repetition
                            and cell.seed == seed
                            and cell.attempt == 1,
                            (*arm_path, "runCell"),
                            "publishable profile evidence must use the first signed task attempt",
                        ),
                        (
                            receipt.grading.grader.to_wire() == grader,
                            (*arm_path, "grading", "grader"),
                            "profile run receipt must bind the signed evaluator",
                        ),
                        (
                            receipt.resolved_model.to_wire() == model,
                            (*arm_path, "resolvedModel"),
                            "profile run receipt must bind the signed model snapshot",
                        ),
                        (
                            receipt.limits.to_wire() == limits,
                            (*arm_path, "limits"),
                            "profile run receipt must bind the signed execution limits",
                        ),
                        (
                            [d.name for d in receipt.grading.dimensions] == expected_dimensions,
                            (*arm_path, "grading", "dimensions"),
                            "profile run receipt dimensions must match the complete measured comparison",
                        ),
                    ]
                    for valid, path, message in checks:
                        if not valid:
                            issues.add(path, "profile_receipt_binding", message)
                    record(
                        [
                            MeasuredComparisonIdentity("execution", receipt.execution_id),
                            MeasuredComparisonIdentity("runCell", cell.digest),
                            MeasuredComparisonIdentity("receipt", receipt.digest),
                            MeasuredComparisonIdentity(
                                "runRecord", profile_improvement_evidence_key(receipt.run_record)
                            ),
                            *(
                                MeasuredComparisonIdentity(
                                    "billing",
                                    profile_improvement_evidence_key(billing),
                                    (*arm_path, "billing"),
                                )
                                for billing in receipt.billing
                            ),
                        ],
                        arm_path,
                    )
                baseline, candidate = measurement.baseline, measurement.candidate
                if (
                    baseline.execution_id == candidate.execution_id
                    or baseline.run_cell.digest == candidate.run_cell.digest
                    or baseline.digest == candidate.digest
                ):
                    issues.add(
                        ("measurements", index),
                        "measurement_not_independent",
                        "profile measurement must use independent baseline and candidate executions",
                    )
        if self.decision.outcome == "ship" and any(
            m.baseline.outcome.status != "succeeded" or m.candidate.outcome.status != "succeeded"
            for m in self.measurements
        ):
            issues.add(
                ("measurements",),
                "ship_with_failures",
                "a shippable profile comparison cannot include failed executions",
            )
        refine_measured_comparison_summary(
            self,
            experiment.policy,
            expected_n,
            [(m.baseline, m.candidate) for m in self.measurements],
            _VALUES,
            issues,
        )
        refine_canonical(self, issues, "profile measured comparison")
        issues.check()
        return self


register_wire_models(
    AgentProfileImprovementMeasuredComparison=AgentProfileImprovementMeasuredComparison,
)
