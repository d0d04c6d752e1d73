"""What crosses the Protocols: the wire models, and the helpers that normalize a model or
its wire mapping; the capability-surface rules the reference testkit applies."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest

from agent_interface.core.errors import ContractError
from agent_interface.environment.workspace import CheckpointRef
from agent_interface.provider.protocols import (
    as_create_input,
    as_turn_input,
    capability_surface_members,
    check_capability_surface,
)
from agent_interface.provider.turn import AgentTurnInput, CreateAgentEnvironmentInput
from agent_interface.testing import InMemoryAgentEnvironmentProvider

DOC: dict[str, Any] = {
    "profile": {
        "namedProfiles": False, "systemPrompt": {"replace": False, "append": False}, "instructions": False,
        "tools": False, "permissions": False, "mcp": False, "subagents": False,
        "resources": {"files": False, "instructions": False}, "runtimeUpdate": False, "validation": False,
    },
    "streaming": {"live": True, "replay": False, "detach": False, "turnIdempotency": False},
    "sessions": {"continue": False, "list": False, "messages": False},
    "workspace": {"read": False, "write": False, "exec": False, "git": False, "upload": False, "download": False},
    "branching": {"checkpoint": False, "fork": False},
    "placement": False,
    "usage": False,
    "confidential": False,
}


def test_a_model_passes_through_and_a_mapping_is_parsed_strictly() -> None:
    model = CreateAgentEnvironmentInput(profile={"name": "w"}, idempotency_key="k")
    assert as_create_input(model) is model
    assert as_create_input({"profile": {"name": "w"}, "idempotencyKey": "k"}) == model
    with pytest.raises(ContractError) as caught:
        as_create_input({"profile": {"name": "w"}, "idempotency_key": "k"})  # wire names only
    assert caught.value.issues[0].path == "/idempotency_key"
    turn = AgentTurnInput(prompt="hi")
    assert as_turn_input(turn) is turn and as_turn_input({"prompt": "hi"}) == turn
    with pytest.raises(ContractError):
        as_turn_input({"prompt": 7})


def _environment(**members: Any) -> object:
    class Environment:
        id = "e"
        provider = "p"

        async def status(self) -> str:
            return "running"

        def stream(self, input: Any) -> Any: ...

    environment = Environment()
    for name, value in members.items():
        setattr(environment, name, value)
    return environment


def _doc(**changes: Any) -> dict[str, Any]:
    doc = copy.deepcopy(DOC)
    for key, value in changes.items():
        doc[key] = {**doc[key], **value} if isinstance(value, dict) and key in doc else value
    return doc


@pytest.mark.parametrize(
    "streaming, sessions, needs_session",
    [
        ({"detach": True, "replay": True}, {"continue": False}, True),  # the reference rule
        ({"detach": False, "replay": True}, {"continue": False}, True),
        ({"detach": False, "replay": False}, {"continue": True}, True),
        ({"detach": False, "replay": False}, {"continue": False}, False),
    ],
)
def test_session_is_present_exactly_with_detach_replay_or_continue(
    streaming: dict[str, bool], sessions: dict[str, bool], needs_session: bool
) -> None:
    doc = _doc(streaming=streaming, sessions=sessions)
    dispatch = {"dispatch": lambda turn: None} if streaming["detach"] else {}
    with_session = check_capability_surface(_environment(session=lambda i: None, **dispatch), doc)
    without = check_capability_surface(_environment(**dispatch), doc)
    if needs_session:
        assert with_session == ()
        assert [(i.member, i.code) for i in without] == [("session", "missing_declared_capability")]
    else:
        assert [(i.member, i.code) for i in with_session] == [("session", "exposed_without_capability")]
        assert without == ()


@pytest.mark.parametrize("member, block", [("dispatch", "streaming"), ("checkpoint", "branching"), ("fork", "branching")])
def test_declared_dispatch_checkpoint_and_fork_are_required(member: str, block: str) -> None:
    flag = {"dispatch": "detach"}.get(member, member)
    doc = _doc(**{block: {flag: True}})
    present = {"session": lambda i: None} if member == "dispatch" else {}
    found = check_capability_surface(_environment(**present), doc)
    assert [(i.member, i.code) for i in found] == [(member, "missing_declared_capability")]
    assert check_capability_surface(_environment(**present, **{member: lambda *a: None}), doc) == ()


def test_a_session_may_leave_interactions_to_its_environment() -> None:
    class Session:
        id = "s"

        async def prompt(self, input: Any) -> Any: ...

    interactions = {
        "kinds": ["permission"], "answerFieldTypes": ["boolean"], "responseScopes": ["interaction"],
        "secretAnswers": False, "concurrentRequests": False, "replay": False, "responseIdempotency": True,
    }
    assert check_capability_surface(Session(), _doc(interactions=interactions), kind="session") == ()
    answering = Session()
    answering.respond_to_interaction = lambda command: None  # type: ignore[attr-defined]
    assert [(i.member, i.code) for i in check_capability_surface(answering, DOC, kind="session")] == [
        ("respond_to_interaction", "exposed_without_capability")
    ]


def test_surface_members_are_listed_in_report_order() -> None:
    assert capability_surface_members("session") == ("respond_to_interaction", "context_boundary", "continue_native", "cancel_run")
    assert capability_surface_members("environment")[:2] == ("dispatch", "session")
    assert capability_surface_members("provider") == ("exact_process", "context_transfer", "validate_profile")


def test_in_memory_legacy_checkpoint_and_fork_copy_the_files() -> None:
    async def scenario() -> None:
        provider = InMemoryAgentEnvironmentProvider()
        environment = await provider.create({"profile": {"name": "w"}})
        await environment.write("a.txt", "before")
        ref = await environment.checkpoint()
        await environment.write("a.txt", "after")
        child = await environment.fork(ref)
        assert child.id != environment.id and child.creation == "created"
        assert await child.read("a.txt") == "before"
        with pytest.raises(ContractError):
            await environment.fork(CheckpointRef(id="missing"))
        plain = await InMemoryAgentEnvironmentProvider(durable_branching=False).create({"profile": {"name": "w"}})
        assert not hasattr(plain, "checkpoint") and not hasattr(plain, "fork")

    asyncio.run(scenario())
