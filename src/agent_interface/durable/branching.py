"""Retry-safe workspace checkpoints, forks and their cleanup (``workspace-*.ts``).

Every checkpoint and fork request binds an idempotency key to a canonical request
digest. Results and lookups repeat that identity, and the resource they carry is
stamped with it, so a caller can bind an answer to the exact request before using
the resource. A key reused with changed input answers ``conflict`` naming the other
request's digest, never its own. Cleanup names its kind, target and provider, and the
acknowledgement must echo them; a checkpoint still needed by forks answers ``in_use``
with the blocking environment ids."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from agent_interface.durable.branching_operations import WorkspaceOperationLookupRequest
from agent_interface.durable.checkpoint import WorkspaceCheckpointRequest
from agent_interface.durable.cleanup import WorkspaceCleanupRequest
from agent_interface.durable.fork import WorkspaceForkRequest

__all__ = [
    "AgentWorkspaceBranching",
    "durable_branching_flags_problem",
]


# --- the provider surface -------------------------------------------------------------------


@runtime_checkable
class AgentWorkspaceBranching(Protocol):
    """Durable checkpoint and fork operations of a capable provider (``AgentWorkspaceBranching``).

    Each method is one retry-safe operation: the same request may be sent again after
    an ambiguous answer. Cancelling the awaiting task abandons one attempt only.
    """

    async def checkpoint(self, request: WorkspaceCheckpointRequest) -> Any: ...

    async def lookup_checkpoint(self, request: WorkspaceOperationLookupRequest) -> Any: ...

    async def delete_checkpoint(self, request: WorkspaceCleanupRequest) -> Any: ...

    async def fork(self, request: WorkspaceForkRequest) -> Any: ...

    async def lookup_fork(self, request: WorkspaceOperationLookupRequest) -> Any: ...

    async def destroy_fork(self, request: WorkspaceCleanupRequest) -> Any: ...


_DURABLE_FLAGS = ("retrySafe", "lookup", "cleanup")


def durable_branching_flags_problem(branching: Mapping[str, Any]) -> str | None:
    """The all-or-nothing rule for a ``branching`` capability block (wire names).

    ``retrySafe``, ``lookup`` and ``cleanup`` are declared together, and only with
    ``checkpoint`` and ``fork``; leaving all three absent or false is the compatible
    declaration. Returns the broken rule, or ``None``.
    """
    flags = [branching.get(flag, False) is True for flag in _DURABLE_FLAGS]
    if any(flags) and (
        not all(flags) or branching.get("checkpoint") is not True or branching.get("fork") is not True
    ):
        return "retry-safe branching requires checkpoint, fork, lookup, and cleanup together"
    return None
