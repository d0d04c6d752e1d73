"""JSON Schema (Draft 2020-12) of a registered wire schema, as ``schema export`` writes it.

An exported schema may be looser than the contract (refinements such as digests and
cross-field rules cannot all be expressed) but never stricter: every document the
reference accepts validates against it. So ``oneOf`` is written as ``anyOf`` (a zod union
takes the first member that parses, so a document two members accept is valid), and
``"format": "date-time"`` becomes a comment: zod's datetimes accept ``2026-08-01T20:00Z``
(no seconds), which a validator asserting RFC 3339 ``date-time`` would refuse.

Where the reference checks a string with a regular expression, the exported ``pattern``
is that expression exactly as zod's ``z.toJSONSchema`` writes it (datetimes, identifiers,
names): :class:`JsonSchemaPattern` puts it on a type whose Python check is written
differently. The document's ``title`` is the registered (reference) name; pydantic's
generated property titles (``"Sessionid"``) are left out. ``docs/parity/json-schema.md``
lists what still differs from zod's output.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from agent_interface.core.registry import export_name, wire_schema

__all__ = ["DRAFT_2020_12", "JsonSchemaPattern", "export_json_schema", "never_stricter"]

DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"


_DATETIME_COMMENT = "ISO 8601 datetime as zod 4.4.3 z.iso.datetime() reads it (seconds optional)"


@dataclass(frozen=True, slots=True)
class JsonSchemaPattern:
    """The ``pattern`` a string type carries in JSON Schema: the reference's regular
    expression as zod writes it, where the Python check is spelled differently (a
    pydantic-core regex, ASCII classes, a Python function). With ``keys=True`` it is the
    pattern of an object's keys (``propertyNames``). Validation is unchanged."""

    pattern: str
    keys: bool = False

    def __get_pydantic_json_schema__(
        self, schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        json_schema = handler(schema)
        target = handler.resolve_ref_schema(json_schema)
        if self.keys:
            target["propertyNames"] = {"type": "string", "pattern": self.pattern}
        else:
            target["pattern"] = self.pattern
        return json_schema


# pydantic writes a bound it could not place on the inner schema (a bound after a Python
# validator) under its own name, and an array's length bounds as string bounds.
_NUMBER_BOUNDS = {"ge": "minimum", "le": "maximum", "gt": "exclusiveMinimum", "lt": "exclusiveMaximum"}
_ARRAY_BOUNDS = {"maxLength": "maxItems", "minLength": "minItems"}


def _reference_keywords(node: Any) -> Any:
    """``node`` in the keywords zod writes: number and array bounds under their JSON
    Schema names, and without the titles pydantic derives from property names
    (``"Sessionid"`` for ``sessionID``); a model's own title stays."""
    if isinstance(node, list):
        return [_reference_keywords(item) for item in node]
    if not isinstance(node, dict):
        return node
    cleaned = {key: _reference_keywords(item) for key, item in node.items()}
    if cleaned.get("type") in ("integer", "number"):
        for name, keyword in _NUMBER_BOUNDS.items():
            if name in cleaned:
                cleaned.setdefault(keyword, cleaned.pop(name))
    if cleaned.get("type") == "array":
        for name, keyword in _ARRAY_BOUNDS.items():
            if name in cleaned:
                cleaned.setdefault(keyword, cleaned.pop(name))
    properties = cleaned.get("properties")
    if isinstance(properties, dict):
        for key, child in properties.items():
            if isinstance(child, dict) and child.get("title") == _derived_title(key):
                del child["title"]
    return cleaned


def _derived_title(name: str) -> str:
    # pydantic's GenerateJsonSchema.get_title_from_name
    return name.title().replace("_", " ").strip()


def never_stricter(node: Any) -> Any:
    """``node`` with every ``oneOf`` written as ``anyOf`` and ``date-time`` formats as comments."""
    if isinstance(node, dict):
        loosened = {("anyOf" if key == "oneOf" else key): never_stricter(item) for key, item in node.items()}
        if loosened.get("format") == "date-time":
            del loosened["format"]
            loosened["$comment"] = _DATETIME_COMMENT
        return loosened
    if isinstance(node, list):
        return [never_stricter(item) for item in node]
    return node


def export_json_schema(name: str) -> dict[str, Any]:
    """The exported JSON Schema document of the schema registered as ``name``."""
    generated = _reference_keywords(wire_schema(name).json_schema())
    document: dict[str, Any] = never_stricter(
        {
            "$schema": DRAFT_2020_12,
            "$id": f"urn:tangle:agent-interface:{export_name(name)}",
            **generated,
            "title": export_name(name),
        }
    )
    return document
