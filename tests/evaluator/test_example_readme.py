"""The example README's materialize and run commands, as a user runs them."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent_interface.evaluator.git.tree_hash import git_tree_id_of_directory
from agent_interface.evaluator.process.isolation import detect_local_isolation

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "candidate"
CLI = [sys.executable, "-m", "agent_interface"]


@pytest.mark.skipif(not asyncio.run(detect_local_isolation()).blocks_egress, reason="no network namespace")
def test_readme_commands(tmp_path: Path) -> None:
    demo = tmp_path / "demo"
    subprocess.run(["git", "clone", "-q", str(EXAMPLE / "repository.bundle"), str(demo)], check=True)
    files = tmp_path / "files"
    done = subprocess.run([*CLI, "candidate", "materialize", str(EXAMPLE / "bundle.json"), "--repository",
                           str(demo), "--into", str(files), "--json"], capture_output=True, check=True)
    result = json.loads(done.stdout)
    assert git_tree_id_of_directory(files / "code") == result["tree"]
    assert sorted(os.listdir(files)) == ["code", "workspace"]
    refused = subprocess.run([*CLI, "candidate", "materialize", str(EXAMPLE / "tampered-bundle.json"),
                              "--repository", str(demo), "--into", str(tmp_path / "t")], capture_output=True)
    assert refused.returncode == 1 and not (tmp_path / "t").exists()
    run = subprocess.run([*CLI, "candidate", "run", str(EXAMPLE / "bundle.json"), "--repository", str(demo),
                          "--task", str(EXAMPLE / "task.json"), "--suite", str(EXAMPLE / "suite.json"),
                          "--artifacts", str(EXAMPLE / "artifacts"), "--out", str(tmp_path / "run"), "--json"],
                         capture_output=True)
    assert run.returncode == 0, run.stderr.decode()
    summary = json.loads(run.stdout)
    assert summary["passed"] is True and summary["termination"] == {"kind": "exit", "exitCode": 0}
    assert sorted(os.listdir(tmp_path / "run")) == ["artifacts", "materialization-receipt.json", "run-receipt.json"]
