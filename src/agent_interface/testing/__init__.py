"""In-memory implementations for tests and local development.

:class:`InMemoryAgentEnvironmentProvider` is a small but real provider: it honours
everything its capability document declares, including idempotent creation and
durable workspace branching (through :class:`InMemoryWorkspaceBranching`). The session
surfaces have their own: :class:`InMemoryAgentInstances`, :class:`InMemoryWorkspaceLeases`,
:class:`InMemoryTerminals` and :class:`InMemoryInteractiveSessions`; portable context
planning, transfer and native continuation have :class:`InMemoryPortableContext`.
"""

from agent_interface.testing.branching import InMemoryWorkspaceBranching
from agent_interface.testing.environment import InMemoryAgentEnvironment, InMemoryAgentSession
from agent_interface.testing.interactive_sessions import (
    InMemoryExecutor,
    InMemoryInteractiveSession,
    InMemoryInteractiveSessions,
    InMemoryInteractiveTerminal,
)
from agent_interface.testing.native_continuation import InMemoryNativeSession
from agent_interface.testing.portable_context import (
    InMemoryContextPlanner,
    InMemoryContextTransfer,
    InMemoryPortableContext,
    PortableContextCounters,
)
from agent_interface.testing.provider import (
    InMemoryAgentEnvironmentProvider,
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
    "InMemoryContextPlanner",
    "InMemoryContextTransfer",
    "InMemoryExecutor",
    "InMemoryInteractiveSession",
    "InMemoryInteractiveSessions",
    "InMemoryInteractiveTerminal",
    "InMemoryNativeSession",
    "InMemoryPortableContext",
    "InMemoryTerminalSession",
    "InMemoryTerminals",
    "InMemoryWorkspaceBranching",
    "InMemoryWorkspaceLeases",
    "PortableContextCounters",
    "WorkspaceLeaseGrant",
    "in_memory_capabilities",
]
