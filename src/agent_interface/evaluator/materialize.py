"""Write a verified candidate's files to disk: its code tree and its snapshots.

:func:`materialize_candidate` verifies the bundle first (every check of
:func:`~agent_interface.candidate.verify.verify_candidate_bundle`), then writes into a new
directory ``into`` (absent, or empty):

* ``code/``: the candidate tree for git-patch code, the base tree for no-op code
  (nothing for disabled code, which has no tree). Git renders the tree as a tar
  (``git archive``, through the verifier's own hardened Git invocation); it is unpacked
  safely (:mod:`.safe_tar`) as plain files with their modes (``0o644``, or ``0o755`` for
  executables). Symbolic links are written only when their target stays inside
  ``code/``; submodules are refused (``tree_submodule``: their content is not in the
  repository). The Git tree id of ``code/`` is then computed again here
  (:mod:`.tree_hash`), independently of Git, and must equal the verified tree
  (``tree_mismatch``).
* ``workspace/`` and ``knowledge/``: the candidate workspace and knowledge snapshots,
  unpacked safely and compared with their manifests (:mod:`.snapshot`).

Everything is written into a temporary directory beside ``into`` and renamed at the end,
so a refusal leaves nothing behind. Nothing the bundle or repository names is run.
"""

from __future__ import annotations

import base64
import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from agent_interface.candidate.bundle import AgentCandidateBundle
from agent_interface.candidate.git_tree import git_tree_archive
from agent_interface.candidate.resolver import ArtifactResolver
from agent_interface.candidate.verify import verify_candidate_bundle
from agent_interface.core.canonical import Sha256Digest
from agent_interface.core.errors import ContractError
from agent_interface.core.model import WireInt, WireModel
from agent_interface.core.registry import register_wire_models
from agent_interface.evaluator.safe_tar import ArchiveRefused, unpack_tar
from agent_interface.evaluator.snapshot import unpack_snapshot
from agent_interface.evaluator.tree_hash import git_tree_id_of_directory

__all__ = ["CandidateMaterialized", "materialize_candidate"]


class CandidateMaterialized(WireModel):
    """What was written: the bundle, the tree (and its independently computed id), counts."""

    kind: Literal["agent-interface.candidate-materialized"] = "agent-interface.candidate-materialized"
    bundle_digest: Sha256Digest
    code_kind: Literal["disabled", "no-op", "git-patch"]
    tree: str | None = None
    tree_files: WireInt = 0
    workspace_digest: Sha256Digest | None = None
    workspace_files: WireInt = 0
    knowledge_digest: Sha256Digest | None = None
    knowledge_files: WireInt = 0


def _refuse(pointer: str, code: str, message: str) -> ContractError:
    return ContractError.single(pointer, code, message, subject="materialization")


def _snapshot_bytes(artifact: Mapping[str, Any], fetch: Any) -> bytes:
    if artifact.get("encoding") == "base64":
        return base64.b64decode(artifact["content"])
    return bytes(fetch(artifact))


def _write_code(code: Mapping[str, Any], tree: str, repository: Path, target: Path) -> int:
    patch = None
    if code["kind"] == "git-patch":
        patch = base64.b64decode(code["patch"]["artifact"]["content"])
    archived_tree, archive = git_tree_archive(
        repository, base_commit=code["baseCommit"], base_tree=code["baseTree"], patch=patch
    )
    if archived_tree != tree:
        raise _refuse("/code", "tree_mismatch", "git produced another tree than the verified one")
    target.mkdir()
    try:
        entries = unpack_tar(archive, target, allow_symlinks=True)
    except ArchiveRefused as error:
        raise _refuse("/code", error.code, error.issues[0].message) from None
    for directory, _subdirs, files in os.walk(target):
        if not files and not _subdirs and Path(directory) != target:
            raise _refuse("/code", "tree_submodule", "the tree holds a submodule, whose content is not here")
    object_format = "sha256" if len(tree) == 64 else "sha1"
    if git_tree_id_of_directory(target, object_format) != tree:
        raise _refuse("/code", "tree_mismatch", "the written files do not have the verified tree id")
    return len(entries)


def materialize_candidate(
    bundle: bytes | str | Mapping[str, Any],
    *,
    repository: str | os.PathLike[str] | None,
    into: str | os.PathLike[str],
    artifacts: str | os.PathLike[str] | None = None,
    resolver: ArtifactResolver | None = None,
) -> CandidateMaterialized:
    """Verify ``bundle`` and write its files into ``into`` (see the module docstring)."""
    target = Path(into)
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise _refuse("/into", "into_not_empty", "the target must be absent or an empty directory")
    if resolver is None and artifacts is not None:
        from agent_interface.evaluator.run import local_artifact_resolver

        resolver = local_artifact_resolver(Path(artifacts))
    verified = verify_candidate_bundle(
        bundle, repository=None if repository is None else Path(repository), resolver=resolver
    )
    parsed = AgentCandidateBundle.parse_wire(bundle if not isinstance(bundle, str) else bundle.encode())
    wire = parsed.to_wire()
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        result: dict[str, Any] = {"bundleDigest": verified.bundle_digest, "codeKind": verified.code_kind}
        if verified.code_kind != "disabled" and verified.materialized_tree is not None:
            assert repository is not None
            result["tree"] = verified.materialized_tree
            result["treeFiles"] = _write_code(wire["code"], verified.materialized_tree, Path(repository),
                                              work / "code")

        def fetch(artifact: Mapping[str, Any]) -> bytes:
            from agent_interface.evaluator.run import fetch_artifact

            return fetch_artifact(artifact, resolver, "/")

        for name, pointer, evidence in (
            ("workspace", "/execution/workspace", wire["execution"].get("workspace")),
            ("knowledge", "/knowledge/snapshot", (wire.get("knowledge") or {}).get("snapshot")),
        ):
            if evidence is None:
                continue
            (work / name).mkdir()
            entries = unpack_snapshot(evidence["material"], _snapshot_bytes(evidence["archive"], fetch),
                                      work / name, pointer=pointer)
            result[f"{name}Digest"] = evidence["digest"]
            result[f"{name}Files"] = len(entries)
        if target.exists():
            target.rmdir()
        os.rename(work, target)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return CandidateMaterialized.parse_wire(result)


register_wire_models(CandidateMaterialized=CandidateMaterialized)
