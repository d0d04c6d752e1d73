"""Turn what a local run captured into receipt evidence, or into an invalid capture.

:func:`assemble_run` takes the captured facts of one finished process (:class:`RunCapture`:
termination, output bytes and what was dropped, the calls its model gateway run settled,
the trace events) and either mints the sealed
:class:`~agent_interface.candidate.receipts.AgentCandidateRunReceipt` or, when any
evidence a receipt needs is incomplete, the
:class:`~agent_interface.candidate.invalid_capture.CandidateInvalidCapture` naming it.
Evidence bytes (trace, executor capture, output, grading evidence) go into the
:class:`~agent_interface.evaluator.verify.artifact_store.LocalArtifactStore` and are named by CID.

Incomplete evidence, each with its code:

* ``usage``: a model call still in flight when the run ended, or one whose usage the
  upstream did not report (``model_call_unsettled``). Every call passes the evaluator's
  gateway (the program has no other way out), so a run whose gateway saw no call and
  settled is a valid zero: its settlement is closed with zero calls;
* ``termination``: the provider reported no terminal reason (``termination_unknown``);
* ``executorCapture``: output past the capture bound was dropped (``output_truncated``);
* ``taskOutcome``: an empty output (``task_output_empty``) or one above the task's
  ``maxBytes`` (``task_output_too_large``), for output tasks.

A workspace task's outcome is captured and graded by the caller (the experiment engine's
:mod:`agent_interface.evaluator.experiment.workspace_outcome` and
:mod:`~agent_interface.evaluator.experiment.task_grader`) and handed in as a
:class:`GradedOutcome`; what the caller could not capture or grade comes in as more gaps.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agent_interface.candidate.execution_plan import AgentCandidateExecutionPlanEvidence
from agent_interface.candidate.invalid_capture import CandidateInvalidCapture
from agent_interface.candidate.outcomes import (
    AgentCandidateBenchmarkResultEvidence,
    AgentCandidateModelSettlementEvidence,
    AgentCandidateTaskOutcomeEvidence,
)
from agent_interface.candidate.receipt_binding import run_receipt_matches
from agent_interface.candidate.receipts import (
    AgentCandidateMaterializationReceipt,
    AgentCandidateRunReceipt,
)
from agent_interface.candidate.tasks import AgentCandidateBenchmarkTask
from agent_interface.evaluator.gateway import ModelCallRecord
from agent_interface.evaluator.run.grader import OutputChecksGrade, grade_output
from agent_interface.evaluator.verify.artifact_store import LocalArtifactStore

__all__ = ["GradedOutcome", "RunCapture", "assemble_run", "capture_gaps"]


@dataclass(slots=True)
class RunCapture:
    """Everything captured from one process run (times in epoch milliseconds)."""

    started_at_ms: int
    ended_at_ms: int
    termination: dict[str, Any] | None
    stdout: bytes
    stderr: bytes
    dropped: dict[str, int]
    calls: list[ModelCallRecord]
    unsettled_calls: int
    events: list[dict[str, Any]] = field(default_factory=list)
    provider: str = ""
    environment_id: str = ""
    executor: dict[str, Any] = field(default_factory=dict)
    """More executor facts for the capture (a container run's ``containerId``, ``image``, ``oomKilled``)."""
    usage_within_limits: bool | None = None
    """The gateway's own ``usageWithinLimits`` (``None``: no gateway run, computed here)."""


@dataclass(frozen=True, slots=True)
class GradedOutcome:
    """A task outcome the caller captured (its wire ``outcome``) and the grade it got, with the
    grader's start and end (epoch milliseconds)."""

    outcome: dict[str, Any]
    grade: OutputChecksGrade
    started_at_ms: int
    ended_at_ms: int


def _now_ms() -> int:
    return int(time.time() * 1000)


def capture_gaps(capture: RunCapture, task: AgentCandidateBenchmarkTask) -> list[dict[str, str]]:
    """What the capture leaves incomplete (see the module docstring); empty when complete."""
    gaps = []
    if capture.unsettled_calls or any(not call.settled for call in capture.calls):
        gaps.append({"evidence": "usage", "code": "model_call_unsettled",
                     "message": "a model call was in flight when the run ended, or its usage was not reported"})
    if capture.termination is None:
        gaps.append({"evidence": "termination", "code": "termination_unknown",
                     "message": "the provider reported no terminal reason"})
    if any(capture.dropped.values()):
        gaps.append({"evidence": "executorCapture", "code": "output_truncated",
                     "message": "output past the capture bound was dropped"})
    spec = task.outcome
    if spec.kind != "output":
        return gaps
    if not capture.stdout:
        gaps.append({"evidence": "taskOutcome", "code": "task_output_empty",
                     "message": "the task output (standard output) is empty"})
    elif spec.kind == "output" and len(capture.stdout) > spec.max_bytes:
        gaps.append({"evidence": "taskOutcome", "code": "task_output_too_large",
                     "message": "the task output is larger than the task's maxBytes"})
    return gaps


def _trace(capture: RunCapture, plan: AgentCandidateExecutionPlanEvidence) -> bytes:
    events: list[dict[str, Any]] = [{"event": "run.started", "atMs": capture.started_at_ms, "executionPlanDigest": plan.digest}]
    events += capture.events
    events.append({"event": "process.ended", "atMs": capture.ended_at_ms, "termination": capture.termination})
    events.sort(key=lambda event: event["atMs"])
    return b"".join(json.dumps(event, sort_keys=True).encode() + b"\n" for event in events)


def _settlement(capture: RunCapture, plan: AgentCandidateExecutionPlanEvidence) -> dict[str, Any]:
    material = plan.material
    resolved = material.model.resolved
    limits = material.limits
    calls = [call.wire_call(resolved.model) for call in capture.calls]
    usage: dict[str, Any] = {
        "inputTokens": sum(c["accountedInputTokens"] for c in calls),
        "outputTokens": sum(c["outputTokens"] for c in calls),
        "cachedInputTokens": sum(c["cachedInputTokens"] for c in calls),
        "reasoningTokens": sum(c["reasoningTokens"] for c in calls),
        "modelCalls": len(calls),
        "costUsdNanos": sum(c["costUsdNanos"] for c in calls),
        "costProvenance": "observed" if all(c["costProvenance"] == "observed" for c in calls) else "estimated",
    }
    within = capture.usage_within_limits is not False and (
        usage["modelCalls"] <= limits.max_model_calls
        and usage["inputTokens"] <= limits.max_input_tokens
        and usage["outputTokens"] <= limits.max_output_tokens
        and (limits.max_total_tokens is None or usage["inputTokens"] + usage["outputTokens"] <= limits.max_total_tokens)
        and usage["costUsdNanos"] <= limits.max_cost_usd * 1e9
    )
    return {
        "kind": "agent-candidate-model-settlement-material",
        "executionPlanDigest": plan.digest,
        "preparationId": material.execution_id[:256],
        "grantDigest": material.model.access.grant_digest,
        "closed": True,
        "usageWithinLimits": within,
        "resolved": resolved.to_wire(),
        "usage": usage,
        "calls": calls,
    }


def _executor_capture(capture: RunCapture, store: LocalArtifactStore) -> bytes:
    def stream(data: bytes, name: str) -> dict[str, Any]:
        ref = store.put(data).to_wire()
        return {"cid": ref["locator"]["cid"], "sha256": ref["sha256"], "byteLength": ref["byteLength"],
                "dropped": capture.dropped.get(name, 0)}

    return json.dumps({
        "kind": "agent-interface.local-executor-capture.v1",
        "provider": capture.provider, "environmentId": capture.environment_id,
        "termination": capture.termination,
        "stdout": stream(capture.stdout, "stdout"), "stderr": stream(capture.stderr, "stderr"),
        **capture.executor,
    }, sort_keys=True).encode()


def assemble_run(
    capture: RunCapture,
    *,
    plan: AgentCandidateExecutionPlanEvidence,
    receipt: AgentCandidateMaterializationReceipt,
    task: AgentCandidateBenchmarkTask,
    checks: list[dict[str, Any]],
    store: LocalArtifactStore,
    graded: GradedOutcome | None = None,
    gaps: Sequence[Mapping[str, str]] = (),
) -> AgentCandidateRunReceipt | CandidateInvalidCapture:
    """The run receipt, or the invalid capture when evidence is incomplete (module docstring).

    ``graded`` is the caller's captured and graded outcome (required for a workspace task);
    ``gaps`` are more reasons the caller found the evidence incomplete."""
    material = plan.material
    trace = store.put(_trace(capture, plan))
    executor = store.put(_executor_capture(capture, store))
    gaps = [*capture_gaps(capture, task), *(dict(gap) for gap in gaps)]
    if graded is None and task.outcome.kind != "output" and not gaps:
        gaps.append({"evidence": "taskOutcome", "code": "workspace_capture_failed",
                     "message": "no workspace outcome was captured"})
    if gaps:
        record: dict[str, Any] = {
            "kind": "agent-interface.candidate-invalid-capture",
            "bundleDigest": receipt.bundle_digest, "runCellDigest": material.run_cell.digest,
            "executionPlanDigest": plan.digest, "materializationReceiptDigest": receipt.digest,
            "missing": sorted({gap["evidence"] for gap in gaps}), "reasons": gaps,
            "executorCapture": executor.to_wire(), "trace": trace.to_wire(),
        }
        if capture.termination is not None:
            record["termination"] = capture.termination
        return CandidateInvalidCapture.seal(record)
    settlement = AgentCandidateModelSettlementEvidence.seal(_settlement(capture, plan))
    if graded is None:
        assert task.outcome.kind == "output"
        output = store.put(capture.stdout)
        outcome_wire: dict[str, Any] = {
            "kind": "output", "spec": {"mediaType": task.outcome.media_type, "maxBytes": task.outcome.max_bytes},
            "artifact": output.to_wire()}
    else:
        outcome_wire = graded.outcome
    outcome = AgentCandidateTaskOutcomeEvidence.seal({
        "kind": "agent-candidate-task-outcome-material",
        "executionPlanDigest": plan.digest,
        "outcome": outcome_wire,
    })
    if graded is None:
        grading_started = max(_now_ms(), capture.ended_at_ms)
        grade = grade_output(checks, capture.stdout, capture.termination)
        grading_ended = max(_now_ms(), grading_started)
    else:
        grade = graded.grade
        grading_started = max(graded.started_at_ms, capture.ended_at_ms)
        grading_ended = max(graded.ended_at_ms, grading_started)
    zero = {"inputTokens": 0, "outputTokens": 0, "cachedInputTokens": 0, "reasoningTokens": 0,
            "modelCalls": 0, "costUsdNanos": 0, "costProvenance": "observed"}
    result = AgentCandidateBenchmarkResultEvidence.seal({
        "kind": "agent-candidate-benchmark-result-material",
        "executionPlanDigest": plan.digest,
        "taskOutcomeDigest": outcome.digest,
        "grader": task.grader.to_wire(),
        "evidence": store.put(grade.evidence).to_wire(),
        "grading": {"usage": zero, "timing": {"startedAtMs": grading_started, "endedAtMs": grading_ended,
                                              "durationMs": grading_ended - grading_started}},
        "score": grade.score,
        "passed": grade.passed,
        "dimensions": [{"name": name, "score": score} for name, score in grade.dimensions],
    })
    assert capture.termination is not None
    run = AgentCandidateRunReceipt.seal({
        "kind": "agent-candidate-run",
        "digestAlgorithm": "rfc8785-sha256",
        "bundleDigest": receipt.bundle_digest,
        "runCellDigest": material.run_cell.digest,
        "materializationReceiptDigest": receipt.digest,
        "executionPlanDigest": plan.digest,
        "timing": {"startedAtMs": capture.started_at_ms, "endedAtMs": capture.ended_at_ms,
                   "durationMs": capture.ended_at_ms - capture.started_at_ms},
        "steps": len(capture.calls),
        "memory": {"mode": "disabled"},
        "trace": {"artifact": trace.to_wire(), "eventCount": len(capture.events) + 2,
                  "modelCallCount": len(capture.calls)},
        "termination": capture.termination,
        "executorCapture": executor.to_wire(),
        "modelSettlement": settlement.to_wire(),
        "taskOutcome": outcome.to_wire(),
        "benchmarkResult": result.to_wire(),
    })
    run_receipt_matches(run, receipt, plan)
    return run
