"""Building and validating execution preparation receipts (``agent-execution-preparation.ts``).

The authored profile (before executor overrides) and the effective profile (after them) are
measured separately and joined through one :class:`AgentExecutionPreparationReceipt`:

* :func:`build_agent_execution_preparation_receipt` builds, self-hashes and cross-checks a
  receipt from a ``workspace-sealed`` lease, before compute;
* :func:`validate_agent_execution_preparation_receipt` checks a receipt against the lease
  once it is ``execution-bound`` to that receipt: structure, digests, expectations, expiry,
  model fidelity and exact path coverage. It returns every problem as a typed
  :class:`AgentExecutionPreparationValidationIssue` and never raises for a bad receipt;
* :func:`assert_agent_execution_preparation_receipt` raises
  :class:`AgentExecutionPreparationValidationError` with those issues instead.

Coverage: every path requested by either profile (see
:func:`profile_materialization_requests`) needs exactly one row. A path whose value changed
between the profiles must be ``overridden`` or ``unsupported``; an unchanged one may not be
``overridden`` (except a clamped reasoning effort); ``unsupported`` is allowed only when the
authored profile sets ``resources.failOnError`` to ``false``, so a strict profile refuses an
unsupported token ceiling or any other leaf instead of accepting it silently.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from agent_interface.core.canonical import (
    MAX_SAFE_INTEGER,
    canonical_digest,
    utf16_sort_key,
)
from agent_interface.core.errors import CanonicalJsonError, ContractError
from agent_interface.core.model import WireModel
from agent_interface.environment.preparation_coverage import (
    AgentExecutionPreparationValidationIssue,
    AgentExecutionPreparationValidationIssueCode,
    check_axis_coverage,
    check_harness_and_model,
    preparation_issue,
)
from agent_interface.environment.preparation_receipt import (
    AgentExecutionPreparationAxisResult,
    AgentExecutionPreparationMaterializer,
    AgentExecutionPreparationReceipt,
    AgentExecutionPreparationResolvedModel,
    agent_execution_preparation_axis_result_key,
)
from agent_interface.environment.workspace_lease import AgentWorkspaceLeaseRecord
from agent_interface.profile.agent_profile import AgentProfile
from agent_interface.profile.canonical import canonical_agent_profile_digest, coerce_agent_profile
from agent_interface.profile.harness import HarnessType
from agent_interface.profile.materialization import (
    AGENT_PROFILE_MATERIALIZATION_AXES,
    profile_materialization_requests,
)

__all__ = [
    "AgentExecutionPreparationValidationError",
    "AgentExecutionPreparationValidationResult",
    "assert_agent_execution_preparation_receipt",
    "build_agent_execution_preparation_receipt",
    "validate_agent_execution_preparation_receipt",
]


@dataclass(frozen=True, slots=True)
class AgentExecutionPreparationValidationResult:
    """``ok`` with the validated ``receipt`` and no issues, or not ``ok`` with every issue."""

    ok: bool
    receipt: AgentExecutionPreparationReceipt | None
    issues: tuple[AgentExecutionPreparationValidationIssue, ...]


class AgentExecutionPreparationValidationError(ContractError):
    """A preparation receipt was refused; ``issues`` are the typed validation issues."""

    issues: tuple[AgentExecutionPreparationValidationIssue, ...]

    def __init__(self, issues: Iterable[AgentExecutionPreparationValidationIssue]) -> None:
        super().__init__(tuple(issues), subject="AgentExecutionPreparationReceipt")


ProfileInput = AgentProfile | Mapping[str, Any] | str | bytes
LeaseInput = AgentWorkspaceLeaseRecord | Mapping[str, Any]


def _activation_digest(profile_activation: Any) -> Any:
    # Anything carrying the activation digest: evidence, its wire form, or the digest itself.
    if isinstance(profile_activation, str):
        return profile_activation
    if isinstance(profile_activation, Mapping):
        return profile_activation.get("digest")
    return getattr(profile_activation, "digest", None)


def _wire(value: Any) -> Any:
    return value.to_wire() if isinstance(value, WireModel) else value


def _clean_axis_result(row: Any, path: Any) -> Any:
    if not isinstance(row, Mapping):
        return row
    cleaned = {key: row.get(key) for key in ("axis", "disposition", "owner", "mechanism")}
    if row.get("evidenceDigest") is not None:
        cleaned["evidenceDigest"] = row["evidenceDigest"]
    if path is not None:
        cleaned["path"] = path
    if row.get("reason") is not None:
        cleaned["reason"] = row["reason"]
    return cleaned


def _clean_resolved_model(model: Any) -> Any:
    if not isinstance(model, Mapping):
        return model
    cleaned = {"requested": model.get("requested"), "resolved": model.get("resolved")}
    if model.get("provider") is not None:
        cleaned["provider"] = model["provider"]
    effort = model.get("reasoningEffort")
    if isinstance(effort, Mapping):
        cleaned_effort = {"requested": effort.get("requested")}
        if effort.get("resolved") is not None:
            cleaned_effort["resolved"] = effort["resolved"]
        cleaned_effort["fidelity"] = effort.get("fidelity")
        cleaned["reasoningEffort"] = cleaned_effort
    elif effort is not None:
        cleaned["reasoningEffort"] = effort
    return cleaned


_AXIS_ORDER: dict[str, int] = {axis: index for index, axis in enumerate(AGENT_PROFILE_MATERIALIZATION_AXES)}


def _row_order(row: Any) -> tuple[int, bytes]:
    axis = row.get("axis") if isinstance(row, Mapping) else None
    path = row.get("path") if isinstance(row, Mapping) else None
    return (
        _AXIS_ORDER.get(axis, MAX_SAFE_INTEGER) if isinstance(axis, str) else MAX_SAFE_INTEGER,
        utf16_sort_key(path) if isinstance(path, str) else b"",
    )


def _paths_by_axis(*profiles: AgentProfile) -> dict[str, list[str]]:
    expected: dict[str, tuple[str, str]] = {}
    for profile in profiles:
        for request in profile_materialization_requests(profile):
            key = agent_execution_preparation_axis_result_key(request.axis, request.path)
            expected[key] = (request.axis, request.path)
    by_axis: dict[str, list[str]] = {}
    for axis, path in expected.values():
        by_axis.setdefault(axis, []).append(path)
    return by_axis


def _normalize_axis_results(
    rows: Iterable[AgentExecutionPreparationAxisResult | Mapping[str, Any]],
    authored: AgentProfile,
    effective: AgentProfile,
) -> list[Any]:
    by_axis = _paths_by_axis(authored, effective)
    normalized = []
    for row in rows:
        wire = _wire(row)
        axis = wire.get("axis") if isinstance(wire, Mapping) else None
        possible = by_axis.get(axis, []) if isinstance(axis, str) else []
        path = wire.get("path") if isinstance(wire, Mapping) else None
        if path is None and len(possible) == 1:
            path = possible[0]
        normalized.append(_clean_axis_result(wire, path))
    return sorted(normalized, key=_row_order)


def build_agent_execution_preparation_receipt(
    *,
    preparation_id: str,
    request_digest: str,
    authored_profile: ProfileInput,
    effective_profile: ProfileInput,
    backend: str,
    harness: HarnessType,
    harness_version: str,
    resolved_model: AgentExecutionPreparationResolvedModel | Mapping[str, Any],
    workspace_lease: LeaseInput,
    profile_activation: Any,
    axis_results: Iterable[AgentExecutionPreparationAxisResult | Mapping[str, Any]],
    execution_plan_digest: str,
    materializer: AgentExecutionPreparationMaterializer | Mapping[str, Any],
    expires_at_ms: int,
    now_ms: int | None = None,
) -> AgentExecutionPreparationReceipt:
    """Build, self-hash and cross-check one pre-compute acknowledgement
    (``buildAgentExecutionPreparationReceipt``). The lease must be the exact sealed public
    record (``workspace-sealed``); ``profile_activation`` is the activation evidence (or its
    digest); ``execution_plan_digest`` must hash public decisions and reference identities,
    never secret values. Rows without a ``path`` get the axis's only requested path; rows are
    sorted canonically. Raises :class:`ContractError` for an invalid profile or lease and
    :class:`AgentExecutionPreparationValidationError` when the receipt fails validation."""
    authored = coerce_agent_profile(authored_profile)
    effective = coerce_agent_profile(effective_profile)
    lease = (
        workspace_lease
        if isinstance(workspace_lease, AgentWorkspaceLeaseRecord)
        else AgentWorkspaceLeaseRecord.parse_wire(workspace_lease)
    )
    if lease.phase != "workspace-sealed":
        raise AgentExecutionPreparationValidationError(
            [
                preparation_issue(
                    "workspace_not_execution_bound",
                    "execution preparation requires a workspace-sealed lease record",
                )
            ]
        )
    material = {
        "kind": "agent-execution-preparation",
        "schemaVersion": 1,
        "preparationId": preparation_id,
        "requestDigest": request_digest,
        "authoredProfileDigest": canonical_agent_profile_digest(authored),
        "effectiveProfileDigest": canonical_agent_profile_digest(effective),
        "backend": backend,
        "harness": harness,
        "harnessVersion": harness_version,
        "resolvedModel": _clean_resolved_model(_wire(resolved_model)),
        "workspace": {
            "leaseId": lease.lease_id,
            "provider": lease.workspace.provider,
            "identityDigest": lease.workspace.identity_digest,
            "isolation": lease.isolation,
            "sourceSnapshotDigest": lease.source_snapshot_digest,
            "sourceSnapshotPolicy": lease.source_snapshot_policy.to_wire(),
            "preparedWorkspaceDigest": lease.prepared_workspace_digest,
            "profileActivationDigest": lease.profile_activation_digest,
        },
        "axisResults": _normalize_axis_results(axis_results, authored, effective),
        "executionPlanDigest": execution_plan_digest,
        "materializer": _wire(materializer),
        "expiresAtMs": expires_at_ms,
    }
    try:
        receipt: Any = {**material, "digest": canonical_digest(material)}
    except (CanonicalJsonError, TypeError, ValueError):
        receipt = material  # refused below as an invalid receipt
    result = _validate(
        receipt=receipt,
        request_digest=request_digest,
        authored_profile=authored,
        effective_profile=effective,
        execution_plan_digest=execution_plan_digest,
        profile_activation=profile_activation,
        workspace_lease=lease,
        now_ms=now_ms,
        preparation_id=preparation_id,
        backend=backend,
        harness=harness,
        harness_version=harness_version,
        require_execution_binding=False,
    )
    if result.receipt is not None:
        return result.receipt
    raise AgentExecutionPreparationValidationError(result.issues)


def validate_agent_execution_preparation_receipt(
    *,
    receipt: Any,
    request_digest: str,
    authored_profile: ProfileInput,
    effective_profile: ProfileInput,
    execution_plan_digest: str,
    profile_activation: Any,
    workspace_lease: LeaseInput,
    now_ms: int | None = None,
    preparation_id: str | None = None,
    backend: str | None = None,
    harness: HarnessType | None = None,
    harness_version: str | None = None,
) -> AgentExecutionPreparationValidationResult:
    """Validate a receipt against its ``execution-bound`` lease
    (``validateAgentExecutionPreparationReceipt``): structure, self-digest, profile, request,
    plan and activation digests, the lease binding, optional expectations, expiry against
    ``now_ms`` (default: the clock), model fidelity and exact path coverage. Never raises for
    a bad receipt, profile or lease: every problem is an issue of the result."""
    return _validate(
        receipt=receipt,
        request_digest=request_digest,
        authored_profile=authored_profile,
        effective_profile=effective_profile,
        execution_plan_digest=execution_plan_digest,
        profile_activation=profile_activation,
        workspace_lease=workspace_lease,
        now_ms=now_ms,
        preparation_id=preparation_id,
        backend=backend,
        harness=harness,
        harness_version=harness_version,
        require_execution_binding=True,
    )


def assert_agent_execution_preparation_receipt(
    *,
    receipt: Any,
    request_digest: str,
    authored_profile: ProfileInput,
    effective_profile: ProfileInput,
    execution_plan_digest: str,
    profile_activation: Any,
    workspace_lease: LeaseInput,
    now_ms: int | None = None,
    preparation_id: str | None = None,
    backend: str | None = None,
    harness: HarnessType | None = None,
    harness_version: str | None = None,
) -> AgentExecutionPreparationReceipt:
    """:func:`validate_agent_execution_preparation_receipt`, raising
    :class:`AgentExecutionPreparationValidationError` with every issue when it fails
    (``assertAgentExecutionPreparationReceipt``)."""
    result = validate_agent_execution_preparation_receipt(
        receipt=receipt,
        request_digest=request_digest,
        authored_profile=authored_profile,
        effective_profile=effective_profile,
        execution_plan_digest=execution_plan_digest,
        profile_activation=profile_activation,
        workspace_lease=workspace_lease,
        now_ms=now_ms,
        preparation_id=preparation_id,
        backend=backend,
        harness=harness,
        harness_version=harness_version,
    )
    if result.receipt is not None:
        return result.receipt
    raise AgentExecutionPreparationValidationError(result.issues)


def _failed(issues: list[AgentExecutionPreparationValidationIssue]) -> AgentExecutionPreparationValidationResult:
    return AgentExecutionPreparationValidationResult(False, None, tuple(issues))


def _contract_issues(
    code: AgentExecutionPreparationValidationIssueCode, error: ContractError, label: str
) -> list[AgentExecutionPreparationValidationIssue]:
    return [preparation_issue(code, f"{issue.path or label}: {issue.message}") for issue in error.issues]


def _validate(
    *,
    receipt: Any,
    request_digest: str,
    authored_profile: ProfileInput,
    effective_profile: ProfileInput,
    execution_plan_digest: str,
    profile_activation: Any,
    workspace_lease: LeaseInput,
    now_ms: int | None,
    preparation_id: str | None,
    backend: str | None,
    harness: str | None,
    harness_version: str | None,
    require_execution_binding: bool,
) -> AgentExecutionPreparationValidationResult:
    try:
        parsed = (
            receipt
            if isinstance(receipt, AgentExecutionPreparationReceipt)
            else AgentExecutionPreparationReceipt.parse_wire(receipt)
        )
    except ContractError as error:
        return _failed(_contract_issues("invalid_receipt", error, "receipt"))
    except (TypeError, ValueError):
        return _failed([preparation_issue("invalid_receipt", "receipt: value is not a receipt document")])
    try:
        lease = (
            workspace_lease
            if isinstance(workspace_lease, AgentWorkspaceLeaseRecord)
            else AgentWorkspaceLeaseRecord.parse_wire(workspace_lease)
        )
    except ContractError as error:
        return _failed(_contract_issues("invalid_workspace_lease", error, "workspaceLease"))
    except (TypeError, ValueError):
        return _failed([preparation_issue("invalid_workspace_lease", "workspaceLease: value is not a lease")])
    expected_phase = "execution-bound" if require_execution_binding else "workspace-sealed"
    if lease.phase != expected_phase:
        return _failed(
            [
                preparation_issue(
                    "workspace_not_execution_bound",
                    f"execution preparation expected workspace phase {expected_phase}, "
                    f"received {lease.phase}",
                )
            ]
        )
    issues: list[AgentExecutionPreparationValidationIssue] = []
    profiles: list[AgentProfile] = []
    for value in (authored_profile, effective_profile):
        try:
            profiles.append(coerce_agent_profile(value))
        except ContractError as error:
            issues += _contract_issues("invalid_profile", error, "profile")
        except (TypeError, ValueError):
            issues.append(preparation_issue("invalid_profile", "profile: value is not a profile"))
    if issues:
        return _failed(issues)
    authored, effective = profiles
    try:
        authored_digest = canonical_agent_profile_digest(authored)
        effective_digest = canonical_agent_profile_digest(effective)
    except ContractError as error:
        return _failed(_contract_issues("invalid_profile", error, "profile"))

    def digest(label: str, actual: object, expected: object) -> None:
        if actual != expected:
            issues.append(
                preparation_issue("digest_mismatch", f"{label} digest does not match the prepared execution")
            )

    def expect(label: str, actual: object, expected: object) -> None:
        if expected is not None and actual != expected:
            issues.append(
                preparation_issue("expectation_mismatch", f"{label} does not match the prepared execution")
            )

    space = parsed.workspace
    digest("authored profile", parsed.authored_profile_digest, authored_digest)
    digest("effective profile", parsed.effective_profile_digest, effective_digest)
    digest("request", parsed.request_digest, request_digest)
    digest("execution plan", parsed.execution_plan_digest, execution_plan_digest)
    digest("profile activation", space.profile_activation_digest, _activation_digest(profile_activation))
    digest("workspace profile activation", space.profile_activation_digest, lease.profile_activation_digest)
    if lease.phase == "execution-bound" and lease.execution_preparation_digest != parsed.digest:
        issues.append(
            preparation_issue(
                "execution_binding_mismatch",
                "workspace execution binding does not name this preparation receipt",
            )
        )
    policy, lease_policy = space.source_snapshot_policy, lease.source_snapshot_policy
    expect("preparation id", parsed.preparation_id, preparation_id)
    expect("backend", parsed.backend, backend)
    expect("harness", parsed.harness, harness)
    expect("harness version", parsed.harness_version, harness_version)
    expect("workspace lease", space.lease_id, lease.lease_id)
    expect("workspace provider", space.provider, lease.workspace.provider)
    expect("workspace identity", space.identity_digest, lease.workspace.identity_digest)
    expect("workspace isolation", space.isolation, lease.isolation)
    expect("source workspace snapshot", space.source_snapshot_digest, lease.source_snapshot_digest)
    expect("source snapshot policy kind", policy.kind, lease_policy.kind)
    expect("source snapshot policy name", policy.name, lease_policy.name)
    expect("source snapshot policy version", policy.version, lease_policy.version)
    digest("source snapshot policy", policy.digest, lease_policy.digest)
    expect(
        "prepared workspace snapshot",
        space.prepared_workspace_digest,
        lease.prepared_workspace_digest,
    )
    if parsed.expires_at_ms > lease.expires_at_ms:
        issues.append(
            preparation_issue("expectation_mismatch", "execution preparation cannot outlive its workspace lease")
        )
    clock = int(time.time() * 1000) if now_ms is None else now_ms
    if type(clock) is float and clock.is_integer():
        clock = int(clock)
    if type(clock) is not int or not 0 <= clock <= MAX_SAFE_INTEGER:
        issues.append(
            preparation_issue("expectation_mismatch", "validation clock must be a non-negative safe integer")
        )
    elif parsed.expires_at_ms <= clock:
        issues.append(preparation_issue("expired", f"execution preparation expired at {parsed.expires_at_ms}"))
    elif lease.expires_at_ms <= clock:
        issues.append(preparation_issue("expired", f"workspace lease expired at {lease.expires_at_ms}"))

    check_harness_and_model(parsed, authored, effective, issues)
    check_axis_coverage(parsed, authored, effective, issues)
    if issues:
        return _failed(issues)
    return AgentExecutionPreparationValidationResult(True, parsed, ())
