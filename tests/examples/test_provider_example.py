"""The example subprocess provider passes every kit for what it declares, and does what
its docstrings say: argv only, a replacement environment, refusals before any effect,
cancellation, failure and replay."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest
from subprocess_provider import CAPABILITIES, SubprocessAgentProvider

from agent_interface import (
    AgentEnvironmentEvent,
    AgentTurnInput,
    ContractError,
    CreateAgentEnvironmentInput,
    envelope_of,
)
from agent_interface.conformance import (
    PROVIDER_CHECKS,
    SESSION_REPLAY_CHECKS,
    run_provider_conformance,
    run_provider_conformance_async,
    run_session_replay_conformance,
    run_session_replay_conformance_async,
)
from agent_interface.provider.capability_builder import required_members

WATCHDOG = 60.0


def _create(key: str | None = None, **fields: Any) -> CreateAgentEnvironmentInput:
    wire: dict[str, Any] = {"profile": {"name": "example"}, **fields}
    if key is not None:
        wire["idempotencyKey"] = key
    return CreateAgentEnvironmentInput.parse_wire(wire)


async def _drain(stream: Any) -> list[AgentEnvironmentEvent]:
    return [event async for event in stream]


def test_provider_kit_sync() -> None:
    report = run_provider_conformance(SubprocessAgentProvider())
    report.raise_for_failures()
    assert report.ok
    assert {check.name for check in report.checks} >= set(PROVIDER_CHECKS) - {"branching.durable"}
    passed = {check.name for check in report.checks if check.status == "passed"}
    assert {"stream.usage", "dispatch.session_id", "session.handle", "workspace.read", "destroy"} <= passed
    # what it states twice agrees, on the streamed turn and on the dispatched one
    stated_twice = ("session_identity", "times", "result_verdict", "result_session", "result_usage", "result_events")
    assert {f"{prefix}.{name}" for prefix in ("stream", "session") for name in stated_twice} <= passed


async def test_provider_kit_async() -> None:
    report = await asyncio.wait_for(run_provider_conformance_async(SubprocessAgentProvider()), WATCHDOG)
    report.raise_for_failures()


def test_session_replay_kit() -> None:
    report = run_session_replay_conformance(SubprocessAgentProvider())
    report.raise_for_failures()
    # one usage report per turn: no cumulative total to hold to the one before it
    assert report.names("not_applicable") == ("replay.usage_cumulative",)
    assert report.names("passed") == tuple(name for name in SESSION_REPLAY_CHECKS if name != "replay.usage_cumulative")


async def test_session_replay_kit_async() -> None:
    report = await run_session_replay_conformance_async(SubprocessAgentProvider())
    report.raise_for_failures()


def test_declared_surface_is_the_implemented_surface() -> None:
    assert required_members(CAPABILITIES, "environment") == ("dispatch", "session", "read", "write")
    assert CAPABILITIES.exact_process is None and CAPABILITIES.retained_control is None


async def test_the_agent_runs_with_argv_only_and_a_replacement_environment(tmp_path: Path) -> None:
    script = tmp_path / "env_agent.py"
    script.write_text(
        "import json, os, sys\n"
        "print(json.dumps({'kind': 'text', 'text': ' '.join(sorted(os.environ)) + '|' + sys.argv[1]}))\n",
        encoding="utf-8",
    )
    provider = SubprocessAgentProvider(agent=[sys.executable, str(script)], root=tmp_path / "envs")
    environment = await provider.create(_create(env={"GREETING": "hi"}))
    try:
        prompt = "$(touch pwned); `id` > x; echo *"
        events = await asyncio.wait_for(_drain(environment.stream(AgentTurnInput(prompt=prompt))), WATCHDOG)
        names, argv = events[-2].data["part"]["text"].split("|", 1)
        assert argv == prompt  # one argv element, never read by a shell
        assert set(names.split()) <= {"GREETING", "PYTHONIOENCODING", "PYTHONDONTWRITEBYTECODE", "LC_CTYPE"}
        assert "GREETING" in names.split() and "HOME" not in names.split()
        assert not list((tmp_path / "envs").rglob("pwned"))
    finally:
        await environment.destroy()


@pytest.mark.parametrize(
    ("fields", "path"),
    [
        ({"env": {"LD_PRELOAD": "/tmp/x.so"}}, "/env"),
        ({"profile": "catalog-profile"}, "/profile"),
        ({"profile": {"name": "p", "prompt": {"systemPrompt": "replace it"}}}, "/profile/prompt/systemPrompt"),
        ({"workspace": {"cwd": {"base": "host", "path": "/tmp"}}}, "/workspace/cwd/base"),
        ({"secrets": ["TOKEN"]}, "/secrets"),
    ],
)
async def test_create_refuses_what_it_cannot_honour_before_any_effect(
    tmp_path: Path, fields: dict[str, Any], path: str
) -> None:
    provider = SubprocessAgentProvider(root=tmp_path)
    with pytest.raises(ContractError) as caught:
        await provider.create(_create("key-1", **fields))
    assert path in {issue.path for issue in caught.value.issues}
    assert await provider.list() == [] and list(tmp_path.iterdir()) == []
    created = await provider.create(_create("key-1"))  # the refused attempt bound nothing
    assert created.creation == "created"
    await created.destroy()


async def test_a_repository_cwd_is_where_the_agent_runs(tmp_path: Path) -> None:
    script = tmp_path / "cwd_agent.py"
    script.write_text("import json, os\nprint(json.dumps({'kind': 'text', 'text': os.getcwd()}))\n", encoding="utf-8")
    provider = SubprocessAgentProvider(agent=[sys.executable, str(script)], root=tmp_path / "envs")
    environment = await provider.create(_create(workspace={"cwd": {"base": "repository", "path": "src/app"}}))
    events = await asyncio.wait_for(_drain(environment.stream(AgentTurnInput(prompt="where"))), WATCHDOG)
    assert events[-2].data["part"]["text"].endswith("/src/app")
    await environment.destroy()


async def test_a_failing_agent_fails_the_turn_with_a_terminal_status() -> None:
    environment = await SubprocessAgentProvider().create(_create())
    events = await asyncio.wait_for(_drain(environment.stream(AgentTurnInput(prompt="fail"))), WATCHDOG)
    assert [event.data.get("status") for event in (events[0], events[-1])] == ["started", "failed"]
    result = await environment.session(events[-1].data["runId"].rsplit("-run-", 1)[0]).result()
    assert (result.success, result.error) == (False, "the agent exited with status 3")
    await environment.destroy()


async def test_unreadable_agent_output_fails_the_turn(tmp_path: Path) -> None:
    script = tmp_path / "bad_agent.py"
    script.write_text("print('not json')\n", encoding="utf-8")
    environment = await SubprocessAgentProvider(agent=[sys.executable, str(script)], root=tmp_path).create(_create())
    events = await asyncio.wait_for(_drain(environment.stream(AgentTurnInput(prompt="x"))), WATCHDOG)
    assert events[-1].data["status"] == "failed"
    await environment.destroy()


async def test_a_turn_over_its_timeout_fails(tmp_path: Path) -> None:
    environment = await SubprocessAgentProvider().create(_create())
    turn = AgentTurnInput(prompt="slow turn here", timeout_ms=200, provider_options={"delayMs": 2000})
    events = await asyncio.wait_for(_drain(environment.stream(turn)), WATCHDOG)
    assert (events[-1].data["status"], events[-1].data["detail"]) == ("failed", "the turn timed out")
    await environment.destroy()


async def test_cancel_ends_a_detached_turn_cancelled_and_replay_serves_it() -> None:
    environment = await SubprocessAgentProvider().create(_create())
    reference = await environment.dispatch(
        AgentTurnInput(prompt="one two three four five six", provider_options={"delayMs": 500})
    )
    session = environment.session(reference.id)
    first = None
    async for event in session.events():
        first = event
        break
    assert first is not None and first.data["status"] == "started"
    await asyncio.wait_for(session.cancel(), WATCHDOG)
    assert await session.status() == "cancelled"
    result = await session.result()
    assert (result.success, result.error) == (False, "the turn was cancelled")
    replay = await _drain(session.events(since=first.id))
    assert replay[-1].data["status"] == "cancelled"
    assert [envelope_of(event).sequence for event in [first, *replay]] == list(range(1, len(replay) + 2))
    await environment.destroy()


async def test_a_session_continues_and_its_cursors_never_repeat() -> None:
    environment = await SubprocessAgentProvider().create(_create())
    reference = await environment.dispatch(AgentTurnInput(prompt="first"))
    session = environment.session(reference.id)
    await session.result()
    second = await session.prompt(AgentTurnInput(prompt="second"))
    assert second.success and second.text == "echo: second" and second.usage is not None
    events = await _drain(session.events())
    ids = [event.id for event in events]
    assert len(set(ids)) == len(ids) == len(events)
    assert {envelope_of(event).run_id for event in events} == {f"{reference.id}-run-1", f"{reference.id}-run-2"}
    with pytest.raises(ContractError) as caught:
        await _drain(session.events(since="no-such-cursor"))
    assert caught.value.issues[0].code == "unknown_cursor"
    await environment.destroy()


async def test_a_running_session_refuses_a_second_turn() -> None:
    environment = await SubprocessAgentProvider().create(_create())
    reference = await environment.dispatch(AgentTurnInput(prompt="a b c", provider_options={"delayMs": 300}))
    with pytest.raises(ContractError) as caught:
        await environment.dispatch(AgentTurnInput(prompt="again", session_id=reference.id))
    assert caught.value.issues[0].code == "session_busy"
    await environment.destroy()


@pytest.mark.parametrize("path", ["../outside.txt", "/etc/passwd", ".", "a/../../b"])
async def test_workspace_paths_stay_inside(path: str) -> None:
    environment = await SubprocessAgentProvider().create(_create())
    with pytest.raises(ContractError):
        await environment.write(path, "x")
    with pytest.raises(ContractError):
        await environment.read(path)
    await environment.destroy()


async def test_turn_fields_it_does_not_declare_are_refused_before_dispatch() -> None:
    environment = await SubprocessAgentProvider().create(_create())
    for turn in (
        {"prompt": "x", "interactions": {}},
        {"prompt": "x", "profile": {"name": "per-turn"}},
        {},
    ):
        with pytest.raises(ContractError):
            environment.stream(turn)
    await environment.destroy()


async def test_an_agent_that_cannot_start_fails_the_turn(tmp_path: Path) -> None:
    provider = SubprocessAgentProvider(agent=[str(tmp_path / "no-such-agent")], root=tmp_path / "envs")
    environment = await provider.create(_create())
    events = await asyncio.wait_for(_drain(environment.stream(AgentTurnInput(prompt="x"))), WATCHDOG)
    assert (events[-1].data["status"], events[-1].data["detail"]) == ("failed", "the agent could not be started")
    await environment.destroy()


async def test_cancel_kills_what_the_agent_started(tmp_path: Path) -> None:
    script = tmp_path / "parent_agent.py"
    script.write_text(
        "import json, subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        "print(json.dumps({'kind': 'text', 'text': str(child.pid)}), flush=True)\n"
        "time.sleep(60)\n",
        encoding="utf-8",
    )
    provider = SubprocessAgentProvider(agent=[sys.executable, str(script)], root=tmp_path / "envs")
    environment = await provider.create(_create())
    reference = await environment.dispatch(AgentTurnInput(prompt="spawn"))
    session = environment.session(reference.id)
    child = None
    async for event in session.events():
        if event.type == "message.part.updated":
            child = int(event.data["part"]["text"])
            break
    assert child is not None
    await asyncio.wait_for(session.cancel(), WATCHDOG)
    for _ in range(100):  # the group was sent SIGKILL; give the kernel a moment to reap
        if not Path(f"/proc/{child}").exists() or "Z" in _state_of(child):
            break
        await asyncio.sleep(0.05)
    assert not Path(f"/proc/{child}").exists() or "Z" in _state_of(child)
    assert (await session.result()).error == "the turn was cancelled"
    await environment.destroy()


def _state_of(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "Z"
