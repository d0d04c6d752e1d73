"""Every command and Python block of ``docs/guide/candidates.md`` runs as written, in order,
in one scratch directory, with ``agent-interface`` on ``PATH``; a ``#   text`` line under a
command is output the block must print."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import types
from pathlib import Path

import pytest

from agent_interface.evaluator.process.isolation import detect_local_isolation

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "guide" / "candidates.md"
BLOCK = re.compile(r"^```(sh|python)\n(.*?)^```$", re.MULTILINE | re.DOTALL)
EXPECTED = re.compile(r"^#   (.+)$", re.MULTILINE)


def blocks() -> list[tuple[str, str]]:
    """The page's ``sh`` and ``python`` blocks, in order."""
    return [(match.group(1), match.group(2)) for match in BLOCK.finditer(PAGE.read_text(encoding="utf-8"))]


def test_the_page_has_commands_and_python() -> None:
    kinds = [kind for kind, _ in blocks()]
    assert kinds.count("sh") >= 6 and kinds.count("python") >= 3


@pytest.mark.skipif(not asyncio.run(detect_local_isolation()).blocks_egress, reason="no network namespace")
def test_the_guide_runs_from_an_empty_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work = tmp_path / "work"
    work.mkdir()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "agent-interface"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m agent_interface "$@"\n')
    shim.chmod(0o755)
    env = {
        **{key: value for key, value in os.environ.items() if not key.startswith("GIT_")},
        "PATH": f"{bin_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]),
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    monkeypatch.chdir(work)
    module = types.ModuleType("guide_candidates")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    for index, (kind, text) in enumerate(blocks(), start=1):
        if kind == "python":
            exec(compile(text, f"candidates.md[block {index}]", "exec"), module.__dict__)
            continue
        done = subprocess.run(["bash", "-euo", "pipefail", "-c", text], cwd=work, env=env,
                              capture_output=True, text=True, timeout=300)
        printed = done.stdout + done.stderr
        assert done.returncode == 0, f"block {index} failed:\n{text}\n{printed}"
        for expected in EXPECTED.findall(text):
            assert expected in printed, f"block {index}: {expected!r} not in:\n{printed}"
