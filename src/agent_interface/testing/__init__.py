"""In-memory implementations for tests and local development.

:class:`InMemoryAgentEnvironmentProvider` is a small but real provider: it honours
everything its capability document declares, including idempotent creation and
durable workspace branching (through :class:`InMemoryWorkspaceBranching`). The session
surfaces have their own: :class:`InMemoryAgentInstances`, :class:`InMemoryWorkspaceLeases`,
:class:`InMemoryTerminals` and :class:`InMemoryInteractiveSessions`; portable context
planning, transfer and native continuation have :class:`InMemoryPortableContext`; the
exactProcess capability has :class:`InMemoryExactProcessProvider` (simulated processes);
retained sessions with detach, replay and typed interactions have
:class:`InMemoryRetainedSessionProvider` (with :class:`InMemoryInteractions`).
"""

from agent_interface.testing.branching import InMemoryWorkspaceBranching
from agent_interface.testing.environment import InMemoryAgentEnvironment
from agent_interface.testing.exact_process import (
    SIMULATED_PROCESS_EXECUTABLE,
    InMemoryExactProcess,
    InMemoryExactProcessEnvironment,
    InMemoryExactProcesses,
    InMemoryExactProcessManager,
    InMemoryExactProcessProvider,
    InMemoryExactProcessStore,
    SimulatedProgram,
    SimulatedRun,
    simulated_process_launch,
)
from agent_interface.testing.interactions import InMemoryInteractions
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
from agent_interface.testing.retained_runs import InMemoryAgentSession
from agent_interface.testing.retained_sessions import (
    InMemoryRetainedEnvironment,
    InMemoryRetainedSession,
    InMemoryRetainedSessionProvider,
    retained_session_capabilities,
)
from agent_interface.testing.sessions import (
    InMemoryAgentInstances,
    InMemoryWorkspaceLeases,
    WorkspaceLeaseGrant,
)
from agent_interface.testing.terminals import InMemoryTerminals, InMemoryTerminalSession

__all__ = [
    "SIMULATED_PROCESS_EXECUTABLE",
    "InMemoryAgentEnvironment",
    "InMemoryAgentEnvironmentProvider",
    "InMemoryAgentInstances",
    "InMemoryAgentSession",
    "InMemoryContextPlanner",
    "InMemoryContextTransfer",
    "InMemoryExactProcess",
    "InMemoryExactProcessEnvironment",
    "InMemoryExactProcessManager",
    "InMemoryExactProcessProvider",
    "InMemoryExactProcessStore",
    "InMemoryExactProcesses",
    "InMemoryExecutor",
    "InMemoryInteractions",
    "InMemoryInteractiveSession",
    "InMemoryInteractiveSessions",
    "InMemoryInteractiveTerminal",
    "InMemoryNativeSession",
    "InMemoryPortableContext",
    "InMemoryRetainedEnvironment",
    "InMemoryRetainedSession",
    "InMemoryRetainedSessionProvider",
    "InMemoryTerminalSession",
    "InMemoryTerminals",
    "InMemoryWorkspaceBranching",
    "InMemoryWorkspaceLeases",
    "PortableContextCounters",
    "SimulatedProgram",
    "SimulatedRun",
    "WorkspaceLeaseGrant",
    "in_memory_capabilities",
    "retained_session_capabilities",
    "simulated_process_launch",
]
