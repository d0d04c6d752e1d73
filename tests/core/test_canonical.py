"""RFC 8785 canonicalization: the RFC's own examples, an oracle property, every refusal."""

from __future__ import annotations

import datetime
import hashlib
import json
import math
import struct
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_interface.core.canonical import (
    MAX_CANONICAL_DEPTH,
    MAX_SAFE_INTEGER,
    canonical_bytes,
    canonical_digest,
    canonical_json,
    es_number,
    is_canonical_json_value,
    is_sha256_digest,
    omit_top_level_digest,
    sha256_bytes,
    sha256_utf8,
)
from agent_interface.core.errors import CanonicalJsonError

# RFC 8785 Appendix B: IEEE 754 bit patterns and their ECMAScript serialization.
RFC_NUMBER_TABLE = [
    ("0000000000000000", "0"),
    ("8000000000000000", "0"),
    ("0000000000000001", "5e-324"),
    ("8000000000000001", "-5e-324"),
    ("7fefffffffffffff", "1.7976931348623157e+308"),
    ("ffefffffffffffff", "-1.7976931348623157e+308"),
    ("4340000000000000", "9007199254740992"),
    ("c340000000000000", "-9007199254740992"),
    ("4430000000000000", "295147905179352830000"),
    ("44b52d02c7e14af5", "9.999999999999997e+22"),
    ("44b52d02c7e14af6", "1e+23"),
    ("44b52d02c7e14af7", "1.0000000000000001e+23"),
    ("444b1ae4d6e2ef4e", "999999999999999700000"),
    ("444b1ae4d6e2ef4f", "999999999999999900000"),
    ("444b1ae4d6e2ef50", "1e+21"),
    ("3eb0c6f7a0b5ed8c", "9.999999999999997e-7"),
    ("3eb0c6f7a0b5ed8d", "0.000001"),
    ("41b3de4355555553", "333333333.3333332"),
    ("41b3de4355555554", "333333333.33333325"),
    ("41b3de4355555555", "333333333.3333333"),
    ("41b3de4355555556", "333333333.3333334"),
    ("41b3de4355555557", "333333333.33333343"),
    ("becbf647612f3696", "-0.0000033333333333333333"),
    ("43143ff3c1cb0959", "1424953923781206.2"),
]


def _double(bits: str) -> float:
    value: float = struct.unpack(">d", bytes.fromhex(bits))[0]
    return value


@pytest.mark.parametrize(("bits", "expected"), RFC_NUMBER_TABLE)
def test_rfc8785_number_table(bits: str, expected: str) -> None:
    value = _double(bits)
    assert es_number(value) == expected
    assert canonical_json(value) == expected


@pytest.mark.parametrize("bits", ["7fffffffffffffff", "7ff0000000000000", "fff0000000000000"])
def test_rfc8785_number_table_errors(bits: str) -> None:
    with pytest.raises(CanonicalJsonError) as caught:
        canonical_json([_double(bits)])
    assert caught.value.issues[0].path == "/0"
    assert caught.value.issues[0].code == "non_finite_number"


def test_rfc8785_sorting_example() -> None:
    value = {
        "\u20ac": "Euro Sign",
        "\r": "Carriage Return",
        "\ufb33": "Hebrew Letter Dalet With Dagesh",
        "1": "One",
        "\U0001f600": "Emoji: Grinning Face",
        "\u0080": "Control",
        "\u00f6": "Latin Small Letter O With Diaeresis",
    }
    keys = [key for key in json.loads(canonical_json(value))]
    assert keys == ["\r", "1", "\u0080", "\u00f6", "\u20ac", "\U0001f600", "\ufb33"]


def test_rfc8785_serialization_example() -> None:
    value = json.loads(
        '{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],'
        ' "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/",'
        ' "literals": [null, true, false]}'
    )
    assert canonical_json(value) == (
        '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],'
        '"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}'
    )


def test_utf16_order_differs_from_code_point_order() -> None:
    # U+E000 sorts after U+1F600 by code point but before it by UTF-16 code unit (0xD83D).
    assert canonical_json({"\ue000": 1, "\U0001f600": 2}) == '{"😀":2,"\ue000":1}'


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1e21, "1e+21"),
        (1e-7, "1e-7"),
        (5e-324, "5e-324"),
        (0.1, "0.1"),
        (-0.0, "0"),
        (1e20, "100000000000000000000"),
        (1.0, "1"),
        (-1.5, "-1.5"),
        (123456789012.0, "123456789012"),
        (0.000001, "0.000001"),
        (1.5e-7, "1.5e-7"),
        (2.5e25, "2.5e+25"),
    ],
)
def test_ecmascript_number_formatting(value: float, expected: str) -> None:
    assert canonical_json(value) == expected


def test_string_escaping_matches_json_stringify() -> None:
    text = "\x00\x07\b\t\n\x0b\f\r\x1f \"\\/\x7f\u2028\u2029é😀"
    assert canonical_json(text) == (
        '"\\u0000\\u0007\\b\\t\\n\\u000b\\f\\r\\u001f \\"\\\\/\x7f\u2028\u2029é😀"'
    )


def test_integers_and_literals() -> None:
    assert canonical_json([0, -1, MAX_SAFE_INTEGER, -MAX_SAFE_INTEGER, True, False, None]) == (
        "[0,-1,9007199254740991,-9007199254740991,true,false,null]"
    )


@pytest.mark.parametrize(
    "text", ["9007199254740992", "-9007199254740992", "295147905179352830000", "18446744073709552000"]
)
def test_large_integers_written_as_javascript_writes_doubles_are_accepted(text: str) -> None:
    # json.loads gives a Python int; JavaScript's JSON.parse gives the double that
    # prints back as the same text, so both sides canonicalize to these bytes.
    assert canonical_json(json.loads(text)) == text
    assert canonical_json(float(text)) == text


@pytest.mark.parametrize("value", [2**53 + 1, 2**64, -(2**63) - 1, 10**21])
def test_large_integers_javascript_would_round_are_refused(value: int) -> None:
    with pytest.raises(CanonicalJsonError) as caught:
        canonical_json(value)
    assert caught.value.issues[0].code == "unsafe_integer"


def test_tuples_and_dict_subclasses_are_json_arrays_and_objects() -> None:
    class Ordered(dict[str, Any]):
        pass

    assert canonical_json((1, Ordered(b=1, a=2))) == '[1,{"a":2,"b":1}]'


def test_digest_format_and_helpers() -> None:
    digest = canonical_digest({"b": 2, "a": 1})
    assert digest == "sha256:" + hashlib.sha256(b'{"a":1,"b":2}').hexdigest()
    assert is_sha256_digest(digest)
    assert not is_sha256_digest(digest.upper())
    assert not is_sha256_digest(digest + "\n")
    assert sha256_utf8("é") == sha256_bytes("é".encode())
    assert canonical_bytes({"é": 1}) == '{"é":1}'.encode()


def test_omit_top_level_digest_keeps_nested_digests() -> None:
    value = {"digest": "sha256:" + "0" * 64, "nested": {"digest": "x"}, "a": 1}
    assert omit_top_level_digest(value) == {"nested": {"digest": "x"}, "a": 1}


# -- refusals ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "path", "code"),
    [
        ({"a": [1, float("nan")]}, "/a/1", "non_finite_number"),
        ({"a": float("inf")}, "/a", "non_finite_number"),
        ({"a": {1: "x"}}, "/a", "non_string_key"),
        ({"a": b"bytes"}, "/a", "not_json"),
        ({"a": {1, 2}}, "/a", "not_json"),
        ({"when": datetime.datetime(2026, 1, 1)}, "/when", "not_json"),
        ({"d": Decimal("1.5")}, "/d", "not_json"),
        ([MAX_SAFE_INTEGER + 2], "/0", "unsafe_integer"),
        ({"n": -(2**64)}, "/n", "unsafe_integer"),
        ({"n": 10**400}, "/n", "unsafe_integer"),
        ({"s": "ok", "bad": "\ud800"}, "/bad", "ill_formed_unicode"),
        ({"x": ["\udc00"]}, "/x/0", "ill_formed_unicode"),
        ({"\udfff": 1}, "/\udfff", "ill_formed_unicode"),
        ({"a/b": {"c~d": float("nan")}}, "/a~1b/c~0d", "non_finite_number"),
    ],
)
def test_refusals_name_the_json_pointer(value: Any, path: str, code: str) -> None:
    with pytest.raises(CanonicalJsonError) as caught:
        canonical_json(value)
    issue = caught.value.issues[0]
    assert (issue.path, issue.code) == (path, code)
    assert not is_canonical_json_value(value)


def test_cycle_is_refused_with_its_path() -> None:
    value: dict[str, Any] = {"a": [1]}
    value["a"].append(value)
    with pytest.raises(CanonicalJsonError) as caught:
        canonical_digest(value)
    assert caught.value.issues[0].code == "cycle"
    assert caught.value.issues[0].path == "/a/1"


def test_deep_nesting_is_refused_not_recursion_error() -> None:
    value: Any = 0
    for _ in range(MAX_CANONICAL_DEPTH + 1):
        value = [value]
    with pytest.raises(CanonicalJsonError) as caught:
        canonical_json(value)
    assert caught.value.issues[0].code == "too_deep"
    limit: Any = 0
    for _ in range(MAX_CANONICAL_DEPTH):
        limit = [limit]
    assert canonical_json(limit).startswith("[[")


def test_very_deep_nesting_never_raises_recursion_error() -> None:
    value: Any = {}
    for _ in range(100_000):
        value = {"a": value}
    with pytest.raises(CanonicalJsonError):
        canonical_bytes(value)


def test_refusal_message_does_not_echo_the_value() -> None:
    secret = "sk-live-\ud800-very-secret"
    with pytest.raises(CanonicalJsonError) as caught:
        canonical_json({"token": secret})
    assert secret not in str(caught.value)
    assert "very-secret" not in repr(caught.value)


def test_bool_is_not_treated_as_integer() -> None:
    assert canonical_json([True, 1]) == "[true,1]"


# -- oracle property ------------------------------------------------------------------

_safe_ints = st.integers(min_value=-MAX_SAFE_INTEGER, max_value=MAX_SAFE_INTEGER)
_floats = st.floats(allow_nan=False, allow_infinity=False)
_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
_json = st.recursive(
    st.none() | st.booleans() | _safe_ints | _floats | _text,
    lambda children: st.lists(children, max_size=5)
    | st.dictionaries(_text, children, max_size=5),
    max_leaves=40,
)


@settings(max_examples=1500, deadline=None)
@given(_json)
def test_agrees_with_rfc8785_package(value: Any) -> None:
    assert canonical_bytes(value) == rfc8785.dumps(value)


@settings(max_examples=1000, deadline=None)
@given(_floats)
def test_number_formatting_round_trips(value: float) -> None:
    text = es_number(value)
    assert float(text) == value or (value == 0 and float(text) == 0)
    assert not math.isnan(float(text))


@settings(max_examples=300, deadline=None)
@given(_json)
def test_canonical_form_is_a_fixed_point(value: Any) -> None:
    once = canonical_json(value)
    assert canonical_json(json.loads(once)) == once


def test_agrees_with_the_reference_on_recorded_vectors() -> None:
    """600 hostile documents whose canonical text was recorded from the reference package."""
    path = Path(__file__).resolve().parents[1] / "golden" / "canonical_vectors.json"
    recorded = json.loads(path.read_text(encoding="utf-8"))
    for vector in recorded["vectors"]:
        assert canonical_json(vector["value"]) == vector["canonical"]
