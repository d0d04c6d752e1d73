"""Typed interactions: requests, answers, response commands and acknowledgements
(``interaction*.ts``).

A provider originates an :class:`InteractionRequest` bound to one exact run and
carrying a canonical ``requestDigest``. A caller answers with an
:class:`InteractionResponseCommand` (run, environment, provider session, interaction
and caller operation id, plus a ``commandDigest``), after
:func:`validate_interaction_response` checked the answer against that exact request.
The :class:`InteractionAcknowledgement` never carries the answer or a hash of it.

Secret answers: response ``data`` is hidden from ``repr``; no message produced here
quotes an answer value, and nothing here logs.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, ClassVar, Final, Literal, Self

from pydantic import AfterValidator, AllowInfNan, BeforeValidator, Field, Strict, model_validator
from pydantic_core import PydanticCustomError

from ._model import FrozenDict, WireList, WireModel, thaw, wire_adapter
from .canonical import Sha256Digest, canonical_digest
from .contract_limits import (
    CONTRACT_MAX_ARRAY_LENGTH,
    CONTRACT_MAX_IDENTIFIER_LENGTH,
    CONTRACT_MAX_MAP_ENTRIES,
    CONTRACT_MAX_STRING_LENGTH,
    BoundedIdentifier,
    BoundedJson,
    BoundedString,
    FiniteNumber,
    PositiveSafeInt,
    Utf16Length,
    js_trim,
    utf16_length,
)
from .errors import ContractError, ContractIssue, Refinement, json_pointer
from .registry import register_wire_models
from .usage import NullWhenSent

__all__ = [
    "PERMISSION_FEEDBACK_FIELD",
    "PERMISSION_GRANT_FIELD",
    "RESERVED_INTERACTION_FIELD_NAMES",
    "BooleanInteractionField",
    "InteractionAcknowledgement",
    "InteractionAcknowledgementStatus",
    "InteractionAnswerSpec",
    "InteractionBinding",
    "InteractionCapabilities",
    "InteractionData",
    "InteractionDataValue",
    "InteractionExecutionBinding",
    "InteractionField",
    "InteractionFieldName",
    "InteractionFieldType",
    "InteractionKind",
    "InteractionOutcome",
    "InteractionRequest",
    "InteractionRequestBinding",
    "InteractionRequestMaterial",
    "InteractionResolution",
    "InteractionResponse",
    "InteractionResponseCommand",
    "InteractionResponseScope",
    "InteractionResponseValidation",
    "InteractionSecretReference",
    "InteractionSubject",
    "InteractionValidation",
    "NumberInteractionField",
    "PermissionGrant",
    "RequestedInteractions",
    "SecretInteractionField",
    "SelectInteractionField",
    "SelectOption",
    "TextInteractionField",
    "interaction_request_digest",
    "interaction_response_command_digest",
    "interaction_response_is_valid",
    "permission_answer_spec",
    "require_valid_interaction_response",
    "validate_and_parse_interaction_response",
    "validate_interaction_answer",
    "validate_interaction_response",
    "validate_interaction_response_command",
    "validate_resolution_for_request",
]

# ---------------------------------------------------------------------------
# Field names and answer specifications
# ---------------------------------------------------------------------------

RESERVED_INTERACTION_FIELD_NAMES: Final = frozenset({"__proto__", "constructor", "prototype"})
"""Field names refused everywhere: they collide with JavaScript object internals."""


def _not_reserved(value: str) -> str:
    if value in RESERVED_INTERACTION_FIELD_NAMES:
        raise PydanticCustomError("reserved_field_name", "interaction field name is reserved")
    return value


InteractionFieldName = Annotated[BoundedIdentifier, AfterValidator(_not_reserved)]
"""A bounded identifier that is not ``__proto__``, ``constructor`` or ``prototype``."""

NonEmptyBoundedString = Annotated[str, Utf16Length(max=CONTRACT_MAX_STRING_LENGTH, min=1)]
MaxLength = Annotated[PositiveSafeInt, Field(le=CONTRACT_MAX_STRING_LENGTH)]


class _FieldBase(WireModel):
    name: InteractionFieldName
    label: NonEmptyBoundedString
    required: bool | None = None


class TextInteractionField(_FieldBase):
    type: Literal["text"]
    multiline: bool | None = None
    placeholder: BoundedString | None = None
    max_length: MaxLength | None = None
    default: BoundedString | None = None

    @model_validator(mode="after")
    def _refine(self) -> Self:
        if (
            self.default is not None
            and self.max_length is not None
            and utf16_length(self.default) > self.max_length
        ):
            issues = Refinement("TextInteractionField")
            issues.add(("default",), "default_too_long", "text field default exceeds maxLength")
            issues.check()
        return self


class NumberInteractionField(_FieldBase):
    type: Literal["number"]
    min: FiniteNumber | None = None
    max: FiniteNumber | None = None
    default: FiniteNumber | None = None

    @model_validator(mode="after")
    def _refine(self) -> Self:
        issues = Refinement("NumberInteractionField")
        if self.min is not None and self.max is not None and self.min > self.max:
            issues.add(("max",), "max_below_min", "number field max must be at least min")
        if self.default is not None and self.min is not None and self.default < self.min:
            issues.add(("default",), "default_below_min", "number field default is below min")
        if self.default is not None and self.max is not None and self.default > self.max:
            issues.add(("default",), "default_above_max", "number field default is above max")
        issues.check()
        return self


class BooleanInteractionField(_FieldBase):
    type: Literal["boolean"]
    default: bool | None = None


class SelectOption(WireModel):
    value: BoundedIdentifier
    label: NonEmptyBoundedString
    description: BoundedString | None = None


class SelectInteractionField(_FieldBase):
    type: Literal["select"]
    options: Annotated[
        WireList[SelectOption], Field(min_length=1, max_length=CONTRACT_MAX_ARRAY_LENGTH)
    ]
    multi: bool | None = None
    allow_custom: bool | None = None
    default: Annotated[
        WireList[BoundedIdentifier], Field(max_length=CONTRACT_MAX_ARRAY_LENGTH)
    ] | None = None

    @model_validator(mode="after")
    def _refine(self) -> Self:
        issues = Refinement("SelectInteractionField")
        values = [option.value for option in self.options]
        if len(set(values)) != len(values):
            issues.add(("options",), "duplicate_option", "select option values must be unique")
        default = self.default
        if default is not None:
            if len(set(default)) != len(default):
                issues.add(("default",), "duplicate_default", "select default values must be unique")
            if not self.multi and len(default) > 1:
                issues.add(
                    ("default",), "single_select_default",
                    "single-select default may contain at most one value",
                )
            if self.required and len(default) == 0:
                issues.add(
                    ("default",), "required_select_default",
                    "required select default must contain a value",
                )
            allowed = set(values)
            for value in default:
                if value in allowed or (self.allow_custom is True and js_trim(value)):
                    continue
                issues.add(
                    ("default",), "unknown_default_option",
                    "select default contains a value that is not an option",
                )
        issues.check()
        return self


class SecretInteractionField(_FieldBase):
    """Like a text field, but the answer is sensitive and must be masked."""

    type: Literal["secret"]
    placeholder: BoundedString | None = None
    max_length: MaxLength | None = None


InteractionField = Annotated[
    TextInteractionField
    | NumberInteractionField
    | BooleanInteractionField
    | SelectInteractionField
    | SecretInteractionField,
    Field(discriminator="type"),
]


class InteractionAnswerSpec(WireModel):
    """The shape of a valid answer: its fields, with unique names."""

    fields: Annotated[WireList[InteractionField], Field(max_length=CONTRACT_MAX_ARRAY_LENGTH)]

    @model_validator(mode="after")
    def _refine(self) -> Self:
        names = [item.name for item in self.fields]
        if len(set(names)) != len(names):
            issues = Refinement("InteractionAnswerSpec")
            issues.add(("fields",), "duplicate_field_name", "interaction field names must be unique")
            issues.check()
        return self


InteractionFieldType = Literal["text", "number", "boolean", "select", "secret"]
InteractionResponseScope = Literal["interaction", "session", "persistent"]
"""Scope at which an accepted answer may be reused by an explicit policy."""


class InteractionCapabilities(WireModel):
    """What an environment's interactions support; absent means unsupported.

    ``secretAnswers`` must agree with whether ``answerFieldTypes`` lists ``secret``;
    every list is non-empty and free of duplicates.
    """

    kinds: Annotated[
        WireList[BoundedIdentifier], Field(min_length=1, max_length=CONTRACT_MAX_ARRAY_LENGTH)
    ]
    answer_field_types: Annotated[
        WireList[InteractionFieldType], Field(min_length=1, max_length=CONTRACT_MAX_ARRAY_LENGTH)
    ]
    response_scopes: Annotated[
        WireList[InteractionResponseScope],
        Field(min_length=1, max_length=CONTRACT_MAX_ARRAY_LENGTH),
    ]
    secret_answers: bool
    concurrent_requests: bool
    replay: bool
    response_idempotency: bool

    @model_validator(mode="after")
    def _refine(self) -> Self:
        issues = Refinement("InteractionCapabilities")
        if ("secret" in self.answer_field_types) != self.secret_answers:
            issues.add(
                ("secretAnswers",), "secret_answers_mismatch",
                "secretAnswers must agree with the secret answer field capability",
            )
        for path, values, what in (
            ("kinds", self.kinds, "interaction kinds"),
            ("answerFieldTypes", self.answer_field_types, "interaction answer field types"),
            ("responseScopes", self.response_scopes, "interaction response scopes"),
        ):
            if len(set(values)) != len(values):
                issues.add((path,), "duplicate_value", f"{what} must be unique")
        issues.check()
        return self


# ---------------------------------------------------------------------------
# Answer data
# ---------------------------------------------------------------------------


def _require_bool(value: Any) -> Any:
    # pydantic's Literal[True] alone would also accept 1 and 1.0.
    if not isinstance(value, bool):
        raise PydanticCustomError("literal_error", "value must be true")
    return value


class InteractionSecretReference(WireModel):
    """A one-use handle standing for a secret answer held elsewhere."""

    kind: Literal["secret_handle"]
    handle_id: BoundedIdentifier
    one_use: Annotated[Literal[True], BeforeValidator(_require_bool)]


# These aliases are validated on their own too (``wire_adapter(InteractionData)``),
# outside any WireModel's strict config, so each scalar is strict by itself.
_StrictBoundedString = Annotated[str, Strict(), Utf16Length(max=CONTRACT_MAX_STRING_LENGTH)]

InteractionDataValue = (
    _StrictBoundedString
    | Annotated[int, Strict()]
    | Annotated[float, Strict(), AllowInfNan(False)]
    | Annotated[bool, Strict()]
    | Annotated[WireList[_StrictBoundedString], Field(max_length=CONTRACT_MAX_ARRAY_LENGTH)]
    | InteractionSecretReference
)


def _refuse_reserved_keys(value: Any) -> Any:
    if isinstance(value, Mapping):
        if any(key in RESERVED_INTERACTION_FIELD_NAMES for key in value):
            raise PydanticCustomError("reserved_field_name", "interaction field name is reserved")
        if len(value) > CONTRACT_MAX_MAP_ENTRIES:
            raise PydanticCustomError("too_many_fields", "interaction data has too many fields")
    return value


InteractionData = Annotated[
    dict[InteractionFieldName, InteractionDataValue],
    BeforeValidator(_refuse_reserved_keys),
    AfterValidator(FrozenDict),
]
"""Answer values keyed by field name; reserved keys and more than 256 fields refused."""


class _ResolutionBase(WireModel):
    data: InteractionData | None = Field(default=None, repr=False)


class InteractionResolutionAccepted(_ResolutionBase):
    outcome: Literal["accepted"]


class InteractionResolutionDeclined(_ResolutionBase):
    outcome: Literal["declined"]


class InteractionResolutionCancelled(_ResolutionBase):
    outcome: Literal["cancelled"]


InteractionResolution = Annotated[
    InteractionResolutionAccepted | InteractionResolutionDeclined | InteractionResolutionCancelled,
    Field(discriminator="outcome"),
]

InteractionOutcome = Literal["accepted", "declined", "cancelled"]

# ---------------------------------------------------------------------------
# Requested posture and permissions
# ---------------------------------------------------------------------------


class InteractionKind:
    """The well-known interaction kinds, portable across providers."""

    QUESTION: Final = "question"
    PERMISSION: Final = "permission"
    PLAN: Final = "plan"


_WELL_KNOWN_KINDS: Final = frozenset({"question", "permission", "plan"})


def _check_requested_kind(value: str) -> str:
    if value in _WELL_KNOWN_KINDS:
        return value
    if "." in value and not value.startswith(".") and not value.endswith(".") and ".." not in value:
        return value
    raise PydanticCustomError(
        "interaction_kind_not_namespaced", "custom interaction kind must be namespaced"
    )


RequestedInteractionKind = Annotated[BoundedIdentifier, AfterValidator(_check_requested_kind)]


def _check_posture_size(value: Any) -> Any:
    if isinstance(value, Mapping) and len(value) > CONTRACT_MAX_MAP_ENTRIES:
        raise PydanticCustomError(
            "too_many_kinds", f"interaction posture exceeds {CONTRACT_MAX_MAP_ENTRIES} kinds"
        )
    return value


RequestedInteractions = Annotated[
    dict[RequestedInteractionKind, Annotated[bool, Strict()]],
    BeforeValidator(_check_posture_size),
    AfterValidator(FrozenDict),
]
"""Per-turn interaction posture: ``{"permission": true, "acme.review": false}``.

Keys are ``permission``, ``question``, ``plan`` or a namespaced provider kind
(``vendor.kind``). An omitted posture leaves provider defaults unchanged; ``{}``
enables no interaction kind for the turn.
"""

PERMISSION_GRANT_FIELD: Final = "grant"
PERMISSION_FEEDBACK_FIELD: Final = "feedback"

PermissionGrant = Literal["allow_once", "allow_session", "allow_always", "deny"]
_PERMISSION_GRANTS: Final = ("allow_once", "allow_session", "allow_always", "deny")
_GRANT_SCOPE: Final[dict[str, str]] = {
    "allow_once": "interaction",
    "allow_session": "session",
    "allow_always": "persistent",
    "deny": "interaction",
}


def permission_answer_spec(
    *,
    allow_feedback: bool = True,
    response_scopes: Iterable[InteractionResponseScope] | None = None,
) -> InteractionAnswerSpec:
    """A permission answer spec that offers no grant broader than ``response_scopes``
    (default: one-time only)."""
    scopes = set(response_scopes) if response_scopes is not None else {"interaction"}
    options: list[dict[str, str]] = []
    if "interaction" in scopes:
        options.append({"value": "allow_once", "label": "Allow once"})
    if "session" in scopes:
        options.append({"value": "allow_session", "label": "Allow for this session"})
    if "persistent" in scopes:
        options.append({"value": "allow_always", "label": "Always allow"})
    options.append({"value": "deny", "label": "Deny"})
    fields: list[dict[str, Any]] = [
        {
            "type": "select",
            "name": PERMISSION_GRANT_FIELD,
            "label": "Decision",
            "required": True,
            "options": options,
        }
    ]
    if allow_feedback:
        fields.append(
            {
                "type": "text",
                "name": PERMISSION_FEEDBACK_FIELD,
                "label": "Feedback (optional)",
                "multiline": True,
            }
        )
    return InteractionAnswerSpec.parse_wire({"fields": fields})


# ---------------------------------------------------------------------------
# Answer validation
# ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class InteractionValidation:
    """Verdict of an answer check; ``issues`` name JSON Pointers relative to the
    validated document and never quote an answer value."""

    issues: tuple[ContractIssue, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.issues

    @property
    def errors(self) -> tuple[str, ...]:
        return tuple(issue.message for issue in self.issues)

    def raise_for_issues(self, subject: str = "interaction response") -> None:
        if self.issues:
            raise ContractError(self.issues, subject=subject)


@dataclass(frozen=True, slots=True)
class InteractionResponseValidation(InteractionValidation):
    """:class:`InteractionValidation` plus the parsed response when it is valid.

    The response may hold a secret answer, so it is left out of ``repr``.
    """

    response: InteractionResponse | None = field(default=None, repr=False)


class _Issues:
    __slots__ = ("items", "prefix")

    def __init__(self, prefix: tuple[str | int, ...] = ()) -> None:
        self.prefix = prefix
        self.items: list[ContractIssue] = []

    def add(self, path: tuple[str | int, ...], code: str, message: str) -> None:
        self.items.append(ContractIssue(json_pointer((*self.prefix, *path)), code, message))


def _is_number(value: Any) -> bool:
    return (type(value) is int) or (type(value) is float and math.isfinite(value))


def _is_secret_handle(value: Any) -> bool:
    if isinstance(value, InteractionSecretReference):
        return True
    if not isinstance(value, Mapping) or set(value) != {"kind", "handleId", "oneUse"}:
        return False
    handle = value["handleId"]
    return (
        value["kind"] == "secret_handle"
        and value["oneUse"] is True
        and isinstance(handle, str)
        and 1 <= utf16_length(handle) <= CONTRACT_MAX_IDENTIFIER_LENGTH
        and js_trim(handle) == handle
    )


def _spec_of(spec: InteractionAnswerSpec | Mapping[str, Any]) -> InteractionAnswerSpec | _Issues:
    if isinstance(spec, InteractionAnswerSpec):
        return spec
    try:
        return InteractionAnswerSpec.parse_wire(spec)
    except ContractError as error:
        issues = _Issues()
        issues.items.extend(error.issues)
        return issues


def _check_answer(
    spec: InteractionAnswerSpec, data: Any, issues: _Issues
) -> None:
    if data is not None and not isinstance(data, Mapping):
        issues.add((), "data_not_object", "interaction data must be an object")
        return
    values: Mapping[str, Any] = data if data is not None else {}
    if len(values) > CONTRACT_MAX_MAP_ENTRIES:
        issues.add((), "too_many_fields", "interaction data has too many fields")
        return
    known = {item.name for item in spec.fields}
    for name, raw in values.items():
        if not isinstance(name, str) or utf16_length(name) > CONTRACT_MAX_IDENTIFIER_LENGTH:
            issues.add((), "unknown_field", "interaction data has an undeclared field")
            continue
        if isinstance(raw, str) and utf16_length(raw) > CONTRACT_MAX_STRING_LENGTH:
            issues.add((name,), "string_too_long", f'field "{name}" exceeds the contract string bound')
        elif isinstance(raw, (list, tuple)):
            if len(raw) > CONTRACT_MAX_ARRAY_LENGTH:
                issues.add((name,), "too_many_values", f'field "{name}" has too many values')
            for entry in raw:
                if not isinstance(entry, str) or utf16_length(entry) > CONTRACT_MAX_STRING_LENGTH:
                    issues.add((name,), "invalid_value", f'field "{name}" contains an invalid bounded value')
                    break
        elif isinstance(raw, Mapping) and len(raw) > 3:
            issues.add((name,), "invalid_object", f'field "{name}" contains an invalid object value')
        if name not in known:
            issues.add((name,), "unknown_field", f'unknown field "{name}"')
    for item in spec.fields:
        value = values.get(item.name)
        if value is None or value == "":
            if item.required:
                issues.add((item.name,), "missing_required_field", f'missing required field "{item.name}"')
            continue
        _check_field(item, value, issues)


def _check_field(item: Any, value: Any, issues: _Issues) -> None:
    name = item.name
    path = (name,)
    if isinstance(item, TextInteractionField):
        if not isinstance(value, str):
            issues.add(path, "not_a_string", f'field "{name}" must be a string')
        elif item.max_length is not None and utf16_length(value) > item.max_length:
            issues.add(path, "exceeds_max_length", f'field "{name}" exceeds maxLength {item.max_length}')
    elif isinstance(item, SecretInteractionField):
        if not isinstance(value, str) and not _is_secret_handle(value):
            issues.add(path, "not_a_secret", f'field "{name}" must be a string or one-use secret handle')
        elif (
            isinstance(value, str)
            and item.max_length is not None
            and utf16_length(value) > item.max_length
        ):
            issues.add(path, "exceeds_max_length", f'field "{name}" exceeds maxLength {item.max_length}')
    elif isinstance(item, NumberInteractionField):
        if not _is_number(value):
            issues.add(path, "not_a_number", f'field "{name}" must be a finite number')
        else:
            if item.min is not None and value < item.min:
                issues.add(path, "below_min", f'field "{name}" below min {item.min}')
            if item.max is not None and value > item.max:
                issues.add(path, "above_max", f'field "{name}" above max {item.max}')
    elif isinstance(item, BooleanInteractionField):
        if not isinstance(value, bool):
            issues.add(path, "not_a_boolean", f'field "{name}" must be a boolean')
    elif isinstance(item, SelectInteractionField):
        if not isinstance(value, (list, tuple)):
            issues.add(path, "not_an_array", f'field "{name}" must be an array of option values')
            return
        if len(value) > CONTRACT_MAX_ARRAY_LENGTH:
            issues.add(path, "too_many_values", f'field "{name}" has too many option values')
            return
        if not item.multi and len(value) > 1:
            issues.add(path, "single_value", f'field "{name}" accepts a single value')
        if item.required and len(value) == 0:
            issues.add(path, "selection_required", f'field "{name}" requires a selection')
        allowed = {option.value for option in item.options}
        for choice in value:
            if isinstance(choice, str) and choice in allowed:
                continue
            if item.allow_custom is True:
                if not isinstance(choice, str) or not js_trim(choice):
                    issues.add(path, "blank_write_in", f'field "{name}" has blank write-in value')
                continue
            issues.add(path, "invalid_option", f'field "{name}" has a value that is not an option')


def validate_interaction_answer(
    spec: InteractionAnswerSpec | Mapping[str, Any], data: Any
) -> InteractionValidation:
    """Check accepted answer ``data`` against ``spec``: declared fields only, required
    fields present, each value of its field's type and within its bounds."""
    parsed = _spec_of(spec)
    if isinstance(parsed, _Issues):
        return InteractionValidation(tuple(parsed.items))
    issues = _Issues()
    _check_answer(parsed, data, issues)
    return InteractionValidation(tuple(issues.items))


def _resolution_issues(
    kind: str,
    spec: InteractionAnswerSpec,
    response_scopes: tuple[InteractionResponseScope, ...] | None,
    outcome: str,
    data: Mapping[str, Any] | None,
    prefix: tuple[str | int, ...],
) -> list[ContractIssue]:
    issues = _Issues(prefix)
    if outcome != "accepted":
        secret = {item.name for item in spec.fields if isinstance(item, SecretInteractionField)}
        for name in data or {}:
            if name in secret:
                issues.add(
                    ("data", name), "secret_on_non_accepted",
                    f'field "{name}" is secret and cannot ride a {outcome} resolution',
                )
        if data:
            issues.add(("data",), "data_on_non_accepted", f"a {outcome} resolution cannot carry answer fields")
        return issues.items
    data_issues = _Issues((*prefix, "data"))
    _check_answer(spec, data, data_issues)
    issues.items.extend(data_issues.items)
    if kind != InteractionKind.PERMISSION:
        return issues.items
    grant = (data or {}).get(PERMISSION_GRANT_FIELD)
    path = ("data", PERMISSION_GRANT_FIELD)
    if not isinstance(grant, (list, tuple)) or len(grant) != 1:
        issues.add(path, "permission_grant_missing", 'permission response must select exactly one "grant" value')
        return issues.items
    chosen = grant[0]
    if chosen not in _PERMISSION_GRANTS:
        issues.add(path, "permission_grant_invalid", "permission response has an invalid grant")
        return issues.items
    if chosen == "deny":
        return issues.items
    permitted = set(response_scopes) if response_scopes is not None else {"interaction"}
    if _GRANT_SCOPE[chosen] not in permitted:
        issues.add(
            path, "permission_scope_exceeded",
            f'permission grant "{chosen}" exceeds the request\'s response scopes',
        )
    return issues.items


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


# ---------------------------------------------------------------------------
# Responses, commands and acknowledgements
# ---------------------------------------------------------------------------


class _ResponseBase(WireModel):
    id: BoundedIdentifier
    data: InteractionData | None = Field(default=None, repr=False)


class InteractionResponseAccepted(_ResponseBase):
    outcome: Literal["accepted"]


class InteractionResponseDeclined(_ResponseBase):
    outcome: Literal["declined"]


class InteractionResponseCancelled(_ResponseBase):
    outcome: Literal["cancelled"]


InteractionResponse = Annotated[
    InteractionResponseAccepted | InteractionResponseDeclined | InteractionResponseCancelled,
    Field(discriminator="outcome"),
]
"""A caller's answer to one interaction; ``data`` is hidden from ``repr``."""

_RESPONSE_ADAPTER = wire_adapter(InteractionResponse, "InteractionResponse")


def _response_wire(response: Any) -> dict[str, Any]:
    if isinstance(response, WireModel):
        wire: dict[str, Any] = response.to_wire()
        return wire
    parsed = _RESPONSE_ADAPTER.parse(thaw(response))
    wire = _RESPONSE_ADAPTER.to_wire(parsed)
    return wire


def interaction_response_command_digest(binding: Any, response: Any) -> str:
    """``interactionResponseCommandDigest``: canonical digest of ``{binding, response}``."""
    bound = binding if isinstance(binding, InteractionBinding) else InteractionBinding.parse_wire(binding)
    return canonical_digest({"binding": bound.to_wire(), "response": _response_wire(response)})


class InteractionResponseCommand(WireModel):
    """A retryable response bound to run, environment, provider session, interaction
    and the caller's ``operationId``; ``commandDigest`` covers binding and response."""

    operation_id: BoundedIdentifier
    binding: InteractionBinding
    command_digest: Sha256Digest
    response: InteractionResponse

    @classmethod
    def create(
        cls, operation_id: str, binding: InteractionBinding | Mapping[str, Any], response: Any
    ) -> InteractionResponseCommand:
        bound = binding if isinstance(binding, InteractionBinding) else InteractionBinding.parse_wire(binding)
        return cls.parse_wire(
            {
                "operationId": operation_id,
                "binding": bound.to_wire(),
                "commandDigest": interaction_response_command_digest(bound, response),
                "response": _response_wire(response),
            }
        )

    @model_validator(mode="after")
    def _refine(self) -> Self:
        issues = Refinement("InteractionResponseCommand")
        if self.binding.interaction_id != self.response.id:
            issues.add(("response", "id"), "response_id_mismatch", "response id must match the bound interaction id")
        if self.command_digest != interaction_response_command_digest(self.binding, self.response):
            issues.add(("commandDigest",), "digest_mismatch", "interaction response command digest does not match its content")
        issues.check()
        return self


InteractionAcknowledgementStatus = Literal[
    "accepted",
    "already_resolved_same",
    "already_resolved_different",
    "expired",
    "cancelled",
    "unknown_interaction",
    "unknown_run",
    "binding_mismatch",
    "invalid_response",
    "transport_failure",
]


class InteractionAcknowledgement(WireModel):
    """Durable result of one response operation. It carries no answer value."""

    operation_id: BoundedIdentifier
    binding: InteractionBinding
    command_digest: Sha256Digest
    status: InteractionAcknowledgementStatus
    message: NonEmptyBoundedString | None = None
    retryable: bool | None = None

    @model_validator(mode="after")
    def _refine(self) -> Self:
        issues = Refinement("InteractionAcknowledgement")
        if self.status in ("invalid_response", "transport_failure") and self.message is None:
            issues.add(("message",), "message_required", f"{self.status} must include a message")
        if self.status == "transport_failure" and self.retryable is None:
            issues.add(("retryable",), "retryable_required", "transport_failure must state whether retry is safe")
        issues.check()
        return self


def interaction_acknowledgement_matches_command(
    command: InteractionResponseCommand, acknowledgement: InteractionAcknowledgement
) -> bool:
    """Whether ``acknowledgement`` answers exactly ``command`` (operation, binding, digest)."""
    return (
        acknowledgement.operation_id == command.operation_id
        and acknowledgement.command_digest == command.command_digest
        and acknowledgement.binding == command.binding
    )


__all__ += ["interaction_acknowledgement_matches_command"]

# ---------------------------------------------------------------------------
# Response validation against the outstanding request
# ---------------------------------------------------------------------------


def _request_of(request: Any) -> InteractionRequest | InteractionResponseValidation:
    if isinstance(request, InteractionRequest):
        return request
    try:
        return InteractionRequest.parse_wire(request)
    except ContractError as error:
        return InteractionResponseValidation(
            tuple(ContractIssue("/request" + issue.path, issue.code, issue.message) for issue in error.issues)
        )


def validate_interaction_response(request: Any, response: Any) -> InteractionResponseValidation:
    """Check ``response`` against the exact outstanding ``request``.

    Refuses reserved keys, undeclared fields, an id other than the request's, an
    outcome the request does not allow, and a permission grant broader than the
    request's scopes (omitted scopes = one-time only). On success the parsed response
    is available as ``.response``. Issue paths point into the response document.
    """
    exact = _request_of(request)
    if isinstance(exact, InteractionResponseValidation):
        return exact
    raw = response.to_wire() if isinstance(response, WireModel) else thaw(response)
    if isinstance(raw, Mapping):
        data = raw.get("data")
        if isinstance(data, Mapping):
            reserved = [key for key in data if key in RESERVED_INTERACTION_FIELD_NAMES]
            if reserved:
                return InteractionResponseValidation(
                    tuple(ContractIssue(json_pointer(("data", key)), "unknown_field", "reserved field name is not declared") for key in reserved)
                )
    try:
        parsed = _RESPONSE_ADAPTER.parse(raw)
    except ContractError as error:
        return InteractionResponseValidation(error.issues)
    if parsed.id != exact.id:
        return InteractionResponseValidation(
            (ContractIssue("/id", "response_id_mismatch", "response id does not match the outstanding interaction"),)
        )
    if exact.allowed_outcomes is not None and parsed.outcome not in exact.allowed_outcomes:
        return InteractionResponseValidation(
            (ContractIssue("/outcome", "outcome_not_allowed", "response outcome is not allowed by the outstanding interaction"),)
        )
    found = _resolution_issues(
        exact.kind, exact.answer_spec, exact.response_scopes, parsed.outcome, parsed.data, ()
    )
    if found:
        return InteractionResponseValidation(tuple(found))
    return InteractionResponseValidation((), parsed)


def require_valid_interaction_response(request: Any, response: Any) -> InteractionResponse:
    """:func:`validate_interaction_response`, raising :class:`ContractError` on refusal."""
    result = validate_interaction_response(request, response)
    result.raise_for_issues()
    assert result.response is not None
    return result.response


def validate_interaction_response_command(request: Any, command: Any) -> InteractionResponseValidation:
    """Check a durable response command: its binding must name the request's exact run
    and digest, then its response is checked like :func:`validate_interaction_response`."""
    exact = _request_of(request)
    if isinstance(exact, InteractionResponseValidation):
        return exact
    if isinstance(command, InteractionResponseCommand):
        parsed = command
    else:
        try:
            parsed = InteractionResponseCommand.parse_wire(thaw(command))
        except ContractError as error:
            return InteractionResponseValidation(error.issues)
    binding = parsed.binding
    expected = exact.binding
    if (
        binding.request_digest != exact.request_digest
        or binding.run_id != expected.run_id
        or binding.provider != expected.provider
        or binding.environment_id != expected.environment_id
        or binding.session_id != expected.session_id
        or binding.execution_id != expected.execution_id
        or binding.interaction_id != expected.interaction_id
    ):
        return InteractionResponseValidation(
            (ContractIssue("/binding", "binding_stale", "response command binding is stale"),)
        )
    inner = validate_interaction_response(exact, parsed.response)
    if inner.ok:
        return inner
    return InteractionResponseValidation(
        tuple(ContractIssue("/response" + issue.path, issue.code, issue.message) for issue in inner.issues)
    )


def validate_and_parse_interaction_response(request: Any, response: Any) -> InteractionResponseValidation:
    """Same as :func:`validate_interaction_response` (the response is always attached)."""
    return validate_interaction_response(request, response)


def interaction_response_is_valid(request: Any, response: Any) -> InteractionValidation:
    """Verdict only, for callers that never forward the value."""
    return InteractionValidation(validate_interaction_response(request, response).issues)


register_wire_models(
    InteractionFieldName=InteractionFieldName,
    InteractionDataValue=InteractionDataValue,
    InteractionField=InteractionField,
    InteractionAnswerSpec=InteractionAnswerSpec,
    InteractionFieldType=InteractionFieldType,
    InteractionResponseScope=InteractionResponseScope,
    InteractionCapabilities=InteractionCapabilities,
    InteractionSecretReference=InteractionSecretReference,
    InteractionData=InteractionData,
    InteractionResolution=InteractionResolution,
    InteractionSubject=InteractionSubject,
    InteractionOutcome=InteractionOutcome,
    InteractionRequestBinding=InteractionRequestBinding,
    InteractionExecutionBinding=InteractionExecutionBinding,
    InteractionBinding=InteractionBinding,
    InteractionRequest=InteractionRequest,
    InteractionResponse=InteractionResponse,
    InteractionResponseCommand=InteractionResponseCommand,
    InteractionAcknowledgementStatus=InteractionAcknowledgementStatus,
    InteractionAcknowledgement=InteractionAcknowledgement,
    RequestedInteractions=RequestedInteractions,
    PermissionGrant=PermissionGrant,
)
