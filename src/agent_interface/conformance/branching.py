"""Conformance checks for a durable workspace-branching implementation.

:func:`run_branching_conformance` drives an
:class:`~agent_interface.durable.branching.AgentWorkspaceBranching` through create, replay,
changed-input conflict, lookup, dependent-fork cleanup, repeated and changed cleanup and
deletion, and checks every answer with the contract's own matchers. It returns the shared
:class:`~agent_interface.conformance.report.ConformanceReport`.

Whatever happens, the kit then removes what it made (the ``cleanup`` check, see
:mod:`agent_interface.conformance.branching_cleanup`): only resources it proved are its
own, recovering a lost answer by lookup, and a cleanup failure is reported beside the
check that failed first. A method the engine lacks is reported: the checks that need it
are skipped and ``durable_flags_declared_together`` fails, since a durable engine needs
all six.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from agent_interface.conformance.branching_cleanup import (
    BranchingResources,
    cleanup_branching_resources,
)
from agent_interface.conformance.report import (
    CheckFailed,
    CheckRun,
    ConformanceReport,
    ConformanceUsageError,
    contained,
    expect,
    maybe_await,
    run_sync,
)
from agent_interface.core.canonical import sha256_utf8
from agent_interface.core.errors import ContractError
from agent_interface.core.model import wire_adapter
from agent_interface.durable.branching import durable_branching_flags_problem
from agent_interface.durable.checkpoint import (
    WorkspaceCheckpointLookupResult,
    WorkspaceCheckpointRequest,
    WorkspaceCheckpointResult,
    workspace_checkpoint_result_matches_request,
)
from agent_interface.durable.cleanup import (
    WorkspaceCleanupAcknowledgement,
    WorkspaceCleanupRequest,
    workspace_cleanup_acknowledgement_matches,
)
from agent_interface.durable.fork import (
    WorkspaceForkLookupResult,
    WorkspaceForkRequest,
    WorkspaceForkResult,
    workspace_fork_result_matches_request,
)
from agent_interface.durable.portable_context import plain_wire

__all__ = [
    "BRANCHING_CHECKS",
    "BRANCHING_NOT_CERTIFIED",
    "run_branching_conformance",
    "run_branching_conformance_async",
]

BRANCHING_NOT_CERTIFIED = ("that a fork really runs at the placement it names: the kit sees the answer only",)
"""What this kit cannot prove by calling its subject (``ConformanceReport.not_certified``)."""

BRANCHING_METHODS = ("checkpoint", "lookup_checkpoint", "delete_checkpoint", "fork", "lookup_fork", "destroy_fork")

BRANCHING_CHECKS = (
    "durable_flags_declared_together",
    "checkpoint_created",
    "checkpoint_replayed",
    "checkpoint_changed_input_conflicts",
    "checkpoint_changed_metadata_conflicts",
    "checkpoint_lookup_recovers",
    "fork_created",
    "fork_replayed",
    "fork_changed_input_conflicts",
    "fork_changed_placement_conflicts",
    "fork_lookup_recovers",
    "checkpoint_cleanup_respects_dependent_forks",
    "cleanup_changed_target_conflicts",
    "fork_destroyed",
    "fork_cleanup_repeated_already_absent",
    "fork_cleanup_changed_conflicts",
    "checkpoint_deleted_after_forks",
    "cleanup",
)
"""Every check the branching kit records, in order."""


def _parse(tp: Any, value: Any, what: str) -> Any:
    try:
        return wire_adapter(tp).parse(plain_wire(value))
    except ContractError as error:
        raise CheckFailed(f"{what} is not a valid answer: {error}") from None


def _lookup(request: WorkspaceCheckpointRequest | WorkspaceForkRequest) -> dict[str, str]:
    return {"idempotencyKey": request.idempotency_key, "requestDigest": request.request_digest}


def _echoes(answer: WorkspaceCleanupAcknowledgement, request: WorkspaceCleanupRequest) -> None:
    expect(
        answer.operation_id == request.operation_id
        and answer.kind == request.kind
        and answer.target_id == request.target_id
        and answer.provider == request.provider
        and answer.request_digest == request.request_digest,
        "the cleanup acknowledgement does not echo the exact operation, kind, target and provider",
    )


@contained
async def run_branching_conformance_async(
    engine: Any,
    *,
    provider: str | None = None,
    source: Mapping[str, Any] | None = None,
    placement: Mapping[str, Any] | None = None,
    forks_own_copy: bool | None = None,
    declared: Mapping[str, Any] | None = None,
    subject: str | None = None,
    timeout: float = 30.0,
) -> ConformanceReport:
    """Run every check against ``engine`` (an ``AgentWorkspaceBranching``).

    ``provider`` defaults to ``engine.provider``; ``source`` is the exact run to
    checkpoint (a fresh one of that provider by default); ``forks_own_copy`` defaults to
    ``engine.forks_own_copy`` (false); ``declared`` is the engine's ``branching``
    capability block, by default ``engine.capabilities``. ``timeout`` bounds each check and
    each cleanup call, in seconds. Raises
    :class:`ConformanceUsageError` when ``engine`` has none of the branching methods or
    no provider name can be found.
    """
    if engine is None or not any(callable(getattr(engine, name, None)) for name in BRANCHING_METHODS):
        raise ConformanceUsageError("run_branching_conformance needs an object with the workspace-branching methods")
    provider = provider if provider is not None else getattr(engine, "provider", None)
    if not isinstance(provider, str):
        raise ConformanceUsageError("pass provider=... or give the engine a provider attribute")
    run = CheckRun("workspace branching", subject or f"{type(engine).__name__} ({provider})", timeout=timeout)
    resources = BranchingResources()
    try:
        await _checks(run, engine, resources, provider, source, placement, forks_own_copy, declared)
    finally:
        failures = await cleanup_branching_resources(engine, resources, timeout)
        if failures:
            run.fail("cleanup", "; ".join(failures))
        else:
            removed = ", ".join(resources.removed)
            run.passed("cleanup", f"removed what the checks left: {removed}" if removed else "nothing was left behind")
    return run.report(not_certified=BRANCHING_NOT_CERTIFIED)


async def _checks(
    run: CheckRun,
    engine: Any,
    resources: BranchingResources,
    provider: str,
    source: Mapping[str, Any] | None,
    placement: Mapping[str, Any] | None,
    forks_own_copy: bool | None,
    declared: Mapping[str, Any] | None,
) -> None:
    own_copy = bool(getattr(engine, "forks_own_copy", False)) if forks_own_copy is None else forks_own_copy
    declared = declared if declared is not None else getattr(engine, "capabilities", None)
    missing = [name for name in BRANCHING_METHODS if not callable(getattr(engine, name, None))]
    nonce = uuid.uuid4().hex[:12]
    source_run = dict(
        source
        or {
            "runId": f"conformance-run-{nonce}",
            "provider": provider,
            "environmentId": f"conformance-source-{nonce}",
            "sessionId": f"conformance-session-{nonce}",
            "executionId": f"conformance-execution-{nonce}",
            "requestDigest": sha256_utf8(f"conformance-{nonce}"),
        }
    )
    where = dict(placement or {"kind": "local"})

    async def declared_flags() -> None:
        expect(not missing, f"a durable engine needs every branching method; missing: {', '.join(missing)}")
        expect(isinstance(declared, Mapping), "the engine declares no branching capability block")
        assert isinstance(declared, Mapping)
        problem = durable_branching_flags_problem(declared)
        expect(problem is None, problem or "")
        for flag in ("checkpoint", "fork", "retrySafe", "lookup", "cleanup"):
            expect(declared.get(flag) is True, f"a durable engine must declare {flag}: true")

    await run.check("durable_flags_declared_together", declared_flags)

    def absent(*names: str) -> list[str]:
        return [name for name in names if name in missing]

    def skip_all(names: tuple[str, ...], reason: str) -> None:
        for name in names:
            run.skip(name, reason)

    checkpoint_request = WorkspaceCheckpointRequest.seal(
        {"source": source_run, "name": "conformance", "metadata": {"nonce": nonce}},
        idempotency_key=f"checkpoint-{nonce}",
    )
    changed_checkpoint = WorkspaceCheckpointRequest.seal(
        {"source": source_run, "name": "conformance-changed", "metadata": {"nonce": nonce}},
        idempotency_key=checkpoint_request.idempotency_key,
    )
    rest = BRANCHING_CHECKS[1:-1]
    if absent("checkpoint"):
        skip_all(rest, "the engine has no checkpoint()")
        return
    state: dict[str, Any] = {}

    async def checkpoint_created() -> None:
        resources.checkpoint_request = checkpoint_request
        answer = _parse(WorkspaceCheckpointResult, await maybe_await(engine.checkpoint(checkpoint_request)), "checkpoint()")
        expect(answer.status == "created", f"a first checkpoint answered {answer.status!r}, not 'created'")
        expect(
            workspace_checkpoint_result_matches_request(checkpoint_request, answer),
            "the created checkpoint does not repeat the request's key, digest, source and metadata",
        )
        resources.checkpoint_proven = answer.checkpoint
        state["checkpoint"] = answer.checkpoint

    if not await run.check("checkpoint_created", checkpoint_created):
        skip_all(rest[1:], "no checkpoint was created")
        return
    checkpoint = state["checkpoint"]

    async def checkpoint_replayed() -> None:
        answer = _parse(WorkspaceCheckpointResult, await maybe_await(engine.checkpoint(checkpoint_request)), "checkpoint() retry")
        expect(answer.status == "replayed", f"the same request retried answered {answer.status!r}, not 'replayed'")
        expect(
            workspace_checkpoint_result_matches_request(checkpoint_request, answer),
            "the replayed checkpoint does not match the request",
        )
        expect(answer.checkpoint == checkpoint, "the replay returned a different checkpoint")

    await run.check("checkpoint_replayed", checkpoint_replayed)

    async def checkpoint_conflict() -> None:
        answer = _parse(WorkspaceCheckpointResult, await maybe_await(engine.checkpoint(changed_checkpoint)), "checkpoint() changed")
        expect(answer.status == "conflict", f"a reused key with changed input answered {answer.status!r}, not 'conflict'")
        expect(
            answer.idempotency_key == changed_checkpoint.idempotency_key
            and answer.request_digest == changed_checkpoint.request_digest,
            "the conflict does not repeat the changed request's key and digest",
        )
        expect(
            answer.existing_request_digest == checkpoint_request.request_digest,
            "the conflict does not name the digest of the request that holds the key",
        )
        expect(
            not workspace_checkpoint_result_matches_request(changed_checkpoint, answer),
            "a conflict must never match as a usable checkpoint",
        )

    await run.check("checkpoint_changed_input_conflicts", checkpoint_conflict)

    changed_metadata = WorkspaceCheckpointRequest.seal(
        {"source": source_run, "name": "conformance", "metadata": {"nonce": nonce, "changed": "metadata only"}},
        idempotency_key=checkpoint_request.idempotency_key,
    )

    async def metadata_conflict() -> None:
        answer = _parse(
            WorkspaceCheckpointResult, await maybe_await(engine.checkpoint(changed_metadata)), "checkpoint() with changed metadata"
        )
        expect(
            answer.status == "conflict",
            f"a reused key whose request changed only its metadata answered {answer.status!r}, not 'conflict' "
            "(metadata enters the request digest)",
        )
        expect(
            not workspace_checkpoint_result_matches_request(changed_metadata, answer),
            "a conflict must never match as a usable checkpoint",
        )

    await run.check("checkpoint_changed_metadata_conflicts", metadata_conflict)

    async def checkpoint_lookups() -> None:
        found = _parse(
            WorkspaceCheckpointLookupResult,
            await maybe_await(engine.lookup_checkpoint(_lookup(checkpoint_request))),
            "lookup_checkpoint()",
        )
        expect(found.status == "found", f"lookup of a created checkpoint answered {found.status!r}")
        expect(workspace_checkpoint_result_matches_request(checkpoint_request, found), "the lookup does not match the request")
        expect(found.checkpoint == checkpoint, "the lookup recovered another checkpoint")
        changed = _parse(
            WorkspaceCheckpointLookupResult,
            await maybe_await(engine.lookup_checkpoint(_lookup(changed_checkpoint))),
            "lookup_checkpoint() changed",
        )
        expect(changed.status == "conflict", f"lookup with a changed digest answered {changed.status!r}")
        missing_key = _parse(
            WorkspaceCheckpointLookupResult,
            await maybe_await(
                engine.lookup_checkpoint(
                    {"idempotencyKey": f"never-used-{nonce}", "requestDigest": checkpoint_request.request_digest}
                )
            ),
            "lookup_checkpoint() unknown key",
        )
        expect(missing_key.status == "not_found", f"lookup of an unused key answered {missing_key.status!r}")

    if absent("lookup_checkpoint"):
        run.skip("checkpoint_lookup_recovers", "the engine has no lookup_checkpoint()")
    else:
        await run.check("checkpoint_lookup_recovers", checkpoint_lookups)

    fork_request = WorkspaceForkRequest.seal(
        {"checkpoint": checkpoint, "name": "conformance-fork", "metadata": {"nonce": nonce}, "placement": where},
        idempotency_key=f"fork-{nonce}",
    )
    changed_fork = WorkspaceForkRequest.seal(
        {"checkpoint": checkpoint, "name": "conformance-fork-changed", "metadata": {"nonce": nonce}, "placement": where},
        idempotency_key=fork_request.idempotency_key,
    )
    fork_checks = rest[rest.index("fork_created"):]
    if absent("fork"):
        skip_all(fork_checks, "the engine has no fork()")
        return

    async def fork_created() -> None:
        resources.fork_request = fork_request
        answer = _parse(WorkspaceForkResult, await maybe_await(engine.fork(fork_request)), "fork()")
        expect(answer.status == "created", f"a first fork answered {answer.status!r}, not 'created'")
        expect(
            workspace_fork_result_matches_request(fork_request, answer),
            "the fork does not repeat the request's identity, checkpoint, placement and metadata",
        )
        resources.fork_proven = answer.environment
        state["fork"] = answer.environment

    if not await run.check("fork_created", fork_created):
        skip_all(fork_checks[1:], "no fork was created")
        return
    environment = state["fork"]

    async def fork_replayed() -> None:
        answer = _parse(WorkspaceForkResult, await maybe_await(engine.fork(fork_request)), "fork() retry")
        expect(answer.status == "replayed", f"the same fork retried answered {answer.status!r}, not 'replayed'")
        expect(workspace_fork_result_matches_request(fork_request, answer), "the replayed fork does not match")
        expect(answer.environment == environment, "the replay returned another environment")

    await run.check("fork_replayed", fork_replayed)

    async def fork_conflict() -> None:
        answer = _parse(WorkspaceForkResult, await maybe_await(engine.fork(changed_fork)), "fork() changed")
        expect(answer.status == "conflict", f"a reused fork key with changed input answered {answer.status!r}")
        expect(answer.request_digest == changed_fork.request_digest, "the conflict does not repeat the changed digest")
        expect(
            answer.existing_request_digest == fork_request.request_digest,
            "the conflict does not name the digest of the request that holds the key",
        )

    await run.check("fork_changed_input_conflicts", fork_conflict)

    moved = {**where, "region": "conformance-moved" if where.get("region") != "conformance-moved" else "conformance-moved-again"}
    moved_fork = WorkspaceForkRequest.seal(
        {"checkpoint": checkpoint, "name": "conformance-fork", "metadata": {"nonce": nonce}, "placement": moved},
        idempotency_key=fork_request.idempotency_key,
    )

    async def placement_conflict() -> None:
        answer = _parse(WorkspaceForkResult, await maybe_await(engine.fork(moved_fork)), "fork() with changed placement")
        expect(
            answer.status == "conflict",
            f"a reused fork key whose request changed only its placement answered {answer.status!r}, not 'conflict' "
            "(the requested placement is part of the fork's identity)",
        )

    await run.check("fork_changed_placement_conflicts", placement_conflict)

    async def fork_lookups() -> None:
        found = _parse(WorkspaceForkLookupResult, await maybe_await(engine.lookup_fork(_lookup(fork_request))), "lookup_fork()")
        expect(found.status == "found", f"lookup of a created fork answered {found.status!r}")
        expect(workspace_fork_result_matches_request(fork_request, found), "the fork lookup does not match")
        expect(found.environment == environment, "the fork lookup recovered another environment")
        changed = _parse(
            WorkspaceForkLookupResult, await maybe_await(engine.lookup_fork(_lookup(changed_fork))), "lookup_fork() changed"
        )
        expect(changed.status == "conflict", f"fork lookup with a changed digest answered {changed.status!r}")
        missing_key = _parse(
            WorkspaceForkLookupResult,
            await maybe_await(
                engine.lookup_fork({"idempotencyKey": f"never-used-{nonce}", "requestDigest": fork_request.request_digest})
            ),
            "lookup_fork() unknown key",
        )
        expect(missing_key.status == "not_found", f"fork lookup of an unused key answered {missing_key.status!r}")

    if absent("lookup_fork"):
        run.skip("fork_lookup_recovers", "the engine has no lookup_fork()")
    else:
        await run.check("fork_lookup_recovers", fork_lookups)

    await _cleanup_checks(run, engine, resources, provider, nonce, own_copy, checkpoint_request, fork_request, absent)


async def _cleanup_checks(
    run: CheckRun,
    engine: Any,
    resources: BranchingResources,
    provider: str,
    nonce: str,
    own_copy: bool,
    checkpoint_request: WorkspaceCheckpointRequest,
    fork_request: WorkspaceForkRequest,
    absent: Any,
) -> None:
    assert resources.checkpoint_proven is not None and resources.fork_proven is not None
    checkpoint, environment = resources.checkpoint_proven, resources.fork_proven
    delete_first = WorkspaceCleanupRequest.for_target(
        operation_id=f"delete-checkpoint-{nonce}", kind="checkpoint", target_id=checkpoint.checkpoint_id, provider=provider
    )

    async def checkpoint_with_forks() -> None:
        answer = _parse(
            WorkspaceCleanupAcknowledgement, await maybe_await(engine.delete_checkpoint(delete_first)), "delete_checkpoint()"
        )
        _echoes(answer, delete_first)
        if own_copy:
            expect(answer.status == "deleted", f"forks own their copy, yet delete answered {answer.status!r}")
            expect(workspace_cleanup_acknowledgement_matches(delete_first, answer), "the deletion does not match")
            resources.checkpoint_gone = True
            fork_still = _parse(
                WorkspaceForkLookupResult, await maybe_await(engine.lookup_fork(_lookup(fork_request))), "lookup_fork()"
            )
            expect(fork_still.status == "found", "deleting the checkpoint removed a fork that owns its copy")
            return
        expect(answer.status == "in_use", f"a checkpoint with a live fork answered {answer.status!r}, not 'in_use'")
        expect(
            answer.blocking_target_ids is not None and environment.environment_id in answer.blocking_target_ids,
            "in_use does not list the dependent fork's environment id",
        )
        expect(not workspace_cleanup_acknowledgement_matches(delete_first, answer), "in_use must not confirm cleanup")
        still = _parse(
            WorkspaceCheckpointLookupResult,
            await maybe_await(engine.lookup_checkpoint(_lookup(checkpoint_request))),
            "lookup_checkpoint() after in_use",
        )
        expect(still.status == "found", "a checkpoint answered in_use but is no longer recoverable")
        fork_still = _parse(
            WorkspaceForkLookupResult, await maybe_await(engine.lookup_fork(_lookup(fork_request))), "lookup_fork() after in_use"
        )
        expect(fork_still.status == "found", "a checkpoint answered in_use but its fork is no longer recoverable")

    async def cleanup_conflict() -> None:
        reused = WorkspaceCleanupRequest.for_target(
            operation_id=delete_first.operation_id, kind="checkpoint", target_id=f"other-{nonce}", provider=provider
        )
        answer = _parse(
            WorkspaceCleanupAcknowledgement, await maybe_await(engine.delete_checkpoint(reused)), "delete_checkpoint() reused"
        )
        _echoes(answer, reused)
        expect(answer.status == "conflict", f"a reused cleanup operation with another target answered {answer.status!r}")
        expect(answer.existing_request_digest == delete_first.request_digest, "the cleanup conflict names the wrong request")
        expect(not workspace_cleanup_acknowledgement_matches(reused, answer), "a cleanup conflict must not confirm cleanup")

    if absent("delete_checkpoint", "lookup_checkpoint", "lookup_fork"):
        for name in ("checkpoint_cleanup_respects_dependent_forks", "cleanup_changed_target_conflicts"):
            run.skip(name, "the engine lacks delete_checkpoint() or a lookup")
    else:
        await run.check("checkpoint_cleanup_respects_dependent_forks", checkpoint_with_forks)
        await run.check("cleanup_changed_target_conflicts", cleanup_conflict)

    destroy = WorkspaceCleanupRequest.for_target(
        operation_id=f"destroy-fork-{nonce}", kind="fork", target_id=environment.environment_id, provider=provider
    )

    async def fork_destroyed() -> None:
        answer = _parse(WorkspaceCleanupAcknowledgement, await maybe_await(engine.destroy_fork(destroy)), "destroy_fork()")
        _echoes(answer, destroy)
        expect(answer.status == "deleted", f"destroying a live fork answered {answer.status!r}")
        expect(workspace_cleanup_acknowledgement_matches(destroy, answer), "the destroy acknowledgement does not match")
        resources.fork_gone = True
        gone = _parse(
            WorkspaceForkLookupResult, await maybe_await(engine.lookup_fork(_lookup(fork_request))), "lookup_fork() after destroy"
        )
        expect(gone.status == "not_found", f"lookup of a destroyed fork answered {gone.status!r}")

    async def fork_destroy_repeated() -> None:
        again = _parse(WorkspaceCleanupAcknowledgement, await maybe_await(engine.destroy_fork(destroy)), "destroy_fork() retry")
        _echoes(again, destroy)
        expect(again.status == "already_absent", f"a repeated fork cleanup answered {again.status!r}, not 'already_absent'")
        expect(workspace_cleanup_acknowledgement_matches(destroy, again), "the repeated cleanup does not match")

    async def fork_destroy_changed() -> None:
        changed = WorkspaceCleanupRequest.for_target(
            operation_id=destroy.operation_id, kind="fork", target_id=f"other-fork-{nonce}", provider=provider
        )
        answer = _parse(WorkspaceCleanupAcknowledgement, await maybe_await(engine.destroy_fork(changed)), "destroy_fork() changed")
        _echoes(answer, changed)
        expect(answer.status == "conflict", f"a changed fork cleanup under a used operation id answered {answer.status!r}")
        expect(answer.existing_request_digest == destroy.request_digest, "the fork cleanup conflict names the wrong request")
        expect(not workspace_cleanup_acknowledgement_matches(changed, answer), "a cleanup conflict must not confirm cleanup")

    fork_cleanup = ("fork_destroyed", "fork_cleanup_repeated_already_absent", "fork_cleanup_changed_conflicts")
    if absent("destroy_fork", "lookup_fork"):
        for name in fork_cleanup:
            run.skip(name, "the engine lacks destroy_fork() or lookup_fork()")
    elif await run.check("fork_destroyed", fork_destroyed):
        await run.check("fork_cleanup_repeated_already_absent", fork_destroy_repeated)
        await run.check("fork_cleanup_changed_conflicts", fork_destroy_changed)
    else:
        for name in fork_cleanup[1:]:
            run.skip(name, "the fork was not destroyed")

    delete_again = WorkspaceCleanupRequest.for_target(
        operation_id=f"delete-checkpoint-again-{nonce}",
        kind="checkpoint",
        target_id=checkpoint.checkpoint_id,
        provider=provider,
    )

    async def checkpoint_deleted() -> None:
        answer = _parse(
            WorkspaceCleanupAcknowledgement, await maybe_await(engine.delete_checkpoint(delete_again)), "delete_checkpoint()"
        )
        _echoes(answer, delete_again)
        expected = "already_absent" if own_copy else "deleted"
        expect(answer.status == expected, f"deleting the checkpoint answered {answer.status!r}, not {expected!r}")
        expect(workspace_cleanup_acknowledgement_matches(delete_again, answer), "the deletion does not match")
        resources.checkpoint_gone = True
        gone = _parse(
            WorkspaceCheckpointLookupResult,
            await maybe_await(engine.lookup_checkpoint(_lookup(checkpoint_request))),
            "lookup_checkpoint() after delete",
        )
        expect(gone.status == "not_found", f"lookup of a deleted checkpoint answered {gone.status!r}")
        absent_request = WorkspaceCleanupRequest.for_target(
            operation_id=f"delete-checkpoint-absent-{nonce}",
            kind="checkpoint",
            target_id=checkpoint.checkpoint_id,
            provider=provider,
        )
        answer = _parse(
            WorkspaceCleanupAcknowledgement, await maybe_await(engine.delete_checkpoint(absent_request)), "delete_checkpoint()"
        )
        expect(answer.status == "already_absent", f"deleting a deleted checkpoint answered {answer.status!r}")
        expect(workspace_cleanup_acknowledgement_matches(absent_request, answer), "the already_absent answer does not match")

    if absent("delete_checkpoint", "lookup_checkpoint"):
        run.skip("checkpoint_deleted_after_forks", "the engine lacks delete_checkpoint() or lookup_checkpoint()")
    else:
        await run.check("checkpoint_deleted_after_forks", checkpoint_deleted)


def run_branching_conformance(engine: Any, **options: Any) -> ConformanceReport:
    """Synchronous :func:`run_branching_conformance_async` (works inside a running loop too)."""
    return run_sync(run_branching_conformance_async(engine, **options))
