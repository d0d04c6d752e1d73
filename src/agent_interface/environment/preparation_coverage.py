"""Coverage and model-fidelity rules of an execution preparation receipt, and the typed
issues they report (the checks of ``validateAgentExecutionPreparationReceipt``).

Every path requested by the authored or the effective profile needs exactly one row: a
pathless row is read as the axis's only requested path, and is ambiguous when the axis has
several. A changed path must be ``overridden`` or ``unsupported``; an unchanged one may not be
``overridden`` unless the reasoning effort was clamped; ``unsupported`` needs an authored
``resources.failOnError: false``. Reasoning fidelity and its coverage must agree.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from agent_interface.core.canonical import canonical_json
from agent_interface.core.errors import CanonicalJsonError, ContractIssue
from agent_interface.environment.preparation_receipt import (
    AgentExecutionPreparationAxisResult,
    AgentExecutionPreparationReceipt,
    agent_execution_preparation_axis_result_key,
    agent_execution_preparation_axis_results_equal,
)
from agent_interface.profile.agent_profile import AgentProfile
from agent_interface.profile.materialization import (
    AgentProfileMaterializationAxis,
    profile_materialization_requests,
)

__all__ = [
    "AgentExecutionPreparationValidationIssue",
    "AgentExecutionPreparationValidationIssueCode",
]

AgentExecutionPreparationValidationIssueCode = Literal[
    "invalid_receipt",
    "invalid_profile",
    "invalid_workspace_lease",
    "workspace_not_execution_bound",
    "execution_binding_mismatch",
    "digest_mismatch",
    "expectation_mismatch",
    "expired",
    "missing_coverage",
    "ambiguous_coverage",
    "duplicate_coverage",
    "conflicting_coverage",
    "unrequested_coverage",
    "invalid_disposition",
    "strict_unsupported",
    "model_fidelity",
]
"""The reference's issue codes, in snake_case (``missing-coverage`` is ``missing_coverage``)."""


@dataclass(frozen=True, slots=True)
class AgentExecutionPreparationValidationIssue(ContractIssue):
    """One broken preparation rule. ``path`` is the profile JSON Pointer of a coverage or
    model issue (``""`` otherwise) and ``axis`` its materialization axis."""

    axis: AgentProfileMaterializationAxis | None = None


def preparation_issue(
    code: AgentExecutionPreparationValidationIssueCode,
    message: str,
    axis: AgentProfileMaterializationAxis | None = None,
    path: str | None = None,
) -> AgentExecutionPreparationValidationIssue:
    return AgentExecutionPreparationValidationIssue(path or "", code, message, axis)


def check_harness_and_model(
    receipt: AgentExecutionPreparationReceipt,
    authored: AgentProfile,
    effective: AgentProfile,
    issues: list[AgentExecutionPreparationValidationIssue],
) -> None:
    if effective.harness is not None and effective.harness != receipt.harness:
        issues.append(
            preparation_issue(
                "expectation_mismatch",
                f"effective profile harness {effective.harness} does not match prepared harness "
                f"{receipt.harness}",
                "harness",
                "/harness",
            )
        )
    model = effective.model
    resolved = receipt.resolved_model
    if model is not None and model.default is not None and model.default != resolved.requested:
        issues.append(
            preparation_issue(
                "model_fidelity",
                "prepared model request does not match effective profile.model.default",
                "modelDefault",
                "/model/default",
            )
        )
    if model is not None and model.provider is not None and model.provider != resolved.provider:
        issues.append(
            preparation_issue(
                "model_fidelity",
                "prepared model provider does not match effective profile.model.provider",
                "modelProvider",
                "/model/provider",
            )
        )
    requested = (model.reasoning_effort if model else None) or (
        authored.model.reasoning_effort if authored.model else None
    )
    if requested is None:
        return
    effort = resolved.reasoning_effort
    if effort is None:
        issues.append(
            preparation_issue(
                "model_fidelity",
                "requested reasoning effort is missing from the prepared model",
                "modelReasoningEffort",
                "/model/reasoningEffort",
            )
        )
    elif effort.requested != requested:
        issues.append(
            preparation_issue(
                "model_fidelity",
                f"prepared reasoning request {effort.requested} does not match profile request "
                f"{requested}",
                "modelReasoningEffort",
                "/model/reasoningEffort",
            )
        )


_ABSENT = object()


def _read_pointer(document: Any, pointer: str) -> Any:
    value = document
    for token in pointer[1:].split("/"):
        key = token.replace("~1", "/").replace("~0", "~")
        if isinstance(value, Mapping):
            if key not in value:
                return _ABSENT
            value = value[key]
        elif isinstance(value, list) and key.isdigit() and str(int(key)) == key:
            if int(key) >= len(value):
                return _ABSENT
            value = value[int(key)]
        else:
            return _ABSENT
    return value


def _requests(profile: AgentProfile) -> dict[str, tuple[AgentProfileMaterializationAxis, str, Any]]:
    document = profile.to_wire()
    return {
        agent_execution_preparation_axis_result_key(request.axis, request.path): (
            request.axis,
            request.path,
            _read_pointer(document, request.path),
        )
        for request in profile_materialization_requests(profile)
    }


def _same_value(left: Any, right: Any) -> bool:
    try:
        return canonical_json(left) == canonical_json(right)
    except (CanonicalJsonError, TypeError, ValueError):
        return left is right


def check_axis_coverage(
    receipt: AgentExecutionPreparationReceipt,
    authored_profile: AgentProfile,
    effective_profile: AgentProfile,
    issues: list[AgentExecutionPreparationValidationIssue],
) -> None:
    authored = _requests(authored_profile)
    effective = _requests(effective_profile)
    expected = {**authored, **effective}
    paths_by_axis: dict[str, list[str]] = {}
    for axis, requested_path, _ in expected.values():
        paths_by_axis.setdefault(axis, []).append(requested_path)

    actual: dict[str, tuple[AgentExecutionPreparationAxisResult, str]] = {}
    for row in receipt.axis_results:
        paths = paths_by_axis.get(row.axis, [])
        path = row.path if row.path is not None else (paths[0] if len(paths) == 1 else None)
        if path is None:
            issues.append(
                preparation_issue(
                    "unrequested_coverage",
                    f"receipt covers unrequested {row.axis} without an exact path",
                    row.axis,
                )
                if not paths
                else preparation_issue(
                    "ambiguous_coverage",
                    f"{row.axis} covers {len(paths)} requested paths and requires an exact path",
                    row.axis,
                )
            )
            continue
        key = agent_execution_preparation_axis_result_key(row.axis, path)
        previous = actual.get(key)
        if previous is not None:
            duplicate = agent_execution_preparation_axis_results_equal(
                previous[0].model_copy(update={"path": path}), row.model_copy(update={"path": path})
            )
            issues.append(
                preparation_issue(
                    "duplicate_coverage" if duplicate else "conflicting_coverage",
                    f"{'duplicate' if duplicate else 'conflicting'} coverage for {row.axis} at {path}",
                    row.axis,
                    path,
                )
            )
            continue
        actual[key] = (row, path)
        if key not in expected:
            issues.append(
                preparation_issue(
                    "unrequested_coverage",
                    f"receipt covers unrequested {row.axis} path {path}",
                    row.axis,
                    path,
                )
            )

    resources = authored_profile.resources
    allow_partial = resources is not None and resources.fail_on_error is False
    fidelity = receipt.resolved_model.reasoning_effort.fidelity if receipt.resolved_model.reasoning_effort else None
    for key, (axis, path, _) in expected.items():
        coverage = actual.get(key)
        if coverage is None:
            issues.append(
                preparation_issue("missing_coverage", f"receipt is missing {axis} coverage at {path}", axis, path)
            )
            continue
        disposition = coverage[0].disposition
        before, after = authored.get(key), effective.get(key)
        changed = before is None or after is None or not _same_value(before[2], after[2])
        execution_override = axis == "modelReasoningEffort" and fidelity == "clamped"
        if changed and disposition not in ("overridden", "unsupported"):
            issues.append(
                preparation_issue(
                    "invalid_disposition",
                    f"{axis} at {path} changed between authored and effective profiles but is "
                    f"marked {disposition}",
                    axis,
                    path,
                )
            )
        if not changed and not execution_override and disposition == "overridden":
            issues.append(
                preparation_issue(
                    "invalid_disposition",
                    f"{axis} at {path} is marked overridden without an effective change",
                    axis,
                    path,
                )
            )
        if disposition == "unsupported" and not allow_partial:
            issues.append(
                preparation_issue(
                    "strict_unsupported",
                    f"{axis} at {path} is unsupported but the authored profile did not "
                    "explicitly set resources.failOnError=false",
                    axis,
                    path,
                )
            )
        if axis != "modelReasoningEffort":
            continue
        if disposition == "unsupported" and fidelity != "unsupported":
            issues.append(
                preparation_issue(
                    "model_fidelity",
                    "unsupported reasoning coverage requires unsupported model fidelity",
                    axis,
                    path,
                )
            )
        if fidelity == "unsupported" and disposition != "unsupported":
            issues.append(
                preparation_issue(
                    "model_fidelity",
                    "unsupported reasoning fidelity must be reported as unsupported coverage",
                    axis,
                    path,
                )
            )
        if fidelity == "clamped" and disposition != "overridden":
            issues.append(
                preparation_issue(
                    "model_fidelity",
                    "clamped reasoning fidelity must be reported as overridden coverage",
                    axis,
                    path,
                )
            )
