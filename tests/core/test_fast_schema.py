"""The derived validator for small JSON texts (``core.fast_schema``): whatever it accepts,
the precise validator accepts with an identical value; everything else is decided by the
precise validator. Checked on every recorded golden document, on hypothesis documents and
rule by rule."""

from __future__ import annotations

import gzip
import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from agent_interface.core.contract_limits import (
    BoundedIdentifier,
    BoundedJson,
    BoundedJsonRecord,
    BoundedString,
    NonNegativeSafeInt,
    Utf16Length,
)
from agent_interface.core.errors import ContractError
from agent_interface.core.fast_schema import FAST_TEXT_LIMIT
from agent_interface.core.model import (
    _WIRE_TEXT_CONTEXT,
    FrozenDict,
    JsonValue,
    WireAdapter,
    WireInt,
    WireList,
    WireModel,
    wire_adapter,
)
from agent_interface.core.registry import wire_schema, wire_schema_names

GOLDEN = Path(__file__).resolve().parent.parent / "golden"


def same(left: Any, right: Any) -> bool:
    """Equal values of identical types at every depth (``FrozenDict`` is not ``dict``,
    ``1`` is not ``1.0``, ``-0.0`` is not ``0.0``), models with the same fields set."""
    if type(left) is not type(right):
        return False
    if isinstance(left, BaseModel):
        return (
            left.model_fields_set == right.model_fields_set
            and same(left.__dict__, right.__dict__)
            and left.__pydantic_extra__ == right.__pydantic_extra__
        )
    if isinstance(left, dict):
        return list(left) == list(right) and all(same(left[k], right[k]) for k in left)
    if isinstance(left, (list, tuple)):
        return len(left) == len(right) and all(map(same, left, right))
    if isinstance(left, float):
        return left == right and math.copysign(1, left) == math.copysign(1, right)
    return bool(left == right)


def _outcome(validate: Any, text: bytes) -> tuple[bool, Any]:
    try:
        return True, validate(text, by_alias=True, by_name=False, context=_WIRE_TEXT_CONTEXT)
    except ValidationError:
        return False, None


def check_text(adapter: WireAdapter[Any], text: bytes) -> str | None:
    """None when the derived validator keeps the promise on ``text``, else the breach."""
    fast = adapter.fast_validator
    if fast is None or len(text) > FAST_TEXT_LIMIT:
        return None
    fast_ok, fast_value = _outcome(fast.validate_json, text)
    if not fast_ok:
        return None
    precise_ok, precise_value = _outcome(adapter.adapter.validate_json, text)
    if not precise_ok:
        return "accepted by the derived validator, refused by the precise one"
    if not same(fast_value, precise_value):
        return f"different values: {fast_value!r} != {precise_value!r}"
    return None


def _text(value: Any) -> bytes:
    # ensure_ascii keeps lone surrogates as escapes (refused by both as JSON text).
    return json.dumps(value, separators=(",", ":")).encode()


def _golden_documents() -> Iterator[tuple[str, Any]]:
    for path in sorted(GOLDEN.glob("*.jsonl.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            for line in handle:
                case = json.loads(line)
                if isinstance(case.get("schema"), str) and "value" in case:
                    yield case["schema"], case["value"]
    for path in sorted(GOLDEN.glob("*_parity.jsonl")):
        with path.open(encoding="utf-8") as handle:
            for line in handle:
                case = json.loads(line)
                if isinstance(case.get("schema"), str) and "doc" in case:
                    yield case["schema"], case["doc"]


def test_every_golden_document_agrees() -> None:
    registered = set(wire_schema_names())
    breaches: list[str] = []
    checked = fast_accepted = 0
    for name, value in _golden_documents():
        if name not in registered and name[0].lower() + name[1:] not in registered:
            continue
        adapter = wire_schema(name)
        text = _text(value)
        breach = check_text(adapter, text)
        checked += 1
        if breach is not None:
            breaches.append(f"{name}: {breach}: {text[:200]!r}")
        elif adapter.fast_validator is not None and len(text) <= FAST_TEXT_LIMIT:
            fast_accepted += _outcome(adapter.fast_validator.validate_json, text)[0]
    assert not breaches, "\n".join(breaches[:20])
    assert checked > 40_000 and fast_accepted > 10_000


@pytest.mark.parametrize(
    "name", ["RuntimeEventEnvelope", "AgentProfile", "AgentEnvironmentCapabilities",
             "NativeContextContinuationAcknowledgement", "AgentCandidateBundle"]
)
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_generated_documents_agree(name: str, data: st.DataObject) -> None:
    from agent_interface.testing.strategies import documents

    if name not in wire_schema_names():
        pytest.skip(f"{name} is not registered")
    document = data.draw(documents(name))
    adapter = wire_schema(name)
    text = _text(document)
    assert check_text(adapter, text) is None
    if len(text) <= FAST_TEXT_LIMIT and adapter.fast_validator is not None:
        assert same(adapter.parse(text), adapter.parse_value(document))


# -- rule by rule: one document the derived validator takes, one it leaves to the precise one


class _Sample(WireModel):
    ident: BoundedIdentifier
    text: BoundedString | None = None
    short: Annotated[str, Utf16Length(max=4, min=2)] | None = None
    count: NonNegativeSafeInt | None = None
    number: WireInt | None = None
    raw: BoundedJson = None
    record: BoundedJsonRecord | None = None
    free: JsonValue = None
    items: WireList[int] | None = None


ADAPTER = wire_adapter(_Sample)


def _fast_accepts(document: dict[str, Any]) -> bool:
    fast = ADAPTER.fast_validator
    assert fast is not None
    return _outcome(fast.validate_json, _text(document))[0]


@pytest.mark.parametrize(
    ("document", "fast", "precise"),
    [
        ({"ident": "a b"}, True, True),
        ({"ident": " a"}, False, False),  # outer whitespace
        ({"ident": "a\u3000"}, False, False),  # JavaScript whitespace, not ASCII
        ({"ident": "é" * 512}, True, True),  # 512 code units: the exact count in Python
        ({"ident": "😀" * 256}, True, True),  # 512 code units
        ({"ident": "😀" * 257}, False, False),  # 514 code units
        ({"ident": ""}, False, False),
        ({"ident": "a", "text": None}, False, False),  # null refused on the wire
        ({"ident": "a", "short": "😀"}, True, True),  # 2 code units
        ({"ident": "a", "short": "a"}, False, False),
        ({"ident": "a", "short": "😀😀😀"}, False, False),  # 6 code units
        ({"ident": "a", "count": 5}, True, True),
        ({"ident": "a", "count": 5.0}, False, True),  # read as 5 by the precise validator
        ({"ident": "a", "count": -1}, False, False),
        ({"ident": "a", "number": 2.0}, False, True),
        ({"ident": "a", "number": 2.5}, False, False),
        ({"ident": "a", "raw": {"a": [1, "x", None, True, 1.5]}}, True, True),
        ({"ident": "a", "raw": None}, True, True),
        ({"ident": "a", "raw": [[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]}, True, True),  # depth 16
        ({"ident": "a", "raw": [[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]}, False, False),
        ({"ident": "a", "raw": {"k" * 300: 1}}, False, True),  # long key: exact count
        ({"ident": "a", "raw": {"k" * 513: 1}}, False, False),
        ({"ident": "a", "raw": list(range(1025))}, False, False),
        ({"ident": "a", "record": []}, False, False),
        ({"ident": "a", "record": {}}, True, True),
        ({"ident": "a", "free": {"a": [{"b": None}]}}, True, True),
        ({"ident": "a", "items": [1, 2]}, True, True),
        ({"ident": "a", "items": [1, "2"]}, False, False),
    ],
)
def test_each_rule(document: dict[str, Any], fast: bool, precise: bool) -> None:
    assert _fast_accepts(document) is fast
    text = _text(document)
    assert check_text(ADAPTER, text) is None
    try:
        ADAPTER.parse(text)
        accepted = True
    except ContractError:
        accepted = False
    assert accepted is precise


def test_values_are_frozen_as_by_the_precise_validator() -> None:
    value = ADAPTER.parse(_text({"ident": "a", "raw": {"a": [1, {"b": 2.0}]}, "free": [{}]}))
    assert type(value.raw) is FrozenDict and type(value.raw["a"]) is tuple
    assert type(value.raw["a"][1]) is FrozenDict and type(value.raw["a"][1]["b"]) is float
    assert type(value.free) is tuple and type(value.free[0]) is FrozenDict


def test_a_refusal_names_the_precise_rule() -> None:
    with pytest.raises(ContractError) as caught:
        ADAPTER.parse(_text({"ident": "a", "text": None}))
    assert [(issue.path, issue.code) for issue in caught.value.issues] == [
        ("/text", "null_not_allowed")
    ]


def test_large_texts_skip_the_derived_validator() -> None:
    document = {"ident": "a", "raw": {"k": "x" * FAST_TEXT_LIMIT}}
    assert not _fast_accepts(document) or len(_text(document)) > FAST_TEXT_LIMIT
    assert ADAPTER.parse(_text(document)).raw["k"] == "x" * FAST_TEXT_LIMIT


def test_a_model_without_python_checks_has_no_derived_validator() -> None:
    class Plain(WireModel):
        name: str

    assert wire_adapter(Plain).fast_validator is None
    assert wire_adapter(Plain).parse(b'{"name":"x"}').name == "x"


# -- mutations of recorded documents: the promise holds for near-misses too

_REPLACEMENTS = (
    None, "", " x", "x ", "x\u3000", "x" * 300, "é" * 300, "😀" * 200, "😀" * 300,
    1.0, 2.5, -1, 0, 2**53, 2**60, True, [], {}, [1, "x"], {"k" * 300: 1}, {"a": None},
    [[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]], "2026-08-01T20:00:00Z", "2026-02-30T20:00:00Z",
)
_SEEDS: list[tuple[str, Any]] = []


def _seeds() -> list[tuple[str, Any]]:
    if not _SEEDS:
        registered = set(wire_schema_names())
        seen: dict[str, int] = {}
        for name, value in _golden_documents():
            if name in registered and seen.get(name, 0) < 4 and len(_text(value)) < 4_000:
                seen[name] = seen.get(name, 0) + 1
                _SEEDS.append((name, value))
    return _SEEDS


def _paths(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, (*path, index))


def _replace(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    head, *rest = path
    if isinstance(value, dict):
        return {**value, head: _replace(value[head], tuple(rest), new)}
    copy = list(value)
    copy[head] = _replace(copy[head], tuple(rest), new)
    return copy


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_mutated_documents_agree(data: st.DataObject) -> None:
    name, value = data.draw(st.sampled_from(_seeds()))
    path = data.draw(st.sampled_from(list(_paths(value))))
    mutated = _replace(value, path, data.draw(st.sampled_from(_REPLACEMENTS)))
    assert check_text(wire_schema(name), _text(mutated)) is None


@pytest.mark.parametrize(
    ("check", "keyword"),
    [
        ("max_length_validator", "max_length"), ("min_length_validator", "min_length"),
        ("less_than_or_equal_validator", "le"), ("greater_than_or_equal_validator", "ge"),
        ("less_than_validator", "lt"), ("greater_than_validator", "gt"),
    ],
)
def test_pydantic_constraint_checks_move_into_the_core(check: str, keyword: str) -> None:
    from functools import partial

    from pydantic._internal import _validators

    from agent_interface.core.fast_schema import Derivation, _replace

    inner = {"type": "tuple" if "length" in check else "int", "strict": True}
    node = {
        "type": "function-after",
        "function": {"type": "no-info", "function": partial(getattr(_validators, check), **{keyword: 3})},
        "schema": inner,
    }
    assert _replace(node, Derivation()) == {**inner, keyword: 3}
