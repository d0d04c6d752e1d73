"""Validators whose refusals cost a bounded amount, derived from a wire type's schema.

pydantic-core keeps one error per refused member of an array or map, at about 300 bytes
each: refusing a million-member array takes hundreds of megabytes. The **bounded**
validator is the same schema with ``fail_fast`` on every array, tuple, set and map, so
validation stops at the first refused member of each. It accepts exactly what the
precise validator accepts, with the same value, at the same speed; only the refusals
are fewer.

The **labelled** validator is the bounded one whose union choices carry labels starting
with :data:`~agent_interface.core.errors.MARK`: every part pydantic inserts into an
error location (a union member, a discriminator tag, a map value's wrapper) is then
recognizable, and the location maps onto a JSON Pointer without the document. It reads
the refusals of large texts, whose document would cost more to rebuild than to check.
"""

from __future__ import annotations

from typing import Any, Final

from pydantic_core import SchemaValidator, core_schema

from agent_interface.core.errors import MARK, NEVER_MARK, TAG_MARK
from agent_interface.core.fast_schema import build_validator

__all__: list[str] = []  # used by core.model only

LARGE_TEXT: Final = 65_536
"""JSON texts longer than this are validated by the bounded validator."""

FULL_REFUSAL_NODES: Final = 20_000
"""A parsed value of at most this many JSON nodes is refused with every issue (the
precise validator runs again); a larger one with the bounded validator's issues."""

MAP_MARK: Final = MARK + "map"
"""The mark of a map value: a refusal inside it may come from a duplicated key."""

_FAIL_FAST: Final = frozenset({"list", "tuple", "set", "frozenset", "dict"})
_SKIPPED: Final = frozenset({"metadata", "serialization", "ref", "cls", "function"})


class _Never:
    """No document value is an instance of this class: the choice that never matches."""


def _never() -> core_schema.CoreSchema:
    return core_schema.is_instance_schema(_Never)


def _marked_choice(schema: Any, mark: str) -> core_schema.CoreSchema:
    # A union of one choice is reduced to the choice itself, label and all: a second
    # choice that never matches keeps the label in the location.
    return core_schema.union_schema([(schema, mark), (_never(), NEVER_MARK)], mode="left_to_right")


def _derive(node: Any, labelled: bool) -> Any:
    if isinstance(node, list):
        return [_derive(item, labelled) for item in node]
    if isinstance(node, tuple):
        return tuple(_derive(item, labelled) for item in node)
    if not isinstance(node, dict):
        return node
    derived = {
        key: value if key in _SKIPPED else _derive(value, labelled) for key, value in node.items()
    }
    kind = node.get("type")
    if isinstance(kind, str) and kind in _FAIL_FAST:
        derived["fail_fast"] = True
    if not labelled:
        return derived
    if kind == "union" and isinstance(derived.get("choices"), list):
        derived["choices"] = [
            (choice[0] if isinstance(choice, tuple) else choice, f"{MARK}{index}")
            for index, choice in enumerate(derived["choices"])
        ]
    elif kind == "tagged-union" and isinstance(derived.get("choices"), dict):
        derived["choices"] = {
            tag: _marked_choice(choice, TAG_MARK) for tag, choice in derived["choices"].items()
        }
    elif kind == "dict" and isinstance(derived.get("values_schema"), dict):
        derived["values_schema"] = _marked_choice(derived["values_schema"], MAP_MARK)
    return derived


def bounded_validator(
    schema: core_schema.CoreSchema, config: core_schema.CoreConfig, *, labelled: bool = False
) -> SchemaValidator:
    """The bounded (or, with ``labelled``, the labelled) validator of ``schema``, built
from the derived schema all the way down (``fast_schema.build_validator``)."""
    return build_validator(_derive(schema, labelled), config)


def within_nodes(value: Any, limit: int = FULL_REFUSAL_NODES) -> bool:
    """True when ``value`` holds at most ``limit`` JSON nodes (arrays and objects are
    walked; anything that cannot be walked counts as too large)."""
    pending = [value]
    count = 0
    try:
        while pending:
            current = pending.pop()
            count += 1
            if count > limit:
                return False
            if isinstance(current, dict):
                count += len(current)
                if count > limit:
                    return False
                pending.extend(current.values())
            elif isinstance(current, (list, tuple)):
                if count + len(current) > limit:
                    return False
                pending.extend(current)
    except Exception:  # a hostile container: refuse with the bounded issues
        return False
    return count <= limit
