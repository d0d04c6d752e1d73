"""Workspace lease records and source snapshot policies: one accepted and one refused
example per rule, plus the cases of the reference's ``agent-workspace-lease.test.ts``."""

from __future__ import annotations

from typing import Any

import pytest

from agent_interface.core.canonical import canonical_digest
from agent_interface.core.errors import ContractError
from agent_interface.environment.source_snapshot import AgentWorkspaceSourceSnapshotPolicy
from agent_interface.environment.workspace_lease import (
    AGENT_WORKSPACE_LEASE_PHASES,
    AgentWorkspaceAllocationIdentity,
    AgentWorkspaceLeaseRecord,
    AgentWorkspaceLeaseRecordMaterial,
    AgentWorkspaceSealRequest,
    build_agent_workspace_lease_record,
    canonical_agent_workspace_lease_record_digest,
)


def sha(digit: str) -> str:
    return "sha256:" + digit * 64


POLICY = {
    "kind": "provider-declared",
    "name": "agent-runtime/local-private-workspace-source",
    "version": 1,
    "digest": sha("1"),
}


def base() -> dict[str, Any]:
    return {
        "kind": "agent-workspace-lease",
        "schemaVersion": 1,
        "leaseId": "local-workspace.lease-1",
        "ownerId": "discovery-run-1",
        "workspace": {
            "provider": "agent-runtime/local-private-workspace",
            "root": "/private/workspaces/allocation-1",
            "identityDigest": sha("2"),
        },
        "isolation": "per-run",
        "sourceSnapshotDigest": sha("3"),
        "sourceSnapshotPolicy": dict(POLICY),
        "createdAtMs": 100,
        "updatedAtMs": 200,
        "expiresAtMs": 2_000,
    }


SEALED = {"preparedWorkspaceDigest": sha("4"), "profileActivationDigest": sha("5")}
BOUND = {**SEALED, "executionPreparationDigest": sha("6")}


def material(phase: str) -> dict[str, Any]:
    if phase == "copy-ready":
        return {**base(), "phase": phase, "cleanupAttempts": 0}
    if phase == "workspace-sealed":
        return {**base(), **SEALED, "phase": phase, "cleanupAttempts": 0}
    if phase == "execution-bound":
        return {**base(), **BOUND, "phase": phase, "cleanupAttempts": 0}
    cleanup = {**base(), **BOUND, "phase": phase, "cleanupAttempts": 1}
    if phase == "cleanup-failed":
        cleanup["cleanupError"] = "recursive removal returned while files remained"
    return cleanup


def without(value: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: v for k, v in value.items() if k not in keys}


def codes(error: ContractError) -> set[str]:
    return {issue.code for issue in error.issues}


@pytest.mark.parametrize("phase", AGENT_WORKSPACE_LEASE_PHASES)
def test_every_phase_valid_projection_self_hashes(phase: str) -> None:
    record = build_agent_workspace_lease_record(material(phase))
    wire = record.to_wire()
    assert AgentWorkspaceLeaseRecord.parse_wire(wire) == record
    assert record.digest == canonical_agent_workspace_lease_record_digest(material(phase))
    assert record.digest == canonical_digest(without(wire, "digest"))
    assert record.phase == phase
    assert "ownerToken" not in wire and "ownerTokenDigest" not in wire


def test_digest_covers_exactly_the_material() -> None:
    value = material("execution-bound")
    assert canonical_agent_workspace_lease_record_digest(value) == canonical_digest(value)
    parsed = AgentWorkspaceLeaseRecordMaterial.parse_wire(value)
    assert canonical_agent_workspace_lease_record_digest(parsed) == canonical_digest(value)
    # a record passed back in digests to its own digest: the old digest is not material
    record = build_agent_workspace_lease_record(value)
    assert canonical_agent_workspace_lease_record_digest(record) == record.digest


@pytest.mark.parametrize(
    "value",
    [
        {**material("copy-ready"), "preparedWorkspaceDigest": sha("4")},
        without(material("workspace-sealed"), "profileActivationDigest"),
        {**material("workspace-sealed"), "executionPreparationDigest": sha("6")},
        without(material("execution-bound"), "executionPreparationDigest"),
        {**material("execution-bound"), "cleanupAttempts": 1},
    ],
)
def test_active_phases_require_their_exact_evidence(value: dict[str, Any]) -> None:
    with pytest.raises(ContractError):
        build_agent_workspace_lease_record(value)


@pytest.mark.parametrize("evidence", [{}, SEALED, BOUND])
def test_cleanup_follows_any_evidence_stage(evidence: dict[str, Any]) -> None:
    build_agent_workspace_lease_record({**base(), **evidence, "phase": "destroying", "cleanupAttempts": 1})


def test_partial_evidence_is_refused() -> None:
    with pytest.raises(ContractError) as caught:
        build_agent_workspace_lease_record(
            {**base(), "phase": "destroying", "preparedWorkspaceDigest": sha("4"), "cleanupAttempts": 1}
        )
    assert "workspace_lease_partial_seal_evidence" in codes(caught.value)
    with pytest.raises(ContractError) as caught:
        build_agent_workspace_lease_record(
            {**base(), "phase": "destroying", "executionPreparationDigest": sha("6"), "cleanupAttempts": 1}
        )
    assert any(issue.path == "/executionPreparationDigest" for issue in caught.value.issues)


def test_cleanup_phases_need_an_attempt() -> None:
    with pytest.raises(ContractError) as caught:
        build_agent_workspace_lease_record({**material("destroyed"), "cleanupAttempts": 0})
    assert [issue.path for issue in caught.value.issues] == ["/cleanupAttempts"]


def test_cleanup_error_only_and_always_in_cleanup_failed() -> None:
    with pytest.raises(ContractError) as caught:
        build_agent_workspace_lease_record(without(material("cleanup-failed"), "cleanupError"))
    assert "workspace_lease_cleanup_error_missing" in codes(caught.value)
    with pytest.raises(ContractError) as caught:
        build_agent_workspace_lease_record({**material("destroyed"), "cleanupError": "left files"})
    assert "workspace_lease_cleanup_error_out_of_phase" in codes(caught.value)


def test_identities_are_distinct() -> None:
    sealed = material("workspace-sealed")
    original = build_agent_workspace_lease_record(sealed)
    changed_policy = build_agent_workspace_lease_record(
        {**sealed, "sourceSnapshotPolicy": {**POLICY, "version": 2}}
    )
    changed_provider = build_agent_workspace_lease_record(
        {**sealed, "workspace": {**base()["workspace"], "provider": "sandbox/remote"}}
    )
    changed_isolation = build_agent_workspace_lease_record({**sealed, "isolation": "shared"})
    digests = {original.digest, changed_policy.digest, changed_provider.digest, changed_isolation.digest}
    assert len(digests) == 4


def test_tampering_private_fields_time_and_unsanitized_text_are_refused() -> None:
    record = build_agent_workspace_lease_record(material("execution-bound")).to_wire()
    failed = build_agent_workspace_lease_record(material("cleanup-failed")).to_wire()
    invalid = [
        {**record, "ownerToken": "private-capability"},
        {**record, "ownerTokenDigest": sha("9")},
        {**record, "expiresAtMs": record["createdAtMs"]},
        {**record, "updatedAtMs": record["createdAtMs"] - 1},
        {**record, "ownerId": "   "},
        {**record, "workspace": {**record["workspace"], "root": "https://user:password@workspace.example.test"}},
        {**failed, "cleanupError": "authorization failed: Bearer private-value"},
        {**record, "workspace": {**record["workspace"], "root": "/different/root"}},
    ]
    for value in invalid:
        with pytest.raises(ContractError) as caught:
            AgentWorkspaceLeaseRecord.parse_wire(value)
        text = str(caught.value)
        assert "private-capability" not in text and "password" not in text and "private-value" not in text


def test_tampered_digest_names_the_digest() -> None:
    record = build_agent_workspace_lease_record(material("copy-ready")).to_wire()
    with pytest.raises(ContractError) as caught:
        AgentWorkspaceLeaseRecord.parse_wire({**record, "updatedAtMs": 201})
    assert [(issue.path, issue.code) for issue in caught.value.issues] == [
        ("/digest", "workspace_lease_digest_mismatch")
    ]


def test_timestamps_are_safe_non_negative_integers() -> None:
    build_agent_workspace_lease_record({**material("copy-ready"), "createdAtMs": 0})
    for bad in (-1, 1.5, 2**53, "100", True):
        with pytest.raises(ContractError):
            build_agent_workspace_lease_record({**material("copy-ready"), "createdAtMs": bad})
    # an integral float reads as an integer, as it does in JavaScript
    record = build_agent_workspace_lease_record({**material("copy-ready"), "createdAtMs": 100.0})
    assert record.to_wire()["createdAtMs"] == 100


@pytest.mark.parametrize(
    ("name", "ok"),
    [
        ("agent-runtime/source", True),
        ("x" * 500, True),
        ("x" * 501, False),
        ("", False),
        ("   ", False),
        ("tab\tseparated", False),
        ("ghp_" + "a" * 36, False),
        ("https://example.test/?token=abc", False),
        ("\ud800", False),
    ],
)
def test_public_identifier_rule(name: str, ok: bool) -> None:
    value = {**POLICY, "name": name}
    if ok:
        AgentWorkspaceSourceSnapshotPolicy.parse_wire(value)
    else:
        with pytest.raises(ContractError):
            AgentWorkspaceSourceSnapshotPolicy.parse_wire(value)


@pytest.mark.parametrize(
    ("change", "ok"),
    [
        ({"version": 2**53 - 1}, True),
        ({"version": 0}, False),
        ({"version": 2**53}, False),
        ({"kind": "shared"}, False),
        ({"digest": "sha256:" + "A" * 64}, False),
        ({"extra": 1}, False),
    ],
)
def test_source_snapshot_policy_rules(change: dict[str, Any], ok: bool) -> None:
    value = {**POLICY, **change}
    if ok:
        AgentWorkspaceSourceSnapshotPolicy.parse_wire(value)
    else:
        with pytest.raises(ContractError):
            AgentWorkspaceSourceSnapshotPolicy.parse_wire(value)


def test_allocation_identity_locator_rules() -> None:
    identity = base()["workspace"]
    AgentWorkspaceAllocationIdentity.parse_wire({**identity, "root": "r" * 16_384})
    for root in ("r" * 16_385, "", " ", "/a\nb", "https://u:p@host.test/x"):
        with pytest.raises(ContractError):
            AgentWorkspaceAllocationIdentity.parse_wire({**identity, "root": root})


def test_owner_token_never_reaches_repr() -> None:
    request = AgentWorkspaceSealRequest(
        lease_id="lease-1", owner_token="owner-secret-value", profile_activation_digest=sha("5")
    )
    assert "owner-secret-value" not in repr(request)
    assert request.owner_token == "owner-secret-value"


def test_schema_version_is_the_number_one() -> None:
    assert build_agent_workspace_lease_record({**material("copy-ready"), "schemaVersion": 1.0}).schema_version == 1
    for bad in (True, 2, "1"):
        with pytest.raises(ContractError):
            build_agent_workspace_lease_record({**material("copy-ready"), "schemaVersion": bad})
