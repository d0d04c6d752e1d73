"""Realistic experiments and cells for the measured comparison, built from the reference's
accepted improvement proposal: ``experiment(tasks, reps)`` is a sealed experiment on a
suite of that shape, ``cell(...)`` one arm's execution evidence with its run cell sealed
and its own identities, ``invalid(...)`` an invalid capture of one cell."""

from __future__ import annotations

import copy
from typing import Any

from agent_interface.candidate.experiment import (
    AgentCandidateExperiment,
    CandidateExecutionEvidence,
)
from agent_interface.candidate.invalid_capture import CandidateInvalidCapture
from agent_interface.core.canonical import canonical_digest
from tests.candidate.reference_documents import accepted

_COMPARISON = accepted(
    "AgentImprovementProposal",
    lambda v: v["evaluation"]["kind"] == "agent-improvement-measured-comparison",
)["evaluation"]


def h(*parts: object) -> str:
    """A distinct digest for a label."""
    return canonical_digest([str(part) for part in parts])


def reference_comparison() -> dict[str, Any]:
    """The reference's accepted comparison (1 task, 3 repetitions)."""
    return copy.deepcopy(_COMPARISON)


def experiment(
    tasks: int = 3,
    reps: int = 2,
    attempts: int = 1,
    task_ids: list[str] | None = None,
    benchmark: str | None = None,
    **policy: Any,
) -> AgentCandidateExperiment:
    """A sealed experiment with ``tasks`` tasks of ``reps`` repetitions and ``attempts``
    attempts each (scenario ids ``task_ids``, benchmark name ``benchmark``); ``policy``
    overrides fields of the reference policy (wire names)."""
    value = copy.deepcopy(_COMPARISON["experiment"])
    template = value["benchmark"]["tasks"][0]
    task_list = []
    for index in range(tasks):
        task = copy.deepcopy(template)
        task["scenario"]["id"] = task_ids[index] if task_ids else f"task-{index + 1}"
        if benchmark is not None:
            task["benchmark"]["name"] = benchmark
        task["scenario"]["scenarioDigest"] = h("scenario", index)
        task["digest"] = h("task", index)
        if attempts > 1:
            task["attempt"] = {"maxAttempts": attempts, "retryPolicy": "pre-model-infrastructure-only"}
        task_list.append(task)
    value["benchmark"]["tasks"] = task_list
    value["benchmark"]["suite"].update(
        taskDigests=[task["digest"] for task in task_list],
        reps=reps,
        seeds=[1000 + index for index in range(tasks * reps)],
        digest=h("suite", tasks, reps),
    )
    value["policy"].update({"budgetUsd": 1000, **policy})
    return AgentCandidateExperiment.seal(value)


def cell(
    exp: AgentCandidateExperiment,
    arm: str,
    task_index: int,
    repetition: int,
    score: float,
    *,
    dimensions: dict[str, float] | None = None,
    grading_cost_nanos: int = 25_000_000,
    grading_ms: int = 20,
    attempt: int = 1,
    tag: str = "",
) -> CandidateExecutionEvidence:
    """One arm's evidence for a task repetition, graded ``score``."""
    source = _COMPARISON["measurements"][0][arm]
    evidence = copy.deepcopy(source)
    suite = exp.benchmark.suite
    task = exp.benchmark.tasks[task_index]
    materialization = evidence["materializationReceipt"]
    plan = materialization["executionPlan"]["material"]
    run_cell = plan["runCell"]
    run_cell.update(
        experimentDigest=exp.digest,
        suiteDigest=suite.digest,
        taskDigest=task.digest,
        taskIndex=task_index,
        repetition=repetition,
        seed=suite.seeds[task_index * suite.reps + repetition],
        attempt=attempt,
    )
    run_cell["digest"] = canonical_digest({k: v for k, v in run_cell.items() if k != "digest"})
    label = (arm, task_index, repetition, attempt, tag)
    plan["executionId"] = f"{arm}-{task_index}-{repetition}-{attempt}{tag}"
    for part, digest in (("suite", suite.digest), ("task", task.digest)):
        materialization["benchmark"][part]["digest"] = digest
        materialization["benchmark"][part]["material"]["sha256"] = digest
    materialization["digest"] = h("materialization", *label)
    receipt = evidence["receipt"]
    receipt["runCellDigest"] = run_cell["digest"]
    receipt["materializationReceiptDigest"] = materialization["digest"]
    result = receipt["benchmarkResult"]["material"]
    result["score"] = score
    result["passed"] = score >= 0.5
    result["dimensions"] = [
        {"name": name, "score": value} for name, value in sorted((dimensions or {}).items())
    ]
    result["grading"]["usage"]["costUsdNanos"] = grading_cost_nanos
    timing = result["grading"]["timing"]
    timing["endedAtMs"] = timing["startedAtMs"] + grading_ms
    timing["durationMs"] = grading_ms
    receipt["digest"] = h("receipt", *label)
    evidence["digest"] = h("evidence", *label)
    return CandidateExecutionEvidence.parse_wire(evidence)


def invalid(
    exp: AgentCandidateExperiment, arm: str, task_index: int, repetition: int, attempt: int = 1
) -> CandidateInvalidCapture:
    """An invalid capture of one cell: a model call was still open at the end."""
    suite = exp.benchmark.suite
    task = exp.benchmark.tasks[task_index]
    bundle = getattr(exp, arm)
    run_cell = {
        "kind": "agent-candidate-run-cell",
        "experimentDigest": exp.digest,
        "arm": arm,
        "bundleDigest": bundle.digest,
        "suiteDigest": suite.digest,
        "taskDigest": task.digest,
        "taskIndex": task_index,
        "repetition": repetition,
        "seed": suite.seeds[task_index * suite.reps + repetition],
        "attempt": attempt,
    }
    return CandidateInvalidCapture.seal(
        {
            "kind": "agent-interface.candidate-invalid-capture",
            "bundleDigest": bundle.digest,
            "runCellDigest": canonical_digest(run_cell),
            "executionPlanDigest": h("plan", arm, task_index, repetition),
            "materializationReceiptDigest": h("materialization", arm, task_index, repetition),
            "missing": ["usage"],
            "reasons": [
                {
                    "evidence": "usage",
                    "code": "model_call_unsettled",
                    "message": "a model call was still open when the process ended <script>",
                }
            ],
        }
    )


def cells(
    exp: AgentCandidateExperiment,
    baseline: list[float],
    candidate: list[float],
    **options: Any,
) -> list[CandidateExecutionEvidence]:
    """Both arms of every task repetition, scored from the two lists (task-major)."""
    reps = exp.benchmark.suite.reps
    out = []
    for index, (b, c) in enumerate(zip(baseline, candidate, strict=True)):
        task_index, repetition = divmod(index, reps)
        out.append(cell(exp, "baseline", task_index, repetition, b, **options))
        out.append(cell(exp, "candidate", task_index, repetition, c, **options))
    return out
