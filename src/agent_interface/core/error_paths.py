"""JSON Pointers for pydantic error locations, found in time linear in the document.

pydantic puts union member names, discriminator tags and validator names into an
error's location, between the real keys. Mapping a location back onto the document
means choosing which parts are keys. A part that is both a key and a tag (a ``"tool"``
part beside a ``tool`` field) is ambiguous, so every reading is scored: 2 for each part
read as a key, 1 for a key whose name is also a string value of its own object (it may
be the tag that selected that object), and 1 for a trailing key that is absent but that
a missing-field or custom rule names. The reading with the highest score wins; on a tie,
the reading that skips a part rather than take it, earliest first.

The score of a reading depends only on the node it ends at (the sum over the edges of
its path), never on which occurrences of a repeated part were used. So instead of
trying every subset of the parts (exponential when keys repeat), this module lists the
nodes whose path is a subsequence of the location, each once, and breaks ties between
equal scores by comparing their latest alignments, which is exactly the order the
"skip first" rule produces. Work is bounded: past :data:`PATH_WORK_LIMIT` steps a greedy
reading (take a part whenever it is a child) is used instead.

The common case needs no search: when every part is a key of the node before it and none
is also a string value of its object, that reading has the highest possible score and is
taken directly.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Sequence
from typing import Any, Final

__all__: list[str] = []  # used by core.errors only

PATH_WORK_LIMIT: Final = 200_000
"""Steps one location may take before the greedy reading is used instead."""


class _OverBudget(Exception):
    pass


class _Entry:
    """A node whose path is a subsequence of the location."""

    __slots__ = ("end", "key", "node", "parent", "score")

    def __init__(
        self, node: Any, end: int, score: int, parent: _Entry | None, key: str | int | None
    ) -> None:
        self.node = node
        self.end = end  # index of the last part of its earliest alignment (-1: the root)
        self.score = score
        self.parent = parent
        self.key = key

    def path(self) -> list[str | int]:
        keys: list[str | int] = []
        entry: _Entry | None = self
        while entry is not None and entry.parent is not None:
            assert entry.key is not None
            keys.append(entry.key)
            entry = entry.parent
        keys.reverse()
        return keys


def document_path(
    parts: Sequence[str | int],
    document: object,
    *,
    absent_ok: bool,
    missing: bool,
    names_absent_key: Callable[[dict[Any, Any], str | int], bool],
) -> list[str | int]:
    """The location parts that are real keys of ``document`` (see the module docstring)."""
    parts = list(parts)
    if not parts:
        return []
    if _plain_path(parts, document):
        return parts
    try:
        return _best_reading(parts, document, absent_ok, missing, names_absent_key)
    except _OverBudget:
        return _greedy_reading(parts, document)


_PLAIN_NODE_LIMIT: Final = 64
"""Objects larger than this leave the tag-value question to the full reading, which asks it
once per object however many issues it maps."""


def _plain_path(parts: list[str | int], document: object) -> bool:
    """Whether every part is a key of the node before it and none is also a string value
    of its object: that reading scores 2 per part, more than any other can, so it wins."""
    node = document
    for part in parts:
        if type(node) is dict:
            if type(part) is not str or part not in node or len(node) > _PLAIN_NODE_LIMIT:
                return False
            child = node[part]
            if any(value == part for value in node.values() if isinstance(value, str)):
                return False
            node = child
        elif type(node) is list or type(node) is tuple:
            if type(part) is not int or not 0 <= part < len(node):
                return False
            node = node[part]
        else:
            return False
    return True


def _occurrences(parts: list[str | int]) -> tuple[dict[str, list[int]], dict[int, list[int]]]:
    strings: dict[str, list[int]] = {}
    integers: dict[int, list[int]] = {}
    for index, part in enumerate(parts):
        if type(part) is str:
            strings.setdefault(part, []).append(index)
        elif type(part) is int:
            integers.setdefault(part, []).append(index)
    return strings, integers


def _next_after(positions: list[int], end: int) -> int:
    index = bisect_right(positions, end)
    return positions[index] if index < len(positions) else -1


def _best_reading(
    parts: list[str | int],
    document: object,
    absent_ok: bool,
    missing: bool,
    names_absent_key: Callable[[dict[Any, Any], str | int], bool],
) -> list[str | int]:
    last = len(parts) - 1
    strings, integers = _occurrences(parts)
    budget = [PATH_WORK_LIMIT]
    tag_values: dict[int, frozenset[str]] = {}

    def spend(steps: int) -> None:
        budget[0] -= steps
        if budget[0] < 0:
            raise _OverBudget

    def is_tag_value(node: dict[Any, Any], key: str) -> bool:
        values = tag_values.get(id(node))
        if values is None:
            spend(len(node))
            values = frozenset(value for value in node.values() if isinstance(value, str))
            tag_values[id(node)] = values
        return key in values

    root = _Entry(document, -1, 0, None, None)
    entries = [root]
    pending = [root]
    while pending:
        entry = pending.pop()
        node = entry.node
        if isinstance(node, dict):
            for key, end in _dict_children(node, entry.end, strings, spend):
                gain = 1 if is_tag_value(node, key) else 2
                child = _Entry(node[key], end, entry.score + gain, entry, key)
                entries.append(child)
                pending.append(child)
        elif isinstance(node, (list, tuple)):
            size = len(node)
            spend(len(integers))
            for index, positions in integers.items():
                if 0 <= index < size:
                    end = _next_after(positions, entry.end)
                    if end >= 0:
                        child = _Entry(node[index], end, entry.score + 2, entry, index)
                        entries.append(child)
                        pending.append(child)

    # Each candidate: an entry, and whether the last part is read as an absent key.
    best_score = max(entry.score for entry in entries)
    candidates: list[tuple[_Entry, bool]] = [
        (entry, False) for entry in entries if entry.score == best_score
    ]
    if absent_ok:
        final = parts[last]
        for entry in entries:
            node = entry.node
            if (
                entry.end < last
                and isinstance(node, dict)
                and entry.score + 1 >= best_score
                and not (isinstance(final, str) and final in node)
                and (missing or names_absent_key(node, final))
            ):
                if entry.score + 1 > best_score:
                    best_score = entry.score + 1
                    candidates = []
                candidates.append((entry, True))
    spend(len(candidates))
    winner = max(candidates, key=lambda item: _latest_alignment(item[0], item[1], parts, spend))
    entry, absent = winner
    path = entry.path()
    if absent:
        path.append(parts[last])
    return path


def _dict_children(
    node: dict[Any, Any],
    end: int,
    strings: dict[str, list[int]],
    spend: Callable[[int], None],
) -> list[tuple[str, int]]:
    """``(key, earliest position after end)`` of every child whose key occurs later."""
    found: list[tuple[str, int]] = []
    if len(node) <= len(strings) and all(type(key) is str for key in node):
        spend(len(node))
        for key in node:
            positions = strings.get(key)
            if positions is not None:
                position = _next_after(positions, end)
                if position >= 0:
                    found.append((key, position))
        return found
    spend(len(strings))
    for part, positions in strings.items():
        if part in node:
            position = _next_after(positions, end)
            if position >= 0:
                found.append((part, position))
    return found


def _latest_alignment(
    entry: _Entry, absent: bool, parts: list[str | int], spend: Callable[[int], None]
) -> tuple[float, ...]:
    """The positions of ``entry``'s path matched as late as possible, then a sentinel: of
    two readings with equal scores, the larger tuple is the one the rule prefers."""
    keys = entry.path()
    spend(len(keys) + 1)
    limit = len(parts) - (1 if absent else 0)  # positions below limit are free
    positions: list[float] = []
    for key in reversed(keys):
        index = limit - 1
        while index >= 0 and not (type(parts[index]) is type(key) and parts[index] == key):
            index -= 1
        positions.append(index)
        limit = index
    positions.reverse()
    if absent:
        positions.append(len(parts) - 1)
    positions.append(float("inf"))
    return tuple(positions)


def _greedy_reading(parts: list[str | int], document: object) -> list[str | int]:
    path: list[str | int] = []
    node: Any = document
    for part in parts:
        in_object = isinstance(node, dict) and isinstance(part, str) and part in node
        in_array = isinstance(node, (list, tuple)) and type(part) is int and 0 <= part < len(node)
        if in_object or in_array:
            node = node[part]
            path.append(part)
    return path

