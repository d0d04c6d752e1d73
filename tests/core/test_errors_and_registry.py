"""ContractError shape, pydantic conversion, and the schema registry."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ValidationError

from agent_interface.core.errors import (
    ContractError,
    ContractIssue,
    contract_error_from_validation,
    json_pointer,
)
from agent_interface.core.registry import (
    register_wire_models,
    wire_schema,
    wire_schemas,
)


def test_json_pointer_escaping() -> None:
    assert json_pointer([]) == ""
    assert json_pointer(["a/b", 0, "c~d"]) == "/a~1b/0/c~0d"


def test_contract_error_is_a_value_error_listing_issues() -> None:
    error = ContractError([ContractIssue("/a", "rule", "broken"), ContractIssue("", "r2", "m2")])
    assert isinstance(error, ValueError)
    assert "/a: broken [rule]" in str(error)
    assert "/: m2 [r2]" in str(error)
    with pytest.raises(TypeError):
        ContractError([])


def test_validation_errors_never_echo_inputs() -> None:
    class Secretive(BaseModel):
        pin: int

    try:
        Secretive.model_validate({"pin": "hunter2-secret"})
    except ValidationError as exc:
        converted = contract_error_from_validation(exc)
    assert "hunter2" not in str(converted)
    assert "hunter2" not in repr(converted.issues)
    assert converted.issues[0].path == "/pin"


def test_registry_lists_foundation_schemas() -> None:
    names = set(wire_schemas())
    assert {"InputPart", "Part", "BackendMessage"} <= names


def test_registry_refuses_a_name_claimed_by_two_modules() -> None:
    with pytest.raises(ValueError, match="registered by"):
        register_wire_models(BackendMessage=int)


def test_unknown_schema_name_suggests_close_names() -> None:
    with pytest.raises(KeyError, match="InputPart"):
        wire_schema("inputpart")


def test_every_registered_schema_exports_json_schema() -> None:
    for name, schema in wire_schemas().items():
        document = schema.json_schema()
        assert isinstance(document, dict) and document, name
