"""The exported JSON Schema never refuses a document the reference accepts.

Every document the reference 1.6.0 accepted in the golden files (the conformance file,
the area parity files, the unknown-key sweep) is validated with ``jsonschema`` against
the schema ``agent-interface schema export`` writes for it. The exported schema may be
looser than the contract, never stricter.
"""

from __future__ import annotations

import copy
import gzip
import json
from collections import defaultdict
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from agent_interface.cli.main import main
from agent_interface.core.json_schema import export_json_schema
from agent_interface.core.registry import wire_schemas

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
SCHEMAS = wire_schemas()


def _accepted() -> dict[str, list[Any]]:
    found: dict[str, list[Any]] = defaultdict(list)
    with gzip.open(GOLDEN / "reference-1.6.0-documents.jsonl.gz", "rt", encoding="utf-8") as handle:
        for line in handle:
            case = json.loads(line)
            if case["ok"]:
                found[case["schema"]].append(case["value"])
    for path in sorted(GOLDEN.glob("*_parity.jsonl")):
        with path.open(encoding="utf-8") as handle:
            for line in handle:
                case = json.loads(line)
                if case.get("schema") and case.get("accepted") and "doc" in case:
                    found[case["schema"]].append(case["doc"])
    text = gzip.decompress((GOLDEN / "reference-1.6.0-unknown-keys.jsonl.gz").read_bytes()).decode("utf-8")
    for line in text.split("\n"):
        if not line:
            continue
        base = json.loads(line)
        for case in base["cases"]:
            if case["ok"]:
                found[base["schema"]].append(_injected(base["value"], case["at"]))
    return {name: documents for name, documents in found.items() if name in SCHEMAS}


def _injected(document: Any, pointer: str) -> Any:
    copied = copy.deepcopy(document)
    node = copied
    for token in pointer.split("/")[1:]:
        key = token.replace("~1", "/").replace("~0", "~")
        node = node[int(key)] if isinstance(node, list) else node[key]
    node["zzSweepUnknownKey"] = "x"
    return copied


ACCEPTED = _accepted()


@cache
def validator(name: str) -> Draft202012Validator:
    return Draft202012Validator(export_json_schema(name))


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_accepted_documents_validate_against_the_exported_schema(name: str) -> None:
    failures = []
    for document in ACCEPTED[name]:
        errors = list(validator(name).iter_errors(document))
        if errors:
            failures.append((json.dumps(document)[:120], errors[0].json_path, errors[0].message[:120]))
    assert not failures, f"{len(failures)} of {len(ACCEPTED[name])}: {failures[:3]}"


def test_the_cli_writes_the_exported_schema(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema", "export", str(tmp_path)]) == 0
    capsys.readouterr()
    for name in ("AgentProfile", "AgentNativeContextContinuationResult"):
        written = json.loads((tmp_path / f"{name}.schema.json").read_text(encoding="utf-8"))
        assert written == json.loads(json.dumps(export_json_schema(name)))


def test_the_export_never_uses_one_of_or_asserted_formats() -> None:
    # zod unions take the first member that parses (oneOf would refuse a document two
    # members accept); zod datetimes accept what RFC 3339 date-time refuses.
    for name in SCHEMAS:
        text = json.dumps(export_json_schema(name))
        assert '"oneOf"' not in text, name
        assert '"format": "date-time"' not in text, name


def test_a_datetime_without_seconds_validates() -> None:
    document = {"id": "m1", "role": "user", "parts": [{"type": "text", "text": "hi"}], "timestamp": "2026-08-01T20:00Z"}
    SCHEMAS["BackendMessage"].parse_value(document)
    checked = Draft202012Validator(export_json_schema("BackendMessage"), format_checker=Draft202012Validator.FORMAT_CHECKER)
    assert list(checked.iter_errors(document)) == []
