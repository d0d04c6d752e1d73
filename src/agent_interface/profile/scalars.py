"""Scalar wire types the profile schemas share: zod-compatible positive integers and numbers,
exact booleans, non-empty strings, permission values, and refusals at a nested path.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, NoReturn, TypeAlias, TypeVar

from pydantic import (
    AfterValidator,
    BeforeValidator,
    ValidationError,
    WithJsonSchema,
)
from pydantic_core import InitErrorDetails, PydanticCustomError, core_schema

from agent_interface.core.canonical import (
    MAX_SAFE_INTEGER,
    is_well_formed_unicode,
)
from agent_interface.core.fast_schema import Derivation, core_equivalent, inner_schema
from agent_interface.core.model import (
    JsonObject,
    WireMap,
)
from agent_interface.core.numbers import js_integer
from agent_interface.core.registry import register_wire_models
from agent_interface.core.surrogate_text import marker_transparent

__all__ = [
    "AgentProfilePermission",
    "AgentProfilePermissionValue",
    "ProfileJsonRecord",
    "ProfileRecord",
]


# -- refusals at a nested path ---------------------------------------------------------------

Loc: TypeAlias = tuple[str | int, ...]


def _refuse(title: str, issues: list[tuple[Loc, str, str]]) -> NoReturn:
    """Raise a ValidationError whose locations pydantic prefixes with the caller's own."""
    raise ValidationError.from_exception_data(
        title,
        [
            InitErrorDetails(type=PydanticCustomError(code, message), loc=loc, input=None)
            for loc, code, message in issues
        ],
    )


# -- small value checks ---------------------------------------------------------------------


def _positive_int(value: Any) -> Any:
    # zod z.number().int().positive(): a JavaScript number with an integral value in the
    # safe range; 5.0 is the number 5.
    if type(value) is float and value.is_integer():
        value = int(value)
    if type(value) is not int:
        raise PydanticCustomError("int_type", "value must be an integer")
    if value > MAX_SAFE_INTEGER:
        raise PydanticCustomError("too_big", "integer must be within the safe integer range")
    if value <= 0:
        raise PydanticCustomError("too_small", "number must be greater than 0")
    return value


@core_equivalent(_positive_int)
def _positive_int_in_core(_owner: Any, _node: dict[str, Any], _derivation: Derivation) -> dict[str, Any]:
    # A float, even an integral one, takes the precise path.
    return dict(core_schema.int_schema(gt=0, le=MAX_SAFE_INTEGER, strict=True))


PositiveInt = Annotated[
    int, BeforeValidator(_positive_int), WithJsonSchema({"type": "integer", "exclusiveMinimum": 0})
]


@marker_transparent  # numbers only (core.surrogate_text)
def _js_number(value: Any) -> Any:
    if type(value) is float:
        if value != value or value in (float("inf"), float("-inf")):
            raise PydanticCustomError("finite_number", "number must be finite")
        return int(value) if value.is_integer() and abs(value) <= MAX_SAFE_INTEGER else value
    if type(value) is not int:
        raise PydanticCustomError("number_type", "value must be a number")
    return js_integer(value)


JsNumber = Annotated[int | float, BeforeValidator(_js_number), WithJsonSchema({"type": "number"})]
"""zod ``z.number()``: any finite number; integral floats are held as ``int``."""


@marker_transparent  # numbers only (core.surrogate_text)
def _positive_number(value: Any) -> Any:
    value = _js_number(value)
    if value <= 0:
        raise PydanticCustomError("too_small", "number must be greater than 0")
    return value


PositiveNumber = Annotated[
    int | float,
    BeforeValidator(_positive_number),
    WithJsonSchema({"type": "number", "exclusiveMinimum": 0}),
]


def _exactly(expected: bool) -> Any:
    def check(value: bool) -> bool:
        if value is not expected:
            raise PydanticCustomError(
                "literal_error", "value must be {expected}", {"expected": str(expected).lower()}
            )
        return value

    @core_equivalent(check)
    def in_core(_owner: Any, _node: dict[str, Any], _derivation: Derivation) -> dict[str, Any]:
        # The literal alone would take 1 for true: the strict boolean comes first.
        return dict(core_schema.chain_schema([
            core_schema.bool_schema(strict=True), core_schema.literal_schema([expected])
        ]))

    return AfterValidator(check)


TrueOnly = Annotated[bool, _exactly(True), WithJsonSchema({"const": True})]
FalseOnly = Annotated[bool, _exactly(False), WithJsonSchema({"const": False})]


def _non_empty(value: str) -> str:
    if value == "":
        raise PydanticCustomError("string_too_short", "string must not be empty")
    return value


@core_equivalent(_non_empty)
def _non_empty_in_core(
    _owner: Any, node: dict[str, Any], _derivation: Derivation
) -> dict[str, Any] | None:
    inner = node["schema"]
    if inner["type"] != "str":
        return None
    return {**inner, "min_length": max(1, inner.get("min_length", 0))}


NonEmptyString = Annotated[
    str, AfterValidator(_non_empty), WithJsonSchema({"type": "string", "minLength": 1})
]


# -- records whose keys are data ---------------------------------------------------------------

V = TypeVar("V")


def _unicode_record_keys(value: Any) -> Any:
    for key in value:
        if not is_well_formed_unicode(key):
            raise PydanticCustomError(
                "ill_formed_unicode", "record keys must contain valid Unicode"
            )
    return value


# JSON text never yields an ill-formed key: pydantic-core's parser refuses lone surrogates.
core_equivalent(_unicode_record_keys)(inner_schema)


ProfileRecord = Annotated[WireMap[V], AfterValidator(_unicode_record_keys)]
"""A profile record (the reference's own-property record): any well-formed Unicode key."""

ProfileJsonRecord = Annotated[JsonObject, AfterValidator(_unicode_record_keys)]
"""Free JSON object of a profile whose top-level keys must be well-formed Unicode."""


# -- permissions, resources, prompt, model ---------------------------------------------------

AgentProfilePermissionValue = Literal["allow", "deny", "ask"]
AgentProfilePermission = AgentProfilePermissionValue | ProfileRecord[AgentProfilePermissionValue]
"""One permission value, or a map of sub-capability -> value."""


register_wire_models(
    AgentProfilePermissionValue=AgentProfilePermissionValue,
    AgentProfilePermission=AgentProfilePermission,
)
