"""The durable workspace-branching surface (``workspace-branching.ts``): the provider protocol
and the all-or-nothing ``retrySafe``/``lookup``/``cleanup`` declaration.
"""

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
