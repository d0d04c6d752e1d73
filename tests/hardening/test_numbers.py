"""One number rule, JavaScript's reading of JSON numbers, in every number type.

zod 4.4.3 under Node 20 (the reference's pins) gives, after ``JSON.parse``:

* ``z.number()`` (finite, positive, nonnegative...): ``9007199254740993`` is accepted as
  the double 9007199254740992; a 401-digit integer and ``1e400`` are both ``Infinity``
  and both refused (``invalid_type``).
* ``z.number().int()``: every integer beyond ±(2**53 − 1) is refused (``too_big``), and
  ``Infinity`` too.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest

from agent_interface.core.canonical import canonical_digest
from agent_interface.core.errors import ContractError
from agent_interface.core.model import WireModel, wire_adapter
from agent_interface.core.numbers import (
    FiniteNumber,
    NonNegativeNumber,
    NonNegativeSafeInt,
    PositiveNumber,
    SafeInt,
)
from agent_interface.core.registry import wire_schema, wire_schemas
from agent_interface.profile.scalars import JsNumber
from tests.hardening.support import accepted_documents

BIG_LITERAL = "1" + "0" * 400
UNSAFE = 2**53 + 1  # JavaScript reads it as 2**53


class Numbers(WireModel):
    finite: FiniteNumber | None = None
    non_negative: NonNegativeNumber | None = None
    positive: PositiveNumber | None = None
    js: JsNumber | None = None
    integer: SafeInt | None = None
    count: NonNegativeSafeInt | None = None


def _verdict(name: str, raw: bytes) -> tuple[bool, str | None]:
    adapter = wire_schema(name)
    try:
        value = adapter.parse(raw)
    except ContractError:
        return False, None
    try:
        return True, canonical_digest(adapter.to_wire(value))
    except ContractError:
        return True, None


@pytest.mark.parametrize("field", ["finite", "nonNegative", "positive", "js"])
def test_number_types_read_a_large_integer_as_the_double_javascript_holds(field: str) -> None:
    adapter = wire_adapter(Numbers)
    from_text = adapter.parse(f'{{"{field}": {UNSAFE}}}'.encode())
    from_value = adapter.parse_value({field: UNSAFE})
    assert from_text == from_value
    assert from_value.to_wire()[field] == float(2**53)
    assert canonical_digest(from_value.to_wire()) == canonical_digest({field: 9007199254740992})


@pytest.mark.parametrize("field", ["finite", "nonNegative", "positive", "js", "integer", "count"])
@pytest.mark.parametrize("raw", [BIG_LITERAL, "1e400", "-" + BIG_LITERAL, "-1e400", "1e309"])
def test_every_number_type_refuses_what_javascript_reads_as_infinity(field: str, raw: str) -> None:
    adapter = wire_adapter(Numbers)
    with pytest.raises(ContractError):
        adapter.parse(f'{{"{field}": {raw}}}'.encode())
    with pytest.raises(ContractError):
        adapter.parse_value({field: int(raw) if "e" not in raw else float(raw)})


@pytest.mark.parametrize("field", ["integer", "count"])
@pytest.mark.parametrize("value", [2**53, UNSAFE, 2**64, 1e20, float(2**53)])
def test_integer_types_refuse_every_integer_beyond_the_safe_range(field: str, value: Any) -> None:
    adapter = wire_adapter(Numbers)
    with pytest.raises(ContractError):
        adapter.parse_value({field: value})
    assert adapter.parse_value({field: 2**53 - 1}).to_wire()[field] == 2**53 - 1


def test_the_resource_sample_refuses_a_401_digit_integer_like_1e400() -> None:
    for raw in (BIG_LITERAL, "1e400"):
        assert _verdict("ResourceUseSample", f'{{"cpu": {raw}}}'.encode()) == (False, None)
    accepted = _verdict("ResourceUseSample", f'{{"cpu": {UNSAFE}}}'.encode())
    assert accepted == _verdict("ResourceUseSample", b'{"cpu": 9007199254740992}')
    assert accepted[0] and accepted[1] is not None


def test_free_json_refuses_an_integer_beyond_the_double_range_like_1e400() -> None:
    for raw in (BIG_LITERAL, "1e400"):
        assert not _verdict("AgentProfile", f'{{"metadata": {{"n": {raw}}}}}'.encode())[0]
    with pytest.raises(ContractError):
        wire_schema("AgentProfile").parse_value({"metadata": {"n": 10**400}})


# -- the same rule at every number position of every golden document ----------------------

_MARK = "__number_under_test__"


def _numbers(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(value, bool):
        return
    if isinstance(value, (int, float)):
        yield path
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _numbers(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _numbers(item, (*path, index))


def _with_literal(document: Any, path: tuple[Any, ...], literal: str) -> bytes:
    if not path:
        return literal.encode()
    variant = copy.deepcopy(document)
    target = variant
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = _MARK
    return json.dumps(variant).replace(f'"{_MARK}"', literal).encode()


def _wire_at(name: str, raw: bytes, path: tuple[Any, ...]) -> Any:
    adapter = wire_schema(name)
    value: Any = adapter.to_wire(adapter.parse(raw))
    for part in path:
        value = value[part]
    return value


def test_every_number_position_follows_the_one_rule() -> None:
    documents = accepted_documents()
    checked = 0
    for name in sorted(wire_schemas()):
        for document in documents.get(name, [])[:2]:
            for path in list(_numbers(document))[:6]:
                infinite = _verdict(name, _with_literal(document, path, "1e400"))
                assert _verdict(name, _with_literal(document, path, BIG_LITERAL)) == infinite
                assert not infinite[0], (name, path)
                unsafe = _with_literal(document, path, str(UNSAFE))
                double = _with_literal(document, path, "9007199254740992")
                ok, digest = _verdict(name, unsafe)
                if ok and _wire_at(name, unsafe, path) == UNSAFE:
                    continue  # free JSON keeps an integer exact (docs/parity/hardening.md)
                assert (ok, digest) == _verdict(name, double), (name, path)
                checked += 1
    assert checked > 100
