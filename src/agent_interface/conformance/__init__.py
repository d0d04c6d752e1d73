"""Conformance checks that any Python provider can run against itself.

``run_provider_conformance(provider)`` checks the capability document, the method
surface, idempotent creation, metadata detachment and refusal-before-effect, and
runs the durable-branching checks when the provider declares them.
``run_session_conformance(instances=..., leases=..., terminals=...)`` checks the
long-lived session surfaces. ``run_portable_context_conformance(plan=..., counters=...,
...)`` checks context planning, transfer and native continuation. Use it from a
test: ``run_provider_conformance(MyProvider()).raise_for_failures()``.
"""

from agent_interface.conformance.branching import (
    BranchingConformanceReport,
    run_branching_conformance,
    run_branching_conformance_async,
)
from agent_interface.conformance.branching import ConformanceCheck as BranchingConformanceCheck
from agent_interface.conformance.portable_context import (
    PORTABLE_CONTEXT_CHECKS,
    run_portable_context_conformance,
    run_portable_context_conformance_async,
)
from agent_interface.conformance.provider import (
    ConformanceCheck,
    ConformanceFailure,
    ProviderConformanceReport,
    provider_conformance,
    run_provider_conformance,
)
from agent_interface.conformance.sessions import (
    SessionConformanceReport,
    run_session_conformance,
    run_session_conformance_async,
)

__all__ = [
    "PORTABLE_CONTEXT_CHECKS",
    "BranchingConformanceCheck",
    "BranchingConformanceReport",
    "ConformanceCheck",
    "ConformanceFailure",
    "ProviderConformanceReport",
    "SessionConformanceReport",
    "provider_conformance",
    "run_branching_conformance",
    "run_branching_conformance_async",
    "run_portable_context_conformance",
    "run_portable_context_conformance_async",
    "run_provider_conformance",
    "run_session_conformance",
    "run_session_conformance_async",
]
