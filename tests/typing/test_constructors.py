"""The typed constructor spelling: snake_case attribute names, wire names only by alias generator.

``constructors.py`` beside this file is what the type checkers read (see its docstring);
these tests run it and keep it complete.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path

import pytest
from pydantic.alias_generators import to_camel

import agent_interface
from agent_interface.core.model import WireModel, wire_names

from . import constructors

TYPING_MODULE = Path(constructors.__file__)


def _all_wire_models() -> list[type[WireModel]]:
    for info in pkgutil.walk_packages(agent_interface.__path__, "agent_interface."):
        if not info.name.endswith("__main__"):
            importlib.import_module(info.name)
    seen: list[type[WireModel]] = []
    stack: list[type[WireModel]] = [WireModel]
    while stack:
        for sub in stack.pop().__subclasses__():
            if sub not in seen:
                seen.append(sub)
                stack.append(sub)
    return seen


def _constructed_keywords() -> dict[str, set[str]]:
    """Class name -> keywords it is called with in ``constructors.py``."""
    calls: dict[str, set[str]] = {}
    for node in ast.walk(ast.parse(TYPING_MODULE.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            keywords = calls.setdefault(node.func.id, set())
            keywords.update(keyword.arg for keyword in node.keywords if keyword.arg)
    return calls


def _renamed_fields() -> dict[str, set[str]]:
    """Public class name -> attributes whose wire name is not their camelCase."""
    renamed: dict[str, set[str]] = {}
    for model in _all_wire_models():
        if model.__name__.startswith("_"):
            continue
        for name, field in model.model_fields.items():
            if field.alias != to_camel(name):
                renamed.setdefault(model.__name__, set()).add(name)
    return renamed


def test_every_renamed_field_is_constructed_by_its_attribute_name() -> None:
    renamed = _renamed_fields()
    # The list is generated: the reference's irregular wire names known today.
    assert {"TextPart", "ToolPart", "SessionCapabilities", "AgentProfileMeasurements"} <= set(renamed)
    calls = _constructed_keywords()
    missing = {
        (model, name)
        for model, names in renamed.items()
        for name in names
        if name not in calls.get(model, set())
    }
    assert not missing, f"add these constructions to {TYPING_MODULE.name}: {sorted(missing)}"


def test_the_typing_module_imports_declared_names_only() -> None:
    # The root's __getattr__ would type an undeclared name as Any, which checks nothing.
    tree = ast.parse(TYPING_MODULE.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("agent_interface"):
            module = importlib.import_module(node.module)
            declared = set(getattr(module, "__all__", ())) | {
                name for name, value in vars(module).items() if isinstance(value, type)
            }
            if node.module == "agent_interface":
                declared = set(agent_interface.__all__)
            for alias in node.names:
                assert alias.name in declared, f"{alias.name} is not declared by {node.module}"


def test_wire_names_come_from_the_alias_generator_only() -> None:
    # Field(alias=...) (or validation_alias/serialization_alias) would make type checkers
    # type the constructor with the wire name: wire names are given with wire_names().
    explicit = [
        f"{model.__module__}.{model.__qualname__}.{name}"
        for model in _all_wire_models()
        for name, field in model.model_fields.items()
        if field.alias_priority != 1
        or not (field.alias == field.validation_alias == field.serialization_alias)
    ]
    assert explicit == []


def test_the_constructions_keep_their_wire_names() -> None:
    assert constructors.text_part.to_wire() == {
        "id": "p1",
        "sessionID": "s1",
        "messageID": "m1",
        "type": "text",
        "text": "hello",
    }
    assert constructors.tool_part.to_wire()["callID"] == "c1"
    assert constructors.session_capabilities.to_wire() == {
        "continue": True,
        "list": True,
        "messages": False,
    }
    assert constructors.measurements.to_wire()["canonicalBytes"] == 2
    assert constructors.provenance.to_wire()["schema"] == "agent-eval-loop/v1"
    assert constructors.turn_input.to_wire()["sessionId"] == "s1"
    # At run time the wire spelling is accepted too; only type checkers refuse it.
    assert constructors.wire_text_part == constructors.text_part
    assert constructors.wire_turn_input.session_id == "s1"
    assert constructors.wire_measured.canonical_byte_count == 2


@pytest.mark.parametrize(
    ("document", "by_attribute", "model"),
    [
        (
            {"id": "p", "sessionID": "s", "messageID": "m", "type": "text", "text": "t"},
            {"id": "p", "session_id": "s", "message_id": "m", "type": "text", "text": "t"},
            "TextPart",
        ),
        (
            {"continue": True, "list": False, "messages": True},
            {"continue_": True, "list": False, "messages": True},
            "SessionCapabilities",
        ),
    ],
)
def test_parse_wire_reads_wire_names_only(
    document: dict[str, object], by_attribute: dict[str, object], model: str
) -> None:
    cls = getattr(agent_interface, model)
    assert cls.parse_wire(document).to_wire() == document
    assert cls(**by_attribute) == cls.parse_wire(document)
    with pytest.raises(agent_interface.ContractError):
        cls.parse_wire(by_attribute)


def test_wire_names_maps_the_named_attributes_and_camel_cases_the_rest() -> None:
    alias = wire_names(session_id="sessionID")
    assert alias("session_id") == "sessionID"
    assert alias("message_id") == "messageId"
