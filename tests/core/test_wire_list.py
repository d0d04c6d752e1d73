"""WireList reads JSON arrays as tuples in pydantic-core and takes lists from Python."""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from pydantic import BeforeValidator, Field

from agent_interface.core.errors import ContractError
from agent_interface.core.model import WireList, WireModel, wire_adapter


def _passthrough(value: Any) -> Any:
    return value


class _Inner(WireModel):
    items: Annotated[WireList[int], Field(max_length=2)]


class _Outer(WireModel):
    # A Python validator above the list: pydantic-core hands it a Python list.
    inner: Annotated[_Inner, BeforeValidator(_passthrough)]


def test_json_array_and_python_list_become_tuples() -> None:
    adapter = wire_adapter(_Inner)
    assert adapter.parse(b'{"items": [1, 2]}').items == (1, 2)
    assert adapter.parse_value({"items": [1, 2]}).items == (1, 2)
    assert adapter.parse_value({"items": (1, 2)}).items == (1, 2)


def test_array_under_a_python_validator_from_json_text() -> None:
    assert wire_adapter(_Outer).parse(b'{"inner": {"items": [3]}}').inner.items == (3,)


@pytest.mark.parametrize(
    ("document", "code"),
    [
        (b'{"items": [1, 2, 3]}', "too_long"),
        (b'{"items": ["1"]}', "int_type"),
        (b'{"items": {"a": 1}}', "tuple_type"),
    ],
)
def test_refusals_from_json(document: bytes, code: str) -> None:
    with pytest.raises(ContractError) as caught:
        wire_adapter(_Inner).parse(document)
    assert caught.value.issues[0].code == code


def test_a_python_set_is_not_an_array() -> None:
    with pytest.raises(ContractError) as caught:
        wire_adapter(_Inner).parse_value({"items": {1, 2}})
    assert caught.value.issues[0].code == "tuple_type"
