"""The provider conformance kit: how it is run, what it sends, how it cleans up, and the
reference testkit's own cases. One broken provider per check is in
``test_broken_providers.py``."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from agent_interface.conformance import (
    ConformanceFailure,
    ConformanceReport,
    ConformanceUsageError,
    run_provider_conformance,
    run_provider_conformance_async,
)
from agent_interface.provider.turn import AgentTurnInput, CreateAgentEnvironmentInput
from agent_interface.testing import InMemoryAgentEnvironmentProvider
from tests.conformance.broken_providers import ISSUE_PROVIDER_DOC, IssueEnvironment, fake_with
from tests.conformance.fake_provider import (
    COMPLETE,
    DISABLED,
    NATIVE,
    RETAINED,
    FakeEnvironment,
    FakeProvider,
    document,
)

# --- running the kit ----------------------------------------------------------------------------


def test_in_memory_provider_passes() -> None:
    report = run_provider_conformance(InMemoryAgentEnvironmentProvider())
    report.raise_for_failures()
    assert report.kit == "provider" and report.subject == "in-memory"
    for name in ("stream.events", "stream.terminal", "stream.result", "dispatch.session_id", "session.handle",
                 "workspace.write", "workspace.read", "workspace.exec", "idempotency.replay", "metadata.detached",
                 "refusal.turn_profile", "branching.durable", "branching.checkpoint_created", "destroy"):
        assert report.check(name).passed, name
    assert report.check("stream.usage").skipped


def test_in_memory_provider_without_durable_branching_passes() -> None:
    report = run_provider_conformance(InMemoryAgentEnvironmentProvider(durable_branching=False))
    report.raise_for_failures()
    assert report.check("branching.durable").skipped
    assert not any(name.startswith("branching.checkpoint") for name in report.names())


def test_async_entry_point() -> None:
    async def from_a_test() -> ConformanceReport:
        provider = InMemoryAgentEnvironmentProvider(durable_branching=False)
        return await run_provider_conformance_async(provider, prompt="echo ok")

    report = asyncio.run(from_a_test())
    assert isinstance(report, ConformanceReport) and report.ok


def test_sync_entry_point_inside_a_running_loop() -> None:
    async def inside() -> ConformanceReport:
        return run_provider_conformance(InMemoryAgentEnvironmentProvider())

    assert asyncio.run(inside()).ok


def test_nothing_to_check_is_a_usage_error() -> None:
    with pytest.raises(ConformanceUsageError):
        run_provider_conformance(None)
    with pytest.raises(ConformanceUsageError, match="idempotencyKey"):
        run_provider_conformance(FakeProvider(), create_input={"idempotencyKey": "mine"})
    with pytest.raises(ConformanceUsageError, match="not a valid create input"):
        run_provider_conformance(FakeProvider(), create_input={"profile": 7})
    with pytest.raises(ConformanceUsageError):
        run_provider_conformance(FakeProvider(), timeout=0)


def test_a_failing_report_raises_with_every_failure_named() -> None:
    report = run_provider_conformance(fake_with(IssueEnvironment, ISSUE_PROVIDER_DOC)())
    with pytest.raises(ConformanceFailure) as caught:
        report.raise_for_failures()
    assert caught.value.report is report
    assert "[FAILED] stream.events" in str(caught.value) and "[FAILED] destroy" in str(caught.value)


# --- what the kit sends -------------------------------------------------------------------------


class _Recording(FakeProvider):
    def __init__(self, doc: dict[str, Any]) -> None:
        super().__init__(doc)
        self.inputs: list[object] = []
        self.turns: list[object] = []

    async def create(self, input: CreateAgentEnvironmentInput) -> FakeEnvironment:
        self.inputs.append(input)
        return await super().create(input)


def test_the_kit_sends_the_models_the_protocols_declare() -> None:
    provider = _Recording(COMPLETE)
    turns: list[object] = []

    class Environment(FakeEnvironment):
        def stream(self, input: Any) -> AsyncIterator[Any]:
            turns.append(input)
            return super().stream(input)

        async def _dispatch(self, input: AgentTurnInput) -> Any:
            turns.append(input)
            return await super()._dispatch(input)

    provider.environment_class = Environment
    run_provider_conformance(provider).raise_for_failures()
    assert provider.inputs and all(isinstance(item, CreateAgentEnvironmentInput) for item in provider.inputs)
    assert turns and all(isinstance(item, AgentTurnInput) for item in turns)


def test_the_replay_sends_the_same_input_with_every_key_order_reversed() -> None:
    provider = _Recording(DISABLED)
    run_provider_conformance(provider).raise_for_failures()
    first, replay = provider.inputs[0], provider.inputs[1]
    assert isinstance(first, CreateAgentEnvironmentInput) and isinstance(replay, CreateAgentEnvironmentInput)
    assert first == replay and first.canonical_digest() == replay.canonical_digest()
    assert list(first.to_wire()["metadata"]) == list(reversed(list(replay.to_wire()["metadata"])))
    assert list(first.to_wire()["metadata"]["probe"]["depth"]) == ["b", "a"]
    assert list(replay.to_wire()["metadata"]["probe"]["depth"]) == ["a", "b"]


def test_create_input_carries_provider_fields_and_secrets_stay_out_of_messages() -> None:
    seen: list[CreateAgentEnvironmentInput] = []

    class Leaky(FakeEnvironment):
        def stream(self, input: Any) -> AsyncIterator[Any]:
            raise RuntimeError("upstream refused token tok-s3cret")

    class Needs(FakeProvider):
        environment_class = Leaky

        async def create(self, input: CreateAgentEnvironmentInput) -> FakeEnvironment:
            seen.append(input)
            if input.env is None or input.env.get("API_TOKEN") != "tok-s3cret":
                raise RuntimeError("no token")
            return await super().create(input)

    report = run_provider_conformance(Needs(DISABLED), create_input={"env": {"API_TOKEN": "tok-s3cret"}})
    assert report.check("create.basic").passed
    assert seen and all(item.env == {"API_TOKEN": "tok-s3cret"} for item in seen)
    assert report.check("stream.events").failed
    assert "tok-s3cret" not in str(report) and "withheld" in report.check("stream.events").message
    assert run_provider_conformance(Needs(DISABLED)).check("create.basic").failed


# --- the issue's provider -----------------------------------------------------------------------


def test_the_issue_provider_fails_every_broken_promise_by_name() -> None:
    report = run_provider_conformance(fake_with(IssueEnvironment, ISSUE_PROVIDER_DOC)())
    for name in ("stream.events", "dispatch.session_id", "session.handle", "workspace.write", "workspace.read", "destroy"):
        assert report.check(name).failed, f"{name}\n{report}"
    assert "NotImplementedError" in report.check("workspace.write").message
    assert "NotImplementedError" in report.check("workspace.read").message
    assert "None" in report.check("dispatch.session_id").message and "None" in report.check("session.handle").message


def test_declared_detach_replay_and_continue_need_dispatch_and_session() -> None:
    doc = document(
        streaming={"live": True, "replay": True, "detach": True, "turnIdempotency": False},
        sessions={"continue": True, "list": False, "messages": False},
    )

    class Bare(FakeEnvironment):
        def __init__(self, *args: Any) -> None:
            super().__init__(*args)
            del self.dispatch, self.session

    report = run_provider_conformance(fake_with(Bare, doc)())
    assert report.check("surface.environment.dispatch").failed
    assert report.check("surface.environment.session").failed


def test_retained_control_and_native_continuation_need_their_session_methods() -> None:
    doc = document(
        streaming={"live": True, "replay": True, "detach": True, "turnIdempotency": True},
        sessions={"continue": True, "list": False, "messages": False},
        retainedControl=RETAINED,
        nativeContinuation=NATIVE,
    )

    class Session:
        def __init__(self, session_id: str) -> None:
            self.id = session_id

        async def status(self) -> None: ...
        async def events(self) -> None: ...
        async def result(self) -> None: ...
        async def prompt(self, input: Any) -> None: ...
        async def cancel(self) -> None: ...

    class Environment(FakeEnvironment):
        def _session(self, session_id: str) -> Any:
            return Session(session_id)

    report = run_provider_conformance(fake_with(Environment, doc)())
    assert set(report.names("failed")) == {
        "surface.session.cancel_run",
        "surface.session.context_boundary",
        "surface.session.continue_native",
    }


def test_session_is_required_by_detach_or_replay_even_without_continue() -> None:
    """The reference rule: session() exactly when detach, replay or continue."""
    doc = document(streaming={"live": True, "replay": True, "detach": True, "turnIdempotency": False})
    run_provider_conformance(FakeProvider(doc)).raise_for_failures()
    replay_only = document(streaming={"live": True, "replay": True, "detach": False, "turnIdempotency": False})
    run_provider_conformance(FakeProvider(replay_only)).raise_for_failures()


# --- cleanup ------------------------------------------------------------------------------------


def test_every_environment_is_destroyed_when_a_check_fails() -> None:
    class FailingStream(FakeEnvironment):
        def stream(self, input: Any) -> AsyncIterator[Any]:
            raise RuntimeError("broken")

    provider = fake_with(FailingStream, DISABLED)()
    report = run_provider_conformance(provider)
    assert report.check("stream.events").failed
    assert provider.live == {} and len(provider.destroyed) == provider.effects


def test_a_check_failure_and_a_destroy_failure_are_both_reported() -> None:
    class Double(FakeEnvironment):
        def __init__(self, *args: Any) -> None:
            super().__init__(*args)
            self.id = ""

        async def destroy(self) -> None:
            raise RuntimeError("injected destroy failure")

    report = run_provider_conformance(fake_with(Double, DISABLED)())
    assert report.check("environment.id").failed
    assert report.check("destroy").failed and "injected destroy failure" in report.check("destroy").message


def test_environments_are_destroyed_when_the_kit_itself_is_cancelled() -> None:
    class Hanging(FakeEnvironment):
        def stream(self, input: Any) -> AsyncIterator[Any]:
            async def never() -> AsyncIterator[Any]:
                await asyncio.Event().wait()
                yield None

            return never()

    provider = fake_with(Hanging, DISABLED)()

    async def scenario() -> None:
        task = asyncio.ensure_future(run_provider_conformance_async(provider))
        while not provider.live:
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    assert provider.live == {}


def test_malformed_capabilities_stop_the_run_before_any_create() -> None:
    provider = FakeProvider(DISABLED)
    provider.doc = document(workspace={"read": "yes"})
    report = run_provider_conformance(provider)
    assert report.check("capabilities.valid").failed and provider.effects == 0
    assert report.check("create.basic").skipped and report.check("destroy").skipped


def test_a_hung_call_is_a_failure_not_a_hang() -> None:
    class Slow(FakeProvider):
        async def create(self, input: CreateAgentEnvironmentInput) -> FakeEnvironment:
            await asyncio.Event().wait()
            raise AssertionError

    report = run_provider_conformance(Slow(DISABLED), timeout=0.2)
    assert "did not answer within 0.2 s" in report.check("create.basic").message
