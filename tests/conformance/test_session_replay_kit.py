"""The session-replay kit is proven by what it catches: one broken promise per variant,
each failing the check that names it; the in-memory retained sessions and the in-memory
command-turn provider pass."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest

from agent_interface.conformance import (
    SESSION_REPLAY_CHECKS,
    ConformanceReport,
    ConformanceUsageError,
    run_session_replay_conformance,
    run_session_replay_conformance_async,
)
from agent_interface.provider.turn import AgentSessionRef
from agent_interface.testing import (
    InMemoryAgentEnvironmentProvider,
    InMemoryRetainedEnvironment,
    InMemoryRetainedSession,
    InMemoryRetainedSessionProvider,
)
from tests.conformance.broken_replay_consistency import REPLAY_BROKEN


class Swapped(InMemoryRetainedSessionProvider):
    """The in-memory provider, whose environments are of ``environment_type``."""

    environment_type: type[InMemoryRetainedEnvironment] = InMemoryRetainedEnvironment

    async def create(self, input: Any) -> Any:
        environment = await super().create(input)
        environment.__class__ = self.environment_type
        return environment

    async def get(self, id: str) -> Any:
        environment = await super().get(id)
        if environment is not None:
            environment.__class__ = self.environment_type
        return environment


class NoSessionMethod(InMemoryRetainedEnvironment):
    session = None  # type: ignore[assignment]


class NoControlRef(InMemoryRetainedEnvironment):
    async def dispatch(self, input: Any) -> AgentSessionRef:
        reference = await super().dispatch(input)
        return AgentSessionRef(id=reference.id, provider=reference.provider)


class TrustsAnyControlRef(InMemoryRetainedEnvironment):
    def session(self, id: str, *, control_ref: Any = None) -> Any:
        client = super().session(id)
        if control_ref is not None:
            client._control_ref = control_ref
        original = client.events

        def events(*, since: Any = None, execution_id: Any = None) -> Any:
            return original(since=since)

        client.events = events  # type: ignore[method-assign]
        return client


class FreshIds(InMemoryRetainedSession):
    async def events(self, *, since: Any = None, execution_id: Any = None) -> AsyncIterator[Any]:
        async for event in super().events(since=since, execution_id=execution_id):
            yield event.model_copy(update={"id": uuid.uuid4().hex})


class UnstableIds(InMemoryRetainedEnvironment):
    def session(self, id: str, *, control_ref: Any = None) -> Any:
        client = super().session(id, control_ref=control_ref)
        client.__class__ = FreshIds
        return client


class InclusiveCursor(InMemoryRetainedSession):
    async def events(self, *, since: Any = None, execution_id: Any = None) -> AsyncIterator[Any]:
        record = self._record()
        if since is not None:
            for event in record.events:
                if event.id == since:
                    yield event
        async for event in super().events(since=since, execution_id=execution_id):
            yield event


class ReplaysTheCursor(InMemoryRetainedEnvironment):
    def session(self, id: str, *, control_ref: Any = None) -> Any:
        client = super().session(id, control_ref=control_ref)
        client.__class__ = InclusiveCursor
        return client


class ForgetsEnvironments(InMemoryRetainedSessionProvider):
    async def get(self, id: str) -> Any:
        return None


class DestroyFails(InMemoryRetainedEnvironment):
    async def destroy(self) -> None:
        raise RuntimeError("the environment could not be destroyed")


class DestroyLeavesItRunning(InMemoryRetainedEnvironment):
    async def destroy(self) -> None:
        return None  # answers, but the environment stays live for get() and list()


def _swapped(environment_type: type[InMemoryRetainedEnvironment]) -> Any:
    return lambda: type("Broken", (Swapped,), {"environment_type": environment_type})()


BROKEN: list[tuple[Any, str]] = [
    (_swapped(NoSessionMethod), "surface"),
    (_swapped(NoControlRef), "detach_control_reference"),
    (_swapped(TrustsAnyControlRef), "competing_run_refused"),
    (_swapped(UnstableIds), "stable_event_ids"),
    (_swapped(ReplaysTheCursor), "replay_after_cursor"),
    (ForgetsEnvironments, "reconnected_replay"),
    (_swapped(DestroyFails), "environment_cleanup"),
    (_swapped(DestroyLeavesItRunning), "environment_cleanup"),
    *REPLAY_BROKEN,
]

# What the in-memory sessions' replayed events do not state twice (no data.sequence, no
# session id, one usage report at most, no normalized times): never counted as passed.
NOT_STATED = (
    "replay.sequence", "replay.session_identity", "replay.usage_cumulative", "replay.times", "replay.result_usage",
)


def _report(provider: Any, **options: Any) -> ConformanceReport:
    return run_session_replay_conformance(provider, timeout=10.0, **options)


def test_in_memory_retained_sessions_pass_every_check() -> None:
    report = _report(InMemoryRetainedSessionProvider())
    report.raise_for_failures()
    assert report.names() == SESSION_REPLAY_CHECKS
    not_stated = (*NOT_STATED, "replay.result_events")  # its results carry no events
    assert report.names("not_applicable") == not_stated
    assert report.names("passed") == tuple(name for name in SESSION_REPLAY_CHECKS if name not in not_stated)


@pytest.mark.parametrize(("make", "failing"), BROKEN, ids=[name for _, name in BROKEN])
def test_each_broken_promise_fails_its_check(make: Any, failing: str) -> None:
    report = _report(make())
    assert not report.ok
    assert report.check(failing).failed, str(report)
    assert report.check(failing).message
    assert failing in report.summary()


class CreateExits(InMemoryRetainedSessionProvider):
    async def create(self, input: Any) -> Any:
        raise SystemExit(9)


def test_a_provider_that_cannot_be_set_up_fails_a_check_instead_of_escaping() -> None:
    report = _report(CreateExits())
    assert report.check("surface").failed and "SystemExit: 9" in report.check("surface").message
    assert not report.ok


def test_every_check_is_exercised_by_a_broken_variant() -> None:
    failed: set[str] = set()
    for make, _ in BROKEN:
        failed.update(_report(make()).names("failed"))
    assert set(SESSION_REPLAY_CHECKS) <= failed


def test_a_reconnect_callable_replaces_get() -> None:
    provider = ForgetsEnvironments()
    holder: dict[str, Any] = {}

    async def reconnect(reference: Any) -> Any:
        environment = next(iter(provider._environments.values()))
        client = InMemoryRetainedEnvironment(provider, environment, None)
        holder["client"] = client
        return client.session(reference.id, control_ref=reference.control_ref)

    report = _report(provider, reconnect=reconnect)
    report.raise_for_failures()
    assert "client" in holder


def test_nothing_declared_is_skipped_never_passed() -> None:
    class NoReplay(InMemoryRetainedSessionProvider):
        async def capabilities(self) -> Any:
            wire = (await super().capabilities()).to_wire()
            wire["streaming"] = {**wire["streaming"], "replay": False}
            return wire

    report = _report(NoReplay())
    assert not report.ok
    assert report.names("skipped") == SESSION_REPLAY_CHECKS


@pytest.mark.parametrize("durable_branching", [True, False])
def test_the_command_turn_provider_passes_every_check(durable_branching: bool) -> None:
    report = _report(InMemoryAgentEnvironmentProvider(durable_branching=durable_branching))
    report.raise_for_failures()
    assert report.names("not_applicable") == NOT_STATED
    assert report.names("passed") == tuple(name for name in SESSION_REPLAY_CHECKS if name not in NOT_STATED)


def test_usage_error_and_async_entry_point() -> None:
    with pytest.raises(ConformanceUsageError):
        _report(object())
    report = asyncio.run(run_session_replay_conformance_async(InMemoryRetainedSessionProvider()))
    assert report.ok and report.kit == "session replay"


def test_turn_idempotency_and_concurrent_dispatch_have_one_run() -> None:
    async def scenario() -> None:
        provider = InMemoryRetainedSessionProvider()
        environment = await provider.create({"profile": {"name": "p"}})
        turn = {"prompt": "once", "turnId": "turn-1", "detach": True}
        references = await asyncio.gather(*(environment.dispatch(turn) for _ in range(200)))
        assert len({reference.id for reference in references}) == 1
        assert len({reference.control_ref.run_id for reference in references}) == 1  # type: ignore[union-attr]
        assert len(environment._state.sessions) == 1
        changed = {"prompt": "twice", "turnId": "turn-1", "detach": True}
        outcomes = await asyncio.gather(*(environment.dispatch(changed) for _ in range(200)), return_exceptions=True)
        assert all(getattr(outcome, "issues", None) and outcome.issues[0].code == "turn_conflict" for outcome in outcomes)
        streamed = [event async for event in environment.stream({"prompt": "once", "turnId": "turn-1"})]
        session = environment.session(references[0].id)
        assert [event.id for event in streamed] == [event.id async for event in session.events()]

    asyncio.run(scenario())
