"""Capture a workspace task's submitted solution: the binary Git diff of the task workspace
against its snapshot.

After the candidate's process has ended, :func:`read_workspace` runs the evaluator's own
small capture program (:data:`CAPTURE_PROGRAM`, standard library only, run with
``python3 -I -S``) as an exact process in the same environment, in the task root: it
writes a tar of the regular files below it to standard output, follows no link, opens
nothing but regular files (``O_NOFOLLOW | O_NONBLOCK``, so a FIFO cannot hang it) and
skips, naming them, every other entry and every ``.git`` directory: they never take part
in grading (:mod:`.submission_policy`), so a submission cannot turn a task it fails into
an invalid capture with a link. Its output is bounded by the provider's capture bound and
its time by :attr:`WorkspaceLimits.timeout_ms`. The archive is unpacked on the host
with :func:`~agent_interface.evaluator.images.safe_tar.unpack_tar` (no links, devices,
traversal, duplicates; bounded).

:func:`restore_profile_paths` then puts back the snapshot's bytes at every path the
profile activation wrote into the task workspace (or drops the path when the snapshot
has none), and :func:`workspace_outcome` turns the files into the contract's
``AgentCandidateWorkspaceOutcome``: blobs and trees are written with the real ``git`` in
the project's Git sandbox (:class:`~agent_interface.evaluator.git.sandbox.GitSandbox`: a
private scratch repository, no configuration, hooks or attributes of anyone's, pinned
settings, resource limits and one deadline); nothing the workspace names is run. The base
tree must be the task's ``baseTree``; the result commit is ``tree`` + ``parent
baseCommit`` with a fixed evaluator identity at time 0 (so the same files always give the
same commit); the diff is ``git diff --binary --full-index --no-renames`` between the two
trees, at most :attr:`WorkspaceLimits.max_diff_bytes`. ``afterState`` is the result as a
workspace snapshot (manifest and a deterministic tar in the artifact store).

What cannot be captured is a :class:`WorkspaceGap` (an invalid-capture reason), never an
exception out of the cell: ``workspace_capture_failed``, ``workspace_too_large``,
``workspace_entry_unsupported`` (an archive holding a link, device, FIFO or a ``.git``
path component, which the capture program never writes).
"""

from __future__ import annotations

import hashlib
import io
import os
import tarfile
import tempfile
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from agent_interface.candidate.tasks import AgentCandidateBenchmarkTask
from agent_interface.core.canonical import canonical_bytes, sha256_bytes
from agent_interface.core.errors import ContractError
from agent_interface.evaluator.git.limits import GitLimits
from agent_interface.evaluator.git.sandbox import GitSandbox
from agent_interface.evaluator.images.safe_tar import ArchiveLimits, unpack_tar
from agent_interface.evaluator.images.tree_removal import remove_tree
from agent_interface.evaluator.verify.artifact_store import LocalArtifactStore

__all__ = [
    "CAPTURE_PROGRAM",
    "WorkspaceFiles",
    "WorkspaceGap",
    "WorkspaceLimits",
    "commit_id",
    "files_of_directory",
    "read_workspace",
    "restore_profile_paths",
    "snapshot_evidence",
    "unpack_files",
    "workspace_outcome",
]

WorkspaceFiles = dict[str, tuple[int, bytes]]
"""Relative POSIX path to ``(permission bits, bytes)``."""

CAPTURE_PROGRAM: Final = r"""
import os, stat, sys, tarfile
skipped = []
def skip(path):
    if len(skipped) < 1000:
        skipped.append(path)
def walk(rel):
    for name in sorted(os.listdir(rel or ".")):
        path = rel + "/" + name if rel else name
        info = os.lstat(path)
        if name.lower() == ".git":
            skip(path)
        elif stat.S_ISDIR(info.st_mode):
            yield from walk(path)
        elif stat.S_ISREG(info.st_mode):
            yield path
        else:
            skip(path)
out = tarfile.open(fileobj=sys.stdout.buffer, mode="w|", format=tarfile.PAX_FORMAT)
for path in walk(""):
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        skip(path)
        continue
    with os.fdopen(fd, "rb") as handle:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            skip(path)
            continue
        entry = tarfile.TarInfo(path)
        entry.size, entry.mode = status.st_size, status.st_mode & 0o777
        out.addfile(entry, handle)
out.close()
sys.stderr.buffer.write(b"".join(os.fsencode(path) + b"\0" for path in skipped))
"""
"""The capture program (``python3 -I -S -c CAPTURE_PROGRAM``, working directory the task root);
it writes the archive to standard output and the skipped entries (at most 1,000, each
ended by a NUL byte) to standard error; it imports what it imported before (``os``,
``stat``, ``sys``, ``tarfile``), so a task image needs nothing more of Python."""

_IDENT: Final = "agent-interface evaluator <evaluator@agent-interface.invalid> 0 +0000"
_MIB: Final = 1024 * 1024


@dataclass(frozen=True, slots=True)
class WorkspaceLimits:
    """Bounds of one capture: files, bytes (the archive and every file), the diff, and time."""

    max_files: int = 100_000
    max_bytes: int = 16 * _MIB
    max_diff_bytes: int = 16 * _MIB
    timeout_ms: int = 60_000


class WorkspaceGap(Exception):
    """Why the workspace could not be captured: an invalid-capture reason (``code``, ``message``)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def gap(self) -> dict[str, str]:
        """The invalid-capture reason (evidence ``taskOutcome``)."""
        return {"evidence": "taskOutcome", "code": self.code, "message": self.message}


def files_of_directory(root: Path) -> WorkspaceFiles:
    """Every regular file below ``root`` (unpacked by this module, so no links)."""
    files: WorkspaceFiles = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink():
            files[path.relative_to(root).as_posix()] = (path.stat().st_mode & 0o777, path.read_bytes())
    return files


def unpack_files(archive: bytes, scratch: Path, limits: WorkspaceLimits) -> WorkspaceFiles:
    """The files of a capture archive, unpacked safely under the empty directory ``scratch``."""
    try:
        unpack_tar(archive, scratch, limits=ArchiveLimits(
            max_entries=limits.max_files, max_file_bytes=limits.max_bytes, max_total_bytes=limits.max_bytes))
    except ContractError as error:
        code = error.issues[0].code
        if code == "tar_too_large":
            raise WorkspaceGap("workspace_too_large", "the task workspace is larger than the capture bound") from None
        raise WorkspaceGap("workspace_entry_unsupported",
                           "the task workspace holds an entry a workspace diff cannot carry") from None
    files = files_of_directory(scratch)
    if any(part.lower() == ".git" for path in files for part in path.split("/")):
        raise WorkspaceGap("workspace_entry_unsupported", "the task workspace holds a .git path")
    return files


async def read_workspace(environment: Any, *, python: str, task_root: str, limits: WorkspaceLimits,
                         scratch: Path, skipped: list[str] | None = None) -> WorkspaceFiles:
    """Run the capture program in ``environment`` and return the task workspace's files;
    the entries it skipped (links, devices, FIFOs, ``.git`` directories) are added to
    ``skipped``."""
    try:
        process = await environment.process.spawn({
            "executable": python, "args": ["-I", "-S", "-c", CAPTURE_PROGRAM], "cwd": task_root,
            "env": {}, "timeoutMs": limits.timeout_ms})
        termination = await process.wait()
        archive = await process.output_bytes("stdout")
        errors = await process.output_bytes("stderr")
        dropped = await process.output_dropped()
    except ContractError:
        raise WorkspaceGap("workspace_capture_failed", "the capture program could not run") from None
    wire = termination if isinstance(termination, Mapping) else termination.to_wire()
    if dropped.get("stdout") or len(archive) > limits.max_bytes:
        raise WorkspaceGap("workspace_too_large", "the task workspace is larger than the capture bound")
    if wire.get("kind") != "exit" or wire.get("exitCode") != 0:
        raise WorkspaceGap("workspace_capture_failed", "the capture program did not finish cleanly")
    if errors and not errors.endswith(b"\0"):
        raise WorkspaceGap("workspace_capture_failed", "the capture program did not finish cleanly")
    if skipped is not None:
        skipped.extend(name.decode("utf-8", errors="replace") for name in errors.split(b"\0")[:-1])
    return unpack_files(archive, scratch, limits)


def restore_profile_paths(files: WorkspaceFiles, base: WorkspaceFiles, paths: Iterable[str]) -> WorkspaceFiles:
    """``files`` with every profile-targeted path restored to ``base`` (or dropped when new)."""
    result = dict(files)
    for path in paths:
        if path in base:
            result[path] = base[path]
        else:
            result.pop(path, None)
    return result


def _sort_key(path: str) -> bytes:
    return path.encode("utf-16-be")


def snapshot_evidence(files: WorkspaceFiles, store: LocalArtifactStore) -> dict[str, Any]:
    """The workspace snapshot evidence of ``files``: manifest and a deterministic tar, stored."""
    ordered = sorted(files.items(), key=lambda item: _sort_key(item[0]))
    material = {"kind": "agent-candidate-workspace-manifest", "files": [
        {"path": path, "mode": mode, "sha256": sha256_bytes(data), "byteLength": len(data)}
        for path, (mode, data) in ordered]}
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path, (mode, data) in ordered:
            entry = tarfile.TarInfo(path)
            entry.size, entry.mode, entry.mtime = len(data), mode, 0
            tar.addfile(entry, io.BytesIO(data))
    manifest = canonical_bytes(material)
    return {"kind": "agent-candidate-workspace-snapshot", "digest": sha256_bytes(manifest), "material": material,
            "manifest": store.put(manifest).to_wire(), "archive": store.put(buffer.getvalue()).to_wire()}


def _write_tree(sandbox: GitSandbox, files: WorkspaceFiles, scratch: Path) -> str:
    """Write ``files`` as blobs and one tree in the sandbox's own object store; the tree id."""
    sandbox.index.unlink(missing_ok=True)
    ordered = sorted(files)
    paths = []
    for index, path in enumerate(ordered):
        host = scratch / f"blob-{index}"
        host.write_bytes(files[path][1])
        paths.append(str(host))
    lines: list[bytes] = []
    if ordered:
        result = sandbox.run("hash-object", "-w", "--no-filters", "--stdin-paths",
                             stdin="".join(p + "\n" for p in paths).encode())
        if not result.ok:
            raise WorkspaceGap("workspace_capture_failed", "git could not store the workspace files")
        ids = result.stdout.decode("ascii").split()
        for path, oid in zip(ordered, ids, strict=True):
            mode = "100755" if files[path][0] & 0o100 else "100644"
            lines.append(f"{mode} {oid}\t{path}".encode() + b"\0")
        staged = sandbox.run("update-index", "--add", "-z", "--index-info", stdin=b"".join(lines))
        if not staged.ok:
            raise WorkspaceGap("workspace_entry_unsupported", "git refused a workspace path")
    tree = sandbox.run("write-tree")
    if not tree.ok:
        raise WorkspaceGap("workspace_capture_failed", "git could not write the workspace tree")
    for path in paths:
        os.unlink(path)
    return tree.stdout.decode("ascii").strip()


def commit_id(tree: str, parent: str, message: str = "agent-interface workspace outcome") -> str:
    """The id of the commit ``tree`` + ``parent`` with the evaluator's fixed identity at time 0."""
    body = f"tree {tree}\nparent {parent}\nauthor {_IDENT}\ncommitter {_IDENT}\n\n{message}\n".encode()
    digest = hashlib.sha1 if len(parent) == 40 else hashlib.sha256
    return digest(b"commit %d\0" % len(body) + body).hexdigest()


def workspace_outcome(task: AgentCandidateBenchmarkTask, base: WorkspaceFiles, result: WorkspaceFiles,
                      store: LocalArtifactStore, *, limits: WorkspaceLimits,
                      git_limits: GitLimits | None = None) -> dict[str, Any]:
    """The ``workspace`` outcome (wire) of ``result`` against the task's ``base`` files.

    Refused (``ContractError`` ``workspace_base_mismatch``): base files whose tree is not the
    task repository's ``baseTree``. A diff over the bound is a :class:`WorkspaceGap`."""
    repository = task.repository
    if repository is None:
        raise ContractError.single("/repository", "repository_required",
                                   "workspace outcomes require the task's repository", subject="workspace outcome")
    object_format = "sha1" if len(repository.base_commit) == 40 else "sha256"
    bound = git_limits or GitLimits(output_bytes=limits.max_diff_bytes + 1, timeout_seconds=120.0)
    scratch = Path(tempfile.mkdtemp(prefix="agent-interface-diff-"))
    try:
        sandbox = GitSandbox(scratch / "sandbox", object_format=object_format, limits=bound,
                             deadline=time.monotonic() + bound.timeout_seconds)
        try:
            base_tree = _write_tree(sandbox, base, scratch)
            result_tree = _write_tree(sandbox, result, scratch)
            if base_tree != repository.base_tree:
                raise ContractError.single("/workspace", "workspace_base_mismatch",
                                           "the task workspace snapshot is not the repository's base tree",
                                           subject="workspace outcome")
            diff = sandbox.run("diff", "--binary", "--full-index", "--no-renames", "--no-ext-diff", "--no-textconv",
                               "--no-color", "--src-prefix=a/", "--dst-prefix=b/", base_tree, result_tree)
        except ContractError as error:
            if error.issues[0].code == "workspace_base_mismatch":
                raise
            if error.issues[0].code == "git_output_too_large":
                raise WorkspaceGap("workspace_too_large", "the workspace diff is larger than its bound") from None
            raise WorkspaceGap("workspace_capture_failed", "git could not diff the workspace") from None
    finally:
        remove_tree(scratch, ignore_errors=True)
    if not diff.ok:
        raise WorkspaceGap("workspace_capture_failed", "git could not diff the workspace")
    if len(diff.stdout) > limits.max_diff_bytes:
        raise WorkspaceGap("workspace_too_large", "the workspace diff is larger than its bound")
    state = {"identity": repository.identity, "rootIdentity": repository.root_identity}
    return {
        "kind": "workspace",
        "baseRepository": {**state, "commit": repository.base_commit, "tree": base_tree},
        "resultRepository": {**state, "commit": commit_id(result_tree, repository.base_commit), "tree": result_tree},
        "afterState": snapshot_evidence(result, store),
        "gitDiff": {"format": "git-diff-binary", "artifact": store.put(diff.stdout).to_wire()},
    }
