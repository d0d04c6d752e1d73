"""Codex (``@openai/codex``): the profile as ``$CODEX_HOME/AGENTS.md`` and ``config.toml``,
launched as ``codex exec --json`` against the gateway's OpenAI Responses route.

``config.toml`` names one model provider, the gateway (``wire_api = "responses"``, no
retries, the run's token read from ``TANGLE_GATEWAY_API_KEY``, its base URL without the
token so the file holds no secret), never asks for approval, runs commands without Codex's
own sandbox (the evaluator's container is the sandbox), and turns off every non-model
feature that reaches out (update check, analytics, feedback, plugins, remote plugins, apps,
web search). ``--strict-config`` makes Codex refuse a key it does not know, so a stale
setting fails the run instead of being ignored.

Native mapping: instructions -> ``$CODEX_HOME/AGENTS.md`` (the global file: the task
repository's own ``AGENTS.md`` stays in force beside it); ``prompt.systemPrompt`` ->
``model_instructions_file`` (replace); ``model.reasoningEffort`` ->
``model_reasoning_effort``; local MCP servers -> ``[mcp_servers.NAME]``; skills ->
``.agents/skills/<name>/SKILL.md``. Refused: ``prompt.appendSystemPrompt`` (Codex has no
additive control), ``tools``, ``permissions``, agents, commands, subagents, hooks, modes and
the token ceilings.
"""

from __future__ import annotations

import json
from typing import Final

from agent_interface.candidate.profile import AgentCandidateProfile
from agent_interface.evaluator.harness.adapter import (
    GatewayAccess,
    HarnessApi,
    HarnessLaunch,
    HarnessOutcome,
    HarnessUsage,
    RefusalBehaviour,
)
from agent_interface.evaluator.harness.output_lines import json_lines, mapping, non_negative
from agent_interface.evaluator.harness.profile_fields import ProfileFields
from agent_interface.profile.agent_profile import AgentProfile
from agent_interface.profile.harness import (
    HarnessType,
    harness_reasoning_efforts,
    native_reasoning_control,
)

__all__ = ["CODEX_KEY_ENV", "CODEX_PROVIDER", "CodexAdapter", "toml_string"]

CODEX_PROVIDER: Final = "tangle-gateway"
CODEX_KEY_ENV: Final = "TANGLE_GATEWAY_API_KEY"
_INSTRUCTIONS_FILE: Final = ".codex/model-instructions.md"


def toml_string(value: str) -> str:
    """``value`` as a TOML basic string (JSON's escapes are TOML's, ``\\u`` included)."""
    return json.dumps(value, ensure_ascii=True)


class CodexAdapter:
    """The Codex adapter (see the module for the mapping)."""

    harness: HarnessType = "codex"
    api: HarnessApi = "responses"
    refusal = RefusalBehaviour(
        refusal_status=400,
        exits_on_refusal=True,
        retries_429_forever=False,
        requests_per_refusal=1,
        note="exits 1 on HTTP 400 with request_max_retries = 0 and stream_max_retries = 0 "
             "(also on 429 with insufficient_quota)",
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
        """The launch of Codex; refused when the profile holds a field it cannot honour."""
        fields = ProfileFields(profile, self.harness)
        fields.model(access.model)
        codex_home = f"{home.rstrip('/')}/.codex"
        top: list[tuple[str, str]] = [
            ("model", toml_string(access.model)),
            ("model_provider", toml_string(CODEX_PROVIDER)),
            ("approval_policy", toml_string("never")),
            ("sandbox_mode", toml_string("danger-full-access")),
            ("check_for_update_on_startup", "false"),
            ("web_search", toml_string("disabled")),
        ]
        effort = fields.take("/model/reasoningEffort")
        if effort is not None:
            control = native_reasoning_control(self.harness, effort)
            if effort not in harness_reasoning_efforts(self.harness) or control is None:
                fields.refuse("/model/reasoningEffort", "the effort has no native control")
            else:
                top.append(("model_reasoning_effort", toml_string(control)))
                fields.setting("/model/reasoningEffort", "config.toml:model_reasoning_effort", control)
        for key in ("maxVisibleOutputTokens", "maxReasoningTokens", "maxTotalOutputTokens"):
            if fields.take(f"/model/{key}") is not None:
                fields.refuse(f"/model/{key}", "the output ceiling has no native control the gateway can verify")
        system_prompt = fields.take("/prompt/systemPrompt")
        if system_prompt is not None:
            fields.add_file("home", _INSTRUCTIONS_FILE, system_prompt, source="/prompt/systemPrompt")
            top.append(("model_instructions_file", toml_string(f"{home.rstrip('/')}/{_INSTRUCTIONS_FILE}")))
            fields.setting("/prompt/systemPrompt", "config.toml:model_instructions_file", _INSTRUCTIONS_FILE)
        if fields.get("/prompt/appendSystemPrompt") is not None:
            fields.refuse("/prompt/appendSystemPrompt", "Codex has no control that adds to its own system prompt")
        text, pointers = fields.instructions()
        if text:  # the global file: the task repository's own AGENTS.md stays in force beside it
            fields.add_file("home", ".codex/AGENTS.md", text + "\n", source=pointers[0])
            for pointer in pointers:
                fields.setting(pointer, "$CODEX_HOME/AGENTS.md", "instructions")
        lines = [f"{key} = {value}" for key, value in top]
        lines += [
            "",
            f"[model_providers.{CODEX_PROVIDER}]",
            f"name = {toml_string(CODEX_PROVIDER)}",
            f"base_url = {toml_string(access.public_openai_base_url)}",
            f"env_key = {toml_string(CODEX_KEY_ENV)}",
            'wire_api = "responses"',
            "request_max_retries = 0",
            "stream_max_retries = 0",
            "",
            "[analytics]",
            "enabled = false",
            "",
            "[feedback]",
            "enabled = false",
            "",
            "[features]",
            "plugins = false",
            "remote_plugin = false",
            "apps = false",
        ]
        for server in fields.mcp_servers():
            lines += ["", f"[mcp_servers.{toml_string(server.name)}]"]
            if server.enabled:
                lines.append(f"command = {toml_string(server.command)}")
                lines.append("args = [" + ", ".join(toml_string(arg) for arg in server.args) + "]")
                if server.cwd is not None:
                    lines.append(f"cwd = {toml_string(server.cwd)}")
                if server.env:
                    lines.append("env = { " + ", ".join(f"{toml_string(k)} = {toml_string(v)}"
                                                         for k, v in server.env) + " }")
            else:
                lines += ['command = "true"', "enabled = false"]
            fields.setting(server.pointer, f"config.toml:mcp_servers.{server.name}",
                           "stdio" if server.enabled else "disabled")
        config = "\n".join(lines) + "\n"
        fields.add_file("home", ".codex/config.toml", config)
        fields.setting("", ".codex/config.toml", " ".join(line for line in lines if line))
        fields.skills(".agents/skills")
        fields.file_mounts()
        fields.check()
        argv = (binary, "exec", "--json", "--strict-config", "--skip-git-repo-check", "--ephemeral",
                "--cd", workspace, "--", instruction)
        fields.setting("", "argv", "exec --json --strict-config --skip-git-repo-check --ephemeral --cd")
        env = {"HOME": home, "CODEX_HOME": codex_home, "PATH": "/usr/local/bin:/usr/bin:/bin",
               CODEX_KEY_ENV: access.token}
        fields.setting("", f"env:{CODEX_KEY_ENV}", "<run token>")
        fields.setting("", "env:CODEX_HOME", codex_home)
        return HarnessLaunch(self.harness, argv, env, tuple(fields.files), tuple(fields.settings),
                             tuple(fields.reported))

    def parse_output(self, exit_code: int, stdout: bytes, stderr: bytes) -> HarnessOutcome:
        """Read the ``--json`` event lines: usage summed over ``turn.completed``, the last
        ``agent_message`` as the final text, ``turn.failed`` or a top-level ``error`` as an
        error (an ``error`` *item* is a warning Codex shows, not a failure)."""
        events = json_lines(stdout)
        input_tokens = output_tokens = cached = reasoning = 0
        text: str | None = None
        error: str | None = None
        completed = False
        for event in events:
            kind = event.get("type")
            if kind == "turn.completed":
                completed = True
                usage = mapping(event.get("usage"))
                input_tokens += non_negative(usage.get("input_tokens"))
                output_tokens += non_negative(usage.get("output_tokens"))
                cached += non_negative(usage.get("cached_input_tokens"))
                reasoning += non_negative(usage.get("reasoning_output_tokens"))
            elif kind == "turn.failed":
                error = "turn_failed"
            elif kind == "error" and error is None:
                error = "api_error"
            elif kind == "item.completed":
                item = event.get("item")
                if isinstance(item, dict) and item.get("type") == "agent_message" and isinstance(item.get("text"), str):
                    text = item["text"]
        if error is None and exit_code != 0:
            error = "exit_nonzero"
        if error is None and not completed:
            error = "no_result"
        usage_record = HarnessUsage(input_tokens, output_tokens, cached, reasoning) if events else None
        return HarnessOutcome("error" if error else "completed", exit_code, text, usage_record, error)
