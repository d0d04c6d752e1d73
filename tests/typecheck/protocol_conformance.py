"""Static proof, checked by ``mypy --strict`` (``.ci/run``) and never executed, that the
in-memory provider, its environments and its sessions satisfy the Protocols, and that
the Protocols carry the wire models.

Each function only type-checks if the assignment it makes is sound. The last block is the
counter-proof: a provider whose ``create`` takes a plain dict must be refused, and
``warn_unused_ignores`` (part of ``--strict``) fails the run if it ever is not.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from agent_interface.environment.capabilities import AgentEnvironmentCapabilities
from agent_interface.environment.events import AgentEnvironmentEvent
from agent_interface.provider.protocols import (
    AgentEnvironment,
    AgentEnvironmentProvider,
    AgentSession,
    as_create_input,
    as_turn_input,
)
from agent_interface.provider.turn import (
    AgentTurnInput,
    AgentTurnResult,
    CreateAgentEnvironmentInput,
)
from agent_interface.testing import (
    InMemoryAgentEnvironment,
    InMemoryAgentEnvironmentProvider,
    InMemoryAgentSession,
)


def provider_is_a_provider(provider: InMemoryAgentEnvironmentProvider) -> AgentEnvironmentProvider:
    return provider


def environment_is_an_environment(environment: InMemoryAgentEnvironment) -> AgentEnvironment:
    return environment


def session_is_a_session(session: InMemoryAgentSession) -> AgentSession:
    return session


async def create_takes_the_model(provider: AgentEnvironmentProvider, input: CreateAgentEnvironmentInput) -> AgentEnvironment:
    return await provider.create(input)


def stream_takes_the_model(environment: AgentEnvironment, input: AgentTurnInput) -> AsyncIterator[AgentEnvironmentEvent]:
    return environment.stream(input)


async def prompt_takes_the_model(session: AgentSession, input: AgentTurnInput) -> AgentTurnResult:
    return await session.prompt(input)


def wire_mappings_normalize(create: dict[str, Any], turn: dict[str, Any]) -> tuple[CreateAgentEnvironmentInput, AgentTurnInput]:
    return as_create_input(create), as_turn_input(turn)


class _TakesADict:
    name = "dict-only"

    async def capabilities(self) -> AgentEnvironmentCapabilities:
        raise NotImplementedError

    async def create(self, input: dict[str, Any]) -> InMemoryAgentEnvironment:
        raise NotImplementedError


_refused: AgentEnvironmentProvider = _TakesADict()  # type: ignore[assignment]
