"""A key repeated in one JSON object keeps its last value, as ``JSON.parse`` does: in model
fields, maps, free JSON and bounded JSON, at any depth, in small and large texts."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent_interface.core.bounded_validation import LARGE_TEXT
from agent_interface.core.errors import ContractError
from agent_interface.core.registry import wire_schema

PROFILE = wire_schema("AgentProfile")


def _wire(name: str, raw: bytes) -> Any:
    adapter = wire_schema(name)
    return adapter.to_wire(adapter.parse(raw))


def _refused(name: str, raw: bytes) -> bool:
    try:
        wire_schema(name).parse(raw)
    except ContractError:
        return True
    return False


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (b'{"name":1,"name":"last"}', {"name": "last"}),  # a model field
        (b'{"tools":{"_":null,"_":true}}', {"tools": {"_": True}}),  # a map (WireMap)
        (b'{"tools":{"a":"x","b":false,"a":true}}', {"tools": {"a": True, "b": False}}),
        (b'{"metadata":{"a":{"b":1,"b":2}}}', {"metadata": {"a": {"b": 2}}}),  # free JSON
        (b'{"tools":{"\\u0061":null,"a":true}}', {"tools": {"a": True}}),  # spelled two ways
        (  # a map inside a map inside an array, at depth
            b'{"hooks":{"h":[{"command":"x","env":{"A":1,"A":{"kind":"public","value":"v"}}}]}}',
            {"hooks": {"h": [{"command": "x", "env": {"A": {"kind": "public", "value": "v"}}}]}},
        ),
    ],
)
def test_the_last_value_of_a_repeated_key_wins(raw: bytes, expected: Any) -> None:
    assert _wire("AgentProfile", raw) == expected
    assert _wire("AgentProfile", raw.decode()) == expected


@pytest.mark.parametrize(
    "raw",
    [
        b'{"name":"first","name":1}',
        b'{"tools":{"_":true,"_":null}}',
        b'{"tools":{"a":true,"a":"x"}}',
    ],
)
def test_a_bad_last_value_is_refused(raw: bytes) -> None:
    assert _refused("AgentProfile", raw)


def test_bounded_json_keeps_the_last_value() -> None:
    raw = (
        b'{"type":"tool","id":"p","sessionID":"s","messageID":"m","callID":"c","tool":"t",'
        b'"state":{"status":"pending","input":{"a":[1,2],"a":{"ok":true}},"raw":"r"}}'
    )
    assert _wire("Part", raw)["state"]["input"] == {"a": {"ok": True}}


def test_a_large_text_keeps_the_last_value_too() -> None:
    tools = ",".join(f'"tool-{index:05d}":true' for index in range(6000))
    raw = ('{"tools":{"dup":null,' + tools + ',"dup":false}}').encode()
    assert len(raw) > LARGE_TEXT
    wire = _wire("AgentProfile", raw)
    assert wire["tools"]["dup"] is False and len(wire["tools"]) == 6001
    bad = ('{"tools":{"dup":false,' + tools + ',"dup":null}}').encode()
    assert _refused("AgentProfile", bad)


def test_text_and_value_agree() -> None:
    raw = b'{"tools":{"_":null,"_":true},"metadata":{"k":[1],"k":{"x":1}}}'
    assert _wire("AgentProfile", raw) == PROFILE.to_wire(PROFILE.parse_value(json.loads(raw)))
