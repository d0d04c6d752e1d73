"""One code and one message per rule, whether a document arrives as JSON bytes or as a dict."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest

from agent_interface.core.errors import ContractError
from agent_interface.core.registry import wire_schema, wire_schemas
from agent_interface.testing.seeds import seed_documents

WRONG_VALUES: tuple[Any, ...] = (None, 1.5, "s", ["s"], {"k": "s"})
MAX_POSITIONS = 60
SCHEMAS = [name for name in wire_schemas() if seed_documents(name)]


def _issues(parse: Any, value: Any) -> list[tuple[str, str, str]] | None:
    try:
        parse(value)
    except ContractError as error:
        return [(issue.path, issue.code, issue.message) for issue in error.issues]
    return None


def _positions(value: Any, path: tuple[str | int, ...] = ()) -> Iterator[tuple[str | int, ...]]:
    yield path
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        yield from _positions(item, (*path, key))


def _replaced(document: Any, path: tuple[str | int, ...], new: Any) -> Any:
    if not path:
        return new
    copied = copy.deepcopy(document)
    node = copied
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = new
    return copied


@pytest.mark.parametrize("name", SCHEMAS)
def test_wrong_types_report_alike_from_bytes_and_dicts(name: str) -> None:
    schema = wire_schema(name)
    document = seed_documents(name)[0]
    differences = []
    for index, path in enumerate(_positions(document)):
        if index >= MAX_POSITIONS:
            break
        for wrong in WRONG_VALUES:
            mutated = _replaced(document, path, wrong)
            from_bytes = _issues(schema.parse, json.dumps(mutated).encode("utf-8"))
            from_dict = _issues(schema.parse_value, mutated)
            if from_bytes != from_dict:
                differences.append((path, wrong, from_bytes, from_dict))
    assert not differences, differences[:3]


@pytest.mark.parametrize(
    ("name", "value", "code", "message"),
    [
        ("AgentProfile", [], "model_type", "Input should be an object"),
        ("RequestedInteractions", "s", "dict_type", "Input should be an object"),
        ("WorkspaceForkResult", ["s"], "dict_type", "Input should be an object"),
    ],
)
def test_an_object_rule_has_one_wording(name: str, value: Any, code: str, message: str) -> None:
    schema = wire_schema(name)
    for parse, form in ((schema.parse, json.dumps(value)), (schema.parse_value, value)):
        with pytest.raises(ContractError) as caught:
            parse(form)
        assert (caught.value.issues[0].code, caught.value.issues[0].message) == (code, message)


def test_an_array_rule_has_one_wording() -> None:
    schema = wire_schema("ContextTransferResult")
    document = seed_documents("ContextTransferResult")[0]
    document["omittedMessageIds"] = {"k": "s"}
    for parse, form in ((schema.parse, json.dumps(document)), (schema.parse_value, document)):
        with pytest.raises(ContractError) as caught:
            parse(form)
        issue = caught.value.issues[0]
        assert (issue.path, issue.code, issue.message) == (
            "/omittedMessageIds", "tuple_type", "Input should be an array"
        )


def test_parse_value_reads_a_bare_string_as_a_value_not_json_text() -> None:
    with pytest.raises(ContractError) as caught:
        wire_schema("AgentProfile").parse_value("not json")
    assert caught.value.issues[0].code == "model_type"


def _conformance_lines() -> list[dict[str, Any]]:
    import gzip
    from pathlib import Path

    golden = Path(__file__).resolve().parents[1] / "golden" / "reference-1.6.0-documents.jsonl.gz"
    with gzip.open(golden, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def test_json_text_and_parsed_values_get_the_reference_verdict() -> None:
    # JSON text is written with ASCII escapes, so lone surrogates travel as \\uD800 escapes,
    # which JSON.parse (and so the reference) reads as strings.
    schemas = wire_schemas()
    differences = []
    for case in _conformance_lines():
        if case["schema"] not in schemas:
            continue
        schema = schemas[case["schema"]]
        text = json.dumps(case["value"])
        for form, parse, value in (("text", schema.parse, text), ("value", schema.parse_value, case["value"])):
            if (_issues(parse, value) is None) != case["ok"]:
                differences.append((case["schema"], form, text[:80]))
    assert not differences, differences[:5]


def test_a_lone_surrogate_escape_is_read_as_json_parse_reads_it() -> None:
    schema = wire_schema("AgentProfile")
    assert schema.parse(b'{"name": "a\\ud800b"}').name == "a\ud800b"
    assert schema.parse('{"name": "a\\udfffb"}').name == "a\udfffb"
    assert _issues(schema.parse, b'{"name": "a\\ud800b",}') == [("", "json_invalid", "input is not valid JSON")]
    assert _issues(schema.parse, b'{"name": NaN, "x": "\\ud800"}') is not None
