"""One nesting limit, 256 levels of arrays and objects in the document (the document is
level 1), whether it arrives as JSON text or as a parsed value, refused as ``too_deep``.

pydantic-core's JSON parser stops at 200 levels; deeper text up to the limit is read
again, so an accepted document's own JSON is accepted too, and every accepted document
digests (the canonicalizer's limit is the same 256 levels).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent_interface.core.canonical import MAX_CANONICAL_DEPTH, canonical_digest
from agent_interface.core.errors import ContractError
from agent_interface.core.json_text import MAX_DOCUMENT_DEPTH, nesting_depth
from agent_interface.core.registry import wire_schema
from tests.hardening.support import watchdog

PROFILE = wire_schema("AgentProfile")


def _nested(levels: int) -> Any:
    value: Any = 1
    for index in range(levels):
        value = [value] if index % 2 else {"k": value}
    return value


def _nested_text(levels: int) -> str:
    # The JSON text of ``_nested(levels)``, built without recursion.
    opening = ["[" if index % 2 else '{"k":' for index in reversed(range(levels))]
    closing = ["]" if index % 2 else "}" for index in range(levels)]
    return "".join(opening) + "1" + "".join(closing)


def _profile(document_levels: int) -> tuple[Any, bytes]:
    # The profile object and its metadata object are two levels: the rest is free JSON.
    document = {"metadata": {"x": _nested(document_levels - 2)}}
    return document, ('{"metadata":{"x":' + _nested_text(document_levels - 2) + "}}").encode()


def _outcome(call: Any) -> tuple[bool, tuple[tuple[str, str], ...]]:
    try:
        with watchdog(60):
            call()
    except ContractError as error:
        return False, tuple((issue.path, issue.code) for issue in error.issues)
    return True, ()


def test_the_limit_is_the_canonicalizer_s() -> None:
    assert MAX_DOCUMENT_DEPTH == MAX_CANONICAL_DEPTH == 256


@pytest.mark.parametrize("levels", [150, 199, 200, 201, 202, 230, 255, 256])
def test_text_and_value_accept_the_same_document_up_to_the_limit(levels: int) -> None:
    document, raw = _profile(levels)
    assert nesting_depth(raw) == levels
    from_text = PROFILE.parse(raw)
    from_value = PROFILE.parse_value(document)
    assert from_text == from_value
    wire = PROFILE.to_wire(from_value)
    canonical_digest(wire)  # an accepted document digests
    assert PROFILE.parse(json.dumps(wire).encode()) == from_value  # and its own JSON is accepted


@pytest.mark.parametrize("levels", [257, 258, 300, 1_000, 5_000, 100_000])
def test_text_and_value_refuse_deeper_documents_as_too_deep(levels: int) -> None:
    document, raw = _profile(levels)
    refused = (False, (("", "too_deep"),))
    assert _outcome(lambda: PROFILE.parse(raw)) == refused
    assert _outcome(lambda: PROFILE.parse(raw.decode())) == refused
    assert _outcome(lambda: PROFILE.parse_value(document)) == refused


@pytest.mark.parametrize(
    ("name", "base", "field"),
    [("AgentTurnInput", {"prompt": "x"}, "signal"), ("AgentProfile", {"name": "p"}, "metadata")],
)
def test_every_free_json_field_meets_the_same_limit(name: str, base: Any, field: str) -> None:
    adapter = wire_schema(name)
    for levels, accepted in ((240, True), (300, False)):
        document = {**base, field: {"x": _nested(levels)}}
        raw = json.dumps(document).encode()
        assert _outcome(lambda raw=raw: adapter.parse(raw))[0] is accepted
        assert _outcome(lambda document=document: adapter.parse_value(document))[0] is accepted


def test_a_too_deep_document_is_too_deep_whatever_else_it_breaks() -> None:
    document = {"tags": 5, "extensions": {"x": _nested(400)}, "unknown": 1}
    raw = ('{"tags":5,"extensions":{"x":' + _nested_text(400) + '},"unknown":1}').encode()
    refused = (False, (("", "too_deep"),))
    assert _outcome(lambda: PROFILE.parse(raw)) == refused
    assert _outcome(lambda: PROFILE.parse_value(document)) == refused


def test_a_value_that_contains_itself_is_too_deep_not_a_crash() -> None:
    looped: dict[str, Any] = {}
    looped["x"] = looped
    assert _outcome(lambda: PROFILE.parse_value({"metadata": looped})) == (False, (("", "too_deep"),))


def test_invalid_text_stays_invalid_json() -> None:
    for raw in (b"[" * 50, b'{"metadata":' + b"[" * 250 + b"1" + b"]" * 249 + b"}", b"{,}"):
        outcome = _outcome(lambda raw=raw: PROFILE.parse(raw))
        assert outcome == (False, (("", "json_invalid"),))
