"""Accepted wire documents to start generation from, one small set per schema.

The documents come from the golden files under ``tests/golden`` (accepted by the
reference 1.6.0), the bundled examples (three of which use fields newer than 1.6.0), and,
for schemas no golden line names, the parts of those documents such a schema accepts.
For every schema the package registers, the package accepts each seed;
``scripts/collect_seeds.py`` picks the few per schema that cover the most shape. Schemas
registered later (other families) find their reference-accepted seeds here too.
"""

from __future__ import annotations

import copy
import gzip
import json
from collections import defaultdict
from collections.abc import Callable, Iterator
from functools import cache
from importlib import resources
from typing import Any

__all__ = ["harvest_seed_documents", "seed_documents", "seeded_schemas"]


@cache
def _seeds() -> dict[str, tuple[Any, ...]]:
    found: dict[str, list[Any]] = defaultdict(list)
    data = resources.files("agent_interface.testing").joinpath("seeds.jsonl.gz").read_bytes()
    for line in gzip.decompress(data).decode("utf-8").split("\n"):
        if line:
            row = json.loads(line)
            found[row["schema"]].append(row["value"])
    return {name: tuple(documents) for name, documents in found.items()}


def seed_documents(name: str) -> list[Any]:
    """Fresh copies of the seed documents of schema ``name`` (empty when there are none)."""
    return copy.deepcopy(list(_seeds().get(name, ())))


def _pieces(value: Any) -> Iterator[Any]:
    if isinstance(value, (dict, list, str)):
        yield value
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    for item in items:
        yield from _pieces(item)


@cache
def _all_pieces() -> tuple[Any, ...]:
    unique: dict[str, Any] = {}
    for documents in _seeds().values():
        for document in documents:
            for piece in _pieces(document):
                unique.setdefault(json.dumps(piece, sort_keys=True), piece)
    return tuple(unique.values())


def harvest_seed_documents(accepts: Callable[[Any], bool], limit: int = 8) -> list[Any]:
    """Fresh copies of up to ``limit`` parts of any seed (whole documents included) that
    ``accepts`` takes: seeds for a schema that has none of its own."""
    found: list[Any] = []
    for piece in _all_pieces():
        if accepts(piece):
            found.append(copy.deepcopy(piece))
            if len(found) >= limit:
                break
    return found


def seeded_schemas() -> frozenset[str]:
    """Names (reference export names without ``Schema``) that have seed documents."""
    return frozenset(_seeds())
