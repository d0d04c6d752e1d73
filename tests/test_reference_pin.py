"""One pinned reference: the package constant, the golden manifest and every golden file agree."""

from __future__ import annotations

import json
import re
from pathlib import Path

import agent_interface
from agent_interface.core.reference import REFERENCE_COMMIT, REFERENCE_PACKAGE, REFERENCE_VERSION

GOLDEN = Path(__file__).resolve().parent / "golden"
MANIFEST = json.loads((GOLDEN / "MANIFEST.json").read_text(encoding="utf-8"))


def test_root_exports_the_pinned_reference() -> None:
    assert agent_interface.REFERENCE_VERSION == REFERENCE_VERSION == "1.6.0"
    assert re.fullmatch(r"[0-9]+\.[0-9]+\.[0-9]+", REFERENCE_VERSION)
    assert re.fullmatch(r"[0-9a-f]{40}", REFERENCE_COMMIT)


def test_manifest_names_the_pinned_reference() -> None:
    reference = MANIFEST["reference"]
    assert reference["package"] == REFERENCE_PACKAGE
    assert reference["version"] == REFERENCE_VERSION
    assert reference["commit"] == REFERENCE_COMMIT


def test_every_golden_file_names_the_pinned_version() -> None:
    files = MANIFEST["files"]
    present = {path.name for path in GOLDEN.iterdir() if path.is_file() and path.name != "MANIFEST.json"}
    unlisted = sorted(present - set(files))
    assert not unlisted, f"add these golden files to tests/golden/MANIFEST.json: {unlisted}"
    assert sorted(set(files) - present) == [], "MANIFEST.json lists files that do not exist"
    for name, entry in files.items():
        assert entry["reference"] == REFERENCE_VERSION, name
        named = re.match(r"reference-([0-9]+\.[0-9]+\.[0-9]+)-", name)
        if named:
            assert named.group(1) == REFERENCE_VERSION, name
