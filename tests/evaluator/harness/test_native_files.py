"""Native files are written under their roots without following links, and the workspace is
put back exactly before the patch is captured."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent_interface.core.errors import ContractError
from agent_interface.evaluator.harness.adapter import HarnessLaunch, NativeFile
from agent_interface.evaluator.harness.native_files import (
    exclude_pathspecs,
    restore_workspace,
    write_native_files,
)


def _launch(*files: NativeFile) -> HarnessLaunch:
    return HarnessLaunch("claude-code", ("claude",), {}, files, ())


def test_files_are_written_and_the_workspace_restored(tmp_path: Path) -> None:
    workspace, home = tmp_path / "ws", tmp_path / "home"
    workspace.mkdir()
    home.mkdir()
    (workspace / "CLAUDE.md").write_text("the task's own\n")
    os.chmod(workspace / "CLAUDE.md", 0o600)
    launch = _launch(NativeFile("workspace", "CLAUDE.md", b"profile\n"),
                     NativeFile("workspace", ".claude/skills/s/SKILL.md", b"skill"),
                     NativeFile("workspace", "bin/run", b"#!x", 0o755),
                     NativeFile("home", ".codex/config.toml", b"model = 'm'"))
    written = write_native_files(launch, workspace=workspace, home=home)
    assert (workspace / "CLAUDE.md").read_text() == "profile\n"
    assert os.stat(workspace / "bin/run").st_mode & 0o777 == 0o755
    assert (home / ".codex/config.toml").read_bytes() == b"model = 'm'"
    (workspace / ".claude/skills/s/SKILL.md").write_text("changed by the agent")
    restore_workspace(written)
    assert (workspace / "CLAUDE.md").read_text() == "the task's own\n"
    assert os.stat(workspace / "CLAUDE.md").st_mode & 0o777 == 0o600
    assert sorted(p.name for p in workspace.iterdir()) == ["CLAUDE.md"]
    assert exclude_pathspecs(launch) == (":(exclude,literal)CLAUDE.md", ":(exclude,literal).claude/skills/s/SKILL.md",
                                         ":(exclude,literal)bin/run")


def test_a_link_in_the_workspace_is_refused(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (workspace / ".claude").symlink_to(outside)
    with pytest.raises(ContractError) as caught:
        write_native_files(_launch(NativeFile("workspace", ".claude/settings.json", b"{}")),
                           workspace=workspace, home=tmp_path)
    assert caught.value.issues[0].code == "native_path_not_directory"
    (workspace / "CLAUDE.md").symlink_to(outside / "x")
    with pytest.raises(ContractError) as caught:
        write_native_files(_launch(NativeFile("workspace", "CLAUDE.md", b"x")), workspace=workspace, home=tmp_path)
    assert caught.value.issues[0].code == "native_path_not_file"
    assert list(outside.iterdir()) == []
