"""References to one retained run (``agentRunControlRefSchema``,
``agentExactRunControlRefSchema`` of ``runtime-control.ts``) and their sameness.

A module of its own, importing only the core: the durable, session and turn records
embed a run reference without the control requests and acknowledgements of
:mod:`agent_interface.runtime.control` (where these names are public too).
"""

from __future__ import annotations

from typing import Any

from agent_interface.core.canonical import Sha256Digest, canonical_digest
from agent_interface.core.contract_limits import BoundedIdentifier
from agent_interface.core.model import WireModel
from agent_interface.core.registry import register_wire_models

__all__ = ["AgentExactRunControlRef", "AgentRunControlRef", "same_agent_run_control_ref"]


class AgentRunControlRef(WireModel):
    """Provider-neutral coordinates sufficient to recreate control of one run.

    ``requestDigest`` is the provider's admission digest: reconstruction compares it
    to refuse reusing the run for changed input.
    """

    run_id: BoundedIdentifier
    provider: BoundedIdentifier
    environment_id: BoundedIdentifier
    session_id: BoundedIdentifier | None = None
    execution_id: BoundedIdentifier | None = None
    request_digest: Sha256Digest | None = None


class AgentExactRunControlRef(AgentRunControlRef):
    """A reference complete enough for a retryable state-changing action."""

    session_id: BoundedIdentifier
    execution_id: BoundedIdentifier
    request_digest: Sha256Digest


def same_agent_run_control_ref(left: Any, right: Any) -> bool:
    """Whether two references name the same run: equal canonical forms, so a field
    present on one side only, or any differing field, makes them different runs."""
    def wire(value: Any) -> Any:
        return value.to_wire() if isinstance(value, WireModel) else value

    return canonical_digest(wire(left)) == canonical_digest(wire(right))


register_wire_models(
    AgentRunControlRef=AgentRunControlRef,
    AgentExactRunControlRef=AgentExactRunControlRef,
)
