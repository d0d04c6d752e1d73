"""The record-key Unicode walk: Python input only, nested profiles included."""

from __future__ import annotations

from typing import Any

import pytest

from agent_interface.core.errors import ContractError
from agent_interface.core.registry import wire_schema

_BAD = "\ud800"


@pytest.mark.parametrize(
    ("schema", "document", "path"),
    [
        ("AgentProfile", {"tools": {_BAD: True}}, "/tools"),
        ("AgentProfile", {"metadata": {"a": [{"b": {_BAD: 1}}]}}, "/metadata/a/0/b"),
        ("Capability", {"id": "c", "definition": {"permissions": {_BAD: "allow"}}}, "/definition/permissions"),
    ],
)
def test_ill_formed_keys_from_python_input(schema: str, document: dict[str, Any], path: str) -> None:
    with pytest.raises(ContractError) as caught:
        wire_schema(schema).parse_value(document)
    assert [(issue.path, issue.code) for issue in caught.value.issues] == [(path, "ill_formed_unicode")]


def test_json_text_with_a_lone_surrogate_key_is_refused_like_python_input() -> None:
    # JSON.parse reads the escape (core.json_text re-reads such text as zod's input does);
    # the profile then refuses the ill-formed key at its record, as for Python input.
    with pytest.raises(ContractError) as caught:
        wire_schema("AgentProfile").parse(b'{"tools": {"\\ud800": true}}')
    assert [(issue.path, issue.code) for issue in caught.value.issues] == [
        ("/tools", "ill_formed_unicode")
    ]


def test_json_text_profiles_validate_on_the_json_branch() -> None:
    profile = wire_schema("Capability").parse(
        b'{"id": "c", "definition": {"tools": {"\xf0\x9f\x98\x80": true}, "metadata": {"k": [1]}}}'
    )
    assert dict(profile.definition.tools) == {"\U0001f600": True}
