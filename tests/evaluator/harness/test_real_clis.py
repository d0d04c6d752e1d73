"""Each real harness CLI, on the host, in a fresh Git repository and a fresh ``$HOME``,
inside a loopback-only network namespace, against a scripted model server: it edits a file
through its own tools, a profile change is visible in what the server received, its
self-reported usage equals the server's count, and a refused call (HTTP 400) ends the run
promptly with the right record. Skipped when the pinned CLIs are not installed (see
``AGENT_INTERFACE_HARNESS_CLIS``)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agent_interface.evaluator.harness.adapters import adapter_for
from agent_interface.evaluator.harness.native_files import restore_workspace

from .cli_runner import TOKEN, CliRun, run_cli
from .scripted_server import Step

HARNESSES = ("claude-code", "codex", "opencode")
API_PATH = {"claude-code": "/v1/messages", "codex": "/v1/responses", "opencode": "/v1/chat/completions"}


def _write_step(harness: str, workspace: Path) -> Step:
    if harness == "claude-code":
        return Step("tool", tool="Write", arguments={"file_path": str(workspace / "hello.txt"), "content": "hello\n"})
    if harness == "codex":
        return Step("tool", tool="exec_command", arguments={"cmd": "printf 'hello\\n' > hello.txt"})
    return Step("tool", tool="write", arguments={"filePath": str(workspace / "hello.txt"), "content": "hello\n"})


def _body_text(run: CliRun, index: int = 0) -> str:
    return json.dumps(run.server.requests[index].body)


def _assert_offline(run: CliRun) -> None:
    assert run.namespace, "the loopback-only network namespace could not be entered"
    assert run.outside_connects == []
    assert all(request.attributed for request in run.server.requests)


@pytest.mark.parametrize("harness", HARNESSES)
def test_harness_edits_a_file_through_its_own_tools(harness: str, tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    profile = {"prompt": {"instructions": ["PROFILE-LINE-7f3a: keep answers short."]}}
    own = "CLAUDE.md" if harness == "claude-code" else "AGENTS.md"
    run = run_cli(harness, tmp_path, [_write_step(harness, workspace), Step("text", text="done")],
                  profile=profile, trace=True, repo_files={own: "REPO-OWN-LINE-2d9c: the task's own rules.\n"})
    assert run.exit_code == 0, run.stderr[-2000:]
    assert (workspace / "hello.txt").read_text() == "hello\n"
    assert run.outcome.status == "completed" and run.outcome.error is None
    assert run.outcome.final_text == "done"
    assert [request.status for request in run.server.requests] == [200, 200]
    assert all(request.path.endswith(API_PATH[harness]) for request in run.server.requests)
    assert "PROFILE-LINE-7f3a" in _body_text(run)
    assert "REPO-OWN-LINE-2d9c" in _body_text(run)  # the task repository's own instructions stay in force
    offered = {tool.get("name") or tool.get("function", {}).get("name") for tool in run.server.requests[0].body["tools"]}
    assert not offered & {"web_search", "webfetch", "WebFetch", "WebSearch"}  # no tool that reaches out
    usage = run.outcome.usage
    assert usage is not None
    assert (usage.input_tokens, usage.output_tokens) == (run.server.sent_input, run.server.sent_output)
    _assert_offline(run)
    for native in run.launch.files:
        assert TOKEN.encode() not in native.content
    restore_workspace(run.written)
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=workspace,
                            capture_output=True, text=True, check=True).stdout.splitlines()
    assert status == ["?? hello.txt"]


_PROFILES: dict[str, tuple[dict[str, Any], dict[str, Any], str]] = {
    # (profile A, profile B, text that only A's system prompt change removes or adds)
    "claude-code": ({"prompt": {"appendSystemPrompt": "SYSTEM-MARK-A1"}},
                    {"prompt": {"appendSystemPrompt": "SYSTEM-MARK-B2"}}, "system"),
    "codex": ({"prompt": {"systemPrompt": "SYSTEM-MARK-A1: you are a terse coding agent."}},
              {"prompt": {"instructions": ["SYSTEM-MARK-B2"]}}, "input"),
    "opencode": ({"prompt": {"appendSystemPrompt": "SYSTEM-MARK-A1"}},
                 {"prompt": {"appendSystemPrompt": "SYSTEM-MARK-B2"}}, "messages"),
}


@pytest.mark.parametrize("harness", HARNESSES)
def test_a_profile_change_is_visible_in_what_the_server_received(harness: str, tmp_path: Path) -> None:
    first, second, where = _PROFILES[harness]
    run_a = run_cli(harness, tmp_path / "a", [Step("text", text="ok")], profile=first, instruction="Say ok.")
    run_b = run_cli(harness, tmp_path / "b", [Step("text", text="ok")], profile=second, instruction="Say ok.")
    for run in (run_a, run_b):
        assert run.exit_code == 0 and run.outcome.status == "completed", run.stderr[-2000:]
        _assert_offline(run)
    seen_a = json.dumps(run_a.server.requests[0].body[where])
    seen_b = json.dumps(run_b.server.requests[0].body[where])
    assert "SYSTEM-MARK-A1" in seen_a and "SYSTEM-MARK-A1" not in seen_b
    assert "SYSTEM-MARK-B2" in seen_b and "SYSTEM-MARK-B2" not in seen_a
    if harness == "codex":  # systemPrompt replaces Codex's own prompt: its opening is gone
        assert "You are a coding agent running in the Codex CLI" not in seen_a
        assert "You are a coding agent running in the Codex CLI" in seen_b


@pytest.mark.parametrize("harness", HARNESSES)
def test_a_refused_call_ends_the_run_promptly_with_the_right_record(harness: str, tmp_path: Path) -> None:
    adapter = adapter_for(harness)
    run = run_cli(harness, tmp_path, [], instruction="Create hello.txt.", timeout=150)
    assert run.exit_code > 0  # exited by itself, not killed by the time limit
    assert run.outcome.status == "error"
    assert run.seconds < 90  # it ended by itself, long before the time limit (150 s)
    statuses = [request.status for request in run.server.requests]
    assert statuses and set(statuses) == {adapter.refusal.refusal_status}
    assert len(statuses) <= adapter.refusal.requests_per_refusal
    if harness == "codex":
        assert run.outcome.error == "turn_failed"
    else:
        assert run.outcome.api_error_status == 400
    assert run.server.sent_input == 0
    _assert_offline(run)


@pytest.mark.parametrize("harness", HARNESSES)
def test_the_cli_reaches_the_gateway_by_name_through_an_http_proxy(harness: str, tmp_path: Path) -> None:
    # A container on the strict-egress route knows the gateway only as model-gateway.internal,
    # reached through the proxy named by HTTP_PROXY: each CLI sends absolute-form requests there.
    workspace = tmp_path / "workspace"
    run = run_cli(harness, tmp_path, [_write_step(harness, workspace), Step("text", text="done")],
                  through_proxy=True)
    assert run.exit_code == 0, run.stderr[-2000:]
    assert (workspace / "hello.txt").read_text() == "hello\n"
    assert [request.headers.get("Host") for request in run.server.requests] == ["model-gateway.internal"] * 2
    _assert_offline(run)


@pytest.mark.parametrize("harness", HARNESSES)
def test_a_profile_skill_is_offered_to_the_model(harness: str, tmp_path: Path) -> None:
    skill = "---\nname: diff-review\ndescription: SKILL-MARK-5c1e reviews a diff\n---\n\nRead the diff.\n"
    profile = {"resources": {"skills": [{"kind": "inline", "name": "diff-review", "content": skill}]}}
    run = run_cli(harness, tmp_path, [Step("text", text="ok")], profile=profile, instruction="Say ok.")
    assert run.exit_code == 0 and run.outcome.status == "completed", run.stderr[-2000:]
    assert "SKILL-MARK-5c1e" in _body_text(run)
    _assert_offline(run)


def test_a_claude_code_hook_from_the_profile_runs(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    profile = {"hooks": {"PostToolUse": [{"command": "touch post-tool-hook-ran", "matcher": "Write"}]}}
    run = run_cli("claude-code", tmp_path, [_write_step("claude-code", workspace), Step("text", text="done")],
                  profile=profile)
    assert run.exit_code == 0, run.stderr[-2000:]
    assert (workspace / "post-tool-hook-ran").exists()


@pytest.mark.parametrize("harness", ["claude-code", "opencode"])
def test_profile_agents_are_offered_to_the_model(harness: str, tmp_path: Path) -> None:
    profile = {
        "resources": {"agents": [{"kind": "inline", "name": "critic",
                                  "content": "---\ndescription: AGENT-MARK-1a critiques a diff\n---\n\nBe critical.\n"}]},
        "subagents": {"tester": {"description": "AGENT-MARK-2b runs the tests", "prompt": "Run the tests."}},
    }
    run = run_cli(harness, tmp_path, [Step("text", text="ok")], profile=profile, instruction="Say ok.")
    assert run.exit_code == 0 and run.outcome.status == "completed", run.stderr[-2000:]
    body = _body_text(run)
    assert "AGENT-MARK-1a" in body and "AGENT-MARK-2b" in body
    _assert_offline(run)


def test_claude_code_sends_the_profile_output_ceiling_as_max_tokens(tmp_path: Path) -> None:
    run = run_cli("claude-code", tmp_path, [Step("text", text="ok")],
                  profile={"model": {"maxTotalOutputTokens": 1234}}, instruction="Say ok.")
    assert run.exit_code == 0 and run.outcome.status == "completed", run.stderr[-2000:]
    assert [request.body["max_tokens"] for request in run.server.requests] == [1234]


def test_opencode_retries_a_429_until_its_time_limit(tmp_path: Path) -> None:
    # Why the gateway refuses opencode with a 400: a 429 keeps it calling until it is killed.
    assert adapter_for("opencode").refusal.retries_429_forever
    run = run_cli("opencode", tmp_path, [Step("refuse", status=429)] * 100, instruction="Say ok.", timeout=25)
    assert run.exit_code < 0  # killed by the time limit, not ended by itself
    assert len(run.server.requests) >= 2 and {request.status for request in run.server.requests} == {429}
