"""Do a bundle, its plan and its receipts belong together?

The receipt schemas check that a receipt agrees with the plan it embeds. They cannot
know whether that plan launches what the verified bundle says, whether the profile plan
came from the bundle's profile, or whether a run receipt belongs to a given
materialization receipt. These checks do, and are pure (no I/O):

* :func:`plan_binding_issues` compares an execution plan and profile activation with a
  :class:`~agent_interface.candidate.verification_result.CandidateVerification`: the
  launch (executable, args, cwd, instruction delivery, every bundle ``env`` entry, and
  only evaluator-owned additions), the profile plan's ``sourceProfileDigest`` and
  harness, the activation's own digest, and every carried digest recomputed;
* :func:`run_receipt_matches` refuses a run receipt that does not belong to the
  materialization receipt and plan it is presented with: digests of all three
  recomputed, bundle, run cell, materialization receipt and plan named by digest, the
  settlement bound to the plan's model and grant, a timeout equal to the plan's limit,
  and the router's ``usageWithinLimits`` consistent with the plan's limits.

Both report every broken binding at once, as ``ContractError`` issues with JSON Pointers
into the document named by ``subject``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agent_interface.candidate.execution_plan import (
    TANGLE_CANDIDATE_TASK_FILE,
    AgentCandidateExecutionPlanEvidence,
)
from agent_interface.candidate.launch import TANGLE_CANDIDATE_TASK_PATH
from agent_interface.candidate.plan_builders import (
    EVALUATOR_LAUNCH_ENV_NAMES,
    activation_digest,
    planned_launch,
)
from agent_interface.candidate.profile_plan import AgentCandidateProfileActivation
from agent_interface.candidate.receipts import (
    AgentCandidateMaterializationReceipt,
    AgentCandidateRunReceipt,
    AgentCandidateTimeoutTermination,
)
from agent_interface.candidate.verification_result import CandidateVerification
from agent_interface.core.errors import ContractError, ContractIssue

__all__ = ["check_plan_binding", "plan_binding_issues", "run_receipt_issues", "run_receipt_matches"]


def _digest_issue(check: Callable[[], Any], pointer: str, issues: list[ContractIssue]) -> None:
    try:
        check()
    except ContractError as error:
        for issue in error.issues:
            issues.append(ContractIssue(pointer + (issue.path if issue.path != "/" else ""), issue.code, issue.message))


def plan_binding_issues(
    result: CandidateVerification,
    plan: AgentCandidateExecutionPlanEvidence,
    activation: AgentCandidateProfileActivation,
) -> list[ContractIssue]:
    """Every way ``plan`` and ``activation`` fail to launch and configure the verified bundle.

    Pointers are into the materialization context (``/executionPlan/...``,
    ``/profileActivation/...``).
    """
    issues: list[ContractIssue] = []
    _digest_issue(plan.verify_digest, "/executionPlan", issues)
    _digest_issue(plan.material.run_cell.verify_digest, "/executionPlan/material/runCell", issues)
    _digest_issue(activation.profile_plan.verify_digest, "/profileActivation/profilePlan", issues)
    wire = activation.to_wire()
    if activation.digest != activation_digest(wire):
        issues.append(ContractIssue(
            "/profileActivation/digest", "activation_digest_mismatch",
            "the activation digest is not the RFC 8785 digest of the activation without it",
        ))
    source = activation.profile_plan.material.source_profile_digest
    if result.profile_digest is None or source != result.profile_digest:
        issues.append(ContractIssue(
            "/profileActivation/profilePlan/material/sourceProfileDigest", "profile_plan_source_mismatch",
            "the profile plan was not made from the verified bundle's profile",
        ))
    if result.execution is None:
        issues.append(ContractIssue(
            "/executionPlan/material/launch", "verification_lacks_launch",
            "the verification result does not record the bundle's launch; verify the bundle again",
        ))
        return issues
    material = plan.material
    execution = result.execution.to_wire()
    root = material.workspaces.candidate_root or "/"
    executable, args = planned_launch(execution, root)
    launch = material.launch.to_wire()
    base = "/executionPlan/material"
    if launch["executable"] != executable or launch["args"] != args:
        issues.append(ContractIssue(
            f"{base}/launch", "plan_launch_mismatch", "the plan does not launch the verified bundle's command",
        ))
    if launch["cwd"] != execution["cwd"]:
        issues.append(ContractIssue(f"{base}/launch/cwd", "plan_cwd_mismatch",
                                    "the plan's working directory is not the bundle's"))
    if material.instruction_delivery.to_wire() != execution["instructionDelivery"]:
        issues.append(ContractIssue(f"{base}/instructionDelivery", "plan_delivery_mismatch",
                                    "the plan delivers the instruction another way than the bundle says"))
    bundle_env = execution.get("env") or {}
    for name, value in bundle_env.items():
        if launch["env"].get(name) != value:
            issues.append(ContractIssue(f"{base}/launch/env/{name}", "plan_env_mismatch",
                                        "the plan changes or drops a variable of the bundle"))
    for name in launch["env"]:
        if name not in bundle_env and name not in EVALUATOR_LAUNCH_ENV_NAMES:
            issues.append(ContractIssue(f"{base}/launch/env/{name}", "plan_env_added",
                                        "the plan adds a variable the bundle does not set"))
    delivers_file = execution["instructionDelivery"]["kind"] == "utf8-file"
    task_path = launch["env"].get(TANGLE_CANDIDATE_TASK_PATH)
    if delivers_file != (task_path == {"kind": "public", "value": TANGLE_CANDIDATE_TASK_FILE}):
        issues.append(ContractIssue(f"{base}/launch/env/{TANGLE_CANDIDATE_TASK_PATH}", "plan_task_path",
                                    "the task path is exposed exactly when the instruction is a file"))
    if activation.profile_plan.material.harness != result.harness:
        issues.append(ContractIssue("/profileActivation/profilePlan/material/harness", "profile_plan_harness",
                                    "the profile plan targets another harness than the bundle"))
    return issues


def check_plan_binding(
    result: CandidateVerification,
    plan: AgentCandidateExecutionPlanEvidence,
    activation: AgentCandidateProfileActivation,
) -> None:
    """Refuse (``ContractError``, every issue) unless :func:`plan_binding_issues` is empty."""
    issues = plan_binding_issues(result, plan, activation)
    if issues:
        raise ContractError(issues, subject="materialization context")


def _within_limits(receipt: AgentCandidateRunReceipt, plan: AgentCandidateExecutionPlanEvidence) -> bool:
    limits = plan.material.limits
    usage = receipt.model_settlement.material.usage
    total_ok = limits.max_total_tokens is None or usage.input_tokens + usage.output_tokens <= limits.max_total_tokens
    return (
        usage.model_calls <= limits.max_model_calls
        and usage.input_tokens <= limits.max_input_tokens
        and usage.output_tokens <= limits.max_output_tokens
        and total_ok
    )


def run_receipt_issues(
    run_receipt: AgentCandidateRunReceipt,
    materialization_receipt: AgentCandidateMaterializationReceipt,
    plan: AgentCandidateExecutionPlanEvidence,
) -> list[ContractIssue]:
    """Every way the three fail to belong together (pointers into the run receipt)."""
    issues: list[ContractIssue] = []
    _digest_issue(run_receipt.verify_digest, "", issues)
    _digest_issue(materialization_receipt.verify_digest, "/materializationReceiptDigest", issues)
    _digest_issue(plan.verify_digest, "/executionPlanDigest", issues)
    for pointer, evidence in (
        ("/modelSettlement", run_receipt.model_settlement),
        ("/taskOutcome", run_receipt.task_outcome),
        ("/benchmarkResult", run_receipt.benchmark_result),
    ):
        _digest_issue(evidence.verify_digest, pointer, issues)
    material = plan.material
    settlement = run_receipt.model_settlement.material
    checks: list[tuple[bool, str, str, str]] = [
        (materialization_receipt.execution_plan.to_wire() == plan.to_wire(), "/executionPlanDigest",
         "plan_not_materialized", "the materialization receipt embeds another execution plan"),
        (run_receipt.execution_plan_digest == plan.digest, "/executionPlanDigest",
         "run_plan_mismatch", "the run receipt names another execution plan"),
        (run_receipt.materialization_receipt_digest == materialization_receipt.digest,
         "/materializationReceiptDigest", "run_materialization_mismatch",
         "the run receipt names another materialization receipt"),
        (run_receipt.bundle_digest == materialization_receipt.bundle_digest
         and run_receipt.bundle_digest == material.run_cell.bundle_digest, "/bundleDigest",
         "run_bundle_mismatch", "the run receipt names another bundle"),
        (run_receipt.run_cell_digest == material.run_cell.digest, "/runCellDigest",
         "run_cell_mismatch", "the run receipt names another run cell than the plan"),
        (run_receipt.memory.mode == material.memory.mode, "/memory/mode",
         "run_memory_mismatch", "the run's memory mode is not the plan's"),
        (settlement.resolved.to_wire() == material.model.resolved.to_wire(),
         "/modelSettlement/material/resolved", "settlement_model_mismatch",
         "the settlement is for another model than the plan resolves"),
        (settlement.grant_digest == material.model.access.grant_digest,
         "/modelSettlement/material/grantDigest", "settlement_grant_mismatch",
         "the settlement is for another model grant than the plan's"),
        (not settlement.usage_within_limits or _within_limits(run_receipt, plan),
         "/modelSettlement/material/usageWithinLimits", "settlement_limits_inconsistent",
         "the settlement says usage was within limits, but it exceeds the plan's limits"),
    ]
    termination = run_receipt.termination
    if isinstance(termination, AgentCandidateTimeoutTermination):
        checks.append((termination.timeout_ms == material.limits.timeout_ms, "/termination/timeoutMs",
                       "run_timeout_mismatch", "the run timed out at another limit than the plan's"))
    for ok, pointer, code, message in checks:
        if not ok:
            issues.append(ContractIssue(pointer, code, message))
    return issues


def run_receipt_matches(
    run_receipt: AgentCandidateRunReceipt,
    materialization_receipt: AgentCandidateMaterializationReceipt,
    plan: AgentCandidateExecutionPlanEvidence,
) -> None:
    """Refuse (``ContractError``, every issue) unless the three belong together."""
    issues = run_receipt_issues(run_receipt, materialization_receipt, plan)
    if issues:
        raise ContractError(issues, subject="run receipt")
