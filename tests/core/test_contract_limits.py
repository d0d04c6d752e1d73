"""Contract bounds: UTF-16 lengths, JavaScript trim, bounded JSON, ISO datetimes, wireDigest."""

from __future__ import annotations

from typing import Annotated, Any

import pytest

from agent_interface.core.canonical import canonical_digest
from agent_interface.core.contract_limits import (
    CONTRACT_MAX_ARRAY_LENGTH,
    CONTRACT_MAX_JSON_DEPTH,
    CONTRACT_MAX_MAP_ENTRIES,
    CONTRACT_MAX_STRING_LENGTH,
    BoundedIdentifier,
    BoundedJson,
    BoundedString,
    IsoDatetime,
    Utf16Length,
    is_bounded_json_material,
    is_bounded_json_value,
    is_iso_datetime,
    js_trim,
    utf16_length,
    wire_digest,
)
from agent_interface.core.errors import (
    ContractError,
    WireValidationError,
)
from agent_interface.core.model import WireModel


class Sample(WireModel):
    text: BoundedString | None = None
    ident: BoundedIdentifier | None = None
    short: Annotated[str, Utf16Length(max=3, min=1)] | None = None
    data: BoundedJson | None = None
    at: IsoDatetime | None = None


def refusal(**fields: Any) -> tuple[str, str]:
    with pytest.raises(WireValidationError) as caught:
        Sample.parse_wire(fields)
    issue = caught.value.issues[0]
    return issue.path, issue.code


def test_utf16_length_counts_code_units() -> None:
    assert utf16_length("abc") == 3
    assert utf16_length("é") == 1
    assert utf16_length("😀") == 2
    assert utf16_length("a😀b") == 4


def test_string_limits_count_utf16_code_units() -> None:
    Sample.parse_wire({"short": "a😀"})
    assert refusal(short="😀😀") == ("/short", "string_too_long")
    assert refusal(short="") == ("/short", "string_too_short")
    Sample.parse_wire({"text": "x" * CONTRACT_MAX_STRING_LENGTH})
    assert refusal(text="x" * (CONTRACT_MAX_STRING_LENGTH + 1)) == ("/text", "string_too_long")
    # 8,193 emoji are 16,386 code units although only 8,193 code points.
    assert refusal(text="😀" * 8193) == ("/text", "string_too_long")


@pytest.mark.parametrize("value", [" a", "a ", "\ta", "a\n", "\u00a0a", "a\ufeff", "\u3000a", "\u2028a"])
def test_identifier_refuses_javascript_outer_whitespace(value: str) -> None:
    assert refusal(ident=value) == ("/ident", "identifier_whitespace")


@pytest.mark.parametrize("value", ["a", "run-1", "a b", "\x1ca", "a\x85"])
def test_identifier_accepts_what_javascript_trim_keeps(value: str) -> None:
    # \x1c and \x85 are whitespace to Python's str.strip but not to JavaScript's trim.
    assert Sample.parse_wire({"ident": value}).ident == value


def test_identifier_length_bounds() -> None:
    assert refusal(ident="") == ("/ident", "string_too_short")
    assert refusal(ident="x" * 513) == ("/ident", "string_too_long")


def test_js_trim() -> None:
    assert js_trim("\ufeff\u2029 a b \t") == "a b"
    assert js_trim("\x1ca\x85") == "\x1ca\x85"


def deep(levels: int) -> Any:
    value: Any = 0
    for _ in range(levels):
        value = [value]
    return value


@pytest.mark.parametrize(
    "value",
    [
        ["x"] * (CONTRACT_MAX_ARRAY_LENGTH + 1),
        {f"k{i}": i for i in range(CONTRACT_MAX_MAP_ENTRIES + 1)},
        deep(CONTRACT_MAX_JSON_DEPTH + 1),
        [[0] * 1000] * 9,
        {"x" * 513: 1},
        {"a": float("nan")},
        {"a": "x" * (CONTRACT_MAX_STRING_LENGTH + 1)},
        {"a": b"bytes"},
    ],
)
def test_bounded_json_refuses_oversize_or_non_json(value: Any) -> None:
    assert not is_bounded_json_value(value)
    assert refusal(data=value) == ("/data", "bounded_json")
    with pytest.raises(ContractError):
        wire_digest(value)


def test_bounded_json_accepts_values_at_the_limits() -> None:
    for value in (
        ["x"] * CONTRACT_MAX_ARRAY_LENGTH,
        {f"k{i}": i for i in range(CONTRACT_MAX_MAP_ENTRIES)},
        deep(CONTRACT_MAX_JSON_DEPTH - 1),
        [[0] * 1000] * 8,
    ):
        assert is_bounded_json_value(value), value


def test_wire_digest_is_the_canonical_digest_of_bounded_material() -> None:
    value = {"b": [1, 2.5], "a": "é"}
    assert wire_digest(value) == canonical_digest(value)


@pytest.mark.parametrize(
    "value",
    [
        "2026-01-31T12:00:00Z",
        "2024-02-29T00:00:00.123456Z",
        "2000-02-29T23:59:59Z",
        "2026-01-31T12:00Z",  # zod 4.4.3, which the reference pins, makes seconds optional
    ],
)
def test_iso_datetime_accepts_zod_datetimes(value: str) -> None:
    assert is_iso_datetime(value)
    Sample.parse_wire({"at": value})


@pytest.mark.parametrize(
    "value",
    [
        "2026-01-31T12:00.5Z",  # a fraction needs seconds
        "2026-01-31T12Z",
        "2026-01-31T12:00:00+00:00",  # offsets are refused by default
        "2026-01-31 12:00:00Z",
        "2023-02-29T00:00:00Z",
        "1900-02-29T00:00:00Z",
        "2026-04-31T00:00:00Z",
        "2026-01-31T24:00:00Z",
        "2026-01-31T12:00:00Z\n",
        "２０２６-01-31T12:00:00Z",
        "2026-01-31T12:00:00.Z",
        "2026-01-31",
    ],
)
def test_iso_datetime_refuses_what_zod_refuses(value: str) -> None:
    assert not is_iso_datetime(value)
    assert refusal(at=value) == ("/at", "iso_datetime")


def test_value_check_counts_each_container_twice_and_material_check_once() -> None:
    # The reference's isBoundedJsonValue counts a container on entry and on leaving it;
    # isBoundedJsonMaterial (digest input) counts it once.
    value: dict[str, Any] = {f"k{i}": [0] * 1022 for i in range(7)}
    value.update({"t": [[0] * 1017], "s0": 0, "s1": 0})
    assert not is_bounded_json_value(value)
    assert is_bounded_json_material(value)
    assert wire_digest(value) == canonical_digest(value)
    value["s1"] = value.pop("s0")  # one node fewer: 8,192 exactly
    assert is_bounded_json_value(value)
