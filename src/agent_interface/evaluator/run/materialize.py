"""Write a verified candidate's files to disk: its code tree and its snapshots.

:func:`materialize_candidate` verifies the bundle first (every check of
:func:`~agent_interface.evaluator.verify.integrity.verify_candidate_bundle`), then writes into a new
directory ``into`` (absent, or empty):

* ``code/``: the candidate tree for git-patch code, the base tree for no-op code
  (nothing for disabled code, which has no tree), written by the verifier itself in the
  same Git sandbox that checked it
  (:func:`~agent_interface.evaluator.git.export.export_tree`: every object hashed again,
  plain files with their modes, symbolic links only when they resolve inside ``code/``,
  submodules refused, sizes bounded by :class:`TreeExportLimits`). The Git tree id of
  ``code/`` is then computed again here (:mod:`.tree_hash`), independently of Git, and
  must equal the verified tree (``tree_mismatch``).
* ``workspace/`` and ``knowledge/``: the candidate workspace and knowledge snapshots,
  unpacked safely and compared with their manifests (:mod:`.snapshot`).

Everything is written into a temporary directory beside ``into`` and renamed at the end,
so a refusal leaves nothing behind. Nothing the bundle or repository names is run.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from agent_interface.candidate.bundle import AgentCandidateBundle
from agent_interface.core.canonical import Sha256Digest
from agent_interface.core.errors import ContractError
from agent_interface.core.model import WireInt, WireModel
from agent_interface.core.registry import register_wire_models
from agent_interface.evaluator.git.export import TreeExportLimits
from agent_interface.evaluator.git.limits import GitLimits
from agent_interface.evaluator.git.patch import patch_names
from agent_interface.evaluator.git.tree import TreeExport
from agent_interface.evaluator.git.tree_hash import git_tree_id_of_directory
from agent_interface.evaluator.images.tree_removal import remove_tree
from agent_interface.evaluator.run.output_directory import (
    claim_output_directory,
    publish_output_directory,
)
from agent_interface.evaluator.run.snapshot import unpack_snapshot
from agent_interface.evaluator.verify.integrity import verify_candidate_bundle
from agent_interface.evaluator.verify.resolver import ArtifactResolver

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


def _snapshot_bytes(artifact: Mapping[str, Any], fetch: Any, pointer: str) -> bytes:
    if artifact.get("encoding") == "base64":
        return base64.b64decode(artifact["content"])
    return bytes(fetch(artifact, pointer))


def _check_patch_names(code: Mapping[str, Any], work: Path) -> None:
    """Refuse, before the verification, a patch naming a file this file system cannot hold
    (a name longer than its ``NAME_MAX``); the export checks every name of the tree again."""
    if code["kind"] != "git-patch":
        return
    try:
        names = patch_names(base64.b64decode(code["patch"]["artifact"]["content"], validate=True)).names
        name_max = os.pathconf(work, "PC_NAME_MAX")
    except (ValueError, OSError):  # an undecodable patch is the verifier's to refuse
        return
    if any(len(part) > name_max for name in names for part in name.split(b"/")):
        raise _refuse("/code/patch/artifact", "tree_name_too_long",
                      f"the patch names a file whose name is longer than {name_max} bytes, "
                      "the most the target's file system takes")


def _check_code(target: Path, tree: str) -> None:
    object_format = "sha256" if len(tree) == 64 else "sha1"
    if git_tree_id_of_directory(target, object_format) != tree:
        raise _refuse("/code", "tree_mismatch", "the written files do not have the verified tree id")


def materialize_candidate(
    bundle: bytes | str | Mapping[str, Any],
    *,
    repository: str | os.PathLike[str] | None,
    into: str | os.PathLike[str],
    artifacts: str | os.PathLike[str] | None = None,
    resolver: ArtifactResolver | None = None,
    git_limits: GitLimits | None = None,
    tree_limits: TreeExportLimits | None = None,
) -> CandidateMaterialized:
    """Verify ``bundle`` and write its files into ``into`` (see the module docstring).

    ``git_limits`` bounds the verifier's Git check (and the export, which shares its
    deadline); ``tree_limits`` the written code tree.
    """
    if resolver is None and artifacts is not None:
        from agent_interface.evaluator.run.candidate_run import local_artifact_resolver

        resolver = local_artifact_resolver(Path(artifacts))
    parsed = AgentCandidateBundle.parse_wire(bundle if not isinstance(bundle, str) else bundle.encode())
    wire = parsed.to_wire()
    if wire["code"]["kind"] != "disabled" and repository is None:
        raise _refuse("/code", "repository_required",
                      "writing the code tree needs the repository that holds its base commit")
    # The target is checked before the (long) verification: a link, a file on the way,
    # a place where no directory can be made are refused now, not after it.
    work = claim_output_directory(into, pointer="/into", may_exist_empty=True)
    try:
        _check_patch_names(wire["code"], work)
        export = TreeExport(work / "code", tree_limits or TreeExportLimits())
        if wire["code"]["kind"] != "disabled":
            export.into.mkdir()
        verified = verify_candidate_bundle(
            bundle, repository=None if repository is None else Path(repository), resolver=resolver,
            git_limits=git_limits, code_export=export,
        )
        result: dict[str, Any] = {"bundleDigest": verified.bundle_digest, "codeKind": verified.code_kind}
        if verified.materialized_tree is not None:
            _check_code(export.into, verified.materialized_tree)
            result["tree"] = verified.materialized_tree
            result["treeFiles"] = export.files

        def fetch(artifact: Mapping[str, Any], pointer: str) -> bytes:
            from agent_interface.evaluator.run.candidate_run import fetch_artifact

            return fetch_artifact(artifact, resolver, pointer)

        for name, pointer, evidence in (
            ("workspace", "/execution/workspace", wire["execution"].get("workspace")),
            ("knowledge", "/knowledge/snapshot", (wire.get("knowledge") or {}).get("snapshot")),
        ):
            if evidence is None:
                continue
            (work / name).mkdir()
            entries = unpack_snapshot(evidence["material"], _snapshot_bytes(evidence["archive"], fetch, pointer + "/archive"),
                                      work / name, pointer=pointer)
            result[f"{name}Digest"] = evidence["digest"]
            result[f"{name}Files"] = len(entries)
        publish_output_directory(work, into, pointer="/into")
    except BaseException:
        remove_tree(work, ignore_errors=True)
        raise
    return CandidateMaterialized.parse_wire(result)


register_wire_models(CandidateMaterialized=CandidateMaterialized)
