"""Execution preparation receipts: schema rules, build, validation issues and coverage."""

from __future__ import annotations

from typing import Any

import pytest

from agent_interface.core.canonical import canonical_digest
from agent_interface.core.errors import ContractError
from agent_interface.environment.preparation import (
    AgentExecutionPreparationValidationError,
    assert_agent_execution_preparation_receipt,
    build_agent_execution_preparation_receipt,
    validate_agent_execution_preparation_receipt,
)
from agent_interface.environment.preparation_receipt import (
    AgentExecutionPreparationAxisResult,
    AgentExecutionPreparationReasoningEffort,
    AgentExecutionPreparationReceipt,
)
from agent_interface.environment.workspace_lease import build_agent_workspace_lease_record
from agent_interface.profile.canonical import canonical_agent_profile_digest
from agent_interface.profile.materialization import profile_materialization_requests


def sha(digit: str) -> str:
    return "sha256:" + digit * 64


POLICY = {
    "kind": "provider-declared",
    "name": "agent-runtime/local-private-workspace-source",
    "version": 1,
    "digest": sha("7"),
}
WORKER: dict[str, Any] = {
    "name": "worker",
    "model": {"default": "openai/gpt-5.4", "provider": "openai", "reasoningEffort": "high"},
    "harness": "codex",
    "tools": {"shell": True, "web": False},
}


def lease_base(policy: dict[str, Any] | None = None, expires_at_ms: int = 3_000) -> dict[str, Any]:
    return {
        "kind": "agent-workspace-lease",
        "schemaVersion": 1,
        "leaseId": "lease-1",
        "ownerId": "discovery-run-1",
        "workspace": {
            "provider": "agent-runtime/local-private-workspace",
            "root": "/private/workspaces/allocation-1",
            "identityDigest": sha("2"),
        },
        "isolation": "per-run",
        "sourceSnapshotDigest": sha("8"),
        "sourceSnapshotPolicy": policy or POLICY,
        "createdAtMs": 100,
        "updatedAtMs": 200,
        "expiresAtMs": expires_at_ms,
        "cleanupAttempts": 0,
    }


def sealed_lease(**options: Any) -> Any:
    return build_agent_workspace_lease_record(
        {
            **lease_base(**options),
            "phase": "workspace-sealed",
            "preparedWorkspaceDigest": sha("9"),
            "profileActivationDigest": sha("3"),
        }
    )


def bound_lease(
    receipt: AgentExecutionPreparationReceipt,
    *,
    prepared: str | None = None,
    execution: str | None = None,
    **options: Any,
) -> Any:
    return build_agent_workspace_lease_record(
        {
            **lease_base(**options),
            "phase": "execution-bound",
            "preparedWorkspaceDigest": prepared or sha("9"),
            "profileActivationDigest": sha("3"),
            "executionPreparationDigest": execution or receipt.digest,
        }
    )


def coverage(profile: Any, **overrides: Any) -> list[dict[str, Any]]:
    return [
        {
            "axis": request.axis,
            "path": request.path,
            "disposition": "behavior",
            "owner": "executor",
            "mechanism": "prepared-profile",
            **overrides,
        }
        for request in profile_materialization_requests(profile)
    ]


def build(
    authored: Any = None,
    effective: Any = None,
    axis_results: list[dict[str, Any]] | None = None,
    reasoning: dict[str, Any] | None = None,
    lease: Any = None,
) -> AgentExecutionPreparationReceipt:
    authored = WORKER if authored is None else authored
    effective = authored if effective is None else effective
    model = effective.get("model", {})
    resolved: dict[str, Any] = {"requested": model.get("default", ""), "resolved": "gpt-5.4-2026-07-01"}
    if "provider" in model:
        resolved["provider"] = model["provider"]
    effort = model.get("reasoningEffort") or authored.get("model", {}).get("reasoningEffort")
    if effort is not None:
        resolved["reasoningEffort"] = reasoning or {"requested": effort, "resolved": effort, "fidelity": "exact"}
    return build_agent_execution_preparation_receipt(
        preparation_id="prep-1",
        request_digest=sha("1"),
        authored_profile=authored,
        effective_profile=effective,
        backend="cli-bridge",
        harness="codex",
        harness_version="0.40.0",
        resolved_model=resolved,
        workspace_lease=lease or sealed_lease(),
        profile_activation={"digest": sha("3")},
        axis_results=coverage(authored) if axis_results is None else axis_results,
        execution_plan_digest=sha("4"),
        materializer={"name": "agent-profile-materialize", "version": "0.9.3"},
        expires_at_ms=2_000,
        now_ms=1_000,
    )


def rehash(receipt: AgentExecutionPreparationReceipt, **replacement: Any) -> dict[str, Any]:
    material = {**receipt.to_wire(), **replacement}
    del material["digest"]
    return {**material, "digest": canonical_digest(material)}


def options(bound_to: Any, **overrides: Any) -> dict[str, Any]:
    """Validation options for ``bound_to``, with a lease bound to it."""
    parsed = bound_to if isinstance(bound_to, AgentExecutionPreparationReceipt) else None
    return {
        "receipt": bound_to,
        "request_digest": sha("1"),
        "authored_profile": WORKER,
        "effective_profile": WORKER,
        "execution_plan_digest": sha("4"),
        "profile_activation": {"digest": sha("3")},
        "workspace_lease": bound_lease(parsed or AgentExecutionPreparationReceipt.parse_wire(bound_to)),
        "now_ms": 1_000,
        **overrides,
    }


def codes(receipt: Any, **overrides: Any) -> list[str]:
    result = validate_agent_execution_preparation_receipt(**options(receipt, **overrides))
    assert result.ok is (not result.issues)
    return [issue.code for issue in result.issues]


# -- schemas -------------------------------------------------------------------------------------


def test_axis_results_keep_launch_arguments_and_credentials_out() -> None:
    row = {"axis": "tools", "disposition": "behavior", "owner": "executor", "path": "/tools/shell"}
    assert AgentExecutionPreparationAxisResult.parse_wire({**row, "mechanism": "prepared-profile"})
    for mechanism in ("node --inspect ./materialize.js", "sk-12345678901", "-flag", "a" * 201):
        with pytest.raises(ContractError):
            AgentExecutionPreparationAxisResult.parse_wire({**row, "mechanism": mechanism})
    unsupported = {**row, "mechanism": "m", "disposition": "unsupported"}
    with pytest.raises(ContractError):
        AgentExecutionPreparationAxisResult.parse_wire(
            {**unsupported, "reason": "authorization failed: Bearer credential-value"}
        )
    with pytest.raises(ContractError):  # overridden/unsupported need a reason
        AgentExecutionPreparationAxisResult.parse_wire(unsupported)
    with pytest.raises(ContractError):  # behavior/control refuse one
        AgentExecutionPreparationAxisResult.parse_wire({**row, "mechanism": "m", "reason": "why"})
    for path in ("tools/shell", "/a~2", "/a~", "/\ud800"):
        with pytest.raises(ContractError):
            AgentExecutionPreparationAxisResult.parse_wire({**row, "mechanism": "m", "path": path})
    ceiling = {**row, "axis": "modelMaxTotalOutputTokens", "path": "/model/maxTotalOutputTokens"}
    assert AgentExecutionPreparationAxisResult.parse_wire({**ceiling, "mechanism": "m"})


def test_reasoning_fidelity_is_exact_or_clamped_down() -> None:
    parse = AgentExecutionPreparationReasoningEffort.parse_wire
    assert parse({"requested": "high", "resolved": "medium", "fidelity": "clamped"})
    assert parse({"requested": "high", "fidelity": "unsupported"})
    for bad in (
        {"requested": "high", "resolved": "medium", "fidelity": "exact"},
        {"requested": "medium", "resolved": "high", "fidelity": "clamped"},
        {"requested": "high", "resolved": "high", "fidelity": "clamped"},
        {"requested": "high", "resolved": "high", "fidelity": "unsupported"},
        {"requested": "high", "fidelity": "exact"},
    ):
        with pytest.raises(ContractError):
            parse(bad)


def test_receipt_schema_checks_digest_order_and_uniqueness() -> None:
    receipt = build()
    assert AgentExecutionPreparationReceipt.parse_wire(receipt.to_wire()) == receipt
    with pytest.raises(ContractError):
        AgentExecutionPreparationReceipt.parse_wire({**receipt.to_wire(), "backend": "other"})
    rows = list(receipt.to_wire()["axisResults"])
    for reordered in (rows[::-1], [rows[0], *rows]):
        with pytest.raises(ContractError):
            AgentExecutionPreparationReceipt.parse_wire(rehash(receipt, axisResults=reordered))
    with pytest.raises(ContractError):
        AgentExecutionPreparationReceipt.parse_wire(rehash(receipt, expiresAtMs=0))


# -- build ---------------------------------------------------------------------------------------


def test_build_from_a_sealed_lease_then_validate_after_binding() -> None:
    receipt = build()
    wire = receipt.to_wire()
    assert wire["workspace"] == {
        "leaseId": "lease-1",
        "provider": "agent-runtime/local-private-workspace",
        "identityDigest": sha("2"),
        "isolation": "per-run",
        "sourceSnapshotDigest": sha("8"),
        "sourceSnapshotPolicy": POLICY,
        "preparedWorkspaceDigest": sha("9"),
        "profileActivationDigest": sha("3"),
    }
    assert all(row.path is not None for row in receipt.axis_results)
    assert receipt.authored_profile_digest == canonical_agent_profile_digest(WORKER)
    result = validate_agent_execution_preparation_receipt(**options(receipt))
    assert result.ok and result.receipt == receipt and result.issues == ()
    assert assert_agent_execution_preparation_receipt(**options(receipt.to_wire())) == receipt


def test_authored_and_effective_profiles_are_joined_with_overrides() -> None:
    authored = {"name": "worker", "harness": "pi", "model": {"default": "tangle/glm-5.2", "provider": "tangle-router"}}
    effective = {**authored, "harness": "codex", "model": {"default": "anthropic/claude-opus-4-1", "provider": "anthropic"}}
    overridden = {"harness", "modelDefault", "modelProvider"}
    rows = [
        {**row, "disposition": "overridden", "reason": "execution request selected a different route"}
        if row["axis"] in overridden
        else row
        for row in coverage(authored)
    ]
    receipt = build(authored, effective, rows)
    assert receipt.authored_profile_digest != receipt.effective_profile_digest
    assert receipt.effective_profile_digest == canonical_agent_profile_digest(effective)
    assert [r.axis for r in receipt.axis_results if r.disposition == "overridden"] == [
        "modelDefault",
        "modelProvider",
        "harness",
    ]
    with pytest.raises(AgentExecutionPreparationValidationError) as caught:
        build(authored, effective)  # unchanged dispositions for changed paths
    assert {i.code for i in caught.value.issues} == {"invalid_disposition"}


def test_strict_profiles_refuse_unsupported_leaves_partial_ones_allow_them() -> None:
    strict = {"tools": {"shell": True}, "model": {"maxTotalOutputTokens": 100}}
    unsupported = coverage(strict, disposition="unsupported", reason="backend has no such control")
    with pytest.raises(AgentExecutionPreparationValidationError, match="failOnError=false"):
        build(strict, axis_results=unsupported)
    partial = {**strict, "resources": {"failOnError": False}}
    rows = [
        {**row, "disposition": "unsupported", "reason": "backend cannot bound total output"}
        if row["axis"] == "modelMaxTotalOutputTokens"
        else row
        for row in coverage(partial)
    ]
    assert build(partial, axis_results=rows)


def test_every_token_ceiling_needs_coverage_at_its_exact_path() -> None:
    profile = {"model": {"maxVisibleOutputTokens": 1, "maxReasoningTokens": 2, "maxTotalOutputTokens": 3}}
    rows = coverage(profile)
    assert [r["path"] for r in rows] == [
        "/model/maxVisibleOutputTokens",
        "/model/maxReasoningTokens",
        "/model/maxTotalOutputTokens",
    ]
    with pytest.raises(AgentExecutionPreparationValidationError) as caught:
        build(profile, axis_results=rows[:2])
    assert [(i.code, i.path) for i in caught.value.issues] == [
        ("missing_coverage", "/model/maxTotalOutputTokens")
    ]


def test_explicit_empty_values_that_disappear_need_overrides() -> None:
    authored = {"prompt": {"systemPrompt": "", "instructions": []}, "tools": {}, "metadata": {"nil": None}}
    with pytest.raises(AgentExecutionPreparationValidationError, match="changed between authored"):
        build(authored, {}, coverage(authored))
    assert build(authored, {}, coverage(authored, disposition="overridden", reason="executor removed it"))


def test_explicit_empty_model_request_is_preserved() -> None:
    profile = {"model": {"default": "", "provider": ""}}
    receipt = build(profile)
    assert receipt.resolved_model.requested == "" and receipt.resolved_model.provider == ""
    assert [(r.axis, r.path) for r in receipt.axis_results] == [
        ("modelDefault", "/model/default"),
        ("modelProvider", "/model/provider"),
    ]


def test_a_preparation_cannot_outlive_its_lease() -> None:
    with pytest.raises(AgentExecutionPreparationValidationError, match="outlive its workspace lease"):
        build(lease=sealed_lease(expires_at_ms=1_500))


def test_build_needs_a_sealed_lease() -> None:
    receipt = build()
    with pytest.raises(AgentExecutionPreparationValidationError):
        build(lease=bound_lease(receipt))


# -- validation ----------------------------------------------------------------------------------


def test_missing_and_unrequested_coverage() -> None:
    receipt = build()
    rows = receipt.to_wire()["axisResults"]
    missing = rehash(receipt, axisResults=[r for r in rows if r["path"] != "/tools/shell"])
    assert "missing_coverage" in codes(missing)
    extra = {"axis": "metadata", "path": "/metadata/unrequested", "disposition": "control", "owner": "runtime", "mechanism": "runtime-metadata"}
    assert "unrequested_coverage" in codes(rehash(receipt, axisResults=[*rows, extra]))


def test_duplicate_and_conflicting_coverage_after_resolving_an_omitted_path() -> None:
    receipt = build()
    rows = receipt.to_wire()["axisResults"]
    name = next(r for r in rows if r["axis"] == "name")
    pathless = {k: v for k, v in name.items() if k != "path"}
    assert "duplicate_coverage" in codes(rehash(receipt, axisResults=[pathless, *rows]))
    conflicting = {**pathless, "disposition": "overridden", "reason": "different value"}
    assert "conflicting_coverage" in codes(rehash(receipt, axisResults=[conflicting, *rows]))


def test_ambiguous_pathless_coverage() -> None:
    receipt = build()
    rows = receipt.to_wire()["axisResults"]
    tools = {"axis": "tools", "disposition": "behavior", "owner": "executor", "mechanism": "m"}
    assert "ambiguous_coverage" in codes(rehash(receipt, axisResults=[*rows[:5], tools, *rows[5:]]))


def test_self_digest_tampering_and_rebound_digests() -> None:
    receipt = build()
    assert codes(rehash(receipt, requestDigest=sha("9"))) == ["digest_mismatch"]
    tampered = {**receipt.to_wire(), "backend": "different-backend"}
    result = validate_agent_execution_preparation_receipt(**options(receipt, receipt=tampered))
    assert not result.ok and {i.code for i in result.issues} == {"invalid_receipt"}
    rebind = validate_agent_execution_preparation_receipt(
        **options(receipt, workspace_lease=bound_lease(receipt, prepared=sha("0")))
    )
    assert ("expectation_mismatch", "prepared workspace snapshot does not match the prepared execution") in [
        (i.code, i.message) for i in rebind.issues
    ]


def test_the_bound_lease_must_name_this_receipt() -> None:
    receipt = build()
    assert codes(receipt, workspace_lease=sealed_lease()) == ["workspace_not_execution_bound"]
    assert codes(receipt, workspace_lease=bound_lease(receipt, execution=sha("0"))) == [
        "execution_binding_mismatch"
    ]


def test_snapshot_policy_is_bound() -> None:
    receipt = build()
    lease = bound_lease(receipt, policy={**POLICY, "version": 2})
    result = validate_agent_execution_preparation_receipt(**options(receipt, workspace_lease=lease))
    assert "source snapshot policy version does not match the prepared execution" in [
        i.message for i in result.issues
    ]


def test_expiry_and_clock() -> None:
    receipt = build()
    assert codes(receipt, now_ms=receipt.expires_at_ms) == ["expired"]
    assert codes(receipt, now_ms=-1) == ["expectation_mismatch"]
    assert codes(receipt, now_ms=True) == ["expectation_mismatch"]


def test_expectations_and_model_fidelity() -> None:
    receipt = build()
    assert codes(receipt, backend="other", harness="claude-code") == [
        "expectation_mismatch",
        "expectation_mismatch",
    ]
    assert codes(receipt, profile_activation=sha("5")) == ["digest_mismatch"]
    changed = {**WORKER, "model": {**WORKER["model"], "default": "other"}}
    result = validate_agent_execution_preparation_receipt(**options(receipt, effective_profile=changed))
    assert ("model_fidelity", "/model/default") in [(i.code, i.path) for i in result.issues]


def test_reasoning_fidelity_must_match_coverage() -> None:
    clamped = {"requested": "high", "resolved": "medium", "fidelity": "clamped"}
    with pytest.raises(AgentExecutionPreparationValidationError, match="clamped reasoning fidelity"):
        build(reasoning=clamped)
    rows = [
        {**row, "disposition": "overridden", "reason": "model caps effort at medium"}
        if row["axis"] == "modelReasoningEffort"
        else row
        for row in coverage(WORKER)
    ]
    assert build(reasoning=clamped, axis_results=rows)
    unsupported = {"requested": "high", "fidelity": "unsupported"}
    with pytest.raises(AgentExecutionPreparationValidationError) as caught:
        build(reasoning=unsupported)
    assert "model_fidelity" in {i.code for i in caught.value.issues}


def test_invalid_inputs_are_issues_not_exceptions() -> None:
    receipt = build()
    bad = validate_agent_execution_preparation_receipt(**options(receipt, receipt="not json"))
    assert not bad.ok and {i.code for i in bad.issues} == {"invalid_receipt"}
    bad = validate_agent_execution_preparation_receipt(**options(receipt, workspace_lease={"kind": 1}))
    assert {i.code for i in bad.issues} == {"invalid_workspace_lease"}
    bad = validate_agent_execution_preparation_receipt(**options(receipt, authored_profile={"harness": "x"}))
    assert {i.code for i in bad.issues} == {"invalid_profile"}
    with pytest.raises(AgentExecutionPreparationValidationError) as caught:
        assert_agent_execution_preparation_receipt(**options(receipt, authored_profile={"harness": "x"}))
    assert isinstance(caught.value, ContractError)
    assert caught.value.issues[0].code == "invalid_profile"
