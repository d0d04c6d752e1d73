"""Assemble a :class:`~agent_interface.candidate.materialization.CandidateMaterializationContext`
from a verified bundle, a signed suite and task, and the evaluator's own facts.

:func:`build_materialization_context` calls the public builders of
:mod:`.plan_builders` in order (run cell, profile plan and activation, execution plan)
and captures the suite and task bytes, so the context it returns binds by construction;
:func:`~agent_interface.candidate.materialization.materialization_receipt` checks it again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agent_interface.candidate.artifacts import embed_artifact
from agent_interface.candidate.bundle import AgentCandidateBundle
from agent_interface.candidate.execution_plan import AgentCandidateExecutionPlanEvidence
from agent_interface.candidate.materialization import CandidateMaterializationContext
from agent_interface.candidate.plan_builders import (
    NativeProfileLowering,
    build_execution_plan,
    build_profile_activation,
    build_profile_plan,
    build_run_cell,
)
from agent_interface.candidate.receipts import AgentCandidateBenchmarkInputEvidence
from agent_interface.candidate.run_cell import AgentCandidateRunArm
from agent_interface.candidate.tasks import (
    AgentCandidateBenchmarkSuite,
    AgentCandidateBenchmarkTask,
)
from agent_interface.core.canonical import canonical_bytes

__all__ = ["CandidateRunPlacement", "build_benchmark_input", "build_materialization_context"]


def build_benchmark_input(
    suite: AgentCandidateBenchmarkSuite, task: AgentCandidateBenchmarkTask
) -> AgentCandidateBenchmarkInputEvidence:
    """The captured suite and task: the RFC 8785 bytes of each without its ``digest``
    (whose SHA-256 is that digest), embedded; digests recomputed first."""
    suite.verify_digest()
    task.verify_digest()

    def captured(document: AgentCandidateBenchmarkSuite | AgentCandidateBenchmarkTask) -> dict[str, Any]:
        material = {key: value for key, value in document.to_wire().items() if key != "digest"}
        return {"digest": document.digest, "material": embed_artifact(canonical_bytes(material)).to_wire()}

    return AgentCandidateBenchmarkInputEvidence.parse_wire({"suite": captured(suite), "task": captured(task)})


@dataclass(frozen=True, slots=True)
class CandidateRunPlacement:
    """Where one attempt sits and what the evaluator runs it on.

    ``container`` is the plan's container (``source``, ``image``, ``indexDigest``,
    ``manifestDigest``, ``platform``); ``evaluator_env`` the evaluator's launch variables.
    """

    experiment_digest: str
    execution_id: str
    container: Mapping[str, Any]
    grant_digest: str
    arm: AgentCandidateRunArm = "candidate"
    task_index: int = 0
    repetition: int = 0
    attempt: int = 1
    evaluator_env: Mapping[str, str] | None = None


def build_materialization_context(
    bundle: AgentCandidateBundle,
    suite: AgentCandidateBenchmarkSuite,
    task: AgentCandidateBenchmarkTask,
    placement: CandidateRunPlacement,
    *,
    native: NativeProfileLowering | None = None,
) -> tuple[CandidateMaterializationContext, AgentCandidateExecutionPlanEvidence]:
    """The context a materialization receipt needs, and the execution plan inside it;
    ``native`` is a harness adapter's lowering of the profile (its native files, env and
    flags), bound into the profile plan and activation instead of the bundle-only ones."""
    cell = build_run_cell(
        experiment_digest=placement.experiment_digest, arm=placement.arm, bundle_digest=bundle.digest,
        suite=suite, task=task, task_index=placement.task_index, repetition=placement.repetition,
        attempt=placement.attempt,
    )
    profile_plan = build_profile_plan(bundle, native=native)
    activation = build_profile_activation(bundle, profile_plan, native=native)
    plan = build_execution_plan(
        bundle, task, cell, profile_plan, execution_id=placement.execution_id,
        container=placement.container, grant_digest=placement.grant_digest,
        evaluator_env=placement.evaluator_env,
    )
    container = dict(placement.container)
    context = CandidateMaterializationContext.parse_wire(
        {
            "benchmark": build_benchmark_input(suite, task).to_wire(),
            "profileActivation": activation.to_wire(),
            "executionPlan": plan.to_wire(),
            "container": {key: container[key] for key in ("image", "indexDigest", "manifestDigest", "platform")},
            "resolvedModel": task.model.to_wire(),
        }
    )
    return context, plan
