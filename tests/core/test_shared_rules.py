"""The shared number types, path and Unicode rules that several modules use.

Each rule lives once (``contract_limits``, ``canonical``, ``errors``); these tests pin the
differences between rules that look alike, so they are not merged by mistake.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from agent_interface.core.canonical import (
    MAX_SAFE_INTEGER,
    is_well_formed_unicode,
)
from agent_interface.core.contract_limits import (
    FiniteNumber,
    GreaterThanZeroSafeInt,
    NonNegativeNumber,
    NonNegativeSafeInt,
    PositiveSafeInt,
    SafeInt,
    is_safe_relative_path,
    utf8_bytes,
)
from agent_interface.core.errors import (
    Refinement,
    WireValidationError,
)
from agent_interface.core.model import (
    WireInt,
    WireModel,
)


class Numbers(WireModel):
    safe: SafeInt | None = None
    non_negative: NonNegativeSafeInt | None = None
    positive: PositiveSafeInt | None = None
    above_zero: GreaterThanZeroSafeInt | None = None
    wire: WireInt | None = None
    finite: FiniteNumber | None = None
    amount: NonNegativeNumber | None = None


def refusal(document: dict[str, Any]) -> tuple[str, str]:
    with pytest.raises(WireValidationError) as caught:
        Numbers.parse_wire(document)
    issue = caught.value.issues[0]
    return issue.path, issue.code


@pytest.mark.parametrize("key", ["safe", "nonNegative", "positive", "aboveZero", "wire"])
def test_an_integral_float_reads_as_an_int(key: str) -> None:
    parsed = Numbers.parse_wire({key: 5.0}).to_wire()
    assert parsed == {key: 5}
    assert type(parsed[key]) is int


@pytest.mark.parametrize("key", ["safe", "nonNegative", "positive", "aboveZero", "wire"])
def test_a_fraction_or_a_boolean_is_not_an_integer(key: str) -> None:
    assert refusal({key: 1.5})[0] == f"/{key}"
    assert refusal({key: True})[0] == f"/{key}"


def test_safe_integer_bounds() -> None:
    assert Numbers.parse_wire({"safe": -MAX_SAFE_INTEGER}).safe == -MAX_SAFE_INTEGER
    assert Numbers.parse_wire({"safe": MAX_SAFE_INTEGER}).safe == MAX_SAFE_INTEGER
    assert refusal({"safe": MAX_SAFE_INTEGER + 1}) == ("/safe", "less_than_equal")
    assert refusal({"safe": -MAX_SAFE_INTEGER - 1}) == ("/safe", "greater_than_equal")
    # Every integral float is read as an int first, so a huge one meets the bound.
    assert refusal({"safe": 1e20}) == ("/safe", "less_than_equal")


def test_wire_int_is_a_safe_integer_as_zod_int_reads_it() -> None:
    # One rule for every integer type (core.numbers): zod's .int() refuses every integer
    # beyond 2**53 - 1, written as an integer or as an integral float.
    assert Numbers.parse_wire({"wire": float(2**53 - 1)}).wire == 2**53 - 1
    assert refusal({"wire": 2**60}) == ("/wire", "less_than_equal")
    assert refusal({"wire": 1e20}) == ("/wire", "less_than_equal")


def test_positive_and_above_zero_refuse_zero_with_different_codes() -> None:
    assert Numbers.parse_wire({"positive": 1, "aboveZero": 1}).to_wire() == {"positive": 1, "aboveZero": 1}
    assert refusal({"positive": 0}) == ("/positive", "greater_than_equal")
    assert refusal({"aboveZero": 0}) == ("/aboveZero", "greater_than")
    assert refusal({"nonNegative": -1}) == ("/nonNegative", "greater_than_equal")
    assert Numbers.parse_wire({"nonNegative": 0}).non_negative == 0


def test_numbers_keep_their_form_and_refuse_non_finite_or_negative() -> None:
    assert Numbers.parse_wire({"finite": 3, "amount": 2.5}).to_wire() == {"finite": 3, "amount": 2.5}
    assert refusal({"finite": float("nan")})[0] == "/finite"
    assert refusal({"amount": -0.5})[0] == "/amount"


def test_well_formed_unicode() -> None:
    assert is_well_formed_unicode("plain \U0001f600 text")
    assert not is_well_formed_unicode("lone \ud800 high")
    assert not is_well_formed_unicode("\udc00")


@pytest.mark.parametrize("path", ["a", "a/b.txt", "src/.env", "x/.gitignore"])
def test_safe_relative_paths(path: str) -> None:
    assert is_safe_relative_path(path, False)
    assert is_safe_relative_path(path, True)


@pytest.mark.parametrize(
    "path",
    [
        "", "/abs", "\\abs", "a\\b", "C:/x", "c:", "a//b", "a/", "./a", "a/./b", "a/../b", "..",
        ".git", "a/.git/b", ".sidecar/x", "a\x00b", "a\x7fb", "bad\ud800",
    ],
)
def test_unsafe_relative_paths(path: str) -> None:
    assert not is_safe_relative_path(path, False)
    assert not is_safe_relative_path(path, True)


def test_dot_alone_needs_allow_dot() -> None:
    assert is_safe_relative_path(".", True)
    assert not is_safe_relative_path(".", False)


def test_utf8_bytes_counts_a_lone_surrogate_as_three_bytes() -> None:
    assert utf8_bytes("a\u00e9\U0001f600") == 1 + 2 + 4
    assert utf8_bytes("\ud800") == 3


def test_refinement_collects_issues_and_raises_them_together() -> None:
    issues = Refinement("Sample")
    assert not issues
    issues.check()
    issues.add(("a",), "first_rule", "first")
    issues.add(("b", 0), "second_rule", "limit {limit}", {"limit": 3})
    assert issues
    with pytest.raises(ValidationError) as caught:
        issues.check()
    errors = caught.value.errors()
    assert [(error["loc"], error["type"], error["msg"]) for error in errors] == [
        (("a",), "first_rule", "first"),
        (("b", 0), "second_rule", "limit 3"),
    ]
