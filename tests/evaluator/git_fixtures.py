"""Real Git repositories built in a temporary directory for the verifier tests."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

ENV = {
    **{key: value for key, value in os.environ.items() if not key.startswith("GIT_")},
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "Candidate Author",
    "GIT_AUTHOR_EMAIL": "author@example.com",
    "GIT_AUTHOR_DATE": "2026-11-30T09:00:00Z",
    "GIT_COMMITTER_NAME": "Candidate Author",
    "GIT_COMMITTER_EMAIL": "author@example.com",
    "GIT_COMMITTER_DATE": "2026-11-30T09:00:00Z",
}

BINARY = bytes(range(256)) * 8  # not text: git diff writes a binary patch for it


def git(repo: Path, *args: str, stdin: bytes | None = None) -> str:
    result = subprocess.run(
        ["git", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", *args],
        cwd=repo, env=ENV, input=stdin, capture_output=True, check=True,
    )
    return result.stdout.decode("utf-8", "replace").strip()


def write(repo: Path, files: dict[str, bytes]) -> None:
    for name, content in files.items():
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)


def commit_all(repo: Path, message: str) -> tuple[str, str]:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD"), git(repo, "rev-parse", "HEAD^{tree}")


@dataclass(frozen=True)
class PatchedRepository:
    """A repository holding only the base commit, and a patch made in a separate clone."""

    path: Path
    base_commit: str
    base_tree: str
    candidate_tree: str
    patch: bytes


BASE_FILES = {
    "README.md": b"# demo\n",
    "src/agent.py": b"print('hello')\n",
    "assets/logo.bin": BINARY,
    "docs/old-name.md": b"a document that will be renamed\n" * 4,
}


def patched_repository(root: Path, *, object_format: str = "sha1") -> PatchedRepository:
    """Base repository plus a candidate change: edit, binary change, rename, new file."""
    base = root / "base"
    base.mkdir(parents=True)
    git(base, "init", "-q", f"--object-format={object_format}")
    write(base, BASE_FILES)
    base_commit, base_tree = commit_all(base, "base")
    work = root / "candidate-work"
    git(root, "clone", "-q", str(base), str(work))
    write(work, {"src/agent.py": b"print('hello, candidate')\n", "src/new.py": b"X = 1\n"})
    write(work, {"assets/logo.bin": BINARY[::-1] + b"\x00tail"})
    git(work, "mv", "docs/old-name.md", "docs/new-name.md")
    _, candidate_tree = commit_all(work, "candidate")
    raw = subprocess.run(
        ["git", "diff", "--binary", "-M", base_commit, "HEAD"],
        cwd=work, env=ENV, capture_output=True, check=True,
    ).stdout
    return PatchedRepository(base, base_commit, base_tree, candidate_tree, raw)


def diff_between(repo: Path, old: str, new: str) -> bytes:
    return subprocess.run(
        ["git", "diff", "--binary", "-M", old, new],
        cwd=repo, env=ENV, capture_output=True, check=True,
    ).stdout
