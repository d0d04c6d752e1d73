"""The exported JSON Schemas carry the reference's regular expressions and names.

Every ``pattern`` zod 4.4.3's ``z.toJSONSchema`` writes for a reference export (recorded in
``tests/golden/zod-json-schema-patterns-1.6.0.json``) appears, with the same text, at the
same property of ``export_json_schema``, and no other pattern does, except the two
deliberate differences of ``docs/parity/json-schema.md``. Never-stricter is checked on
the golden documents by ``tests/cli/test_json_schema_never_stricter.py``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from agent_interface.core.contract_limits import (
    ZOD_ISO_DATETIME_PATTERN,
    ZOD_OFFSET_DATETIME_PATTERN,
)
from agent_interface.core.json_schema import export_json_schema
from agent_interface.core.registry import wire_schema_names, wire_schemas

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "zod-json-schema-patterns-1.6.0.json"
ZOD: dict[str, list[list[str]]] = json.loads(GOLDEN.read_text(encoding="utf-8"))["schemas"]

# zod's key encoding of AgentProfile records (the reference strips it from its own
# agentProfileJsonSchema): real keys do not match it.
ENCODED_RECORD_KEY = "^u(?:[0-9a-f]{4})*$"
# The reference trims these before matching: the bare pattern would refuse " kind ".
TRIMMED_BEFORE_MATCHING = {("kind", "^[a-z][a-z0-9-]*$")}


def patterns(document: dict[str, Any]) -> set[tuple[str, str]]:
    """(nearest property name, pattern) pairs of a JSON Schema, ``$ref`` resolved."""
    definitions = document.get("$defs", {})
    found: set[tuple[str, str]] = set()
    seen: set[tuple[str, str]] = set()

    def walk(node: Any, prop: str) -> None:
        if isinstance(node, list):
            for item in node:
                walk(item, prop)
            return
        if not isinstance(node, dict):
            return
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/") and (ref, prop) not in seen:
            seen.add((ref, prop))
            walk(definitions[ref[len("#/$defs/") :]], prop)
        if isinstance(node.get("pattern"), str):
            found.add((prop, node["pattern"]))
        for key, value in node.items():
            if key == "$defs":
                continue
            if key == "properties":
                for name, child in value.items():
                    walk(child, name)
            elif key in ("additionalProperties", "propertyNames"):
                walk(value, prop + "{}")
            else:
                walk(value, prop)

    walk(document, "")
    return found


SHARED = sorted(set(ZOD) & set(wire_schema_names()))


def test_the_recorded_schemas_are_registered() -> None:
    assert len(SHARED) == len(ZOD)


@pytest.mark.parametrize("name", SHARED)
def test_patterns_are_the_references_regular_expressions(name: str) -> None:
    expected = {
        (prop, pattern)
        for prop, pattern in ZOD[name]
        if pattern != ENCODED_RECORD_KEY and (prop, pattern) not in TRIMMED_BEFORE_MATCHING
    }
    assert patterns(export_json_schema(name)) == expected


def test_schemas_without_reference_patterns_carry_none_of_their_own() -> None:
    extra = {
        name: sorted(found)
        for name in wire_schema_names()
        if name not in ZOD and (found := patterns(export_json_schema(name)))
        # Schemas newer than the reference use the same expressions (datetimes, digests).
        and not {pattern for _, pattern in found}
        <= {pattern for pairs in ZOD.values() for _, pattern in pairs}
    }
    assert extra == {}


def _property_titles(node: Any) -> list[str]:
    if isinstance(node, list):
        return [title for item in node for title in _property_titles(item)]
    if not isinstance(node, dict):
        return []
    # A title pydantic derives from the property name; an inline model keeps its own.
    titles = [
        child["title"]
        for key, child in (node.get("properties") or {}).items()
        if isinstance(child, dict) and child.get("title") == key.title().replace("_", " ").strip()
    ]
    return titles + [title for value in node.values() for title in _property_titles(value)]


def test_titles_are_the_registered_names_and_properties_have_none() -> None:
    for name in wire_schemas():
        document = export_json_schema(name)
        assert document["title"] == name
        assert document["$id"].endswith(f":{name}")
        # pydantic's invented property titles ("Sessionid") are not written.
        assert _property_titles(document) == [], name


def test_bounds_use_the_json_schema_keywords() -> None:
    parts = export_json_schema("BackendMessage")["properties"]["parts"]
    assert parts["type"] == "array"
    assert parts["maxItems"] == 1024
    assert "maxLength" not in parts
    # A bound after a Python validator: pydantic would write "ge"/"le".
    text = json.dumps(export_json_schema("AgentCandidateBenchmarkSuiteInputs"))
    assert '"ge":' not in text and '"le":' not in text
    assert '"minimum": 1, "maximum": 67108864' in text or '"maximum": 67108864' in text


@pytest.mark.parametrize(
    ("pattern", "accepted", "refused"),
    [
        (
            ZOD_ISO_DATETIME_PATTERN,
            ["2026-08-01T20:00Z", "2024-02-29T23:59:59.123Z"],
            ["2026-02-29T00:00Z", "2026-08-01T20:00:00+02:00", "2026-08-01 20:00Z"],
        ),
        (
            ZOD_OFFSET_DATETIME_PATTERN,
            ["2026-08-01T20:00:00+02:00", "2026-08-01T20:00Z"],
            ["2026-08-01T20:00:00+24:00", "2026-13-01T20:00Z"],
        ),
    ],
)
def test_datetime_patterns_read_as_zod_reads_datetimes(
    pattern: str, accepted: list[str], refused: list[str]
) -> None:
    checker = Draft202012Validator({"type": "string", "pattern": pattern})
    for text in accepted:
        assert checker.is_valid(text), text
    for text in refused:
        assert not checker.is_valid(text), text


def test_the_exported_datetime_is_the_pattern_not_an_asserted_format() -> None:
    received = export_json_schema("RuntimeEventEnvelope")["properties"]["receivedAt"]
    assert received["pattern"] == ZOD_ISO_DATETIME_PATTERN
    assert "format" not in received
