"""Valid wire documents for any registered schema, drawn from a ``random.Random``.

Generation is driven by the registry and the models, not by per-schema code: a document
starts from a seed (an accepted document, see :mod:`agent_interface.testing.seeds`) or from
the schema's exported JSON Schema, is mutated along that JSON Schema (a subtree
regenerated, an optional key added or dropped, a leaf changed), goes through the
schema's document hooks (which restore refinements no JSON Schema expresses, such as
digests over the content), and is kept only when the package accepts it. A schema whose
refinements defeat every attempt falls back to an unmutated seed, so every document
returned is accepted. :mod:`agent_interface.testing.strategies` wraps this for hypothesis.
"""

from __future__ import annotations

import copy
import random
import string
from collections.abc import Callable, Iterator
from typing import Any

from agent_interface.core.errors import ContractError
from agent_interface.core.json_schema import export_json_schema, never_stricter
from agent_interface.core.model import WireAdapter, wire_adapter
from agent_interface.core.registry import wire_schema, wire_schemas
from agent_interface.testing import generation_hooks  # noqa: F401  (registers the built-in hooks)
from agent_interface.testing.hook_registry import (
    DocumentHook,
    ValueHook,
    document_hooks,
    register_document_hook,
    register_value_hook,
    value_hook,
)
from agent_interface.testing.seeds import harvest_seed_documents, seed_documents

__all__ = [
    "DocumentHook",
    "GenerationError",
    "ValueHook",
    "generate_document",
    "register_document_hook",
    "register_value_hook",
    "schema_name_of",
]

_ATTEMPTS = 16
_MAX_DEPTH = 6
_WORD = string.ascii_lowercase + string.digits
_TEXT = _WORD + " -_./:" + "é€日😀"
_HEX = "0123456789abcdef"


class GenerationError(ValueError):
    """No accepted document could be produced for a schema (it needs a seed or a hook)."""


class _TooDeep(Exception):
    """A candidate kept nesting (a recursive required field): drop it and try again."""


def schema_name_of(schema: str | type | Any) -> str:
    """The registered name of ``schema``: a name, or a registered model or type."""
    if isinstance(schema, str):
        wire_schema(schema)  # KeyError naming close names when unknown
        return schema
    for name, adapter in wire_schemas().items():
        if adapter.type is schema:
            return name
    raise KeyError(f"{schema!r} is not a registered wire schema")


def _hooked(name: str, document: Any) -> Any:
    for hook in document_hooks(name):
        document = hook(document)
    return document


_HARVESTED: dict[str, list[Any]] = {}


def _harvested(name: str) -> list[Any]:
    # A schema registered after the seeds were collected (run scripts/collect_seeds.py to
    # keep them) borrows the parts of other seeds it accepts; searched once per process.
    if name not in _HARVESTED:
        adapter = wire_schema(name)
        _HARVESTED[name] = harvest_seed_documents(lambda piece: _accepted(adapter, piece))
    return copy.deepcopy(_HARVESTED[name])


def _accepted(adapter: WireAdapter[Any], document: Any) -> bool:
    try:
        adapter.parse_value(copy.deepcopy(document))
    except ContractError:
        return False
    return True


def generate_document(schema: str | type | Any, rng: random.Random) -> Any:
    """One wire document that the package accepts as ``schema``: a registered name, a
    registered type, or any wire model (an unregistered one is generated from its own JSON
    Schema, with the hooks registered under its class name).

    Raises :class:`GenerationError` when there is no seed and no attempt was accepted.
    """
    try:
        name = schema_name_of(schema)
    except KeyError:
        if isinstance(schema, str):
            raise
        name = getattr(schema, "__name__", repr(schema))
        adapter: WireAdapter[Any] = wire_adapter(schema)
        json_schema = never_stricter(adapter.json_schema())
        seeds: list[Any] = []
    else:
        adapter = wire_schema(name)
        json_schema = export_json_schema(name)
        seeds = seed_documents(name) or _harvested(name)
    # The caller's random first; then fixed private ones, because a random driven by
    # hypothesis may be degenerate (always the first choice) while it shrinks.
    randoms = [rng] * (_ATTEMPTS if seeds else 2 * _ATTEMPTS)
    randoms += [random.Random(f"{name}:{attempt}") for attempt in range(0 if seeds else 4 * _ATTEMPTS)]
    for source in randoms:
        shaper = _Shaper(json_schema, source)
        try:
            if seeds and source.random() < 0.9:
                candidate = shaper.mutate(copy.deepcopy(source.choice(seeds)), source.randint(1, 3))
            else:
                candidate = shaper.value(shaper.root, 0)
            candidate = _hooked(name, candidate)
        except (ContractError, _TooDeep):
            continue
        if _accepted(adapter, candidate):
            return candidate
    if seeds:
        return rng.choice(seeds)
    raise GenerationError(f"no accepted {name} document was generated: give it a seed or a hook")


_CATEGORIES = {
    "CATEGORY_DIGIT": string.digits,
    "CATEGORY_WORD": string.ascii_letters + string.digits + "_",
    "CATEGORY_SPACE": " ",
    "CATEGORY_NOT_DIGIT": string.ascii_letters,
    "CATEGORY_NOT_WORD": "-.",
    "CATEGORY_NOT_SPACE": string.ascii_letters,
}


def _matching_text(pattern: str, rng: random.Random) -> str | None:
    """A string matching a simple regular expression (classes, repeats, alternation,
    groups, anchors); ``None`` for constructs it does not draw (lookarounds, references)."""
    import re
    from re import _parser  # type: ignore[attr-defined]

    try:
        parsed = _parser.parse(pattern)
        text = _draw(list(parsed), rng)
    except (re.error, _Unsupported, RecursionError):
        return None
    return text if re.search(pattern, text) else None


class _Unsupported(Exception):
    pass


def _draw(items: list[Any], rng: random.Random) -> str:
    out: list[str] = []
    for op, arg in items:
        name = str(op)
        if name == "LITERAL":
            out.append(chr(arg))
        elif name == "ANY":
            out.append(rng.choice(_WORD))
        elif name == "IN":
            out.append(_draw_class(arg, rng))
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            low, high, body = arg
            high = min(high, low + 8)
            out.extend(_draw(list(body), rng) for _ in range(rng.randint(low, max(low, high))))
        elif name == "SUBPATTERN":
            out.append(_draw(list(arg[-1]), rng))
        elif name == "BRANCH":
            out.append(_draw(list(rng.choice(arg[1])), rng))
        elif name == "AT":
            continue
        else:
            raise _Unsupported(name)
    return "".join(out)


def _draw_class(items: list[Any], rng: random.Random) -> str:
    choices: list[str] = []
    for op, arg in items:
        name = str(op)
        if name == "NEGATE":
            raise _Unsupported(name)
        if name == "LITERAL":
            choices.append(chr(arg))
        elif name == "RANGE":
            choices.extend(chr(code) for code in range(arg[0], min(arg[1], arg[0] + 200) + 1))
        elif name == "CATEGORY":
            choices.extend(_CATEGORIES.get(str(arg), ""))
    if not choices:
        raise _Unsupported("IN")
    return rng.choice(choices)


class _Shaper:
    """Values and mutations along one exported JSON Schema."""

    def __init__(self, schema: dict[str, Any], rng: random.Random) -> None:
        self.definitions: dict[str, Any] = schema.get("$defs", {})
        self.root = schema
        self.rng = rng

    # -- schema navigation ---------------------------------------------------------------

    def resolve(self, node: Any) -> dict[str, Any]:
        while isinstance(node, dict) and isinstance(node.get("$ref"), str):
            node = self.definitions[node["$ref"].rsplit("/", 1)[-1]]
        return node if isinstance(node, dict) else {}

    def options(self, node: Any) -> list[dict[str, Any]]:
        node = self.resolve(node)
        for key in ("anyOf", "oneOf"):
            if isinstance(node.get(key), list):
                found: list[dict[str, Any]] = []
                for option in node[key]:
                    found.extend(self.options(option))
                return found
        return [node]

    def fits(self, node: dict[str, Any], value: Any) -> bool:
        kind = node.get("type")
        if "const" in node:
            return bool(node["const"] == value)
        if "enum" in node:
            return value in node["enum"]
        if kind == "object" or "properties" in node:
            if not isinstance(value, dict):
                return False
            properties = node.get("properties", {})
            for key, option in properties.items():
                constant = self.resolve(option).get("const")
                if constant is not None and key in value and value[key] != constant:
                    return False
            return node.get("additionalProperties") is not False or set(value) <= set(properties)
        checks: dict[str, Callable[[Any], bool]] = {
            "array": lambda v: isinstance(v, list),
            "string": lambda v: isinstance(v, str),
            "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
            "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
            "boolean": lambda v: isinstance(v, bool),
            "null": lambda v: v is None,
        }
        check = checks.get(kind) if isinstance(kind, str) else None
        return True if check is None else check(value)

    def matching(self, node: Any, value: Any) -> dict[str, Any]:
        options = self.options(node)
        for option in options:
            if self.fits(option, value):
                return option
        return options[0]

    def child(self, node: dict[str, Any], key: str | int) -> Any:
        if isinstance(key, int):
            items = node.get("items")
            prefix = node.get("prefixItems")
            if isinstance(prefix, list) and key < len(prefix):
                return prefix[key]
            return items if isinstance(items, dict) else {}
        properties = node.get("properties", {})
        if key in properties:
            return properties[key]
        extra = node.get("additionalProperties")
        return extra if isinstance(extra, dict) else {}

    # -- fresh values --------------------------------------------------------------------

    def value(self, node: Any, depth: int) -> Any:
        if depth > 4 * _MAX_DEPTH:
            raise _TooDeep
        option = self.rng.choice(self.options(node))
        if "const" in option:
            return copy.deepcopy(option["const"])
        if "enum" in option:
            return copy.deepcopy(self.rng.choice(option["enum"]))
        if "default" in option and self.rng.random() < 0.2:
            return copy.deepcopy(option["default"])
        kind = option.get("type")
        if isinstance(kind, list):
            kind = self.rng.choice(kind)
        if kind == "object" or "properties" in option:
            return self.object(option, depth)
        if kind == "array":
            return self.array(option, depth)
        if kind == "string":
            return self.string(option)
        if kind in ("integer", "number"):
            return self.number(option, integral=kind == "integer")
        if kind == "boolean":
            return self.rng.random() < 0.5
        if kind == "null":
            return None
        return self.free_json(depth)

    def object(self, node: dict[str, Any], depth: int) -> dict[str, Any]:
        required = set(node.get("required", ()))
        result: dict[str, Any] = {}
        for key, child in node.get("properties", {}).items():
            tag = "const" in self.resolve(child)  # a union member's tag is always written
            if key in required or tag or (depth < _MAX_DEPTH and self.rng.random() < 0.35):
                result[key] = self.field(node, key, child, depth + 1)
        extra = node.get("additionalProperties")
        if isinstance(extra, dict) and depth < _MAX_DEPTH:
            for _ in range(self.rng.randint(0, 2)):
                result[self.key(node.get("propertyNames"))] = self.value(extra, depth + 1)
        elif extra is None and not node.get("properties") and depth < _MAX_DEPTH:
            for _ in range(self.rng.randint(0, 2)):
                result[self.key(None)] = self.free_json(depth + 1)
        return result

    def field(self, node: dict[str, Any], key: str, child: Any, depth: int) -> Any:
        hook = value_hook(str(node.get("title")), key)
        return hook(self.rng) if hook is not None else self.value(child, depth)

    def array(self, node: dict[str, Any], depth: int) -> list[Any]:
        prefix = node.get("prefixItems")
        if isinstance(prefix, list):
            return [self.value(item, depth + 1) for item in prefix]
        low = int(node.get("minItems", 0))
        high = min(int(node.get("maxItems", low + 3)), low + 3)
        if depth >= _MAX_DEPTH:
            high = low
        items = node.get("items", {})
        return [self.value(items, depth + 1) for _ in range(self.rng.randint(low, max(low, high)))]

    def string(self, node: dict[str, Any]) -> str:
        pattern = node.get("pattern")
        if pattern == "^sha256:[a-f0-9]{64}$":
            return "sha256:" + "".join(self.rng.choice(_HEX) for _ in range(64))
        if isinstance(pattern, str) and pattern.startswith("^SIG"):
            return "SIG" + self.rng.choice(("TERM", "KILL", "INT", "HUP"))
        if isinstance(pattern, str):
            drawn = _matching_text(pattern, self.rng)
            if drawn is not None:
                return drawn
        if node.get("format") == "date-time" or "datetime" in str(node.get("$comment")):
            return (
                f"20{self.rng.randint(20, 35)}-{self.rng.randint(1, 12):02d}-{self.rng.randint(1, 28):02d}"
                f"T{self.rng.randint(0, 23):02d}:{self.rng.randint(0, 59):02d}:{self.rng.randint(0, 59):02d}"
                + self.rng.choice(("Z", ".000Z", ".5Z", "+02:00"))
            )
        low = int(node.get("minLength", 0))
        high = min(int(node.get("maxLength", low + 16)), low + 16)
        size = self.rng.randint(max(low, 1), max(low, high, 1)) if self.rng.random() < 0.95 else low
        alphabet = _WORD if self.rng.random() < 0.7 else _TEXT
        text = "".join(self.rng.choice(alphabet) for _ in range(size))
        return text.strip() if len(text.strip()) >= low else text

    def number(self, node: dict[str, Any], *, integral: bool) -> int | float:
        low = node.get("minimum", node.get("ge"))
        high = node.get("maximum", node.get("le"))
        if "exclusiveMinimum" in node or "gt" in node:
            low = node.get("exclusiveMinimum", node.get("gt", 0)) + (1 if integral else 0.5)
        low = 0 if low is None else low
        high = low + 1000 if high is None else min(high, low + 1000)
        if integral:
            return self.rng.randint(int(low), int(max(low, high)))
        return round(self.rng.uniform(low, high), 3)

    def key(self, names: Any) -> str:
        node = self.resolve(names) if names else {}
        low = max(int(node.get("minLength", 1)), 1)
        high = max(min(int(node.get("maxLength", 8)), 8), low)
        return "".join(self.rng.choice(string.ascii_lowercase) for _ in range(self.rng.randint(low, high)))

    def free_json(self, depth: int) -> Any:
        roll = self.rng.random()
        if depth >= _MAX_DEPTH or roll < 0.5:
            return self.rng.choice((True, False, None, 0, 7, -3, 2.5, "", "text", "日本"))
        if roll < 0.75:
            return [self.free_json(depth + 1) for _ in range(self.rng.randint(0, 3))]
        return {self.key(None): self.free_json(depth + 1) for _ in range(self.rng.randint(0, 3))}

    # -- mutations of an accepted document -----------------------------------------------

    def positions(
        self, node: Any, value: Any, path: tuple[str | int, ...] = ()
    ) -> Iterator[tuple[tuple[str | int, ...], dict[str, Any], Any]]:
        option = self.matching(node, value)
        yield path, option, value
        if isinstance(value, dict):
            for key, item in value.items():
                yield from self.positions(self.child(option, key), item, (*path, key))
        elif isinstance(value, list):
            for index, item in enumerate(value):
                yield from self.positions(self.child(option, index), item, (*path, index))

    def mutate(self, document: Any, steps: int) -> Any:
        for _ in range(steps):
            places = list(self.positions(self.root, document))
            owners = {place: option for place, option, _ in places}
            path, option, value = self.rng.choice(places)
            roll = self.rng.random()
            if isinstance(value, dict) and roll < 0.4:
                self.reshape_object(option, value, len(path))
                continue
            if isinstance(value, list) and roll < 0.4 and value:
                del value[self.rng.randrange(len(value))]
                continue
            if not path:
                document = self.value(option, 0)
                continue
            parent = document
            for key in path[:-1]:
                parent = parent[key]
            owner = owners[path[:-1]]
            if isinstance(path[-1], str):
                parent[path[-1]] = self.field(owner, path[-1], option, len(path))
            else:
                parent[path[-1]] = self.value(option, len(path))
        return document

    def reshape_object(self, option: dict[str, Any], value: dict[str, Any], depth: int) -> None:
        required = set(option.get("required", ()))
        missing = [key for key in option.get("properties", {}) if key not in value]
        optional = [key for key in value if key not in required]
        if missing and (not optional or self.rng.random() < 0.6):
            key = self.rng.choice(missing)
            value[key] = self.field(option, key, option["properties"][key], depth + 1)
        elif optional:
            del value[self.rng.choice(optional)]
