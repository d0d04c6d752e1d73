"""An in-memory durable workspace-branching engine for tests and local providers.

:class:`InMemoryWorkspaceBranching` implements
:class:`~agent_interface.durable.branching.AgentWorkspaceBranching` with the contract's durable
rules. An in-memory provider embeds one and exposes it as ``workspace_branching``;
its ``capabilities`` block is the ``branching`` section to declare.

Rules it honors:

* each checkpoint or fork key is bound to the digest of its first request; the same
  request replays the same resource, a changed request answers ``conflict`` naming
  the first request's digest, and nothing is created;
* lookups recover an operation by key and digest (``found`` / ``not_found`` /
  ``conflict``), including after the caller lost the first answer;
* cleanup echoes the exact operation, kind, target and provider; a reused cleanup
  operation id with another target answers ``conflict``; a repeated cleanup answers from
  the target's current state, so once it is gone the answer is ``already_absent``;
* a checkpoint with live dependent forks answers ``in_use`` with the blocking
  environment ids and stays recoverable, unless ``forks_own_copy`` is true, in which
  case it is deleted at once;
* a deleted resource stays deleted: its key is kept, lookups answer ``not_found``
  and a replayed create answers ``unknown`` (not retryable) instead of recreating it;
* concurrent calls have one effect: an operation is recorded before the first ``await``,
  so concurrent same-key forks run ``on_fork_created`` once (the others answer
  ``replayed`` with the same environment, or the first call's error), a changed input
  answers ``conflict`` at once, and concurrent cleanups of one fork run
  ``on_fork_destroyed`` once.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from agent_interface.durable.branching_operations import (
    WorkspaceOperationLookupRequest,
    WorkspaceOperationNotFound,
    WorkspaceOperationUnknown,
)
from agent_interface.durable.checkpoint import (
    WorkspaceCheckpointConflict,
    WorkspaceCheckpointFound,
    WorkspaceCheckpointRef,
    WorkspaceCheckpointRequest,
    WorkspaceCheckpointSuccess,
)
from agent_interface.durable.cleanup import WorkspaceCleanupAcknowledgement, WorkspaceCleanupRequest
from agent_interface.durable.fork import (
    ForkedEnvironmentRef,
    WorkspaceForkConflict,
    WorkspaceForkFound,
    WorkspaceForkRequest,
    WorkspaceForkSuccess,
)
from agent_interface.durable.portable_context import (
    plain_wire,
    same_wire,
)

__all__ = ["InMemoryWorkspaceBranching"]

_CleanupStatus = Literal["deleted", "already_absent", "unknown", "in_use", "conflict", "transport_failure"]


def _utc_now() -> str:
    now = datetime.now(UTC)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


def _metadata_of(request: WorkspaceCheckpointRequest | WorkspaceForkRequest) -> dict[str, Any]:
    # A request without metadata makes a resource without the key (never ``null``), so
    # ``sameOptionalWireValue(resource.metadata, request.metadata)`` holds.
    return {} if request.metadata is None else {"metadata": request.metadata}


def _parse(model: Any, value: Any) -> Any:
    return value if isinstance(value, model) else model.parse_wire(plain_wire(value))


@dataclass
class _Checkpoint:
    request_digest: str
    ref: WorkspaceCheckpointRef
    deleted: bool = False


@dataclass
class _Fork:
    request_digest: str
    ref: ForkedEnvironmentRef
    destroyed: bool = False
    # set while the first call's hook runs; concurrent callers await it
    pending: asyncio.Future[ForkedEnvironmentRef] | None = None
    destroying: asyncio.Future[None] | None = None


def _settle(future: asyncio.Future[Any], error: BaseException | None, value: Any = None) -> None:
    if error is None:
        future.set_result(value)
        return
    if isinstance(error, asyncio.CancelledError):
        future.cancel()
        return
    future.set_exception(error)
    future.add_done_callback(lambda done: done.exception())  # retrieved even with no waiter


@dataclass
class InMemoryWorkspaceBranching:
    """Durable checkpoint/fork state for one provider, held in memory.

    ``provider`` is the provider name every resource is stamped with. ``clock`` returns
    ISO timestamps; ``new_checkpoint_id`` / ``new_environment_id`` mint identifiers.
    ``on_fork_created`` / ``on_fork_destroyed`` let an embedding provider create and
    remove the real environment; they run before the answer is recorded, so a failure
    leaves no half-made fork.
    """

    provider: str
    forks_own_copy: bool = False
    clock: Callable[[], str] = _utc_now
    new_checkpoint_id: Callable[[], str] | None = None
    new_environment_id: Callable[[], str] | None = None
    on_fork_created: Callable[[ForkedEnvironmentRef], Awaitable[None]] | None = None
    on_fork_destroyed: Callable[[ForkedEnvironmentRef], Awaitable[None]] | None = None
    _checkpoints: dict[str, _Checkpoint] = field(default_factory=dict, init=False, repr=False)
    _forks: dict[str, _Fork] = field(default_factory=dict, init=False, repr=False)
    _cleanups: dict[str, str] = field(default_factory=dict, init=False, repr=False)
    _counter: Any = field(default_factory=lambda: itertools.count(1), init=False, repr=False)

    @property
    def capabilities(self) -> dict[str, bool]:
        """The ``branching`` capability block this engine satisfies (wire names)."""
        return {"checkpoint": True, "fork": True, "retrySafe": True, "lookup": True, "cleanup": True}

    # --- checkpoints -------------------------------------------------------------------

    async def checkpoint(self, request: Any) -> Any:
        exact: WorkspaceCheckpointRequest = _parse(WorkspaceCheckpointRequest, request)
        identity: dict[str, Any] = {"idempotency_key": exact.idempotency_key, "request_digest": exact.request_digest}
        known = self._checkpoints.get(exact.idempotency_key)
        if known is not None:
            if known.request_digest != exact.request_digest:
                return WorkspaceCheckpointConflict(**identity, existing_request_digest=known.request_digest)
            if known.deleted:
                return WorkspaceOperationUnknown(
                    **identity, message="the checkpoint made by this operation was deleted", retryable=False
                )
            return WorkspaceCheckpointSuccess(status="replayed", **identity, checkpoint=known.ref)
        if exact.source.provider != self.provider:
            return WorkspaceOperationUnknown(
                **identity, message="the source run belongs to another provider", retryable=False
            )
        ref = WorkspaceCheckpointRef(
            checkpoint_id=self._mint(self.new_checkpoint_id, "checkpoint"),
            provider=self.provider,
            source=exact.source,
            **identity,
            created_at=self.clock(),
            **_metadata_of(exact),
        )
        self._checkpoints[exact.idempotency_key] = _Checkpoint(exact.request_digest, ref)
        return WorkspaceCheckpointSuccess(status="created", **identity, checkpoint=ref)

    async def lookup_checkpoint(self, request: Any) -> Any:
        exact: WorkspaceOperationLookupRequest = _parse(WorkspaceOperationLookupRequest, request)
        identity: dict[str, Any] = {"idempotency_key": exact.idempotency_key, "request_digest": exact.request_digest}
        known = self._checkpoints.get(exact.idempotency_key)
        if known is not None and known.request_digest != exact.request_digest:
            return WorkspaceCheckpointConflict(**identity, existing_request_digest=known.request_digest)
        if known is None or known.deleted:
            return WorkspaceOperationNotFound(**identity)
        return WorkspaceCheckpointFound(**identity, checkpoint=known.ref)

    async def delete_checkpoint(self, request: Any) -> Any:
        exact: WorkspaceCleanupRequest = _parse(WorkspaceCleanupRequest, request)
        if exact.kind != "checkpoint":
            raise ValueError("delete_checkpoint needs a cleanup request of kind 'checkpoint'")
        early = self._cleanup_precheck(exact)
        if early is not None:
            return early
        target = next(
            (c for c in self._checkpoints.values() if c.ref.checkpoint_id == exact.target_id and not c.deleted),
            None,
        )
        if target is None:
            return self._ack(exact, "already_absent")
        blockers = [
            fork.ref.environment_id
            for fork in self._forks.values()
            if not fork.destroyed and fork.ref.source_checkpoint_id == exact.target_id
        ]
        if blockers and not self.forks_own_copy:
            return self._ack(
                exact,
                "in_use",
                message="forked environments still depend on this checkpoint",
                blocking_target_ids=tuple(sorted(blockers)),
            )
        target.deleted = True
        return self._ack(exact, "deleted")

    # --- forks ---------------------------------------------------------------------------

    async def fork(self, request: Any) -> Any:
        exact: WorkspaceForkRequest = _parse(WorkspaceForkRequest, request)
        identity: dict[str, Any] = {"idempotency_key": exact.idempotency_key, "request_digest": exact.request_digest}
        known = self._forks.get(exact.idempotency_key)
        if known is not None:
            if known.request_digest != exact.request_digest:
                return WorkspaceForkConflict(**identity, existing_request_digest=known.request_digest)
            if known.pending is not None:
                await asyncio.shield(known.pending)  # the first call's error, if it failed
            if known.destroyed:
                return WorkspaceOperationUnknown(
                    **identity, message="the environment made by this operation was destroyed", retryable=False
                )
            return WorkspaceForkSuccess(status="replayed", **identity, environment=known.ref)
        checkpoint = next(
            (
                c
                for c in self._checkpoints.values()
                if c.ref.checkpoint_id == exact.checkpoint.checkpoint_id and not c.deleted
            ),
            None,
        )
        if checkpoint is None or not same_wire(checkpoint.ref, exact.checkpoint):
            return WorkspaceOperationUnknown(
                **identity, message="the checkpoint is not held by this provider", retryable=False
            )
        source = checkpoint.ref.source
        environment_id = self._mint(self.new_environment_id, "environment")
        while environment_id == source.environment_id:
            environment_id = self._mint(self.new_environment_id, "environment")
        ref = ForkedEnvironmentRef(
            provider=self.provider,
            environment_id=environment_id,
            source_environment_id=source.environment_id,
            source=source,
            source_checkpoint_id=checkpoint.ref.checkpoint_id,
            **identity,
            created_at=self.clock(),
            placement=exact.placement,
            confidential_requested=exact.confidential.requested if exact.confidential else False,
            **_metadata_of(exact),
        )
        # The key is taken before the first await: a concurrent same-key call waits for
        # this one, a changed input conflicts, and the hook runs once.
        record = _Fork(exact.request_digest, ref, pending=asyncio.get_running_loop().create_future())
        self._forks[exact.idempotency_key] = record
        pending = record.pending
        assert pending is not None
        try:
            if self.on_fork_created is not None:
                await self.on_fork_created(ref)
        except BaseException as error:
            del self._forks[exact.idempotency_key]  # nothing was made: the key is free again
            _settle(pending, error)
            raise
        record.pending = None
        _settle(pending, None, ref)
        return WorkspaceForkSuccess(status="created", **identity, environment=ref)

    async def lookup_fork(self, request: Any) -> Any:
        exact: WorkspaceOperationLookupRequest = _parse(WorkspaceOperationLookupRequest, request)
        identity: dict[str, Any] = {"idempotency_key": exact.idempotency_key, "request_digest": exact.request_digest}
        known = self._forks.get(exact.idempotency_key)
        if known is not None and known.request_digest != exact.request_digest:
            return WorkspaceForkConflict(**identity, existing_request_digest=known.request_digest)
        if known is not None and known.pending is not None:
            try:
                await asyncio.shield(known.pending)
            except Exception:
                return WorkspaceOperationNotFound(**identity)
        if known is None or known.destroyed:
            return WorkspaceOperationNotFound(**identity)
        return WorkspaceForkFound(**identity, environment=known.ref)

    async def destroy_fork(self, request: Any) -> Any:
        exact: WorkspaceCleanupRequest = _parse(WorkspaceCleanupRequest, request)
        if exact.kind != "fork":
            raise ValueError("destroy_fork needs a cleanup request of kind 'fork'")
        early = self._cleanup_precheck(exact)
        if early is not None:
            return early
        target = next(
            (f for f in self._forks.values() if f.ref.environment_id == exact.target_id),
            None,
        )
        while target is not None and (target.pending is not None or target.destroying is not None):
            if target.pending is not None:
                try:
                    await asyncio.shield(target.pending)  # the fork is still being made
                except Exception:
                    return self._ack(exact, "already_absent")
            elif target.destroying is not None:
                await asyncio.shield(target.destroying)  # another cleanup of this fork is running
        if target is None or target.destroyed:
            return self._ack(exact, "already_absent")
        target.destroying = asyncio.get_running_loop().create_future()
        destroying = target.destroying
        try:
            if self.on_fork_destroyed is not None:
                await self.on_fork_destroyed(target.ref)
        except BaseException as error:
            target.destroying = None
            _settle(destroying, error)
            raise
        target.destroyed, target.destroying = True, None
        _settle(destroying, None)
        return self._ack(exact, "deleted")

    # --- helpers ----------------------------------------------------------------------------

    def _mint(self, factory: Callable[[], str] | None, prefix: str) -> str:
        return factory() if factory is not None else f"{prefix}-{next(self._counter)}"

    def _cleanup_precheck(self, request: WorkspaceCleanupRequest) -> WorkspaceCleanupAcknowledgement | None:
        known = self._cleanups.get(request.operation_id)
        if known is not None and known != request.request_digest:
            return self._ack(
                request,
                "conflict",
                message="this cleanup operation id was used for another target",
                existing_request_digest=known,
            )
        self._cleanups[request.operation_id] = request.request_digest
        if request.provider != self.provider:
            return self._ack(
                request, "unknown", message="the target belongs to another provider", retryable=False
            )
        return None

    @staticmethod
    def _ack(request: WorkspaceCleanupRequest, status: _CleanupStatus, **fields: Any) -> WorkspaceCleanupAcknowledgement:
        return WorkspaceCleanupAcknowledgement(
            operation_id=request.operation_id,
            kind=request.kind,
            target_id=request.target_id,
            provider=request.provider,
            request_digest=request.request_digest,
            status=status,
            **fields,
        )
