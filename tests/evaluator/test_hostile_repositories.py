"""Hostile repositories: nothing a repository names runs, nothing is written into it, and
every refusal is typed.

Each repository below is built so that plain ``git`` would run a marker command or
write into it (the *control* assertions show it does); the verifier must refuse it or
verify it without either happening. A repository's state is compared before and after
with every file's bytes and modification time.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest

from agent_interface.core.errors import ContractError
from agent_interface.evaluator.git.errors import GitTreeRefused, RepositoryUnavailable
from agent_interface.evaluator.git.limits import GitLimits
from agent_interface.evaluator.git.tree import materialize_git_patch, verify_base_commit
from tests.evaluator.git_fixtures import ENV, PatchedRepository, git, patched_repository
from tests.evaluator.hostile_fixtures import marker_command, tree_state

# -- partial clones: lazy fetch would run the promisor's transport ----------------------


def _server(root: Path) -> Path:
    server = root / "server"
    server.mkdir()
    git(server, "init", "-q")
    (server / "a.txt").write_bytes(b"a\n")
    (server / "d").mkdir()
    (server / "d" / "b.txt").write_bytes(b"b\n")
    git(server, "add", "-A")
    git(server, "commit", "-q", "-m", "base")
    git(server, "config", "uploadpack.allowFilter", "true")
    return server


def _patch_of_b(server: Path, root: Path) -> tuple[str, str, bytes, str]:
    work = root / "work"
    git(root, "clone", "-q", str(server), str(work))
    (work / "d" / "b.txt").write_bytes(b"b, changed\n")
    git(work, "commit", "-q", "-am", "change")
    patch = subprocess.run(
        ["git", "diff", "--binary", "HEAD~1", "HEAD"], cwd=work, env=ENV,
        capture_output=True, check=True,
    ).stdout
    return git(work, "rev-parse", "HEAD~1"), git(work, "rev-parse", "HEAD~1^{tree}"), patch, git(
        work, "rev-parse", "HEAD^{tree}"
    )


def _partial_clone(root: Path, server: Path, remote: str, marker: Path, hidden: bool) -> Path:
    clone = root / "clone"
    git(
        root, "-c", "protocol.file.allow=always", "clone", "-q", "--filter=blob:none",
        "--no-checkout", f"file://{server}", str(clone),
    )
    settings = {"protocol.allow": "always", "protocol.file.allow": "always"}
    if remote == "ssh":
        settings["remote.origin.url"] = "ssh://promisor.invalid/repository.git"
        settings["core.sshCommand"] = marker_command(marker) + "; false"
    elif remote == "ext":
        settings["remote.origin.url"] = "ext::sh -c " + marker_command(marker).replace(" ", "% ")
        settings["protocol.ext.allow"] = "always"
    if hidden:
        # the promisor settings move into an included file and the promisor packs lose
        # their marker files: nothing in the repository says "partial clone" any more
        included = clone / ".git" / "promisor.cfg"
        settings.update({"remote.origin.promisor": "true",
                         "remote.origin.partialclonefilter": "blob:none"})
        for key, value in settings.items():
            git(clone, "config", "--file", str(included), key, value)
        if "remote.origin.url" in settings:
            git(clone, "config", "--unset", "remote.origin.url")
        git(clone, "config", "--unset", "remote.origin.promisor")
        git(clone, "config", "--unset", "remote.origin.partialclonefilter")
        git(clone, "config", "include.path", str(included))
        for promisor in (clone / ".git" / "objects" / "pack").glob("*.promisor"):
            promisor.unlink()
    else:
        for key, value in settings.items():
            git(clone, "config", key, value)
    return clone


@pytest.mark.parametrize("remote", ["ssh", "ext", "file"])
@pytest.mark.parametrize("hidden", [False, True], ids=["declared", "hidden"])
def test_partial_clone_never_fetches(tmp_path: Path, remote: str, hidden: bool) -> None:
    server = _server(tmp_path)
    base_commit, base_tree, patch, _ = _patch_of_b(server, tmp_path)
    marker = tmp_path / "marker"
    clone = _partial_clone(tmp_path, server, remote, marker, hidden)

    # control: plain git in a copy of the clone does fetch lazily (runs or writes)
    control = tmp_path / "control"
    shutil.copytree(clone, control, symlinks=True)
    if hidden:
        git(control, "config", "include.path", str(control / ".git" / "promisor.cfg"))
    before_control = tree_state(control)
    subprocess.run(
        ["git", "cat-file", "-p", f"{base_tree}:d/b.txt"], cwd=control, env=ENV,
        capture_output=True, check=False, timeout=60,
    )
    if remote == "file":
        assert tree_state(control) != before_control  # a pack was fetched into it
    else:
        assert marker.exists()
        marker.unlink()

    before = tree_state(clone)
    with pytest.raises(GitTreeRefused) as caught:
        materialize_git_patch(clone, base_commit=base_commit, base_tree=base_tree, patch=patch)
    assert caught.value.code in (
        ("repository_partial_clone",) if not hidden
        else ("repository_objects_unreadable",)
    )
    assert not marker.exists()
    assert tree_state(clone) == before


# -- configuration, hooks and attributes that would run something ----------------------


def _program_settings(repo: Path, marker: Path) -> dict[str, str]:
    """Every configuration key that makes git run a program, each pointing at the marker."""
    command = marker_command(marker)
    script = repo.parent / "marker.sh"
    script.write_text(f"#!/bin/sh\n{command}\ncat\n", encoding="utf-8")
    script.chmod(0o755)
    hooks = repo.parent / "hooks"
    hooks.mkdir(exist_ok=True)
    for hook in ("post-index-change", "post-checkout", "pre-commit", "reference-transaction",
                 "pre-auto-gc", "post-rewrite", "fsmonitor-watchman"):
        (hooks / hook).write_text(f"#!/bin/sh\n{command}\n", encoding="utf-8")
        (hooks / hook).chmod(0o755)
        shutil.copy(hooks / hook, repo / ".git" / "hooks" / hook)
    return {
        "core.fsmonitor": str(script),
        "core.hooksPath": str(hooks),
        "core.pager": str(script),
        "core.editor": str(script),
        "core.askPass": str(script),
        "core.sshCommand": str(script),
        "core.gitProxy": str(script),
        "core.alternateRefsCommand": str(script),
        "core.untrackedCache": "true",
        "core.splitIndex": "true",
        "uploadpack.packObjectsHook": str(script),
        "credential.helper": "!" + command,
        "diff.external": str(script),
        "diff.evil.textconv": str(script),
        "diff.evil.command": str(script),
        "filter.evil.clean": str(script),
        "filter.evil.smudge": str(script),
        "filter.evil.process": str(script),
        "filter.evil.required": "true",
        "merge.evil.driver": str(script),
        "sequence.editor": str(script),
        "pager.apply": str(script),
        "gc.auto": "1",
        "gc.autoDetach": "false",
        "maintenance.auto": "true",
        "fetch.writeCommitGraph": "true",
        "protocol.allow": "always",
        "include.path": str(repo.parent / "included.cfg"),
    }


ATTRIBUTES = b"* filter=evil diff=evil merge=evil text eol=crlf whitespace=fix\n"
PROGRAM_KEYS = [
    "core.fsmonitor", "core.hooksPath", "core.pager", "core.editor", "core.askPass",
    "core.sshCommand", "core.gitProxy", "core.alternateRefsCommand", "core.untrackedCache",
    "core.splitIndex", "uploadpack.packObjectsHook", "credential.helper", "diff.external",
    "diff.evil.textconv", "diff.evil.command", "filter.evil.clean", "filter.evil.smudge",
    "filter.evil.process", "merge.evil.driver", "sequence.editor", "pager.apply", "gc.auto",
    "maintenance.auto", "fetch.writeCommitGraph", "include.path",
]


def _attributed_repository(root: Path) -> PatchedRepository:
    """A repository whose base tree, info/attributes and patch all name the 'evil' filter,
    checked out so that plain git would run it."""
    repo = patched_repository(root)
    (repo.path / ".git" / "info").mkdir(exist_ok=True)
    (repo.path / ".git" / "info" / "attributes").write_bytes(ATTRIBUTES)
    work = root / "attributed-work"
    git(root, "clone", "-q", str(repo.path), str(work))
    (work / ".gitattributes").write_bytes(ATTRIBUTES)
    git(work, "add", ".gitattributes")
    git(work, "commit", "-q", "-m", "attributes")
    base_commit, base_tree = git(work, "rev-parse", "HEAD"), git(work, "rev-parse", "HEAD^{tree}")
    git(repo.path, "fetch", "-q", str(work), "HEAD")
    git(repo.path, "reset", "-q", "--hard", base_commit)
    (work / "src" / "agent.py").write_bytes(b"print('filtered?')\n")
    (work / "added.txt").write_bytes(b"new file under the evil filter\n")
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "change")
    patch = subprocess.run(
        ["git", "diff", "--binary", "HEAD~1", "HEAD"], cwd=work, env=ENV, capture_output=True,
        check=True,
    ).stdout
    return PatchedRepository(repo.path, base_commit, base_tree, git(work, "rev-parse", "HEAD^{tree}"), patch)


def test_configuration_hooks_and_attributes_never_run(tmp_path: Path) -> None:
    repo = _attributed_repository(tmp_path)
    marker = tmp_path / "marker"
    settings = _program_settings(repo.path, marker)
    (tmp_path / "included.cfg").write_text(
        f"[core]\n\tfsmonitor = {settings['core.fsmonitor']}\n", encoding="utf-8"
    )
    for key, value in settings.items():
        git(repo.path, "config", key, value)
    # control: plain git reading this repository runs the configured programs
    subprocess.run(["git", "status"], cwd=repo.path, env=ENV, capture_output=True, check=False)
    assert marker.exists()
    marker.unlink()

    before = tree_state(repo.path)
    assert materialize_git_patch(
        repo.path, base_commit=repo.base_commit, base_tree=repo.base_tree, patch=repo.patch
    ) == repo.candidate_tree
    verify_base_commit(repo.path, base_commit=repo.base_commit, base_tree=repo.base_tree)
    assert not marker.exists()
    assert tree_state(repo.path) == before


@pytest.mark.parametrize("key", PROGRAM_KEYS)
def test_no_configured_program_runs(tmp_path: Path, key: str) -> None:
    repo = _attributed_repository(tmp_path)
    marker = tmp_path / "marker"
    settings = _program_settings(repo.path, marker)
    (tmp_path / "included.cfg").write_text(
        f"[core]\n\tfsmonitor = {settings['core.fsmonitor']}\n"
        f"[filter \"evil\"]\n\tclean = {settings['filter.evil.clean']}\n", encoding="utf-8"
    )
    git(repo.path, "config", key, settings[key])
    if key.startswith("filter."):
        git(repo.path, "config", "filter.evil.required", "true")
    before = tree_state(repo.path)
    assert materialize_git_patch(
        repo.path, base_commit=repo.base_commit, base_tree=repo.base_tree, patch=repo.patch
    ) == repo.candidate_tree
    assert not marker.exists()
    assert tree_state(repo.path) == before


def test_worktree_configuration_is_never_read(tmp_path: Path) -> None:
    repo = patched_repository(tmp_path)
    marker = tmp_path / "marker"
    git(repo.path, "config", "extensions.worktreeConfig", "true")
    git(repo.path, "config", "--worktree", "core.fsmonitor", marker_command(marker))
    before = tree_state(repo.path)
    assert materialize_git_patch(
        repo.path, base_commit=repo.base_commit, base_tree=repo.base_tree, patch=repo.patch
    ) == repo.candidate_tree
    assert not marker.exists()
    assert tree_state(repo.path) == before


# -- where the repository is -----------------------------------------------------------


@pytest.fixture
def repo(tmp_path: Path) -> PatchedRepository:
    return patched_repository(tmp_path)


def _materialize(path: Path, repo: PatchedRepository, **limits: object) -> str:
    return materialize_git_patch(
        path, base_commit=repo.base_commit, base_tree=repo.base_tree, patch=repo.patch,
        limits=GitLimits(**limits) if limits else None,  # type: ignore[arg-type]
    )


def test_a_subdirectory_is_not_its_repository(repo: PatchedRepository) -> None:
    for inner in (repo.path / "src", repo.path / ".git" / "objects", repo.path / ".git" / "refs"):
        with pytest.raises(RepositoryUnavailable) as caught:
            _materialize(inner, repo)
        assert isinstance(caught.value, ContractError)
        assert caught.value.code == "repository_unavailable"
    with pytest.raises(RepositoryUnavailable) as caught:
        verify_base_commit(repo.path / "src", base_commit=repo.base_commit, base_tree=repo.base_tree)
    assert "root" in str(caught.value)


def test_the_git_directory_and_bare_clones_are_repositories(
    repo: PatchedRepository, tmp_path: Path
) -> None:
    assert _materialize(repo.path / ".git", repo) == repo.candidate_tree
    bare = tmp_path / "bare.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo.path), str(bare))
    assert _materialize(bare, repo) == repo.candidate_tree
    shallow = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{repo.path}", str(shallow))
    assert _materialize(shallow, repo) == repo.candidate_tree


def _symlink_objects(repo: PatchedRepository, tmp_path: Path, part: str) -> Path:
    borrower = tmp_path / f"borrower-{part.replace('/', '-')}"
    shutil.copytree(repo.path, borrower, symlinks=True)
    objects = borrower / ".git" / "objects"
    if part == "objects":
        shutil.rmtree(objects)
        objects.symlink_to(repo.path / ".git" / "objects")
    elif part == "pack-file":
        git(borrower, "repack", "-a", "-d", "-q")
        pack = next((objects / "pack").glob("*.pack"))
        moved = tmp_path / "elsewhere.pack"
        pack.rename(moved)
        pack.symlink_to(moved)
    else:
        target = objects / part
        moved = tmp_path / f"moved-{part.replace('/', '-')}"
        if target.exists():
            target.rename(moved)
        else:
            moved.mkdir()
        target.symlink_to(moved)
    return borrower


@pytest.mark.parametrize("part", ["objects", "info", "pack", "fan-out", "pack-file"])
def test_a_symlinked_object_store_is_refused(
    repo: PatchedRepository, tmp_path: Path, part: str
) -> None:
    if part == "fan-out":
        part = repo.base_tree[:2]
    borrower = _symlink_objects(repo, tmp_path, part)
    before = tree_state(borrower)
    with pytest.raises(GitTreeRefused) as caught:
        _materialize(borrower, repo)
    assert caught.value.code == "repository_objects_symlinked"
    assert tree_state(borrower) == before


def test_grafts_are_refused(repo: PatchedRepository) -> None:
    (repo.path / ".git" / "info").mkdir(exist_ok=True)
    (repo.path / ".git" / "info" / "grafts").write_text(repo.base_commit + "\n")
    with pytest.raises(GitTreeRefused) as caught:
        _materialize(repo.path, repo)
    assert caught.value.code == "repository_grafts"


def test_packed_replace_refs_are_refused(repo: PatchedRepository) -> None:
    other = git(repo.path, "commit-tree", repo.base_tree, "-m", "a substitute")
    git(repo.path, "update-ref", "refs/replace/" + repo.base_commit, other)
    git(repo.path, "pack-refs", "--all")
    assert not list((repo.path / ".git" / "refs" / "replace").rglob("*[0-9a-f]"))
    with pytest.raises(GitTreeRefused) as caught:
        _materialize(repo.path, repo)
    assert caught.value.code == "repository_replace_refs"


@pytest.mark.parametrize(
    ("key", "value"),
    [("core.repositoryformatversion", "2"), ("extensions.unknownFuture", "true")],
)
def test_unknown_repository_formats_are_refused(repo: PatchedRepository, key: str, value: str) -> None:
    git(repo.path, "config", "core.repositoryformatversion", "1")
    git(repo.path, "config", key, value)
    with pytest.raises(GitTreeRefused) as caught:
        _materialize(repo.path, repo)
    assert caught.value.code == "repository_format_unsupported"


@pytest.mark.parametrize("bad", ["--output=/tmp/x", "HEAD", "a" * 39 + "G", "A" * 40])
def test_object_ids_are_never_passed_to_git_unchecked(repo: PatchedRepository, bad: str) -> None:
    with pytest.raises(GitTreeRefused) as caught:
        materialize_git_patch(repo.path, base_commit=bad, base_tree=repo.base_tree, patch=repo.patch)
    assert caught.value.code == "object_format_mismatch"


# -- objects the repository lies about -------------------------------------------------


def _loose(repo: Path, object_id: str) -> Path:
    return repo / ".git" / "objects" / object_id[:2] / object_id[2:]


def _rewrite_object(repo: Path, object_id: str, change: Callable[[bytes], bytes]) -> None:
    path = _loose(repo, object_id)
    raw = zlib.decompress(path.read_bytes())
    path.chmod(0o644)
    path.write_bytes(zlib.compress(change(raw)))


def test_a_commit_whose_bytes_do_not_hash_to_its_id_is_refused(repo: PatchedRepository) -> None:
    _rewrite_object(repo.path, repo.base_commit, lambda raw: raw.replace(b"base", b"evil"))
    with pytest.raises(GitTreeRefused) as caught:
        _materialize(repo.path, repo)
    assert caught.value.code == "repository_object_corrupt"


def test_a_tree_whose_bytes_do_not_hash_to_its_id_is_never_used(repo: PatchedRepository) -> None:
    docs = git(repo.path, "rev-parse", f"{repo.base_tree}:docs")
    src = git(repo.path, "rev-parse", f"{repo.base_tree}:src")
    # the docs tree's file now holds the src tree's bytes: same shape, wrong content
    _loose(repo.path, docs).chmod(0o644)
    _loose(repo.path, docs).write_bytes(_loose(repo.path, src).read_bytes())
    with pytest.raises(GitTreeRefused) as caught:
        _materialize(repo.path, repo)
    assert caught.value.code == "repository_object_corrupt"


def test_an_object_that_never_ends_reading_hits_the_deadline(repo: PatchedRepository) -> None:
    src = git(repo.path, "rev-parse", f"{repo.base_tree}:src")
    path = _loose(repo.path, src)
    path.unlink()
    os.mkfifo(path)  # opening it blocks forever
    with pytest.raises(GitTreeRefused) as caught:
        _materialize(repo.path, repo, timeout_seconds=2.0)
    assert caught.value.code == "git_timeout"


def test_scratch_directories_are_removed_after_a_refusal(
    repo: PatchedRepository, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tempfile

    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    with pytest.raises(GitTreeRefused):
        materialize_git_patch(
            repo.path, base_commit=repo.base_commit, base_tree=repo.candidate_tree,
            patch=repo.patch,
        )
    _materialize(repo.path, repo)
    assert list(scratch.iterdir()) == []


_FORK_PROBE = """
import sys, tempfile, time
from pathlib import Path
from agent_interface.evaluator.git.limits import GitLimits
from agent_interface.evaluator.git.sandbox import GitSandbox
sandbox = GitSandbox(Path(tempfile.mkdtemp()), object_format="sha1", limits=GitLimits(),
                     deadline=time.monotonic() + 60)
result = sandbox.run("-c", "alias.probe=!echo started", "probe")
sys.stdout.write(repr((result.returncode, result.stdout, result.stderr)))
"""


def test_git_cannot_start_another_program(tmp_path: Path) -> None:
    """Outside root, RLIMIT_NPROC=0 leaves git unable to fork: even a configured alias
    (here given on the command line, where the sandbox's own settings live) cannot run."""
    source = Path(__file__).resolve().parents[2] / "src"
    command = [sys.executable, "-c", _FORK_PROBE]
    env = {"PYTHONPATH": str(source), "HOME": str(tmp_path), "TMPDIR": str(tmp_path),
           "PATH": os.environ.get("PATH", os.defpath)}
    if os.getuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("running as root without setpriv: RLIMIT_NPROC does not bind root")
        tmp_path.chmod(0o777)
        command = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", *command]
    probe = subprocess.run(command, env=env, capture_output=True, timeout=120, check=False)
    if b"ModuleNotFoundError" in probe.stderr or b"Permission denied" in probe.stderr:
        pytest.skip("the package is not readable by the unprivileged user")
    returncode, stdout, stderr = eval(probe.stdout)  # our own repr, printed above
    assert returncode != 0 and stdout == b""
    assert b"cannot fork" in stderr


def test_a_repository_path_with_separators_and_quotes_is_borrowed_exactly(tmp_path: Path) -> None:
    """The object store travels in GIT_ALTERNATE_OBJECT_DIRECTORIES, where ':' separates
    entries and '"' starts a quoted one: such paths are quoted, not split."""
    odd = tmp_path / 'a:b "c" \\ d'
    odd.mkdir()
    repo = patched_repository(odd)
    assert materialize_git_patch(
        repo.path, base_commit=repo.base_commit, base_tree=repo.base_tree, patch=repo.patch
    ) == repo.candidate_tree
