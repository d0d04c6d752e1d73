"""In-memory implementations for tests and local development.

:class:`InMemoryAgentEnvironmentProvider` is a small but real provider: it honours
everything its capability document declares, including idempotent creation and
durable workspace branching (through :class:`InMemoryWorkspaceBranching`). The session
surfaces have their own: :class:`InMemoryAgentInstances`, :class:`InMemoryWorkspaceLeases`
and :class:`InMemoryTerminals`.
"""

from agent_interface.testing.branching import InMemoryWorkspaceBranching
from agent_interface.testing.provider import (
    InMemoryAgentEnvironment,
    InMemoryAgentEnvironmentProvider,
    InMemoryAgentSession,
    in_memory_capabilities,
)
from agent_interface.testing.sessions import (
    InMemoryAgentInstances,
    InMemoryWorkspaceLeases,
    WorkspaceLeaseGrant,
)
from agent_interface.testing.terminals import InMemoryTerminals, InMemoryTerminalSession

__all__ = [
    "InMemoryAgentEnvironment",
    "InMemoryAgentEnvironmentProvider",
    "InMemoryAgentInstances",
    "InMemoryAgentSession",
    "InMemoryTerminalSession",
    "InMemoryTerminals",
    "InMemoryWorkspaceBranching",
    "InMemoryWorkspaceLeases",
    "WorkspaceLeaseGrant",
    "in_memory_capabilities",
]
