"""A measured experiment between two candidate bundles (``agent-candidate-promotion-schema.ts``).

* :class:`AgentCandidateExperiment` freezes the baseline and candidate bundles, the
  candidate's lineage, the held-out suite and the evaluation policy.
* :class:`CandidateExecutionEvidence` is one execution: its materialization receipt and run
  receipt, bound to each other and to one execution plan, within the plan's frozen limits
  (model calls, accounted input and output tokens, their optional total, cost, steps and
  duration).
* :class:`AgentImprovementMeasuredComparison` holds every signed cell of the suite for both
  arms; each execution must bind the experiment, its arm, bundle, task, repetition, seed
  and first attempt, and reproduce the bundle's harness, instruction delivery, container,
  workspace, code tree, working directory, knowledge, memory and profile, and the task's
  limits, grader, model and outcome contract.
"""

from __future__ import annotations

from typing import Any, Literal, Self

from pydantic import model_validator

from agent_interface.candidate.bundle import AgentCandidateBundle
from agent_interface.candidate.evaluation import AgentCandidateEvaluationPolicy
from agent_interface.candidate.limits import (
    AgentExecutionLimitObservation,
    refine_agent_execution_within_limits,
)
from agent_interface.candidate.lineage import AgentCandidateLineage
from agent_interface.candidate.measurement import (
    MeasuredComparisonIdentity,
    MeasuredComparisonSummary,
    MeasuredValues,
    create_measured_comparison_identity_registry,
    refine_measured_comparison_summary,
)
from agent_interface.candidate.receipts import (
    AgentCandidateMaterializationReceipt,
    AgentCandidateRunReceipt,
)
from agent_interface.candidate.sealed import SealedRecord, refine_canonical
from agent_interface.candidate.tasks import AgentCandidateBenchmarkSuiteInputs
from agent_interface.core.canonical import Sha256Digest, canonical_digest
from agent_interface.core.errors import Refinement
from agent_interface.core.model import WireList, WireModel
from agent_interface.core.registry import register_wire_models

__all__ = [
    "AgentCandidateExperiment",
    "AgentCandidateExperimentMeasurement",
    "AgentImprovementMeasuredComparison",
    "CandidateExecutionEvidence",
    "candidate_execution_cost_usd",
    "candidate_execution_latency_ms",
]


class AgentCandidateExperiment(SealedRecord):
    """Baseline and candidate bundles measured on one held-out suite under one policy."""

    kind: Literal["agent-candidate-experiment"]
    digest_algorithm: Literal["rfc8785-sha256"]
    baseline: AgentCandidateBundle
    candidate: AgentCandidateBundle
    candidate_lineage: AgentCandidateLineage
    benchmark: AgentCandidateBenchmarkSuiteInputs
    policy: AgentCandidateEvaluationPolicy
    digest: Sha256Digest

    @model_validator(mode="after")
    def _held_out(self) -> Self:
        issues = Refinement("AgentCandidateExperiment")
        lineage = self.candidate_lineage
        parents = lineage.parent_digests or ()
        if lineage.source in ("optimizer", "compound") and self.baseline.digest not in parents:
            issues.add(
                ("candidateLineage", "parentDigests"),
                "lineage_baseline",
                "generated candidate lineage must include the experiment baseline",
            )
        if self.candidate.digest in parents:
            issues.add(
                ("candidateLineage", "parentDigests"),
                "lineage_self_parent",
                "candidate lineage cannot name the candidate itself as a parent",
            )
        split = lineage.development_split_digest
        if split is not None and any(
            task.to_wire()["benchmark"]["splitDigest"] == split for task in self.benchmark.tasks
        ):
            issues.add(
                ("candidateLineage", "developmentSplitDigest"),
                "lineage_split_overlap",
                "candidate development and held-out splits must be disjoint",
            )
        refine_canonical(self, issues, "candidate experiment")
        issues.check()
        return self


class CandidateExecutionEvidence(SealedRecord):
    """One execution: the materialization and run receipts of one plan, within its limits."""

    kind: Literal["agent-candidate-execution-evidence"]
    materialization_receipt: AgentCandidateMaterializationReceipt
    receipt: AgentCandidateRunReceipt
    digest: Sha256Digest

    @model_validator(mode="after")
    def _bound(self) -> Self:
        issues = Refinement("CandidateExecutionEvidence")
        materialization = self.materialization_receipt
        plan = materialization.execution_plan
        receipt = self.receipt
        checks: list[tuple[bool, tuple[str | int, ...], str]] = [
            (
                receipt.materialization_receipt_digest == materialization.digest,
                ("receipt", "materializationReceiptDigest"),
                "run receipt must bind the included materialization receipt",
            ),
            (
                receipt.execution_plan_digest == plan.digest,
                ("receipt", "executionPlanDigest"),
                "run receipt must bind the included execution plan",
            ),
            (
                receipt.bundle_digest == materialization.bundle_digest,
                ("receipt", "bundleDigest"),
                "run receipt and materialization must bind one bundle",
            ),
            (
                receipt.run_cell_digest == plan.material.run_cell.digest,
                ("receipt", "runCellDigest"),
                "run receipt must bind the materialized run cell",
            ),
            (
                materialization.profile_activation.profile_plan.digest
                == plan.material.profile.plan_digest,
                ("materializationReceipt", "profileActivation", "profilePlan", "digest"),
                "profile activation must bind the materialized execution plan",
            ),
            (
                receipt.model_settlement.material.grant_digest
                == plan.material.model.access.grant_digest,
                ("receipt", "modelSettlement", "material", "grantDigest"),
                "model settlement must bind the execution plan grant",
            ),
        ]
        for valid, path, message in checks:
            if not valid:
                issues.add(path, "execution_evidence_binding", message)
        refine_agent_execution_within_limits(
            plan.material.limits,
            AgentExecutionLimitObservation.model_construct(
                duration_ms=receipt.timing.duration_ms,
                steps=receipt.steps,
                usage=receipt.model_settlement.material.usage,
            ),
            issues,
            path_prefix=("receipt",),
            usage_path=("modelSettlement", "material", "usage"),
        )
        refine_canonical(self, issues, "candidate execution evidence")
        issues.check()
        return self


class AgentCandidateExperimentMeasurement(WireModel):
    """One paired execution of the exact signed experiment."""

    baseline: CandidateExecutionEvidence
    candidate: CandidateExecutionEvidence


def candidate_execution_cost_usd(evidence: CandidateExecutionEvidence) -> float:
    """Agent plus grader spend of one execution, in dollars."""
    receipt = evidence.receipt
    nanos = (
        receipt.model_settlement.material.usage.cost_usd_nanos
        + receipt.benchmark_result.material.grading.usage.cost_usd_nanos
    )
    return nanos / 1_000_000_000


def candidate_execution_latency_ms(evidence: CandidateExecutionEvidence) -> float:
    """Agent plus grader duration of one execution."""
    receipt = evidence.receipt
    return receipt.timing.duration_ms + receipt.benchmark_result.material.grading.timing.duration_ms


def _cost_provenance(evidence: CandidateExecutionEvidence) -> str:
    receipt = evidence.receipt
    observed = (
        receipt.model_settlement.material.usage.cost_provenance == "observed"
        and receipt.benchmark_result.material.grading.usage.cost_provenance == "observed"
    )
    return "observed" if observed else "estimated"


def _dimension(evidence: CandidateExecutionEvidence, name: str) -> float | None:
    dimensions = evidence.receipt.benchmark_result.material.dimensions
    return next((d.score for d in dimensions if d.name == name), None)


_VALUES: MeasuredValues[CandidateExecutionEvidence] = MeasuredValues(
    score=lambda evidence: evidence.receipt.benchmark_result.material.score,
    dimension=_dimension,
    cost=candidate_execution_cost_usd,
    cost_provenance=_cost_provenance,
    latency=candidate_execution_latency_ms,
)

_PLAN = ("materializationReceipt", "executionPlan", "material")


def _arm_checks(
    evidence: CandidateExecutionEvidence,
    bundle: dict[str, Any],
    task: dict[str, Any],
) -> list[tuple[bool, tuple[str | int, ...], str]]:
    """What one execution must reproduce of its arm's bundle and its task."""
    materialization = evidence.materialization_receipt
    plan = materialization.execution_plan.material.to_wire()
    result = evidence.receipt.benchmark_result.material
    outcome = evidence.receipt.task_outcome.material.outcome.to_wire()
    received = materialization.to_wire()
    code, execution = bundle["code"], bundle["execution"]
    expected_tree = (
        None
        if code["kind"] == "disabled"
        else code.get("baseTree")
        if code["kind"] == "no-op"
        else code.get("candidateTree")
    )
    environment, container = execution["environment"], plan["container"]
    if environment["kind"] == "evaluator-task-container":
        container_matches = (
            task.get("evaluatorTaskContainer") is not None
            and container["source"] == "evaluator-task-container"
            and container == task["evaluatorTaskContainer"]
        )
    else:
        container_matches = (
            container["source"] == "pinned-container"
            and container["image"] == environment["container"]["image"]
            and container["indexDigest"] == environment["container"]["indexDigest"]
        )
    knowledge = (bundle.get("knowledge") or {}).get("snapshot", {}).get("digest")
    memory, plan_memory = bundle["memory"], plan["memory"]
    seed = memory.get("seed")
    limits, task_outcome, repository = task["limits"], task["outcome"], task.get("repository")
    network = plan["model"]["access"]["network"]["mode"]
    return [
        (
            materialization.code_kind == code["kind"],
            ("materializationReceipt", "codeKind"),
            "materialized code must match the experiment arm bundle",
        ),
        (
            materialization.harness == execution["harness"]
            and materialization.harness_version == execution["harnessVersion"]
            and plan["harness"] == execution["harness"]
            and plan["harnessVersion"] == execution["harnessVersion"],
            ("materializationReceipt", "harness"),
            "execution evidence must bind the candidate harness and version",
        ),
        (
            plan["instructionDelivery"] == execution["instructionDelivery"],
            (*_PLAN, "instructionDelivery"),
            "execution plan must bind the candidate instruction delivery",
        ),
        (
            plan["limits"] == limits,
            (*_PLAN, "limits"),
            "execution plan must bind every signed task limit",
        ),
        (
            container_matches,
            (*_PLAN, "container"),
            "execution plan must bind the candidate or evaluator task container",
        ),
        (
            plan.get("candidateWorkspace") == execution.get("workspace")
            and received.get("candidateWorkspace") == execution.get("workspace"),
            ("materializationReceipt", "candidateWorkspace"),
            "execution evidence must bind the candidate workspace",
        ),
        (
            materialization.materialized_tree == expected_tree,
            ("materializationReceipt", "materializedTree"),
            "materialized tree must match the candidate code",
        ),
        (
            plan["launch"]["cwd"]["workspace"] == execution["cwd"]["workspace"]
            and plan["launch"]["cwd"]["path"] == execution["cwd"]["path"],
            (*_PLAN, "launch", "cwd"),
            "execution plan must bind the candidate working directory",
        ),
        (
            plan.get("knowledgeManifestDigest") == knowledge
            and materialization.knowledge_manifest_digest == knowledge,
            ("materializationReceipt", "knowledgeManifestDigest"),
            "execution evidence must bind the candidate knowledge snapshot",
        ),
        (
            (memory["mode"] == "disabled" and plan_memory["mode"] == "disabled")
            or (
                memory["mode"] == "isolated"
                and plan_memory["mode"] == "isolated"
                and plan_memory.get("seedDigest") == (seed or {}).get("sha256")
            ),
            (*_PLAN, "memory"),
            "execution plan must bind the candidate memory policy",
        ),
        (
            result.evidence.sha256 != task["grader"]["artifact"]["sha256"],
            ("receipt", "benchmarkResult", "material", "evidence", "sha256"),
            "grading evidence must be distinct from the signed grader implementation",
        ),
        (
            result.grader.to_wire() == task["grader"],
            ("receipt", "benchmarkResult", "material", "grader"),
            "benchmark result must bind the signed grader",
        ),
        (
            materialization.profile_activation.profile_plan.material.source_profile_digest
            == canonical_digest(bundle["profile"]),
            (
                "materializationReceipt",
                "profileActivation",
                "profilePlan",
                "material",
                "sourceProfileDigest",
            ),
            "materialized profile files must bind the experiment arm profile",
        ),
        (
            materialization.resolved_model.to_wire() == task["model"],
            ("materializationReceipt", "resolvedModel"),
            "execution must use the selected task model",
        ),
        (
            (limits["maxModelCalls"] == 0 and network == "disabled")
            or (limits["maxModelCalls"] > 0 and network == "gateway-only"),
            (*_PLAN, "model", "access", "network"),
            "model gateway access must match the signed model-call limit",
        ),
        (
            outcome["kind"] == task_outcome["kind"],
            ("receipt", "taskOutcome", "material", "outcome", "kind"),
            "captured outcome must match the selected task contract",
        ),
        (
            task_outcome["kind"] != "output"
            or (
                outcome["kind"] == "output"
                and outcome["spec"]["mediaType"] == task_outcome["mediaType"]
                and outcome["spec"]["maxBytes"] == task_outcome["maxBytes"]
            ),
            ("receipt", "taskOutcome", "material", "outcome", "spec"),
            "captured output must match the selected task specification",
        ),
        (
            task_outcome["kind"] != "workspace"
            or (
                outcome["kind"] == "workspace"
                and repository is not None
                and outcome["baseRepository"]["identity"] == repository["identity"]
                and outcome["baseRepository"]["rootIdentity"] == repository["rootIdentity"]
                and outcome["baseRepository"]["commit"] == repository["baseCommit"]
                and outcome["baseRepository"]["tree"] == repository["baseTree"]
            ),
            ("receipt", "taskOutcome", "material", "outcome", "baseRepository"),
            "captured workspace must start from the selected task repository",
        ),
    ]


class AgentImprovementMeasuredComparison(MeasuredComparisonSummary):
    """Every signed cell of a candidate experiment, both arms, and the summary they support."""

    kind: Literal["agent-improvement-measured-comparison"]
    experiment: AgentCandidateExperiment
    measurements: WireList[AgentCandidateExperimentMeasurement]

    @model_validator(mode="after")
    def _complete_and_bound(self) -> Self:
        issues = Refinement("AgentImprovementMeasuredComparison")
        experiment = self.experiment
        suite = experiment.benchmark.suite.to_wire()
        tasks = [task.to_wire() for task in experiment.benchmark.tasks]
        task_count, reps, seeds = len(suite["taskDigests"]), suite["reps"], suite["seeds"]
        expected_n = task_count * reps
        if len(self.measurements) != expected_n:
            issues.add(
                ("measurements",),
                "comparison_incomplete",
                "measured comparison must contain every signed benchmark cell",
            )
        record = create_measured_comparison_identity_registry(issues, "measured executions")
        bundles = {
            "baseline": experiment.baseline.to_wire(),
            "candidate": experiment.candidate.to_wire(),
        }
        for task_index in range(task_count):
            if task_index >= len(tasks):
                continue
            task = tasks[task_index]
            for repetition in range(reps):
                index = task_index * reps + repetition
                if index >= len(self.measurements):
                    continue
                measurement = self.measurements[index]
                seed = seeds[index] if index < len(seeds) else None
                for arm in ("baseline", "candidate"):
                    evidence: CandidateExecutionEvidence = getattr(measurement, arm)
                    bundle = bundles[arm]
                    materialization = evidence.materialization_receipt
                    plan = materialization.execution_plan.material
                    cell = plan.run_cell
                    arm_path: tuple[str | int, ...] = ("measurements", index, arm)
                    checks: list[tuple[bool, tuple[str | int, ...], str]] = [
                        (
                            cell.experiment_digest == experiment.digest,
                            (*_PLAN, "runCell", "experimentDigest"),
                            "execution evidence must bind the measured experiment",
                        ),
                        (
                            cell.arm == arm,
                            (*_PLAN, "runCell", "arm"),
                            "execution evidence must bind its measured arm",
                        ),
                        (
                            cell.bundle_digest == bundle["digest"]
                            and materialization.bundle_digest == bundle["digest"],
                            ("materializationReceipt", "bundleDigest"),
                            "execution evidence must bind the experiment arm bundle",
                        ),
                        (
                            cell.suite_digest == suite["digest"]
                            and cell.task_digest == task["digest"]
                            and cell.task_index == task_index
                            and cell.repetition == repetition
                            and cell.seed == seed
                            and cell.attempt == 1,
                            (*_PLAN, "runCell"),
                            "publishable execution evidence must use the first signed task attempt",
                        ),
                        (
                            materialization.benchmark.suite.digest == suite["digest"]
                            and materialization.benchmark.task.digest == task["digest"],
                            ("materializationReceipt", "benchmark"),
                            "execution evidence must capture the signed suite and selected task",
                        ),
                        *_arm_checks(evidence, bundle, task),
                    ]
                    for valid, path, message in checks:
                        if not valid:
                            issues.add((*arm_path, *path), "execution_binding", message)
                    record(
                        [
                            MeasuredComparisonIdentity("execution", plan.execution_id),
                            MeasuredComparisonIdentity("runCell", cell.digest),
                            MeasuredComparisonIdentity("materialization", materialization.digest),
                            MeasuredComparisonIdentity("receipt", evidence.receipt.digest),
                            MeasuredComparisonIdentity("evidence", evidence.digest),
                        ],
                        arm_path,
                    )
        refine_measured_comparison_summary(
            self,
            experiment.policy,
            expected_n,
            [(m.baseline, m.candidate) for m in self.measurements],
            _VALUES,
            issues,
        )
        refine_canonical(self, issues, "measured comparison")
        issues.check()
        return self


register_wire_models(
    AgentCandidateExperiment=AgentCandidateExperiment,
    AgentImprovementMeasuredComparison=AgentImprovementMeasuredComparison,
    CandidateExecutionEvidence=CandidateExecutionEvidence,
)
