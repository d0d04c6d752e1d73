"""Regenerate ``src/agent_interface/testing/seeds.jsonl.gz`` from the golden files.

A seed is a wire document the reference accepted (recorded under ``tests/golden``) and,
for schemas this package registers, that the package accepts too. Per schema the
documents that add the most new shape (paths, JSON types, tag values) are kept, so a few
seeds reach every union member and optional field the recorded documents use.

Run: ``.venv/bin/python scripts/collect_seeds.py``.
"""

from __future__ import annotations

import gzip
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from agent_interface.core.errors import ContractError
from agent_interface.core.registry import wire_schemas

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden"
TARGET = ROOT / "src" / "agent_interface" / "testing" / "seeds.jsonl.gz"
PER_SCHEMA = 8
TAG_KEYS = frozenset({"type", "kind", "status", "state", "outcome", "mode", "role", "decision"})


def recorded() -> dict[str, list[Any]]:
    """Every reference-accepted document in the golden files, by schema."""
    found: dict[str, list[Any]] = defaultdict(list)
    # Every gzipped golden file of schema verdicts (``schema``, ``value``, ``ok`` per line).
    for path in sorted(GOLDEN.glob("*.jsonl.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            for line in handle:
                case = json.loads(line)
                if case.get("ok") is True and isinstance(case.get("schema"), str) and "value" in case:
                    found[case["schema"]].append(case["value"])
    for path in sorted(GOLDEN.glob("*_parity.jsonl")):
        with path.open(encoding="utf-8") as handle:
            for line in handle:
                case = json.loads(line)
                if case.get("schema") and case.get("accepted") and "doc" in case:
                    found[case["schema"]].append(case["doc"])
    for manifest in sorted((ROOT / "examples").glob("*/manifest.json")):
        for row in json.loads(manifest.read_text(encoding="utf-8")):
            if row.get("expect") == "accepted":
                document = json.loads((manifest.parent / row["file"]).read_text(encoding="utf-8"))
                found[row["schema"]].append(document)
    return found


def subtrees(value: Any) -> Any:
    yield value
    if isinstance(value, dict):
        for item in value.values():
            yield from subtrees(item)
    elif isinstance(value, list):
        for item in value:
            yield from subtrees(item)


def harvest(found: dict[str, list[Any]], schemas: Any) -> None:
    """Seed schemas no golden line names with the parts of other seeds they accept."""
    seedless = [name for name in schemas if not found.get(name)]
    pieces: dict[str, Any] = {}
    for documents in list(found.values()):
        for document in documents:
            for piece in subtrees(document):
                if isinstance(piece, (dict, list, str)):
                    pieces.setdefault(json.dumps(piece, sort_keys=True), piece)
    for name in seedless:
        for piece in pieces.values():
            try:
                schemas[name].parse_value(piece)
            except ContractError:
                continue
            found[name].append(piece)


def shape(value: Any, path: str = "") -> set[str]:
    features = {f"{path}:{type(value).__name__}"}
    if isinstance(value, dict):
        for key, item in value.items():
            if key in TAG_KEYS and isinstance(item, str):
                features.add(f"{path}/{key}={item}")
            features |= shape(item, f"{path}/{key}")
    elif isinstance(value, list):
        for item in value:
            features |= shape(item, f"{path}/*")
    return features


def encodable(value: Any) -> bool:
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False  # a lone surrogate: JSON bytes cannot carry it
    return True


def select(documents: list[Any]) -> list[Any]:
    chosen: list[Any] = []
    covered: set[str] = set()
    pool = [(document, shape(document)) for document in documents]
    while pool and len(chosen) < PER_SCHEMA:
        best = max(range(len(pool)), key=lambda i: (len(pool[i][1] - covered), -i))
        document, features = pool.pop(best)
        if chosen and not features - covered:
            break
        chosen.append(document)
        covered |= features
    return chosen


def main() -> None:
    schemas = wire_schemas()
    lines = []
    found = recorded()
    harvest(found, schemas)
    for name, documents in sorted(found.items()):
        unique = {json.dumps(document, sort_keys=True): document for document in documents}
        usable = [document for document in unique.values() if encodable(document)]
        if name in schemas:
            kept = []
            for document in usable:
                try:
                    schemas[name].parse(json.dumps(document).encode("utf-8"))
                except ContractError:
                    continue
                kept.append(document)
            usable = kept
        for document in select(usable):
            lines.append(json.dumps({"schema": name, "value": document}, ensure_ascii=False))
    with gzip.GzipFile(TARGET, "wb", mtime=0) as handle:
        handle.write(("\n".join(lines) + "\n").encode("utf-8"))
    print(f"wrote {len(lines)} seeds to {TARGET.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
