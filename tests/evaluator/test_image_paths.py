"""Lookups inside an unpacked root: links resolve in the root, never out of it."""

from __future__ import annotations

import os
from pathlib import Path

from agent_interface.evaluator.images.image_paths import find_executable, stat_in_root


def _root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    (root / "usr" / "bin").mkdir(parents=True)
    (root / "bin").mkdir()
    tool = root / "usr" / "bin" / "python3.11"
    tool.write_bytes(b"\x7fELF")
    tool.chmod(0o755)
    (root / "usr" / "bin" / "python3").symlink_to("python3.11")
    (root / "usr" / "bin" / "absolute").symlink_to("/usr/bin/python3.11")
    (root / "usr" / "bin" / "data").write_bytes(b"x")
    return root


def test_a_bare_name_is_found_along_path_in_order(tmp_path: Path) -> None:
    root = _root(tmp_path)
    assert find_executable(root, "python3", "/usr/local/bin:/usr/bin:/bin") == "/usr/bin/python3"
    assert find_executable(root, "absolute", "/bin:/usr/bin/") == "/usr/bin/absolute"
    (root / "bin" / "python3").symlink_to("../usr/bin/python3")
    assert find_executable(root, "python3", "/bin:/usr/bin") == "/bin/python3"


def test_missing_non_executable_relative_and_odd_names_are_not_found(tmp_path: Path) -> None:
    root = _root(tmp_path)
    assert find_executable(root, "node", "/usr/bin:/bin") is None
    assert find_executable(root, "data", "/usr/bin") is None  # no execute bit
    assert find_executable(root, "bin", "/usr:/") is None  # a directory
    assert find_executable(root, "python3", "usr/bin::.") is None  # relative entries are not looked up
    for name in ("", ".", "..", "usr/bin/python3"):
        assert find_executable(root, name, "/usr/bin") is None


def test_links_never_lead_out_of_the_root(tmp_path: Path) -> None:
    root = _root(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "evil").write_bytes(b"x")
    os.chmod(outside / "evil", 0o755)
    (root / "bin" / "up").symlink_to("../../../../../outside/evil")
    (root / "bin" / "host").symlink_to(str(outside / "evil"))
    (root / "outside").symlink_to("usr")  # what "up" really reaches: root/outside -> root/usr
    assert find_executable(root, "up", "/bin") is None  # root/outside/evil does not exist
    assert find_executable(root, "host", "/bin") is None  # absolute: starts again at the root
    (root / "usr" / "evil").write_bytes(b"y")
    os.chmod(root / "usr" / "evil", 0o755)
    assert find_executable(root, "up", "/bin") == "/bin/up"  # ".." stops at the root


def test_loops_and_links_through_files_are_not_found(tmp_path: Path) -> None:
    root = _root(tmp_path)
    (root / "bin" / "a").symlink_to("b")
    (root / "bin" / "b").symlink_to("a")
    assert find_executable(root, "a", "/bin") is None
    assert stat_in_root(root, "/usr/bin/data/x") is None
    assert stat_in_root(root, "/usr/bin/../bin/python3") is not None
    assert stat_in_root(tmp_path / "missing", "/x") is None
