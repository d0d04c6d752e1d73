"""Tree removal at any depth: iterative, fd-relative, never through a link, bounded descriptors.

The deep trees are built with ``mkdir``/``open`` relative to directory descriptors, so their
paths are far longer than ``PATH_MAX`` (a 100,000-level tree has paths of ~200 KB); the
standard library's recursive ``shutil.rmtree`` raises ``RecursionError`` on the 3,000-level one.
"""

from __future__ import annotations

import os
import resource
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_interface.evaluator.images.tree_removal import (
    MAX_OPEN_DIRECTORIES,
    remove_tree,
    remove_tree_at,
)

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def deep_tree(top: Path, depth: int, *, leaf: bytes = b"x", link_to: Path | None = None) -> None:
    """``top/d/d/.../d`` ``depth`` levels deep, a file (and a link, if asked) at every 1,000th level."""
    top.mkdir()
    fd = os.open(top, _DIR)
    try:
        for level in range(depth):
            os.mkdir("d", dir_fd=fd)
            child = os.open("d", _DIR, dir_fd=fd)
            os.close(fd)
            fd = child
            if level % 1000 == 0:
                file = os.open("f", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o444, dir_fd=fd)
                os.write(file, leaf)
                os.close(file)
                if link_to is not None:
                    os.symlink(str(link_to), "outside", dir_fd=fd)
        os.fchmod(fd, 0o500)  # the deepest directory read-only, as an unpacked image leaves it
    finally:
        os.close(fd)


@pytest.fixture
def few_descriptors() -> Iterator[int]:
    """RLIMIT_NOFILE lowered to what is open now plus a little more than the remover's bound."""
    highest = max(int(name) for name in os.listdir("/proc/self/fd"))
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    limit = highest + MAX_OPEN_DIRECTORIES + 16
    resource.setrlimit(resource.RLIMIT_NOFILE, (limit, hard))
    try:
        yield limit
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_what_the_standard_library_leaves_of_a_3000_level_tree_is_removed(tmp_path: Path) -> None:
    """Python 3.11's ``shutil.rmtree`` recurses once per level: on 3,000 levels it raises
    ``RecursionError`` (not an ``OSError``, so ``ignore_errors`` does not hide it) and leaves
    the tree; the remover removes it (newer Pythons may remove it themselves)."""
    deep_tree(tmp_path / "t", 3000)
    try:
        shutil.rmtree(tmp_path / "t", ignore_errors=True)
    except RecursionError:
        assert sys.version_info < (3, 14)
        assert (tmp_path / "t").exists()
    remove_tree(tmp_path / "t")  # pytest's own clean-up recurses too
    assert not (tmp_path / "t").exists()


@pytest.mark.parametrize("depth", [3000, 100_000])
def test_a_deep_tree_is_removed_with_a_bounded_number_of_descriptors(
    tmp_path: Path, depth: int, few_descriptors: int
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep").write_bytes(b"host")
    deep_tree(tmp_path / "t", depth, link_to=outside)
    remove_tree(tmp_path / "t")
    assert not (tmp_path / "t").exists()
    assert (outside / "keep").read_bytes() == b"host"
    assert len(os.listdir("/proc/self/fd")) < few_descriptors


def test_a_link_is_removed_as_a_link_and_its_target_is_kept(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep").write_bytes(b"host")
    (tmp_path / "link").symlink_to(outside)
    remove_tree(tmp_path / "link")
    assert not (tmp_path / "link").is_symlink()
    assert (outside / "keep").read_bytes() == b"host"
    tree = tmp_path / "tree"
    (tree / "a").mkdir(parents=True)
    (tree / "a" / "up").symlink_to(outside, target_is_directory=True)
    (tree / "file").symlink_to(outside / "keep")
    remove_tree(tree)
    assert not tree.exists()
    assert sorted(p.name for p in outside.iterdir()) == ["keep"]


def test_unreadable_and_read_only_directories_are_removed(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    (tree / "locked" / "inner").mkdir(parents=True)
    (tree / "locked" / "inner" / "f").write_bytes(b"x")
    (tree / "locked" / "inner").chmod(0o000)
    (tree / "locked").chmod(0o500)
    remove_tree(tree)
    assert not tree.exists()


def test_a_missing_path_is_not_an_error_and_a_file_is_unlinked(tmp_path: Path) -> None:
    remove_tree(tmp_path / "absent")
    (tmp_path / "f").write_bytes(b"x")
    fd = os.open(tmp_path, _DIR)
    try:
        remove_tree_at(fd, "f")
        remove_tree_at(fd, "f")
    finally:
        os.close(fd)
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(ValueError):
        remove_tree(tmp_path / "..")


def test_a_capture_archive_deeper_than_its_bound_is_a_typed_gap(tmp_path: Path) -> None:
    """A workspace capture 3,000 levels deep (a hostile agent's) is refused before it is
    unpacked or read: an invalid capture, never a ``RecursionError`` in the cell."""
    import io
    import tarfile

    from agent_interface.evaluator.experiment.workspace_outcome import (
        WorkspaceGap,
        WorkspaceLimits,
        unpack_files,
    )

    def archive(depth: int) -> bytes:
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
            info = tarfile.TarInfo("/".join(["d"] * depth) + "/f")
            info.size = 1
            tar.addfile(info, io.BytesIO(b"x"))
        return buffer.getvalue()

    (tmp_path / "ok").mkdir()
    assert list(unpack_files(archive(100), tmp_path / "ok", WorkspaceLimits())) == ["/".join(["d"] * 100) + "/f"]
    (tmp_path / "deep").mkdir()
    with pytest.raises(WorkspaceGap) as gap:
        unpack_files(archive(3000), tmp_path / "deep", WorkspaceLimits())
    assert gap.value.code == "workspace_too_large"
    assert list((tmp_path / "deep").iterdir()) == []
