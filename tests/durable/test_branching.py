from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_interface.conformance.branching import run_branching_conformance
from agent_interface.core.canonical import canonical_digest
from agent_interface.core.model import wire_adapter
from agent_interface.core.registry import _TYPES as REGISTERED
from agent_interface.durable.branching import (
    AgentWorkspaceBranching,
    durable_branching_flags_problem,
)
from agent_interface.durable.checkpoint import (
    WorkspaceCheckpointLookupResult,
    WorkspaceCheckpointRef,
    WorkspaceCheckpointRequest,
    WorkspaceCheckpointResult,
    workspace_checkpoint_request_digest,
    workspace_checkpoint_result_matches_request,
)
from agent_interface.durable.cleanup import (
    WorkspaceCleanupAcknowledgement,
    WorkspaceCleanupRequest,
    workspace_cleanup_acknowledgement_matches,
    workspace_cleanup_request_digest,
)
from agent_interface.durable.confidential import (
    ConfidentialAttestation,
    ConfidentialExecutionRequest,
    confidential_execution_request_digest,
    confidential_execution_verified,
)
from agent_interface.durable.fork import (
    ForkedEnvironmentRef,
    WorkspaceForkLookupResult,
    WorkspaceForkRequest,
    WorkspaceForkResult,
    forked_environment_confidentiality_verified,
    workspace_fork_request_digest,
    workspace_fork_result_matches_request,
)
from agent_interface.testing.branching import InMemoryWorkspaceBranching
from tests.durable.test_portable_context_fixtures import absent, deep, digest_of, refusals

SOURCE = {
    "runId": "run-1",
    "provider": "tangle",
    "environmentId": "environment-source",
    "sessionId": "session-1",
    "executionId": "execution-1",
    "requestDigest": digest_of("a"),
}
CHECKPOINT_MATERIAL = {"source": SOURCE, "name": "branch boundary", "metadata": {"messageId": "message-4"}}
CHECKPOINT_RESULT = wire_adapter(WorkspaceCheckpointResult)
CHECKPOINT_LOOKUP = wire_adapter(WorkspaceCheckpointLookupResult)
FORK_RESULT = wire_adapter(WorkspaceForkResult)
FORK_LOOKUP = wire_adapter(WorkspaceForkLookupResult)


def checkpoint_request() -> dict[str, Any]:
    return {
        **deep(CHECKPOINT_MATERIAL),
        "idempotencyKey": "checkpoint-operation-1",
        "requestDigest": workspace_checkpoint_request_digest(CHECKPOINT_MATERIAL),
    }


def checkpoint_ref() -> dict[str, Any]:
    request = checkpoint_request()
    return {
        "checkpointId": "checkpoint-1",
        "provider": "tangle",
        "source": deep(SOURCE),
        "idempotencyKey": request["idempotencyKey"],
        "requestDigest": request["requestDigest"],
        "createdAt": "2026-08-01T20:00:00.000Z",
        "metadata": {"messageId": "message-4"},
    }


def fork_material() -> dict[str, Any]:
    return {
        "checkpoint": checkpoint_ref(),
        "name": "branch destination",
        "metadata": {"branchId": "branch-2"},
        "placement": {"kind": "sandbox", "sandboxId": "sandbox-2", "region": "us-west"},
    }


def fork_request() -> dict[str, Any]:
    material = fork_material()
    return {**material, "idempotencyKey": "fork-operation-1", "requestDigest": workspace_fork_request_digest(material)}


def environment() -> dict[str, Any]:
    request = fork_request()
    return {
        "provider": "tangle",
        "environmentId": "environment-destination",
        "sourceEnvironmentId": SOURCE["environmentId"],
        "source": deep(SOURCE),
        "sourceCheckpointId": "checkpoint-1",
        "idempotencyKey": request["idempotencyKey"],
        "requestDigest": request["requestDigest"],
        "createdAt": "2026-08-01T20:00:01.000Z",
        "placement": request["placement"],
        "confidentialRequested": False,
        "confidential": False,
        "metadata": request["metadata"],
    }


def identity(request: dict[str, Any]) -> dict[str, Any]:
    return {"idempotencyKey": request["idempotencyKey"], "requestDigest": request["requestDigest"]}


# --- checkpoint --------------------------------------------------------------------------


def test_checkpoint_request_digest_binds_material_not_key() -> None:
    request = WorkspaceCheckpointRequest.parse_wire(checkpoint_request())
    assert request.request_digest == canonical_digest(CHECKPOINT_MATERIAL)
    assert workspace_checkpoint_request_digest(request) == request.request_digest
    changed = {**checkpoint_request(), "name": "changed"}
    assert ("/requestDigest", "digest_mismatch") in refusals(lambda: WorkspaceCheckpointRequest.parse_wire(changed))
    rekeyed = {**checkpoint_request(), "idempotencyKey": "another-key"}
    assert WorkspaceCheckpointRequest.parse_wire(rekeyed).request_digest == request.request_digest


def test_checkpoint_source_must_be_an_exact_run() -> None:
    material = deep(CHECKPOINT_MATERIAL)
    del material["source"]["executionId"]
    assert ("/source/executionId", "missing") in refusals(lambda: workspace_checkpoint_request_digest(material))


def test_checkpoint_ref_provider_matches_source() -> None:
    assert WorkspaceCheckpointRef.parse_wire(checkpoint_ref()).checkpoint_id == "checkpoint-1"
    assert ("/provider", "provider_mismatch") in refusals(
        lambda: WorkspaceCheckpointRef.parse_wire({**checkpoint_ref(), "provider": "other"})
    )


@pytest.mark.parametrize("status", ["created", "replayed"])
def test_checkpoint_success_repeats_identity(status: str) -> None:
    request = checkpoint_request()
    answer = {"status": status, **identity(request), "checkpoint": checkpoint_ref()}
    assert CHECKPOINT_RESULT.parse(answer).status == status
    assert workspace_checkpoint_result_matches_request(request, answer)
    wrong = {**answer, "idempotencyKey": "wrong-operation"}
    assert ("/checkpoint", "resource_identity_mismatch") in refusals(lambda: CHECKPOINT_RESULT.parse(wrong))
    assert not workspace_checkpoint_result_matches_request(request, wrong)
    assert not workspace_checkpoint_result_matches_request(request, {**answer, "requestDigest": digest_of("8")})


def test_checkpoint_found_matches_and_wrong_answers_do_not() -> None:
    request = checkpoint_request()
    found = {"status": "found", **identity(request), "checkpoint": checkpoint_ref()}
    assert CHECKPOINT_LOOKUP.parse(found).status == "found"
    assert workspace_checkpoint_result_matches_request(request, found)
    assert not workspace_checkpoint_result_matches_request({**request, "name": "changed without a new digest"}, found)
    assert not workspace_checkpoint_result_matches_request(
        request, {**found, "checkpoint": {**checkpoint_ref(), "createdAt": "not-a-timestamp"}}
    )
    assert not workspace_checkpoint_result_matches_request(
        request, {**found, "checkpoint": {**checkpoint_ref(), "metadata": {"messageId": "other"}}}
    )
    other_source = {**SOURCE, "runId": "run-2"}
    assert not workspace_checkpoint_result_matches_request(
        request, {**found, "checkpoint": {**checkpoint_ref(), "source": other_source}}
    )


@pytest.mark.parametrize("status", ["conflict", "unknown", "not_found"])
def test_checkpoint_non_success_answers_never_match(status: str) -> None:
    request = checkpoint_request()
    extras: dict[str, dict[str, Any]] = {
        "conflict": {"existingRequestDigest": digest_of("f")},
        "unknown": {"message": "remote outcome unavailable", "retryable": False},
        "not_found": {},
    }
    extra = extras[status]
    answer = {"status": status, **identity(request), **extra}
    assert CHECKPOINT_LOOKUP.parse(answer).status == status
    if status != "not_found":
        assert CHECKPOINT_RESULT.parse(answer).status == status
    assert not workspace_checkpoint_result_matches_request(request, answer)


def test_unknown_answer_states_retry_safety() -> None:
    answer = {"status": "unknown", **identity(checkpoint_request()), "message": "m"}
    assert absent("/retryable", "missing", refusals(lambda: CHECKPOINT_RESULT.parse(answer)))


@pytest.mark.parametrize(
    ("adapter", "request_of"),
    [
        (CHECKPOINT_RESULT, checkpoint_request),
        (CHECKPOINT_LOOKUP, checkpoint_request),
        (FORK_RESULT, fork_request),
        (FORK_LOOKUP, fork_request),
    ],
)
def test_conflict_never_names_its_own_request(adapter: Any, request_of: Any) -> None:
    conflict = {"status": "conflict", **identity(request_of())}
    assert adapter.parse({**conflict, "existingRequestDigest": digest_of("f")}).status == "conflict"
    found = refusals(lambda: adapter.parse({**conflict, "existingRequestDigest": conflict["requestDigest"]}))
    assert ("/existingRequestDigest", "self_conflict") in found


# --- fork ----------------------------------------------------------------------------------


def test_fork_request_binds_checkpoint_and_placement() -> None:
    request = WorkspaceForkRequest.parse_wire(fork_request())
    assert request.request_digest == canonical_digest(fork_material())
    assert ("/requestDigest", "digest_mismatch") in refusals(
        lambda: WorkspaceForkRequest.parse_wire({**fork_request(), "name": "changed"})
    )
    moved = {**fork_request(), "placement": {"kind": "local"}}
    assert ("/requestDigest", "digest_mismatch") in refusals(lambda: WorkspaceForkRequest.parse_wire(moved))


def test_confidential_fork_request_binds_nonce_policy_and_profile() -> None:
    material = {**fork_material(), "confidential": {"requested": True, "nonce": "n"}}
    assert ("/confidential/requested", "confidential_binding_missing") in refusals(
        lambda: workspace_fork_request_digest(material)
    )
    complete = {"requested": True, "nonce": "n", "policy": "p", "profileDigest": digest_of("c")}
    assert confidential_execution_request_digest(complete) == canonical_digest(complete)
    unrequested = {**complete, "requested": False}
    assert ("/requested", "confidential_fields_unrequested") in refusals(
        lambda: ConfidentialExecutionRequest.parse_wire(unrequested)
    )


def test_forked_environment_rules() -> None:
    assert ForkedEnvironmentRef.parse_wire(environment()).environment_id == "environment-destination"
    same = {**environment(), "environmentId": SOURCE["environmentId"]}
    assert ("/environmentId", "fork_reuses_source_environment") in refusals(lambda: ForkedEnvironmentRef.parse_wire(same))
    mislabelled = {**environment(), "sourceEnvironmentId": "environment-other"}
    assert ("/sourceEnvironmentId", "source_environment_mismatch") in refusals(
        lambda: ForkedEnvironmentRef.parse_wire(mislabelled)
    )
    assert ("/provider", "provider_mismatch") in refusals(
        lambda: ForkedEnvironmentRef.parse_wire({**environment(), "provider": "other"})
    )


@pytest.mark.parametrize("status", ["created", "replayed", "found"])
def test_fork_success_matches_exact_request(status: str) -> None:
    request = fork_request()
    answer = {"status": status, **identity(request), "environment": environment()}
    adapter = FORK_LOOKUP if status == "found" else FORK_RESULT
    assert adapter.parse(answer).status == status
    assert workspace_fork_result_matches_request(request, answer)
    assert not workspace_fork_result_matches_request({**request, "name": "changed without a new digest"}, answer)
    assert not workspace_fork_result_matches_request(request, {**answer, "requestDigest": digest_of("8")})
    assert ("/environment", "resource_identity_mismatch") in refusals(
        lambda: adapter.parse({**answer, "idempotencyKey": "wrong-operation"})
    )


@pytest.mark.parametrize(
    "changes",
    [
        {"createdAt": "not-a-timestamp"},
        {"metadata": {"branchId": "wrong-branch"}},
        {"placement": {"kind": "local"}},
        {"sourceCheckpointId": "checkpoint-other"},
        {"confidentialRequested": True},
        {"environmentId": SOURCE["environmentId"]},
    ],
)
def test_fork_answer_for_another_environment_is_refused(changes: dict[str, Any]) -> None:
    request = fork_request()
    answer = {"status": "created", **identity(request), "environment": {**environment(), **changes}}
    assert not workspace_fork_result_matches_request(request, answer)


@pytest.mark.parametrize("status", ["conflict", "unknown", "not_found"])
def test_fork_non_success_answers_never_match(status: str) -> None:
    request = fork_request()
    extras: dict[str, dict[str, Any]] = {
        "conflict": {"existingRequestDigest": digest_of("f")},
        "unknown": {"message": "remote outcome unavailable", "retryable": True},
        "not_found": {},
    }
    extra = extras[status]
    answer = {"status": status, **identity(request), **extra}
    assert FORK_LOOKUP.parse(answer).status == status
    assert not workspace_fork_result_matches_request(request, answer)


def confidential_case() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    material = {
        **fork_material(),
        "confidential": {"requested": True, "nonce": "nonce-1", "policy": "policy-1", "profileDigest": digest_of("a")},
    }
    request = {**material, "idempotencyKey": "fork-confidential", "requestDigest": workspace_fork_request_digest(material)}
    attestation = {
        "provider": "tangle",
        "requested": True,
        "nonce": "nonce-1",
        "measurement": digest_of("4"),
        "environmentId": "environment-destination",
        "source": deep(SOURCE),
        "requestDigest": request["requestDigest"],
        "profileDigest": digest_of("a"),
        "policy": "policy-1",
        "quote": "quote-1",
        "providerKeyId": "tangle-key-1",
        "providerSignature": "signature-1",
        "verifiedAt": "2026-08-01T20:00:02.000Z",
    }
    env = {
        **environment(),
        "confidentialRequested": True,
        "confidential": False,
        "requestDigest": request["requestDigest"],
        "idempotencyKey": request["idempotencyKey"],
        "confidentialAttestation": attestation,
    }
    return request, env, attestation


def test_confidentiality_needs_attestation_and_external_check() -> None:
    request, env, attestation = confidential_case()
    assert forked_environment_confidentiality_verified(request, env, lambda _a, _e: True)
    assert not forked_environment_confidentiality_verified(request, env, lambda _a, _e: False)
    assert not forked_environment_confidentiality_verified(request, env)
    asserted_only = {k: v for k, v in env.items() if k != "confidentialAttestation"} | {"confidential": True}
    assert not forked_environment_confidentiality_verified(request, asserted_only, lambda _a, _e: True)
    wrong_nonce = {**env, "confidentialAttestation": {**attestation, "nonce": "nonce-2"}}
    assert not forked_environment_confidentiality_verified(request, wrong_nonce, lambda _a, _e: True)
    assert not confidential_execution_verified(
        request={"requested": False}, environment={}, attestation=attestation, verify_provider_attestation=lambda _a, _e: True
    )


def test_attestation_rules() -> None:
    _request, env, attestation = confidential_case()
    elsewhere = {**env, "confidentialAttestation": {**attestation, "environmentId": "environment-x"}}
    assert ("/confidentialAttestation/environmentId", "attestation_environment_mismatch") in refusals(
        lambda: ForkedEnvironmentRef.parse_wire(elsewhere)
    )
    unrequested = {**env, "confidentialRequested": False}
    assert ("/confidentialAttestation", "attestation_unrequested") in refusals(
        lambda: ForkedEnvironmentRef.parse_wire(unrequested)
    )
    copied = {**env, "confidentialAttestation": {**attestation, "providerSignature": "quote-1"}}
    assert ("/confidentialAttestation/providerSignature", "signature_copies_quote") in refusals(
        lambda: ForkedEnvironmentRef.parse_wire(copied)
    )
    reused = {**env, "confidentialAttestation": {**attestation, "policy": "nonce-1"}}
    assert ("/confidentialAttestation/nonce", "nonce_reuses_policy") in refusals(
        lambda: ForkedEnvironmentRef.parse_wire(reused)
    )


# --- cleanup --------------------------------------------------------------------------------


def cleanup_request(kind: str = "checkpoint", target: str = "checkpoint-1", operation: str = "cleanup-1") -> dict[str, Any]:
    return {
        "operationId": operation,
        "kind": kind,
        "targetId": target,
        "provider": "tangle",
        "requestDigest": workspace_cleanup_request_digest({"kind": kind, "targetId": target, "provider": "tangle"}),
    }


def test_cleanup_digest_covers_kind_target_and_provider() -> None:
    request = WorkspaceCleanupRequest.parse_wire(cleanup_request())
    assert request.request_digest == canonical_digest({"kind": "checkpoint", "targetId": "checkpoint-1", "provider": "tangle"})
    assert workspace_cleanup_request_digest(request) == request.request_digest
    swapped = {**cleanup_request(), "kind": "fork"}
    assert ("/requestDigest", "digest_mismatch") in refusals(lambda: WorkspaceCleanupRequest.parse_wire(swapped))


CLEANUP_EXTRAS: dict[str, dict[str, Any]] = {
    "deleted": {},
    "already_absent": {},
    "unknown": {"message": "remote cleanup outcome", "retryable": True},
    "in_use": {"message": "a fork still depends on this checkpoint", "blockingTargetIds": ["environment-fork-1"]},
    "conflict": {"message": "reused", "existingRequestDigest": digest_of("f")},
    "transport_failure": {"message": "network", "retryable": True},
}


@pytest.mark.parametrize("status", list(CLEANUP_EXTRAS))
def test_cleanup_acknowledgement_confirms_only_removal(status: str) -> None:
    request = cleanup_request()
    ack = {**request, "status": status, **CLEANUP_EXTRAS[status]}
    assert WorkspaceCleanupAcknowledgement.parse_wire(ack).status == status
    confirmed = status in ("deleted", "already_absent")
    assert workspace_cleanup_acknowledgement_matches(request, ack) is confirmed
    assert not workspace_cleanup_acknowledgement_matches(request, {**ack, "operationId": "cleanup-other"})


def test_cleanup_acknowledgement_for_another_target_or_provider_is_refused() -> None:
    request = cleanup_request()
    for other in (cleanup_request(kind="fork"), cleanup_request(target="checkpoint-2")):
        assert not workspace_cleanup_acknowledgement_matches(request, {**other, "status": "deleted"})
    other_provider = {
        **request,
        "provider": "other",
        "requestDigest": workspace_cleanup_request_digest({"kind": "checkpoint", "targetId": "checkpoint-1", "provider": "other"}),
        "status": "deleted",
    }
    assert not workspace_cleanup_acknowledgement_matches(request, other_provider)
    forged = {**request, "provider": "other", "status": "deleted"}
    assert ("/requestDigest", "digest_mismatch") in refusals(lambda: WorkspaceCleanupAcknowledgement.parse_wire(forged))


def test_cleanup_matcher_refuses_malformed_request() -> None:
    request = {**cleanup_request(), "operationId": ""}
    assert not workspace_cleanup_acknowledgement_matches(request, {**request, "status": "deleted"})


def test_in_use_requires_unique_blockers() -> None:
    base = {**cleanup_request(), "status": "in_use", "message": "a fork still depends on this checkpoint"}
    assert absent("/blockingTargetIds", "blocking_targets_missing", refusals(lambda: WorkspaceCleanupAcknowledgement.parse_wire(base)))
    twice = {**base, "blockingTargetIds": ["e-1", "e-1"]}
    assert ("/blockingTargetIds", "duplicate_blocking_target") in refusals(
        lambda: WorkspaceCleanupAcknowledgement.parse_wire(twice)
    )
    empty = {**base, "blockingTargetIds": []}
    assert ("/blockingTargetIds", "too_short") in refusals(lambda: WorkspaceCleanupAcknowledgement.parse_wire(empty))
    stray = {**cleanup_request(), "status": "deleted", "blockingTargetIds": ["e-1"]}
    assert ("/blockingTargetIds", "blocking_targets_unexpected") in refusals(
        lambda: WorkspaceCleanupAcknowledgement.parse_wire(stray)
    )


def test_cleanup_conflict_names_a_different_request() -> None:
    base = {**cleanup_request(), "status": "conflict", "message": "cleanup operation was reused with different input"}
    assert absent(
        "/existingRequestDigest", "existing_digest_missing", refusals(lambda: WorkspaceCleanupAcknowledgement.parse_wire(base))
    )
    selfish = {**base, "existingRequestDigest": base["requestDigest"]}
    assert ("/existingRequestDigest", "self_conflict") in refusals(lambda: WorkspaceCleanupAcknowledgement.parse_wire(selfish))
    stray = {**cleanup_request(), "status": "deleted", "existingRequestDigest": digest_of("f")}
    assert ("/existingRequestDigest", "existing_digest_unexpected") in refusals(
        lambda: WorkspaceCleanupAcknowledgement.parse_wire(stray)
    )


@pytest.mark.parametrize("status", ["unknown", "transport_failure"])
def test_uncertain_cleanup_states_retry_safety(status: str) -> None:
    ack = {**cleanup_request(), "status": status, "message": "remote cleanup outcome"}
    assert absent("/retryable", "retryable_missing", refusals(lambda: WorkspaceCleanupAcknowledgement.parse_wire(ack)))
    no_message = {**cleanup_request(), "status": status, "retryable": True}
    assert absent("/message", "message_missing", refusals(lambda: WorkspaceCleanupAcknowledgement.parse_wire(no_message)))


# --- durable flags ---------------------------------------------------------------------------


def test_durable_flags_are_declared_together() -> None:
    assert durable_branching_flags_problem({"checkpoint": False, "fork": False}) is None
    assert durable_branching_flags_problem(
        {"checkpoint": True, "fork": True, "retrySafe": True, "lookup": True, "cleanup": True}
    ) is None
    assert durable_branching_flags_problem({"checkpoint": True, "fork": True, "retrySafe": True}) is not None
    assert durable_branching_flags_problem(
        {"checkpoint": True, "fork": False, "retrySafe": True, "lookup": True, "cleanup": True}
    ) is not None


# --- the in-memory engine ---------------------------------------------------------------------


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


def test_in_memory_engine_is_an_agent_workspace_branching() -> None:
    engine = InMemoryWorkspaceBranching(provider="tangle")
    assert isinstance(engine, AgentWorkspaceBranching)
    assert durable_branching_flags_problem(engine.capabilities) is None


def test_in_memory_engine_passes_conformance() -> None:
    report = run_branching_conformance(InMemoryWorkspaceBranching(provider="tangle"))
    assert report.ok, str(report)
    assert len(report.checks) == 18  # 16, plus the changed-metadata and changed-placement conflicts of issue 34


def test_in_memory_engine_with_owned_copies_passes_conformance() -> None:
    report = run_branching_conformance(InMemoryWorkspaceBranching(provider="tangle", forks_own_copy=True))
    assert report.ok, str(report)


def test_engine_in_use_then_recoverable_then_deleted() -> None:
    async def scenario() -> None:
        engine = InMemoryWorkspaceBranching(provider="tangle")
        request = WorkspaceCheckpointRequest.parse_wire(checkpoint_request())
        created = await engine.checkpoint(request)
        checkpoint = created.checkpoint
        fork = WorkspaceForkRequest.seal({**fork_material(), "checkpoint": checkpoint}, idempotency_key="fork-1")
        environment_ref = (await engine.fork(fork)).environment
        delete = WorkspaceCleanupRequest.for_target(
            operation_id="del-1", kind="checkpoint", target_id=checkpoint.checkpoint_id, provider="tangle"
        )
        blocked = await engine.delete_checkpoint(delete)
        assert blocked.status == "in_use"
        assert blocked.blocking_target_ids == (environment_ref.environment_id,)
        assert (await engine.lookup_checkpoint({**identity(checkpoint_request())})).status == "found"
        destroy = WorkspaceCleanupRequest.for_target(
            operation_id="destroy-1", kind="fork", target_id=environment_ref.environment_id, provider="tangle"
        )
        assert workspace_cleanup_acknowledgement_matches(destroy, await engine.destroy_fork(destroy))
        deleted = await engine.delete_checkpoint(delete)
        assert workspace_cleanup_acknowledgement_matches(delete, deleted)
        assert (await engine.lookup_checkpoint({**identity(checkpoint_request())})).status == "not_found"
        again = await engine.checkpoint(request)
        assert again.status == "unknown" and again.retryable is False
        assert (await engine.fork(fork)).status == "unknown"

    run(scenario())


def test_engine_refuses_foreign_provider_and_unknown_checkpoint() -> None:
    async def scenario() -> None:
        engine = InMemoryWorkspaceBranching(provider="other")
        answer = await engine.checkpoint(checkpoint_request())
        assert answer.status == "unknown"
        fork = await engine.fork(fork_request())
        assert fork.status == "unknown"
        foreign = await engine.delete_checkpoint(cleanup_request())
        assert foreign.status == "unknown" and not workspace_cleanup_acknowledgement_matches(cleanup_request(), foreign)

    run(scenario())


# --- deliberately broken engines fail conformance ----------------------------------------------


class ReplaysChangedInput(InMemoryWorkspaceBranching):
    """Treats a reused key as a replay even when the input changed."""

    async def checkpoint(self, request: Any) -> Any:
        exact = WorkspaceCheckpointRequest.parse_wire(dict(request.to_wire()))
        for key, record in self._checkpoints.items():
            if key == exact.idempotency_key and record.request_digest != exact.request_digest:
                return {
                    "status": "replayed",
                    "idempotencyKey": exact.idempotency_key,
                    "requestDigest": exact.request_digest,
                    "checkpoint": record.ref.to_wire(),
                }
        return await super().checkpoint(request)


class DeletesCheckpointUnderForks(InMemoryWorkspaceBranching):
    """Deletes a checkpoint while forks still depend on it, without saying so."""

    async def delete_checkpoint(self, request: Any) -> Any:
        for record in self._checkpoints.values():
            if record.ref.checkpoint_id == request.target_id:
                record.deleted = True
        return WorkspaceCleanupAcknowledgement(
            operation_id=request.operation_id,
            kind=request.kind,
            target_id=request.target_id,
            provider=request.provider,
            request_digest=request.request_digest,
            status="deleted",
        )


class SelfConflict(InMemoryWorkspaceBranching):
    """Answers a changed fork with a conflict naming the caller's own request."""

    async def fork(self, request: Any) -> Any:
        known = self._forks.get(request.idempotency_key)
        if known is not None and known.request_digest != request.request_digest:
            return {
                "status": "conflict",
                "idempotencyKey": request.idempotency_key,
                "requestDigest": request.request_digest,
                "existingRequestDigest": request.request_digest,
            }
        return await super().fork(request)


class WrongCleanupTarget(InMemoryWorkspaceBranching):
    """Acknowledges a fork destroy for another provider."""

    async def destroy_fork(self, request: Any) -> Any:
        answer = await super().destroy_fork(request)
        material = {"kind": answer.kind, "targetId": answer.target_id, "provider": "someone-else"}
        return {**answer.to_wire(), "provider": "someone-else", "requestDigest": workspace_cleanup_request_digest(material)}


class HalfDeclared(InMemoryWorkspaceBranching):
    @property
    def capabilities(self) -> dict[str, bool]:
        return {"checkpoint": True, "fork": True, "retrySafe": True, "lookup": False, "cleanup": True}


@pytest.mark.parametrize(
    ("engine_type", "failing"),
    [
        (ReplaysChangedInput, "checkpoint_changed_input_conflicts"),
        (DeletesCheckpointUnderForks, "checkpoint_cleanup_respects_dependent_forks"),
        (SelfConflict, "fork_changed_input_conflicts"),
        (WrongCleanupTarget, "fork_destroyed"),
        (HalfDeclared, "durable_flags_declared_together"),
    ],
)
def test_broken_engines_fail_conformance(engine_type: type[InMemoryWorkspaceBranching], failing: str) -> None:
    report = run_branching_conformance(engine_type(provider="tangle"))
    assert not report.ok
    failed = {check.name: check.message for check in report.failed}
    assert failing in failed
    assert failed[failing]


def test_registered_names() -> None:
    for name in (
        "WorkspaceCheckpointRequest",
        "WorkspaceCheckpointRef",
        "WorkspaceCheckpointResult",
        "WorkspaceOperationLookupRequest",
        "WorkspaceCheckpointLookupResult",
        "WorkspaceForkRequest",
        "ForkedEnvironmentRef",
        "WorkspaceForkResult",
        "WorkspaceForkLookupResult",
        "WorkspaceCleanupKind",
        "WorkspaceCleanupRequest",
        "WorkspaceCleanupAcknowledgement",
        "ConfidentialAttestation",
        "ConfidentialExecutionRequest",
    ):
        assert wire_adapter(REGISTERED[name], name).json_schema()


json_leaf = st.none() | st.booleans() | st.integers(-(2**53) + 1, 2**53 - 1) | st.text(max_size=20)
metadata = st.dictionaries(st.text(min_size=1, max_size=10), json_leaf, max_size=4)


@settings(max_examples=40, deadline=None)
@given(first=metadata, second=metadata)
def test_reused_key_replays_same_input_and_conflicts_on_changed_input(
    first: dict[str, Any], second: dict[str, Any]
) -> None:
    async def scenario() -> None:
        engine = InMemoryWorkspaceBranching(provider="tangle")
        original = WorkspaceCheckpointRequest.seal({"source": SOURCE, "metadata": first}, idempotency_key="k")
        assert original.request_digest == canonical_digest({"source": SOURCE, "metadata": first})
        created = await engine.checkpoint(original)
        assert workspace_checkpoint_result_matches_request(original, created)
        retry = WorkspaceCheckpointRequest.seal({"source": SOURCE, "metadata": second}, idempotency_key="k")
        answer = await engine.checkpoint(retry)
        if canonical_digest(first) == canonical_digest(second):
            assert answer.status == "replayed"
            assert answer.checkpoint == created.checkpoint
        else:
            assert answer.status == "conflict"
            assert answer.existing_request_digest == original.request_digest != answer.request_digest
            assert not workspace_checkpoint_result_matches_request(retry, answer)

    asyncio.run(scenario())


def test_in_memory_resources_omit_absent_metadata() -> None:
    """A request without metadata yields resources whose wire form has no metadata key."""

    async def scenario() -> None:
        engine = InMemoryWorkspaceBranching(provider=SOURCE["provider"])
        request = WorkspaceCheckpointRequest.seal({"source": SOURCE}, idempotency_key="no-metadata")
        created = (await engine.checkpoint(request)).to_wire()
        assert "metadata" not in created["checkpoint"]
        assert workspace_checkpoint_result_matches_request(request.to_wire(), created)
        fork = WorkspaceForkRequest.seal(
            {"checkpoint": created["checkpoint"], "placement": {"kind": "sandbox"}},
            idempotency_key="no-metadata-fork",
        )
        forked = (await engine.fork(fork)).to_wire()
        assert "metadata" not in forked["environment"]
        assert workspace_fork_result_matches_request(fork.to_wire(), forked)

    asyncio.run(scenario())


@pytest.mark.parametrize("requested", [1, 1.0, "true"])
def test_attestation_requested_must_be_the_boolean_true(requested: Any) -> None:
    """zod ``z.literal(true)``: Python's ``1 == True`` must not let a number through."""
    _, _, attestation = confidential_case()
    assert ("/requested", "literal_error") in refusals(
        lambda: wire_adapter(ConfidentialAttestation).parse({**attestation, "requested": requested})
    )
    wire_adapter(ConfidentialAttestation).parse(attestation)


def _record_of_nodes(nodes: int) -> dict[str, Any]:
    # Objects and arrays count twice in the reference's record bound: the record, its array,
    # k arrays of 8 zeros (10 each) and r loose zeros.
    inner, loose = divmod(nodes - 4, 10)
    return {"a": [[0] * 8 for _ in range(inner)] + [0] * loose}


@pytest.mark.parametrize(("nodes", "accepted"), [(8_192, True), (8_193, False), (8_202, False)])
def test_fork_metadata_and_placement_records_count_containers_twice(nodes: int, accepted: bool) -> None:
    """Reference parity for ``boundedJsonRecordSchema``: ``metadata`` and
    ``placement.providerMetadata`` are refused past 8,192 nodes, objects and arrays counted twice."""
    record = _record_of_nodes(nodes)
    placed = {**fork_material(), "placement": {"kind": "sandbox", "providerMetadata": record}}
    described = {**fork_material(), "metadata": record}
    for material, path in ((placed, "/placement/providerMetadata"), (described, "/metadata")):
        if accepted:
            request = {**material, "idempotencyKey": "k", "requestDigest": workspace_fork_request_digest(material)}
            wire_adapter(WorkspaceForkRequest).parse(request)
        else:
            assert any(found == path for found, _ in refusals(lambda m=material: workspace_fork_request_digest(m)))
