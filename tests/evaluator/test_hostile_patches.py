"""Hostile and unusual patches: decoded sizes are capped before git inflates anything,
patches git itself writes are never refused, unsafe and colliding paths are.

The legitimate patches here are produced by ``git diff --binary`` on real repositories
whose content and names are chosen to trip line-prefix parsing (hunk lines that read
``+++ x`` or ``--- x``, names with backslashes, quotes, spaces, tabs, newlines and
non-ASCII text); the verifier must give Git's own tree for each.
"""

from __future__ import annotations

import random
import subprocess
import time
import unicodedata
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest

from agent_interface.evaluator.git.errors import GitTreeRefused
from agent_interface.evaluator.git.limits import GitLimits
from agent_interface.evaluator.git.patch import binary_gate, patch_names
from agent_interface.evaluator.git.tree import materialize_git_patch
from tests.evaluator.git_fixtures import (
    BINARY,
    ENV,
    PatchedRepository,
    commit_all,
    git,
    patched_repository,
    write,
)
from tests.evaluator.hostile_fixtures import (
    b85_lines,
    blob_id,
    literal_hunk,
    new_binary_file_patch,
    varint,
    zero_bomb,
)

GIB = 1 << 30
MIB = 1 << 20


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> PatchedRepository:
    return patched_repository(tmp_path_factory.mktemp("patches"))


def _apply(repo: PatchedRepository, patch: bytes, limits: GitLimits | None = None) -> str:
    return materialize_git_patch(
        repo.path, base_commit=repo.base_commit, base_tree=repo.base_tree, patch=patch,
        limits=limits,
    )


def _refused(repo: PatchedRepository, patch: bytes, limits: GitLimits | None = None) -> str:
    with pytest.raises(GitTreeRefused) as caught:
        _apply(repo, patch, limits)
    return caught.value.code


# -- decoded size ------------------------------------------------------------------------


def test_a_gibibyte_literal_is_refused_before_git_inflates_it(repo: PatchedRepository) -> None:
    bomb = zero_bomb(GIB)
    patch = new_binary_file_patch("bomb.bin", literal_hunk(GIB, bomb))
    assert len(patch) < 2 * MIB
    started = time.monotonic()
    assert _refused(repo, patch) == "patch_binary_too_large"
    assert time.monotonic() - started < 30  # a watchdog, not a benchmark
    three = b"".join(
        new_binary_file_patch(f"bomb{index}.bin", literal_hunk(GIB, bomb)) for index in range(3)
    )
    assert _refused(repo, three) == "patch_binary_too_large"


@pytest.mark.parametrize(
    "header",
    [
        b"literal -5\n",  # strtoul wraps a negative number to nearly 2**64
        b"literal   +2147483648\n",
        b"literal 99999999999999999999999999999\n",  # saturates at ULONG_MAX
        b"literal \n\n1073741824\n",  # strtoul skips the newlines, git then reads no data
        b"delta 1073741824\n",
    ],
)
def test_sizes_are_read_as_git_reads_them(repo: PatchedRepository, header: bytes) -> None:
    patch = new_binary_file_patch("x.bin", header + b85_lines(zlib.compress(b"x")) + b"\n")
    assert _refused(repo, patch) == "patch_binary_too_large"


def _delta(source_size: int, target_size: int) -> bytes:
    """A git delta copying the whole source again and again up to ``target_size``."""
    body = bytearray(varint(source_size) + varint(target_size))
    left = target_size
    while left:
        size = min(left, source_size)
        # copy op: offset 0, size in two bytes
        body += bytes([0x80 | 0x10 | 0x20, size & 0xFF, (size >> 8) & 0xFF])
        left -= size
    return bytes(body)


def _delta_patch(target_size: int) -> bytes:
    delta = zlib.compress(_delta(len(BINARY), target_size), 9)
    inflated = len(zlib.decompress(delta))
    if target_size <= 1 << 20:
        result = BINARY * (target_size // len(BINARY)) + BINARY[: target_size % len(BINARY)]
        new_id = blob_id(result)
    else:  # refused before git reads it: the result id is never checked
        new_id = "1" * 40
    return (
        f"diff --git a/assets/logo.bin b/assets/logo.bin\n"
        f"index {blob_id(BINARY)}..{new_id} 100644\nGIT binary patch\n"
    ).encode() + b"delta %d\n" % inflated + b85_lines(delta) + b"\nliteral 0\nHcmV?d00001\n\n"


def _git_apply_tree(repo: PatchedRepository, patch: bytes, root: Path) -> str:
    """The tree plain ``git apply --cached`` gives in a throwaway clone (the control)."""
    clone = root / "control"
    git(root, "clone", "-q", str(repo.path), str(clone))
    git(clone, "apply", "--cached", "-", stdin=patch)
    return git(clone, "write-tree")


def test_a_small_delta_declaring_a_huge_result_is_refused(
    repo: PatchedRepository, tmp_path: Path
) -> None:
    patch = _delta_patch(GIB)
    assert len(patch) < 2 * MIB
    assert _refused(repo, patch) == "patch_binary_too_large"
    # the same construction under the cap applies, to the tree git itself gives
    small = _delta_patch(8 * len(BINARY) + 5)
    assert _apply(repo, small) == _git_apply_tree(repo, small, tmp_path)


def test_a_delta_whose_header_cannot_be_read_is_refused(repo: PatchedRepository) -> None:
    garbage = zlib.compress(b"\xff" * 12)
    patch = (
        f"diff --git a/assets/logo.bin b/assets/logo.bin\n"
        f"index {blob_id(BINARY)}..{'1' * 40} 100644\nGIT binary patch\n"
    ).encode() + b"delta 12\n" + b85_lines(garbage) + b"\n"
    assert _refused(repo, patch) == "patch_binary_corrupt"


def test_reverse_hunks_count_because_git_inflates_them_too(repo: PatchedRepository) -> None:
    forward = literal_hunk(1, zlib.compress(b"x"))
    reverse = literal_hunk(GIB, zero_bomb(GIB))
    patch = (
        f"diff --git a/x.bin b/x.bin\nnew file mode 100644\nindex {'0' * 40}..{blob_id(b'x')}\n"
        "GIT binary patch\n"
    ).encode() + forward + reverse
    assert _refused(repo, patch) == "patch_binary_too_large"


def test_binary_hunks_are_capped_together_and_one_by_one(repo: PatchedRepository) -> None:
    content = bytes(range(256)) * 1024  # 256 KiB
    hunk = literal_hunk(len(content), zlib.compress(content))
    one = new_binary_file_patch("one.bin", hunk, blob_id(content))
    small = GitLimits(max_blob_bytes=300 * 1024, max_binary_bytes=600 * 1024)
    tree = _apply(repo, one, small)
    assert git(repo.path.parent, "--git-dir", str(repo.path / ".git"), "rev-parse", "--verify",
               "--quiet", repo.base_tree) == repo.base_tree
    assert len(tree) == 40
    assert _refused(repo, one, GitLimits(max_blob_bytes=200 * 1024)) == "patch_binary_too_large"
    three = b"".join(
        new_binary_file_patch(f"f{index}.bin", hunk, blob_id(content)) for index in range(3)
    )
    assert _refused(repo, three, small) == "patch_binary_too_large"


def test_the_patch_itself_is_capped(repo: PatchedRepository) -> None:
    assert _refused(repo, repo.patch, GitLimits(max_patch_bytes=100)) == "patch_too_large"


def test_resulting_blobs_are_capped(repo: PatchedRepository) -> None:
    lines = b"".join(b"+line %d\n" % index for index in range(20000))
    patch = (
        b"diff --git a/big.txt b/big.txt\nnew file mode 100644\n--- /dev/null\n+++ b/big.txt\n"
        b"@@ -0,0 +1,20000 @@\n" + lines
    )
    assert len(_apply(repo, patch)) == 40
    assert _refused(repo, patch, GitLimits(max_blob_bytes=64 * 1024)) == "patch_blob_too_large"


def test_gits_memory_is_capped_even_under_the_size_caps(repo: PatchedRepository) -> None:
    size = 96 * MIB
    patch = new_binary_file_patch("zeros.bin", literal_hunk(size, zero_bomb(size)), blob_id(bytes(size)))
    roomy = GitLimits(max_blob_bytes=128 * MIB, max_binary_bytes=256 * MIB)
    assert len(_apply(repo, patch, roomy)) == 40
    tight = GitLimits(max_blob_bytes=128 * MIB, max_binary_bytes=256 * MIB, memory_bytes=128 * MIB)
    assert _refused(repo, patch, tight) == "git_resource_limit"


def test_binary_gate_reads_only_hunks_git_would_inflate() -> None:
    limits = GitLimits(max_blob_bytes=10)
    # not after a "GIT binary patch" line: git never inflates it
    assert binary_gate(b"literal 99999\nliteral 99999\n", limits) == 0
    # "GIT binary patch" with a carriage return is not git's marker either
    assert binary_gate(b"GIT binary patch\r\nliteral 99999\n", limits) == 0
    with pytest.raises(GitTreeRefused):
        binary_gate(b"x\nGIT binary patch\nliteral 99999\n", limits)


# -- patches git itself writes are never refused ---------------------------------------


def _case(root: Path, base: dict[str, bytes], change: Callable[[Path], None]) -> tuple[PatchedRepository, bytes]:
    repo = root / "base"
    repo.mkdir(parents=True)
    git(repo, "init", "-q")
    write(repo, base)
    base_commit, base_tree = commit_all(repo, "base")
    work = root / "work"
    git(root, "clone", "-q", str(repo), str(work))
    change(work)
    _, candidate_tree = commit_all(work, "candidate")
    patch = subprocess.run(
        ["git", "diff", "--binary", "-M", "-C", base_commit, "HEAD"], cwd=work, env=ENV,
        capture_output=True, check=True,
    ).stdout
    return PatchedRepository(repo, base_commit, base_tree, candidate_tree, patch), patch


HEADER_LIKE = b"a\n-- x\n++ ../x\n--- y\n+++ y\nb\n"
NAMES = [
    "back\\slash.txt", 'quo"te.txt', "sp ace.txt", "tab\there.txt", "new\nline.txt",
    "ünïcödé.txt", "日本語.md", "-- dashes", "a/b/c.txt", "b/a.txt", "dev/null", ".gitignore",
    "trailing space ", "x\\..\\y",
]


def _legit_change(work: Path) -> None:
    write(work, {"header-like.txt": b"a\n--- x\n+++ ../x\n++ ../y\n-- z\nb\n"})
    for name in NAMES:
        write(work, {name: name.encode() + b", changed\n+++ b/../escape\n--- a/.git/config\n"})
    write(work, {"binary.bin": BINARY[::-1], "new binary.bin": BINARY + b"\0more"})
    git(work, "mv", "sp ace.txt", "sp ace renamed.txt")
    (work / "renamed dir").mkdir()
    git(work, "mv", "rename me.txt", "renamed dir/rena\\med \"twice\".txt")
    git(work, "rm", "-qf", "--", "-- dashes")
    (work / "mode.sh").chmod(0o755)
    write(work, {"noeol.txt": b"no newline, changed", "crlf.txt": b"one\r\n+++ two\r\n"})
    write(work, {"copy of header-like.txt": HEADER_LIKE})


def test_patches_git_writes_are_applied_exactly(tmp_path: Path) -> None:
    base = {name: name.encode() + b"\n" for name in NAMES}
    base.update({
        "header-like.txt": HEADER_LIKE, "binary.bin": BINARY, "mode.sh": b"#!/bin/sh\n",
        "noeol.txt": b"no newline", "crlf.txt": b"one\r\ntwo\r\n",
        "rename me.txt": b"a line long enough to be recognised as a rename\n" * 8,
    })
    case, patch = _case(tmp_path, base, _legit_change)
    # hunk lines that look like file headers, added and removed
    assert b"\n++++ b/../escape\n" in patch and b"\n+--- a/.git/config\n" in patch
    assert b"\n-+++ y\n" in patch and b"\n---- y\n" in patch
    assert b'"a/back\\\\slash.txt"' in patch and b"GIT binary patch" in patch
    assert b"\nrename from " in patch and b"\ncopy from " in patch
    names = patch_names(patch)
    assert names.complete
    assert b"back\\slash.txt" in names.names and b"new\nline.txt" in names.names
    assert b"../x" not in names.names
    assert _apply(case, patch) == case.candidate_tree


def test_unicode_names_in_both_normal_forms_apply(tmp_path: Path) -> None:
    composed = unicodedata.normalize("NFC", "é.txt")
    case, patch = _case(
        tmp_path, {composed: b"x\n"}, lambda work: write(work, {composed: b"y\n"})
    )
    assert _apply(case, patch) == case.candidate_tree


# -- unsafe paths -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "header",
    [
        b'diff --git a/x b/x\n--- "a/x\\000y"\n+++ "b/x\\000y"\n',  # NUL in a quoted name
        b"diff --git a/x b/x\n--- a/x\n+++ b//etc/passwd\n",  # absolute after prefix
        b"diff --git a/x b/x\nrename from x\nrename to .git./config\n",  # NTFS trailing dot
        b"diff --git a/x b/x\nrename from x\nrename to GIT~1/config\n",  # NTFS short name
        "diff --git a/x b/x\nrename from x\nrename to .g\u200cit/config\n".encode(),  # HFS
        b"diff --git a/x b/x\nrename from x\nrename to .git::$INDEX_ALLOCATION/config\n",
        b"--- a/../x\n+++ b/../x\n",  # a traditional header
    ],
)
def test_unsafe_header_paths_are_refused(repo: PatchedRepository, header: bytes) -> None:
    patch = header + b"@@ -0,0 +1 @@\n+x\n"
    assert _refused(repo, patch) == "patch_path_unsafe"


def test_a_binary_patch_named_only_by_its_diff_line_is_checked(repo: PatchedRepository) -> None:
    patch = new_binary_file_patch("../escape.bin", literal_hunk(1, zlib.compress(b"x")))
    assert _refused(repo, patch) == "patch_path_unsafe"


# -- paths that collide on case-insensitive file systems --------------------------------


@pytest.mark.parametrize(
    ("existing", "added"),
    [
        ("README.md", "readme.md"),
        ("src/agent.py", "SRC/agent.py"),
        (unicodedata.normalize("NFC", "café.txt"), unicodedata.normalize("NFD", "café.txt")),
        ("docs", "DOCS"),  # a file beside a directory of the same folded name
        ("notes", "NOTES/inner.md"),  # a directory beside a file of the same folded name
    ],
)
def test_case_collisions_are_refused_unless_allowed(
    tmp_path: Path, existing: str, added: str
) -> None:
    base = {"README.md": b"# demo\n", "src/agent.py": b"x\n", "docs/a.md": b"a\n"}
    if existing not in base and not any(name.startswith(existing + "/") for name in base):
        base[existing] = b"existing\n"
    case, patch = _case(tmp_path, base, lambda work: write(work, {added: b"added\n"}))
    assert _refused(case, patch) == "patch_path_case_collision"
    allowed = GitLimits(case_collisions="allow")
    assert _apply(case, patch, allowed) == case.candidate_tree


def test_directories_that_fold_alike_merge_without_refusal(tmp_path: Path) -> None:
    base = {"src/agent.py": b"x\n"}
    case, patch = _case(tmp_path, base, lambda work: write(work, {"SRC/other.py": b"y\n"}))
    assert _apply(case, patch) == case.candidate_tree


def test_collisions_already_in_the_base_tree_do_not_refuse_a_change(tmp_path: Path) -> None:
    base = {"README.md": b"upper\n", "readme.md": b"lower\n"}
    case, patch = _case(tmp_path, base, lambda work: write(work, {"README.md": b"changed\n"}))
    assert _apply(case, patch) == case.candidate_tree


def test_gits_written_files_are_capped(repo: PatchedRepository) -> None:
    content = random.Random(7).randbytes(MIB)  # deflate cannot shrink it
    patch = new_binary_file_patch(
        "written.bin", literal_hunk(len(content), zlib.compress(content)), blob_id(content)
    )
    assert len(_apply(repo, patch)) == 40
    assert _refused(repo, patch, GitLimits(output_file_bytes=256 * 1024)) == "git_resource_limit"


def test_identical_directories_at_different_depths(tmp_path: Path) -> None:
    """One tree object reached by two paths: the blob under the deeper one is still read."""
    same = {"x/f.txt": b"same\n", "x/g.txt": b"also\n"}
    base = {f"a/{name}": content for name, content in same.items()}
    base.update({f"b/c/{name}": content for name, content in same.items()})
    case, patch = _case(tmp_path, base, lambda work: write(work, {"b/c/x/f.txt": b"changed\n"}))
    assert _apply(case, patch) == case.candidate_tree
