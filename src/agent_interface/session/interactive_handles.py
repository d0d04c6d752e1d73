"""Live interactive-session handles (``environment-interactive-control.ts``): the exact TUI
selected for one run (:class:`AgentInteractiveSession`) and the terminal its attach returns
(:class:`AgentInteractiveTerminalSession`).

Protocols only; the wire records they exchange are in
:mod:`agent_interface.session.interactive_control`, which also exports these names.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from agent_interface.session.interactive_control import (
    AgentInteractiveSessionAttach,
    AgentInteractiveSessionControlClaim,
    AgentInteractiveSessionControlClaimAcknowledgement,
    AgentInteractiveSessionControlClaimRequest,
    AgentInteractiveSessionRef,
    AgentInteractiveSessionStatus,
    AgentInteractiveSessionStopAcknowledgement,
    AgentInteractiveSessionStopCommand,
)
from agent_interface.session.terminal import AgentTerminalSession

__all__ = ["AgentInteractiveSession", "AgentInteractiveTerminalSession"]


@runtime_checkable
class AgentInteractiveTerminalSession(AgentTerminalSession, Protocol):
    """A terminal returned by attach; every write stays bound to this claim."""

    @property
    def control(self) -> AgentInteractiveSessionControlClaim: ...


@runtime_checkable
class AgentInteractiveSession(Protocol):
    """The exact TUI selected for one run. ``attach`` reaches the existing process and
    never starts another; detach and close affect only the connection; ``stop`` ends the
    process. ``send_prompt`` is optional."""

    @property
    def ref(self) -> AgentInteractiveSessionRef: ...

    async def claim_control(
        self, request: AgentInteractiveSessionControlClaimRequest
    ) -> AgentInteractiveSessionControlClaimAcknowledgement: ...

    async def status(self) -> AgentInteractiveSessionStatus: ...

    async def attach(self, request: AgentInteractiveSessionAttach) -> AgentInteractiveTerminalSession: ...

    async def stop(self, command: AgentInteractiveSessionStopCommand) -> AgentInteractiveSessionStopAcknowledgement: ...
