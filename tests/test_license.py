"""The MIT licence text ships with the repository and inside the built wheel."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_repository_carries_the_mit_text() -> None:
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License")
    assert "Permission is hereby granted, free of charge" in text


def test_wheel_carries_the_license(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path)]
    if importlib.util.find_spec("hatchling") is not None:
        command.append("--no-build-isolation")  # build offline with the installed backend
    subprocess.run([*command, str(ROOT)], check=True, capture_output=True)
    (wheel,) = tmp_path.glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        licenses = [name for name in archive.namelist() if name.endswith("/licenses/LICENSE")]
        assert len(licenses) == 1
        assert archive.read(licenses[0]) == (ROOT / "LICENSE").read_bytes()
        metadata = next(name for name in archive.namelist() if name.endswith("/METADATA"))
        assert "License-Expression: MIT" in archive.read(metadata).decode("utf-8")
        # the seeds behind agent_interface.testing.strategies ship too
        assert "agent_interface/testing/seeds.jsonl.gz" in archive.namelist()
