"""Free JSON in wire models: any finite JSON value, checked once, deep-frozen.

:data:`JsonValue` and :data:`JsonObject` accept what ``JSON.parse`` gives and zod's
``z.unknown()`` / ``Record<string, unknown>`` accept, except what is not finite JSON: NaN,
infinities, integers JavaScript reads as ``Infinity``, non-string keys, and nesting past
the document limit (``core.json_text``). Values are held as :class:`FrozenDict` and tuples
and written back as plain ``dict`` and ``list``. For small JSON texts the check has a
pydantic-core equivalent (``core.fast_schema``).
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Annotated, Any

from pydantic import BeforeValidator, PlainSerializer, WithJsonSchema
from pydantic_core import PydanticCustomError, core_schema

from agent_interface.core.canonical import MAX_FINITE_INTEGER
from agent_interface.core.containers import FrozenDict, thaw
from agent_interface.core.fast_schema import Derivation, core_equivalent, json_value_schema
from agent_interface.core.json_text import MAX_DOCUMENT_DEPTH

__all__ = ["JsonObject", "JsonValue", "free_json_validator", "frozen_object_schema"]


JSON_NULL_VALIDATORS: set[Any] = set()


def free_json_validator(func: Any) -> Any:
    """Mark a ``BeforeValidator`` function as validating free JSON (``null`` included).

    An optional field of such a type accepts an explicit ``null`` (zod
    ``jsonSchema.optional()``) and writes it back only when it was sent.
    """
    JSON_NULL_VALIDATORS.add(func)
    return func


_MAX_JSON_DEPTH = MAX_DOCUMENT_DEPTH

_DEEP_JSON_DEPTH = MAX_DOCUMENT_DEPTH // 2
"""Free JSON nested this deep may take its document past :data:`MAX_DOCUMENT_DEPTH`:
:meth:`WireAdapter.parse_value` then measures the whole document."""

DEEP_JSON_SEEN: ContextVar[bool | None] = ContextVar("agent_interface_deep_json", default=None)
"""Set (to False) while :meth:`WireAdapter.parse_value` validates; True once free JSON
nested deep enough to measure the document was seen."""


def validating() -> bool:
    return DEEP_JSON_SEEN.get() is not None


@free_json_validator
def _check_json(value: Any, depth: int = 0) -> Any:
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return value
    if kind is int:
        if -MAX_FINITE_INTEGER <= value <= MAX_FINITE_INTEGER:
            return value
        raise PydanticCustomError("finite_number", "number must be finite")  # as JavaScript reads it
    if kind is float:
        if value != value or value in (float("inf"), float("-inf")):
            raise PydanticCustomError("finite_number", "number must be finite")
        return value
    if depth >= _DEEP_JSON_DEPTH:
        DEEP_JSON_SEEN.set(True)
        if depth >= _MAX_JSON_DEPTH:
            raise PydanticCustomError("too_deep", "JSON value is nested too deeply")
    if isinstance(value, dict):
        frozen: dict[str, Any] = {}
        for key, item in value.items():
            if type(key) is not str:
                raise PydanticCustomError("json_type", "object keys must be strings")
            frozen[key] = _check_json(item, depth + 1)
        return FrozenDict(frozen)
    if isinstance(value, (list, tuple)):
        return tuple(_check_json(item, depth + 1) for item in value)
    raise PydanticCustomError("json_type", "value is not JSON")


def _check_json_object(value: Any) -> Any:
    if not isinstance(value, dict):
        raise PydanticCustomError("json_object", "value must be a JSON object")
    return _check_json(value)


_JSON_REF = "agent_interface.json"


def _json_definitions() -> list[core_schema.CoreSchema]:
    """Free JSON as a recursive core schema, for JSON text only: pydantic-core's parser
    refuses nesting deeper than its recursion limit, below ``_MAX_JSON_DEPTH``, and it
    never yields a non-string key."""
    member = core_schema.definition_reference_schema(_JSON_REF)
    return [
        json_value_schema([frozen_object_schema(member), member], ref=_JSON_REF),
        frozen_object_schema(member, ref=f"{_JSON_REF}.object"),
    ]


def frozen_object_schema(
    member: core_schema.CoreSchema,
    *,
    max_key_length: int | None = None,
    max_entries: int | None = None,
    ref: str | None = None,
) -> core_schema.CoreSchema:
    """A JSON object of ``member`` values as a core schema, held as a :class:`FrozenDict`."""
    keys = core_schema.str_schema(max_length=max_key_length, strict=True)
    return core_schema.no_info_after_validator_function(
        FrozenDict,
        core_schema.dict_schema(
            keys, member, max_length=max_entries, strict=True, fail_fast=True
        ),
        ref=ref,
    )


@core_equivalent(_check_json)
def _json_in_core(_owner: Any, _node: dict[str, Any], derivation: Derivation) -> dict[str, Any]:
    derivation.define(_JSON_REF, _json_definitions)
    return dict(core_schema.definition_reference_schema(_JSON_REF))


@core_equivalent(_check_json_object)
def _json_object_in_core(
    _owner: Any, _node: dict[str, Any], derivation: Derivation
) -> dict[str, Any]:
    derivation.define(_JSON_REF, _json_definitions)
    return dict(core_schema.definition_reference_schema(f"{_JSON_REF}.object"))


def _thaw_for_wire(value: Any) -> Any:
    return thaw(value)


JsonValue = Annotated[
    Any,
    BeforeValidator(_check_json),
    PlainSerializer(_thaw_for_wire),
    WithJsonSchema({}),
]
"""Any finite JSON value, deep-frozen on validation and plain again on output."""

JsonObject = Annotated[
    Any,
    BeforeValidator(_check_json_object),
    PlainSerializer(_thaw_for_wire),
    WithJsonSchema({"type": "object"}),
]
"""A finite JSON object, deep-frozen (``Record<string, unknown>`` on the wire)."""
