"""JSON text read the way JavaScript's ``JSON.parse`` reads it, where pydantic's parser differs.

Three differences, each handled by reading the text again, so a document's verdict does
not depend on whether it arrived as JSON text or as a parsed value:

* **Lone surrogates.** pydantic-core refuses a ``\\uD800``-style escape of a lone
  surrogate as invalid JSON; ``JSON.parse`` accepts it, and zod then accepts the string.
* **Nesting.** pydantic-core's parser stops at 200 levels. Text up to
  :data:`MAX_DOCUMENT_DEPTH` levels is read again with Python's ``json``; deeper text is
  refused with ``too_deep`` (the limit a parsed value meets too), never read.
* **Duplicate keys.** ``JSON.parse`` keeps the last value of a repeated key. pydantic-core
  does so for model fields but validates every occurrence in a map, so a bad first
  occurrence refuses the document. A refused text with a repeated key is validated again
  as the value ``JSON.parse`` gives.

Nothing else changes: ``NaN`` and ``Infinity`` stay invalid, as in JavaScript.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from itertools import accumulate
from typing import Any, Final

from agent_interface.core.canonical import MAX_CANONICAL_DEPTH

__all__: list[str] = []  # used by core.model only

MAX_DOCUMENT_DEPTH: Final = MAX_CANONICAL_DEPTH
"""Arrays and objects nest at most this many levels in a document (the document itself is
level 1), read from text or given as a value; every accepted document then digests."""

NOT_JSON: Any = object()
"""Returned by :func:`reread` when the text gets no second reading."""

TOO_DEEP: Any = object()
"""Returned by :func:`reread` when the text nests deeper than :data:`MAX_DOCUMENT_DEPTH`."""

_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKETS = bytes(byte for byte in range(256) if byte not in b"[]{}")
_DELTA = tuple(1 if byte in b"[{" else -1 if byte in b"]}" else 0 for byte in range(256))
_PARSER_DEPTH: Final = 200  # pydantic-core's own limit; deeper valid text is read here


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _raw(data: bytes | bytearray | str) -> bytes:
    return data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)


def nesting_depth(raw: bytes) -> int:
    """Deepest nesting of arrays and objects in JSON text (strings skipped), counted
    without recursion so any depth is measured."""
    brackets = _STRING.sub(b"", raw).translate(None, _NOT_BRACKETS)
    return max(accumulate(map(_DELTA.__getitem__, brackets)), default=0)


def reread(data: bytes | bytearray | str) -> Any:
    """The value of JSON ``data`` that pydantic-core refused only for a lone-surrogate
    escape or for nesting deeper than its parser reads; :data:`TOO_DEEP` for text nested
    deeper than :data:`MAX_DOCUMENT_DEPTH`; :data:`NOT_JSON` otherwise (the refusal stands)."""
    raw = _raw(data)
    if raw.startswith(b"\xef\xbb\xbf"):
        return NOT_JSON
    if raw.count(b"[") + raw.count(b"{") > _PARSER_DEPTH:
        depth = nesting_depth(raw)
        if depth > MAX_DOCUMENT_DEPTH:
            return TOO_DEEP
        deep = depth > _PARSER_DEPTH - 8
    else:
        deep = False
    if not deep and not _SURROGATE_ESCAPE.search(raw):
        return NOT_JSON
    try:
        return json.loads(raw.decode("utf-8"), parse_constant=_refuse_constant)
    except (ValueError, RecursionError):
        return NOT_JSON


class _Duplicates:
    """``object_pairs_hook`` that keeps the last value of a key, as ``JSON.parse`` does,
    and remembers whether any key was repeated."""

    __slots__ = ("found",)

    def __init__(self) -> None:
        self.found = False

    def __call__(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        value = dict(pairs)
        if len(value) != len(pairs):
            self.found = True
        return value


def may_repeat(data: bytes | bytearray | str, key: str) -> bool:
    """False only when ``key`` is written once as an object key in JSON ``data``: then
    no object repeats it. (Text with any escape sequence may spell a key two ways, so
    it answers True and the caller reads the text whole.)"""
    raw = _raw(data)
    if b"\\" in raw:
        return True
    written = json.dumps(key, ensure_ascii=False).encode("utf-8", "surrogatepass")
    spelled = re.compile(re.escape(written) + rb"\s*:")
    first = spelled.search(raw)
    return first is not None and spelled.search(raw, first.end()) is not None


def load_last_wins(data: bytes | bytearray | str) -> tuple[Any, bool]:
    """The value ``JSON.parse`` gives for JSON ``data`` that pydantic-core parsed, and
    whether a key was repeated in one of its objects. ``(NOT_JSON, False)`` if Python's
    reader refuses it."""
    hook = _Duplicates()
    try:
        value = json.loads(_raw(data).decode("utf-8", "surrogatepass"), object_pairs_hook=hook)
    except (ValueError, RecursionError):
        return NOT_JSON, False
    return value, hook.found


_SCALARS: Final = frozenset({str, int, float, bool, type(None)})


def nesting_exceeds(value: Any, limit: int = MAX_DOCUMENT_DEPTH) -> bool:
    """True when the parsed ``value`` nests arrays and objects deeper than ``limit``
    levels (a value that contains itself does). Walked without recursion, in memory
    proportional to the depth; a container of plain scalars only is skipped in one C pass."""
    stack: list[Iterator[Any]] = [iter((value,))]
    try:
        while stack:
            for member in stack[-1]:
                if isinstance(member, dict):
                    members: Any = member.values()
                elif isinstance(member, (list, tuple)):
                    members = member
                else:
                    continue
                if len(stack) > limit:
                    return True
                if not _SCALARS.issuperset(map(type, members)):
                    stack.append(iter(members))
                    break
            else:
                stack.pop()
    except Exception:  # a hostile container: treat it as too deep to read
        return True
    return False
