"""The candidate integrity verifier: an intact bundle per code state, a refusal per check."""

from __future__ import annotations

import base64
import copy
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from agent_interface.candidate.verification_result import (
    VERIFICATION_CHECKS,
    CandidateVerificationRefused,
)
from agent_interface.core.canonical import canonical_digest
from agent_interface.evaluator.git.tree import RepositoryUnavailable
from agent_interface.evaluator.verify.http_resolver import HttpArtifactResolver, SafeHttpFetcher
from agent_interface.evaluator.verify.integrity import verify_candidate_bundle
from agent_interface.evaluator.verify.resolver import InMemoryArtifactResolver
from tests.candidate.bundle_fixtures import (
    EXTERNAL_BYTES,
    SEED_BYTES,
    disabled_bundle,
    embedded,
    git_patch_bundle,
    no_op_bundle,
    seal,
    sha256,
    with_external_artifacts,
)
from tests.evaluator.git_fixtures import BASE_FILES, PatchedRepository, patched_repository

WORKSPACE = {"src/agent.py": b"print('hello, candidate')\n", "README.md": b"# demo\n"}
RESOLVER = InMemoryArtifactResolver(EXTERNAL_BYTES)


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> PatchedRepository:
    return patched_repository(tmp_path_factory.mktemp("verify"))


@pytest.fixture
def patch_bundle(repo: PatchedRepository) -> dict[str, Any]:
    return git_patch_bundle(
        repo.base_commit, repo.base_tree, repo.candidate_tree, repo.patch, WORKSPACE
    )


def refused(
    bundle: dict[str, Any], repository: Path | None = None, resolver: Any = RESOLVER
) -> CandidateVerificationRefused:
    with pytest.raises(CandidateVerificationRefused) as caught:
        verify_candidate_bundle(bundle, repository=repository, resolver=resolver)
    return caught.value


# -- intact bundles -------------------------------------------------------------


def test_disabled_code_needs_no_repository() -> None:
    bundle = disabled_bundle()
    result = verify_candidate_bundle(bundle, repository=None)
    assert result.bundle_digest == bundle["digest"]
    assert result.code_kind == "disabled"
    assert result.materialized_tree is None
    assert result.entrypoint is None
    assert result.container.source == "evaluator-task-container"
    assert [(row.pointer, row.source) for row in result.artifacts] == [
        ("/profile/resources/files/0/resource", "inline")
    ]
    assert result.checks == VERIFICATION_CHECKS


def test_no_op_code_checks_the_base_commit_when_a_repository_is_given(
    repo: PatchedRepository,
) -> None:
    bundle = no_op_bundle(repo.base_commit, repo.base_tree, WORKSPACE)
    checked = verify_candidate_bundle(bundle, repository=repo.path)
    assert checked.materialized_tree == repo.base_tree
    assert checked.repository_checked
    declared = verify_candidate_bundle(bundle, repository=None)
    assert declared.materialized_tree == repo.base_tree
    assert not declared.repository_checked
    wrong_tree = seal({**bundle, "code": {**bundle["code"], "baseTree": "e" * 40}})
    refusal = refused(wrong_tree, repo.path)
    assert (refusal.check, refusal.pointer, refusal.code) == (
        "code_state", "/code/baseTree", "base_tree_mismatch"
    )


def test_git_patch_with_binary_file_and_rename(
    repo: PatchedRepository, patch_bundle: dict[str, Any]
) -> None:
    assert b"GIT binary patch" in repo.patch and b"rename to" in repo.patch
    result = verify_candidate_bundle(patch_bundle, repository=repo.path)
    assert result.materialized_tree == repo.candidate_tree
    assert result.repository_checked
    assert result.entrypoint is not None and result.entrypoint.path == "src/agent.py"
    assert result.entrypoint.sha256 == sha256(WORKSPACE["src/agent.py"])
    assert result.knowledge_manifest_digest == patch_bundle["knowledge"]["snapshot"]["digest"]
    assert result.to_wire()["candidateWorkspace"] == patch_bundle["execution"]["workspace"]
    assert result.container.image == "python:3.12"
    pointers = [row.pointer for row in result.artifacts]
    assert pointers[0] == "/code/patch/artifact"
    assert "/execution/workspace/manifest" in pointers
    assert "/knowledge/evaluation" in pointers
    assert all(row.verified for row in result.artifacts)
    # the result is a wire document that reads back unchanged
    wire = result.to_wire()
    assert type(result).parse_wire(json.dumps(wire)).to_wire() == wire


def test_external_artifacts_are_fetched_and_checked(patch_bundle: dict[str, Any], repo: PatchedRepository) -> None:
    bundle = with_external_artifacts(patch_bundle)
    seen: list[str] = []
    result = verify_candidate_bundle(
        bundle, repository=repo.path, resolver=RESOLVER, progress=lambda row: seen.append(row.pointer)
    )
    rows = {row.pointer: row.source for row in result.artifacts}
    assert rows["/memory/seed"] == "s3"
    assert rows["/profile/resources/skills/0"] == "github"
    assert seen == [row.pointer for row in result.artifacts]


def test_git_patch_needs_a_repository(patch_bundle: dict[str, Any]) -> None:
    with pytest.raises(RepositoryUnavailable):
        verify_candidate_bundle(patch_bundle, repository=None)


# -- one refusal per check, in order --------------------------------------------------


def test_wire_shape() -> None:
    refusal = refused({"kind": "agent-candidate-bundle"})
    assert refusal.check == "wire_shape"


def test_changed_digest(patch_bundle: dict[str, Any], repo: PatchedRepository) -> None:
    changed = {**patch_bundle, "digest": sha256(b"another bundle")}
    refusal = refused(changed, repo.path)
    assert (refusal.check, refusal.pointer, refusal.code) == (
        "bundle_digest", "/digest", "bundle_digest_mismatch"
    )
    edited = copy.deepcopy(patch_bundle)
    edited["execution"]["harnessVersion"] = "0.1.1"  # any edit without resealing
    assert refused(edited, repo.path).check == "bundle_digest"


def _flip_embedded(artifact: dict[str, Any]) -> None:
    content = bytearray(base64.b64decode(artifact["content"]))
    content[0] ^= 0x01
    artifact["content"] = base64.b64encode(bytes(content)).decode()


def test_flipped_byte_in_an_embedded_artifact(patch_bundle: dict[str, Any]) -> None:
    tampered = copy.deepcopy(patch_bundle)
    _flip_embedded(tampered["knowledge"]["evaluation"])
    refusal = refused(seal(tampered))
    assert (refusal.check, refusal.pointer, refusal.code) == (
        "embedded_artifact", "/knowledge/evaluation/sha256", "sha256_mismatch"
    )


def test_flipped_byte_in_the_patch_is_caught_before_git(patch_bundle: dict[str, Any]) -> None:
    tampered = copy.deepcopy(patch_bundle)
    _flip_embedded(tampered["code"]["patch"]["artifact"])
    refusal = refused(seal(tampered))
    assert (refusal.check, refusal.pointer) == ("embedded_artifact", "/code/patch/artifact/sha256")


def test_wrong_byte_length_of_an_embedded_artifact(patch_bundle: dict[str, Any]) -> None:
    tampered = copy.deepcopy(patch_bundle)
    tampered["knowledge"]["evaluation"]["byteLength"] += 1
    refusal = refused(seal(tampered))
    assert refusal.check == "wire_shape"  # the schema already ties byteLength to the base64
    assert "/knowledge/evaluation/byteLength" in [issue.path for issue in refusal.issues]


def test_wrong_byte_length_of_an_external_artifact(patch_bundle: dict[str, Any]) -> None:
    tampered = with_external_artifacts(patch_bundle)
    tampered["memory"]["seed"]["byteLength"] = len(SEED_BYTES) + 3
    refusal = refused(seal(tampered))
    assert (refusal.check, refusal.pointer, refusal.code) == (
        "external_artifact", "/memory/seed/byteLength", "byte_length_mismatch"
    )


def test_changed_inline_resource(patch_bundle: dict[str, Any]) -> None:
    tampered = copy.deepcopy(patch_bundle)
    resource = tampered["profile"]["resources"]["files"][0]["resource"]
    resource["content"] = resource["content"].replace("true", "TRUE")
    refusal = refused(seal(tampered))
    assert (refusal.check, refusal.code) == ("inline_resource", "sha256_mismatch")
    assert refusal.pointer == "/profile/resources/files/0/resource/sha256"


def test_external_bytes_that_differ(patch_bundle: dict[str, Any]) -> None:
    bundle = with_external_artifacts(patch_bundle)
    lying = InMemoryArtifactResolver(
        {**EXTERNAL_BYTES, sha256(SEED_BYTES): SEED_BYTES.replace(b"[]", b"{}")}
    )
    refusal = refused(bundle, resolver=lying)
    assert (refusal.check, refusal.pointer, refusal.code) == (
        "external_artifact", "/memory/seed/sha256", "sha256_mismatch"
    )


def test_external_bytes_that_are_absent(patch_bundle: dict[str, Any]) -> None:
    refusal = refused(with_external_artifacts(patch_bundle), resolver=InMemoryArtifactResolver())
    assert (refusal.check, refusal.code) == ("external_artifact", "artifact_unavailable")
    assert refusal.pointer == "/profile/resources/skills/0"


def _fake_dns(answer: str) -> Any:
    def resolve(host: str, port: int) -> Sequence[str]:
        return [answer]

    return resolve


@pytest.mark.parametrize(
    ("answer", "code"),
    [
        ("127.0.0.1", "loopback"),
        ("::1", "loopback"),
        ("::ffff:127.0.0.1", "loopback"),
        ("10.0.0.8", "private"),
        ("192.168.0.2", "private"),
        ("169.254.10.10", "link_local"),
        ("fe80::2", "link_local"),
        ("fd00::2", "unique_local"),
        ("224.0.0.5", "multicast"),
        ("ff02::1", "multicast"),
        ("0.0.0.0", "unspecified"),
        ("100.64.1.1", "carrier_grade_nat"),
        ("169.254.169.254", "cloud_metadata"),
        ("64:ff9b::a9fe:a9fe", "cloud_metadata"),
        ("192.0.2.7", "reserved"),
    ],
)
def test_each_ssrf_class_refuses_the_external_artifact(
    patch_bundle: dict[str, Any], answer: str, code: str
) -> None:
    resolver = HttpArtifactResolver(fetcher=SafeHttpFetcher(resolve_host=_fake_dns(answer)))
    refusal = refused(with_external_artifacts(patch_bundle), resolver=resolver)
    assert (refusal.check, refusal.code) == ("external_artifact", code)
    assert refusal.pointer == "/profile/resources/skills/0"
    assert "githubusercontent" not in str(refusal)


def _reseal_patch(bundle: dict[str, Any], patch: bytes) -> dict[str, Any]:
    tampered = copy.deepcopy(bundle)
    tampered["code"]["patch"]["artifact"] = embedded(patch)
    return seal(tampered)


def test_patch_that_does_not_apply(patch_bundle: dict[str, Any], repo: PatchedRepository) -> None:
    patch = repo.patch.replace(b"-print('hello')", b"-print('HELLO')")
    refusal = refused(_reseal_patch(patch_bundle, patch), repo.path)
    assert (refusal.check, refusal.pointer, refusal.code) == (
        "code_state", "/code/patch/artifact", "patch_does_not_apply"
    )


def test_candidate_tree_that_differs(patch_bundle: dict[str, Any], repo: PatchedRepository) -> None:
    tampered = copy.deepcopy(patch_bundle)
    tampered["code"]["candidateTree"] = "d" * 40
    refusal = refused(seal(tampered), repo.path)
    assert (refusal.check, refusal.pointer, refusal.code) == (
        "code_state", "/code/candidateTree", "candidate_tree_mismatch"
    )


def test_rewritten_patch_with_every_digest_recomputed(
    patch_bundle: dict[str, Any], repo: PatchedRepository
) -> None:
    # a tamperer swaps the patch and fixes every hash; only Git's tree id exposes it
    patch = repo.patch.replace(b"X = 1", b"X = 2")
    refusal = refused(_reseal_patch(patch_bundle, patch), repo.path)
    assert (refusal.check, refusal.code) == ("code_state", "candidate_tree_mismatch")


def test_absent_base_commit(patch_bundle: dict[str, Any], repo: PatchedRepository) -> None:
    tampered = copy.deepcopy(patch_bundle)
    tampered["code"]["baseCommit"] = "1" * 40
    refusal = refused(seal(tampered), repo.path)
    assert (refusal.check, refusal.pointer, refusal.code) == (
        "code_state", "/code/baseCommit", "base_commit_absent"
    )


def test_manifest_bytes_that_are_not_canonical(
    patch_bundle: dict[str, Any], repo: PatchedRepository
) -> None:
    tampered = copy.deepcopy(patch_bundle)
    workspace = tampered["execution"]["workspace"]
    pretty = json.dumps(workspace["material"], indent=2).encode()
    workspace["manifest"] = embedded(pretty)
    workspace["digest"] = workspace["manifest"]["sha256"]
    refusal = refused(seal(tampered), repo.path)
    assert (refusal.check, refusal.pointer, refusal.code) == (
        "workspace_snapshot", "/execution/workspace/manifest", "manifest_bytes_mismatch"
    )


def test_entrypoint_missing_from_the_manifest(patch_bundle: dict[str, Any]) -> None:
    tampered = copy.deepcopy(patch_bundle)
    tampered["execution"]["launch"]["entrypoint"] = "src/missing.py"
    refusal = refused(seal(tampered))
    # the bundle schema already requires the entrypoint in the manifest
    assert refusal.pointer == "/execution/launch/entrypoint"
    assert refusal.check == "wire_shape"


def test_the_first_failed_check_is_reported(patch_bundle: dict[str, Any]) -> None:
    tampered = copy.deepcopy(patch_bundle)
    _flip_embedded(tampered["knowledge"]["evaluation"])
    tampered["code"]["baseCommit"] = "1" * 40  # also broken, but checked later
    assert refused(tampered).check == "bundle_digest"
    assert refused(seal(tampered)).check == "embedded_artifact"


def test_refusals_do_not_quote_bundle_content(patch_bundle: dict[str, Any]) -> None:
    tampered = copy.deepcopy(patch_bundle)
    _flip_embedded(tampered["code"]["patch"]["artifact"])
    refusal = refused(seal(tampered))
    text = str(refusal) + json.dumps(refusal.to_wire())
    assert tampered["code"]["patch"]["artifact"]["content"][:16] not in text
    assert "print(" not in text


def test_digest_is_rfc8785_without_the_top_level_digest(patch_bundle: dict[str, Any]) -> None:
    material = {key: value for key, value in patch_bundle.items() if key != "digest"}
    assert patch_bundle["digest"] == canonical_digest(material)
    assert BASE_FILES  # the repository fixture is the one the patch was made against
