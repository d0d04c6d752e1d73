"""The promise of issues 23 and 24: every in-memory implementation in ``agent_interface.testing``
passes every conformance kit that applies to what it declares.

``PAIRS`` lists each (implementation, kit) pair. For each, the kit must answer ``ok`` and skip
exactly the checks the capability document exempts: each expected skip names the pointer and
value in the implementation's document that exempt it (an undeclared feature, or a refusal
check for a feature that is declared), and the test checks that the document says so. A
subject without a capability document (the session, interactive-session and branching
engines) must have no skipped check at all.

``test_every_in_memory_implementation_is_covered`` fails when a new ``InMemory*`` name is
added to ``agent_interface.testing`` without a pair here (or a note of the implementation it
is a part of).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest

import agent_interface.testing as testing
from agent_interface.conformance import (
    BRANCHING_CHECKS,
    ConformanceReport,
    ExactProcessLaunches,
    run_branching_conformance_async,
    run_exact_process_conformance_async,
    run_interaction_response_conformance_async,
    run_interactive_session_conformance_async,
    run_portable_context_conformance_async,
    run_provider_conformance_async,
    run_session_conformance_async,
    run_session_replay_conformance_async,
)
from agent_interface.durable.portable_context import plain_wire
from agent_interface.testing import (
    InMemoryAgentEnvironmentProvider,
    InMemoryAgentInstances,
    InMemoryExactProcessProvider,
    InMemoryExactProcessStore,
    InMemoryInteractions,
    InMemoryInteractiveSessions,
    InMemoryPortableContext,
    InMemoryRetainedSessionProvider,
    InMemoryTerminals,
    InMemoryWorkspaceBranching,
    InMemoryWorkspaceLeases,
)
from tests.conformance.interaction_fixtures import World
from tests.conformance.portable_fixtures import MESSAGES, RUN, declared_capabilities, kit_options

Document = Mapping[str, Any]
Outcome = tuple[ConformanceReport, Document | None]


@dataclass(frozen=True)
class Exempt:
    """The kit skips this check because the capability document holds ``value`` at ``pointer``."""

    pointer: str
    value: Any


@dataclass(frozen=True)
class Pair:
    implementation: str
    kit: str
    run: Callable[[], Awaitable[Outcome]]
    exempt: Mapping[str, Exempt] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"{self.implementation} | {self.kit}"


async def _document(provider: Any) -> Document:
    return plain_wire(await provider.capabilities())  # type: ignore[no-any-return]


def _provider_kit(make: Callable[[], Any]) -> Callable[[], Awaitable[Outcome]]:
    async def run() -> Outcome:
        provider = make()
        return await run_provider_conformance_async(provider), await _document(provider)

    return run


def _replay_kit(make: Callable[[], Any]) -> Callable[[], Awaitable[Outcome]]:
    async def run() -> Outcome:
        provider = make()
        return await run_session_replay_conformance_async(provider), await _document(provider)

    return run


async def _interactions() -> Outcome:
    world = World(InMemoryInteractions())
    await world.start()
    report = await run_interaction_response_conformance_async(world.prepare, environment=world.environment, session=world.session)
    return report, await _document(world.provider)


def _branching(forks_own_copy: bool) -> Callable[[], Awaitable[Outcome]]:
    async def run() -> Outcome:
        engine = InMemoryWorkspaceBranching(provider="in-memory", forks_own_copy=forks_own_copy)
        return await run_branching_conformance_async(engine), None

    return run


def _session_part(**part: Callable[[], Any]) -> Callable[[], Awaitable[Outcome]]:
    async def run() -> Outcome:
        return await run_session_conformance_async(**{name: make() for name, make in part.items()}), None

    return run


def _interactive_sessions() -> InMemoryInteractiveSessions:
    # A launch generation above 0, so the launch-generation fence has something to fence.
    return InMemoryInteractiveSessions(initial_control_generation=2)


async def _interactive() -> Outcome:
    return await run_interactive_session_conformance_async(_interactive_sessions()), None


async def _portable() -> Outcome:
    portable = InMemoryPortableContext()
    session = portable.open_session(run=RUN, messages=MESSAGES)
    capabilities = declared_capabilities()  # what InMemoryPortableContext implements
    options = kit_options(portable, session, capabilities=capabilities, admission_control=None)
    return await run_portable_context_conformance_async(**options), capabilities.to_wire()


EXACT_CREATE: dict[str, Any] = {
    "image": "registry.example/exact@sha256:" + "a" * 64,
    "egress": {"mode": "blocked"},
    "maxLifetimeMs": 600_000,
    "resources": {"cpu": 1, "memoryMb": 512, "diskMb": 64},
    "metadata": {"suite": "in-memory-passes-every-kit"},
    "idempotencyKey": "every-kit",
}


async def _exact_process() -> Outcome:
    store = InMemoryExactProcessStore()
    report = await run_exact_process_conformance_async(
        lambda: InMemoryExactProcessProvider(store), EXACT_CREATE, ExactProcessLaunches.simulated()
    )
    return report, await _document(InMemoryExactProcessProvider(store))


NO_USAGE = {"stream.usage": Exempt("/usage", False)}
REPOSITORY_CWD_ACCEPTED = {"refusal.cwd_base_repository": Exempt("/workspace/cwdBases/repository", True)}
NO_DURABLE_BRANCHING = {
    "branching.operations": Exempt("/branching/fork", False),
    "branching.durable": Exempt("/branching/checkpoint", False),
}
NO_WORKSPACE = {f"workspace.{name}": Exempt(f"/workspace/{name}", False) for name in ("read", "write", "exec")}

PAIRS = [
    Pair("InMemoryAgentEnvironmentProvider", "provider", _provider_kit(InMemoryAgentEnvironmentProvider),
         {**NO_USAGE, **REPOSITORY_CWD_ACCEPTED}),
    Pair("InMemoryAgentEnvironmentProvider(durable_branching=False)", "provider",
         _provider_kit(lambda: InMemoryAgentEnvironmentProvider(durable_branching=False)),
         {**NO_USAGE, **REPOSITORY_CWD_ACCEPTED, **NO_DURABLE_BRANCHING}),
    Pair("InMemoryAgentEnvironmentProvider", "session replay", _replay_kit(InMemoryAgentEnvironmentProvider)),
    Pair("InMemoryAgentEnvironmentProvider(durable_branching=False)", "session replay",
         _replay_kit(lambda: InMemoryAgentEnvironmentProvider(durable_branching=False))),
    Pair("InMemoryRetainedSessionProvider", "provider", _provider_kit(InMemoryRetainedSessionProvider),
         {**NO_USAGE, **NO_DURABLE_BRANCHING, **NO_WORKSPACE}),
    Pair("InMemoryRetainedSessionProvider", "session replay", _replay_kit(InMemoryRetainedSessionProvider)),
    Pair("InMemoryInteractions (InMemoryRetainedSessionProvider)", "interaction response", _interactions),
    Pair("InMemoryWorkspaceBranching", "workspace branching", _branching(False)),
    Pair("InMemoryWorkspaceBranching(forks_own_copy=True)", "workspace branching", _branching(True)),
    Pair("InMemoryAgentInstances", "session", _session_part(instances=InMemoryAgentInstances)),
    Pair("InMemoryWorkspaceLeases", "session", _session_part(leases=InMemoryWorkspaceLeases)),
    Pair("InMemoryTerminals", "session", _session_part(terminals=InMemoryTerminals)),
    Pair("InMemoryInteractiveSessions", "session", _session_part(interactive=_interactive_sessions)),
    Pair("InMemoryInteractiveSessions", "interactive session", _interactive),
    Pair("InMemoryPortableContext", "portable context", _portable),
    Pair("InMemoryExactProcessProvider", "exact-process", _exact_process,
         {"exact-process-egress-refusal": Exempt("/exactProcess/egress", ["blocked", "strict"])}),
]

PARTS = {
    "InMemoryAgentEnvironment": "InMemoryAgentEnvironmentProvider",
    "InMemoryAgentSession": "InMemoryAgentEnvironmentProvider",
    "InMemoryRetainedEnvironment": "InMemoryRetainedSessionProvider",
    "InMemoryRetainedSession": "InMemoryRetainedSessionProvider",
    "InMemoryTerminalSession": "InMemoryTerminals",
    "InMemoryExecutor": "InMemoryInteractiveSessions",
    "InMemoryInteractiveSession": "InMemoryInteractiveSessions",
    "InMemoryInteractiveTerminal": "InMemoryInteractiveSessions",
    "InMemoryContextPlanner": "InMemoryPortableContext",
    "InMemoryContextTransfer": "InMemoryPortableContext",
    "InMemoryNativeSession": "InMemoryPortableContext",
    "InMemoryExactProcess": "InMemoryExactProcessProvider",
    "InMemoryExactProcessEnvironment": "InMemoryExactProcessProvider",
    "InMemoryExactProcesses": "InMemoryExactProcessProvider",
    "InMemoryExactProcessManager": "InMemoryExactProcessProvider",
    "InMemoryExactProcessStore": "InMemoryExactProcessProvider",
}
"""Public in-memory classes that are parts of an implementation a pair covers."""


def _at(document: Document, pointer: str) -> Any:
    value: Any = document
    for token in pointer.lstrip("/").split("/"):
        value = value.get(token) if isinstance(value, Mapping) else None
    return value


@pytest.mark.parametrize("pair", PAIRS, ids=[pair.id for pair in PAIRS])
def test_the_in_memory_implementation_passes_the_kit(pair: Pair) -> None:
    report, document = asyncio.run(pair.run())
    report.raise_for_failures()
    assert report.ok and report.kit == pair.kit
    assert set(report.names("skipped")) == set(pair.exempt), str(report)
    if pair.exempt:
        assert document is not None
    for name, exempt in pair.exempt.items():
        assert _at(document or {}, exempt.pointer) == exempt.value, (name, exempt)


def test_the_provider_kit_runs_the_branching_kit_on_the_durable_in_memory_provider() -> None:
    report = asyncio.run(run_provider_conformance_async(InMemoryAgentEnvironmentProvider()))
    assert report.check("branching.durable").passed
    assert {f"branching.{name}" for name in BRANCHING_CHECKS} <= set(report.names("passed"))


def test_the_command_turn_provider_declares_only_what_it_wires() -> None:
    # A command turn asks no questions and has no conversation to move or continue
    # natively: those surfaces are InMemoryRetainedSessionProvider's and
    # InMemoryPortableContext's (docs/conformance.md, "The in-memory implementations").
    document = asyncio.run(_document(InMemoryAgentEnvironmentProvider()))
    for undeclared in ("interactions", "contextTransfer", "nativeContinuation", "retainedControl", "exactProcess"):
        assert undeclared not in document
    assert document["streaming"] == {"live": True, "replay": True, "detach": True, "turnIdempotency": True}


def test_every_in_memory_implementation_is_covered() -> None:
    public = {name for name in testing.__all__ if name.startswith("InMemory")}
    subjects = {pair.implementation.split("(")[0].split(" ")[0] for pair in PAIRS}
    assert public - subjects - set(PARTS) == set()
    assert set(PARTS) <= public and set(PARTS.values()) <= subjects
