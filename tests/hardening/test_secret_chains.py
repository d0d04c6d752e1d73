"""Nothing reachable from a raised refusal shows an input value: not its message, its
issues, its arguments or notes, nor any exception chained to it (``__context__``,
``__cause__``) or held by those, at any depth."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from agent_interface.core import canonical, containers, contract_limits
from agent_interface.core.errors import ContractError
from agent_interface.core.registry import wire_schema, wire_schemas
from tests.hardening.support import accepted_documents

SECRET = "sk-live-7f3a9c-SECRET"


def _reachable(root: BaseException) -> Iterator[Any]:
    """Every object reachable from ``root`` through exception links and attributes."""
    seen: set[int] = set()
    pending: list[Any] = [root]
    while pending:
        item = pending.pop()
        if id(item) in seen or item is None:
            continue
        seen.add(id(item))
        yield item
        if isinstance(item, BaseException):
            pending.extend([item.__context__, item.__cause__, *item.args])
            pending.extend(getattr(item, "__notes__", ()))
            pending.extend(vars(item).values())
        elif isinstance(item, (list, tuple, set, frozenset)):
            pending.extend(item)
        elif isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif hasattr(item, "__dataclass_fields__"):
            pending.extend(getattr(item, name) for name in item.__dataclass_fields__)


def _assert_no_secret(error: BaseException) -> None:
    for item in _reachable(error):
        if isinstance(item, BaseException):
            assert type(item).__name__ != "ValidationError", "pydantic's error is chained"
        shown = item if isinstance(item, (str, bytes)) else repr(item)
        text = shown.decode("utf-8", "replace") if isinstance(shown, bytes) else shown
        assert SECRET not in text, (type(item).__name__, text[:200])


def _refusal(call: Callable[[], Any]) -> ContractError | None:
    try:
        call()
    except ContractError as error:
        return error
    return None


def _with_secret_values(value: Any, secret: str) -> Any:
    """Every string value replaced by one that holds the secret (keys are kept)."""
    if isinstance(value, str):
        return f"{secret}:{value}"
    if isinstance(value, dict):
        return {key: _with_secret_values(item, secret) for key, item in value.items()}
    if isinstance(value, list):
        return [_with_secret_values(item, secret) for item in value]
    return value


def _variants(document: Any) -> Iterator[Any]:
    yield _with_secret_values(document, SECRET)
    yield _with_secret_values(document, SECRET + "\ud800")  # refused by the digest checks
    if isinstance(document, dict):
        broken = copy.deepcopy(document)
        broken["unexpected"] = SECRET
        yield broken
        yield {key: SECRET for key in document}
        yield {key: [SECRET, {"x": SECRET}] for key in document}


def test_refusals_of_every_schema_keep_no_input_value() -> None:
    documents = accepted_documents()
    refusals = 0
    for name in sorted(wire_schemas()):
        adapter = wire_schema(name)
        for document in documents.get(name, [])[:1]:
            for variant in _variants(document):
                raw = json.dumps(variant).encode()
                for call in (
                    lambda adapter=adapter, variant=variant: adapter.parse_value(variant),
                    lambda adapter=adapter, raw=raw: adapter.parse(raw),
                    lambda adapter=adapter, raw=raw: adapter.parse(raw.decode()),
                ):
                    error = _refusal(call)
                    if error is not None:
                        refusals += 1
                        assert error.__context__ is None and error.__cause__ is None
                        _assert_no_secret(error)
    assert refusals > 500


@pytest.mark.parametrize("size", [10, 20_000])
def test_refusals_of_large_and_small_texts_keep_no_input_value(size: int) -> None:
    document = {"tools": {f"t{index}": SECRET for index in range(size)}, "tags": [SECRET, 1]}
    for call in (
        lambda: wire_schema("AgentProfile").parse(json.dumps(document).encode()),
        lambda: wire_schema("AgentProfile").parse_value(document),
    ):
        error = _refusal(call)
        assert error is not None
        _assert_no_secret(error)


@pytest.mark.parametrize(
    "call",
    [
        lambda: canonical.canonical_digest({"k": SECRET + "\ud800"}),
        lambda: canonical.canonical_digest([SECRET, float("nan")]),
        lambda: canonical.sha256_utf8(SECRET + "\udfff"),
        lambda: contract_limits.wire_digest({"k": SECRET * 5000}),
        lambda: containers.deep_freeze(_cycle_with(SECRET)),
        lambda: wire_schema("AgentProfile").parse(("[" * 300 + json.dumps(SECRET)).encode()),
        lambda: wire_schema("AgentProfile").parse(('{"name":' + json.dumps(SECRET) + ",").encode()),
        lambda: canonical.canonical_digest(
            wire_schema("AgentProfile").to_wire(
                wire_schema("AgentProfile").parse(b'{"name":"' + SECRET.encode() + b'\\ud800"}')
            )
        ),
    ],
)
def test_refusals_of_core_functions_keep_no_input_value(call: Callable[[], Any]) -> None:
    error = _refusal(call)
    assert error is not None
    _assert_no_secret(error)


def _cycle_with(secret: str) -> Any:
    looped: dict[str, Any] = {"secret": secret}
    looped["self"] = looped
    return looped
