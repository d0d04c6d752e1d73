"""What :class:`~agent_interface.core.model.WireAdapter` does once pydantic refuses a document.

A refusal becomes a :class:`~agent_interface.core.errors.ContractError` in bounded time
and memory, and only after two second readings that JavaScript's ``JSON.parse`` would
make (``core.json_text``): text pydantic-core's parser cannot read (a lone-surrogate
escape, nesting past its limit), and text with a repeated key, whose last value wins.

Every function here builds its error outside any ``except`` block and returns it (or
raises it from no handler): pydantic's ``ValidationError``, which holds the input, never
becomes the ``__context__`` of the refusal.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, Final, Protocol, TypeVar

from pydantic import TypeAdapter, ValidationError
from pydantic_core import SchemaValidator

from agent_interface.core.bounded_validation import MAP_MARK, within_nodes
from agent_interface.core.errors import (
    MAX_READ_ERRORS,
    MAX_REPORTED_ISSUES,
    ContractError,
    ContractIssue,
    contract_error_from_validation,
    custom_code,
)
from agent_interface.core.json_text import (
    MAX_DOCUMENT_DEPTH,
    NOT_JSON,
    TOO_DEEP,
    load_last_wins,
    may_repeat,
    reread,
)

__all__: list[str] = []  # used by core.model only

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


class WireAdapter(Protocol[T_co]):
    """What a refusal needs of ``core.model.WireAdapter``."""

    @property
    def name(self) -> str | None: ...

    @property
    def adapter(self) -> TypeAdapter[Any]: ...

    @property
    def labelled_validator(self) -> SchemaValidator: ...

    def parse_value(self, value: Any) -> T_co: ...

WIRE_CONTEXT: Any = {"wire": True}
"""Validation context of a parsed value: the wire rules apply (null refused). Validators
compare it by identity (``core.model``)."""

WIRE_TEXT_CONTEXT: Any = {"wire": True, "json_text": True}
"""The wire context for a document parsed from JSON text by pydantic-core, whose parser
refuses lone surrogates (escaped or raw): every string and key it hands over is well-formed."""


_QUIET_HOOK: list[Any] = [None]


def quiet_unraisables(inside: Callable[[], bool]) -> None:
    """Keep off standard error what pydantic-core reports as "exception ignored" while
    validating: it renders a refused discriminator value with ``repr``, and the ``repr``
    of a hostile value (an integer too long to print, a value nested past the recursion
    limit, a ``str`` subclass whose ``__str__`` fails) raises. Outside ``inside()`` every
    report still reaches the hook that was installed before."""
    current = sys.unraisablehook
    if current is _QUIET_HOOK[0]:
        return

    def hook(unraisable: Any) -> None:
        if not inside():
            current(unraisable)

    _QUIET_HOOK[0] = hook
    sys.unraisablehook = hook


def too_deep(subject: str | None) -> ContractError:
    """The refusal of a document nested deeper than the document limit."""
    return ContractError(
        [ContractIssue("", "too_deep", f"the document nests deeper than {MAX_DOCUMENT_DEPTH} levels")],
        subject=subject,
    )


def unreadable_text(exc: ValidationError) -> bool:
    """True when ``exc`` refuses the JSON text itself, not a value in it."""
    if exc.error_count() != 1:
        return False
    return exc.errors(include_url=False, include_context=False, include_input=False)[0][
        "type"
    ] == "json_invalid"


def text_refusal(
    adapter: WireAdapter[T],
    failures: list[ValidationError],
    data: bytes | bytearray | str,
    *,
    large: bool,
) -> T:
    """The verdict on JSON text pydantic refused: the value of a second reading where
    ``JSON.parse`` reads the text differently, else the refusal raised. The error comes in
    a list that this function empties: pydantic's error holds what it converted of the
    input, which must not outlive it while the text is read again."""
    exc = failures.pop()
    if unreadable_text(exc):
        del exc
        value = reread(data)
        if value is TOO_DEEP:
            raise too_deep(adapter.name)
        if value is NOT_JSON:
            raise ContractError(
                [ContractIssue("", "json_invalid", "input is not valid JSON")], subject=adapter.name
            )
        return adapter.parse_value(value)
    if large and exc.error_count() > MAX_READ_ERRORS:
        # Too many issues to list (an object with that many unknown keys): the count.
        error = contract_error_from_validation(exc, subject=adapter.name)
        del exc
        raise error
    if large:
        del exc
        labelled, needs_document = _labelled_failure(adapter, data)
        if not needs_document:
            raise contract_error_from_validation(labelled, subject=adapter.name, labelled=True)
        document, repeated = load_last_wins(data)
        error = contract_error_from_validation(
            labelled, subject=adapter.name, labelled=True, document=document
        )
        del labelled
    else:
        document, repeated = load_last_wins(data)
        error = (
            contract_error_from_validation(exc, subject=adapter.name)
            if document is NOT_JSON
            else contract_error_from_validation(exc, subject=adapter.name, document=document)
        )
        del exc
    if repeated:
        # JSON.parse keeps the last value of a repeated key: so does the verdict.
        return adapter.parse_value(document)
    raise error


_KEYS_LOOKED_UP: Final = 64
"""Keys of refused map entries looked up in a large text; with more, it is read whole."""


def _labelled_failure(
    adapter: WireAdapter[Any], data: bytes | bytearray | str
) -> tuple[ValidationError, bool]:
    """A large text's refusal by the labelled validator, and whether mapping it needs the
    document: an issue inside a map (a repeated key may explain it) or of a custom rule
    (its location may name an absent key, which only the document shows)."""
    failure: ValidationError | None = None
    try:
        adapter.labelled_validator.validate_json(
            data, by_alias=True, by_name=False, context=WIRE_TEXT_CONTEXT
        )
    except ValidationError as exc:
        failure = exc
    if failure is None:  # the bounded validator refused this very text
        raise ContractError.single("", "invalid", "the document is refused", subject=adapter.name)
    if failure.error_count() > MAX_READ_ERRORS:
        return failure, False
    errors = failure.errors(include_url=False, include_context=False, include_input=False)
    if any(custom_code(error) for error in errors[:MAX_REPORTED_ISSUES]):
        return failure, True
    map_keys = {
        loc[index - 1]
        for error in errors
        for loc in (error["loc"],)
        for index, part in enumerate(loc)
        if part == MAP_MARK and index > 0
    }
    if len(map_keys) > _KEYS_LOOKED_UP:
        return failure, True
    return failure, any(may_repeat(data, key) for key in map_keys if isinstance(key, str))


def value_refusal(adapter: WireAdapter[Any], exc: ValidationError, value: Any) -> ContractError:
    """The refusal of a parsed value the bounded validator refused with ``exc``. A small
    value is validated again by the precise validator, which lists every issue."""
    full = None
    if within_nodes(value):
        try:
            adapter.adapter.validate_python(
                value, by_alias=True, by_name=False, context=WIRE_CONTEXT
            )
        except ValidationError as again:
            full = again
        except Exception:  # a non-JSON object the first validation got past: its issues
            full = None
    return contract_error_from_validation(full or exc, subject=adapter.name, document=value)


_JSON_SCALARS: Final = frozenset({str, int, float, bool, type(None)})
_JSON_CONTAINERS: set[type] = {dict, list, tuple}


def plain_json_container(kind: type) -> None:
    """Count ``kind`` (the package's frozen map) as a plain JSON container."""
    _JSON_CONTAINERS.add(kind)


def is_plain_json(value: Any) -> bool:
    """True when ``value`` holds only ``dict`` (string keys), ``list``, ``tuple``, ``str``,
    ``int``, ``float``, ``bool`` and ``None``, exactly those types (and frozen maps)."""
    pending = [value]
    while pending:
        current = pending.pop()
        kind = type(current)
        if kind in _JSON_SCALARS:
            continue
        if kind in _JSON_CONTAINERS:
            if isinstance(current, dict):
                if any(type(key) is not str for key in dict.keys(current)):
                    return False
                pending.extend(dict.values(current))
            else:
                pending.extend(current)
            continue
        return False
    return True


def foreign_value_refusal(subject: str | None, value: Any) -> ContractError | None:
    """The refusal of a value a validator could not read, or None when the value is
    plain JSON (then the failure is a bug, not the input's fault)."""
    try:
        plain = is_plain_json(value)
    except Exception:  # its very containers cannot be read
        plain = False
    if not plain:
        return ContractError.single(
            "", "not_json", "the value holds an object that is not JSON", subject=subject
        )
    return None
