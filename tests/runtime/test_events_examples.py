"""The documents under examples/events validate (or are refused) as their README says,
and their digests are the pinned ones."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from agent_interface.core.canonical import canonical_digest
from agent_interface.core.errors import ContractError
from agent_interface.core.registry import wire_schemas

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "events"
ROW = re.compile(r"^\| `(?P<file>[^`]+)` \| (?P<schema>\w+) \| (?P<valid>[^|]+) \| `(?P<digest>sha256:[0-9a-f]{64})` \|(?P<embedded>[^|]*)\|$")


def rows() -> list[dict[str, str]]:
    found = [m.groupdict() for line in (EXAMPLES / "README.md").read_text().splitlines() if (m := ROW.match(line))]
    assert len(found) == len([p for p in EXAMPLES.glob("*.json") if p.name != "manifest.json"])
    return found


@pytest.mark.parametrize("row", rows(), ids=lambda row: row["file"])
def test_example(row: dict[str, str]) -> None:
    raw = (EXAMPLES / row["file"]).read_bytes()
    document = json.loads(raw)
    assert canonical_digest(document) == row["digest"]
    adapter = wire_schemas()[row["schema"]]
    if row["valid"].strip() == "yes":
        parsed = adapter.parse(raw)
        assert adapter.to_wire(parsed) == document
        embedded = row["embedded"].strip().strip("`")
        if embedded.startswith("sha256:"):
            assert embedded in (document.get("requestDigest"), document.get("commandDigest"))
    else:
        assert row["file"].startswith("invalid-")
        pointer, code = re.findall(r"`([^`]*)`", row["valid"])
        with pytest.raises(ContractError) as caught:
            adapter.parse(raw)
        assert [(i.path, i.code) for i in caught.value.issues] == [(pointer, code)]
