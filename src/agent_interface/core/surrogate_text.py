"""JSON text with lone-surrogate escapes, validated in the core through stand-in characters.

``JSON.parse`` reads ``"\\uD800"`` as a string holding a lone surrogate and zod accepts
it; pydantic-core's parser refuses such text. The precise answer is to read the text
with Python's ``json`` and validate the value (``core.json_text``), at the price of every
Python check. This module gives most such texts a faster route that reaches the same
verdict and value:

1. :func:`mark_lone_surrogates` rewrites each lone-surrogate escape ``\\uD8xx``..``\\uDFxx``
   into the escape of a stand-in, U+E000..U+E7FF (private use, one UTF-16 code unit and one
   code point, like the surrogate it stands for). It declines a text that already holds
   a character of that range (the stand-ins would be ambiguous) or a lone surrogate
   inside an object key (keys are read by rules this route does not re-check).
2. The marked validator (:func:`derive_marked_validator`) is the derived validator of
   ``core.fast_schema`` with three changes. Every string it hands on is mapped back
   (stand-ins become the surrogates again) right after the string's own core checks, so
   every Python validator above a string sees the real value, and the value returned is
   the real value. A string schema of the precise validator that carries its own core
   constraints refuses every lone surrogate (pydantic-core cannot check a string it
   cannot encode), so it must refuse the stand-ins too: unless its pattern can only match
   ASCII characters and decimal digits, it is guarded by a pattern refusing U+E000..U+E7FF.
   A validator function that sees the raw input (``before``, ``wrap``, ``plain``) runs on
   marked text, so it must be registered with :func:`marker_transparent` (it treats a
   stand-in exactly as the surrogate it stands for); a schema holding any other such
   function, an unvalidated value (``any``) or a node type not listed here has no marked
   validator and keeps the precise route.

What the marked validator accepts, the precise validator accepts with the same value; on
any refusal the precise route runs and reports, so errors never come from this module.
"""

from __future__ import annotations

import functools
import importlib
import re
from typing import Any, Final

from pydantic_core import SchemaValidator, core_schema

from agent_interface.core.fast_schema import build_validator, derive_fast_schema

__all__: list[str] = []  # used by core.model and the owners of raw-input validators

_SHIFT: Final = 0xE000 - 0xD800
STAND_INS: Final = "\ue000-\ue7ff"
"""The stand-in range as the body of a regular-expression character class."""

_RAW_STAND_IN: Final = re.compile(rb"\xee[\x80-\x9f]")
_COLON_NEXT: Final = re.compile(rb"[ \t\n\r]*:")


def _escaped(raw: bytes, position: int) -> bool:
    """Whether the byte at ``position`` follows an odd number of backslashes."""
    before = position
    while before > 0 and raw[before - 1] == 0x5C:
        before -= 1
    return (position - before) % 2 == 1


def _in_key(raw: bytes, position: int) -> bool | None:
    """Whether the string holding ``position`` is an object key (None: it never ends)."""
    quote = raw.find(b'"', position)
    while quote != -1 and _escaped(raw, quote):
        quote = raw.find(b'"', quote + 1)
    if quote == -1:
        return None
    return _COLON_NEXT.match(raw, quote + 1) is not None


# The escapes that matter, left to right: an escaped backslash (consumed, so that what
# follows it is not read as an escape), a surrogate pair (left alone), a lone surrogate
# (group 1) and the escape of a stand-in (group 2). Any other escape never matches.
_ESCAPES: Final = re.compile(
    rb"\\(?:\\"
    rb"|u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}"
    rb"|u([dD][89a-fA-F][0-9a-fA-F]{2})"
    rb"|u([eE][0-7][0-9a-fA-F]{2}))"
)


_LONE_ESCAPE_SOURCE: Final = (
    r"\\u[dD](?:[89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F])"
    r"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD])[c-fC-F][0-9a-fA-F]{2})"
)
LONE_ESCAPE_BYTES: Final = re.compile(_LONE_ESCAPE_SOURCE.encode())
"""Finds what looks like a lone-surrogate escape in JSON bytes, ignoring whether its
backslash is itself escaped: a hint only (:func:`mark_lone_surrogates` decides)."""
LONE_ESCAPE_TEXT: Final = re.compile(_LONE_ESCAPE_SOURCE)
""":data:`LONE_ESCAPE_BYTES` for a ``str`` JSON text."""


_STAND_IN_ESCAPES: Final = tuple(b"\\u%04X" % (unit + _SHIFT) for unit in range(0xD800, 0xE000))


def mark_lone_surrogates(data: bytes | bytearray | str) -> bytes | None:
    """``data`` with every lone-surrogate escape replaced by its stand-in's escape, or None
    when the text has none, already holds a stand-in, or has one in an object key."""
    if isinstance(data, str):
        try:
            raw = data.encode("utf-8")
        except UnicodeEncodeError:
            return None
    else:
        raw = data if type(data) is bytes else bytes(data)
    pieces: list[bytes] = []
    start = 0
    search = _ESCAPES.search
    found = search(raw)
    while found is not None:  # (a ``search`` loop costs less than ``finditer`` here)
        group = found.lastindex
        if group is not None:
            if group == 2:
                return None  # a stand-in already in the text
            at = found.start()
            if _in_key(raw, at + 6) is not False:
                return None  # in an object key, or not JSON
            pieces += (raw[start:at], _STAND_IN_ESCAPES[int(found.group(1), 16) - 0xD800])
            start = at + 6
        found = search(raw, found.end())
    if not pieces or (not raw.isascii() and _RAW_STAND_IN.search(raw)):
        return None
    pieces.append(raw[start:])
    return b"".join(pieces)


_UNMARK: Final = {code + _SHIFT: code for code in range(0xD800, 0xE000)}


def _unmark(value: str) -> str:
    return value if value.isascii() else value.translate(_UNMARK)


_TRANSPARENT: set[Any] = set()


def _code_of(function: Any) -> Any:
    function = getattr(function, "__func__", function)
    return getattr(function, "__code__", function)


def marker_transparent(function: Any) -> Any:
    """Register a validator function that sees raw input (``before``/``wrap``/``plain``)
    as treating a stand-in character exactly as the lone surrogate it stands for: the
    same verdict, and a result that differs only by that exchange. Typical: functions
    that look at types, numbers or object keys only (keys never hold a stand-in).
    Registered by code object, so every closure made by one ``def`` is covered."""
    _TRANSPARENT.add(_code_of(function))
    return function


def _transparent(function: Any) -> bool:
    return _code_of(function) in _TRANSPARENT


def _register_pydantic_wrappers() -> None:
    # pydantic applies a string constraint it cannot merge as a "wrap" function that only
    # calls the wrapped string schema (and turns a type error into TypeError).
    from pydantic._internal import _known_annotated_metadata  # private: missing costs speed

    apply = getattr(_known_annotated_metadata, "apply_known_metadata", None)
    for constant in getattr(getattr(apply, "__code__", None), "co_consts", ()):
        if getattr(constant, "co_name", None) == "_apply_constraint_with_incompatibility_info":
            _TRANSPARENT.add(constant)


_register_pydantic_wrappers()


class _NotMarkable(Exception):
    """The schema holds something the marked route cannot vouch for."""


_GUARD: Final = "agent_interface.marker_guard"


_NO_MARKER: Final = f"^[^{STAND_INS}]*$"


def _guarded(node: dict[str, Any]) -> dict[str, Any]:
    guard = core_schema.str_schema(pattern=_NO_MARKER, strict=True)
    return dict(core_schema.chain_schema([guard, node], metadata={_GUARD: True}))


try:  # Python's own regular-expression parser (private; without it every pattern is guarded)
    _sre: Any = importlib.import_module("re._constants")
    _sre_parse: Any = importlib.import_module("re._parser")
    _ASCII_OPS: Final = frozenset({
        _sre.LITERAL, _sre.AT, _sre.MAX_REPEAT, _sre.MIN_REPEAT, _sre.SUBPATTERN,
        _sre.BRANCH, _sre.IN, _sre.RANGE, _sre.CATEGORY,
    })
except (ImportError, AttributeError):  # pragma: no cover
    _sre_parse = None


@functools.cache
def _ascii_or_digits(pattern: str) -> bool:
    """Whether every character ``pattern`` (Rust syntax, read by Python's parser) can match
    is ASCII or a decimal digit, so never a private-use stand-in. Conservative: whatever
    is not recognised, including a "[" inside a class, is False."""
    if _sre_parse is None:
        return False
    try:
        parsed = _sre_parse.parse(pattern)
    except (re.error, RecursionError):
        return False

    def ok(items: Any) -> bool:
        for op, arg in items:
            if op not in _ASCII_OPS:
                return False
            if op is _sre.LITERAL and arg > 0x7F:
                return False
            if op is _sre.RANGE and arg[1] > 0x7F:
                return False
            if op is _sre.CATEGORY and arg is not _sre.CATEGORY_DIGIT:
                return False
            if op is _sre.IN and (not ok(arg) or (_sre.LITERAL, 0x5B) in arg):
                return False  # (a "[" in a class may be a nested class in Rust's syntax)
            if op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT) and not ok(arg[2]):
                return False
            if op is _sre.SUBPATTERN and not ok(arg[3]):
                return False
            if op is _sre.BRANCH and not all(ok(branch) for branch in arg[1]):
                return False
        return True

    return ok(parsed)


def _guard_constrained_strings(node: Any) -> Any:
    """A copy of the precise schema in which each string with core constraints refuses
    the stand-ins (the precise validator refuses every lone surrogate there)."""
    if isinstance(node, tuple):
        return (_guard_constrained_strings(node[0]), *node[1:])
    if isinstance(node, list):
        return [_guard_constrained_strings(child) for child in node]
    if not isinstance(node, dict):
        return node
    if node.get("type") == "json-or-python" and not _same_branches(node):
        raise _NotMarkable("json-or-python")
    copied = {
        key: child if key in ("serialization", "metadata", "cls", "function") else
        _guard_constrained_strings(child)
        for key, child in node.items()
    }
    if copied.get("type") == "str" and set(copied) - {"type", "strict", "ref", "metadata"}:
        pattern = copied.get("pattern")
        if not isinstance(pattern, str) or not _ascii_or_digits(pattern):
            ref = copied.pop("ref", None)
            guarded = _guarded(copied)
            if ref is not None:
                guarded["ref"] = ref
            return guarded
    return copied


def _same_branches(node: dict[str, Any]) -> bool:
    """Whether the Python branch is the JSON branch behind one registered raw-input
    function (only JSON reaches the marked validator; the precise route reads the
    Python branch)."""
    python = node["python_schema"]
    if python.get("type") not in _RAW_INPUT or not _transparent(python["function"]["function"]):
        return False
    return _without_strict(python["schema"]) == _without_strict(node["json_schema"])


def _without_strict(schema: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in schema.items() if key != "strict"}


_PLAIN_TYPES: Final = frozenset({"int", "float", "bool", "none", "definition-ref", "is-instance"})
_RAW_INPUT: Final = frozenset({"function-before", "function-wrap", "function-plain"})


_PATTERN_VARIANTS: dict[str, str] = {}


def marker_free_pattern(pattern: str, variant: str) -> None:
    """Register ``variant``: the strings ``pattern`` matches that hold no stand-in. A
    string schema with ``pattern`` then keeps such strings in the core on the marked
    route, instead of a Python call per string."""
    _PATTERN_VARIANTS[pattern] = variant


def _mapped_back_string(node: dict[str, Any]) -> dict[str, Any]:
    pattern = node.get("pattern")
    if pattern is not None and _ascii_or_digits(pattern):
        return node  # no stand-in can pass: nothing to map back
    mapped = dict(core_schema.no_info_after_validator_function(_unmark, node))
    if pattern is None:
        plain = {**node, "pattern": _NO_MARKER}
    elif pattern in _PATTERN_VARIANTS:
        plain = {**node, "pattern": _PATTERN_VARIANTS[pattern]}
    else:
        return mapped
    # A string without stand-ins (nearly all of them) stays in the core.
    return dict(core_schema.union_schema([plain, mapped], mode="left_to_right"))


def _has_marker(value: Any) -> bool:
    if isinstance(value, str):
        return re.search(f"[{STAND_INS}]", value) is not None
    if isinstance(value, (list, tuple, set, frozenset)):
        return any(_has_marker(item) for item in value)
    if isinstance(value, dict):
        return any(_has_marker(key) or _has_marker(item) for key, item in value.items())
    return False


def _map_back(node: Any, *, key: bool = False) -> Any:
    """The derived schema with every string value mapped back after its own checks."""
    if isinstance(node, tuple):
        return (_map_back(node[0]), *node[1:])
    if not isinstance(node, dict):
        raise _NotMarkable(repr(node))
    kind = node.get("type")
    out = dict(node)
    if kind == "str":
        return out if key else _mapped_back_string(out)
    if kind == "chain":
        if node.get("metadata", {}).get(_GUARD):
            return out  # refuses every stand-in: nothing to map back
        steps = node["steps"]
        # Only the last step's output leaves the chain; the earlier ones feed core checks
        # that must see the stand-ins, so they may hold no function (it would see them too).
        for step in steps[:-1]:
            _sees_stand_ins(step)
        out["steps"] = [*steps[:-1], _map_back(steps[-1], key=key)]
        return out
    if kind in _PLAIN_TYPES:
        return out
    if kind in ("literal", "enum"):
        if _has_marker(node.get("expected", node.get("members"))):
            raise _NotMarkable(kind)
        return out
    if kind in _RAW_INPUT:
        function = node["function"]["function"]
        if not _transparent(function):
            raise _NotMarkable(getattr(function, "__qualname__", repr(function)))
    if kind == "model":
        if node.get("custom_init"):
            raise _NotMarkable("custom __init__")
    elif kind in ("model-fields", "typed-dict"):
        out["fields"] = {
            name: {**field, "schema": _map_back(field["schema"])}
            for name, field in node["fields"].items()
        }
        if "extras_schema" in node:
            out["extras_schema"] = _map_back(node["extras_schema"])
        return out
    elif kind == "tagged-union":
        discriminator = node["discriminator"]
        if callable(discriminator) and not _transparent(discriminator):
            raise _NotMarkable(getattr(discriminator, "__qualname__", "discriminator"))
        if _has_marker(list(node["choices"])):
            raise _NotMarkable("discriminator tags")
        out["choices"] = {tag: _map_back(choice) for tag, choice in node["choices"].items()}
        return out
    elif kind == "json-or-python":
        # Only JSON reaches this validator (the branches were compared on the precise schema).
        return _map_back(node["json_schema"], key=key)
    elif kind == "dict":
        if "keys_schema" in node:
            out["keys_schema"] = _map_back(node["keys_schema"], key=True)
        if "values_schema" not in node or "keys_schema" not in node:
            raise _NotMarkable("untyped dict")
        out["values_schema"] = _map_back(node["values_schema"])
        return out
    elif kind == "union":
        out["choices"] = [_map_back(choice) for choice in node["choices"]]
        return out
    elif kind == "definitions":
        out["definitions"] = [_map_back(definition) for definition in node["definitions"]]
    elif kind in ("tuple", "list"):
        items = node.get("items_schema")
        if items is None:
            raise _NotMarkable("untyped array")
        out["items_schema"] = (
            [_map_back(item) for item in items] if isinstance(items, list) else _map_back(items)
        )
        return out
    elif kind not in ("nullable", "default", "function-after", "custom-error", "lax-or-strict",
                      *_RAW_INPUT):
        raise _NotMarkable(str(kind))
    for child in ("schema", "lax_schema", "strict_schema"):
        if child in node:
            out[child] = _map_back(node[child], key=key)
    return out


_SCALARS: Final = frozenset({"str", "int", "float", "bool", "none", "literal"})
_VALIDATORS: Final = _RAW_INPUT | {"function-after"}


def _sees_stand_ins(node: Any) -> None:
    """Raise unless ``node`` may run on marked values as they are: a chain step whose
    output feeds another core check, so its strings keep their stand-ins. Scalars,
    unions and chains of them, and registered transparent functions only."""
    if not isinstance(node, dict):
        raise _NotMarkable("chain step")
    kind = node.get("type")
    if kind in _SCALARS:
        if kind == "literal" and _has_marker(node.get("expected")):
            raise _NotMarkable("literal")
        return
    if kind in _VALIDATORS:
        function = node["function"]["function"]
        if not _transparent(function):
            raise _NotMarkable(getattr(function, "__qualname__", "chain step"))
        if "schema" in node:
            _sees_stand_ins(node["schema"])
        return
    if kind == "union":
        for choice in node["choices"]:
            _sees_stand_ins(choice[0] if isinstance(choice, tuple) else choice)
        return
    if kind == "chain":
        for step in node["steps"]:
            _sees_stand_ins(step)
        return
    raise _NotMarkable(f"chain step {kind}")


def derive_marked_schema(schema: core_schema.CoreSchema) -> dict[str, Any] | None:
    """The marked validator's core schema for the precise ``schema``, or None when the
    schema holds something the route cannot vouch for."""
    try:
        guarded = _guard_constrained_strings(schema)
        marked: dict[str, Any] = _map_back(derive_fast_schema(guarded) or guarded)
    except _NotMarkable:
        return None
    return marked


def derive_marked_validator(
    schema: core_schema.CoreSchema, config: core_schema.CoreConfig | None = None
) -> SchemaValidator | None:
    """The validator for texts :func:`mark_lone_surrogates` rewrote, or None."""
    marked = derive_marked_schema(schema)
    return None if marked is None else build_validator(marked, config)


def why_not_marked(schema: core_schema.CoreSchema) -> str | None:
    """What keeps ``schema`` from a marked validator (None when it has one); for tests
    and benchmarks."""
    try:
        guarded = _guard_constrained_strings(schema)
        _map_back(derive_fast_schema(guarded) or guarded)
    except _NotMarkable as exc:
        return str(exc)
    return None
