"""Conformance kits that any Python implementation runs against itself.

Every kit has an ``async def run_X_conformance_async`` and a synchronous
``run_X_conformance`` (which also works inside a running event loop), and both return one
:class:`ConformanceReport`: passed, failed and skipped checks by name, ``ok`` (nothing
failed and something passed) and :meth:`ConformanceReport.raise_for_failures`. A kit
called with nothing to check raises :class:`ConformanceUsageError`. From pytest::

    def test_my_provider_conforms() -> None:
        run_provider_conformance(MyProvider()).raise_for_failures()

* :func:`run_provider_conformance`: an environment provider (capability document, method
  surface, keyed create, metadata snapshots, one streamed turn, dispatch and sessions,
  workspace, refusals before effect, cleanup; durable branching when declared);
* :func:`run_session_conformance`: managed agents, workspace leases, terminals and
  interactive sessions;
* :func:`run_branching_conformance`: a durable workspace-branching engine;
* :func:`run_interactive_session_conformance`: native interactive sessions (TUIs);
* :func:`run_session_replay_conformance`: detached turns and event replay of retained
  sessions;
* :func:`run_interaction_response_conformance`: typed interaction responses;
* :func:`run_portable_context_conformance`: context planning, transfer and native
  continuation;
* :func:`run_exact_process_conformance`: the exactProcess capability (idempotent and
  durable environments, exact-byte files, shell-free launches, terminal reasons, recovery
  through a rebuilt provider).

``docs/conformance.md`` lists every check beside the reference testkit's.
"""

from agent_interface.conformance.branching import (
    BRANCHING_CHECKS,
    run_branching_conformance,
    run_branching_conformance_async,
)
from agent_interface.conformance.exact_process import (
    EXACT_PROCESS_CHECKS,
    ExactProcessLaunches,
    run_exact_process_conformance,
    run_exact_process_conformance_async,
)
from agent_interface.conformance.interactions import (
    INTERACTION_CHECKS,
    InteractionCase,
    InteractionScenario,
    InteractionTarget,
    run_interaction_response_conformance,
    run_interaction_response_conformance_async,
)
from agent_interface.conformance.interactive_sessions import (
    INTERACTIVE_CHECKS,
    run_interactive_session_conformance,
    run_interactive_session_conformance_async,
)
from agent_interface.conformance.portable_context import (
    PORTABLE_CONTEXT_CHECKS,
    run_portable_context_conformance,
    run_portable_context_conformance_async,
)
from agent_interface.conformance.provider import (
    PROVIDER_CHECKS,
    run_provider_conformance,
    run_provider_conformance_async,
)
from agent_interface.conformance.report import (
    CheckStatus,
    ConformanceCheck,
    ConformanceFailure,
    ConformanceReport,
    ConformanceUsageError,
)
from agent_interface.conformance.session_replay import (
    SESSION_REPLAY_CHECKS,
    run_session_replay_conformance,
    run_session_replay_conformance_async,
)
from agent_interface.conformance.sessions import (
    run_session_conformance,
    run_session_conformance_async,
)

__all__ = [
    "BRANCHING_CHECKS",
    "EXACT_PROCESS_CHECKS",
    "INTERACTION_CHECKS",
    "INTERACTIVE_CHECKS",
    "PORTABLE_CONTEXT_CHECKS",
    "PROVIDER_CHECKS",
    "SESSION_REPLAY_CHECKS",
    "CheckStatus",
    "ConformanceCheck",
    "ConformanceFailure",
    "ConformanceReport",
    "ConformanceUsageError",
    "ExactProcessLaunches",
    "InteractionCase",
    "InteractionScenario",
    "InteractionTarget",
    "run_branching_conformance",
    "run_branching_conformance_async",
    "run_exact_process_conformance",
    "run_exact_process_conformance_async",
    "run_interaction_response_conformance",
    "run_interaction_response_conformance_async",
    "run_interactive_session_conformance",
    "run_interactive_session_conformance_async",
    "run_portable_context_conformance",
    "run_portable_context_conformance_async",
    "run_provider_conformance",
    "run_provider_conformance_async",
    "run_session_conformance",
    "run_session_conformance_async",
    "run_session_replay_conformance",
    "run_session_replay_conformance_async",
]
