"""The compiled (orjson) path of the canonical form writes exactly the exact path's bytes,
and refuses exactly what it refuses; values it cannot write fall back to the exact path."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_interface.core.canonical import (
    _compiled_bytes,
    _exact_bytes,
    canonical_bytes,
    canonical_digest,
    sha256_bytes,
)
from agent_interface.core.errors import CanonicalJsonError

# Characters where code-point order and UTF-16 order part ways, escapes, and lone surrogates.
_TRICKY = st.sampled_from(
    ["a", "Z", "\x00", "\x1f", "\x7f", '"', "\\", "é", "\u2028", "\ud7ff", "\ue000",
     "\uffff", "\U00010000", "\U0001f600", "\U0010ffff", "\ud800", "\udfff"]
)
_TEXT = st.text(st.one_of(_TRICKY, st.characters(exclude_categories=())), max_size=6)
_NUMBERS = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.integers(min_value=-(2**53) - 2, max_value=2**53 + 2),
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(min_value=1e-7, max_value=1e-4),
    st.floats(min_value=1e15, max_value=1e22),
    st.sampled_from([0.0, -0.0, 1.0, 3.0, 1e-5, 1e-6, 1e16, 1e21, 5e-324, 0.1 + 0.2]),
)
_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), _NUMBERS, _TEXT),
    lambda inner: st.one_of(
        st.lists(inner, max_size=5),
        st.lists(inner, max_size=5).map(tuple),
        st.dictionaries(_TEXT, inner, max_size=5),
    ),
    max_leaves=30,
)


def _outcome(write: Any, value: Any) -> tuple[str, Any]:
    try:
        return "ok", write(value)
    except CanonicalJsonError as error:
        return "refused", [(issue.path, issue.code) for issue in error.issues]


@settings(max_examples=1500, deadline=None)
@given(_VALUES)
def test_compiled_path_matches_the_exact_path(value: Any) -> None:
    assert _outcome(canonical_bytes, value) == _outcome(_exact_bytes, value)
    fast = _compiled_bytes(value)
    if fast is not None:
        assert fast == _exact_bytes(value)


@settings(max_examples=500, deadline=None)
@given(st.dictionaries(_TEXT, st.integers(-5, 5), max_size=8))
def test_key_order_is_utf16_order(value: dict[str, int]) -> None:
    assert _outcome(canonical_bytes, value) == _outcome(_exact_bytes, value)


def test_recorded_reference_vectors_on_both_paths() -> None:
    path = Path(__file__).resolve().parents[1] / "golden" / "canonical_vectors.json"
    compiled = 0
    for vector in json.loads(path.read_text(encoding="utf-8"))["vectors"]:
        expected = vector["canonical"].encode("utf-8")
        assert _exact_bytes(vector["value"]) == expected
        fast = _compiled_bytes(vector["value"])
        if fast is not None:
            compiled += 1
            assert fast == expected
    assert compiled > 0


@pytest.mark.parametrize(
    ("value", "compiled"),
    [
        ({"b": 1, "a": [1.5, "x", None, True]}, True),
        ({"\U0001f600": 1, "\uffff": 2}, False),  # UTF-16 order differs from code-point order
        ({"\U0001f600": 1, "z": 2}, True),
        ({"\ue000": 1, "z": 2}, True),
        ({"a": 3.0}, False),  # integral float: ECMAScript writes 3
        ({"a": 1e-6}, False),  # ECMAScript writes 0.000001, orjson 1e-6
        ({"a": 2**53}, False),  # beyond the safe integers
        ({"a": float("nan")}, False),  # orjson would write null
        ({1: "a"}, False),
        ({"a": "\ud800"}, False),
    ],
)
def test_which_values_take_the_compiled_path(value: Any, compiled: bool) -> None:
    assert (_compiled_bytes(value) is not None) is compiled
    assert _outcome(canonical_bytes, value) == _outcome(_exact_bytes, value)


def test_digest_is_sha256_of_the_canonical_bytes() -> None:
    value = {"z": [1, 2.5, "three"], "a": {"nested": None}}
    assert canonical_digest(value) == sha256_bytes(_exact_bytes(value))
