"""Claude Code (``@anthropic-ai/claude-code``): the profile as ``~/.claude/CLAUDE.md``,
``.claude/settings.json``, ``.claude/skills``, ``.claude/agents``, ``.claude/commands`` and
``.mcp.json``, launched as ``claude -p --output-format json`` against the gateway's
Anthropic Messages route.

Native mapping: instructions -> ``~/.claude/CLAUDE.md`` (the user-level memory, in the run's
fresh ``$HOME``: the task repository's own ``CLAUDE.md`` stays in force beside it); ``prompt.systemPrompt`` ->
``--system-prompt`` (replace); ``prompt.appendSystemPrompt`` -> ``--append-system-prompt``;
``tools`` -> ``permissions.allow`` / ``permissions.deny`` entries ``Name`` (``WebFetch`` and
``WebSearch`` are denied unless the profile names them: the run's only network is the
gateway); ``permissions`` ->
``Name`` or ``Name(pattern)`` entries (``ask`` is refused: no one answers in a measured
run); ``mcp`` -> ``.mcp.json`` loaded with ``--mcp-config --strict-mcp-config`` (a local
server's ``cwd`` is refused: ``.mcp.json`` has no such key); skills -> ``SKILL.md`` files
(a front matter naming the skill is added when the text has none); ``subagents`` ->
``.claude/agents/<name>.md`` (description and prompt only); ``model.reasoningEffort`` ->
``--effort``; ``hooks`` -> ``hooks`` of ``.claude/settings.json`` (Claude Code's event names
only; a hook's ``env`` or ``blocking`` is refused: Claude Code has neither; a candidate
profile's shell-free hook, ``executable`` and ``args``, is written as the one shell command
that parses back to exactly that argv);
``model.maxTotalOutputTokens`` -> ``CLAUDE_CODE_MAX_OUTPUT_TOKENS`` (every request's
``max_tokens``, thinking included, which the gateway sees and meters). The visible and
reasoning ceilings and modes are refused.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from typing import Any, Final

from agent_interface.candidate.profile import AgentCandidateProfile
from agent_interface.core.errors import json_pointer
from agent_interface.evaluator.harness.adapter import (
    GatewayAccess,
    HarnessApi,
    HarnessLaunch,
    HarnessOutcome,
    HarnessUsage,
    RefusalBehaviour,
)
from agent_interface.evaluator.harness.output_lines import json_lines, mapping, non_negative
from agent_interface.evaluator.harness.profile_fields import ProfileFields, with_front_matter
from agent_interface.profile.agent_profile import AgentProfile
from agent_interface.profile.harness import (
    HarnessType,
    harness_reasoning_efforts,
    native_reasoning_control,
)

__all__ = ["CLAUDE_CODE_OFFLINE_ENV", "ClaudeCodeAdapter"]

CLAUDE_CODE_OFFLINE_ENV: Final = {
    "DISABLE_TELEMETRY": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_ERROR_REPORTING": "1",
}
"""The switches that stop telemetry, update checks, error reports and the extra title request."""

_CEILINGS: Final = ("maxVisibleOutputTokens", "maxReasoningTokens", "maxTotalOutputTokens")
_WEB_TOOLS: Final = ("WebFetch", "WebSearch")
_HOOK_EVENTS: Final = frozenset({"PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop", "SubagentStop",
                                 "SessionStart", "SessionEnd", "Notification", "PreCompact"})


def _hooks(fields: ProfileFields) -> dict[str, Any]:
    hooks: dict[str, Any] = {}
    for event, commands in (fields.take("/hooks") or {}).items():
        pointer = json_pointer(("hooks", event))
        if event not in _HOOK_EVENTS:
            fields.refuse(pointer, "Claude Code has no hook event of this name")
            continue
        entries = []
        for index, hook in enumerate(commands):
            for key in ("env", "blocking"):
                if hook.get(key) is not None:
                    fields.refuse(f"{pointer}/{index}/{key}", "a Claude Code hook has no such setting")
            if "executable" in hook:  # a candidate profile's shell-free hook: quoted back to its exact argv
                argv = [hook["executable"]] + [fields.config_text(f"{pointer}/{index}/args/{i}", value) or ""
                                               for i, value in enumerate(hook.get("args") or ())]
                text = shlex.join(argv)
            else:
                text = hook["command"]
            command: dict[str, Any] = {"type": "command", "command": text}
            if hook.get("timeoutMs") is not None:
                command["timeout"] = max(1, -(-int(hook["timeoutMs"]) // 1000))
            entries.append({"matcher": hook.get("matcher") or "", "hooks": [command]})
            fields.setting(f"{pointer}/{index}", f".claude/settings.json:hooks.{event}", "command")
        if entries:
            hooks[event] = entries
    return hooks


def _permission_entries(fields: ProfileFields) -> dict[str, list[str]]:
    lists: dict[str, list[str]] = {"allow": [], "deny": []}
    for name, enabled in (fields.take("/tools") or {}).items():
        lists["allow" if enabled else "deny"].append(name)
    for name, rule in (fields.take("/permissions") or {}).items():
        pointer = json_pointer(("permissions", name))
        rules = rule.items() if isinstance(rule, Mapping) else [(None, rule)]
        for pattern, value in rules:
            if value == "ask":
                fields.refuse(pointer if pattern is None else f"{pointer}/{pattern}",
                              "'ask' needs someone to answer, and no one does in a measured run")
                continue
            lists[value].append(name if pattern is None else f"{name}({pattern})")
    return lists


class ClaudeCodeAdapter:
    """The Claude Code adapter (see the module for the mapping)."""

    harness: HarnessType = "claude-code"
    api: HarnessApi = "messages"
    refusal = RefusalBehaviour(
        refusal_status=400,
        exits_on_refusal=True,
        retries_429_forever=False,
        requests_per_refusal=6,
        note="exits 1 on HTTP 400, after retrying the refused turn without its optional beta features "
             "(6 requests in all, whether the first call or a later one is refused); retries 429 a bounded "
             "number of times",
    )

    def plan(
        self,
        profile: AgentProfile | AgentCandidateProfile,
        *,
        binary: str,
        access: GatewayAccess,
        instruction: str,
        workspace: str,
        home: str,
    ) -> HarnessLaunch:
        """The launch of Claude Code; refused when the profile holds a field it cannot honour."""
        fields = ProfileFields(profile, self.harness)
        fields.model(access.model)
        argv: list[str] = [binary, "-p", "--output-format", "json", "--model", access.model,
                           "--permission-mode", "bypassPermissions", "--setting-sources", "user,project"]
        fields.setting("", "argv", "-p --output-format json --permission-mode bypassPermissions "
                                   "--setting-sources user,project")
        effort = fields.take("/model/reasoningEffort")
        if effort is not None:
            control = native_reasoning_control(self.harness, effort)
            if effort not in harness_reasoning_efforts(self.harness) or control is None:
                fields.refuse("/model/reasoningEffort", "the effort has no native control")
            else:
                argv += ["--effort", control]
                fields.setting("/model/reasoningEffort", "argv:--effort", control)
        extra_env: dict[str, str] = {}
        total = fields.take("/model/maxTotalOutputTokens")
        if total is not None:  # every request's max_tokens (thinking included), which the gateway meters
            extra_env["CLAUDE_CODE_MAX_OUTPUT_TOKENS"] = str(total)
        for key in _CEILINGS[:2]:
            if fields.take(f"/model/{key}") is not None:
                fields.refuse(f"/model/{key}", "the output ceiling has no native control the gateway can verify")
        for key, flag in (("systemPrompt", "--system-prompt"), ("appendSystemPrompt", "--append-system-prompt")):
            text = fields.take(f"/prompt/{key}")
            if text is not None:
                argv += [flag, text]
                fields.setting(f"/prompt/{key}", f"argv:{flag}", f"{len(text.encode())} bytes")
        text, pointers = fields.instructions()
        if text:  # the user-level memory: the task repository's own CLAUDE.md stays in force beside it
            fields.add_file("home", ".claude/CLAUDE.md", text + "\n", source=pointers[0])
            for pointer in pointers:
                fields.setting(pointer, "~/.claude/CLAUDE.md", "instructions")
        settings: dict[str, Any] = {"permissions": {}}
        lists = _permission_entries(fields)
        named = {entry.split("(", 1)[0] for entries in lists.values() for entry in entries}
        lists["deny"] += [tool for tool in _WEB_TOOLS if tool not in named]  # off unless the profile says
        for kind, entries in lists.items():
            if entries:
                settings["permissions"][kind] = entries
        hooks = _hooks(fields)
        if hooks:
            settings["hooks"] = hooks
        self._mcp(fields, settings, argv, workspace)
        fields.add_file("workspace", ".claude/settings.json", json.dumps(settings, indent=2) + "\n")
        fields.setting("", ".claude/settings.json", json.dumps(settings, sort_keys=True))
        fields.skills(".claude/skills")
        for resource in fields.inline_resources("agents"):
            path = f".claude/agents/{resource.name}.md"
            fields.add_file("workspace", path, with_front_matter(resource.name, resource.content, resource.name),
                            source=resource.pointer)
            fields.setting(resource.pointer, path, "agent")
        for resource in fields.inline_resources("commands"):
            path = f".claude/commands/{resource.name}.md"
            fields.add_file("workspace", path, resource.content, source=resource.pointer)
            fields.setting(resource.pointer, path, "command")
        self._subagents(fields, access.model)
        fields.file_mounts()
        fields.check()
        argv += ["--", instruction]
        env = {
            "HOME": home,
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "SHELL": "/bin/bash",
            "ANTHROPIC_BASE_URL": access.anthropic_base_url,
            "ANTHROPIC_API_KEY": access.token,
            "ANTHROPIC_SMALL_FAST_MODEL": access.model,
            "IS_SANDBOX": "1",
            **CLAUDE_CODE_OFFLINE_ENV,
            **extra_env,
        }
        for name in sorted(env):
            if name not in ("HOME", "PATH"):
                shown = "<run token>" if name == "ANTHROPIC_API_KEY" else (
                    "<gateway>" if name == "ANTHROPIC_BASE_URL" else env[name])
                fields.setting("/model/maxTotalOutputTokens" if name in extra_env else "", f"env:{name}", shown)
        return HarnessLaunch(self.harness, tuple(argv), env, tuple(fields.files), tuple(fields.settings),
                             tuple(fields.reported))

    def _mcp(self, fields: ProfileFields, settings: dict[str, Any], argv: list[str], workspace: str) -> None:
        servers: dict[str, Any] = {}
        for server in fields.mcp_servers():
            if not server.enabled:
                fields.setting(server.pointer, ".mcp.json", "omitted: disabled")
                continue
            if server.cwd is not None:
                fields.refuse(server.pointer + "/cwd", ".mcp.json has no working directory for a server")
                continue
            servers[server.name] = {"type": "stdio", "command": server.command, "args": list(server.args),
                                    "env": dict(server.env)}
            fields.setting(server.pointer, f".mcp.json:mcpServers.{server.name}", "stdio")
        if servers:
            fields.add_file("workspace", ".mcp.json", json.dumps({"mcpServers": servers}, indent=2) + "\n",
                            source="/mcp")
            argv += ["--mcp-config", f"{workspace.rstrip('/')}/.mcp.json", "--strict-mcp-config"]

    def _subagents(self, fields: ProfileFields, model: str) -> None:
        for name, spec in (fields.take("/subagents") or {}).items():
            pointer = json_pointer(("subagents", name))
            if not fields_name_ok(name):
                fields.refuse(pointer, "the name must be one path segment of [A-Za-z0-9._-]", code="unsafe_resource_name")
                continue
            for key in ("tools", "permissions", "maxSteps", "metadata"):
                if spec.get(key):
                    fields.refuse(f"{pointer}/{key}", "a subagent file carries only a description and a prompt")
            if spec.get("model") not in (None, model):
                fields.refuse(f"{pointer}/model", "it names another model than the run's", code="model_route_mismatch")
            text = with_front_matter(name, spec.get("prompt") or "", spec.get("description") or name)
            fields.add_file("workspace", f".claude/agents/{name}.md", text, source=pointer)
            fields.setting(pointer, f".claude/agents/{name}.md", "subagent")

    def parse_output(self, exit_code: int, stdout: bytes, stderr: bytes) -> HarnessOutcome:
        """Read the one JSON result of ``--output-format json``: ``is_error``,
        ``api_error_status``, ``result`` and the summed ``usage``."""
        results = [item for item in json_lines(stdout) if item.get("type") == "result"]
        if not results:
            return HarnessOutcome("error", exit_code, error="no_result")
        result = results[-1]
        usage_wire = mapping(result.get("usage"))
        usage = HarnessUsage(
            input_tokens=non_negative(usage_wire.get("input_tokens"))
            + non_negative(usage_wire.get("cache_creation_input_tokens")),
            output_tokens=non_negative(usage_wire.get("output_tokens")),
            cached_input_tokens=non_negative(usage_wire.get("cache_read_input_tokens")),
        )
        text = result.get("result") if isinstance(result.get("result"), str) else None
        status = result.get("api_error_status")
        api_status = status if isinstance(status, int) and not isinstance(status, bool) else None
        error: str | None = None
        if result.get("is_error") is not False or result.get("subtype") != "success":
            error = "api_error" if api_status is not None else "result_error"
        elif exit_code != 0:
            error = "exit_nonzero"
        return HarnessOutcome("error" if error else "completed", exit_code, text, usage, error, api_status)


def fields_name_ok(name: str) -> bool:
    """True when ``name`` is usable as one file-name segment."""
    return bool(name) and name[0].isalnum() and all(ch.isalnum() or ch in "._-" for ch in name) and len(name) <= 128
