"""Portable conversation context and its transfer plan (``portable-context-{base,plan,plan-request}.ts``).

A :class:`PortableConversationContext` is a digest-sealed slice of one run's history,
made of :class:`~agent_interface.runtime.parts.BackendMessage` values. A
:class:`PortableContextPlan` embeds that immutable source, decides every message and
part exactly once, names the destination runner and carries the exact derived context.
A planner answers a :class:`PortableContextPlanRequest` with a ready, over-limit or
unsupported result that repeats the request id and digest;
:func:`portable_context_plan_result_matches_request` checks that binding.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import cache
from typing import Annotated, Any, Final, Literal, Self, TypeVar

from pydantic import Field, model_validator

from agent_interface.core.canonical import (
    Sha256Digest,
    canonical_bytes,
)
from agent_interface.core.contract_limits import (
    CONTRACT_MAX_ARRAY_LENGTH,
    CONTRACT_MAX_JSON_NODES,
    CONTRACT_MAX_STRING_LENGTH,
    BoundedIdentifier,
    IsoDatetime,
    NonNegativeSafeInt,
    PositiveSafeInt,
    Utf16Length,
    wire_digest,
)
from agent_interface.core.errors import (
    ContractError,
    Refinement,
)
from agent_interface.core.model import (
    WireList,
    WireModel,
    thaw,
    wire_adapter,
)
from agent_interface.core.registry import register_wire_models
from agent_interface.runtime.parts import (
    BackendMessage,
    InputPart,
)

__all__ = [
    "PortableContextAttachmentRef",
    "PortableContextDestination",
    "PortableContextMessagePlan",
    "PortableContextOverLimitResult",
    "PortableContextPartPlan",
    "PortableContextPlan",
    "PortableContextPlanRequest",
    "PortableContextPlanResult",
    "PortableContextReadyResult",
    "PortableContextSourceBoundary",
    "PortableContextUnsupportedResult",
    "PortableConversationContext",
    "plain_wire",
    "portable_context_plan_digest",
    "portable_context_plan_request_digest",
    "portable_context_plan_result_matches_request",
    "portable_conversation_context_digest",
    "same_wire",
]


# --- wire-value helpers (public: other durable modules, the kits and in-memory implementations use them)


WireTimestamp = Annotated[IsoDatetime, Utf16Length(max=64)]
"""zod ``z.iso.datetime().max(64)``."""

NonEmptyBoundedString = Annotated[str, Utf16Length(max=CONTRACT_MAX_STRING_LENGTH, min=1)]
"""zod ``boundedStringSchema.min(1)``."""

IdentifierList = Annotated[WireList[BoundedIdentifier], Field(max_length=CONTRACT_MAX_ARRAY_LENGTH)]


def portable_wire_digest(value: Any) -> str:
    """``wireDigest`` of the portable-context modules: the digest-material bounds, the byte
    bound, and then the bounds of ``isBoundedJsonValue`` on the normalized material."""
    counts: list[int] = []
    digest = wire_digest(value, counts)
    # ``wire_digest`` passed every other bound; only the double node count can fail here
    # (``is_bounded_json_value`` on the same walk, counting each container twice).
    nodes, containers = counts
    if nodes + containers > CONTRACT_MAX_JSON_NODES:
        raise ContractError.single(
            "", "bounded_json",
            f"value exceeds the contract bounds: more than {CONTRACT_MAX_JSON_NODES} JSON nodes",
        )
    return digest


def same_wire(left: Any, right: Any) -> bool:
    """Whether two wire values have the same RFC 8785 form (``wireDigest(a) === wireDigest(b)``)."""
    return canonical_bytes(plain_wire(left)) == canonical_bytes(plain_wire(right))


def same_optional_wire(left: Any, right: Any) -> bool:
    """``sameOptionalWireValue``: both absent, or both present with the same wire form."""
    if left is None or right is None:
        return left is None and right is None
    return same_wire(left, right)


def plain_wire(value: Any) -> Any:
    """Plain JSON data of a wire value: models become their wire form, containers are copied."""
    if isinstance(value, WireModel):
        return value.to_wire()
    if isinstance(value, Mapping):
        return {key: plain_wire(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain_wire(item) for item in value]
    return value


def _days_from_civil(year: int, month: int, day: int) -> int:
    year -= month <= 2
    era = (year if year >= 0 else year - 399) // 400
    yoe = year - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def epoch_ms(timestamp: str) -> int:
    """``Date.parse`` of a validated ``z.iso.datetime()`` value: milliseconds since the epoch.

    Fractions beyond milliseconds are truncated, as JavaScript does.
    """
    date, _, time = timestamp.rstrip("Z").partition("T")
    year, month, day = (int(piece) for piece in date.split("-"))
    clock, _, fraction = time.partition(".")
    hour, minute, second = (int(piece) for piece in clock.split(":"))
    millis = int((fraction + "000")[:3])
    days = _days_from_civil(year, month, day)
    return ((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + millis


M = TypeVar("M", bound=WireModel)


def parse_or_none(tp: Any, value: Any) -> Any:
    """A validated instance of ``tp`` (a model or union), or ``None`` when ``value`` is refused."""
    if isinstance(tp, type) and isinstance(value, tp):
        return value
    if isinstance(value, WireModel):
        value = value.to_wire()
    try:
        return wire_adapter(tp).parse(value)
    except ContractError:
        return None


@cache
def _extends_by(model: type[WireModel], material: type[WireModel], drop: frozenset[str]) -> bool:
    """Whether ``model`` is ``material`` plus fields whose wire names are in ``drop``,
    with the same annotations, and ``material`` has no model validator of its own."""
    fields, base = model.model_fields, material.model_fields
    if material.__pydantic_decorators__.model_validators:
        return False
    for name, field in fields.items():
        if name not in base:
            if (field.alias or name) not in drop:
                return False
        elif field.annotation is not base[name].annotation or field.metadata != base[name].metadata:
            return False
    return base.keys() <= fields.keys()


def material_of(
    value: Mapping[str, Any] | WireModel, material: type[M], drop: Iterable[str]
) -> M:
    """Parse the digest material of ``value``: a material mapping, or a full model whose
    own digest fields (``drop``) are left out. A refused material raises ``ContractError``."""
    if isinstance(value, material) and _extends_by(type(value), material, frozenset(drop)):
        # A validated model that only adds the dropped fields to ``material``: its other
        # fields passed the material's own field schemas already (the material classes
        # add no validator of their own), so parsing its wire form again (and every
        # digest nested in it) would give back the same values.
        names = material.model_fields.keys()
        built: M = material.model_construct(  # type: ignore[assignment]
            _fields_set=value.model_fields_set & names,
            **{name: value.__dict__[name] for name in names},
        )
        return built
    if isinstance(value, WireModel):
        wire = {key: item for key, item in value.to_wire().items() if key not in set(drop)}
        return material.parse_wire(wire)
    if isinstance(value, material):
        return value
    return material.parse_wire(plain_wire(value))


# --- the sealed source ----------------------------------------------------------------


class PortableContextSourceBoundary(WireModel):
    """The exact run and message a portable context was cut from."""

    run_id: BoundedIdentifier
    message_id: BoundedIdentifier
    provider: BoundedIdentifier
    environment_id: BoundedIdentifier
    session_id: BoundedIdentifier
    execution_id: BoundedIdentifier
    request_digest: Sha256Digest
    branch_id: BoundedIdentifier | None = None


class PortableContextAttachmentRef(WireModel):
    """A content-addressed attachment carried by one part of a context message."""

    message_id: BoundedIdentifier
    part_index: NonNegativeSafeInt
    digest: Sha256Digest
    name: BoundedIdentifier | None = None
    media_type: BoundedIdentifier | None = None


class _PortableConversationContextMaterial(WireModel):
    source: PortableContextSourceBoundary
    completeness: Literal["complete", "partial"]
    messages: Annotated[WireList[BackendMessage], Field(max_length=1_024)]
    attachments: Annotated[WireList[PortableContextAttachmentRef], Field(max_length=1_024)]


def portable_conversation_context_digest(
    material: Mapping[str, Any] | WireModel,
) -> str:
    """``portableConversationContextDigest``: digest of a context without its ``digest``.

    Like the reference, the material is not validated: a mapping is hashed exactly as
    given (bounded JSON only; a ``digest`` key in it is hashed too). A context model
    is hashed without its own ``digest``.
    """
    if isinstance(material, WireModel):
        wire = {key: item for key, item in material.to_wire().items() if key != "digest"}
        return portable_wire_digest(wire)
    return portable_wire_digest(plain_wire(material))


class PortableConversationContext(_PortableConversationContextMaterial):
    """Portable history with unique message ids, attachments that point at real parts,
    and a digest over everything else."""

    digest: Sha256Digest

    @model_validator(mode="after")
    def _refine(self) -> Self:
        issues = Refinement("PortableConversationContext")
        ids = [message.id for message in self.messages]
        if len(set(ids)) != len(ids):
            issues.add(("messages",), "duplicate_message_id", "portable context message ids must be unique")
        by_id = {message.id: message for message in self.messages}
        for attachment in self.attachments:
            message = by_id.get(attachment.message_id)
            if message is None or attachment.part_index >= len(message.parts):
                issues.add(
                    ("attachments",),
                    "attachment_unknown_part",
                    "attachment must reference a part in the portable context",
                )
        if self.digest != portable_conversation_context_digest(self):
            issues.add(("digest",), "digest_mismatch", "portable context digest does not match its content")
        issues.check()
        return self

    @classmethod
    def seal(cls, material: Mapping[str, Any]) -> Self:
        """Build a context from its material (wire names), computing ``digest``."""
        plain = plain_wire(material)
        return cls.parse_wire({**plain, "digest": portable_conversation_context_digest(plain)})


# --- the plan -------------------------------------------------------------------------


class PortableContextDestination(WireModel):
    """The fresh runner session that would receive the derived context."""

    runner: BoundedIdentifier
    provider: BoundedIdentifier
    environment_id: BoundedIdentifier
    session_id: BoundedIdentifier
    run_id: BoundedIdentifier
    execution_id: BoundedIdentifier
    model: BoundedIdentifier | None = None
    profile_digest: Sha256Digest


class PortableContextPartPlan(WireModel):
    """The decision for one source part: include it, transform it into ``output``, or omit it."""

    part_index: NonNegativeSafeInt
    action: Literal["include", "transform", "omit"]
    output: InputPart | None = None
    reason: NonEmptyBoundedString | None = None

    @model_validator(mode="after")
    def _refine(self) -> Self:
        issues = Refinement("PortableContextPartPlan")
        if self.action == "transform" and self.output is None:
            issues.add(("output",), "transform_output_missing", "a transformed part must include its portable output")
        if self.action != "transform" and self.output is not None:
            issues.add(("output",), "output_not_transformed", "only a transformed part may include portable output")
        if self.action != "include" and self.reason is None:
            issues.add(("reason",), "reason_missing", "a transformed or omitted part must include a reason")
        issues.check()
        return self


class PortableContextMessagePlan(WireModel):
    """The decision for one source message and each of its parts."""

    message_id: BoundedIdentifier
    action: Literal["include", "omit"]
    parts: Annotated[WireList[PortableContextPartPlan], Field(max_length=CONTRACT_MAX_ARRAY_LENGTH)]
    reason: NonEmptyBoundedString | None = None

    @model_validator(mode="after")
    def _refine(self) -> Self:
        issues = Refinement("PortableContextMessagePlan")
        indexes = [part.part_index for part in self.parts]
        if len(set(indexes)) != len(indexes):
            issues.add(("parts",), "duplicate_part_index", "part indexes must be unique within a message plan")
        if self.action == "omit":
            if self.reason is None:
                issues.add(("reason",), "reason_missing", "an omitted message must include a reason")
            if any(part.action != "omit" for part in self.parts):
                issues.add(("parts",), "omitted_message_part_kept", "every part of an omitted message must be omitted")
        issues.check()
        return self


class _PortableContextPlanMaterial(WireModel):
    plan_id: BoundedIdentifier
    source: PortableConversationContext
    destination: PortableContextDestination
    messages: Annotated[WireList[PortableContextMessagePlan], Field(max_length=CONTRACT_MAX_ARRAY_LENGTH)]
    context: PortableConversationContext
    estimated_tokens: NonNegativeSafeInt | None = None
    requires_acceptance: bool


def portable_context_plan_digest(material: Mapping[str, Any] | WireModel) -> str:
    """``portableContextPlanDigest``: digest of a plan's material (everything but ``digest``)."""
    parsed = material_of(material, _PortableContextPlanMaterial, ("digest",))
    return portable_wire_digest(parsed.to_wire())


_INPUT_PART = wire_adapter(InputPart, "InputPart")


class PortableContextPlan(_PortableContextPlanMaterial):
    """An immutable transfer plan: every source message and part decided exactly once, and
    the derived ``context`` equal to what those decisions produce."""

    digest: Sha256Digest

    @model_validator(mode="after")
    def _refine(self) -> Self:
        issues = Refinement("PortableContextPlan")
        decided = [message.message_id for message in self.messages]
        if len(set(decided)) != len(decided):
            issues.add(("messages",), "duplicate_message_id", "message ids must be unique within a context plan")
        source_ids = [message.id for message in self.source.messages]
        if len(decided) != len(source_ids) or sorted(decided) != sorted(source_ids):
            issues.add(("messages",), "undecided_message", "a context plan must decide every source message exactly once")
        if not same_wire(self.context.source, self.source.source):
            issues.add(("context", "source"), "source_mismatch", "output context source must match the immutable source")

        plans: dict[str, PortableContextMessagePlan] = {}
        for message_plan in self.messages:
            plans.setdefault(message_plan.message_id, message_plan)
        expected_messages: list[dict[str, Any]] = []
        for source_message in self.source.messages:
            decision = plans.get(source_message.id)
            if decision is None:
                continue
            decided_indexes = sorted(part.part_index for part in decision.parts)
            if decided_indexes != list(range(len(source_message.parts))):
                issues.add(
                    ("messages",),
                    "undecided_part",
                    "message {message_id} must decide every source part exactly once",
                    {"message_id": source_message.id},
                )
                continue
            if decision.action == "omit":
                continue
            output_parts: list[Any] = []
            for part_plan in sorted(decision.parts, key=lambda part: part.part_index):
                if part_plan.action == "omit":
                    continue
                if part_plan.action == "transform":
                    if part_plan.output is not None:
                        output_parts.append(part_plan.output.to_wire())
                    continue
                try:
                    kept = _INPUT_PART.parse(thaw(source_message.parts[part_plan.part_index]))
                except ContractError:
                    issues.add(
                        ("messages",),
                        "part_not_portable",
                        "message {message_id} part {part_index} must be transformed or omitted",
                        {"message_id": source_message.id, "part_index": part_plan.part_index},
                    )
                    continue
                output_parts.append(kept.to_wire())
            if not output_parts:
                issues.add(
                    ("messages",),
                    "empty_included_message",
                    "included message {message_id} must retain at least one part",
                    {"message_id": source_message.id},
                )
            expected_messages.append({**source_message.to_wire(), "parts": output_parts})
        if not same_wire(expected_messages, self.context.messages):
            issues.add(
                ("context", "messages"),
                "derived_messages_mismatch",
                "output messages do not exactly match the source decisions",
            )

        def kept_attachment(attachment: PortableContextAttachmentRef) -> bool:
            message_plan = plans.get(attachment.message_id)
            if message_plan is None or message_plan.action != "include":
                return False
            part = next(
                (p for p in message_plan.parts if p.part_index == attachment.part_index), None
            )
            return part is not None and part.action == "include"

        expected_attachments = [a for a in self.source.attachments if kept_attachment(a)]
        if not same_wire(expected_attachments, self.context.attachments):
            issues.add(
                ("context", "attachments"),
                "derived_attachments_mismatch",
                "output attachments do not exactly match included source parts",
            )
        changes_content = any(
            message.action == "omit" or any(part.action != "include" for part in message.parts)
            for message in self.messages
        )
        requires_acceptance = (
            changes_content
            or self.source.completeness == "partial"
            or self.context.completeness == "partial"
        )
        if self.requires_acceptance != requires_acceptance:
            issues.add(
                ("requiresAcceptance",),
                "acceptance_required",
                "requiresAcceptance must be true when content changes or either context is partial",
            )
        expected_completeness = (
            "partial" if changes_content or self.source.completeness == "partial" else "complete"
        )
        if self.context.completeness != expected_completeness:
            issues.add(
                ("context", "completeness"),
                "completeness_mismatch",
                "output context completeness must be {expected}",
                {"expected": expected_completeness},
            )
        if self.digest != portable_context_plan_digest(self):
            issues.add(("digest",), "digest_mismatch", "portable context plan digest does not match its content")
        issues.check()
        return self

    @classmethod
    def seal(cls, material: Mapping[str, Any]) -> Self:
        """Build a plan from its material (wire names), computing ``digest``."""
        plain = plain_wire(material)
        return cls.parse_wire({**plain, "digest": portable_context_plan_digest(plain)})


# --- request and result ---------------------------------------------------------------


class _PortableContextPlanRequestMaterial(WireModel):
    request_id: BoundedIdentifier
    source: PortableConversationContext
    destination: PortableContextDestination
    max_input_tokens: PositiveSafeInt | None = None


def portable_context_plan_request_digest(material: Mapping[str, Any] | WireModel) -> str:
    """``portableContextPlanRequestDigest``: digest of ``requestId``, ``source``,
    ``destination`` and, when set, ``maxInputTokens``."""
    parsed = material_of(material, _PortableContextPlanRequestMaterial, ("requestDigest",))
    return portable_wire_digest(parsed.to_wire())


class PortableContextPlanRequest(_PortableContextPlanRequestMaterial):
    """Ask a planner to derive a context for ``destination`` from ``source``."""

    request_digest: Sha256Digest

    @model_validator(mode="after")
    def _refine(self) -> Self:
        issues = Refinement("PortableContextPlanRequest")
        if self.request_digest != portable_context_plan_request_digest(self):
            issues.add(
                ("requestDigest",),
                "digest_mismatch",
                "portable context plan request digest does not match its content",
            )
        issues.check()
        return self

    @classmethod
    def seal(cls, material: Mapping[str, Any]) -> Self:
        """Build a request from its material (wire names), computing ``requestDigest``."""
        plain = plain_wire(material)
        return cls.parse_wire({**plain, "requestDigest": portable_context_plan_request_digest(plain)})


class PortableContextReadyResult(WireModel):
    """The plan fits: the portable context plan for the request, bound to its id and digest."""

    status: Literal["ready"] = "ready"
    request_id: BoundedIdentifier
    request_digest: Sha256Digest
    plan: PortableContextPlan


class PortableContextOverLimitResult(WireModel):
    """The history does not fit the target's input budget: the estimate, the limit and a boundary
    message to cut at; nothing is dispatched."""

    status: Literal["over_limit"] = "over_limit"
    request_id: BoundedIdentifier
    request_digest: Sha256Digest
    estimated_tokens: NonNegativeSafeInt | None = None
    max_input_tokens: PositiveSafeInt
    suggested_boundary_message_id: BoundedIdentifier | None = None
    message: NonEmptyBoundedString


class PortableContextUnsupportedResult(WireModel):
    """The planner cannot build portable context for this request; the message says why."""

    status: Literal["unsupported"] = "unsupported"
    request_id: BoundedIdentifier
    request_digest: Sha256Digest
    message: NonEmptyBoundedString


PortableContextPlanResult = Annotated[
    PortableContextReadyResult | PortableContextOverLimitResult | PortableContextUnsupportedResult,
    Field(discriminator="status"),
]
"""A planner's answer; every variant repeats the request id and digest."""


def portable_context_plan_result_matches_request(request: Any, result: Any) -> bool:
    """``portableContextPlanResultMatchesRequest``: the result answers exactly ``request``.

    Both sides must validate; the id and digest must repeat the request's; a ready plan
    must embed the same source and destination and, when the request set
    ``maxInputTokens``, state an estimate within it; an over-limit answer must repeat the
    same limit, exceed it when it states an estimate, and suggest only a source message.
    """
    exact_request: PortableContextPlanRequest | None = parse_or_none(PortableContextPlanRequest, request)
    exact_result = parse_or_none(PortableContextPlanResult, result)
    if exact_request is None or exact_result is None:
        return False
    if (
        exact_result.request_id != exact_request.request_id
        or exact_result.request_digest != exact_request.request_digest
    ):
        return False
    limit = exact_request.max_input_tokens
    if isinstance(exact_result, PortableContextReadyResult):
        plan = exact_result.plan
        if not same_wire(plan.source, exact_request.source) or not same_wire(
            plan.destination, exact_request.destination
        ):
            return False
        if limit is None:
            return True
        return plan.estimated_tokens is not None and plan.estimated_tokens <= limit
    if isinstance(exact_result, PortableContextOverLimitResult):
        suggested = exact_result.suggested_boundary_message_id
        return (
            limit is not None
            and exact_result.max_input_tokens == limit
            and (exact_result.estimated_tokens is None or exact_result.estimated_tokens > limit)
            and (
                suggested is None
                or any(message.id == suggested for message in exact_request.source.messages)
            )
        )
    return True


_REGISTERED: Final = {
    "PortableContextSourceBoundary": PortableContextSourceBoundary,
    "PortableContextAttachmentRef": PortableContextAttachmentRef,
    "PortableConversationContext": PortableConversationContext,
    "PortableContextDestination": PortableContextDestination,
    "PortableContextPartPlan": PortableContextPartPlan,
    "PortableContextMessagePlan": PortableContextMessagePlan,
    "PortableContextPlan": PortableContextPlan,
    "PortableContextPlanRequest": PortableContextPlanRequest,
    "PortableContextPlanResult": PortableContextPlanResult,
}
register_wire_models(**_REGISTERED)
