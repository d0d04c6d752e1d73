"""The immutable containers wire models hold: frozen maps, arrays as tuples, zod integers.

:class:`FrozenDict` is a ``dict`` that refuses mutation; :data:`WireList` is a JSON array
held as a tuple (lists accepted on input); :data:`WireMap` a JSON object with free keys
held as a ``FrozenDict``; :data:`WireInt` an integer read as zod's ``z.number().int()``
reads it (a safe integer, ``core.numbers``). :func:`deep_freeze` and :func:`thaw` convert
whole JSON-like values and refuse, with a ``ContractError``, what they cannot copy: a value
that contains itself, one nested deeper than the call stack allows, a container whose own
methods fail.
"""

from __future__ import annotations

from typing import Annotated, Any, NoReturn, Self, TypeVar

from pydantic import AfterValidator, GetCoreSchemaHandler
from pydantic_core import core_schema

from agent_interface.core.errors import ContractError, ContractIssue
from agent_interface.core.fast_schema import Derivation, core_equivalent, inner_schema
from agent_interface.core.numbers import SafeInt
from agent_interface.core.refusal import plain_json_container
from agent_interface.core.surrogate_text import marker_transparent

__all__ = [
    "FrozenDict",
    "WireInt",
    "WireList",
    "WireMap",
    "deep_freeze",
    "thaw",
]

K = TypeVar("K")
V = TypeVar("V")
T = TypeVar("T")


class FrozenDict(dict[K, V]):
    """A ``dict`` that refuses mutation; hashable when its values are."""

    __slots__ = ()

    def _immutable(self, *_args: object, **_kwargs: object) -> NoReturn:
        raise TypeError("FrozenDict is immutable")

    __setitem__ = _immutable
    __delitem__ = _immutable
    clear = _immutable
    pop = _immutable
    popitem = _immutable
    setdefault = _immutable
    update = _immutable
    __ior__ = _immutable

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(sorted(self.items(), key=lambda item: repr(item[0]))))

    def __repr__(self) -> str:
        return f"FrozenDict({dict.__repr__(self)})"

    def __copy__(self) -> Self:
        return self

    def __deepcopy__(self, _memo: object) -> Self:
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenDict, (dict(self),))


plain_json_container(FrozenDict)


def deep_freeze(value: Any) -> Any:
    """A deeply immutable copy of a JSON-like value (``deepFreeze``): every dict becomes a
    :class:`FrozenDict`, every list or tuple a tuple, at every depth. Validated evidence
    (a profile snapshot, a capability document) handed out this way cannot be changed after
    the check that made it trustworthy. Scalars, and wire models (already frozen), are
    returned as they are; the input is not modified. Unlike JavaScript's in-place freeze
    this builds a copy, so a value that contains itself cannot be represented: it is
    refused with a :class:`ContractError` (``cycle``, a ``ValueError``), as are a value
    nested deeper than the call stack allows (``too_deep``) and a container whose own
    methods fail (``not_json``)."""
    issue: ContractIssue | None = None
    try:
        return _deep_freeze(value, frozenset())
    except _Cycle:
        issue = ContractIssue("", "cycle", "the value contains itself")
    except RecursionError:
        issue = ContractIssue("", "too_deep", "the value is nested too deeply to copy")
    except Exception:  # a container whose own methods fail
        issue = ContractIssue("", "not_json", "the value holds an object that cannot be read")
    raise ContractError([issue])


class _Cycle(Exception):
    pass


def _deep_freeze(value: Any, ancestors: frozenset[int]) -> Any:
    if not isinstance(value, (dict, list, tuple)):
        return value
    if id(value) in ancestors:
        raise _Cycle
    inner = ancestors | {id(value)}
    if isinstance(value, dict):
        return FrozenDict({key: _deep_freeze(item, inner) for key, item in value.items()})
    return tuple(_deep_freeze(item, inner) for item in value)


def thaw(value: Any) -> Any:
    """Plain ``dict``/``list`` copy of a frozen JSON value (a value nested deeper than the
    call stack allows, or holding a container whose own methods fail, is refused with a
    :class:`ContractError`)."""
    issue: ContractIssue | None = None
    try:
        return _thaw(value)
    except RecursionError:
        issue = ContractIssue("", "too_deep", "the value is nested too deeply to copy")
    except Exception:  # a container whose own methods fail
        issue = ContractIssue("", "not_json", "the value holds an object that cannot be read")
    raise ContractError([issue])


def _thaw(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _thaw(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_thaw(item) for item in value]
    return value


@marker_transparent  # looks at the container type only (core.surrogate_text)
def _as_tuple(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


def _as_frozen_dict(value: dict[Any, Any]) -> FrozenDict[Any, Any]:
    return value if isinstance(value, FrozenDict) else FrozenDict(value)


WireInt = SafeInt
"""An integer as zod's ``z.number().int()`` reads it (``core.numbers``): a safe integer,
``2.0`` and ``2e0`` accepted as 2."""

# A JSON array is read as a tuple by the inner schema itself.
core_equivalent(_as_tuple)(inner_schema)


class _ListAsTuple:
    """Python input may give a list for a tuple; JSON arrays are read as tuples directly.

    (A plain ``BeforeValidator`` would make pydantic-core turn every JSON array into a
    Python list, and its members into Python objects, before validating them again.)
    """

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        inner = handler(source)
        python = core_schema.no_info_before_validator_function(_as_tuple, inner)
        if inner["type"] != "tuple":
            return python
        # A parent's Python validator can hand a JSON document's array on as a list: the
        # JSON branch takes that list too (its members keep their own strict schemas).
        return core_schema.json_or_python_schema(
            json_schema={**inner, "strict": False}, python_schema=python
        )


WireList = Annotated[tuple[T, ...], _ListAsTuple()]
"""A JSON array held as a tuple. Lists are accepted on input."""

@core_equivalent(_as_frozen_dict)
def _frozen_dict_call(_owner: Any, node: dict[str, Any], _derivation: Derivation) -> dict[str, Any]:
    # From JSON the dict is always a plain one: the class is called without a Python frame.
    return {**node, "function": {"type": "no-info", "function": FrozenDict}}


WireMap = Annotated[dict[str, V], AfterValidator(_as_frozen_dict)]
"""A JSON object with arbitrary string keys, held as a :class:`FrozenDict`."""

