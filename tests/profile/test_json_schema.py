"""agent_profile_json_schema: generated from the model; the reference's accepted profiles
validate against it."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from agent_interface import agent_profile_json_schema, define_agent_profile
from agent_interface.core.errors import ContractError
from agent_interface.profile.agent_profile import AgentProfile

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "reference-1.6.0-documents.jsonl.gz"


def _accepted_profiles() -> list[Any]:
    with gzip.open(GOLDEN, "rt", encoding="utf-8") as handle:
        cases = [json.loads(line) for line in handle]
    return [c["value"] for c in cases if c["schema"] == "AgentProfile" and c["ok"]]


ACCEPTED = _accepted_profiles()


def test_the_reference_accepted_profiles_validate() -> None:
    validator = jsonschema.Draft202012Validator(agent_profile_json_schema())
    assert len(ACCEPTED) >= 200
    failures = [doc for doc in ACCEPTED if not validator.is_valid(doc)]
    assert failures == []


def test_schema_is_strict_and_uses_wire_names() -> None:
    schema = agent_profile_json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    assert "$schema" not in schema
    assert schema["additionalProperties"] is False
    assert "seats" in schema["properties"]
    validator = jsonschema.Draft202012Validator(schema)
    assert not validator.is_valid({"unknown": 1})
    assert not validator.is_valid({"harness": "not-a-harness"})
    assert not validator.is_valid({"model": {"maxTotalOutputTokens": 0}})
    assert validator.is_valid({"model": {"reasoningEffort": "high"}, "tools": {"shell": True}})


def test_each_call_returns_a_fresh_copy() -> None:
    first = agent_profile_json_schema()
    first["properties"].clear()
    assert agent_profile_json_schema()["properties"]


def test_define_agent_profile_validates_at_the_definition() -> None:
    profile = define_agent_profile({"name": "p", "tools": {"shell": True}})
    assert isinstance(profile, AgentProfile) and define_agent_profile(profile) is profile
    with pytest.raises(ContractError):
        define_agent_profile({"harness": "nope"})
