"""Apply a candidate's binary Git patch onto its declared base tree with Git itself.

The ``git`` executable does the work, so tree ids are exactly Git's: ``read-tree`` of
the base into a throwaway index, ``apply --cached --binary`` of the patch, ``write-tree``.
The index and every new object live in a temporary directory (``GIT_INDEX_FILE``,
``GIT_OBJECT_DIRECTORY``, with the repository's object store as a read-only alternate),
so the repository, its index and its work tree are never written. Repositories that
could make an object id mean something else (replace refs, alternates, grafts) are
refused, and so are patches that create symbolic links, submodules (gitlinks) or
paths outside the tree. Nothing from the patch is executed.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from agent_interface.core.errors import ContractError, ContractIssue

__all__ = [
    "GitTreeRefused",
    "RepositoryUnavailable",
    "materialize_git_patch",
    "verify_base_commit",
]

_SYMLINK = "120000"
_GITLINK = "160000"
_OBJECT_FORMATS = {"sha1": 40, "sha256": 64}
# Settings pinned for every call so repository or user configuration cannot change
# how a patch applies or make Git run a helper.
_CONFIG = (
    "core.fsmonitor=false",
    "core.hooksPath=" + os.devnull,
    "core.autocrlf=false",
    "core.safecrlf=false",
    "core.ignorecase=false",
    "apply.whitespace=nowarn",
    "apply.ignoreWhitespace=no",
    "core.protectNTFS=true",
    "core.protectHFS=true",
)


class GitTreeRefused(ContractError):
    """The code state cannot be materialized: ``code`` names the failed rule."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__([ContractIssue("", code, message)], subject="git patch")
        self.code = code
        self.reason = message


class RepositoryUnavailable(Exception):
    """``repository`` is not a readable Git repository (an input problem, not a refusal)."""


class _Git:
    """Runs ``git`` against one repository with a scrubbed environment."""

    def __init__(self, repository: Path, timeout: float) -> None:
        self.timeout = timeout
        self.env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
        self.env.update(
            GIT_CONFIG_NOSYSTEM="1",
            GIT_CONFIG_GLOBAL=os.devnull,
            GIT_NO_REPLACE_OBJECTS="1",
            GIT_TERMINAL_PROMPT="0",
            GIT_OPTIONAL_LOCKS="0",
            LC_ALL="C",
        )
        if not repository.is_dir():
            raise RepositoryUnavailable(f"{repository}: not a directory")
        located = self._run(
            ["rev-parse", "--path-format=absolute", "--git-dir", "--git-common-dir"],
            cwd=repository,
            git_dir=None,
        )
        if located.returncode != 0:
            raise RepositoryUnavailable(f"{repository}: not a Git repository")
        lines = located.stdout.decode("utf-8", "surrogateescape").splitlines()
        self.git_dir, self.common_dir = Path(lines[0]), Path(lines[1])
        self.objects = self.common_dir / "objects"

    def _run(
        self,
        args: Sequence[str],
        *,
        cwd: Path | None = None,
        git_dir: Path | None,
        stdin: bytes | None = None,
        extra_env: Mapping[str, str] | None = None,
    ) -> subprocess.CompletedProcess[bytes]:
        command = ["git"]
        for setting in _CONFIG:
            command += ["-c", setting]
        if git_dir is not None:
            command.append(f"--git-dir={git_dir}")
        env = dict(self.env)
        if extra_env:
            env.update(extra_env)
        try:
            return subprocess.run(
                [*command, *args],
                input=stdin,
                capture_output=True,
                cwd=cwd,
                env=env,
                timeout=self.timeout,
                check=False,
            )
        except FileNotFoundError:
            raise RepositoryUnavailable("the git executable is not installed") from None
        except subprocess.TimeoutExpired:
            raise GitTreeRefused("git_timeout", "git did not finish within its time limit") from None

    def run(
        self,
        *args: str,
        stdin: bytes | None = None,
        extra_env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
    ) -> subprocess.CompletedProcess[bytes]:
        return self._run(args, git_dir=self.git_dir, stdin=stdin, extra_env=extra_env, cwd=cwd)

    def text(self, *args: str) -> str | None:
        result = self.run(*args)
        if result.returncode != 0:
            return None
        return result.stdout.decode("utf-8", "surrogateescape").strip()


def _open_repository(repository: Path | str, timeout: float, *object_ids: str) -> _Git:
    git = _Git(Path(repository), timeout)
    object_format = git.text("rev-parse", "--show-object-format") or "sha1"
    width = _OBJECT_FORMATS.get(object_format)
    if any(len(object_id) != width for object_id in object_ids):
        raise GitTreeRefused(
            "object_format_mismatch",
            f"the declared object ids do not use the repository's {object_format} format",
        )
    info = git.objects / "info"
    if (info / "alternates").exists() or (info / "http-alternates").exists():
        raise GitTreeRefused(
            "repository_alternates",
            "the repository borrows objects through alternates; use a self-contained clone",
        )
    if (git.common_dir / "info" / "grafts").exists():
        raise GitTreeRefused("repository_grafts", "the repository rewrites history with grafts")
    replaced = git.text("for-each-ref", "--format=%(refname)", "refs/replace/")
    if replaced:
        raise GitTreeRefused(
            "repository_replace_refs", "the repository substitutes objects through replace refs"
        )
    return git


def _commit_tree(git: _Git, base_commit: str) -> str:
    if git.text("cat-file", "-t", base_commit) != "commit":
        raise GitTreeRefused("base_commit_absent", "the base commit is not in the repository")
    body = git.run("cat-file", "commit", base_commit).stdout
    first = body.split(b"\n", 1)[0].decode("ascii", "replace")
    return first.removeprefix("tree ")


def verify_base_commit(
    repository: Path | str, *, base_commit: str, base_tree: str, timeout: float = 120.0
) -> None:
    """Refuse unless ``base_commit`` is a commit of ``repository`` whose tree is ``base_tree``."""
    git = _open_repository(repository, timeout, base_commit, base_tree)
    if _commit_tree(git, base_commit) != base_tree:
        raise GitTreeRefused(
            "base_tree_mismatch", "the base commit does not resolve to the declared base tree"
        )


def materialize_git_patch(
    repository: Path | str,
    *,
    base_commit: str,
    base_tree: str,
    patch: bytes,
    timeout: float = 120.0,
) -> str:
    """The tree id Git produces by applying ``patch`` to ``base_tree``, or a refusal.

    ``base_commit`` must be a commit of ``repository`` whose tree is ``base_tree``.
    """
    git = _open_repository(repository, timeout, base_commit, base_tree)
    if _commit_tree(git, base_commit) != base_tree:
        raise GitTreeRefused(
            "base_tree_mismatch", "the base commit does not resolve to the declared base tree"
        )
    _check_patch_paths(patch)
    with tempfile.TemporaryDirectory(prefix="agent-interface-tree-") as scratch:
        objects = Path(scratch) / "objects"
        (objects / "info").mkdir(parents=True)
        (objects / "pack").mkdir()
        env = {
            "GIT_INDEX_FILE": str(Path(scratch) / "index"),
            "GIT_OBJECT_DIRECTORY": str(objects),
            "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(git.objects),
        }
        work = Path(scratch)
        if git.run("read-tree", base_tree, extra_env=env, cwd=work).returncode != 0:
            raise GitTreeRefused("base_tree_absent", "the base tree cannot be read")
        applied = git.run(
            "apply", "--cached", "--binary", "--whitespace=nowarn", "-",
            stdin=patch, extra_env=env, cwd=work,
        )
        if applied.returncode != 0:
            raise GitTreeRefused(
                "patch_does_not_apply", "the patch does not apply cleanly to the base tree"
            )
        written = git.run("write-tree", extra_env=env, cwd=work)
        if written.returncode != 0:
            raise GitTreeRefused("write_tree_failed", "git could not write the resulting tree")
        tree = written.stdout.decode("ascii").strip()
        changes = git.run(
            "diff-tree", "-r", "-z", "--no-renames", base_tree, tree, extra_env=env, cwd=work
        )
        if changes.returncode != 0:
            raise GitTreeRefused("write_tree_failed", "git could not compare the resulting tree")
        _check_changes(changes.stdout)
    return tree


def _check_changes(raw: bytes) -> None:
    """Refuse symlinks, gitlinks and unsafe paths among the entries the patch added or changed."""
    fields = raw.split(b"\0")
    index = 0
    while index + 1 < len(fields) and fields[index].startswith(b":"):
        meta = fields[index][1:].decode("ascii").split(" ")
        path = fields[index + 1].decode("utf-8", "surrogateescape")
        index += 2
        new_mode, status = meta[1], meta[4]
        if status == "D":
            continue
        if new_mode == _SYMLINK:
            raise GitTreeRefused("patch_creates_symlink", "the patch creates a symbolic link")
        if new_mode == _GITLINK:
            raise GitTreeRefused("patch_creates_submodule", "the patch creates a submodule link")
        if not _safe_tree_path(path):
            raise GitTreeRefused("patch_path_unsafe", "the patch writes a path outside the tree")


def _safe_tree_path(path: str) -> bool:
    if not path or path.startswith("/") or "\\" in path:
        return False
    return all(
        part not in ("", ".", "..") and part.casefold() != ".git" for part in path.split("/")
    )


_PATH_HEADERS = (b"rename from ", b"rename to ", b"copy from ", b"copy to ")


def _check_patch_paths(patch: bytes) -> None:
    """Refuse header paths that leave the tree before Git sees the patch."""
    for line in patch.split(b"\n"):
        raw: bytes | None = None
        if line.startswith((b"--- ", b"+++ ")):
            raw = line[4:].split(b"\t", 1)[0]
            if raw == b"/dev/null":
                continue
            raw = _unquote(raw)
            raw = raw[2:] if raw[:2] in (b"a/", b"b/") else raw
        else:
            for header in _PATH_HEADERS:
                if line.startswith(header):
                    raw = _unquote(line[len(header) :])
        if raw is not None and not _safe_tree_path(raw.decode("utf-8", "surrogateescape")):
            raise GitTreeRefused("patch_path_unsafe", "the patch names a path outside the tree")


_ESCAPES = {b"n": b"\n", b"t": b"\t", b'"': b'"', b"\\": b"\\", b"a": b"\a", b"b": b"\b",
            b"f": b"\f", b"r": b"\r", b"v": b"\v"}


def _unquote(raw: bytes) -> bytes:
    """Undo Git's C-style quoting of a path (``"a\\303\\251"``)."""
    if not (len(raw) >= 2 and raw.startswith(b'"') and raw.endswith(b'"')):
        return raw
    body, out, index = raw[1:-1], bytearray(), 0
    while index < len(body):
        char = body[index : index + 1]
        if char != b"\\":
            out += char
            index += 1
            continue
        following = body[index + 1 : index + 2]
        if following.isdigit():
            out.append(int(body[index + 1 : index + 4], 8) & 0xFF)
            index += 4
        else:
            out += _ESCAPES.get(following, following)
            index += 2
    return bytes(out)
