"""Size bounds applied before a value is hashed, copied or sent (``contract-limits.ts``).

String lengths are counted in UTF-16 code units, as JavaScript's ``length`` counts
them: an emoji counts 2. Whitespace trimming follows JavaScript's ``trim()``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Annotated, Any, Final

from pydantic import (
    BeforeValidator,
    GetCoreSchemaHandler,
    GetJsonSchemaHandler,
    PlainSerializer,
    WithJsonSchema,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import PydanticCustomError, core_schema

from agent_interface.core.canonical import (
    MAX_SAFE_INTEGER as MAX_SAFE_INTEGER,
)
from agent_interface.core.canonical import (
    canonical_digest,
    exact_text,
    is_well_formed_unicode,
)
from agent_interface.core.errors import ContractError
from agent_interface.core.fast_schema import (
    FAST_TEXT_LIMIT,
    Derivation,
    core_equivalent,
    is_bare_string,
    json_value_schema,
)
from agent_interface.core.model import (
    FrozenDict,
    free_json_validator,
    frozen_object_schema,
    thaw,
)
from agent_interface.core.numbers import (
    FiniteNumber,
    NonNegativeNumber,
    NonNegativeSafeInt,
    PositiveSafeInt,
    SafeInt,
    is_finite_integer,
)
from agent_interface.core.numbers import (
    GreaterThanZeroSafeInt as GreaterThanZeroSafeInt,
)
from agent_interface.core.numbers import (
    integral_float_to_int as integral_float_to_int,
)
from agent_interface.core.surrogate_text import STAND_INS, marker_free_pattern, marker_transparent

__all__ = [
    "CONTRACT_MAX_ARRAY_LENGTH",
    "CONTRACT_MAX_IDENTIFIER_LENGTH",
    "CONTRACT_MAX_JSON_BYTES",
    "CONTRACT_MAX_JSON_DEPTH",
    "CONTRACT_MAX_JSON_NODES",
    "CONTRACT_MAX_MAP_ENTRIES",
    "CONTRACT_MAX_STRING_LENGTH",
    "JS_WHITESPACE",
    "ZOD_ISO_DATETIME_PATTERN",
    "ZOD_OFFSET_DATETIME_PATTERN",
    "BoundedIdentifier",
    "BoundedJson",
    "BoundedJsonRecord",
    "BoundedString",
    "FiniteNumber",
    "IsoDatetime",
    "NonNegativeNumber",
    "NonNegativeSafeInt",
    "OffsetIsoDatetime",
    "PositiveSafeInt",
    "SafeInt",
    "Utf16Length",
    "is_bounded_json_material",
    "is_bounded_json_value",
    "is_iso_datetime",
    "js_trim",
    "utf16_length",
    "wire_digest",
]

CONTRACT_MAX_STRING_LENGTH: Final = 16_384
CONTRACT_MAX_IDENTIFIER_LENGTH: Final = 512
CONTRACT_MAX_ARRAY_LENGTH: Final = 1_024
CONTRACT_MAX_MAP_ENTRIES: Final = 256
CONTRACT_MAX_JSON_DEPTH: Final = 16
CONTRACT_MAX_JSON_BYTES: Final = 1_048_576
CONTRACT_MAX_JSON_NODES: Final = 8_192

JS_WHITESPACE: Final = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)
"""The characters JavaScript's ``String.prototype.trim`` removes."""


def utf16_length(text: str) -> int:
    """JavaScript's ``text.length``: UTF-16 code units (a non-string is refused)."""
    if type(text) is not str:
        text = exact_text(text)
    if text.isascii():
        return len(text)
    # Two bytes per code unit; a lone surrogate is one unit, as in JavaScript.
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def utf8_bytes(text: str) -> int:
    """UTF-8 length, counting a lone surrogate as the 3 bytes of U+FFFD like TextEncoder."""
    return len(exact_text(text).encode("utf-8", "surrogatepass"))


def js_trim(text: str) -> str:
    """``text`` without the leading and trailing whitespace JavaScript's ``String.prototype.trim``
    removes (its set differs from ``str.strip``'s); a non-string is refused."""
    return exact_text(text).strip(JS_WHITESPACE)


@dataclass(frozen=True, slots=True)
class Utf16Length:
    """``Annotated[str, Utf16Length(max=..., min=...)]``: zod ``.min()``/``.max()`` on a
    string, counted in UTF-16 code units."""

    max: int | None = None
    min: int = 0

    def check(self, value: str) -> str:
        # len() <= UTF-16 length <= 2 * len(), so most strings skip the exact count.
        if len(value) >= self.min and (self.max is None or len(value) * 2 <= self.max):
            return value
        size = utf16_length(value)
        if self.max is not None and size > self.max:
            raise PydanticCustomError(
                "string_too_long",
                "string must have at most {max} UTF-16 code units",
                {"max": self.max},
            )
        if size < self.min:
            raise PydanticCustomError(
                "string_too_short",
                "string must have at least {min} UTF-16 code units",
                {"min": self.min},
            )
        return value

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        return core_schema.no_info_after_validator_function(self.check, handler(source))

    def __get_pydantic_json_schema__(
        self, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        result = handler(schema)
        if self.max is not None:
            result["maxLength"] = self.max
        if self.min:
            result["minLength"] = self.min
        return result


def _pattern_string(schema: dict[str, Any]) -> bool:
    return (
        schema.get("type") == "str"
        and "pattern" in schema
        and set(schema) <= {"type", "strict", "pattern"}
    )


def _code_points_or_exact(
    owner: Utf16Length, node: dict[str, Any], pattern: str | None = None
) -> dict[str, Any] | None:
    """A string has at least as many UTF-16 code units as code points and at most twice
    as many: within these code-point bounds the UTF-16 bounds hold, checked in the core.
    Other strings take ``node`` itself, the exact count in Python."""
    bounds = core_schema.str_schema(
        pattern=pattern,
        min_length=owner.min or None,
        max_length=None if owner.max is None else owner.max // 2,
        strict=True,
    )
    inner = node["schema"]
    fast: dict[str, Any]
    if is_bare_string(inner):
        fast = dict(bounds)
    elif pattern is None and _pattern_string(inner):  # a pattern type such as a datetime
        fast = {**inner, **bounds}
    else:  # any other checked string type: its checks first, then the bounds
        fast = dict(core_schema.chain_schema([inner, bounds]))
    if owner.max is None and owner.min <= 1:
        return fast
    return dict(core_schema.union_schema([fast, node], mode="left_to_right"))


# Counts code units: a stand-in is one, like the lone surrogate it stands for.
marker_transparent(Utf16Length.check)


@core_equivalent(Utf16Length.check)
def _utf16_length_in_core(
    owner: Utf16Length, node: dict[str, Any], _derivation: Derivation
) -> dict[str, Any] | None:
    return _code_points_or_exact(owner, node)


BoundedString = Annotated[str, Utf16Length(max=CONTRACT_MAX_STRING_LENGTH)]
"""A string of at most 16,384 UTF-16 code units (``boundedStringSchema``)."""


_JS_WHITESPACE_SET: Final = frozenset(JS_WHITESPACE)


@dataclass(frozen=True, slots=True)
class _IdentifierBounds(Utf16Length):
    """The length bounds and the outer-whitespace rule in one validator call."""

    def check(self, value: str) -> str:
        if len(value) < self.min or (self.max is not None and len(value) * 2 > self.max):
            Utf16Length.check(self, value)  # the exact count, and the refusal
        if value[0] in _JS_WHITESPACE_SET or value[-1] in _JS_WHITESPACE_SET:
            raise PydanticCustomError(
                "identifier_whitespace", "identifier cannot have outer whitespace"
            )
        return value


def _class_of(characters: str) -> str:
    # Written so that both Python's and Rust's regex engines read it the same way.
    return "".join(
        f"\\x{ord(char):02X}" if ord(char) < 0x21 else char for char in characters
    )


_NO_OUTER_WHITESPACE: Final = (
    f"^[^{_class_of(JS_WHITESPACE)}](?s:.*[^{_class_of(JS_WHITESPACE)}])?$"
)
marker_free_pattern(
    _NO_OUTER_WHITESPACE,
    f"^[^{_class_of(JS_WHITESPACE)}{STAND_INS}](?:[^{STAND_INS}]*[^{_class_of(JS_WHITESPACE)}{STAND_INS}])?$",
)


# Neither a stand-in nor a lone surrogate is whitespace.
marker_transparent(_IdentifierBounds.check)


@core_equivalent(_IdentifierBounds.check)
def _identifier_in_core(
    owner: _IdentifierBounds, node: dict[str, Any], _derivation: Derivation
) -> dict[str, Any] | None:
    return _code_points_or_exact(owner, node, _NO_OUTER_WHITESPACE)


BoundedIdentifier = Annotated[str, _IdentifierBounds(max=CONTRACT_MAX_IDENTIFIER_LENGTH, min=1)]
"""1..512 UTF-16 code units without outer whitespace (``boundedIdentifierSchema``)."""


def is_bounded_json_value(value: Any) -> bool:
    """``isBoundedJsonValue``: finite JSON within the depth, size and node bounds."""
    return _bounded_json_problem(value) is None


def is_bounded_json_material(value: Any) -> bool:
    """``isBoundedJsonMaterial``: the digest-input check, which counts each container once."""
    return _bounded_json_problem(value, container_cost=1) is None


def _bounded_json_problem(value: Any, container_cost: int = 2, counts: Any = None) -> str | None:
    try:
        return _bounded_problem(value, container_cost, counts)
    except Exception:  # an object whose own methods fail is not bounded JSON
        return "a value cannot be read as JSON"


def _bounded_problem(value: Any, container_cost: int, counts: list[int] | None = None) -> str | None:
    # The reference's value check counts an array or object twice (on entry and on
    # leaving it) against the node limit; its digest-material check counts it once.
    pending: list[tuple[Any, int]] = [(value, 0)]
    nodes = walked = 0  # walked: arrays and objects
    while pending:
        current, depth = pending.pop()
        nodes += 1
        if nodes > CONTRACT_MAX_JSON_NODES:
            return f"more than {CONTRACT_MAX_JSON_NODES} JSON nodes"
        if current is None or isinstance(current, bool):
            continue
        if isinstance(current, str):
            if utf16_length(current) > CONTRACT_MAX_STRING_LENGTH:
                return f"a string is longer than {CONTRACT_MAX_STRING_LENGTH} code units"
            continue
        if isinstance(current, int):
            if not is_finite_integer(current):
                return "a number is not finite"
            continue
        if isinstance(current, float):
            if current != current or current in (float("inf"), float("-inf")):
                return "a number is not finite"
            continue
        if depth >= CONTRACT_MAX_JSON_DEPTH:
            return f"nesting is deeper than {CONTRACT_MAX_JSON_DEPTH}"
        nodes += container_cost - 1
        walked += 1
        if nodes > CONTRACT_MAX_JSON_NODES:
            return f"more than {CONTRACT_MAX_JSON_NODES} JSON nodes"
        if isinstance(current, (list, tuple)):
            if len(current) > CONTRACT_MAX_ARRAY_LENGTH:
                return f"an array has more than {CONTRACT_MAX_ARRAY_LENGTH} items"
            pending.extend((item, depth + 1) for item in current)
            continue
        if isinstance(current, dict):
            if len(current) > CONTRACT_MAX_MAP_ENTRIES:
                return f"an object has more than {CONTRACT_MAX_MAP_ENTRIES} keys"
            for key, item in current.items():
                if not isinstance(key, str):
                    return "an object key is not a string"
                if utf16_length(key) > CONTRACT_MAX_IDENTIFIER_LENGTH:
                    return f"an object key is longer than {CONTRACT_MAX_IDENTIFIER_LENGTH} code units"
                pending.append((item, depth + 1))
            continue
        return f"{type(current).__name__} is not JSON"
    if counts is not None:  # the node count and the number of arrays and objects
        counts += (nodes, walked)
    return None


class _OutOfBounds(Exception):
    def __init__(self, problem: str) -> None:
        self.problem = problem


_TOO_MANY_NODES: Final = f"more than {CONTRACT_MAX_JSON_NODES} JSON nodes"
_LONG_STRING: Final = f"a string is longer than {CONTRACT_MAX_STRING_LENGTH} code units"
_NOT_FINITE: Final = "a number is not finite"
_INFINITIES: Final = (float("inf"), float("-inf"))


def _string_within_bounds(value: str) -> str:
    # UTF-16 length <= 2 * len(): most strings skip the exact count.
    if len(value) * 2 > CONTRACT_MAX_STRING_LENGTH and utf16_length(value) > CONTRACT_MAX_STRING_LENGTH:
        raise _OutOfBounds(_LONG_STRING)
    return value


def _finite_integer(value: int) -> int:
    # An integer JavaScript reads as Infinity is not finite JSON (``core.numbers``).
    if not is_finite_integer(value):
        raise _OutOfBounds(_NOT_FINITE)
    return value


def _frozen_within_bounds(value: Any, depth: int, nodes: list[int]) -> Any:
    """One walk for :func:`_bounded_json_problem` (``container_cost=2``) and
    :func:`deep_freeze`: ``value`` is already counted in ``nodes``; scalar members are
    checked inline, containers recursively."""
    kind = type(value)
    if kind is str:
        return _string_within_bounds(value)
    if value is None or kind is bool:
        return value
    if kind is int:
        return _finite_integer(value)
    if kind is float:
        if value != value or value in _INFINITIES:
            raise _OutOfBounds(_NOT_FINITE)
        return value
    if kind is not dict and kind is not list and kind is not tuple:
        if isinstance(value, str):
            return _string_within_bounds(value)
        if isinstance(value, int):
            return _finite_integer(value)
        if isinstance(value, float):
            if value != value or value in _INFINITIES:
                raise _OutOfBounds(_NOT_FINITE)
            return value
    if depth >= CONTRACT_MAX_JSON_DEPTH:
        raise _OutOfBounds(f"nesting is deeper than {CONTRACT_MAX_JSON_DEPTH}")
    if isinstance(value, (list, tuple)):
        if len(value) > CONTRACT_MAX_ARRAY_LENGTH:
            raise _OutOfBounds(f"an array has more than {CONTRACT_MAX_ARRAY_LENGTH} items")
        # A container counts twice (entering and leaving it), each member once.
        nodes[0] += 1 + len(value)
        if nodes[0] > CONTRACT_MAX_JSON_NODES:
            raise _OutOfBounds(_TOO_MANY_NODES)
        items = list(value)  # scalars are checked inline (not a call per member) and kept
        if set(map(type, items)) == {int}:  # integers only: no Python loop
            if not (is_finite_integer(min(items)) and is_finite_integer(max(items))):
                raise _OutOfBounds(_NOT_FINITE)
            return tuple(items)
        for index, item in enumerate(items):
            member = type(item)
            if member is int:
                _finite_integer(item)
            elif member is str:  # UTF-16 length <= 2 * len()
                if len(item) * 2 > CONTRACT_MAX_STRING_LENGTH:
                    _string_within_bounds(item)
            elif member is not bool and item is not None:
                items[index] = _frozen_within_bounds(item, depth + 1, nodes)
        return tuple(items)
    if isinstance(value, dict):
        if len(value) > CONTRACT_MAX_MAP_ENTRIES:
            raise _OutOfBounds(f"an object has more than {CONTRACT_MAX_MAP_ENTRIES} keys")
        nodes[0] += 1 + len(value)
        if nodes[0] > CONTRACT_MAX_JSON_NODES:
            raise _OutOfBounds(_TOO_MANY_NODES)
        frozen: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise _OutOfBounds("an object key is not a string")
            if len(key) * 2 > CONTRACT_MAX_IDENTIFIER_LENGTH and (
                utf16_length(key) > CONTRACT_MAX_IDENTIFIER_LENGTH
            ):
                raise _OutOfBounds(
                    f"an object key is longer than {CONTRACT_MAX_IDENTIFIER_LENGTH} code units"
                )
            member = type(item)
            if member is str:
                if len(item) * 2 > CONTRACT_MAX_STRING_LENGTH:
                    _string_within_bounds(item)
                frozen[key] = item
            elif member is bool or item is None:
                frozen[key] = item
            elif member is int:
                frozen[key] = _finite_integer(item)
            else:
                frozen[key] = _frozen_within_bounds(item, depth + 1, nodes)
        return FrozenDict(frozen)
    raise _OutOfBounds(f"{type(value).__name__} is not JSON")


@free_json_validator
def _check_bounded(value: Any) -> Any:
    try:
        return _frozen_within_bounds(value, 0, [1])
    except _OutOfBounds as exc:
        raise PydanticCustomError(
            "bounded_json", "value exceeds the contract bounds or is not finite JSON: {problem}",
            {"problem": exc.problem},
        ) from None


_BOUNDED_REF: Final = "agent_interface.bounded_json"


def _bounded_json_levels() -> list[core_schema.CoreSchema]:
    """Bounded JSON as core schemas, one definition per depth. Only for texts of at most
    ``FAST_TEXT_LIMIT`` characters: those cannot exceed the node limit, nor hold a string
    longer than the string bound; a key of at most half the key bound in code points is
    within it."""
    assert FAST_TEXT_LIMIT <= CONTRACT_MAX_JSON_NODES
    assert FAST_TEXT_LIMIT * 2 <= CONTRACT_MAX_STRING_LENGTH
    levels: list[core_schema.CoreSchema] = []
    for depth in range(CONTRACT_MAX_JSON_DEPTH + 1):
        containers: list[Any] = []
        if depth < CONTRACT_MAX_JSON_DEPTH:
            member = core_schema.definition_reference_schema(f"{_BOUNDED_REF}.{depth + 1}")
            containers = [_bounded_object(member), member]
        levels.append(json_value_schema(
            containers, ref=f"{_BOUNDED_REF}.{depth}", max_items=CONTRACT_MAX_ARRAY_LENGTH
        ))
    levels.append(_bounded_object(
        core_schema.definition_reference_schema(f"{_BOUNDED_REF}.1"),
        ref=f"{_BOUNDED_REF}.record",
    ))
    return levels


def _bounded_object(
    member: core_schema.CoreSchema, ref: str | None = None
) -> core_schema.CoreSchema:
    return frozen_object_schema(
        member, max_key_length=CONTRACT_MAX_IDENTIFIER_LENGTH // 2,
        max_entries=CONTRACT_MAX_MAP_ENTRIES, ref=ref,
    )


@core_equivalent(_check_bounded)
def _bounded_in_core(_owner: Any, _node: dict[str, Any], derivation: Derivation) -> dict[str, Any]:
    derivation.define(f"{_BOUNDED_REF}.0", _bounded_json_levels)
    return dict(core_schema.definition_reference_schema(f"{_BOUNDED_REF}.0"))


def _check_bounded_record(value: Any) -> Any:
    if not isinstance(value, dict):
        raise PydanticCustomError("json_object", "value must be a JSON object")
    return _check_bounded(value)


@core_equivalent(_check_bounded_record)
def _bounded_record_in_core(
    _owner: Any, _node: dict[str, Any], derivation: Derivation
) -> dict[str, Any]:
    derivation.define(f"{_BOUNDED_REF}.0", _bounded_json_levels)
    return dict(core_schema.definition_reference_schema(f"{_BOUNDED_REF}.record"))


BoundedJson = Annotated[
    Any, BeforeValidator(_check_bounded), PlainSerializer(thaw), WithJsonSchema({})
]
"""Bounded, finite JSON (``boundedJsonSchema``), deep-frozen."""

BoundedJsonRecord = Annotated[
    Any, BeforeValidator(_check_bounded_record), PlainSerializer(thaw),
    WithJsonSchema({"type": "object"}),
]
"""A bounded JSON object (``boundedJsonRecordSchema``), deep-frozen."""


def wire_digest(value: Any, counts: list[int] | None = None) -> str:
    """``wireDigest``: canonical digest of bounded JSON material, refusing oversize input.
    ``counts`` (if given) receives its node count and its number of arrays and objects."""
    problem = _bounded_json_problem(value, 1, counts)
    if problem is not None:
        raise ContractError.single("", "bounded_json", f"operation material exceeds the contract bounds: {problem}")
    size = len(json.dumps(thaw(value), ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass"))
    if size > CONTRACT_MAX_JSON_BYTES:
        raise ContractError.single("", "json_bytes", "serialized contract material exceeds its byte bound")
    return canonical_digest(value)


CONTROL_CHARACTER_RE: Final = re.compile(r"[\x00-\x1f\x7f]")
"""A C0 control character or DEL, refused in paths and public text."""
DRIVE_PREFIX_RE: Final = re.compile(r"[A-Za-z]:")
"""A Windows drive prefix (``C:``), matched at the start of a path."""
_RESERVED_ROOTS: Final = frozenset({".git", ".sidecar"})


def is_safe_relative_path(value: str, allow_dot: bool) -> bool:
    """``isSafeRelativePath``: a canonical POSIX path inside a workspace.

    Refused: empty, control characters, lone surrogates, a leading ``/`` or ``\\``,
    any backslash, a drive letter, an empty, ``.`` or ``..`` segment, and a ``.git`` or
    ``.sidecar`` segment. ``.`` alone is accepted only with ``allow_dot``.
    (Workspace cwd paths follow other rules: ``workspace.repository_path_issue``.)
    """
    if not isinstance(value, str):
        return False
    return _is_safe_relative_path(str.__str__(value), allow_dot)


def _is_safe_relative_path(value: str, allow_dot: bool) -> bool:
    if (
        not value
        or CONTROL_CHARACTER_RE.search(value)
        or not is_well_formed_unicode(value)
        or value.startswith(("/", "\\"))
        or "\\" in value
        or DRIVE_PREFIX_RE.match(value)
    ):
        return False
    if value == ".":
        return allow_dot
    parts = value.split("/")
    return all(part not in ("", ".", "..") for part in parts) and not any(
        part in _RESERVED_ROOTS for part in parts
    )


# ``z.iso.datetime()`` of zod 4.4.3, the version the reference pins: a calendar-valid
# date, ``T``, hh:mm with optional seconds and fraction, and ``Z`` (no offsets).
_DATE = (
    r"(?:(?:[0-9]{2}[2468][048]|[0-9]{2}[13579][26]|[0-9]{2}0[48]|[02468][048]00|[13579][26]00)-02-29"
    r"|[0-9]{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)"
    r"|(?:02)-(?:0[1-9]|1[0-9]|2[0-8])))"
)
_ISO_DATETIME_RE: Final = re.compile(
    _DATE + r"T(?:[01][0-9]|2[0-3]):[0-5][0-9](?::[0-5][0-9](?:\.[0-9]+)?)?Z"
)


_OFFSET_DATETIME_RE: Final = re.compile(
    _DATE
    + r"T(?:[01][0-9]|2[0-3]):[0-5][0-9](?::[0-5][0-9](?:\.[0-9]+)?)?"
    + r"(?:Z|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])"
)


# The same two expressions as zod 4.4.3 writes them into JSON Schema (``\d`` is ASCII in
# ECMAScript; pydantic-core's and Python's regexes need ``[0-9]`` above).
ZOD_ISO_DATETIME_PATTERN: Final = (
    r"^(?:(?:\d\d[2468][048]|\d\d[13579][26]|\d\d0[48]|[02468][048]00|[13579][26]00)-02-29"
    r"|\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\d|30)"
    r"|(?:02)-(?:0[1-9]|1\d|2[0-8])))T(?:(?:[01]\d|2[0-3]):[0-5]\d(?::[0-5]\d(?:\.\d+)?)?(?:Z))$"
)
"""The JSON Schema ``pattern`` of ``z.iso.datetime()``, as ``z.toJSONSchema`` writes it."""

ZOD_OFFSET_DATETIME_PATTERN: Final = (
    ZOD_ISO_DATETIME_PATTERN[: -len("(?:Z))$")] + r"(?:Z|([+-](?:[01]\d|2[0-3]):[0-5]\d)))$"
)
"""The JSON Schema ``pattern`` of ``z.iso.datetime({ offset: true })``."""


def is_iso_datetime(value: str) -> bool:
    """True when ``value`` is a datetime zod's ``z.iso.datetime()`` accepts (UTC ``Z``, seconds
    optional); a non-string is not one."""
    return isinstance(value, str) and _ISO_DATETIME_RE.fullmatch(str.__str__(value)) is not None


@dataclass(frozen=True, slots=True)
class _FullMatch:
    """A string that must match ``pattern`` whole, checked by pydantic-core's regex
    engine (no Python call); a mismatch is refused with ``code``."""

    pattern: re.Pattern[str]
    code: str
    message: str

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        # The type is checked first (a number stays ``string_type``), then the pattern.
        matched = core_schema.custom_error_schema(
            core_schema.str_schema(pattern=f"^(?:{self.pattern.pattern})$"),
            custom_error_type=self.code,
            custom_error_message=self.message,
        )
        return core_schema.chain_schema([handler(source), matched])


IsoDatetime = Annotated[
    str,
    _FullMatch(
        _ISO_DATETIME_RE, "iso_datetime", "must be an ISO 8601 UTC datetime like 2026-01-31T12:00:00Z"
    ),
    WithJsonSchema({"type": "string", "format": "date-time", "pattern": ZOD_ISO_DATETIME_PATTERN}),
]
"""zod ``z.iso.datetime()`` (4.4.3): ``YYYY-MM-DDTHH:MM[:SS[.fff]]Z``."""


OffsetIsoDatetime = Annotated[
    str,
    _FullMatch(
        _OFFSET_DATETIME_RE,
        "iso_datetime",
        "must be an ISO 8601 datetime with Z or an offset, like 2026-01-31T12:00:00+02:00",
    ),
    WithJsonSchema(
        {"type": "string", "format": "date-time", "pattern": ZOD_OFFSET_DATETIME_PATTERN}
    ),
]
"""zod ``z.string().datetime({ offset: true })`` (4.4.3): ``Z`` or a ``+hh:mm`` offset."""
