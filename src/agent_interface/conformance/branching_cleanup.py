"""What the branching kit leaves behind: nothing it can prove it made.

After its checks, and above all after a failed one, the branching kit removes the fork
and the checkpoint it asked for, fork first (a checkpoint with a live fork answers
``in_use``). It deletes only a resource it has proved is the one its own request made:
an answer that matched the request, or, when that answer was lost or did not match, a
lookup by the request's key and digest that does. A resource named by an unmatched
answer is never touched: it may belong to someone else. Every failure to clean up is
returned, so the kit can report it beside the check that failed first.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agent_interface.conformance.bounds import describe_error, settle
from agent_interface.core.model import wire_adapter
from agent_interface.durable.checkpoint import (
    WorkspaceCheckpointLookupResult,
    WorkspaceCheckpointRef,
    WorkspaceCheckpointRequest,
    workspace_checkpoint_result_matches_request,
)
from agent_interface.durable.cleanup import (
    WorkspaceCleanupAcknowledgement,
    WorkspaceCleanupRequest,
    workspace_cleanup_acknowledgement_matches,
)
from agent_interface.durable.fork import (
    ForkedEnvironmentRef,
    WorkspaceForkLookupResult,
    WorkspaceForkRequest,
    workspace_fork_result_matches_request,
)
from agent_interface.durable.portable_context import plain_wire

__all__ = ["BranchingResources", "cleanup_branching_resources"]


@dataclass
class BranchingResources:
    """What a kit run asked for, what it proved, and what it already saw removed.

    ``*_request`` is set once the request was sent (its answer may have been lost);
    ``*_proven`` once an answer matching that request named the resource; ``*_gone``
    once a matching cleanup acknowledgement confirmed it absent.
    """

    checkpoint_request: WorkspaceCheckpointRequest | None = None
    checkpoint_proven: WorkspaceCheckpointRef | None = None
    checkpoint_gone: bool = False
    fork_request: WorkspaceForkRequest | None = None
    fork_proven: ForkedEnvironmentRef | None = None
    fork_gone: bool = False
    removed: list[str] = field(default_factory=list)


class _CleanupFailed(Exception):
    pass


def _lookup(request: WorkspaceCheckpointRequest | WorkspaceForkRequest) -> dict[str, str]:
    return {"idempotencyKey": request.idempotency_key, "requestDigest": request.request_digest}


async def _recover_checkpoint(engine: Any, request: WorkspaceCheckpointRequest, timeout: float) -> WorkspaceCheckpointRef | None:
    answer = wire_adapter(WorkspaceCheckpointLookupResult).parse(
        plain_wire(await settle(engine.lookup_checkpoint(_lookup(request)), timeout, "lookup_checkpoint()"))
    )
    if answer.status == "not_found":
        return None
    if answer.status != "found" or not workspace_checkpoint_result_matches_request(request, answer):
        raise _CleanupFailed("the checkpoint lookup did not recover a result matching the kit's request")
    ref: WorkspaceCheckpointRef = answer.checkpoint
    return ref


async def _recover_fork(engine: Any, request: WorkspaceForkRequest, timeout: float) -> ForkedEnvironmentRef | None:
    answer = wire_adapter(WorkspaceForkLookupResult).parse(
        plain_wire(await settle(engine.lookup_fork(_lookup(request)), timeout, "lookup_fork()"))
    )
    if answer.status == "not_found":
        return None
    if answer.status != "found" or not workspace_fork_result_matches_request(request, answer):
        raise _CleanupFailed("the fork lookup did not recover a result matching the kit's request")
    ref: ForkedEnvironmentRef = answer.environment
    return ref


async def _remove(engine: Any, method: str, request: WorkspaceCleanupRequest, timeout: float) -> None:
    answer = wire_adapter(WorkspaceCleanupAcknowledgement).parse(
        plain_wire(await settle(getattr(engine, method)(request), timeout, f"{method}()"))
    )
    if not workspace_cleanup_acknowledgement_matches(request, answer):
        raise _CleanupFailed(f"{method} answered {answer.status!r}, not a confirmed removal of the exact target")


async def cleanup_branching_resources(engine: Any, resources: BranchingResources, timeout: float = 30.0) -> list[str]:
    """Remove what ``resources`` proves the kit made and has not seen removed, each call
    bounded by ``timeout`` seconds (one that ignores cancellation is abandoned).

    Returns one line per failure (empty when everything is gone); appends what it
    removed to ``resources.removed``.
    """
    failures: list[str] = []
    fork_request = resources.fork_request
    if fork_request is not None and not resources.fork_gone:
        try:
            fork = resources.fork_proven or await _recover_fork(engine, fork_request, timeout)
            if fork is not None:
                await _remove(
                    engine,
                    "destroy_fork",
                    WorkspaceCleanupRequest.for_target(
                        operation_id=f"{fork_request.idempotency_key}-cleanup",
                        kind="fork",
                        target_id=fork.environment_id,
                        provider=fork.provider,
                    ),
                    timeout,
                )
                resources.fork_gone = True
                resources.removed.append(f"fork {fork.environment_id}")
        except Exception as error:
            failures.append(f"fork cleanup failed: {_describe(error)}")
    checkpoint_request = resources.checkpoint_request
    if checkpoint_request is not None and not resources.checkpoint_gone:
        try:
            checkpoint = resources.checkpoint_proven or await _recover_checkpoint(engine, checkpoint_request, timeout)
            if checkpoint is not None:
                await _remove(
                    engine,
                    "delete_checkpoint",
                    WorkspaceCleanupRequest.for_target(
                        operation_id=f"{checkpoint_request.idempotency_key}-cleanup",
                        kind="checkpoint",
                        target_id=checkpoint.checkpoint_id,
                        provider=checkpoint.provider,
                    ),
                    timeout,
                )
                resources.checkpoint_gone = True
                resources.removed.append(f"checkpoint {checkpoint.checkpoint_id}")
        except Exception as error:
            failures.append(f"checkpoint cleanup failed: {_describe(error)}")
    return failures


def _describe(error: BaseException) -> str:
    return str(error) if isinstance(error, _CleanupFailed) else describe_error(error)
