"""An unknown key at every object position of a valid document, for every registered schema:
the package's verdict and digest equal the reference's.

Where the reference builds an object with plain ``z.object`` the key is stripped (accepted,
left out of ``to_wire()`` and the digest); where it uses ``z.strictObject`` the document is
refused; records and passthrough objects keep the key. The verdicts were recorded by running
the reference 1.6.0 on exactly these documents (``tests/golden/reference-1.6.0-unknown-keys.jsonl.gz``:
per base document, one case per object position, ``at`` being its JSON Pointer).
"""

from __future__ import annotations

import copy
import gzip
import json
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_interface.core.canonical import canonical_digest
from agent_interface.core.errors import CanonicalJsonError, ContractError, json_pointer
from agent_interface.core.registry import wire_schemas

GOLDEN = Path(__file__).resolve().parent / "golden" / "reference-1.6.0-unknown-keys.jsonl.gz"
KEY, VALUE = "zzSweepUnknownKey", "x"


def _bases() -> dict[str, list[dict[str, Any]]]:
    by_schema: dict[str, list[dict[str, Any]]] = defaultdict(list)
    text = gzip.decompress(GOLDEN.read_bytes()).decode("utf-8")
    for line in text.split("\n"):
        if line:
            base = json.loads(line)
            by_schema[base["schema"]].append(base)
    return by_schema


BASES = _bases()
SCHEMAS = wire_schemas()
CHECKED = sorted(name for name in BASES if name in SCHEMAS)


def _objects(value: Any, path: tuple[str | int, ...] = ()) -> Iterator[tuple[str | int, ...]]:
    if isinstance(value, dict):
        yield path
        for key, item in value.items():
            yield from _objects(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _objects(item, (*path, index))


def _injected(document: Any, path: tuple[str | int, ...]) -> Any:
    copied = copy.deepcopy(document)
    node = copied
    for key in path:
        node = node[key]
    node[KEY] = VALUE
    return copied


def _verdict(name: str, value: Any) -> tuple[bool, str | None]:
    schema = SCHEMAS[name]
    try:
        parsed = schema.parse_value(value)
    except ContractError:
        return False, None
    try:
        return True, canonical_digest(schema.to_wire(parsed))
    except CanonicalJsonError:
        return True, None


def test_every_registered_schema_the_reference_exports_is_swept() -> None:
    # Registered schemas without a base document are either newer than the reference or
    # TypeScript-only types of the reference (no exported schema to ask).
    assert len(CHECKED) >= 100


@pytest.mark.parametrize("name", CHECKED)
def test_unknown_key_verdicts_agree_with_reference(name: str) -> None:
    disagreements = []
    for base in BASES[name]:
        recorded = {case["at"]: case for case in base["cases"]}
        positions = list(_objects(base["value"]))
        assert sorted(json_pointer(path) for path in positions) == sorted(recorded)
        for path in positions:
            case = recorded[json_pointer(path)]
            ok, digest = _verdict(name, _injected(base["value"], path))
            if (ok, digest if ok else None) != (case["ok"], case["digest"] if case["ok"] else None):
                disagreements.append((case["at"], case["ok"], ok))
    assert not disagreements, f"{len(disagreements)}: {disagreements[:8]}"


def test_a_stripped_key_leaves_wire_form_and_digest_alone() -> None:
    # The reference's continuation boundary is a plain z.object: the key is dropped.
    for base in BASES["AgentNativeContextContinuationResult"]:
        stripped = [case for case in base["cases"] if case["ok"] and case["digest"] == base["digest"]]
        for case in stripped:
            path = next(p for p in _objects(base["value"]) if json_pointer(p) == case["at"])
            schema = SCHEMAS["AgentNativeContextContinuationResult"]
            parsed = schema.parse_value(_injected(base["value"], path))
            assert KEY not in json.dumps(schema.to_wire(parsed))
            assert canonical_digest(schema.to_wire(parsed)) == base["digest"]
