"""Every command of ``docs/guide/images.md`` runs as written, in order, in one scratch directory
that sees the repository's ``examples/``, with ``agent-interface`` on ``PATH``; a ``#   text``
line under a command is output the block must print.

A block the page marks ``<!-- the docs test runs this block with --dry-run ... -->`` (the
Python and harness images, minutes each) runs with ``image build --dry-run``: the commands
are printed, not run; ``examples/experiment/run_in_containers.py`` builds those images. The
build cache is kept between runs (``XDG_CACHE_HOME`` under the user's cache), so a second run
builds nothing."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agent_interface.evaluator.images.image_build import default_cache_directory

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "guide" / "images.md"
BLOCK = re.compile(r"(<!-- the docs test runs this block with --dry-run[^>]*-->\n)?^```sh\n(.*?)^```$",
                   re.MULTILINE | re.DOTALL)
EXPECTED = re.compile(r"^#   (.+)$", re.MULTILINE)
TOOLS = ("buildah", "mmdebstrap", "umoci", "skopeo")


def blocks() -> list[tuple[bool, str]]:
    """``(dry run?, text)`` of every ``sh`` block, in order."""
    return [(bool(m.group(1)), m.group(2)) for m in BLOCK.finditer(PAGE.read_text(encoding="utf-8"))]


def test_the_page_builds_and_marks_what_it_only_prints() -> None:
    found = blocks()
    assert len(found) >= 5
    assert [dry for dry, _ in found].count(True) == 2
    assert all("image build" in text for dry, text in found if dry)


@pytest.mark.skipif(os.geteuid() != 0 or any(shutil.which(t) is None for t in TOOLS),
                    reason="needs root, buildah, mmdebstrap, umoci and skopeo (CI installs them)")
def test_the_guide_runs_as_written(tmp_path: Path) -> None:
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "agent-interface"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m agent_interface "$@"\n')
    shim.chmod(0o755)
    env = {
        **{key: value for key, value in os.environ.items() if not key.startswith("GIT_")},
        "PATH": f"{bin_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]),
        "XDG_CACHE_HOME": str(default_cache_directory().parents[1] / "agent-interface-docs-tests"),
        "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
    }
    for index, (dry, text) in enumerate(blocks(), start=1):
        script = text.replace("agent-interface image build", "agent-interface image build --dry-run") if dry else text
        done = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=600)
        printed = done.stdout + done.stderr
        assert done.returncode == 0, f"block {index} failed:\n{script}\n{printed}"
        for expected in EXPECTED.findall(text):
            assert expected in printed, f"block {index} did not print {expected!r}:\n{printed}"
        if dry:
            assert "buildah" in printed and "bud" in printed
    task = (tmp_path / "task.json").read_text()
    assert '"evaluatorTaskContainer"' in task and '"example/tiny"' in task
