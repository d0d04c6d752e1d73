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
from functools import cache
from importlib import resources
from typing import Any

__all__ = ["seed_documents", "seeded_schemas"]


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


def seeded_schemas() -> frozenset[str]:
    """Names (reference export names without ``Schema``) that have seed documents."""
    return frozenset(_seeds())
