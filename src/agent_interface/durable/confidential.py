"""Confidential execution (``workspace-confidentiality.ts``): attestation, the request that
binds it, and the check that a forked environment keeps the confidentiality it was asked for.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Annotated, Any, Literal, Self

from pydantic import BeforeValidator, model_validator
from pydantic_core import PydanticCustomError

from agent_interface.core.canonical import (
    Sha256Digest,
)
from agent_interface.core.contract_limits import (
    BoundedIdentifier,
    wire_digest,
)
from agent_interface.core.errors import Refinement
from agent_interface.core.model import (
    WireModel,
)
from agent_interface.core.registry import register_wire_models
from agent_interface.core.surrogate_text import marker_transparent
from agent_interface.durable.wire_values import (
    NonEmptyBoundedString,
    WireTimestamp,
    material_of,
    parse_or_none,
    same_wire,
)
from agent_interface.runtime.control_ref import AgentExactRunControlRef

__all__ = [
    "ConfidentialAttestation",
    "ConfidentialAttestationVerifier",
    "ConfidentialExecutionEnvironment",
    "ConfidentialExecutionRequest",
    "confidential_execution_request_digest",
    "confidential_execution_verified",
]


@marker_transparent  # type only (core.surrogate_text)
def _strict_true(value: Any) -> Any:
    # zod ``z.literal(true)`` accepts the boolean only; Python's ``1 == True`` must not pass.
    if type(value) is not bool:
        raise PydanticCustomError("literal_error", "input should be true")
    return value


def _resource_identity_matches(operation: Any, resource: Any) -> bool:
    return bool(
        resource.idempotency_key == operation.idempotency_key
        and resource.request_digest == operation.request_digest
    )


# --- confidentiality (``workspace-confidentiality.ts``) -----------------------------------


class ConfidentialAttestation(WireModel):
    """Provider evidence for a confidential environment. The signature is for an external
    provider-key check; the attestation alone proves nothing."""

    provider: BoundedIdentifier
    requested: Annotated[Literal[True], BeforeValidator(_strict_true)]
    nonce: BoundedIdentifier
    measurement: Sha256Digest
    environment_id: BoundedIdentifier
    source: AgentExactRunControlRef
    request_digest: Sha256Digest
    profile_digest: Sha256Digest
    policy: BoundedIdentifier
    quote: NonEmptyBoundedString
    provider_key_id: BoundedIdentifier
    provider_signature: NonEmptyBoundedString
    verified_at: WireTimestamp

    @model_validator(mode="after")
    def _refine(self) -> Self:
        issues = Refinement("ConfidentialAttestation")
        if self.nonce == self.policy:
            issues.add(("nonce",), "nonce_reuses_policy", "attestation nonce must not reuse the policy identifier")
        if self.provider_signature == self.quote:
            issues.add(
                ("providerSignature",),
                "signature_copies_quote",
                "provider authentication must not be a copied quote",
            )
        issues.check()
        return self


class ConfidentialExecutionRequest(WireModel):
    """What the caller asked for; never what the provider proved."""

    requested: bool
    nonce: BoundedIdentifier | None = None
    policy: BoundedIdentifier | None = None
    profile_digest: Sha256Digest | None = None

    @property
    def complete(self) -> bool:
        return self.nonce is not None and self.policy is not None and self.profile_digest is not None

    @model_validator(mode="after")
    def _refine(self) -> Self:
        issues = Refinement("ConfidentialExecutionRequest")
        if self.requested and not self.complete:
            issues.add(
                ("requested",),
                "confidential_binding_missing",
                "a confidential execution request must bind nonce, policy, and profile digest",
            )
        if not self.requested and self.complete:
            issues.add(
                ("requested",),
                "confidential_fields_unrequested",
                "a non-confidential execution request cannot carry confidential admission fields",
            )
        issues.check()
        return self


class ConfidentialExecutionEnvironment(WireModel):
    """The environment facts an attestation must be bound to."""

    provider: BoundedIdentifier
    environment_id: BoundedIdentifier
    source: AgentExactRunControlRef
    request_digest: Sha256Digest
    confidential_requested: bool


ConfidentialAttestationVerifier = Callable[[ConfidentialAttestation, ConfidentialExecutionEnvironment], bool]
"""An external provider-key check of an attestation."""


def confidential_execution_request_digest(request: Mapping[str, Any] | WireModel) -> str:
    """``confidentialExecutionRequestDigest``: digest over the complete confidentiality request."""
    parsed = material_of(request, ConfidentialExecutionRequest, ())
    return wire_digest(parsed.to_wire())


def confidential_execution_verified(
    *,
    request: Any,
    environment: Any,
    attestation: Any = None,
    verify_provider_attestation: ConfidentialAttestationVerifier | None = None,
) -> bool:
    """``confidentialExecutionVerified``: true only when a confidential request, its
    environment and the attestation bind to each other exactly and the external provider
    check accepts the attestation."""
    exact_request: ConfidentialExecutionRequest | None = parse_or_none(ConfidentialExecutionRequest, request)
    if exact_request is None or not exact_request.requested:
        return False
    if attestation is None or verify_provider_attestation is None:
        return False
    exact_environment: ConfidentialExecutionEnvironment | None = parse_or_none(
        ConfidentialExecutionEnvironment, environment
    )
    exact_attestation: ConfidentialAttestation | None = parse_or_none(ConfidentialAttestation, attestation)
    if exact_environment is None or exact_attestation is None:
        return False
    if not exact_environment.confidential_requested:
        return False
    if (
        exact_request.nonce is None
        or exact_request.policy is None
        or exact_request.profile_digest is None
        or exact_attestation.requested != exact_request.requested
        or exact_attestation.provider != exact_environment.provider
        or exact_attestation.environment_id != exact_environment.environment_id
        or exact_attestation.source.provider != exact_environment.source.provider
        or not same_wire(exact_attestation.source, exact_environment.source)
        or exact_attestation.request_digest != exact_environment.request_digest
        or exact_attestation.nonce != exact_request.nonce
        or exact_attestation.policy != exact_request.policy
        or exact_attestation.profile_digest != exact_request.profile_digest
        or exact_environment.confidential_requested != exact_request.requested
    ):
        return False
    return verify_provider_attestation(exact_attestation, exact_environment) is True


register_wire_models(
    ConfidentialAttestation=ConfidentialAttestation,
    ConfidentialExecutionRequest=ConfidentialExecutionRequest,
)
