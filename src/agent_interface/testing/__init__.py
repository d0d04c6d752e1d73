"""In-memory implementations for tests and local development.

:class:`InMemoryAgentEnvironmentProvider` is a small but real provider: it honours
everything its capability document declares, including idempotent creation and
durable workspace branching (through :class:`InMemoryWorkspaceBranching`).
"""

from agent_interface.testing.branching import InMemoryWorkspaceBranching
from agent_interface.testing.environment import InMemoryAgentEnvironment, InMemoryAgentSession
from agent_interface.testing.provider import (
    InMemoryAgentEnvironmentProvider,
    in_memory_capabilities,
)

__all__ = [
    "InMemoryAgentEnvironment",
    "InMemoryAgentEnvironmentProvider",
    "InMemoryAgentSession",
    "InMemoryWorkspaceBranching",
    "in_memory_capabilities",
]
