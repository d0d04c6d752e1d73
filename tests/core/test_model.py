"""The wire-model base: aliases, strictness, optional-vs-null, immutability, errors."""

from __future__ import annotations

import copy
import json
from typing import Annotated, ClassVar, Literal

import pytest
from pydantic import Field, ValidationError

from agent_interface.core.errors import (
    ContractError,
    WireValidationError,
)
from agent_interface.core.model import (
    FrozenDict,
    JsonObject,
    JsonValue,
    WireInt,
    WireList,
    WireMap,
    WireModel,
    deep_freeze,
    thaw,
    wire_adapter,
)


class Leaf(WireModel):
    kind: Literal["leaf"]
    some_value: float
    note: str | None = None


class Branch(WireModel):
    kind: Literal["branch"]
    child_count: int


Node = Annotated[Leaf | Branch, Field(discriminator="kind")]


class Tree(WireModel):
    wire_nullable: ClassVar[frozenset[str]] = frozenset({"byte_size"})

    tree_id: str
    nodes: WireList[Node]
    byte_size: int | None
    labels: WireMap[str] | None = None
    extra_data: JsonObject | None = None
    anything: JsonValue = None
    enabled: bool = True


def tree_doc(**overrides: object) -> dict[str, object]:
    doc: dict[str, object] = {
        "treeId": "t1",
        "nodes": [{"kind": "leaf", "someValue": 1.5}, {"kind": "branch", "childCount": 2}],
        "byteSize": None,
    }
    doc.update(overrides)
    return doc


def test_wire_names_are_camel_case_and_python_names_snake_case() -> None:
    tree = Tree.parse_wire(tree_doc())
    assert tree.tree_id == "t1"
    assert isinstance(tree.nodes[1], Branch) and tree.nodes[1].child_count == 2
    assert tree.to_wire() == {
        "treeId": "t1",
        "nodes": [{"kind": "leaf", "someValue": 1.5}, {"kind": "branch", "childCount": 2}],
        "byteSize": None,
        "enabled": True,
    }


def test_constructor_accepts_python_and_wire_names() -> None:
    by_name = Tree(tree_id="t", nodes=[], byte_size=3)
    by_alias = Tree.model_validate({"treeId": "t", "nodes": [], "byteSize": 3})
    assert by_name == by_alias


def test_parse_wire_refuses_python_names() -> None:
    with pytest.raises(WireValidationError) as caught:
        Tree.parse_wire({"tree_id": "t", "nodes": [], "byteSize": 1})
    codes = {(issue.path, issue.code) for issue in caught.value.issues}
    assert ("/tree_id", "extra_forbidden") in codes
    assert ("/treeId", "missing") in codes


def test_bytes_and_str_are_validated_as_json() -> None:
    raw = json.dumps(tree_doc())
    assert Tree.parse_wire(raw) == Tree.parse_wire(raw.encode())


@pytest.mark.parametrize(
    ("doc", "path", "code"),
    [
        (tree_doc(extraField=1), "/extraField", "extra_forbidden"),
        (tree_doc(treeId=1), "/treeId", "string_type"),
        (tree_doc(enabled="true"), "/enabled", "bool_type"),
        (tree_doc(enabled=1), "/enabled", "bool_type"),
        (tree_doc(nodes=[{"kind": "leaf", "someValue": "1"}]), "/nodes/0/someValue", "float_type"),
        (tree_doc(nodes=[{"kind": "branch", "childCount": 1.5}]), "/nodes/0/childCount", "int_type"),
        (tree_doc(nodes=[{"kind": "leaf"}]), "/nodes/0/someValue", "missing"),
        (tree_doc(nodes=[{"kind": "twig"}]), "/nodes/0/kind", "union_tag_invalid"),
        (tree_doc(nodes=[{"kind": "leaf", "someValue": 1, "note": None}]), "/nodes/0/note", "null_not_allowed"),
        (tree_doc(labels=None), "/labels", "null_not_allowed"),
        (tree_doc(labels={"a": 1}), "/labels/a", "string_type"),
        (tree_doc(extraData=[1]), "/extraData", "json_object"),
    ],
)
def test_refusals_name_path_and_code(doc: dict[str, object], path: str, code: str) -> None:
    with pytest.raises(WireValidationError) as caught:
        Tree.parse_wire(doc)
    assert (path, code) in {(issue.path, issue.code) for issue in caught.value.issues}


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity"])
def test_json_nan_and_infinity_are_refused(token: str) -> None:
    raw = '{"treeId":"t","nodes":[{"kind":"leaf","someValue":TOKEN}],"byteSize":null}'
    raw = raw.replace("TOKEN", token)
    with pytest.raises(ContractError):
        Tree.parse_wire(raw)
    raw_any = '{"treeId":"t","nodes":[],"byteSize":null,"anything":[TOKEN]}'.replace("TOKEN", token)
    with pytest.raises(ContractError):
        Tree.parse_wire(raw_any)


def test_python_nan_is_refused_in_free_json() -> None:
    with pytest.raises(ContractError):
        Tree.parse_wire(tree_doc(anything={"x": float("nan")}))


def test_invalid_json_is_a_contract_error() -> None:
    with pytest.raises(ContractError) as caught:
        Tree.parse_wire(b"{not json")
    assert caught.value.issues[0].code == "json_invalid"


def test_nullable_field_keeps_null_and_optional_field_is_omitted() -> None:
    wire = Tree(tree_id="t", nodes=[], byte_size=None).to_wire()
    assert "byteSize" in wire and wire["byteSize"] is None
    assert "labels" not in wire and "extraData" not in wire


def test_instances_are_frozen_and_deeply_immutable() -> None:
    tree = Tree.parse_wire(tree_doc(labels={"a": "b"}, extraData={"x": [1, {"y": 2}]}))
    with pytest.raises(ValidationError):
        tree.tree_id = "other"  # type: ignore[misc]
    assert isinstance(tree.nodes, tuple)
    with pytest.raises(TypeError):
        tree.labels["a"] = "c"  # type: ignore[index]
    with pytest.raises(TypeError):
        tree.extra_data["x"] = 1
    assert isinstance(tree.extra_data["x"], tuple)


def test_input_containers_are_detached() -> None:
    labels = {"a": "b"}
    data = {"x": [1]}
    tree = Tree(tree_id="t", nodes=[], byte_size=None, labels=labels, extra_data=data)
    labels["a"] = "changed"
    data["x"].append(2)
    assert tree.labels == {"a": "b"}
    assert tree.extra_data == {"x": (1,)}


def test_round_trip_and_canonical_digest_are_stable() -> None:
    tree = Tree.parse_wire(tree_doc(extraData={"b": 1, "a": 2}))
    again = Tree.parse_wire(tree.to_wire_json())
    assert again == tree
    assert again.canonical_digest() == tree.canonical_digest()
    assert tree.canonical_bytes().startswith(b'{"byteSize":null,"enabled":true,"extraData":{"a":2')


def test_frozen_dict_behaviour() -> None:
    frozen = FrozenDict({"a": 1})
    for mutate in (
        lambda: frozen.__setitem__("b", 2),
        lambda: frozen.update(b=2),
        lambda: frozen.pop("a"),
        frozen.clear,
        lambda: frozen.setdefault("c", 3),
    ):
        with pytest.raises(TypeError):
            mutate()
    assert hash(frozen) == hash(FrozenDict({"a": 1}))
    assert copy.deepcopy(frozen) is frozen
    assert thaw(deep_freeze({"a": [1, {"b": 2}]})) == {"a": [1, {"b": 2}]}


def test_json_schema_marks_optional_fields_not_nullable() -> None:
    schema = Tree.model_json_schema()
    props = schema["properties"]
    assert props["labels"]["type"] == "object"
    assert "anyOf" in props["byteSize"]  # really nullable
    assert schema["additionalProperties"] is False
    assert set(schema["required"]) == {"treeId", "nodes", "byteSize"}


def test_wire_adapter_for_unions_is_cached_and_maps_paths() -> None:
    adapter = wire_adapter(Node)
    assert adapter is wire_adapter(Node)
    assert isinstance(adapter.parse(b'{"kind":"branch","childCount":1}'), Branch)
    with pytest.raises(WireValidationError) as caught:
        adapter.parse({"kind": "leaf", "someValue": 1, "stray": True})
    assert caught.value.issues[0].path == "/stray"


class Counted(WireModel):
    count: WireInt


@pytest.mark.parametrize("raw", [b'{"count":2}', b'{"count":2.0}', b'{"count":2e0}'])
def test_wire_int_reads_integral_numbers_like_zod(raw: bytes) -> None:
    parsed = Counted.parse_wire(raw)
    assert parsed.count == 2 and type(parsed.count) is int


@pytest.mark.parametrize("raw", [b'{"count":2.5}', b'{"count":"2"}', b'{"count":true}'])
def test_wire_int_refuses_fractions_strings_and_booleans(raw: bytes) -> None:
    with pytest.raises(WireValidationError) as caught:
        Counted.parse_wire(raw)
    assert caught.value.issues[0].path == "/count"


class Sent(WireModel):
    wire_nullable: ClassVar[frozenset[str]] = frozenset({"maybe"})

    maybe: int | None = None
    output: JsonValue = None


def test_nullable_optional_field_is_written_only_when_sent() -> None:
    assert Sent.parse_wire({}).to_wire() == {}
    assert Sent.parse_wire({"maybe": None}).to_wire() == {"maybe": None}
    assert Sent.parse_wire({"maybe": 3}).to_wire() == {"maybe": 3}


def test_optional_free_json_field_accepts_and_keeps_null() -> None:
    # zod ``boundedJsonSchema.optional()``: null is a JSON value, absent is absent.
    assert Sent.parse_wire({"output": None}).to_wire() == {"output": None}
    assert Sent.parse_wire({"output": [1]}).to_wire() == {"output": [1]}
    assert "output" not in Sent.parse_wire({}).to_wire()


def test_union_adapters_are_strict_too() -> None:
    flags = wire_adapter(Annotated[bool | str, "strict-check"])
    assert flags.parse(b"true") is True
    with pytest.raises(WireValidationError):
        wire_adapter(Annotated[dict[str, bool], "strict-check"]).parse({"a": 1})


def test_lone_surrogates_reach_the_digest_unaltered() -> None:
    tree = Tree(tree_id="t\ud800", nodes=[], byte_size=None)
    assert tree.to_wire()["treeId"] == "t\ud800"
    with pytest.raises(ContractError) as caught:
        tree.canonical_digest()
    assert caught.value.issues[0].code == "ill_formed_unicode"


def test_python_none_means_absent_but_wire_null_is_refused() -> None:
    leaf = Leaf(kind="leaf", some_value=1.0, note=None)
    assert leaf.to_wire() == {"kind": "leaf", "someValue": 1.0}
    assert Leaf.model_validate({"kind": "leaf", "someValue": 1, "note": None}).note is None
    with pytest.raises(WireValidationError) as caught:
        Leaf.parse_wire({"kind": "leaf", "someValue": 1, "note": None})
    assert caught.value.issues[0].code == "null_not_allowed"
