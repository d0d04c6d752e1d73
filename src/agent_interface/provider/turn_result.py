"""The result of one turn (``AgentTurnResultSchema`` of ``environment-runtime.ts``).

A module of its own: validating a turn result should not import the profile, the
workspace requests nor the turn input (:mod:`agent_interface.provider.turn`, where it is
public too).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from agent_interface.core.contract_limits import (
    CONTRACT_MAX_ARRAY_LENGTH,
    BoundedIdentifier,
    BoundedJsonRecord,
    BoundedString,
)
from agent_interface.core.model import WireList, WireModel
from agent_interface.core.registry import register_wire_models
from agent_interface.durable.context_transfer import ContextTransferReceipt
from agent_interface.environment.events import AgentEnvironmentEvent
from agent_interface.runtime.usage import TokenUsage

__all__ = ["AgentTurnResult"]


class AgentTurnResult(WireModel):
    """The result of one turn (``AgentTurnResultSchema``)."""

    text: BoundedString
    success: bool
    error: BoundedString | None = None
    session_id: BoundedIdentifier | None = None
    usage: TokenUsage | None = None
    metadata: BoundedJsonRecord | None = None
    events: (
        Annotated[WireList[AgentEnvironmentEvent], Field(max_length=CONTRACT_MAX_ARRAY_LENGTH)]
        | None
    ) = None
    context_transfer_receipt: ContextTransferReceipt | None = None


register_wire_models(AgentTurnResult=AgentTurnResult)
