"""Mapping a refusal onto its JSON Pointer costs time linear in the document, whatever
its keys repeat, and gives exactly the pointers the scoring rule defines."""

from __future__ import annotations

import random
from typing import Any

import pytest

from agent_interface.core import errors
from agent_interface.core.error_paths import _plain_path, document_path
from agent_interface.core.errors import ContractError
from agent_interface.core.registry import wire_schema
from tests.hardening.support import first_accepted, text, watchdog


def _chain(depth: int, key: str = "k", leaf: Any = None) -> Any:
    value: Any = {"k\udfff": 1} if leaf is None else leaf
    for _ in range(depth):
        value = {key: value}
    return value


def _refusal(name: str, document: Any, *, as_text: bool) -> ContractError:
    adapter = wire_schema(name)
    with pytest.raises(ContractError) as caught, watchdog(30):
        adapter.parse(text(document)) if as_text else adapter.parse_value(document)
    return caught.value


@pytest.mark.parametrize("as_text", [False, True])
@pytest.mark.parametrize("depth", [22, 60, 150])
def test_repeated_keys_in_free_json_map_in_linear_time(depth: int, as_text: bool) -> None:
    error = _refusal("AgentProfile", {"name": "p", "metadata": _chain(depth)}, as_text=as_text)
    assert [(issue.path, issue.code) for issue in error.issues] == [
        ("/metadata" + "/k" * depth, "ill_formed_unicode")
    ]


@pytest.mark.parametrize(
    ("name", "field"),
    [
        ("Capability", "definition"),
        ("AgentInstanceSpec", "profile"),
        ("AgentInteractiveSessionStart", "profile"),
    ],
)
def test_every_digest_bound_profile_field_maps_in_linear_time(name: str, field: str) -> None:
    document = first_accepted(name)
    inner = {"name": "p", "metadata": _chain(40)} if field == "profile" else _chain(40)
    document[field] = inner
    for as_text in (False, True):
        error = _refusal(name, document, as_text=as_text)
        assert error.issues and all(issue.path.startswith(f"/{field}") for issue in error.issues)


def test_many_deep_refusals_with_repeated_keys_map_in_linear_time() -> None:
    # 100 separate chains, each 150 deep, each refused at its bottom.
    metadata = {f"c{index}": _chain(150) for index in range(100)}
    error = _refusal("AgentProfile", {"metadata": metadata}, as_text=False)
    assert error.issue_count == 100
    assert {issue.path.split("/")[2] for issue in error.issues} == {f"c{i}" for i in range(100)}


def test_keys_that_are_also_tags_repeated_deep_map_in_linear_time() -> None:
    chain = _chain(120, key="tool", leaf={"type": "tool", "tool": {"k\udfff": 1}})
    error = _refusal("AgentProfile", {"metadata": chain}, as_text=False)
    assert error.issues[0].path.startswith("/metadata/tool/tool")


# -- the pointers are those of the scoring rule -----------------------------------------


def _exhaustive(parts: list[str | int], document: Any, absent_ok: bool, missing: bool) -> list[str | int]:
    """The scoring rule written as its definition: every reading tried (exponential)."""

    def has_child(node: Any, part: str | int) -> bool:
        if isinstance(node, dict):
            return isinstance(part, str) and part in node
        if isinstance(node, (list, tuple)):
            return isinstance(part, int) and 0 <= part < len(node)
        return False

    def is_tag(node: Any, part: str | int) -> bool:
        return isinstance(node, dict) and isinstance(part, str) and part in {
            value for value in node.values() if isinstance(value, str)
        }

    def walk(node: Any, index: int) -> tuple[int, list[str | int]]:
        if index == len(parts):
            return 0, []
        part = parts[index]
        skipped = walk(node, index + 1)
        if has_child(node, part):
            gain = 1 if is_tag(node, part) else 2
            score, rest = walk(node[part], index + 1)
            if score + gain > skipped[0]:
                return score + gain, [part, *rest]
        elif (
            absent_ok
            and index == len(parts) - 1
            and isinstance(node, dict)
            and skipped[0] < 1
            and (missing or errors._names_absent_key(node, part))
        ):
            return 1, [part]
        return skipped

    return walk(document, 0)[1]


_KEYS = ["a", "b", "tool", "text", "str", "Leaf", "k", "x", "function-after[f()]"]


def _document(rng: random.Random, depth: int) -> Any:
    roll = rng.random()
    if depth == 0 or roll < 0.25:
        return rng.choice([1, "a", "tool", "text", "k", None])
    if roll < 0.4:
        return [_document(rng, depth - 1) for _ in range(rng.randint(0, 3))]
    return {key: _document(rng, depth - 1) for key in rng.sample(_KEYS[:8], rng.randint(0, 4))}


def _real_location(rng: random.Random, document: Any) -> list[str | int]:
    parts: list[str | int] = []
    node = document
    while True:
        if isinstance(node, dict) and node:
            key = rng.choice(list(node))
            parts.append(key)
            node = node[key]
        elif isinstance(node, list) and node:
            index = rng.randrange(len(node))
            parts.append(index)
            node = node[index]
        else:
            break
        if rng.random() < 0.35:  # a union member or tag pydantic inserts
            parts.append(rng.choice(["tool", "k", "str", "Leaf", "a", 0]))
    if rng.random() < 0.5:
        parts.append(rng.choice(["zz", "k", "tool", "x\ufffd", "Leaf"]))
    return parts[:12]


def test_linear_mapping_gives_the_pointers_of_the_scoring_rule() -> None:
    rng = random.Random(22)
    for _ in range(6000):
        document = _document(rng, rng.randint(0, 6))
        if rng.random() < 0.5:
            parts = _real_location(rng, document)
        else:
            parts = [rng.choice([*_KEYS, 0, 1, 2]) for _ in range(rng.randint(0, 9))]
        absent_ok, missing = rng.random() < 0.6, rng.random() < 0.3
        expected = _exhaustive(parts, document, absent_ok, missing)
        found = document_path(
            parts, document, absent_ok=absent_ok, missing=missing,
            names_absent_key=errors._names_absent_key,
        )
        assert found == expected, (parts, document, absent_ok, missing)


def test_a_location_that_is_a_plain_path_is_taken_as_it_is() -> None:
    document = {"parts": [{"type": "note", "text": 1}]}
    parts: list[str | int] = ["parts", 0, "text"]
    assert _plain_path(parts, document)
    assert document_path(parts, document, absent_ok=False, missing=False,
                         names_absent_key=lambda node, key: False) == parts
    assert _exhaustive(parts, document, False, False) == parts


def test_a_part_that_is_also_a_tag_value_is_left_to_the_scoring_rule() -> None:
    # "text" is a key and the tag value of its object: the location may read it as either.
    document = {"parts": [{"type": "text", "text": {"text": 1}}]}
    parts: list[str | int] = ["parts", 0, "text", "text"]
    assert not _plain_path(parts, document)
    expected = _exhaustive(parts, document, True, True)
    assert document_path(parts, document, absent_ok=True, missing=True,
                         names_absent_key=lambda node, key: True) == expected
