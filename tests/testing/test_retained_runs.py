"""The retained-session engine shared by the in-memory providers: exact control references,
refused competing references, replay after a cursor through a rebuilt client, idempotent
turns under concurrency, and runs that always report how they ended. Each property is
checked on both providers that run on it."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import pytest

from agent_interface.core.errors import ContractError
from agent_interface.environment.events import AgentEnvironmentEvent
from agent_interface.provider.turn import AgentTurnInput, AgentTurnResult
from agent_interface.runtime.control import AgentRunControlRef
from agent_interface.testing import (
    InMemoryAgentEnvironmentProvider,
    InMemoryRetainedSessionProvider,
)
from agent_interface.testing.retained_runs import RetainedSessions, TurnEmit, turn_admission_digest

T = TypeVar("T")
WAYS = 200
PROVIDERS: dict[str, Callable[[], Any]] = {
    "command": InMemoryAgentEnvironmentProvider,
    "retained": InMemoryRetainedSessionProvider,
}


def run(body: Callable[[], Awaitable[T]]) -> T:
    return asyncio.run(body())  # type: ignore[arg-type]


def codes(error: pytest.ExceptionInfo[ContractError]) -> list[tuple[str, str]]:
    return [(issue.path, issue.code) for issue in error.value.issues]


async def ids(events: Any) -> list[str | None]:
    return [event.id async for event in events]


@pytest.fixture(params=sorted(PROVIDERS))
def make(request: pytest.FixtureRequest) -> Callable[[], Any]:
    return PROVIDERS[request.param]


def test_a_detached_turn_answers_an_exact_control_reference(make: Callable[[], Any]) -> None:
    async def body() -> None:
        provider = make()
        environment = await provider.create({"profile": {"name": "w"}})
        turn = {"prompt": "echo hi", "turnId": "t-1", "detach": True}
        reference = await environment.dispatch(turn)
        control = reference.control_ref
        assert control is not None
        assert (control.provider, control.environment_id, control.session_id) == (provider.name, environment.id, reference.id)
        assert control.run_id and control.execution_id
        assert control.request_digest == turn_admission_digest(AgentTurnInput.parse_wire({"prompt": "echo hi", "turnId": "t-1"}))
        bound = environment.session(reference.id, control_ref=control.to_wire())
        assert bound.id == reference.id and bound.control_ref == control
        assert environment.session(reference.id).control_ref == control  # unbound clients bind to the current run
        await bound.result()

    run(body)


@pytest.mark.parametrize(
    "change",
    [
        {"runId": "run-other"},
        {"executionId": "execution-other"},
        {"environmentId": "env-other"},
        {"provider": "another-provider"},
        {"requestDigest": "sha256:" + "0" * 64},
        {"executionId": None},
    ],
)
def test_a_reference_to_any_other_run_is_refused(make: Callable[[], Any], change: dict[str, Any]) -> None:
    async def body() -> None:
        environment = await make().create({"profile": {"name": "w"}})
        reference = await environment.dispatch({"prompt": "echo hi", "detach": True})
        wire = {**reference.control_ref.to_wire(), **change}
        other = AgentRunControlRef.parse_wire({key: value for key, value in wire.items() if value is not None})
        with pytest.raises(ContractError) as caught:
            environment.session(reference.id, control_ref=other)
        assert codes(caught) == [("/controlRef", "control_ref_mismatch")]
        with pytest.raises(ContractError):
            environment.session("no-such-session", control_ref=reference.control_ref)
        session = environment.session(reference.id)
        with pytest.raises(ContractError) as caught:
            await ids(session.events(execution_id="execution-other"))
        assert codes(caught) == [("/executionId", "execution_mismatch")]
        await session.result()

    run(body)


def test_a_rebuilt_client_replays_the_same_events_after_any_cursor(make: Callable[[], Any]) -> None:
    async def body() -> None:
        provider = make()
        environment = await provider.create({"profile": {"name": "w"}})
        reference = await environment.dispatch({"prompt": "echo hi", "detach": True})
        live = await ids(environment.session(reference.id).events())
        assert len(live) >= 2 and len(set(live)) == len(live)
        rebuilt = await provider.get(environment.id)
        client = rebuilt.session(reference.id, control_ref=reference.control_ref)
        execution = reference.control_ref.execution_id
        assert await ids(client.events(execution_id=execution)) == live
        for index, cursor in enumerate(live):
            assert await ids(client.events(since=cursor, execution_id=execution)) == live[index + 1 :]
        with pytest.raises(ContractError) as caught:
            await ids(client.events(since="unknown:1"))
        assert codes(caught) == [("/since", "unknown_event")]
        assert (await client.result()).session_id == reference.id

    run(body)


def test_the_same_turn_id_has_one_run_and_a_changed_turn_is_refused(make: Callable[[], Any]) -> None:
    async def body() -> None:
        environment = await make().create({"profile": {"name": "w"}})
        turn = {"prompt": "echo once", "turnId": "turn-1", "detach": True}
        references = await asyncio.gather(*(environment.dispatch(turn) for _ in range(WAYS)))
        assert len({reference.control_ref.run_id for reference in references}) == 1
        assert len({reference.id for reference in references}) == 1
        changed = {"prompt": "echo twice", "turnId": "turn-1", "detach": True}
        outcomes = await asyncio.gather(*(environment.dispatch(changed) for _ in range(WAYS)), return_exceptions=True)
        assert {outcome.issues[0].code for outcome in outcomes if isinstance(outcome, ContractError)} == {"turn_conflict"}
        assert all(isinstance(outcome, ContractError) for outcome in outcomes)
        streamed = await ids(environment.stream({"prompt": "echo once", "turnId": "turn-1"}))  # `detach` is not part of the turn
        assert streamed == await ids(environment.session(references[0].id).events())

    run(body)


def test_a_continued_session_streams_only_the_new_turn(make: Callable[[], Any]) -> None:
    async def body() -> None:
        environment = await make().create({"profile": {"name": "w"}})
        first = await ids(environment.stream({"prompt": "echo one", "sessionId": "named"}))
        assert first and all(str(event_id).startswith("named:") for event_id in first)
        second = await ids(environment.stream({"prompt": "echo two", "sessionId": "named"}))
        assert second and not set(first) & set(second)
        assert await ids(environment.session("named").events()) == first + second
        busy = await environment.dispatch({"prompt": "echo three", "sessionId": "named"})
        with pytest.raises(ContractError) as caught:
            environment.stream({"prompt": "echo four", "sessionId": "named"})  # refused at the call, before any event
        assert codes(caught) == [("/sessionId", "session_busy")]
        session = environment.session("named")
        assert session.control_ref == busy.control_ref
        await session.result()
        result = await session.prompt({"prompt": "echo five"})
        assert result.session_id == "named"
        assert session.control_ref != busy.control_ref

    run(body)


def test_destroy_cancels_running_turns_and_each_run_reports_how_it_ended(make: Callable[[], Any]) -> None:
    async def body() -> None:
        environment = await make().create({"profile": {"name": "w"}})
        reference = await environment.dispatch({"prompt": "echo never", "detach": True})
        session = environment.session(reference.id)
        await environment.destroy()
        assert await session.status() == "cancelled"
        events = [event.to_wire() async for event in session.events()]
        assert events[-1]["type"] == "status" and events[-1]["data"]["status"] == "cancelled"
        with pytest.raises(ContractError) as caught:
            await session.result()
        assert codes(caught) == [("", "turn_cancelled")]

    run(body)


def test_a_turn_whose_player_raises_fails_with_a_terminal_event() -> None:
    async def body() -> None:
        sessions = RetainedSessions(provider="p", environment_id="e", new_number=iter(range(1, 100)).__next__)

        async def broken(turn: AgentTurnInput, control: AgentRunControlRef, emit: TurnEmit) -> AgentTurnResult:
            emit(AgentEnvironmentEvent(type="message", data={"text": "partial"}))
            raise RuntimeError("the agent crashed")

        started = sessions.start(AgentTurnInput(prompt="x"), broken)
        events = [event.to_wire() async for event in sessions.run_events(started)]
        assert [event["type"] for event in events] == ["message", "status"]
        assert events[-1]["data"] == {"status": "failed", "runId": started.control.run_id}
        assert sessions[started.session_id].status == "failed"
        with pytest.raises(ContractError) as caught:
            await sessions.outcome(started.session_id)
        assert codes(caught) == [("", "turn_failed")]
        assert "crashed" not in repr(sessions)

    run(body)


def test_a_cancelled_retained_run_cancels_its_pending_interactions() -> None:
    async def body() -> None:
        provider = InMemoryRetainedSessionProvider()
        environment = await provider.create({"profile": {"name": "w"}})
        reference = await environment.dispatch({"prompt": "ask", "detach": True})
        control = reference.control_ref
        binding = {
            "runId": control.run_id,
            "provider": control.provider,
            "environmentId": control.environment_id,
            "sessionId": control.session_id,
            "executionId": control.execution_id,
            "interactionId": "q-1",
        }
        provider.open_interaction(
            {
                "id": "q-1",
                "kind": "question",
                "title": "Go?",
                "answerSpec": {"fields": [{"type": "boolean", "name": "go", "label": "Go", "required": True}]},
                "binding": binding,
            }
        )
        assert len(provider.interactions.pending(control.run_id)) == 1
        await environment.session(reference.id).cancel()
        assert provider.interactions.pending(control.run_id) == ()

    run(body)


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"profile": {"prompt": {"systemPrompt": "Replace."}}}, ("/profile/prompt/systemPrompt", "system_prompt_replace_unsupported")),
        ({"profile": {"tools": {"bash": True}}}, ("/profile/tools", "profile_tools_unsupported")),
        ({"profile": "catalog-id"}, ("/profile", "named_profile_unsupported")),
        ({"workspace": {"cwd": {"base": "repository", "path": "."}}}, ("/workspace", "create_field_unsupported")),
        ({"backend": "codex"}, ("/backend", "create_field_unsupported")),
    ],
)
def test_the_retained_provider_refuses_what_it_does_not_declare_before_any_effect(
    change: dict[str, Any], expected: tuple[str, str]
) -> None:
    async def body() -> None:
        provider = InMemoryRetainedSessionProvider()
        with pytest.raises(ContractError) as caught:
            await provider.create({"profile": {"name": "w"}, "idempotencyKey": "k", **change})
        assert expected in codes(caught)
        assert provider._environments == {}
        assert (await provider.create({"profile": {"name": "w"}, "idempotencyKey": "k"})).creation == "created"

    run(body)
