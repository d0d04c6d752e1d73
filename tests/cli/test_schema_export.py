"""Exported JSON Schemas are valid 2020-12 schemas and agree with the validators on examples."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from agent_interface.cli.main import main
from agent_interface.core.registry import wire_schemas

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_every_exported_schema_is_valid_json_schema(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema", "export", str(tmp_path)]) == 0
    capsys.readouterr()
    files = sorted(tmp_path.glob("*.schema.json"))
    assert len(files) == len(wire_schemas())
    for file in files:
        Draft202012Validator.check_schema(json.loads(file.read_text(encoding="utf-8")))


def test_accepted_examples_validate_against_their_exported_schema() -> None:
    schemas = wire_schemas()
    checked = 0
    for manifest in sorted(EXAMPLES.rglob("manifest.json")):
        for entry in json.loads(manifest.read_text(encoding="utf-8")):
            if entry.get("expect", "accepted") != "accepted":
                continue
            document = json.loads((manifest.parent / entry["file"]).read_text(encoding="utf-8"))
            validator = Draft202012Validator(schemas[entry["schema"]].json_schema())
            errors = [error.message for error in validator.iter_errors(document)]
            assert errors == [], f"{entry['file']}: {errors[:3]}"
            checked += 1
    assert checked > 0
