"""Interaction requests (``interaction-envelope.ts``): the subject, the run/environment/session
binding, the request material and its canonical digest, and resolution checks against a request.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, ClassVar, Literal, Self

from pydantic import Field, model_validator

from agent_interface.core.canonical import (
    Sha256Digest,
    canonical_digest,
)
from agent_interface.core.contract_limits import (
    CONTRACT_MAX_ARRAY_LENGTH,
    BoundedIdentifier,
    BoundedJson,
    BoundedString,
    PositiveSafeInt,
)
from agent_interface.core.errors import (
    ContractError,
    Refinement,
)
from agent_interface.core.model import (
    WireList,
    WireModel,
)
from agent_interface.core.registry import register_wire_models
from agent_interface.runtime.interaction_answers import InteractionValidation, _resolution_issues
from agent_interface.runtime.interaction_fields import (
    InteractionAnswerSpec,
    InteractionOutcome,
    InteractionResolution,
    InteractionResponseScope,
    NonEmptyBoundedString,
    SecretInteractionField,
)
from agent_interface.runtime.usage import NullWhenSent

__all__ = [
    "InteractionBinding",
    "InteractionExecutionBinding",
    "InteractionRequest",
    "InteractionRequestBinding",
    "InteractionRequestMaterial",
    "InteractionSubject",
    "interaction_request_digest",
    "validate_resolution_for_request",
]


# ---------------------------------------------------------------------------
# Request envelope
# ---------------------------------------------------------------------------


class InteractionToolSubject(NullWhenSent):
    wire_nullable: ClassVar[frozenset[str]] = frozenset({"input"})

    type: Literal["tool"]
    tool_name: BoundedIdentifier
    input: BoundedJson | None = None


class InteractionCommandSubject(WireModel):
    type: Literal["command"]
    command: BoundedString


class InteractionFileSubject(WireModel):
    type: Literal["file"]
    path: BoundedString
    preview: BoundedString | None = None


class InteractionResourceSubject(WireModel):
    type: Literal["resource"]
    uri: BoundedString


InteractionSubject = Annotated[
    InteractionToolSubject
    | InteractionCommandSubject
    | InteractionFileSubject
    | InteractionResourceSubject,
    Field(discriminator="type"),
]
"""What a request is about (drives preview and permission UX)."""


class InteractionExecutionBinding(WireModel):
    """Exact execution coordinates shared by every interaction of one provider turn."""

    run_id: BoundedIdentifier
    provider: BoundedIdentifier
    environment_id: BoundedIdentifier
    session_id: BoundedIdentifier
    execution_id: BoundedIdentifier


class InteractionRequestBinding(InteractionExecutionBinding):
    """Binds an interaction request to the exact run, provider, environment, session, execution and
    interaction id it belongs to."""

    interaction_id: BoundedIdentifier


class InteractionBinding(InteractionRequestBinding):
    """Binding carried by a response command and its acknowledgement."""

    request_digest: Sha256Digest


class InteractionRequestMaterial(WireModel):
    """An interaction request without its digest (what the digest covers)."""

    id: BoundedIdentifier
    kind: BoundedIdentifier
    title: NonEmptyBoundedString
    body: BoundedString | None = None
    subject: InteractionSubject | None = None
    answer_spec: InteractionAnswerSpec
    response_scopes: Annotated[
        WireList[InteractionResponseScope],
        Field(min_length=1, max_length=CONTRACT_MAX_ARRAY_LENGTH),
    ] | None = None
    allowed_outcomes: Annotated[
        WireList[InteractionOutcome], Field(min_length=1, max_length=3)
    ] | None = None
    default: InteractionResolution | None = None
    timeout_ms: PositiveSafeInt | None = None
    on_timeout: Literal["default", "fail", "wait"] | None = None
    binding: InteractionRequestBinding


def _secret_default_fields(spec: InteractionAnswerSpec, default: Any) -> list[str]:
    if default is None or not default.data:
        return []
    secret = {item.name for item in spec.fields if isinstance(item, SecretInteractionField)}
    return [name for name in default.data if name in secret]


def interaction_request_digest(
    material: InteractionRequestMaterial | Mapping[str, Any],
) -> str:
    """Canonical digest of a request's material (``interactionRequestDigest``).

    Refuses a default that embeds a secret answer.
    """
    if isinstance(material, InteractionRequestMaterial):
        parsed = material
    elif isinstance(material, Mapping):
        parsed = InteractionRequestMaterial.parse_wire(dict(material))
    else:
        raise ContractError.single("", "invalid_type", "request material must be an object")
    if _secret_default_fields(parsed.answer_spec, parsed.default):
        raise ContractError.single(
            "/default/data", "secret_default",
            "secret answers cannot be embedded in interaction defaults",
        )
    wire = parsed.to_wire()
    wire.pop("requestDigest", None)
    return canonical_digest(wire)


class InteractionRequest(InteractionRequestMaterial):
    """A provider-originated request bound to one exact run, with its digest."""

    request_digest: Sha256Digest

    def material(self) -> InteractionRequestMaterial:
        wire = self.to_wire()
        wire.pop("requestDigest")
        return InteractionRequestMaterial.model_validate(wire, by_alias=True)

    @classmethod
    def create(cls, material: InteractionRequestMaterial | Mapping[str, Any]) -> InteractionRequest:
        """Seal ``material`` with its canonical ``requestDigest``."""
        parsed = (
            material
            if isinstance(material, InteractionRequestMaterial)
            else InteractionRequestMaterial.parse_wire(dict(material))
        )
        digest = interaction_request_digest(parsed)
        return cls.parse_wire({**parsed.to_wire(), "requestDigest": digest})

    @model_validator(mode="after")
    def _refine(self) -> Self:
        issues = Refinement("InteractionRequest")
        if self.binding.interaction_id != self.id:
            issues.add(
                ("binding", "interactionId"), "binding_interaction_mismatch",
                "interaction binding must name the request id",
            )
        if self.response_scopes is not None and len(set(self.response_scopes)) != len(self.response_scopes):
            issues.add(("responseScopes",), "duplicate_value", "interaction response scopes must be unique")
        if self.allowed_outcomes is not None and len(set(self.allowed_outcomes)) != len(self.allowed_outcomes):
            issues.add(("allowedOutcomes",), "duplicate_value", "interaction outcomes must be unique")
        if self.on_timeout == "default" and self.default is None:
            issues.add(("default",), "timeout_default_missing", "onTimeout=default requires a default resolution")
        if (
            self.default is not None
            and self.allowed_outcomes is not None
            and self.default.outcome not in self.allowed_outcomes
        ):
            issues.add(("default", "outcome"), "default_outcome_not_allowed", "default outcome is not allowed by the request")
        secret_defaults: list[str] = []
        if self.default is not None:
            for issue in _resolution_issues(
                self.kind, self.answer_spec, self.response_scopes,
                self.default.outcome, self.default.data, (),
            ):
                issues.add(("default",), "invalid_default", issue.message)
            secret_defaults = _secret_default_fields(self.answer_spec, self.default)
            for name in secret_defaults:
                issues.add(("default", "data", name), "secret_default", "secret answers cannot be embedded in interaction defaults")
        if not secret_defaults:
            wire = self.to_wire()
            claimed = wire.pop("requestDigest")
            if claimed != canonical_digest(wire):
                issues.add(("requestDigest",), "digest_mismatch", "interaction request digest does not match its content")
        issues.check()
        return self


register_wire_models(
    InteractionSubject=InteractionSubject,
    InteractionRequestBinding=InteractionRequestBinding,
    InteractionExecutionBinding=InteractionExecutionBinding,
    InteractionBinding=InteractionBinding,
    InteractionRequest=InteractionRequest,
)


def validate_resolution_for_request(
    request: InteractionRequest | InteractionRequestMaterial, resolution: Any
) -> InteractionValidation:
    """Check a resolution (accepted/declined/cancelled with optional data) for ``request``.

    Permission requests need exactly one ``grant``; a grant broader than the request's
    ``responseScopes`` is refused (omitted scopes permit only ``allow_once``).
    """
    outcome = getattr(resolution, "outcome", None)
    data = getattr(resolution, "data", None)
    if isinstance(resolution, Mapping):
        outcome, data = resolution.get("outcome"), resolution.get("data")
    return InteractionValidation(
        tuple(
            _resolution_issues(
                request.kind, request.answer_spec, request.response_scopes,
                str(outcome), data, (),
            )
        )
    )
