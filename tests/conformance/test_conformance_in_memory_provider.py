"""Behaviour of agent_interface.testing.InMemoryAgentEnvironmentProvider: it honors what it
declares and refuses what it does not, before any effect."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from agent_interface.core.canonical import sha256_utf8
from agent_interface.core.errors import ContractError
from agent_interface.durable.checkpoint import WorkspaceCheckpointRequest
from agent_interface.durable.fork import WorkspaceForkRequest
from agent_interface.provider.protocols import check_capability_surface
from agent_interface.testing.provider import (
    InMemoryAgentEnvironmentProvider,
    in_memory_capabilities,
)

T = TypeVar("T")


def run(body: Callable[[], Awaitable[T]]) -> T:
    return asyncio.run(body())  # type: ignore[arg-type]


PROFILE = {
    "name": "worker",
    "resources": {"files": [{"path": "docs/readme.txt", "resource": {"kind": "inline", "name": "r", "content": "hello\n"}}]},
}


def codes(error: pytest.ExceptionInfo[ContractError]) -> list[tuple[str, str]]:
    return [(issue.path, issue.code) for issue in error.value.issues]


def test_create_mounts_inline_files_and_keeps_a_metadata_snapshot() -> None:
    async def body() -> None:
        provider = InMemoryAgentEnvironmentProvider()
        metadata: dict[str, Any] = {"owner": "me", "tags": ["a"]}
        environment = await provider.create(
            {"profile": PROFILE, "metadata": metadata, "workspace": {"cwd": {"base": "repository", "path": "./docs/"}}, "name": "w"}
        )
        metadata["tags"].append("b")
        assert environment.metadata == {"owner": "me", "tags": ("a",)}
        with pytest.raises(TypeError):
            environment.metadata["owner"] = "x"
        assert environment.creation == "created"
        assert await environment.read("docs/readme.txt") == "hello\n"
        assert (await environment.exec("pwd")).stdout == "docs\n"
        assert (await environment.exec("cat readme.txt")).stdout == "hello\n"
        fetched = await provider.get(environment.id)
        assert fetched is not None and fetched.creation is None and fetched.metadata == environment.metadata
        listed = await provider.list({"metadata": {"owner": "me"}})
        assert [s.id for s in listed] == [environment.id]
        assert await provider.list({"metadata": {"owner": "you"}}) == []
        assert check_capability_surface(environment, await provider.capabilities()) == ()

    run(body)


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"profile": "catalog-id"}, ("/profile", "named_profile_unsupported")),
        ({"profile": {"prompt": {"systemPrompt": "Replace."}}}, ("/profile/prompt/systemPrompt", "system_prompt_replace_unsupported")),
        ({"profile": {"prompt": {"appendSystemPrompt": "Add."}}}, ("/profile/prompt/appendSystemPrompt", "system_prompt_append_unsupported")),
        ({"profile": {"tools": {"bash": True}}}, ("/profile/tools", "profile_tools_unsupported")),
        ({"profile": {"resources": {"files": [{"path": "x", "resource": {"kind": "github", "path": "x"}}]}}}, ("/profile/resources/files/0/resource", "resource_unresolvable")),
        ({"workspace": {"cwd": {"base": "host", "path": "/tmp"}}}, ("/workspace/cwd/base", "cwd_base_unsupported")),
        ({"workspace": {"repoUrl": "https://x/y.git"}}, ("/workspace/repoUrl", "workspace_source_unsupported")),
        ({"backend": "codex"}, ("/backend", "backend_unsupported")),
        ({"secrets": ["TOKEN"]}, ("/secrets", "secrets_unsupported")),
        ({"metadata": {"x": float("inf")}}, ("/metadata", "bounded_json")),
    ],
)
def test_refusals_happen_before_any_effect(change: dict[str, Any], expected: tuple[str, str]) -> None:
    async def body() -> None:
        provider = InMemoryAgentEnvironmentProvider()
        with pytest.raises(ContractError) as caught:
            await provider.create({"profile": {"name": "w"}, "idempotencyKey": "k", **change})
        assert expected in codes(caught)
        assert provider.create_effects == 0
        assert await provider.list() == []
        fresh = await provider.create({"profile": {"name": "w"}, "idempotencyKey": "k"})
        assert fresh.creation == "created"  # the refused attempt did not bind the key

    run(body)


def test_idempotent_create_concurrency_and_requested_id() -> None:
    async def body() -> None:
        provider = InMemoryAgentEnvironmentProvider()
        document = {"profile": {"name": "w"}, "requestedId": "env-fixed", "idempotencyKey": "k1", "metadata": {"a": 1}}
        results = await asyncio.gather(*(provider.create(dict(document)) for _ in range(8)))
        assert provider.create_effects == 1
        assert {r.id for r in results} == {"env-fixed"}
        assert sorted(str(r.creation) for r in results) == ["created"] + ["replayed"] * 7
        with pytest.raises(ContractError) as caught:
            await provider.create({**document, "metadata": {"a": 2}})
        assert codes(caught) == [("/idempotencyKey", "idempotency_conflict")]
        with pytest.raises(ContractError) as caught:
            await provider.create({**document, "idempotencyKey": "k2"})
        assert codes(caught) == [("/requestedId", "requested_id_taken")]
        assert provider.create_effects == 1

    run(body)


def test_stream_dispatch_sessions_and_replay() -> None:
    async def body() -> None:
        provider = InMemoryAgentEnvironmentProvider()
        environment = await provider.create({"profile": PROFILE})
        events = [event.to_wire() async for event in environment.stream({"prompt": "cat docs/readme.txt"})]
        assert [e["type"] for e in events] == ["message.part.updated", "result"]
        assert events[1]["data"]["status"] == "completed"

        ref = await environment.dispatch({"prompt": "echo detached"})
        session = environment.session(ref.id)
        result = await session.result()
        assert result.success and result.text == "detached\n" and result.session_id == ref.id
        all_events = [event async for event in session.events()]
        assert [e.id for e in all_events] == [f"{ref.id}:1", f"{ref.id}:2"]
        later = [event async for event in session.events(since=f"{ref.id}:1")]
        assert [e.id for e in later] == [f"{ref.id}:2"]
        with pytest.raises(ContractError):
            [event async for event in session.events(since="nope")]

        continued = await session.prompt({"prompt": "exit 3"})
        assert not continued.success and continued.session_id == ref.id
        assert await session.status() == "failed"
        assert await environment.session("missing").status() is None

        with pytest.raises(ContractError) as caught:
            environment.stream({"prompt": "echo x", "profile": {"name": "p"}})
        assert codes(caught) == [("/profile", "turn_profile_unsupported")]
        with pytest.raises(ContractError) as caught:
            environment.stream({"prompt": "echo x", "interactions": {}})
        assert codes(caught) == [("/interactions", "turn_field_unsupported")]
        sessions_before = set(environment.record.sessions)
        with pytest.raises(ContractError) as caught:
            environment.stream({"providerOptions": {"command": ""}})
        assert codes(caught) == [("", "command_turn_missing")]
        assert set(environment.record.sessions) == sessions_before
        named = [event async for event in environment.stream({"prompt": "echo named", "sessionId": "caller-named"})]
        assert named[-1].id == "caller-named:2"  # a new sessionId opens a session under that id
        assert (await environment.session("caller-named").result()).text == "named\n"
        busy = await environment.dispatch({"prompt": "echo busy", "sessionId": "caller-named"})
        with pytest.raises(ContractError) as caught:
            environment.stream({"prompt": "echo x", "sessionId": busy.id})
        assert codes(caught) == [("/sessionId", "session_busy")]
        await environment.session(busy.id).result()

    run(body)


def test_workspace_paths_stay_inside() -> None:
    async def body() -> None:
        provider = InMemoryAgentEnvironmentProvider()
        environment = await provider.create({"profile": {"name": "w"}})
        await environment.write("a/b.txt", "x")
        assert (await environment.exec("ls a")).stdout == "b.txt\n"
        for path in ("../etc/passwd", "/etc/passwd", "a\\b"):
            with pytest.raises(ContractError):
                await environment.read(path)
            with pytest.raises(ContractError):
                await environment.write(path, "x")
        assert (await environment.exec("cat ../x")).exit_code == 1
        assert (await environment.exec("rm -rf /")).exit_code == 127
        assert (await environment.placement()).kind == "local"
        await environment.destroy()
        assert await provider.get(environment.id) is None
        with pytest.raises(ContractError):
            environment.stream({"prompt": "echo x"})

    run(body)


def test_durable_branching_forks_hold_the_checkpointed_files() -> None:
    async def body() -> None:
        provider = InMemoryAgentEnvironmentProvider()
        environment = await provider.create({"profile": PROFILE})
        source = {
            "runId": "run-1",
            "provider": provider.name,
            "environmentId": environment.id,
            "sessionId": "s",
            "executionId": "x",
            "requestDigest": sha256_utf8("run-1"),
        }
        checkpoint = WorkspaceCheckpointRequest.seal(
            {"source": source, "metadata": {"why": "test"}}, idempotency_key="cp-1"
        )
        made = await environment.workspace_branching.checkpoint(checkpoint)
        assert made.status == "created"
        await environment.write("docs/readme.txt", "changed after the checkpoint\n")
        fork = WorkspaceForkRequest.seal(
            {"checkpoint": made.checkpoint.to_wire(), "placement": {"kind": "local"}, "metadata": {"why": "test"}},
            idempotency_key="fork-1",
        )
        forked = await environment.workspace_branching.fork(fork)
        assert forked.status == "created"
        child = await provider.get(forked.environment.environment_id)
        assert child is not None
        assert await child.read("docs/readme.txt") == "hello\n"
        replay = await environment.workspace_branching.fork(fork)
        assert replay.status == "replayed"

    run(body)


def test_cancel_a_detached_turn() -> None:
    async def body() -> None:
        provider = InMemoryAgentEnvironmentProvider()
        environment = await provider.create({"profile": {"name": "w"}})
        ref = await environment.dispatch({"prompt": "echo never"})
        session = environment.session(ref.id)
        await session.cancel()
        with pytest.raises(ContractError) as caught:
            await session.result()
        assert codes(caught) == [("", "turn_cancelled")]
        assert await session.status() == "cancelled"
        events = [event.to_wire() async for event in session.events()]  # the end of the turn, and how it ended
        assert [(event["type"], event["data"]["status"]) for event in events] == [("status", "cancelled")]
        with pytest.raises(ContractError):
            await environment.session("missing").cancel()

    run(body)


def test_the_published_example_is_the_in_memory_document() -> None:
    example = Path(__file__).resolve().parents[2] / "examples" / "environment" / "capabilities-in-memory-provider.json"
    assert json.loads(example.read_text()) == in_memory_capabilities().to_wire()
