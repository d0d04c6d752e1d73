"""Retry-safe workspace forks (``workspace-fork.ts``): the request, the forked environment
reference stamped with the operation identity, results and lookups.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal, Self

from pydantic import Field, model_validator

from agent_interface.core.canonical import (
    Sha256Digest,
)
from agent_interface.core.contract_limits import (
    BoundedIdentifier,
    BoundedJsonRecord,
    wire_digest,
)
from agent_interface.core.errors import Refinement
from agent_interface.core.model import (
    WireModel,
)
from agent_interface.core.registry import register_wire_models
from agent_interface.durable.branching_operations import (
    WorkspaceOperationNotFound,
    WorkspaceOperationUnknown,
    _ConflictBase,
    _OperationIdentity,
)
from agent_interface.durable.checkpoint import WorkspaceCheckpointRef
from agent_interface.durable.confidential import (
    ConfidentialAttestation,
    ConfidentialAttestationVerifier,
    ConfidentialExecutionEnvironment,
    ConfidentialExecutionRequest,
    _resource_identity_matches,
    confidential_execution_verified,
)
from agent_interface.durable.wire_values import (
    WireTimestamp,
    material_of,
    parse_or_none,
    plain_wire,
    same_optional_wire,
    same_wire,
)
from agent_interface.environment.placement import PlacementInfo
from agent_interface.runtime.control_ref import AgentExactRunControlRef

__all__ = [
    "ForkedEnvironmentRef",
    "WorkspaceForkConflict",
    "WorkspaceForkFound",
    "WorkspaceForkLookupResult",
    "WorkspaceForkRequest",
    "WorkspaceForkResult",
    "WorkspaceForkSuccess",
    "forked_environment_confidentiality_verified",
    "workspace_fork_request_digest",
    "workspace_fork_result_matches_request",
]


# --- fork (``workspace-fork.ts``) -----------------------------------------------------------


class _WorkspaceForkMaterial(WireModel):
    checkpoint: WorkspaceCheckpointRef
    name: BoundedIdentifier | None = None
    metadata: BoundedJsonRecord | None = None
    placement: PlacementInfo
    confidential: ConfidentialExecutionRequest | None = None


def workspace_fork_request_digest(material: Mapping[str, Any] | WireModel) -> str:
    """``workspaceForkRequestDigest``: digest of ``checkpoint``, ``placement`` and, when
    set, ``name``, ``metadata`` and ``confidential``."""
    parsed = material_of(material, _WorkspaceForkMaterial, ("idempotencyKey", "requestDigest"))
    return wire_digest(parsed.to_wire())


class WorkspaceForkRequest(_WorkspaceForkMaterial):
    """Create a new environment from a checkpoint, once per idempotency key. The requested
    placement is part of the identity."""

    idempotency_key: BoundedIdentifier
    request_digest: Sha256Digest

    @model_validator(mode="after")
    def _refine(self) -> Self:
        issues = Refinement("WorkspaceForkRequest")
        if self.request_digest != workspace_fork_request_digest(self):
            issues.add(("requestDigest",), "digest_mismatch", "fork request digest does not match its material")
        if self.confidential is not None and self.confidential.requested and not self.confidential.complete:
            issues.add(
                ("confidential",),
                "confidential_binding_missing",
                "a confidential fork request must bind a nonce, policy, and profile digest",
            )
        issues.check()
        return self

    @classmethod
    def seal(cls, material: Mapping[str, Any], *, idempotency_key: str) -> Self:
        """Build a request from its material (wire names), computing ``requestDigest``."""
        plain = plain_wire(material)
        return cls.parse_wire(
            {
                **plain,
                "idempotencyKey": idempotency_key,
                "requestDigest": workspace_fork_request_digest(plain),
            }
        )


class ForkedEnvironmentRef(WireModel):
    """A forked environment, stamped with the operation that made it and its full source run.

    ``confidential`` is a legacy assertion kept for wire compatibility and never trusted;
    use :func:`forked_environment_confidentiality_verified`.
    """

    provider: BoundedIdentifier
    environment_id: BoundedIdentifier
    source_environment_id: BoundedIdentifier
    source: AgentExactRunControlRef
    source_checkpoint_id: BoundedIdentifier
    idempotency_key: BoundedIdentifier
    request_digest: Sha256Digest
    created_at: WireTimestamp
    placement: PlacementInfo
    confidential_requested: bool
    confidential_attestation: ConfidentialAttestation | None = None
    confidential: bool | None = None
    metadata: BoundedJsonRecord | None = None

    @model_validator(mode="after")
    def _refine(self) -> Self:
        issues = Refinement("ForkedEnvironmentRef")
        if self.environment_id == self.source_environment_id:
            issues.add(
                ("environmentId",),
                "fork_reuses_source_environment",
                "a forked environment must differ from its source environment",
            )
        if self.source.environment_id != self.source_environment_id:
            issues.add(
                ("sourceEnvironmentId",),
                "source_environment_mismatch",
                "source environment id must match the complete source identity",
            )
        if self.provider != self.source.provider:
            issues.add(("provider",), "provider_mismatch", "fork provider must match the source provider")
        attestation = self.confidential_attestation
        if attestation is not None and attestation.environment_id != self.environment_id:
            issues.add(
                ("confidentialAttestation", "environmentId"),
                "attestation_environment_mismatch",
                "attestation must be bound to the forked environment",
            )
        if attestation is not None and not self.confidential_requested:
            issues.add(
                ("confidentialAttestation",),
                "attestation_unrequested",
                "attestation cannot accompany a fork that did not request confidentiality",
            )
        issues.check()
        return self


def forked_environment_confidentiality_verified(
    request: Any,
    environment: Any,
    verify_provider_attestation: ConfidentialAttestationVerifier | None = None,
) -> bool:
    """``forkedEnvironmentConfidentialityVerified``: the only way to decide whether a fork
    may be shown as confidential."""
    exact_request: WorkspaceForkRequest | None = parse_or_none(WorkspaceForkRequest, request)
    exact_environment: ForkedEnvironmentRef | None = parse_or_none(ForkedEnvironmentRef, environment)
    if exact_request is None or exact_environment is None:
        return False
    checkpoint = exact_request.checkpoint
    if (
        exact_environment.request_digest != exact_request.request_digest
        or exact_environment.provider != checkpoint.provider
        or exact_environment.source_checkpoint_id != checkpoint.checkpoint_id
        or exact_environment.source_environment_id != checkpoint.source.environment_id
        or not same_wire(exact_environment.source, checkpoint.source)
        or not same_wire(exact_environment.placement, exact_request.placement)
        or not same_optional_wire(exact_environment.metadata, exact_request.metadata)
    ):
        return False
    confidential = exact_request.confidential or ConfidentialExecutionRequest(requested=False)
    try:
        facts = ConfidentialExecutionEnvironment(
            provider=exact_environment.provider,
            environment_id=exact_environment.environment_id,
            source=exact_environment.source,
            request_digest=exact_environment.request_digest,
            confidential_requested=exact_environment.confidential_requested,
        )
    except ValueError:
        return False
    return confidential_execution_verified(
        request=confidential,
        environment=facts,
        attestation=exact_environment.confidential_attestation,
        verify_provider_attestation=verify_provider_attestation,
    )


class _EnvironmentCarrier(_OperationIdentity):
    environment: ForkedEnvironmentRef

    @model_validator(mode="after")
    def _refine_identity(self) -> Self:
        issues = Refinement(type(self).__name__)
        if not _resource_identity_matches(self, self.environment):
            issues.add(
                ("environment",),
                "resource_identity_mismatch",
                "forked environment identity must match its operation",
            )
        issues.check()
        return self


class WorkspaceForkSuccess(_EnvironmentCarrier):
    """``created`` by this call, or ``replayed`` from an earlier call with the same request."""

    status: Literal["created", "replayed"]


class WorkspaceForkConflict(_ConflictBase):
    """The key already holds a different fork request."""


WorkspaceForkResult = Annotated[
    WorkspaceForkSuccess | WorkspaceForkConflict | WorkspaceOperationUnknown,
    Field(discriminator="status"),
]


class WorkspaceForkFound(_EnvironmentCarrier):
    """A fork lookup's answer when the keyed fork exists: the environment the original request made."""

    status: Literal["found"] = "found"


WorkspaceForkLookupResult = Annotated[
    WorkspaceForkFound | WorkspaceOperationNotFound | WorkspaceForkConflict | WorkspaceOperationUnknown,
    Field(discriminator="status"),
]


def workspace_fork_result_matches_request(request: Any, result: Any) -> bool:
    """``workspaceForkResultMatchesRequest``: a created, replayed or found answer carries a
    new environment made by exactly this request from exactly its checkpoint."""
    exact_request: WorkspaceForkRequest | None = parse_or_none(WorkspaceForkRequest, request)
    if exact_request is None:
        return False
    answer = parse_or_none(WorkspaceForkResult, result)
    if not isinstance(answer, WorkspaceForkSuccess):
        answer = parse_or_none(WorkspaceForkLookupResult, result)
        if not isinstance(answer, WorkspaceForkFound):
            return False
    environment = answer.environment
    source = exact_request.checkpoint.source
    requested = exact_request.confidential.requested if exact_request.confidential else False
    return (
        _resource_identity_matches(exact_request, answer)
        and _resource_identity_matches(exact_request, environment)
        and environment.source_checkpoint_id == exact_request.checkpoint.checkpoint_id
        and environment.provider == exact_request.checkpoint.provider
        and environment.source_environment_id == source.environment_id
        and same_wire(environment.source, source)
        and environment.environment_id != source.environment_id
        and same_wire(environment.placement, exact_request.placement)
        and environment.confidential_requested == requested
        and same_optional_wire(environment.metadata, exact_request.metadata)
    )


register_wire_models(
    WorkspaceForkRequest=WorkspaceForkRequest,
    ForkedEnvironmentRef=ForkedEnvironmentRef,
    WorkspaceForkResult=WorkspaceForkResult,
    WorkspaceForkLookupResult=WorkspaceForkLookupResult,
)
