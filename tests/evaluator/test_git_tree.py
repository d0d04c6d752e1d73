"""Materializing a Git patch onto its base tree with real Git objects, in a throwaway index."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from agent_interface.evaluator.git.tree import (
    GitTreeRefused,
    RepositoryUnavailable,
    materialize_git_patch,
    verify_base_commit,
)
from tests.evaluator.git_fixtures import (
    PatchedRepository,
    commit_all,
    diff_between,
    git,
    patched_repository,
    write,
)


@pytest.fixture
def repo(tmp_path: Path) -> PatchedRepository:
    return patched_repository(tmp_path)


def _snapshot(path: Path) -> dict[str, str]:
    """Digest of every file under the repository (work tree and .git)."""
    return {
        str(item.relative_to(path)): hashlib.sha256(item.read_bytes()).hexdigest()
        for item in sorted(path.rglob("*"))
        if item.is_file()
    }


def _materialize(repo: PatchedRepository, patch: bytes | None = None) -> str:
    return materialize_git_patch(
        repo.path, base_commit=repo.base_commit, base_tree=repo.base_tree,
        patch=repo.patch if patch is None else patch,
    )


def test_patch_with_binary_change_and_rename_gives_gits_tree(repo: PatchedRepository) -> None:
    assert b"GIT binary patch" in repo.patch
    assert b"rename from docs/old-name.md" in repo.patch
    assert _materialize(repo) == repo.candidate_tree


def test_repository_work_tree_index_and_objects_are_untouched(repo: PatchedRepository) -> None:
    before = _snapshot(repo.path)
    tree = _materialize(repo)
    assert _snapshot(repo.path) == before
    # the new tree's objects were written to a temporary store only
    with pytest.raises(Exception):  # noqa: B017 - git exits non-zero
        git(repo.path, "cat-file", "-e", tree)


def test_sha256_repository(tmp_path: Path) -> None:
    repo = patched_repository(tmp_path, object_format="sha256")
    assert len(repo.candidate_tree) == 64
    assert _materialize(repo) == repo.candidate_tree


def test_patch_that_does_not_apply(repo: PatchedRepository) -> None:
    broken = repo.patch.replace(b"-print('hello')", b"-print('goodbye')")
    with pytest.raises(GitTreeRefused) as caught:
        _materialize(repo, broken)
    assert caught.value.code == "patch_does_not_apply"
    with pytest.raises(GitTreeRefused) as caught:
        _materialize(repo, b"not a patch at all\n")
    assert caught.value.code == "patch_does_not_apply"


def test_absent_base_commit(repo: PatchedRepository) -> None:
    with pytest.raises(GitTreeRefused) as caught:
        materialize_git_patch(
            repo.path, base_commit="1" * 40, base_tree=repo.base_tree, patch=repo.patch
        )
    assert caught.value.code == "base_commit_absent"


def test_base_commit_must_resolve_to_the_declared_tree(repo: PatchedRepository) -> None:
    with pytest.raises(GitTreeRefused) as caught:
        verify_base_commit(repo.path, base_commit=repo.base_commit, base_tree=repo.candidate_tree)
    assert caught.value.code == "base_tree_mismatch"
    verify_base_commit(repo.path, base_commit=repo.base_commit, base_tree=repo.base_tree)


def test_object_format_must_match(repo: PatchedRepository) -> None:
    with pytest.raises(GitTreeRefused) as caught:
        verify_base_commit(repo.path, base_commit="a" * 64, base_tree="b" * 64)
    assert caught.value.code == "object_format_mismatch"


def _candidate_patch(repo: PatchedRepository, root: Path, change: str) -> bytes:
    work = root / f"work-{change}"
    git(root, "clone", "-q", str(repo.path), str(work))
    if change == "symlink":
        (work / "link").symlink_to("/etc/passwd")
    elif change == "gitlink":
        git(work, "update-index", "--add", "--cacheinfo", f"160000,{repo.base_commit},vendor/sub")
        git(work, "commit", "-q", "-m", change)  # add -A would drop the gitlink
    if change != "gitlink":
        commit_all(work, change)
    return diff_between(work, repo.base_commit, "HEAD")


@pytest.mark.parametrize(
    ("change", "code"),
    [("symlink", "patch_creates_symlink"), ("gitlink", "patch_creates_submodule")],
)
def test_symlinks_and_submodules_are_refused(
    repo: PatchedRepository, tmp_path: Path, change: str, code: str
) -> None:
    patch = _candidate_patch(repo, tmp_path, change)
    with pytest.raises(GitTreeRefused) as caught:
        _materialize(repo, patch)
    assert caught.value.code == code


@pytest.mark.parametrize(
    "header",
    [
        b"+++ b/../escape.txt",
        b"--- a/.git/config",
        b"rename to ../../etc/cron.d/x",
        b'+++ "b/\\056\\056/escape"',
        b"+++ b/sub/.GIT/hooks/post-checkout",
    ],
)
def test_paths_outside_the_tree_are_refused(repo: PatchedRepository, header: bytes) -> None:
    patch = b"diff --git a/x b/x\n" + header + b"\n@@ -0,0 +1 @@\n+x\n"
    with pytest.raises(GitTreeRefused) as caught:
        _materialize(repo, patch)
    assert caught.value.code == "patch_path_unsafe"


def test_replace_refs_are_refused(repo: PatchedRepository) -> None:
    git(repo.path, "update-ref", "refs/replace/" + repo.base_commit, repo.base_commit)
    with pytest.raises(GitTreeRefused) as caught:
        _materialize(repo)
    assert caught.value.code == "repository_replace_refs"


def test_alternates_are_refused(repo: PatchedRepository, tmp_path: Path) -> None:
    borrower = tmp_path / "borrower"
    git(tmp_path, "clone", "-q", "--shared", str(repo.path), str(borrower))
    with pytest.raises(GitTreeRefused) as caught:
        materialize_git_patch(
            borrower, base_commit=repo.base_commit, base_tree=repo.base_tree, patch=repo.patch
        )
    assert caught.value.code == "repository_alternates"


def test_a_directory_that_is_not_a_repository(tmp_path: Path) -> None:
    with pytest.raises(RepositoryUnavailable):
        verify_base_commit(tmp_path / "absent", base_commit="a" * 40, base_tree="b" * 40)
    (tmp_path / "plain").mkdir()
    with pytest.raises(RepositoryUnavailable):
        verify_base_commit(tmp_path / "plain", base_commit="a" * 40, base_tree="b" * 40)


def test_a_linked_worktree_reads_the_common_object_store(
    repo: PatchedRepository, tmp_path: Path
) -> None:
    linked = tmp_path / "linked"
    git(repo.path, "worktree", "add", "-q", "--detach", str(linked))
    write(linked, {"untracked.txt": b"left alone\n"})
    assert materialize_git_patch(
        linked, base_commit=repo.base_commit, base_tree=repo.base_tree, patch=repo.patch
    ) == repo.candidate_tree
