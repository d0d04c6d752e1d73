"""``materialize_candidate`` on hostile Git trees: every refusal is typed and leaves nothing.

The trees are real Git objects in a real repository: a symbolic link that leaves the
tree (directly, or through a chain of links that each look inside), a gitlink, names Git
itself would never write (``..``, ``.git``, a duplicate), and blobs over the bounds.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from agent_interface.core.errors import ContractError
from agent_interface.evaluator.git.export import TreeExportLimits
from agent_interface.evaluator.git.tree_hash import git_tree_id_of_directory
from agent_interface.evaluator.run.materialize import materialize_candidate
from tests.candidate.bundle_fixtures import no_op_bundle
from tests.evaluator.git_fixtures import git

WORKSPACE = {"src/agent.py": b"print('hello')\n"}


def _repository(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    return repo


def _blob(repo: Path, content: bytes) -> str:
    return git(repo, "hash-object", "-w", "--stdin", stdin=content)


def _tree(repo: Path, entries: list[tuple[str, bytes, str]]) -> str:
    """A tree object written byte for byte (``--literally``: Git's own checks skipped)."""
    body = b"".join(mode.encode() + b" " + name + b"\0" + bytes.fromhex(oid) for mode, name, oid in entries)
    return git(repo, "hash-object", "-t", "tree", "-w", "--literally", "--stdin", stdin=body)


def _commit(repo: Path, tree: str) -> str:
    return git(repo, "commit-tree", tree, "-m", "base")


def _materialize(tmp_path: Path, repo: Path, tree: str, **options: Any) -> Any:
    bundle = no_op_bundle(_commit(repo, tree), tree, WORKSPACE)
    return materialize_candidate(json.dumps(bundle).encode(), repository=repo, into=tmp_path / "into", **options)


def _refused(tmp_path: Path, repo: Path, tree: str, **options: Any) -> str:
    before = sorted(os.listdir(tmp_path))
    with pytest.raises(ContractError) as refused:
        _materialize(tmp_path, repo, tree, **options)
    assert sorted(os.listdir(tmp_path)) == before  # no target, no temporary directory
    return refused.value.issues[0].code


def _file(repo: Path, name: bytes, content: bytes = b"x\n", mode: str = "100644") -> tuple[str, bytes, str]:
    return (mode, name, _blob(repo, content))


def _link(repo: Path, name: bytes, target: bytes) -> tuple[str, bytes, str]:
    return ("120000", name, _blob(repo, target))


def _directory(repo: Path, name: bytes, entries: list[tuple[str, bytes, str]]) -> tuple[str, bytes, str]:
    return ("40000", name, _tree(repo, entries))


def test_a_plain_tree_with_an_inner_link_is_written_exactly(tmp_path: Path) -> None:
    repo = _repository(tmp_path)
    tree = _tree(repo, [
        _file(repo, b"README.md", b"# demo\n"),
        _link(repo, b"current", b"src/agent.py"),
        _directory(repo, b"src", [_file(repo, b"agent.py", b"print(1)\n", "100755")]),
    ])
    result = _materialize(tmp_path, repo, tree)
    code = tmp_path / "into" / "code"
    assert result.tree == tree and result.tree_files == 3
    assert git_tree_id_of_directory(code) == tree
    assert os.readlink(code / "current") == "src/agent.py"
    assert os.stat(code / "src" / "agent.py").st_mode & 0o777 == 0o755


@pytest.mark.parametrize(
    ("case", "code"),
    [
        ("absolute link", "tree_symlink_escapes"),
        ("link up and out", "tree_symlink_escapes"),
        ("chain of inner-looking links", "tree_symlink_escapes"),
        ("gitlink", "tree_submodule"),
        ("dot-dot name", "tree_path_unsafe"),
        ("dot-git name", "tree_path_unsafe"),
        ("slash in a name", "tree_path_unsafe"),
        ("duplicate name", "tree_entry_duplicate"),
        ("unknown mode", "tree_mode_unsupported"),
    ],
)
def test_hostile_trees_are_refused_and_leave_nothing(tmp_path: Path, case: str, code: str) -> None:
    repo = _repository(tmp_path)
    plain = _file(repo, b"README.md")
    entries = {
        "absolute link": [plain, _link(repo, b"passwd", b"/etc/passwd")],
        "link up and out": [plain, _directory(repo, b"src", [_link(repo, b"up", b"../../outside")])],
        # sub/b points at the root (inside); sub/a -> b/.. looks like sub/ but is the parent of the root.
        "chain of inner-looking links": [plain, _directory(repo, b"sub", [
            _link(repo, b"a", b"b/.."), _link(repo, b"b", b".."),
        ])],
        "gitlink": [plain, ("160000", b"vendor", "1" * 40)],
        "dot-dot name": [plain, _file(repo, b"..")],
        "dot-git name": [plain, _directory(repo, b".GIT", [_file(repo, b"config")])],
        "slash in a name": [plain, _file(repo, b"a/b")],
        "duplicate name": [plain, _file(repo, b"twice", b"1"), _file(repo, b"twice", b"2")],
        "unknown mode": [plain, _file(repo, b"odd", mode="100600")],
    }[case]
    assert _refused(tmp_path, repo, _tree(repo, entries)) == code


def test_outside_the_tree_nothing_was_touched(tmp_path: Path) -> None:
    repo = _repository(tmp_path)
    outside = tmp_path / "outside"
    tree = _tree(repo, [_directory(repo, b"src", [_link(repo, b"up", b"../../outside")])])
    assert _refused(tmp_path, repo, tree) == "tree_symlink_escapes"
    assert not outside.exists()


def test_blobs_beyond_the_bounds_are_refused(tmp_path: Path) -> None:
    repo = _repository(tmp_path)
    big = os.urandom(3 << 20)
    tree = _tree(repo, [_file(repo, b"big.bin", big), _file(repo, b"small", b"s")])
    small = TreeExportLimits(max_file_bytes=1 << 20)
    assert _refused(tmp_path, repo, tree, tree_limits=small) == "tree_too_large"
    assert _refused(tmp_path, repo, tree, tree_limits=TreeExportLimits(max_total_bytes=2 << 20)) == "tree_too_large"
    assert _refused(tmp_path, repo, tree, tree_limits=TreeExportLimits(max_entries=1)) == "tree_too_large"
    result = _materialize(tmp_path, repo, tree)  # within the defaults
    assert hashlib.sha256((tmp_path / "into" / "code" / "big.bin").read_bytes()).digest() == hashlib.sha256(big).digest()
    assert result.tree_files == 2


def test_a_blob_the_repository_lies_about_is_refused(tmp_path: Path) -> None:
    repo = _repository(tmp_path)
    blob = _blob(repo, b"the real bytes\n")
    tree = _tree(repo, [("100644", b"file", blob)])
    commit = _commit(repo, tree)
    loose = repo / ".git" / "objects" / blob[:2] / blob[2:]
    import zlib

    os.chmod(loose, 0o644)
    loose.write_bytes(zlib.compress(b"blob 15\0other bytes!!!\n"))
    bundle = no_op_bundle(commit, tree, WORKSPACE)
    with pytest.raises(ContractError) as refused:
        materialize_candidate(json.dumps(bundle).encode(), repository=repo, into=tmp_path / "into")
    assert refused.value.issues[0].code == "repository_object_corrupt"
    assert not (tmp_path / "into").exists()
