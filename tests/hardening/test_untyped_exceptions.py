"""Nothing but a ContractError (or a plain answer) leaves a public entry point of ``core``,
whatever Python or JSON input it is given."""

from __future__ import annotations

import contextlib
import copy
import math
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from agent_interface.core import canonical, containers, contract_limits, number_validation
from agent_interface.core.errors import ContractError, json_pointer
from agent_interface.core.registry import wire_schema, wire_schemas
from tests.hardening.support import accepted_documents, text, watchdog

DIGEST_BOUND = [
    "WorkspaceCheckpointRequest",
    "WorkspaceForkRequest",
    "InteractionResponseCommand",
    "PortableConversationContext",
    "PortableContextPlan",
    "PortableContextPlanRequest",
    "ContextTransferRequest",
]


def _objects(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(value, dict):
        yield path
        for key, item in value.items():
            yield from _objects(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _objects(item, (*path, index))


def _strings(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(value, str):
        yield path
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(item, (*path, index))


def _at(value: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        value = value[part]
    return value


def _set(value: Any, path: tuple[Any, ...], item: Any) -> None:
    _at(value, path[:-1])[path[-1]] = item


def _typed(call: Callable[[], Any]) -> None:
    """Run ``call``: an answer or a ContractError is fine, anything else fails the test."""
    with contextlib.suppress(ContractError):
        call()


def _variants(document: Any, limit: int) -> Iterator[Any]:
    """The document with a lone surrogate key in one object, or in one string, at a time."""
    for path in list(_objects(document))[:limit]:
        variant = copy.deepcopy(document)
        _at(variant, path)["\ud800"] = 1
        yield variant
    for path in list(_strings(document))[:limit]:
        if not path:
            yield "a\udfffb"
            continue
        variant = copy.deepcopy(document)
        _set(variant, path, "a\udfffb")
        yield variant


def _check_everywhere(name: str, document: Any, limit: int) -> None:
    adapter = wire_schema(name)
    for variant in _variants(document, limit):
        with watchdog(30):
            _typed(lambda variant=variant: adapter.parse_value(variant))
            _typed(lambda variant=variant: adapter.parse(text(variant)))
            _typed(lambda variant=variant: canonical.canonical_digest(variant))


@pytest.mark.parametrize("name", DIGEST_BOUND)
def test_lone_surrogates_in_digest_bound_documents_are_typed_refusals(name: str) -> None:
    for document in accepted_documents()[name][:3]:
        _check_everywhere(name, document, limit=40)


def test_a_lone_surrogate_key_in_checkpoint_metadata_is_refused_with_a_code() -> None:
    document = copy.deepcopy(accepted_documents()["WorkspaceCheckpointRequest"][0])
    document["metadata"] = {"\ud800": 1}
    adapter = wire_schema("WorkspaceCheckpointRequest")
    for call in (lambda: adapter.parse_value(document), lambda: adapter.parse(text(document))):
        with pytest.raises(ContractError) as caught:
            call()
        assert caught.value.issues[0].code == "ill_formed_unicode"
        str(caught.value).encode("utf-8")  # the message itself always encodes


def test_every_schema_refuses_lone_surrogates_with_a_typed_refusal() -> None:
    documents = accepted_documents()
    for name in sorted(wire_schemas()):
        for document in documents.get(name, [])[:1]:
            _check_everywhere(name, document, limit=4)


def test_an_integer_too_long_to_print_is_a_typed_refusal() -> None:
    with pytest.raises(ContractError):
        wire_schema("ResourceUseSample").parse_value({"cpu": 10**5000})
    for value in (10**5000, [10**5000], {"n": -(10**4400)}):
        with pytest.raises(ContractError):
            canonical.canonical_digest(value)
    assert not canonical.is_canonical_json_value(10**5000)
    with pytest.raises(ContractError):
        canonical.es_number(10**400)


# -- odd Python input ------------------------------------------------------------------------


class _FailingEquality:
    def __eq__(self, other: object) -> bool:
        raise RuntimeError("eq")

    def __hash__(self) -> int:
        raise RuntimeError("hash")


class _CollidingKey:
    def __hash__(self) -> int:
        return hash("name")

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("eq")


class _Str(str):
    def __str__(self) -> str:
        raise RuntimeError("str")

    def encode(self, *args: Any, **kwargs: Any) -> bytes:
        raise RuntimeError("encode")


class _Int(int):
    def __int__(self) -> int:
        raise RuntimeError("int")


class _Float(float):
    def __float__(self) -> float:
        raise RuntimeError("float")


class _FailingDict(dict[Any, Any]):
    def items(self) -> Any:
        raise RuntimeError("items")

    def values(self) -> Any:
        raise RuntimeError("values")

    def keys(self) -> Any:
        raise RuntimeError("keys")

    def __iter__(self) -> Any:
        raise RuntimeError("iter")

    def __contains__(self, key: object) -> bool:
        raise RuntimeError("contains")


class _FailingList(list[Any]):
    def __iter__(self) -> Any:
        raise RuntimeError("iter")

    def __len__(self) -> int:
        raise RuntimeError("len")


def _hostile() -> list[Any]:
    cycle: list[Any] = []
    cycle.append(cycle)
    looped: dict[str, Any] = {}
    looped["a"] = looped
    deep: Any = 1
    for _ in range(5000):
        deep = [deep]
    return [
        None, 1.5, 10**5000, -(10**400), 2**53 + 1, math.nan, math.inf, -0.0, "\ud800",
        {1, 2}, frozenset(), b"bytes", bytearray(b"x"), {b"key": 1}, {1: 2}, {(1,): 2},
        _Str("x"), _Int(5), _Float(1.5), {_Str("k"): 1}, _FailingEquality(), {_CollidingKey(): 1},
        {"name": _CollidingKey()}, _FailingDict(a=1), _FailingList([1]), cycle, looped, deep,
        object(), {"a": _FailingEquality()}, [_FailingEquality()], complex(1, 2), math, type,
        (1, 2), {"k": {1, 2}}, {"\ud800": 1},
    ]


ENTRY_POINTS: dict[str, Callable[[Any], Any]] = {
    "canonical_json": canonical.canonical_json,
    "canonical_bytes": canonical.canonical_bytes,
    "canonical_digest": canonical.canonical_digest,
    "is_canonical_json_value": canonical.is_canonical_json_value,
    "es_number": canonical.es_number,
    "is_sha256_digest": canonical.is_sha256_digest,
    "sha256_utf8": canonical.sha256_utf8,
    "utf16_sort_key": canonical.utf16_sort_key,
    "is_well_formed_unicode": canonical.is_well_formed_unicode,
    "omit_top_level_digest": canonical.omit_top_level_digest,
    "is_bounded_json_value": contract_limits.is_bounded_json_value,
    "is_bounded_json_material": contract_limits.is_bounded_json_material,
    "wire_digest": contract_limits.wire_digest,
    "utf16_length": contract_limits.utf16_length,
    "utf8_bytes": contract_limits.utf8_bytes,
    "js_trim": contract_limits.js_trim,
    "is_safe_relative_path": lambda value: contract_limits.is_safe_relative_path(value, False),
    "is_iso_datetime": contract_limits.is_iso_datetime,
    "deep_freeze": containers.deep_freeze,
    "thaw": containers.thaw,
    "numbers_approximately_equal": lambda value: number_validation.numbers_approximately_equal(value, 1),
    "json_pointer": lambda value: json_pointer([value]),
}


@pytest.mark.parametrize("name", sorted(ENTRY_POINTS))
def test_core_functions_answer_or_refuse_odd_python_input(name: str) -> None:
    for value in _hostile():
        with watchdog(30):
            _typed(lambda value=value: ENTRY_POINTS[name](value))


SAMPLE = ["AgentProfile", "AgentTurnInput", "StreamEvent", "WorkspaceCheckpointRequest",
          "AgentCandidateTermination", "ResourceUseSample", "InteractionData", "Capability"]


@pytest.mark.parametrize("name", SAMPLE)
def test_schemas_refuse_odd_python_input_with_a_typed_refusal(name: str) -> None:
    adapter = wire_schema(name)
    for value in _hostile():
        for document in (value, {"name": value, "metadata": {"x": value}, "kind": value, "type": value}):
            with watchdog(30):
                _typed(lambda document=document: adapter.parse_value(document))
