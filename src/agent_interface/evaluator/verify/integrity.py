"""The candidate integrity verifier the spec asks for before a bundle is executed.

``AgentCandidateBundle`` parsing proves only the wire shape. :func:`verify_candidate_bundle`
then checks, in this order, stopping at the first failure:

1. ``wire_shape``: the document parses as an ``AgentCandidateBundle``;
2. ``bundle_digest``: RFC 8785 sha256 of the bundle without its top-level ``digest``;
3. ``embedded_artifact`` / ``inline_resource``: every base64 artifact decodes to exactly
   ``byteLength`` bytes with the declared ``sha256``; every inline resource's UTF-8 bytes too;
4. ``external_artifact``: every S3, IPFS and GitHub-pinned artifact, fetched through the
   resolver, has exactly the declared length and digest;
5. ``code_state``: for git-patch, the base commit resolves in ``repository`` to the declared
   base tree, the patch applies to it, and Git's resulting tree is ``candidateTree``
   (for no-op, the base commit is checked when a repository is given);
6. ``workspace_snapshot``: each snapshot's manifest artifact holds exactly the RFC 8785
   bytes of its manifest material and the snapshot digest is that manifest's sha256;
7. ``entrypoint``: a launched entrypoint is a file of the pinned workspace manifest.

Nothing from the bundle is executed and nothing is written outside a temporary directory.
Every failure is a :class:`CandidateVerificationRefused` (a ``ContractError``), except
:class:`RepositoryUnavailable` for a ``repository`` that is not a repository root.
What is refused and every limit are listed in ``docs/security.md``.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_interface.candidate.bundle import AgentCandidateBundle
from agent_interface.candidate.verification_result import (
    VERIFICATION_CHECKS,
    CandidateArtifactRow,
    CandidateEntrypointEvidence,
    CandidateVerification,
    CandidateVerificationRefused,
    CandidateVerifiedContainer,
    CandidateVerifiedLaunch,
)
from agent_interface.core.canonical import canonical_bytes, canonical_digest, sha256_bytes
from agent_interface.core.errors import CanonicalJsonError, ContractError, json_pointer
from agent_interface.core.model import WireAdapter, wire_adapter
from agent_interface.evaluator.git.errors import GitTreeRefused, RepositoryUnavailable
from agent_interface.evaluator.git.limits import GitLimits
from agent_interface.evaluator.git.tree import TreeExport, materialize_git_patch, verify_base_commit
from agent_interface.evaluator.verify.resolver import (
    ArtifactRequest,
    ArtifactResolver,
    ResolutionRefused,
)

__all__ = ["ProgressCallback", "verify_candidate_bundle"]

ProgressCallback = Callable[[CandidateArtifactRow], None]
"""Receives each artifact row as soon as its bytes are verified (for a progress display)."""

_GIT_POINTERS = {
    "object_format_mismatch": "/code/baseCommit",
    "base_commit_absent": "/code/baseCommit",
    "base_tree_mismatch": "/code/baseTree",
    "base_tree_absent": "/code/baseTree",
    "candidate_tree_mismatch": "/code/candidateTree",
    "git_timeout": "/code",
    "git_output_too_large": "/code",
    "git_resource_limit": "/code",
}
"""Where a Git refusal points; ``repository_*`` codes point at ``/code/repository`` and
every other (patch) code at the patch artifact."""


@dataclass(frozen=True, slots=True)
class _Artifact:
    """An artifact found in the bundle: its location and wire object."""

    path: tuple[str | int, ...]
    value: Mapping[str, Any]

    @property
    def pointer(self) -> str:
        return json_pointer(self.path)


def _bundle_schema() -> WireAdapter[Any]:
    return wire_adapter(AgentCandidateBundle, "AgentCandidateBundle")


def verify_candidate_bundle(
    document: bytes | str | Mapping[str, Any],
    *,
    repository: Path | str | None,
    resolver: ArtifactResolver | None = None,
    progress: ProgressCallback | None = None,
    git_limits: GitLimits | None = None,
    code_export: TreeExport | None = None,
) -> CandidateVerification:
    """Verify a candidate bundle; raise :class:`CandidateVerificationRefused` on the first failure.

    ``repository`` is the root of a local Git repository holding the base commit
    (required for git-patch code; :class:`RepositoryUnavailable` when it is not a
    repository root; a relative path is read from the caller's working directory).
    ``resolver`` fetches external artifacts; the default is the
    SSRF-safe HTTP resolver. ``git_limits`` bounds the code-state check (sizes, time,
    memory; :data:`~agent_interface.evaluator.git.limits.DEFAULT_GIT_LIMITS` when absent).
    ``code_export`` also writes the verified code tree (the candidate tree, or the base tree
    of no-op code) into its directory, in the same Git sandbox as the check; it is left
    untouched for disabled code, or no-op code checked without a repository.
    """
    if repository is not None:  # relative to the caller's directory, not git's scratch one
        repository = Path(os.path.abspath(repository))
    schema = _bundle_schema()
    try:
        bundle: dict[str, Any] = schema.to_wire(schema.parse(document))
    except ContractError as exc:
        raise CandidateVerificationRefused("wire_shape", exc.issues) from None

    digest = _check_digest(bundle)
    fetched: dict[str, bytes] = {}
    rows = _check_local_artifacts(bundle, fetched, progress)
    rows += _check_external_artifacts(bundle, fetched, resolver, progress)
    tree, repository_checked = _check_code(bundle["code"], repository, git_limits, code_export)
    _check_snapshots(bundle, fetched)
    entrypoint = _check_entrypoint(bundle["execution"])

    execution = bundle["execution"]
    environment = execution["environment"]
    container = CandidateVerifiedContainer(
        source=environment["kind"],
        image=environment.get("container", {}).get("image"),
        index_digest=environment.get("container", {}).get("indexDigest"),
    )
    knowledge = bundle.get("knowledge")
    return CandidateVerification(
        bundle_digest=digest,
        code_kind=bundle["code"]["kind"],
        materialized_tree=tree,
        repository_checked=repository_checked,
        harness=execution["harness"],
        harness_version=execution["harnessVersion"],
        container=container,
        candidate_workspace=execution.get("workspace"),
        entrypoint=entrypoint,
        knowledge_manifest_digest=None if knowledge is None else knowledge["snapshot"]["digest"],
        profile_digest=canonical_digest(bundle["profile"]),
        execution=CandidateVerifiedLaunch(
            launch=execution["launch"],
            instruction_delivery=execution["instructionDelivery"],
            cwd=execution["cwd"],
            env=execution.get("env"),
        ),
        checks=VERIFICATION_CHECKS,
        artifacts=tuple(rows),
    )


def _check_digest(bundle: Mapping[str, Any]) -> str:
    material = {key: value for key, value in bundle.items() if key != "digest"}
    try:
        computed = canonical_digest(material)
    except CanonicalJsonError as exc:
        raise CandidateVerificationRefused("bundle_digest", exc.issues) from None
    except ValueError:  # a value RFC 8785 cannot write, reported untyped by the encoder
        raise CandidateVerificationRefused.at(
            "bundle_digest", "", "canonical_json_invalid",
            "the bundle cannot be written as RFC 8785 JSON",
        ) from None
    if computed != bundle["digest"]:
        raise CandidateVerificationRefused.at(
            "bundle_digest",
            "/digest",
            "bundle_digest_mismatch",
            "the digest is not the RFC 8785 sha256 of the bundle without its digest",
        )
    return computed


# -- where artifacts live in a bundle ----------------------------------------------


def _resource_refs(bundle: Mapping[str, Any]) -> Iterator[_Artifact]:
    resources = bundle["profile"].get("resources")
    if resources is None:
        return
    for index, mount in enumerate(resources.get("files", ())):
        yield _Artifact(("profile", "resources", "files", index, "resource"), mount["resource"])
    for group in ("tools", "skills", "agents", "commands"):
        for index, ref in enumerate(resources.get(group, ())):
            yield _Artifact(("profile", "resources", group, index), ref)
    instructions = resources.get("instructions")
    if isinstance(instructions, Mapping):
        yield _Artifact(("profile", "resources", "instructions"), instructions)


def _snapshots(bundle: Mapping[str, Any]) -> Iterator[_Artifact]:
    workspace = bundle["execution"].get("workspace")
    if workspace is not None:
        yield _Artifact(("execution", "workspace"), workspace)
    knowledge = bundle.get("knowledge")
    if knowledge is not None:
        yield _Artifact(("knowledge", "snapshot"), knowledge["snapshot"])


def _captured_artifacts(bundle: Mapping[str, Any]) -> Iterator[_Artifact]:
    """Every embedded or located artifact, in document order."""
    code = bundle["code"]
    if code["kind"] == "git-patch":
        yield _Artifact(("code", "patch", "artifact"), code["patch"]["artifact"])
    for snapshot in _snapshots(bundle):
        for part in ("manifest", "archive"):
            yield _Artifact((*snapshot.path, part), snapshot.value[part])
    knowledge = bundle.get("knowledge")
    if knowledge is not None:
        for part in ("retrievalConfig", "evaluation"):
            if part in knowledge:
                yield _Artifact(("knowledge", part), knowledge[part])
    seed = bundle["memory"].get("seed")
    if seed is not None:
        yield _Artifact(("memory", "seed"), seed)


# -- artifact bytes -----------------------------------------------------------------


def _check_bytes(
    check: Any, artifact: _Artifact, content: bytes, length_pointer: str = "/byteLength"
) -> None:
    declared = artifact.value
    if len(content) != declared["byteLength"]:
        raise CandidateVerificationRefused.at(
            check,
            artifact.pointer + length_pointer,
            "byte_length_mismatch",
            f"the artifact has {len(content)} bytes, not the declared byteLength",
        )
    if sha256_bytes(content) != declared["sha256"]:
        raise CandidateVerificationRefused.at(
            check,
            artifact.pointer + "/sha256",
            "sha256_mismatch",
            "the artifact bytes do not hash to the declared sha256",
        )


def _check_local_artifacts(
    bundle: Mapping[str, Any], fetched: dict[str, bytes], progress: ProgressCallback | None
) -> list[CandidateArtifactRow]:
    rows: list[CandidateArtifactRow] = []
    for artifact in _captured_artifacts(bundle):
        if artifact.value.get("encoding") != "base64":
            continue
        try:
            content = base64.b64decode(artifact.value["content"], validate=True)
        except (binascii.Error, ValueError):
            raise CandidateVerificationRefused.at(
                "embedded_artifact", artifact.pointer + "/content", "invalid_base64",
                "the content is not base64",
            ) from None
        _check_bytes("embedded_artifact", artifact, content)
        _keep_manifest(fetched, artifact, content)
        rows.append(_row(artifact, "embedded", progress))
    for artifact in _resource_refs(bundle):
        if artifact.value["kind"] != "inline":
            continue
        _check_bytes("inline_resource", artifact, artifact.value["content"].encode("utf-8"))
        rows.append(_row(artifact, "inline", progress))
    return rows


def _external_requests(bundle: Mapping[str, Any]) -> Iterator[tuple[_Artifact, ArtifactRequest]]:
    """Every artifact held outside the bundle, in document order."""
    for artifact in _resource_refs(bundle):
        if artifact.value["kind"] != "github":
            continue
        ref = artifact.value
        fields = {
            "owner": ref["repository"]["owner"],
            "repo": ref["repository"]["repo"],
            "commit": ref["commit"],
            "path": ref["path"],
        }
        yield artifact, _request(artifact, "github", fields)
    for artifact in _captured_artifacts(bundle):
        locator = artifact.value.get("locator")
        if locator is None:
            continue
        fields = {key: str(value) for key, value in locator.items() if key != "kind"}
        yield artifact, _request(artifact, locator["kind"], fields)


def _request(artifact: _Artifact, kind: Any, fields: dict[str, str]) -> ArtifactRequest:
    return ArtifactRequest(
        pointer=artifact.pointer,
        kind=kind,
        locator=fields,
        sha256=artifact.value["sha256"],
        byte_length=artifact.value["byteLength"],
    )


def _check_external_artifacts(
    bundle: Mapping[str, Any],
    fetched: dict[str, bytes],
    resolver: ArtifactResolver | None,
    progress: ProgressCallback | None,
) -> list[CandidateArtifactRow]:
    rows: list[CandidateArtifactRow] = []
    for artifact, request in _external_requests(bundle):
        if resolver is None:
            from agent_interface.evaluator.verify.http_resolver import HttpArtifactResolver

            resolver = HttpArtifactResolver()
        where = artifact.pointer + ("/locator" if "locator" in artifact.value else "")
        try:
            content = resolver.fetch(request)
        except ResolutionRefused as exc:
            raise CandidateVerificationRefused.at(
                "external_artifact", where, exc.code, exc.reason
            ) from None
        except Exception as exc:  # a resolver's bug or an untyped failure is still a refusal
            raise CandidateVerificationRefused.at(
                "external_artifact", where, "resolver_failed",
                f"the resolver failed ({type(exc).__name__})",
            ) from None
        if not isinstance(content, bytes | bytearray | memoryview):
            raise CandidateVerificationRefused.at(
                "external_artifact", where, "resolver_failed", "the resolver returned no bytes"
            )
        content = bytes(content)
        _check_bytes("external_artifact", artifact, content)
        _keep_manifest(fetched, artifact, content)
        rows.append(_row(artifact, request.kind, progress))
    return rows


def _keep_manifest(fetched: dict[str, bytes], artifact: _Artifact, content: bytes) -> None:
    """Keep the bytes a later check reads (snapshot manifests); let the rest go."""
    if artifact.path[-1] == "manifest":
        fetched[artifact.pointer] = content


def _row(artifact: _Artifact, source: Any, progress: ProgressCallback | None) -> CandidateArtifactRow:
    row = CandidateArtifactRow(
        pointer=artifact.pointer,
        source=source,
        byte_length=artifact.value["byteLength"],
        sha256=artifact.value["sha256"],
    )
    if progress is not None:
        progress(row)
    return row


# -- code state, snapshots, entrypoint ---------------------------------------------------


def _check_code(
    code: Mapping[str, Any],
    repository: Path | str | None,
    limits: GitLimits | None,
    export: TreeExport | None,
) -> tuple[str | None, bool]:
    """The materialized tree and whether a repository confirmed it."""
    kind = code["kind"]
    if kind == "disabled":
        return None, False
    try:
        if kind == "no-op":
            if repository is None:
                return code["baseTree"], False
            verify_base_commit(
                repository, base_commit=code["baseCommit"], base_tree=code["baseTree"],
                limits=limits, export=export,
            )
            return code["baseTree"], True
        if repository is None:
            raise RepositoryUnavailable(
                "git-patch code needs the repository that holds its base commit"
            )
        patch = base64.b64decode(code["patch"]["artifact"]["content"])
        tree = materialize_git_patch(
            repository,
            base_commit=code["baseCommit"],
            base_tree=code["baseTree"],
            patch=patch,
            limits=limits,
            export=export,
            expected_tree=code["candidateTree"],
        )
    except GitTreeRefused as exc:
        default = "/code/repository" if exc.code.startswith("repository_") else "/code/patch/artifact"
        if exc.code.startswith("tree_"):  # refused while writing the verified tree out
            default = "/code/candidateTree" if kind == "git-patch" else "/code/baseTree"
        pointer = _GIT_POINTERS.get(exc.code, default)
        raise CandidateVerificationRefused.at("code_state", pointer, exc.code, exc.reason) from None
    if tree != code["candidateTree"]:
        raise CandidateVerificationRefused.at(
            "code_state",
            "/code/candidateTree",
            "candidate_tree_mismatch",
            "applying the patch to the base tree gives a different tree",
        )
    return tree, True


def _check_snapshots(bundle: Mapping[str, Any], fetched: Mapping[str, bytes]) -> None:
    for snapshot in _snapshots(bundle):
        evidence = snapshot.value
        manifest_pointer = json_pointer((*snapshot.path, "manifest"))
        try:
            expected = canonical_bytes(evidence["material"])
        except ValueError:
            raise CandidateVerificationRefused.at(
                "workspace_snapshot", json_pointer((*snapshot.path, "material")),
                "canonical_json_invalid", "the manifest material cannot be written as RFC 8785 JSON",
            ) from None
        if fetched.get(manifest_pointer) != expected:
            raise CandidateVerificationRefused.at(
                "workspace_snapshot",
                manifest_pointer,
                "manifest_bytes_mismatch",
                "the manifest artifact is not the RFC 8785 bytes of the manifest material",
            )
        if evidence["digest"] != evidence["manifest"]["sha256"] or evidence[
            "digest"
        ] != "sha256:" + hashlib.sha256(expected).hexdigest():
            raise CandidateVerificationRefused.at(
                "workspace_snapshot",
                json_pointer((*snapshot.path, "digest")),
                "snapshot_digest_mismatch",
                "the snapshot digest is not the sha256 of its manifest",
            )


def _check_entrypoint(execution: Mapping[str, Any]) -> CandidateEntrypointEvidence | None:
    launch = execution["launch"]
    if launch["kind"] != "candidate-entrypoint":
        return None
    workspace = execution.get("workspace")
    files = () if workspace is None else workspace["material"]["files"]
    for entry in files:
        if entry["path"] == launch["entrypoint"]:
            return CandidateEntrypointEvidence(
                path=entry["path"], sha256=entry["sha256"], byte_length=entry["byteLength"]
            )
    raise CandidateVerificationRefused.at(
        "entrypoint",
        "/execution/launch/entrypoint",
        "entrypoint_missing",
        "the entrypoint is not a file of the pinned workspace manifest",
    )
