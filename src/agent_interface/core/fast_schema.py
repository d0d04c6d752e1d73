"""A second validator for small JSON texts, in which checks written in Python are
replaced by pydantic-core constraints that are at least as strict.

Some rules cannot be written as pydantic-core constraints for every input: string
lengths in UTF-16 code units, the node count of bounded JSON, refusing ``null`` only on
the wire. Written in Python, each costs a call out of the Rust core for every value. But
for a JSON text of at most :data:`FAST_TEXT_LIMIT` characters, most of these rules have
a stricter core equivalent: a string of at most 8,192 code points has at most 16,384
UTF-16 code units, and such a text cannot hold more than 8,192 JSON nodes.

:meth:`~agent_interface.core.model.WireAdapter.parse` validates such a text with the
derived validator first. Everything the derived validator accepts, the precise one
accepts with the same value, because every replacement refuses at least what the
function it replaces refuses and returns what it would have returned. When the
derived validator refuses, the precise validator runs again on the same text and its
verdict and errors are the ones reported. So only the speed of an accepted document
depends on this module, never a verdict or an error.

Each rule's owner registers its equivalent next to the rule with
:func:`core_equivalent`; a validator function with no registered equivalent stays in
the derived schema as it is.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any, Final

from pydantic_core import SchemaValidator, core_schema

from agent_interface.core.canonical import MAX_FINITE_INTEGER

__all__: list[str] = []  # used by core.model and the rule owners in core

FAST_TEXT_LIMIT: Final = 8_192
"""Largest JSON text (``len`` of the ``str`` or ``bytes``) the derived validator reads."""


class Derivation:
    """State of one derivation: the schema's own definitions, and those the equivalents
    add (each added once)."""

    __slots__ = ("definitions", "known", "replaced")

    def __init__(self, known: dict[str, Any] | None = None) -> None:
        self.known: dict[str, Any] = known or {}
        """The definitions of the schema being derived, by ``ref``."""
        self.definitions: dict[str, Any] = {}
        """Definitions added by equivalents."""
        self.replaced = 0

    def define(self, ref: str, build: Callable[[], list[core_schema.CoreSchema]]) -> None:
        """Add the definitions ``build`` returns unless ``ref`` is already defined."""
        if ref not in self.definitions:
            for schema in build():
                self.definitions[schema["ref"]] = schema


Equivalent = Callable[[Any, dict[str, Any], Derivation], "dict[str, Any] | None"]
"""``(owner, node, derivation)``: the core schema that replaces the validator ``node``
(its inner schema already derived), or None to keep ``node``. ``owner`` is the bound
instance for a method, else None."""

_EQUIVALENTS: dict[Any, Equivalent] = {}


def core_equivalent(function: Any) -> Callable[[Equivalent], Equivalent]:
    """Register the core equivalent of a validator function (or of a method, for every
    instance: the equivalent receives the instance as ``owner``)."""

    def register(equivalent: Equivalent) -> Equivalent:
        _EQUIVALENTS[function] = equivalent
        return equivalent

    return register


def inner_schema(_owner: Any, node: dict[str, Any], _derivation: Derivation) -> dict[str, Any]:
    """The equivalent of a check that JSON text always passes, or that the wrapped schema
    makes stricter by itself: the wrapped schema alone."""
    schema: dict[str, Any] = node["schema"]
    return schema


def is_bare_string(schema: Any) -> bool:
    """A ``str`` schema with no constraint of its own."""
    return (
        isinstance(schema, dict)
        and schema.get("type") == "str"
        and set(schema) <= {"type", "strict"}
    )


_CONSTRAINT_TARGETS: Final = {
    "max_length": ("str", "list", "tuple", "dict"),
    "min_length": ("str", "list", "tuple", "dict"),
    "le": ("int", "float"),
    "ge": ("int", "float"),
    "lt": ("int", "float"),
    "gt": ("int", "float"),
}


def _tighter(name: str, current: Any, bound: Any) -> Any:
    if current is None:
        return bound
    return min(current, bound) if name in ("max_length", "le", "lt") else max(current, bound)


def _constraint_in_core(
    keywords: dict[str, Any], node: dict[str, Any], _derivation: Derivation
) -> dict[str, Any] | None:
    # pydantic checks a constraint in Python when the annotated schema is not the bare
    # type; once that schema is derived to the bare type, the constraint moves into it.
    inner = node["schema"]
    if node["function"]["type"] != "no-info" or len(keywords) != 1:
        return None
    (name, bound), = keywords.items()
    targets = _CONSTRAINT_TARGETS.get(name, ())
    if inner.get("type") == "json-or-python":  # a WireList: JSON arrays take the JSON branch
        json_branch = inner["json_schema"]
        if json_branch.get("type") not in targets:
            return None
        return {
            **inner,
            "json_schema": {**json_branch, name: _tighter(name, json_branch.get(name), bound)},
            "python_schema": {**node, "schema": inner["python_schema"]},
        }
    if inner.get("type") not in targets:
        return None
    return {**inner, name: _tighter(name, inner.get(name), bound)}


_PYDANTIC_CONSTRAINT_CHECKS: Final = (
    "max_length_validator", "min_length_validator", "less_than_or_equal_validator",
    "greater_than_or_equal_validator", "less_than_validator", "greater_than_validator",
)


def _register_pydantic_constraints() -> None:
    from pydantic._internal import _validators  # private: a missing name only costs speed

    for name in _PYDANTIC_CONSTRAINT_CHECKS:
        function = getattr(_validators, name, None)
        if function is not None:
            _EQUIVALENTS[function] = _constraint_in_core


_register_pydantic_constraints()

_VALIDATOR_TYPES: Final = frozenset(
    {"function-after", "function-before", "function-wrap", "function-plain"}
)
_SCHEMA_KEYS: Final = (
    "schema", "items_schema", "keys_schema", "values_schema", "extras_schema",
    "json_schema", "python_schema", "lax_schema", "strict_schema",
)
_LIST_KEYS: Final = ("choices", "steps", "definitions", "items_schema")


def _derive(node: Any, derivation: Derivation) -> Any:
    if isinstance(node, tuple):  # a (schema, label) union choice
        return (_derive(node[0], derivation), *node[1:])
    if not isinstance(node, dict):
        return node
    derived = dict(node)
    for key in _SCHEMA_KEYS:
        child = node.get(key)
        if isinstance(child, dict):
            derived[key] = _derive(child, derivation)
    for key in _LIST_KEYS:
        children = node.get(key)
        if isinstance(children, list):
            derived[key] = [_derive(child, derivation) for child in children]
    if node.get("type") == "tagged-union" or node.get("type") in ("model-fields", "typed-dict"):
        mapping_key = "choices" if node["type"] == "tagged-union" else "fields"
        derived[mapping_key] = {
            name: _derive(child, derivation) for name, child in node[mapping_key].items()
        }
    kind = derived.get("type")
    if kind in _VALIDATOR_TYPES:
        replacement = _replace(derived, derivation)
        if replacement is not None:
            derivation.replaced += 1
            return replacement
    elif kind == "custom-error":
        # Only the precise validator's errors are ever reported: the wrapper can go.
        return derived["schema"]
    elif kind == "chain" and _string_then_string(derived["steps"]):
        # ``str`` then a constrained ``str`` (a pattern type): the second alone decides.
        return {**derived["steps"][1], "strict": True}
    return derived


def _string_then_string(steps: list[Any]) -> bool:
    return (
        len(steps) == 2
        and is_bare_string(steps[0])
        and isinstance(steps[1], dict)
        and steps[1].get("type") == "str"
    )


def _replace(node: dict[str, Any], derivation: Derivation) -> dict[str, Any] | None:
    function = node["function"]["function"]
    if isinstance(function, partial):  # pydantic's own constraint checks
        owner: Any = function.keywords
        key: Any = function.func
    else:
        owner = getattr(function, "__self__", None)
        key = getattr(function, "__func__", function)
    equivalent = _EQUIVALENTS.get(key)
    if equivalent is None:
        return None
    return equivalent(owner, node, derivation)


def derive_fast_schema(schema: core_schema.CoreSchema) -> dict[str, Any] | None:
    """The derived core schema of ``schema``, or None when nothing was replaced."""
    known = {d["ref"]: d for d in schema.get("definitions", ())}
    derivation = Derivation(known)
    derived: dict[str, Any] = _derive(schema, derivation)
    if not derivation.replaced:
        return None
    if derivation.definitions:
        extra = list(derivation.definitions.values())
        if derived.get("type") == "definitions":
            derived["definitions"] = [*derived["definitions"], *extra]
        else:
            derived = dict(core_schema.definitions_schema(derived, extra))
    return derived


def derive_fast_validator(
    schema: core_schema.CoreSchema, config: core_schema.CoreConfig | None = None
) -> SchemaValidator | None:
    """The derived validator of ``schema``, or None when nothing was replaced."""
    derived = derive_fast_schema(schema)
    return None if derived is None else build_validator(derived, config)


def _model_classes(node: Any, found: dict[int, type]) -> dict[int, type]:
    if isinstance(node, dict):
        if node.get("type") == "model" and isinstance(node.get("cls"), type):
            found[id(node["cls"])] = node["cls"]
        for key, child in node.items():
            if key not in ("serialization", "metadata", "cls", "function"):
                _model_classes(child, found)
    elif isinstance(node, (list, tuple)):
        for child in node:
            _model_classes(child, found)
    return found


def build_validator(
    schema: dict[str, Any], config: core_schema.CoreConfig | None = None
) -> SchemaValidator:
    """The validator of a derived schema, with every model node built from that schema.

    pydantic-core builds a ``model`` node whose class is already complete (its own
    validator built, for example by a constructor call) as that class's own validator,
    ignoring the node: the derivation would silently stop there. While this validator is
    built, such classes read as incomplete. (pydantic-core builds without running Python
    code in between, so no other thread sees the flag; if one did, it would at most
    rebuild that model's validator once.)"""
    complete = [
        cls for cls in _model_classes(schema, {}).values()
        if cls.__dict__.get("__pydantic_complete__") is True
    ]
    for cls in complete:
        type.__setattr__(cls, "__pydantic_complete__", False)
    try:
        return SchemaValidator(schema, config)
    finally:
        for cls in complete:
            type.__setattr__(cls, "__pydantic_complete__", True)


def json_value_schema(
    containers: list[Any], *, ref: str, max_items: int | None = None
) -> core_schema.CoreSchema:
    """One JSON value read from JSON text: ``containers`` (an object schema and the array
    member schema, or nothing at the deepest level) are tried first, because a container
    failing a scalar choice was measured to cost in proportion to its size (as if the
    refused input were copied into the error), a scalar failing a container choice little.
    Measured in instructions (callgrind) against a Python walk over the parsed value: about
    1.5x faster on objects of scalars, 2.5x on deep objects, but 2.6x slower on long arrays
    of numbers, where every member fails two choices first."""
    choices: list[Any] = []
    if containers:
        frozen_object, member = containers
        # fail_fast: a refusal here only means "try the next choice".
        choices += [frozen_object, core_schema.tuple_schema(
            [member], variadic_item_index=0, max_length=max_items, strict=True, fail_fast=True
        )]
    choices += [
        core_schema.str_schema(strict=True),
        # An integer JavaScript reads as Infinity takes the precise path (``core.numbers``).
        core_schema.int_schema(strict=True, ge=-MAX_FINITE_INTEGER, le=MAX_FINITE_INTEGER),
        core_schema.bool_schema(strict=True),
        core_schema.none_schema(),
        core_schema.float_schema(allow_inf_nan=False, strict=True),
    ]
    return core_schema.union_schema(choices, mode="left_to_right", ref=ref)


_NEVER_NULL: Final = frozenset(
    {"str", "int", "float", "bool", "model", "list", "tuple", "set", "frozenset", "dict",
     "tagged-union", "dataclass", "typed-dict"}
)


def may_accept_null(
    schema: dict[str, Any], definitions: dict[str, Any], _seen: frozenset[str] = frozenset()
) -> bool:
    """Conservatively, whether ``schema`` may accept a JSON ``null`` (True when unsure)."""
    kind = schema.get("type")
    if kind in _NEVER_NULL:
        return False
    if kind == "literal":
        return None in schema.get("expected", (None,))
    if kind == "definition-ref":
        ref = schema["schema_ref"]
        target = definitions.get(ref)
        return target is None or ref in _seen or may_accept_null(target, definitions, _seen | {ref})
    if kind == "union":
        return any(
            may_accept_null(choice[0] if isinstance(choice, tuple) else choice, definitions, _seen)
            for choice in schema["choices"]
        )
    if kind in ("function-after", "custom-error", "default"):
        return may_accept_null(schema["schema"], definitions, _seen)
    if kind == "chain":
        return may_accept_null(schema["steps"][0], definitions, _seen)
    if kind == "json-or-python":
        return may_accept_null(schema["json_schema"], definitions, _seen)
    return True
