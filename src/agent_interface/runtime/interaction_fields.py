"""Typed interactions: requests, answers, response commands and acknowledgements
(``interaction*.ts``).

A provider originates an :class:`InteractionRequest` bound to one exact run and
carrying a canonical ``requestDigest``. A caller answers with an
:class:`InteractionResponseCommand` (run, environment, provider session, interaction
and caller operation id, plus a ``commandDigest``), after
:func:`validate_interaction_response` checked the answer against that exact request.
The :class:`InteractionAcknowledgement` never carries the answer or a hash of it.

Secret answers: response ``data`` is hidden from ``repr``; no message produced here
quotes an answer value, and nothing here logs."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Annotated, Any, Final, Literal, Self

from pydantic import AfterValidator, BeforeValidator, Field, Strict, model_validator
from pydantic_core import PydanticCustomError

from agent_interface.core.contract_limits import (
    CONTRACT_MAX_ARRAY_LENGTH,
    CONTRACT_MAX_MAP_ENTRIES,
    CONTRACT_MAX_STRING_LENGTH,
    BoundedIdentifier,
    BoundedString,
    FiniteNumber,
    PositiveSafeInt,
    Utf16Length,
    js_trim,
    utf16_length,
)
from agent_interface.core.errors import (
    Refinement,
)
from agent_interface.core.fast_schema import Derivation, core_equivalent
from agent_interface.core.model import (
    FrozenDict,
    WireList,
    WireModel,
)
from agent_interface.core.numbers import StrictFiniteNumber
from agent_interface.core.registry import register_wire_models
from agent_interface.core.surrogate_text import marker_transparent

__all__ = [
    "PERMISSION_FEEDBACK_FIELD",
    "PERMISSION_GRANT_FIELD",
    "RESERVED_INTERACTION_FIELD_NAMES",
    "BooleanInteractionField",
    "InteractionAnswerSpec",
    "InteractionCapabilities",
    "InteractionData",
    "InteractionDataValue",
    "InteractionField",
    "InteractionFieldName",
    "InteractionFieldType",
    "InteractionKind",
    "InteractionOutcome",
    "InteractionResolution",
    "InteractionResponseScope",
    "InteractionSecretReference",
    "NumberInteractionField",
    "PermissionGrant",
    "RequestedInteractions",
    "SecretInteractionField",
    "SelectInteractionField",
    "SelectOption",
    "TextInteractionField",
    "permission_answer_spec",
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
    """A text field of an interaction form, optionally multiline, with a length limit and default."""

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
    """A number field of an interaction form, with optional bounds and default."""

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
    """A yes/no field of an interaction form, with an optional default."""

    type: Literal["boolean"]
    default: bool | None = None


class SelectOption(WireModel):
    """One choice of a select field: the value, its label and a description."""

    value: BoundedIdentifier
    label: NonEmptyBoundedString
    description: BoundedString | None = None


class SelectInteractionField(_FieldBase):
    """A choice field of an interaction form: options, single or multiple, optionally a custom
    answer."""

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


@marker_transparent  # type only (core.surrogate_text)
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
    | StrictFiniteNumber
    | Annotated[bool, Strict()]
    | Annotated[WireList[_StrictBoundedString], Field(max_length=CONTRACT_MAX_ARRAY_LENGTH)]
    | InteractionSecretReference
)


@marker_transparent  # keys and size only (core.surrogate_text)
def _refuse_reserved_keys(value: Any) -> Any:
    if isinstance(value, Mapping):
        if any(key in RESERVED_INTERACTION_FIELD_NAMES for key in value):
            raise PydanticCustomError("reserved_field_name", "interaction field name is reserved")
        if len(value) > CONTRACT_MAX_MAP_ENTRIES:
            raise PydanticCustomError("too_many_fields", "interaction data has too many fields")
    return value


@core_equivalent(_refuse_reserved_keys)
def _reserved_keys_in_core(
    _owner: Any, node: dict[str, Any], _derivation: Derivation
) -> dict[str, Any] | None:
    # Each key is an ``InteractionFieldName``, whose own check refuses a reserved name, so
    # the size bound alone is left: a core ``max_length``. (A ``before`` function would
    # also make pydantic-core turn the JSON object into Python objects first.)
    inner = node["schema"]
    if inner.get("type") != "dict":
        return None
    bound = inner.get("max_length")
    return {
        **inner,
        "max_length": CONTRACT_MAX_MAP_ENTRIES if bound is None else min(bound, CONTRACT_MAX_MAP_ENTRIES),
    }


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


@marker_transparent  # size only (core.surrogate_text)
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
    InteractionOutcome=InteractionOutcome,
    RequestedInteractions=RequestedInteractions,
    PermissionGrant=PermissionGrant,
)
