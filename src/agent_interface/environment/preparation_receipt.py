"""The execution preparation receipt (``agent-execution-preparation-receipt.ts``).

An executor emits one :class:`AgentExecutionPreparationReceipt` after every launch decision
is fixed and before any agent compute begins. It joins the authored profile (before executor
overrides) to the effective one (after them) by their canonical digests, names the sealed
workspace lease, the resolved model and the materializer, and accounts for every requested
profile leaf with one :class:`AgentExecutionPreparationAxisResult` per exact JSON Pointer.

``executionPlanDigest`` hashes public launch decisions and secret-reference identities only:
secret values live in the executor's private closure, never in the receipt. The schema
refuses recognizable credentials in mechanisms, identifiers and reasons; that is defense in
depth, not proof that arbitrary text is not secret. ``digest`` is the RFC 8785 ``sha256:``
digest of the receipt without ``digest``.
"""

from __future__ import annotations

import re
from typing import Annotated, Final, Literal, Self

from pydantic import AfterValidator, model_validator
from pydantic_core import PydanticCustomError

from agent_interface.core.canonical import (
    Sha256Digest,
    canonical_digest,
    canonical_json,
    is_canonical_json_value,
    is_well_formed_unicode,
    utf16_sort_key,
)
from agent_interface.core.contract_limits import GreaterThanZeroSafeInt, Utf16Length, js_trim
from agent_interface.core.errors import CanonicalJsonError, Refinement
from agent_interface.core.json_schema import JsonSchemaPattern
from agent_interface.core.model import WireList, WireModel
from agent_interface.core.registry import register_wire_models
from agent_interface.environment.source_snapshot import AgentWorkspaceSourceSnapshotPolicy
from agent_interface.profile.config import looks_like_credential
from agent_interface.profile.harness import REASONING_EFFORTS, HarnessType, ReasoningEffort
from agent_interface.profile.materialization import (
    AGENT_PROFILE_MATERIALIZATION_AXES,
    AgentProfileMaterializationAxis,
)
from agent_interface.runtime.usage import VersionOne

__all__ = [
    "AgentExecutionPreparationAxisResult",
    "AgentExecutionPreparationDisposition",
    "AgentExecutionPreparationMaterializer",
    "AgentExecutionPreparationOwner",
    "AgentExecutionPreparationReasoningEffort",
    "AgentExecutionPreparationReceipt",
    "AgentExecutionPreparationResolvedModel",
    "AgentExecutionPreparationWorkspace",
    "agent_execution_preparation_axis_result_key",
    "agent_execution_preparation_axis_results_equal",
    "axis_result_sort_key",
]

AgentExecutionPreparationDisposition = Literal["behavior", "control", "overridden", "unsupported"]
AgentExecutionPreparationOwner = Literal["runtime", "executor"]


def _non_blank(value: str) -> str:
    if js_trim(value) == "":
        raise PydanticCustomError("blank_string", "value cannot be blank")
    return value


def _pattern_check(pattern: str, code: str, message: str, secret_message: str) -> AfterValidator:
    compiled = re.compile(pattern)

    def check(value: str) -> str:
        if compiled.fullmatch(value) is None:
            raise PydanticCustomError(code, message)
        if looks_like_credential(value):
            raise PydanticCustomError("credential_like", secret_message)
        return value

    return AfterValidator(check)


def _public_reason(value: str) -> str:
    if looks_like_credential(value):
        raise PydanticCustomError("credential_like", "reason cannot carry credential-like material")
    return value


def _json_pointer(value: str) -> str:
    if not (value.startswith("/") and is_well_formed_unicode(value)) or re.search(
        "~(?![01])", value
    ):
        raise PydanticCustomError(
            "json_pointer", "path must be a canonical RFC 6901 JSON Pointer"
        )
    return value


NonBlank200 = Annotated[str, Utf16Length(max=200), AfterValidator(_non_blank)]
NonBlank500 = Annotated[str, Utf16Length(max=500), AfterValidator(_non_blank)]
PublicMechanism = Annotated[
    str,
    _pattern_check(
        r"[A-Za-z0-9][A-Za-z0-9._:/-]{0,199}",
        "mechanism_not_identifier",
        "mechanism must be a public identifier, not launch arguments",
        "mechanism cannot carry credential-like material",
    ),
    JsonSchemaPattern(r"^[A-Za-z0-9][A-Za-z0-9._:/-]{0,199}$"),
]
PublicLifecycleIdentifier = Annotated[
    str,
    _pattern_check(
        r"[A-Za-z0-9][A-Za-z0-9._~:/+-]{0,499}",
        "lifecycle_identifier",
        "lifecycle identity must be a public identifier",
        "lifecycle identity cannot carry credential-like material",
    ),
    JsonSchemaPattern(r"^[A-Za-z0-9][A-Za-z0-9._~:/+-]{0,499}$"),
]
PublicReason = Annotated[
    str, Utf16Length(max=4_000), AfterValidator(_non_blank), AfterValidator(_public_reason)
]
JsonPointer = Annotated[str, AfterValidator(_json_pointer)]


class AgentExecutionPreparationAxisResult(WireModel):
    """How the prepared execution handles one exact profile path. ``overridden`` and
    ``unsupported`` need a sanitized ``reason``; ``behavior`` and ``control`` refuse one.
    ``path`` is required when the axis has more than one requested path."""

    axis: AgentProfileMaterializationAxis
    disposition: AgentExecutionPreparationDisposition
    owner: AgentExecutionPreparationOwner
    mechanism: PublicMechanism
    evidence_digest: Sha256Digest | None = None
    path: JsonPointer | None = None
    reason: PublicReason | None = None

    @model_validator(mode="after")
    def _reason_matches_disposition(self) -> Self:
        issues = Refinement(type(self).__name__)
        needs_reason = self.disposition in ("overridden", "unsupported")
        if needs_reason and self.reason is None:
            issues.add(
                ("reason",),
                "coverage_reason_missing",
                "{disposition} profile coverage requires a reason",
                {"disposition": self.disposition},
            )
        if not needs_reason and self.reason is not None:
            issues.add(
                ("reason",),
                "coverage_reason_unexpected",
                "{disposition} profile coverage cannot carry an override reason",
                {"disposition": self.disposition},
            )
        issues.check()
        return self


class AgentExecutionPreparationReasoningEffort(WireModel):
    """Requested and resolved reasoning effort. ``exact`` keeps the request, ``clamped``
    lowers it (never raises it), ``unsupported`` resolves nothing."""

    requested: ReasoningEffort
    resolved: ReasoningEffort | None = None
    fidelity: Literal["exact", "clamped", "unsupported"]

    @model_validator(mode="after")
    def _fidelity_rules(self) -> Self:
        issues = Refinement(type(self).__name__)
        resolved, fidelity = self.resolved, self.fidelity
        if fidelity == "unsupported":
            if resolved is not None:
                issues.add(
                    ("resolved",),
                    "reasoning_unsupported_resolved",
                    "unsupported reasoning effort cannot claim a resolved value",
                )
        elif resolved is None:
            issues.add(
                ("resolved",),
                "reasoning_resolved_missing",
                "{fidelity} reasoning fidelity requires a resolved value",
                {"fidelity": fidelity},
            )
        elif fidelity == "exact" and resolved != self.requested:
            issues.add(
                ("resolved",),
                "reasoning_exact_changed",
                "exact reasoning fidelity must preserve the requested effort",
            )
        elif fidelity == "clamped" and resolved == self.requested:
            issues.add(
                ("resolved",),
                "reasoning_clamp_unchanged",
                "clamped reasoning fidelity must change the requested effort",
            )
        elif fidelity == "clamped" and REASONING_EFFORTS.index(resolved) > REASONING_EFFORTS.index(
            self.requested
        ):
            issues.add(
                ("resolved",),
                "reasoning_clamp_increased",
                "reasoning effort may clamp down but must never increase",
            )
        issues.check()
        return self


class AgentExecutionPreparationResolvedModel(WireModel):
    """The model a preparation resolved: what was requested, what will run, its provider and
    reasoning effort."""

    requested: Annotated[str, Utf16Length(max=500)]
    """The effective profile's exact request; an explicit empty hint stays empty."""
    resolved: NonBlank500
    """The concrete model selected for execution."""
    provider: Annotated[str, Utf16Length(max=200)] | None = None
    reasoning_effort: AgentExecutionPreparationReasoningEffort | None = None


class AgentExecutionPreparationWorkspace(WireModel):
    """The sealed lease the execution runs in. ``identity_digest`` binds the lease to its
    allocation (not to file contents); ``prepared_workspace_digest`` is the workspace after
    profile activation and before compute."""

    lease_id: PublicLifecycleIdentifier
    provider: PublicLifecycleIdentifier
    identity_digest: Sha256Digest
    isolation: Literal["per-run", "shared"]
    source_snapshot_digest: Sha256Digest
    source_snapshot_policy: AgentWorkspaceSourceSnapshotPolicy
    prepared_workspace_digest: Sha256Digest
    profile_activation_digest: Sha256Digest


class AgentExecutionPreparationMaterializer(WireModel):
    """The component that materialized the preparation, by name and version."""

    name: NonBlank200
    version: NonBlank200


_AXIS_ORDER: Final = {axis: index for index, axis in enumerate(AGENT_PROFILE_MATERIALIZATION_AXES)}


def agent_execution_preparation_axis_result_key(
    axis: AgentProfileMaterializationAxis, path: str | None
) -> str:
    """Identity of one axis/path row (``agentExecutionPreparationAxisResultKey``)."""
    return f"{axis}\x00{path or ''}"


def agent_execution_preparation_axis_results_equal(
    left: AgentExecutionPreparationAxisResult, right: AgentExecutionPreparationAxisResult
) -> bool:
    """Exact public equality of two rows (canonical JSON); ``False`` when not canonical."""
    try:
        return canonical_json(left.to_wire()) == canonical_json(right.to_wire())
    except CanonicalJsonError:
        return False


def axis_result_sort_key(result: AgentExecutionPreparationAxisResult) -> tuple[int, bytes]:
    """Canonical row order: axis order, then path in UTF-16 code-unit order."""
    return (_AXIS_ORDER[result.axis], utf16_sort_key(result.path or ""))


class AgentExecutionPreparationReceipt(WireModel):
    """A self-hashed, pre-compute executor acknowledgement; rows canonically sorted and
    unique per axis/path."""

    kind: Literal["agent-execution-preparation"]
    schema_version: VersionOne
    preparation_id: NonBlank500
    request_digest: Sha256Digest
    authored_profile_digest: Sha256Digest
    """Canonical identity before executor overrides."""
    effective_profile_digest: Sha256Digest
    """Canonical identity after executor overrides."""
    backend: NonBlank200
    harness: HarnessType
    harness_version: NonBlank200
    resolved_model: AgentExecutionPreparationResolvedModel
    workspace: AgentExecutionPreparationWorkspace
    axis_results: WireList[AgentExecutionPreparationAxisResult]
    execution_plan_digest: Sha256Digest
    """Caller-supplied digest of public decisions and secret-reference identities."""
    materializer: AgentExecutionPreparationMaterializer
    expires_at_ms: GreaterThanZeroSafeInt
    digest: Sha256Digest

    @model_validator(mode="after")
    def _rows_and_digest(self) -> Self:
        issues = Refinement(type(self).__name__)
        seen: dict[str, AgentExecutionPreparationAxisResult] = {}
        rows = self.axis_results
        for index, row in enumerate(rows):
            key = agent_execution_preparation_axis_result_key(row.axis, row.path)
            previous = seen.get(key)
            if previous is not None:
                duplicate = agent_execution_preparation_axis_results_equal(previous, row)
                issues.add(
                    ("axisResults", index),
                    "duplicate_axis_result" if duplicate else "conflicting_axis_result",
                    "duplicate profile axis/path result"
                    if duplicate
                    else "conflicting profile axis/path results",
                )
            else:
                seen[key] = row
            if index > 0 and axis_result_sort_key(rows[index - 1]) >= axis_result_sort_key(row):
                issues.add(
                    ("axisResults", index),
                    "axis_results_unsorted",
                    "profile axis/path results must be canonically sorted",
                )
        material = self.to_wire()
        del material["digest"]
        if not is_canonical_json_value(material):
            issues.add(
                (),
                "receipt_not_canonical_json",
                "execution preparation receipt must contain only RFC 8785 JSON values",
            )
        elif canonical_digest(material) != self.digest:
            issues.add(
                ("digest",),
                "receipt_digest_mismatch",
                "execution preparation receipt digest is invalid",
            )
        issues.check()
        return self


register_wire_models(
    AgentExecutionPreparationAxisResult=AgentExecutionPreparationAxisResult,
    AgentExecutionPreparationReasoningEffort=AgentExecutionPreparationReasoningEffort,
    AgentExecutionPreparationReceipt=AgentExecutionPreparationReceipt,
)
