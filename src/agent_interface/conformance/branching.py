"""Conformance checks for a durable workspace-branching implementation.

:func:`run_branching_conformance` drives an
:class:`~agent_interface.durable.branching.AgentWorkspaceBranching` through create, replay,
changed-input conflict, lookup, dependent-fork cleanup and deletion, and checks every
answer with the contract's own matchers. It returns a
:class:`BranchingConformanceReport`; nothing is raised for a failed check.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

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
    "BranchingConformanceReport",
    "ConformanceCheck",
    "run_branching_conformance",
    "run_branching_conformance_async",
]


@dataclass(frozen=True, slots=True)
class ConformanceCheck:
    """One named check: whether it passed and, when it did not, why."""

    name: str
    passed: bool
    message: str = ""

    def __str__(self) -> str:
        return f"{'PASS' if self.passed else 'FAIL'} {self.name}" + (f": {self.message}" if self.message else "")


@dataclass(frozen=True, slots=True)
class BranchingConformanceReport:
    """Every check that ran, in order."""

    checks: tuple[ConformanceCheck, ...]

    @property
    def failed(self) -> tuple[ConformanceCheck, ...]:
        return tuple(check for check in self.checks if not check.passed)

    @property
    def ok(self) -> bool:
        return not self.failed

    def __str__(self) -> str:
        return "\n".join(str(check) for check in self.checks)


class _Failed(Exception):
    pass


def _parse(tp: Any, value: Any, what: str) -> Any:
    try:
        return wire_adapter(tp).parse(plain_wire(value))
    except ContractError as error:
        raise _Failed(f"{what} is not a valid answer: {error}") from None


def _expect(condition: bool, message: str) -> None:
    if not condition:
        raise _Failed(message)


class _Run:
    def __init__(self) -> None:
        self.checks: list[ConformanceCheck] = []

    async def check(self, name: str, body: Callable[[], Awaitable[None]]) -> bool:
        try:
            await body()
        except _Failed as failure:
            self.checks.append(ConformanceCheck(name, False, str(failure)))
            return False
        except Exception as error:  # a conformance run reports, it does not crash
            self.checks.append(ConformanceCheck(name, False, f"raised {type(error).__name__}: {error}"))
            return False
        self.checks.append(ConformanceCheck(name, True))
        return True

    def skip(self, name: str, reason: str) -> None:
        self.checks.append(ConformanceCheck(name, False, f"not run: {reason}"))


async def run_branching_conformance_async(
    engine: Any,
    *,
    provider: str | None = None,
    source: Mapping[str, Any] | None = None,
    placement: Mapping[str, Any] | None = None,
    forks_own_copy: bool | None = None,
    declared: Mapping[str, Any] | None = None,
) -> BranchingConformanceReport:
    """Run every check against ``engine`` (an ``AgentWorkspaceBranching``).

    ``provider`` defaults to ``engine.provider``; ``source`` is the exact run to
    checkpoint (a fresh one of that provider by default); ``forks_own_copy`` defaults to
    ``engine.forks_own_copy`` (false); ``declared`` is the engine's ``branching``
    capability block, by default ``engine.capabilities``.
    """
    run = _Run()
    provider = provider if provider is not None else getattr(engine, "provider", None)
    if not isinstance(provider, str):
        raise TypeError("pass provider=... or give the engine a provider attribute")
    own_copy = bool(getattr(engine, "forks_own_copy", False)) if forks_own_copy is None else forks_own_copy
    declared = declared if declared is not None else getattr(engine, "capabilities", None)
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
        _expect(isinstance(declared, Mapping), "the engine declares no branching capability block")
        assert isinstance(declared, Mapping)
        problem = durable_branching_flags_problem(declared)
        _expect(problem is None, problem or "")
        for flag in ("checkpoint", "fork", "retrySafe", "lookup", "cleanup"):
            _expect(declared.get(flag) is True, f"a durable engine must declare {flag}: true")

    await run.check("durable_flags_declared_together", declared_flags)

    checkpoint_request = WorkspaceCheckpointRequest.seal(
        {"source": source_run, "name": "conformance", "metadata": {"nonce": nonce}},
        idempotency_key=f"checkpoint-{nonce}",
    )
    changed_checkpoint = WorkspaceCheckpointRequest.seal(
        {"source": source_run, "name": "conformance-changed", "metadata": {"nonce": nonce}},
        idempotency_key=checkpoint_request.idempotency_key,
    )
    state: dict[str, Any] = {}

    async def checkpoint_created() -> None:
        answer = _parse(WorkspaceCheckpointResult, await engine.checkpoint(checkpoint_request), "checkpoint()")
        _expect(answer.status == "created", f"a first checkpoint answered {answer.status!r}, not 'created'")
        _expect(
            workspace_checkpoint_result_matches_request(checkpoint_request, answer),
            "the created checkpoint does not repeat the request's key, digest, source and metadata",
        )
        state["checkpoint"] = answer.checkpoint

    if not await run.check("checkpoint_created", checkpoint_created):
        for name in ("checkpoint_replayed", "checkpoint_changed_input_conflicts", "fork_created"):
            run.skip(name, "no checkpoint was created")
        return BranchingConformanceReport(tuple(run.checks))
    checkpoint = state["checkpoint"]

    async def checkpoint_replayed() -> None:
        answer = _parse(WorkspaceCheckpointResult, await engine.checkpoint(checkpoint_request), "checkpoint() retry")
        _expect(answer.status == "replayed", f"the same request retried answered {answer.status!r}, not 'replayed'")
        _expect(
            workspace_checkpoint_result_matches_request(checkpoint_request, answer),
            "the replayed checkpoint does not match the request",
        )
        _expect(answer.checkpoint.checkpoint_id == checkpoint.checkpoint_id, "the replay returned a different checkpoint")

    await run.check("checkpoint_replayed", checkpoint_replayed)

    async def checkpoint_conflict() -> None:
        answer = _parse(WorkspaceCheckpointResult, await engine.checkpoint(changed_checkpoint), "checkpoint() changed")
        _expect(answer.status == "conflict", f"a reused key with changed input answered {answer.status!r}, not 'conflict'")
        _expect(
            answer.idempotency_key == changed_checkpoint.idempotency_key
            and answer.request_digest == changed_checkpoint.request_digest,
            "the conflict does not repeat the changed request's key and digest",
        )
        _expect(
            answer.existing_request_digest == checkpoint_request.request_digest,
            "the conflict does not name the digest of the request that holds the key",
        )
        _expect(
            not workspace_checkpoint_result_matches_request(changed_checkpoint, answer),
            "a conflict must never match as a usable checkpoint",
        )

    await run.check("checkpoint_changed_input_conflicts", checkpoint_conflict)

    async def checkpoint_lookups() -> None:
        found = _parse(
            WorkspaceCheckpointLookupResult,
            await engine.lookup_checkpoint(_lookup(checkpoint_request)),
            "lookup_checkpoint()",
        )
        _expect(found.status == "found", f"lookup of a created checkpoint answered {found.status!r}")
        _expect(workspace_checkpoint_result_matches_request(checkpoint_request, found), "the lookup does not match the request")
        _expect(found.checkpoint.checkpoint_id == checkpoint.checkpoint_id, "the conflict created another checkpoint")
        changed = _parse(
            WorkspaceCheckpointLookupResult,
            await engine.lookup_checkpoint(_lookup(changed_checkpoint)),
            "lookup_checkpoint() changed",
        )
        _expect(changed.status == "conflict", f"lookup with a changed digest answered {changed.status!r}")
        missing = _parse(
            WorkspaceCheckpointLookupResult,
            await engine.lookup_checkpoint(
                {"idempotencyKey": f"never-used-{nonce}", "requestDigest": checkpoint_request.request_digest}
            ),
            "lookup_checkpoint() unknown key",
        )
        _expect(missing.status == "not_found", f"lookup of an unused key answered {missing.status!r}")

    await run.check("checkpoint_lookup_recovers", checkpoint_lookups)

    fork_request = WorkspaceForkRequest.seal(
        {"checkpoint": checkpoint, "name": "conformance-fork", "metadata": {"nonce": nonce}, "placement": where},
        idempotency_key=f"fork-{nonce}",
    )
    changed_fork = WorkspaceForkRequest.seal(
        {"checkpoint": checkpoint, "name": "conformance-fork-changed", "metadata": {"nonce": nonce}, "placement": where},
        idempotency_key=fork_request.idempotency_key,
    )

    async def fork_created() -> None:
        answer = _parse(WorkspaceForkResult, await engine.fork(fork_request), "fork()")
        _expect(answer.status == "created", f"a first fork answered {answer.status!r}, not 'created'")
        _expect(
            workspace_fork_result_matches_request(fork_request, answer),
            "the fork does not repeat the request's identity, checkpoint, placement and metadata",
        )
        state["fork"] = answer.environment

    if not await run.check("fork_created", fork_created):
        run.skip("fork_replayed", "no fork was created")
        return BranchingConformanceReport(tuple(run.checks))
    environment = state["fork"]

    async def fork_replayed() -> None:
        answer = _parse(WorkspaceForkResult, await engine.fork(fork_request), "fork() retry")
        _expect(answer.status == "replayed", f"the same fork retried answered {answer.status!r}, not 'replayed'")
        _expect(workspace_fork_result_matches_request(fork_request, answer), "the replayed fork does not match")
        _expect(answer.environment.environment_id == environment.environment_id, "the replay returned another environment")

    await run.check("fork_replayed", fork_replayed)

    async def fork_conflict() -> None:
        answer = _parse(WorkspaceForkResult, await engine.fork(changed_fork), "fork() changed")
        _expect(answer.status == "conflict", f"a reused fork key with changed input answered {answer.status!r}")
        _expect(answer.request_digest == changed_fork.request_digest, "the conflict does not repeat the changed digest")
        _expect(
            answer.existing_request_digest == fork_request.request_digest,
            "the conflict does not name the digest of the request that holds the key",
        )

    await run.check("fork_changed_input_conflicts", fork_conflict)

    async def fork_lookups() -> None:
        found = _parse(WorkspaceForkLookupResult, await engine.lookup_fork(_lookup(fork_request)), "lookup_fork()")
        _expect(found.status == "found", f"lookup of a created fork answered {found.status!r}")
        _expect(workspace_fork_result_matches_request(fork_request, found), "the fork lookup does not match")
        changed = _parse(WorkspaceForkLookupResult, await engine.lookup_fork(_lookup(changed_fork)), "lookup_fork() changed")
        _expect(changed.status == "conflict", f"fork lookup with a changed digest answered {changed.status!r}")
        missing = _parse(
            WorkspaceForkLookupResult,
            await engine.lookup_fork({"idempotencyKey": f"never-used-{nonce}", "requestDigest": fork_request.request_digest}),
            "lookup_fork() unknown key",
        )
        _expect(missing.status == "not_found", f"fork lookup of an unused key answered {missing.status!r}")

    await run.check("fork_lookup_recovers", fork_lookups)

    delete_first = WorkspaceCleanupRequest.for_target(
        operation_id=f"delete-checkpoint-{nonce}", kind="checkpoint", target_id=checkpoint.checkpoint_id, provider=provider
    )

    async def checkpoint_with_forks() -> None:
        answer = _parse(WorkspaceCleanupAcknowledgement, await engine.delete_checkpoint(delete_first), "delete_checkpoint()")
        _echoes(answer, delete_first)
        if own_copy:
            _expect(answer.status == "deleted", f"forks own their copy, yet delete answered {answer.status!r}")
            _expect(workspace_cleanup_acknowledgement_matches(delete_first, answer), "the deletion does not match")
            fork_still = _parse(WorkspaceForkLookupResult, await engine.lookup_fork(_lookup(fork_request)), "lookup_fork()")
            _expect(fork_still.status == "found", "deleting the checkpoint removed a fork that owns its copy")
            return
        _expect(answer.status == "in_use", f"a checkpoint with a live fork answered {answer.status!r}, not 'in_use'")
        _expect(
            answer.blocking_target_ids is not None and environment.environment_id in answer.blocking_target_ids,
            "in_use does not list the dependent fork's environment id",
        )
        _expect(not workspace_cleanup_acknowledgement_matches(delete_first, answer), "in_use must not confirm cleanup")
        still = _parse(
            WorkspaceCheckpointLookupResult,
            await engine.lookup_checkpoint(_lookup(checkpoint_request)),
            "lookup_checkpoint() after in_use",
        )
        _expect(still.status == "found", "a checkpoint answered in_use but is no longer recoverable")

    await run.check("checkpoint_cleanup_respects_dependent_forks", checkpoint_with_forks)

    async def cleanup_conflict() -> None:
        reused = WorkspaceCleanupRequest.for_target(
            operation_id=delete_first.operation_id, kind="checkpoint", target_id=f"other-{nonce}", provider=provider
        )
        answer = _parse(WorkspaceCleanupAcknowledgement, await engine.delete_checkpoint(reused), "delete_checkpoint() reused")
        _echoes(answer, reused)
        _expect(answer.status == "conflict", f"a reused cleanup operation with another target answered {answer.status!r}")
        _expect(answer.existing_request_digest == delete_first.request_digest, "the cleanup conflict names the wrong request")

    await run.check("cleanup_changed_target_conflicts", cleanup_conflict)

    destroy = WorkspaceCleanupRequest.for_target(
        operation_id=f"destroy-fork-{nonce}", kind="fork", target_id=environment.environment_id, provider=provider
    )

    async def fork_destroyed() -> None:
        answer = _parse(WorkspaceCleanupAcknowledgement, await engine.destroy_fork(destroy), "destroy_fork()")
        _echoes(answer, destroy)
        _expect(answer.status == "deleted", f"destroying a live fork answered {answer.status!r}")
        _expect(workspace_cleanup_acknowledgement_matches(destroy, answer), "the destroy acknowledgement does not match")
        again = _parse(WorkspaceCleanupAcknowledgement, await engine.destroy_fork(destroy), "destroy_fork() retry")
        _expect(workspace_cleanup_acknowledgement_matches(destroy, again), "a retried destroy is not confirmed")
        gone = _parse(WorkspaceForkLookupResult, await engine.lookup_fork(_lookup(fork_request)), "lookup_fork() after destroy")
        _expect(gone.status == "not_found", f"lookup of a destroyed fork answered {gone.status!r}")

    await run.check("fork_destroyed", fork_destroyed)

    delete_again = WorkspaceCleanupRequest.for_target(
        operation_id=f"delete-checkpoint-again-{nonce}",
        kind="checkpoint",
        target_id=checkpoint.checkpoint_id,
        provider=provider,
    )

    async def checkpoint_deleted() -> None:
        answer = _parse(WorkspaceCleanupAcknowledgement, await engine.delete_checkpoint(delete_again), "delete_checkpoint()")
        _echoes(answer, delete_again)
        expected = "already_absent" if own_copy else "deleted"
        _expect(answer.status == expected, f"deleting the checkpoint answered {answer.status!r}, not {expected!r}")
        _expect(workspace_cleanup_acknowledgement_matches(delete_again, answer), "the deletion does not match")
        gone = _parse(
            WorkspaceCheckpointLookupResult,
            await engine.lookup_checkpoint(_lookup(checkpoint_request)),
            "lookup_checkpoint() after delete",
        )
        _expect(gone.status == "not_found", f"lookup of a deleted checkpoint answered {gone.status!r}")
        absent = WorkspaceCleanupRequest.for_target(
            operation_id=f"delete-checkpoint-absent-{nonce}",
            kind="checkpoint",
            target_id=checkpoint.checkpoint_id,
            provider=provider,
        )
        answer = _parse(WorkspaceCleanupAcknowledgement, await engine.delete_checkpoint(absent), "delete_checkpoint()")
        _expect(answer.status == "already_absent", f"deleting a deleted checkpoint answered {answer.status!r}")
        _expect(workspace_cleanup_acknowledgement_matches(absent, answer), "the already_absent answer does not match")

    await run.check("checkpoint_deleted_after_forks", checkpoint_deleted)
    return BranchingConformanceReport(tuple(run.checks))


def _lookup(request: WorkspaceCheckpointRequest | WorkspaceForkRequest) -> dict[str, str]:
    return {"idempotencyKey": request.idempotency_key, "requestDigest": request.request_digest}


def _echoes(answer: WorkspaceCleanupAcknowledgement, request: WorkspaceCleanupRequest) -> None:
    _expect(
        answer.operation_id == request.operation_id
        and answer.kind == request.kind
        and answer.target_id == request.target_id
        and answer.provider == request.provider
        and answer.request_digest == request.request_digest,
        "the cleanup acknowledgement does not echo the exact operation, kind, target and provider",
    )


def run_branching_conformance(engine: Any, **options: Any) -> BranchingConformanceReport:
    """Synchronous :func:`run_branching_conformance_async` (starts its own event loop)."""
    return asyncio.run(run_branching_conformance_async(engine, **options))
