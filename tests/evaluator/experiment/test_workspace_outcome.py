"""Workspace outcomes without running a candidate: profile paths restored or dropped before the
diff, the base tree checked, the diff bounded, the result commit deterministic, and the
capture archive unpacked safely."""

from __future__ import annotations

import io
import json
import subprocess
import tarfile
from pathlib import Path

import pytest

from agent_interface.candidate.experiment import AgentCandidateExperiment
from agent_interface.candidate.tasks import AgentCandidateBenchmarkTask
from agent_interface.core.errors import ContractError
from agent_interface.evaluator.experiment.workspace_outcome import (
    WorkspaceGap,
    WorkspaceLimits,
    restore_profile_paths,
    unpack_files,
    workspace_outcome,
)
from agent_interface.evaluator.verify.artifact_store import LocalArtifactStore
from tests.evaluator.experiment.helpers import make, make_experiment

BASE = {name: (0o644, data) for name, data in make_experiment.CALC.items()}


def task(tmp_path: Path) -> AgentCandidateBenchmarkTask:
    paths = make(tmp_path / "example")
    return AgentCandidateExperiment.parse_wire(paths["experiment"].read_bytes()).benchmark.tasks[0]


def test_profile_paths_are_restored_or_dropped_before_the_diff(tmp_path: Path) -> None:
    result = {**BASE, "calc.py": (0o644, b"def add(a, b):\n    return a + b\n"),
              ".agent/notes.md": (0o644, b"profile file"), "test_calc.py": (0o644, b"edited by the profile")}
    restored = restore_profile_paths(result, BASE, [".agent/notes.md", "test_calc.py"])
    assert restored == {**BASE, "calc.py": result["calc.py"]}
    store = LocalArtifactStore(tmp_path / "store")
    outcome = workspace_outcome(task(tmp_path), BASE, restored, store, limits=WorkspaceLimits())
    diff = store.get(outcome["gitDiff"]["artifact"]["locator"]["cid"], max_bytes=1 << 20)
    assert b"diff --git a/calc.py b/calc.py" in diff and b"notes.md" not in diff and b"test_calc" not in diff
    again = workspace_outcome(task(tmp_path), BASE, restored, store, limits=WorkspaceLimits())
    assert again == outcome  # the same files give the same commit, tree, diff and snapshot
    # the diff applies to the base tree and gives the result tree
    repo = tmp_path / "apply"
    repo.mkdir()
    for name, (_, data) in BASE.items():
        (repo / name).write_bytes(data)
    subprocess.run(["git", "apply", "-"], input=diff, cwd=repo, check=True)
    assert (repo / "calc.py").read_bytes() == result["calc.py"][1]


def test_an_unchanged_workspace_is_an_empty_diff_from_base_to_base(tmp_path: Path) -> None:
    store = LocalArtifactStore(tmp_path / "store")
    outcome = workspace_outcome(task(tmp_path), BASE, dict(BASE), store, limits=WorkspaceLimits())
    assert outcome["gitDiff"]["artifact"]["byteLength"] == 0
    assert outcome["resultRepository"]["tree"] == outcome["baseRepository"]["tree"]


def test_a_diff_over_its_bound_is_a_gap(tmp_path: Path) -> None:
    result = {**BASE, "big.txt": (0o644, b"line\n" * 10_000)}
    with pytest.raises(WorkspaceGap) as gap:
        workspace_outcome(task(tmp_path), BASE, result, LocalArtifactStore(tmp_path / "store"),
                          limits=WorkspaceLimits(max_diff_bytes=4096))
    assert gap.value.code == "workspace_too_large"


def test_base_files_that_are_not_the_base_tree_are_refused(tmp_path: Path) -> None:
    other = {**BASE, "calc.py": (0o644, b"something else\n")}
    with pytest.raises(ContractError) as refused:
        workspace_outcome(task(tmp_path), other, other, LocalArtifactStore(tmp_path / "store"),
                          limits=WorkspaceLimits())
    assert refused.value.issues[0].code == "workspace_base_mismatch"


def archive(entries: list[tuple[str, bytes | None]]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, data in entries:
            info = tarfile.TarInfo(name)
            if data is None:
                info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
                tar.addfile(info)
            else:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


@pytest.mark.parametrize(("entries", "code"), [
    ([("link", None)], "workspace_entry_unsupported"),
    ([("../escape", b"x")], "workspace_entry_unsupported"),
    ([(".git/config", b"[core]")], "workspace_entry_unsupported"),
    ([("sub/.GIT/hooks/x", b"x")], "workspace_entry_unsupported"),
    ([("big", b"x" * 2048)], "workspace_too_large"),
    ([(f"f{i}", b"") for i in range(20)], "workspace_too_large"),
])
def test_a_capture_archive_is_unpacked_safely(tmp_path: Path, entries: list[tuple[str, bytes | None]],
                                              code: str) -> None:
    with pytest.raises(WorkspaceGap) as gap:
        unpack_files(archive(entries), tmp_path, WorkspaceLimits(max_files=10, max_bytes=1024))
    assert gap.value.code == code
    assert json.dumps(gap.value.gap())  # an invalid-capture reason
