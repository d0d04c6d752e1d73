"""Exact-byte files confined to an environment's directory: links are never followed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent_interface.core.errors import ContractError
from agent_interface.evaluator.process.confined_files import (
    environment_path_components,
    read_confined,
    write_confined,
)


def _code(error: pytest.ExceptionInfo[ContractError]) -> str:
    return error.value.issues[0].code


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "env").mkdir()
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret").write_bytes(b"host secret")
    return tmp_path / "env"


def test_round_trip_creates_directories_and_sets_the_mode(root: Path) -> None:
    write_confined(str(root), "/a/b/c.bin", b"\x00\xff", 0o640)
    assert read_confined(str(root), "/a/b/c.bin", 2) == b"\x00\xff"
    assert (root / "a" / "b" / "c.bin").stat().st_mode & 0o7777 == 0o640
    assert [p.name for p in (root / "a" / "b").iterdir()] == ["c.bin"]  # no temporary left


@pytest.mark.parametrize("path", ["relative", "/a/../b", "/./a", "/a\x00b"])
def test_paths_that_are_not_plain_absolute_paths_are_refused(path: str) -> None:
    with pytest.raises(ContractError) as error:
        environment_path_components(path)
    assert _code(error) == "exact_process_path"


def test_a_linked_directory_is_refused_for_reads_and_writes(root: Path) -> None:
    os.symlink(root.parent / "outside", root / "escape")
    with pytest.raises(ContractError) as error:
        read_confined(str(root), "/escape/secret", 100)
    assert _code(error) == "exact_process_path_escape"
    with pytest.raises(ContractError) as error:
        write_confined(str(root), "/escape/planted", b"x", 0o600)
    assert _code(error) == "exact_process_path_escape"
    assert sorted(p.name for p in (root.parent / "outside").iterdir()) == ["secret"]


def test_a_linked_file_is_not_read_and_a_write_replaces_the_link_not_its_target(root: Path) -> None:
    os.symlink(root.parent / "outside" / "secret", root / "link")
    with pytest.raises(ContractError) as error:
        read_confined(str(root), "/link", 100)
    assert _code(error) == "exact_process_path_escape"
    write_confined(str(root), "/link", b"new", 0o600)
    assert (root.parent / "outside" / "secret").read_bytes() == b"host secret"
    assert not (root / "link").is_symlink() and (root / "link").read_bytes() == b"new"


def test_reads_are_bounded_and_only_of_regular_files(root: Path) -> None:
    (root / "f").write_bytes(b"12345")
    assert read_confined(str(root), "/f", 5) == b"12345"
    with pytest.raises(ContractError) as error:
        read_confined(str(root), "/f", 4)
    assert _code(error) == "exact_process_read_too_large"
    (root / "d").mkdir()
    with pytest.raises(ContractError) as error:
        read_confined(str(root), "/d", 4)
    assert _code(error) == "exact_process_not_a_file"
    os.mkfifo(root / "fifo")
    with pytest.raises(ContractError) as error:
        read_confined(str(root), "/fifo", 4)  # refused at once, never blocks
    assert _code(error) == "exact_process_not_a_file"
    with pytest.raises(ContractError) as error:
        read_confined(str(root), "/missing/f", 4)
    assert _code(error) == "exact_process_file_missing"


def test_a_write_onto_a_directory_is_refused_and_leaves_nothing(root: Path) -> None:
    (root / "d").mkdir()
    (root / "d" / "inner").write_bytes(b"x")
    with pytest.raises(ContractError) as error:
        write_confined(str(root), "/d", b"x", 0o600)
    assert _code(error) == "exact_process_not_a_file"
    assert sorted(p.name for p in root.iterdir()) == ["d"]
    with pytest.raises(ContractError) as error:
        write_confined(str(root), "/", b"x", 0o600)
    assert _code(error) == "exact_process_not_a_file"
