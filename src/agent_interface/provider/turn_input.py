"""One turn sent to an environment or session (``AgentTurnInputSchema`` of
``environment-runtime.ts``).

A module of its own: validating a turn input should not import the turn result's
environment event stream, the capability document nor the workspace requests
(:mod:`agent_interface.provider.turn`, where it is public too).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from agent_interface.core.contract_limits import (
    CONTRACT_MAX_ARRAY_LENGTH,
    BoundedIdentifier,
    BoundedJsonRecord,
    BoundedString,
    GreaterThanZeroSafeInt,
)
from agent_interface.core.model import (
    JsonValue,
    WireList,
    WireModel,
)
from agent_interface.core.registry import register_wire_models
from agent_interface.durable.context_transfer import ContextTransferRequest
from agent_interface.durable.native_continuation import NativeContextContinuationRequest
from agent_interface.profile.agent_profile import AgentProfile
from agent_interface.runtime.control_ref import AgentRunControlRef
from agent_interface.runtime.interaction_fields import RequestedInteractions
from agent_interface.runtime.parts import InputPart

__all__ = ["AgentTurnInput"]


class AgentTurnInput(WireModel):
    """One turn sent to an environment or session (``AgentTurnInputSchema``).

    ``profile`` is the exact :class:`~agent_interface.profile.agent_profile.AgentProfile` for the
    turn, validated by its canonical schema and kept apart from the bounded
    ``providerOptions``; a provider honors it or refuses before dispatch
    (:func:`require_turn_profile_supported`). ``interactions`` is the per-turn
    posture: omitted leaves provider defaults, ``{}`` enables no kind.
    """

    prompt: BoundedString | None = None
    parts: Annotated[WireList[InputPart], Field(max_length=CONTRACT_MAX_ARRAY_LENGTH)] | None = None
    session_id: BoundedIdentifier | None = None
    model: BoundedIdentifier | None = None
    timeout_ms: GreaterThanZeroSafeInt | None = None
    execution_id: BoundedIdentifier | None = None
    last_event_id: BoundedIdentifier | None = None
    turn_id: BoundedIdentifier | None = None
    detach: bool | None = None
    control_ref: AgentRunControlRef | None = None
    context_transfer: ContextTransferRequest | None = None
    native_continuation: NativeContextContinuationRequest | None = None
    context: BoundedJsonRecord | None = None
    interactions: RequestedInteractions | None = None
    signal: JsonValue = Field(default=None, repr=False)
    """Wire parity only: the reference accepts any value here (its abort signal is
    unchecked, and ``JSON.stringify`` writes one as ``{}``). It cancels nothing; a
    Python caller cancels the awaiting task."""
    profile: AgentProfile | None = None
    provider_options: BoundedJsonRecord | None = None


register_wire_models(AgentTurnInput=AgentTurnInput)
