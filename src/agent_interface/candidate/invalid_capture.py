"""The record an evaluator writes instead of a run receipt when evidence is incomplete.

The specification: if the protected evaluator cannot recover complete usage and trace
evidence, it marks the cell as invalid capture instead of minting a zero-usage receipt.
:class:`CandidateInvalidCapture` is that mark, as a document (it has no reference
counterpart): which cell and plan it is for, how the process ended (when that is known),
which evidence is missing (``missing``) and why (``reasons``, each naming the evidence
and a stable code), and the evidence that *was* captured. It is sealed like a receipt
(``digest`` is the RFC 8785 digest of the rest) but is never a receipt.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from agent_interface.candidate.artifacts import AgentCandidateArtifactRef
from agent_interface.candidate.receipts import AgentCandidateTermination
from agent_interface.candidate.sealed import SealedRecord
from agent_interface.core.canonical import Sha256Digest
from agent_interface.core.contract_limits import Utf16Length
from agent_interface.core.model import WireList, WireModel
from agent_interface.core.registry import register_wire_models

__all__ = [
    "CandidateCaptureGap",
    "CandidateCaptureGapCode",
    "CandidateInvalidCapture",
    "CandidateMissingEvidence",
]

CandidateMissingEvidence = Literal[
    "usage", "trace", "termination", "executorCapture", "taskOutcome", "benchmarkResult"
]
"""Evidence a run receipt needs that could not be recovered."""

CandidateCaptureGapCode = Literal[
    "model_call_unsettled",
    "no_model_calls",
    "termination_unknown",
    "output_truncated",
    "task_output_empty",
    "task_output_too_large",
    "workspace_capture_failed",
    "workspace_too_large",
    "workspace_entry_unsupported",
    "grader_timeout",
    "grader_output_truncated",
    "grader_failed",
]
"""Why evidence is incomplete: a model call was still open at the end, no model call was
made (usage cannot be told from zero), the process's end is unknown, its output was cut
at the capture bound, the task's output is empty or over the task's bound; the task
workspace could not be captured, was over its bound or held an entry a Git diff cannot
carry (a link, a device, a ``.git`` path); the task's grader ran out of time, flooded its
output bound or could not run."""


class CandidateCaptureGap(WireModel):
    """One reason: the evidence it leaves incomplete and a stable code."""

    evidence: CandidateMissingEvidence
    code: CandidateCaptureGapCode
    message: Annotated[str, Utf16Length(min=1, max=1024)]


class CandidateInvalidCapture(SealedRecord):
    """A cell marked invalid capture: no run receipt, and what is missing."""

    kind: Literal["agent-interface.candidate-invalid-capture"]
    bundle_digest: Sha256Digest
    run_cell_digest: Sha256Digest
    execution_plan_digest: Sha256Digest
    materialization_receipt_digest: Sha256Digest
    termination: AgentCandidateTermination | None = None
    missing: Annotated[WireList[CandidateMissingEvidence], Field(min_length=1)]
    reasons: Annotated[WireList[CandidateCaptureGap], Field(min_length=1)]
    executor_capture: AgentCandidateArtifactRef | None = None
    trace: AgentCandidateArtifactRef | None = None
    digest: Sha256Digest


register_wire_models(CandidateInvalidCapture=CandidateInvalidCapture)
