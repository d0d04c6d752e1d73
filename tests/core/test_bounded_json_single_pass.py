"""The one-walk bounded-JSON check (validation of BoundedJson) agrees with the
reference-shaped check (``is_bounded_json_value``) and freezes exactly like deep_freeze."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic_core import PydanticCustomError

from agent_interface.core.contract_limits import (
    CONTRACT_MAX_ARRAY_LENGTH,
    CONTRACT_MAX_IDENTIFIER_LENGTH,
    CONTRACT_MAX_JSON_DEPTH,
    CONTRACT_MAX_JSON_NODES,
    CONTRACT_MAX_MAP_ENTRIES,
    CONTRACT_MAX_STRING_LENGTH,
    _check_bounded,
    is_bounded_json_value,
)
from agent_interface.core.model import deep_freeze


def _verdict(value: Any) -> tuple[bool, Any]:
    try:
        return True, _check_bounded(value)
    except PydanticCustomError as error:
        assert error.type == "bounded_json"
        return False, None


def _agrees(value: Any) -> None:
    ok, frozen = _verdict(value)
    assert ok is is_bounded_json_value(value)
    if ok:
        assert frozen == deep_freeze(value)
        assert type(frozen) is type(deep_freeze(value))


def _nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


_EMOJI = "\U0001f600"


@pytest.mark.parametrize(
    "value",
    [
        _nested(CONTRACT_MAX_JSON_DEPTH),
        _nested(CONTRACT_MAX_JSON_DEPTH + 1),
        [0] * CONTRACT_MAX_ARRAY_LENGTH,
        [0] * (CONTRACT_MAX_ARRAY_LENGTH + 1),
        {str(i): i for i in range(CONTRACT_MAX_MAP_ENTRIES)},
        {str(i): i for i in range(CONTRACT_MAX_MAP_ENTRIES + 1)},
        {_EMOJI * (CONTRACT_MAX_IDENTIFIER_LENGTH // 2): 1},
        {_EMOJI * (CONTRACT_MAX_IDENTIFIER_LENGTH // 2) + "a": 1},
        _EMOJI * (CONTRACT_MAX_STRING_LENGTH // 2),
        [_EMOJI * (CONTRACT_MAX_STRING_LENGTH // 2) + "a"],
        # Node budget: each array counts twice, each member once.
        [[0] * 1000 for _ in range(8)],
        [[0] * 1022 for _ in range(8)],
        [[[0] * 1000] for _ in range(CONTRACT_MAX_JSON_NODES // 1000)],
        {"a": float("nan")},
        [float("inf")],
        {1: "a"},
        {"a": {1, 2}},
        ("a", (1, 2.5), {"b": None}),
        True,
        None,
        "text",
    ],
)
def test_bounds_at_the_edges(value: Any) -> None:
    _agrees(value)


_JSON = st.recursive(
    st.one_of(
        st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True),
        st.text(max_size=4),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(inner, max_size=4).map(tuple),
        st.dictionaries(st.text(max_size=3), inner, max_size=4),
    ),
    max_leaves=40,
)


@settings(max_examples=400, deadline=None)
@given(_JSON)
def test_one_walk_agrees_with_the_reference_check(value: Any) -> None:
    _agrees(value)


_TEXT = st.text(
    st.one_of(
        st.sampled_from([" ", "\t", "\u00a0", "\u3000", "\ufeff", "\U0001f600", "\ud800", "a"]),
        st.characters(exclude_categories=()),
    ),
    max_size=12,
)


@settings(max_examples=400, deadline=None)
@given(_TEXT)
def test_utf16_length_counts_code_units_like_javascript(text: str) -> None:
    from agent_interface.core.contract_limits import utf16_length

    assert utf16_length(text) == sum(2 if ord(char) > 0xFFFF else 1 for char in text)


@settings(max_examples=400, deadline=None)
@given(st.one_of(_TEXT, st.text(max_size=3).map(lambda t: t + "\U0001f600" * 255)))
def test_identifier_rule_in_one_call(text: str) -> None:
    from agent_interface.core.contract_limits import BoundedIdentifier, js_trim, utf16_length
    from agent_interface.core.model import wire_adapter

    expected = 1 <= utf16_length(text) <= CONTRACT_MAX_IDENTIFIER_LENGTH and js_trim(text) == text
    try:
        wire_adapter(BoundedIdentifier, "BoundedIdentifier").parse_value(text)
    except ValueError:
        accepted = False
    else:
        accepted = True
    assert accepted is expected


_DATETIME_TEXT = st.one_of(
    st.text(st.sampled_from("0123456789-T:.Z+ \n２"), min_size=10, max_size=30),
    st.datetimes().map(lambda moment: moment.isoformat() + "Z"),
    st.datetimes().map(lambda moment: moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")),
    st.sampled_from(["2024-02-29T00:00:00Z", "2023-02-29T00:00:00Z", "2000-02-29T00:00Z",
                     "1900-02-29T00:00Z", "2026-01-01T00:00:00+02:00", "2026-01-01T24:00:00Z"]),
)


@settings(max_examples=400, deadline=None)
@given(_DATETIME_TEXT)
def test_datetime_pattern_in_pydantic_core_matches_python_fullmatch(text: str) -> None:
    from agent_interface.core.contract_limits import (
        _OFFSET_DATETIME_RE,
        IsoDatetime,
        OffsetIsoDatetime,
        is_iso_datetime,
    )
    from agent_interface.core.model import wire_adapter

    for annotation, expected in (
        (IsoDatetime, is_iso_datetime(text)),
        (OffsetIsoDatetime, _OFFSET_DATETIME_RE.fullmatch(text) is not None),
    ):
        try:
            wire_adapter(annotation, "datetime").parse_value(text)
        except ValueError as error:
            assert not expected
            assert [issue.code for issue in error.issues] == ["iso_datetime"]  # type: ignore[attr-defined]
        else:
            assert expected
