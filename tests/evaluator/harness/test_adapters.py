"""The adapters' lowering of a profile, one accepted and one refused example per rule, and
their parsers of each harness's own output (no CLI needed)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent_interface.core.errors import ContractError
from agent_interface.evaluator.harness.adapter import GatewayAccess, HarnessLaunch
from agent_interface.evaluator.harness.adapters import SUPPORTED_HARNESSES, adapter_for
from agent_interface.profile.agent_profile import AgentProfile

TOKEN = "tok-secret-0123456789"
ACCESS = GatewayAccess("http://127.0.0.1:9", TOKEN, "m1")
PUBLIC = {"kind": "public", "value": "v"}


def _plan(harness: str, profile: dict[str, Any]) -> HarnessLaunch:
    return adapter_for(harness).plan(AgentProfile.parse_wire(profile), binary="/opt/cli", access=ACCESS,
                                     instruction="-do it", workspace="/ws", home="/home/agent")


def _refusal(harness: str, profile: dict[str, Any]) -> dict[str, str]:
    with pytest.raises(ContractError) as caught:
        _plan(harness, profile)
    assert harness in str(caught.value)
    return {issue.path: issue.code for issue in caught.value.issues}


def _file(launch: HarnessLaunch, path: str) -> str:
    return next(file.content.decode() for file in launch.files if file.path == path)


@pytest.mark.parametrize("harness", SUPPORTED_HARNESSES)
def test_an_empty_profile_gives_the_offline_launch(harness: str) -> None:
    launch = _plan(harness, {})
    assert launch.argv[0] == "/opt/cli" and launch.argv[-2:] == ("--", "-do it")
    assert all(TOKEN.encode() not in file.content for file in launch.files)
    assert TOKEN in launch.env.values()
    assert TOKEN not in repr(launch) and TOKEN not in repr(ACCESS)
    assert all(TOKEN not in setting.value for setting in launch.settings)
    assert set(launch.env) <= {
        "HOME", "PATH", "SHELL", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_SMALL_FAST_MODEL", "IS_SANDBOX",
        "DISABLE_TELEMETRY", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "DISABLE_AUTOUPDATER",
        "DISABLE_ERROR_REPORTING", "CODEX_HOME", "TANGLE_GATEWAY_API_KEY", "TANGLE_GATEWAY_BASE_URL",
        "OPENCODE_DISABLE_AUTOUPDATE", "OPENCODE_DISABLE_MODELS_FETCH", "OPENCODE_DISABLE_LSP_DOWNLOAD",
        "OPENCODE_DISABLE_SHARE", "OPENCODE_DISABLE_DEFAULT_PLUGINS"}
    assert any(setting.target.startswith("env:") for setting in launch.settings)


def test_claude_code_native_files_and_flags() -> None:
    launch = _plan("claude-code", {
        "name": "p",
        "prompt": {"systemPrompt": "S", "appendSystemPrompt": "A", "instructions": ["Use pytest."]},
        "model": {"default": "m1", "reasoningEffort": "high"},
        "tools": {"WebFetch": False},
        "permissions": {"Bash": {"git push": "deny", "pytest": "allow"}},
        "mcp": {"docs": {"command": "docs-mcp", "args": [PUBLIC]}, "old": {"enabled": False}},
        "resources": {"skills": [{"kind": "inline", "name": "review", "content": "Review it."}],
                      "files": [{"path": "tools/run", "resource": {"kind": "inline", "name": "r", "content": "x"},
                                 "executable": True}]},
        "subagents": {"critic": {"description": "Critiques", "prompt": "Be critical."}},
    })
    argv = launch.argv
    assert argv[argv.index("--system-prompt") + 1] == "S"
    assert argv[argv.index("--append-system-prompt") + 1] == "A"
    assert argv[argv.index("--effort") + 1] == "high"
    assert argv[argv.index("--mcp-config") + 1] == "/ws/.mcp.json"
    assert _file(launch, ".claude/CLAUDE.md") == "Use pytest.\n"
    settings = json.loads(_file(launch, ".claude/settings.json"))
    assert settings["permissions"] == {"allow": ["Bash(pytest)"],
                                       "deny": ["WebFetch", "Bash(git push)", "WebSearch"]}
    assert json.loads(_file(launch, ".mcp.json"))["mcpServers"] == {
        "docs": {"type": "stdio", "command": "docs-mcp", "args": ["v"], "env": {}}}
    assert _file(launch, ".claude/skills/review/SKILL.md").startswith("---\nname: review\n")
    assert "Be critical." in _file(launch, ".claude/agents/critic.md")
    assert next(f for f in launch.files if f.path == "tools/run").mode == 0o755
    assert [r.pointer for r in launch.reported] == ["/name"]
    assert set(launch.workspace_paths()) >= {".claude/settings.json", ".mcp.json", "tools/run"}
    assert "--setting-sources" in launch.argv and "user,project" in launch.argv
    assert any(s.pointer == "/mcp/old" and "disabled" in s.value for s in launch.settings)


def test_codex_config_points_at_the_gateway_with_every_other_feature_off() -> None:
    launch = _plan("codex", {"prompt": {"systemPrompt": "S", "instructions": ["Use pytest."]},
                             "model": {"reasoningEffort": "low"},
                             "mcp": {"docs": {"command": "docs-mcp", "cwd": "tools"}}})
    config = _file(launch, ".codex/config.toml")
    for line in ('model = "m1"', 'model_provider = "tangle-gateway"', 'approval_policy = "never"',
                 "check_for_update_on_startup = false", 'base_url = "http://127.0.0.1:9/v1"',
                 'wire_api = "responses"', "request_max_retries = 0", "stream_max_retries = 0",
                 "plugins = false", "remote_plugin = false", "apps = false", 'model_reasoning_effort = "low"',
                 'model_instructions_file = "/home/agent/.codex/model-instructions.md"',
                 '[mcp_servers."docs"]', 'cwd = "tools"'):
        assert line in config.splitlines(), line
    assert "[analytics]\nenabled = false" in config and "[feedback]\nenabled = false" in config
    assert _file(launch, ".codex/AGENTS.md") == "Use pytest.\n"
    assert _file(launch, ".codex/model-instructions.md") == "S"
    assert launch.env["CODEX_HOME"] == "/home/agent/.codex"
    assert launch.argv[1:4] == ("exec", "--json", "--strict-config")


def test_opencode_config_and_plugin_seed() -> None:
    launch = _plan("opencode", {"prompt": {"appendSystemPrompt": "A"}, "tools": {"webfetch": False},
                                "permissions": {"bash": {"git push": "deny", "*": "allow"}},
                                "mcp": {"docs": {"command": "docs-mcp", "env": {"MODE": PUBLIC}}}})
    config = json.loads(_file(launch, "opencode.json"))
    assert config["autoupdate"] is False and config["share"] == "disabled"
    provider = config["provider"]["tangle-gateway"]
    assert provider["npm"] == "@ai-sdk/openai-compatible"
    assert provider["options"] == {"baseURL": "{env:TANGLE_GATEWAY_BASE_URL}", "apiKey": "{env:TANGLE_GATEWAY_API_KEY}"}
    assert config["permission"]["bash"] == {"git push": "deny", "*": "allow"}
    assert config["tools"] == {"webfetch": False}
    assert config["mcp"]["docs"] == {"type": "local", "enabled": True, "command": ["docs-mcp"],
                                     "environment": {"MODE": "v"}}
    assert config["instructions"] == [".opencode/append-system-prompt.md"]
    homes = {file.path for file in launch.files if file.root == "home"}
    assert ".config/opencode/package-lock.json" in homes
    assert launch.argv[1:5] == ("run", "--pure", "--format", "json")
    assert launch.env["TANGLE_GATEWAY_BASE_URL"] == f"http://127.0.0.1:9/r/{TOKEN}/v1"


@pytest.mark.parametrize(("harness", "profile", "pointer", "code"), [
    ("codex", {"prompt": {"appendSystemPrompt": "A"}}, "/prompt/appendSystemPrompt", "harness_cannot_honor"),
    ("codex", {"tools": {"web": False}}, "/tools", "harness_cannot_honor"),
    ("codex", {"permissions": {"bash": "allow"}}, "/permissions", "harness_cannot_honor"),
    ("codex", {"resources": {"agents": [{"kind": "inline", "name": "s", "content": "x"}]}}, "/resources/agents",
     "harness_cannot_honor"),
    ("opencode", {"resources": {"commands": [{"kind": "inline", "name": "s", "content": "x"}]}},
     "/resources/commands", "harness_cannot_honor"),
    ("opencode", {"prompt": {"systemPrompt": "S"}}, "/prompt/systemPrompt", "harness_cannot_honor"),
    ("opencode", {"subagents": {"a": {"prompt": "x", "maxSteps": 3}}}, "/subagents/a/maxSteps",
     "harness_cannot_honor"),
    ("codex", {"subagents": {"a": {"prompt": "x"}}}, "/subagents", "harness_cannot_honor"),
    ("claude-code", {"hooks": {"BeforeEverything": [{"command": "check"}]}}, "/hooks/BeforeEverything",
     "harness_cannot_honor"),
    ("claude-code", {"hooks": {"Stop": [{"command": "check", "blocking": True}]}}, "/hooks/Stop/0/blocking",
     "harness_cannot_honor"),
    ("codex", {"hooks": {"Stop": [{"command": "check"}]}}, "/hooks", "harness_cannot_honor"),
    ("claude-code", {"modes": {"plan": {"prompt": "x"}}}, "/modes", "harness_cannot_honor"),
    ("claude-code", {"permissions": {"Bash": "ask"}}, "/permissions/Bash", "harness_cannot_honor"),
    ("opencode", {"permissions": {"bash": {"*": "ask"}}}, "/permissions/bash", "harness_cannot_honor"),
    ("claude-code", {"model": {"maxVisibleOutputTokens": 100}}, "/model/maxVisibleOutputTokens",
     "harness_cannot_honor"),
    ("opencode", {"model": {"maxTotalOutputTokens": 100}}, "/model/maxTotalOutputTokens", "harness_cannot_honor"),
    ("claude-code", {"model": {"reasoningEffort": "minimal"}}, "/model/reasoningEffort", "harness_cannot_honor"),
    ("claude-code", {"model": {"default": "other"}}, "/model/default", "model_route_mismatch"),
    ("claude-code", {"harness": "codex"}, "/harness", "profile_harness_mismatch"),
    ("claude-code", {"mcp": {"web": {"url": "https://mcp.example.com/"}}}, "/mcp/web", "remote_mcp_unsupported"),
    ("claude-code", {"mcp": {"m": {"command": "m", "cwd": "x"}}}, "/mcp/m/cwd", "harness_cannot_honor"),
    ("opencode", {"mcp": {"m": {"command": "m", "env": {"API_KEY": {"kind": "secret-ref", "key": "vault-key"}}}}},
     "/mcp/m/env/API_KEY", "profile_secret_unsupported"),
    ("claude-code", {"resources": {"instructions": {"kind": "github", "path": "docs/x.md"}}},
     "/resources/instructions", "profile_resource_not_inline"),
    ("claude-code", {"resources": {"files": [{"path": ".claude/settings.json", "resource": {
        "kind": "inline", "name": "c", "content": "x"}}]}}, "/resources/files/0", "native_path_conflict"),
    ("claude-code", {"resources": {"files": [{"path": "../x", "resource": {
        "kind": "inline", "name": "c", "content": "x"}}]}}, "/resources/files/0/path", "unsafe_relative_path"),
    ("claude-code", {"resources": {"skills": [{"kind": "inline", "name": "../s", "content": "x"}]}},
     "/resources/skills/0/name", "unsafe_resource_name"),
    ("opencode", {"extensions": {"x": {}}}, "/extensions", "harness_cannot_honor"),
    ("codex", {"connections": [{"connectionId": "c", "capabilities": ["read"]}]}, "/connections",
     "harness_cannot_honor"),
])
def test_a_field_the_harness_cannot_honour_is_refused(harness: str, profile: dict[str, Any], pointer: str,
                                                      code: str) -> None:
    assert _refusal(harness, profile).get(pointer) == code


def test_every_refusal_is_raised_together() -> None:
    found = _refusal("codex", {"prompt": {"appendSystemPrompt": "A"}, "tools": {"x": True}, "hooks": {"a": []}})
    assert set(found) == {"/prompt/appendSystemPrompt", "/tools", "/hooks"}


def test_an_unknown_harness_is_refused() -> None:
    with pytest.raises(ContractError) as caught:
        adapter_for("gemini")
    assert caught.value.issues[0].code == "harness_unsupported"


def test_gateway_access_from_the_gateway_launch_env() -> None:
    env = {"ANTHROPIC_BASE_URL": f"http://gw.internal/r/{TOKEN}", "ANTHROPIC_API_KEY": TOKEN,
           "OPENAI_BASE_URL": f"http://gw.internal/r/{TOKEN}/v1", "OPENAI_API_KEY": TOKEN}
    access = GatewayAccess.from_launch_env(env, model="m1")
    assert access.origin == "http://gw.internal" and access.openai_base_url == env["OPENAI_BASE_URL"]
    with pytest.raises(ContractError) as caught:
        GatewayAccess.from_launch_env({**env, "ANTHROPIC_BASE_URL": "http://gw.internal"}, model="m1")
    assert caught.value.issues[0].code == "gateway_env_invalid"
    assert TOKEN not in str(caught.value)


# -- parsers: the exit code is never trusted alone ----------------------------------------------


def test_claude_code_result_parsing() -> None:
    adapter = adapter_for("claude-code")
    ok = json.dumps({"type": "result", "subtype": "success", "is_error": False, "result": "done",
                     "usage": {"input_tokens": 10, "cache_creation_input_tokens": 2, "cache_read_input_tokens": 3,
                               "output_tokens": 4}}).encode()
    outcome = adapter.parse_output(0, ok, b"")
    assert (outcome.status, outcome.final_text) == ("completed", "done")
    assert outcome.usage is not None and (outcome.usage.input_tokens, outcome.usage.cached_input_tokens) == (12, 3)
    refused = json.dumps({"type": "result", "subtype": "success", "is_error": True, "api_error_status": 400,
                          "result": "API Error: 400"}).encode()
    outcome = adapter.parse_output(0, refused, b"")  # exit 0, but the result says error
    assert (outcome.status, outcome.error, outcome.api_error_status) == ("error", "api_error", 400)
    assert adapter.parse_output(0, b"not json", b"").error == "no_result"
    assert adapter.parse_output(1, ok, b"").error == "exit_nonzero"


def test_codex_event_parsing() -> None:
    adapter = adapter_for("codex")
    lines = [{"type": "thread.started"},
             {"type": "item.completed", "item": {"type": "error", "message": "metadata warning"}},
             {"type": "item.completed", "item": {"type": "agent_message", "text": "done"}},
             {"type": "turn.completed", "usage": {"input_tokens": 5, "cached_input_tokens": 1, "output_tokens": 2}}]
    text = "\n".join(json.dumps(line) for line in lines).encode()
    outcome = adapter.parse_output(0, text, b"")
    assert (outcome.status, outcome.final_text) == ("completed", "done")
    assert outcome.usage is not None and outcome.usage.input_tokens == 5
    failed = b'{"type":"turn.started"}\n{"type":"turn.failed","error":{"message":"x"}}\n'
    assert adapter.parse_output(0, failed, b"").error == "turn_failed"
    assert adapter.parse_output(0, b'{"type":"turn.started"}\n', b"").error == "no_result"


def test_opencode_event_parsing() -> None:
    adapter = adapter_for("opencode")
    lines = [{"type": "step_start", "part": {}}, {"type": "text", "part": {"text": "done"}},
             {"type": "step_finish", "part": {"tokens": {"input": 7, "output": 3, "reasoning": 1,
                                                        "cache": {"read": 2, "write": 0}}}}]
    text = "\n".join(json.dumps(line) for line in lines).encode()
    outcome = adapter.parse_output(0, text, b"")
    assert (outcome.status, outcome.final_text) == ("completed", "done")
    assert outcome.usage is not None and (outcome.usage.input_tokens, outcome.usage.cached_input_tokens) == (9, 2)
    error = json.dumps({"type": "error", "error": {"name": "APIError", "data": {"statusCode": 400}}}).encode()
    outcome = adapter.parse_output(0, error, b"")
    assert (outcome.status, outcome.api_error_status) == ("error", 400)


@pytest.mark.parametrize("harness", SUPPORTED_HARNESSES)
def test_refusal_behaviour_is_a_non_retryable_4xx(harness: str) -> None:
    refusal = adapter_for(harness).refusal
    assert refusal.refusal_status == 400 and refusal.exits_on_refusal
    assert refusal.retries_429_forever == (harness == "opencode")


def test_an_exit_0_with_an_error_is_observed_as_an_error() -> None:
    from agent_interface.evaluator.gateway.limits import GatewayLimits
    from agent_interface.evaluator.gateway.records import GatewaySettlement
    from agent_interface.evaluator.harness.adapter import HarnessOutcome, HarnessUsage
    from agent_interface.evaluator.harness.observation import observe

    limits = GatewayLimits(1, 10, 10, None, 0.0)
    settlement = GatewaySettlement(run_id="r", calls=(), events=(), limits=limits, model_calls=1, refused_calls=1,
                                   unsettled_calls=0, input_tokens=5, accounted_input_tokens=5, output_tokens=2,
                                   cached_input_tokens=0, reasoning_tokens=0, cost_usd_nanos=0,
                                   cost_provenance="observed", usage_within_limits=True)
    outcome = HarnessOutcome("error", 0, None, HarnessUsage(5, 3), "api_error", 400)
    record = observe("opencode", declared_version="1", observed_version="1.18.33", outcome=outcome,
                     settlement=settlement).to_wire()
    assert record["exitCode"] == 0 and record["status"] == "error" and record["apiErrorStatus"] == 400
    assert record["usageAgrees"] is False


@pytest.mark.parametrize(("harness", "path"), [("claude-code", ".claude/skills/review/SKILL.md"),
                                               ("codex", ".agents/skills/review/SKILL.md"),
                                               ("opencode", ".opencode/skills/review/SKILL.md")])
def test_an_inline_skill_becomes_a_skill_file(harness: str, path: str) -> None:
    launch = _plan(harness, {"resources": {"skills": [{"kind": "inline", "name": "review", "content": "Review it."}]}})
    assert _file(launch, path) == '---\nname: review\ndescription: "review"\n---\n\nReview it.'
    assert any(s.pointer == "/resources/skills/0" and s.target == path for s in launch.settings)


def test_claude_code_hooks_go_to_its_settings() -> None:
    launch = _plan("claude-code", {"hooks": {"PreToolUse": [{"command": "check-tool", "matcher": "Bash",
                                                             "timeoutMs": 1500}]}})
    settings = json.loads(_file(launch, ".claude/settings.json"))
    assert settings["hooks"] == {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "check-tool", "timeout": 2}]}]}


def test_a_bundles_candidate_profile_is_lowered_too() -> None:
    from agent_interface.candidate.profile import AgentCandidateProfile
    from agent_interface.candidate.resources import define_candidate_inline_resource

    skill = define_candidate_inline_resource("review", "Review it.").to_wire()
    profile = AgentCandidateProfile.parse_wire({
        "harness": "claude-code",
        "resources": {"failOnError": True, "skills": [skill], "instructions": "Use pytest."},
        "hooks": {"PostToolUse": [{"executable": "check-tool", "args": [{"kind": "public", "value": "a b'c"}]}]},
    })
    launch = adapter_for("claude-code").plan(profile, binary="/opt/cli", access=ACCESS, instruction="x",
                                             workspace="/ws", home="/h")
    assert _file(launch, ".claude/CLAUDE.md") == "Use pytest.\n"
    assert _file(launch, ".claude/skills/review/SKILL.md").endswith("Review it.")
    hook = json.loads(_file(launch, ".claude/settings.json"))["hooks"]["PostToolUse"][0]["hooks"][0]
    import shlex

    assert shlex.split(hook["command"]) == ["check-tool", "a b'c"]


def test_opencode_agents_and_subagents() -> None:
    launch = _plan("opencode", {
        "resources": {"agents": [{"kind": "inline", "name": "critic", "content": "Be critical."}]},
        "subagents": {"tester": {"description": "Runs tests", "prompt": "Run them.", "tools": {"bash": True},
                                 "permissions": {"edit": "deny"}, "model": "m1"}}})
    assert _file(launch, ".opencode/agents/critic.md").startswith('---\ndescription: "critic"\nmode: subagent\n')
    assert json.loads(_file(launch, "opencode.json"))["agent"] == {"tester": {
        "mode": "subagent", "description": "Runs tests", "prompt": "Run them.", "model": "tangle-gateway/m1",
        "tools": {"bash": True}, "permission": {"edit": "deny"}}}


def test_claude_code_total_output_ceiling_is_its_max_tokens() -> None:
    launch = _plan("claude-code", {"model": {"maxTotalOutputTokens": 1234}})
    assert launch.env["CLAUDE_CODE_MAX_OUTPUT_TOKENS"] == "1234"
    assert any(s.pointer == "/model/maxTotalOutputTokens" for s in launch.settings)
