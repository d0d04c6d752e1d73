"""Profile records refuse ill-formed Unicode keys on their own, not only inside AgentProfile."""

from __future__ import annotations

from typing import Any

import pytest

from agent_interface.core.errors import ContractError
from agent_interface.core.registry import wire_schema


@pytest.mark.parametrize(
    ("schema", "document"),
    [
        ("AgentSubagentProfile", {"tools": {"\ud800": True}}),
        ("AgentSubagentProfile", {"metadata": {"\ud800": 1}}),
        ("AgentProfileMode", {"permissions": {"\ud800": "allow"}}),
        ("AgentProfileMcpServer", {"command": "node", "metadata": {"\ud800": 1}}),
        ("AgentProfileModelHints", {"metadata": {"\ud800": 1}}),
        ("AgentProfileModelHintsBase", {"metadata": {"\ud800": 1}}),
        ("AgentProfilePermission", {"\ud800": "allow"}),
        ("AgentProfileDiff", {"kind": "agent-profile-diff", "metadata": {"\ud800": 1}}),
    ],
)
def test_ill_formed_record_keys_are_refused(schema: str, document: Any) -> None:
    with pytest.raises(ContractError):
        wire_schema(schema).parse_value(document)
    fixed = {
        key.replace("\ud800", "k") if isinstance(key, str) else key: value
        for key, value in document.items()
    }
    for key, value in fixed.items():
        if isinstance(value, dict):
            fixed[key] = {k.replace("\ud800", "k"): v for k, v in value.items()}
    wire_schema(schema).parse_value(fixed)


def test_nested_free_json_keys_are_not_checked_standalone() -> None:
    # As the reference: only the record's own keys are data keys of the contract.
    wire_schema("AgentSubagentProfile").parse_value({"metadata": {"a": {"\ud800": 1}}})
