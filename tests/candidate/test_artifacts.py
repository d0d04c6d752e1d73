"""Captured artifacts, closed locators and workspace snapshots (spec: "Resources are
embedded, addressed through closed S3/IPFS locators ...")."""

from __future__ import annotations

import base64
import hashlib
from typing import Any

import pytest

from agent_interface.candidate.artifacts import (
    AgentCandidateArtifactLocator,
    AgentCandidateArtifactRef,
    AgentCandidateCapturedArtifact,
    AgentCandidateEmbeddedArtifact,
    AgentCandidateWorkspaceManifestMaterial,
    AgentCandidateWorkspaceSnapshotEvidence,
    embed_artifact,
    validate_embedded_artifact,
)
from agent_interface.core.errors import ContractError
from agent_interface.core.model import wire_adapter
from tests.candidate.fixtures import embedded, sha, snapshot


def codes(tp: Any, data: Any) -> list[str]:
    with pytest.raises(ContractError) as caught:
        wire_adapter(tp).parse_value(data)
    return [issue.code for issue in caught.value.issues]


def s3(key: str, **extra: Any) -> dict[str, Any]:
    return {"kind": "s3", "bucket": "artifacts.example", "key": key, **extra}


def test_s3_locator_keys_refuse_traversal_and_credentials() -> None:
    locator = wire_adapter(AgentCandidateArtifactLocator)
    assert locator.parse_value(s3("runs/1/trace.jsonl", region="us-gov-west-1"))
    for key in ("../x", "/abs", "a/./b", "a\\b", ".git/config", "C:/x", "https://u:p@x.test/"):
        assert codes(AgentCandidateArtifactLocator, s3(key)) == ["unsafe_artifact_path"]
    assert codes(AgentCandidateArtifactLocator, s3("k", region="mars-1"))


@pytest.mark.parametrize("bucket", ["ab", "Upper", "192.168.1.1", "-lead", "trail-"])
def test_s3_bucket_names(bucket: str) -> None:
    assert codes(AgentCandidateArtifactLocator, {"kind": "s3", "bucket": bucket, "key": "k"})


def test_ipfs_locator() -> None:
    cid = "bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi"
    assert wire_adapter(AgentCandidateArtifactLocator).parse_value({"kind": "ipfs", "cid": cid, "path": "a/b"})
    assert codes(AgentCandidateArtifactLocator, {"kind": "ipfs", "cid": cid, "path": "../b"})
    assert codes(AgentCandidateArtifactLocator, {"kind": "ipfs", "cid": "Qm123"})
    # Closed set: no other scheme can be named.
    assert codes(AgentCandidateArtifactLocator, {"kind": "https", "url": "https://x.test/a"})


def test_artifact_ref_is_strict() -> None:
    ref = {"locator": s3("a"), "sha256": sha("a"), "byteLength": 3}
    assert AgentCandidateArtifactRef.parse_wire(ref)
    assert codes(AgentCandidateArtifactRef, {**ref, "url": "x"}) == ["extra_forbidden"]
    assert codes(AgentCandidateArtifactRef, {**ref, "byteLength": -1})
    assert codes(AgentCandidateArtifactRef, {**ref, "byteLength": 1.5})


@pytest.mark.parametrize(
    ("content", "length", "code"),
    [
        ("e30", 2, "base64_shape"),
        ("e30===", 2, "base64_shape"),
        ("e3-0", 3, "base64_shape"),
        ("e31=", 2, "base64_padding"),
        ("ZGlmZiAtLWdpdA==", 9, "byte_length_mismatch"),
    ],
)
def test_embedded_artifact_refusals(content: str, length: int, code: str) -> None:
    assert code in codes(AgentCandidateEmbeddedArtifact, embedded("a", content, length))


def test_embedded_artifact_accepts_canonical_base64() -> None:
    assert AgentCandidateEmbeddedArtifact.parse_wire(embedded("a", "", 0))
    assert AgentCandidateEmbeddedArtifact.parse_wire(embedded("a", "ZGlmZiAtLWdpdA==", 10))


def test_validate_embedded_artifact_checks_bytes_and_hash() -> None:
    artifact = embed_artifact(b"diff --git")
    assert validate_embedded_artifact(artifact) == b"diff --git"
    content = base64.b64encode(b"{}").decode()
    wrong_hash = AgentCandidateEmbeddedArtifact.parse_wire(embedded("a", content, 2))
    with pytest.raises(ContractError) as caught:
        validate_embedded_artifact(wrong_hash)
    assert caught.value.issues[0].code == "sha256_mismatch"
    real = "sha256:" + hashlib.sha256(b"{}").hexdigest()
    short = AgentCandidateEmbeddedArtifact.model_construct(
        encoding="base64", content=content, sha256=real, byte_length=3
    )
    with pytest.raises(ContractError) as caught:
        validate_embedded_artifact(short)
    assert caught.value.issues[0].code == "byte_length_mismatch"


def test_captured_artifact_is_either_form() -> None:
    captured = wire_adapter(AgentCandidateCapturedArtifact)
    assert isinstance(captured.parse_value(embedded("a")), AgentCandidateEmbeddedArtifact)
    ref = {"locator": s3("a"), "sha256": sha("a"), "byteLength": 3}
    assert isinstance(captured.parse_value(ref), AgentCandidateArtifactRef)
    assert codes(AgentCandidateCapturedArtifact, {**ref, "encoding": "base64"})


def file(path: str, mode: int = 0o644) -> dict[str, Any]:
    return {"path": path, "mode": mode, "sha256": sha("d"), "byteLength": 1}


def test_manifest_paths_are_sorted_unique_and_relative() -> None:
    material = {"kind": "agent-candidate-workspace-manifest", "files": [file("A"), file("a"), file("a/b")]}
    assert AgentCandidateWorkspaceManifestMaterial.parse_wire(material)
    unsorted = {**material, "files": [file("b"), file("a")]}
    assert codes(AgentCandidateWorkspaceManifestMaterial, unsorted) == ["manifest_order"]
    duplicate = {**material, "files": [file("a"), file("a")]}
    assert codes(AgentCandidateWorkspaceManifestMaterial, duplicate) == ["manifest_order"]
    # UTF-16 order, as JavaScript compares strings: U+1F600 is D83D DE00, before U+FF5E.
    utf16 = {**material, "files": [file("\U0001f600"), file("\uff5e")]}
    assert AgentCandidateWorkspaceManifestMaterial.parse_wire(utf16)
    for bad in ("../x", ".sidecar/a", "a/"):
        assert codes(AgentCandidateWorkspaceManifestMaterial, {**material, "files": [file(bad)]})
    assert codes(AgentCandidateWorkspaceManifestMaterial, {**material, "files": [file("a", 0o1777)]})


def test_snapshot_digest_is_the_manifest_hash() -> None:
    evidence = snapshot("c", [file("a")])
    assert AgentCandidateWorkspaceSnapshotEvidence.parse_wire(evidence)
    assert codes(AgentCandidateWorkspaceSnapshotEvidence, {**evidence, "digest": sha("f")}) == [
        "workspace_digest_mismatch"
    ]
    empty = {**evidence, "archive": embedded("e", "", 0)}
    assert codes(AgentCandidateWorkspaceSnapshotEvidence, empty) == ["workspace_empty_bytes"]
