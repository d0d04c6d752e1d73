"""JSON Schema (Draft 2020-12) of a registered wire schema, as ``schema export`` writes it.

An exported schema may be looser than the contract (refinements such as digests and
cross-field rules cannot all be expressed) but never stricter: every document the
reference accepts validates against it. So ``oneOf`` is written as ``anyOf`` (a zod union
takes the first member that parses, so a document two members accept is valid), and
``"format": "date-time"`` becomes a comment: zod's datetimes accept ``2026-08-01T20:00Z``
(no seconds), which a validator asserting RFC 3339 ``date-time`` would refuse.
"""

from __future__ import annotations

from typing import Any

from agent_interface.core.registry import wire_schema

__all__ = ["DRAFT_2020_12", "export_json_schema", "never_stricter"]

DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"


_DATETIME_COMMENT = "ISO 8601 datetime as zod 4.4.3 z.iso.datetime() reads it (seconds optional)"


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
    document: dict[str, Any] = never_stricter(
        {
            "$schema": DRAFT_2020_12,
            "$id": f"urn:tangle:agent-interface:{name}",
            **wire_schema(name).json_schema(),
        }
    )
    return document
