"""opencode (``opencode-ai``): the profile as ``opencode.json`` and
``~/.config/opencode/AGENTS.md``, launched
as ``opencode run --pure --format json`` against the gateway's Chat Completions route.

``opencode.json`` declares one provider, the gateway, through the bundled
``@ai-sdk/openai-compatible`` package (its base URL and key read from the environment with
``{env:...}``, so the file holds no secret), ``autoupdate: false``, ``share: "disabled"`` and ``snapshot: false`` (opencode's own undo
snapshots, a Git copy of the workspace that took seconds per run).
The home directory gets a pre-seeded ``~/.config/opencode`` (``package.json``,
``package-lock.json`` and the plugin package's manifest under ``node_modules``) so opencode
does not run ``npm install`` in the background. ``--title`` is given, so no title request
is made.

Native mapping: instructions -> ``~/.config/opencode/AGENTS.md`` (the global file: the task
repository's own ``AGENTS.md`` stays in force beside it); ``prompt.appendSystemPrompt`` -> a
file listed in ``instructions`` (opencode adds it to its system prompt); ``tools`` ->
``tools``; ``permissions`` -> ``permission`` (opencode's own shape: a value or a map of
patterns; ``ask`` is refused: no one answers in a measured run); local MCP servers ->
``mcp`` (``type: "local"``; ``cwd`` refused); ``model.reasoningEffort`` -> the model's
``reasoningEffort`` option; skills -> ``.opencode/skills/<name>/SKILL.md``; inline agents ->
``.opencode/agents/<name>.md`` (a subagent front matter is added when the text has none);
``subagents`` -> ``agent`` entries (``mode: subagent``; description, prompt, tools,
permissions; ``maxSteps`` refused). Refused: ``prompt.systemPrompt`` (opencode cannot delete
its own prompt), commands, hooks, modes and the token ceilings.
"""

from __future__ import annotations

import json
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
from agent_interface.evaluator.harness.profile_fields import ProfileFields
from agent_interface.profile.agent_profile import AgentProfile
from agent_interface.profile.harness import (
    HarnessType,
    harness_reasoning_efforts,
    native_reasoning_control,
)

__all__ = ["OPENCODE_OFFLINE_ENV", "OPENCODE_PLUGIN_VERSION", "OPENCODE_PROVIDER", "OpencodeAdapter"]

OPENCODE_PROVIDER: Final = "tangle-gateway"
OPENCODE_PLUGIN_VERSION: Final = "1.18.33"
_KEY_ENV: Final = "TANGLE_GATEWAY_API_KEY"
_URL_ENV: Final = "TANGLE_GATEWAY_BASE_URL"
_APPEND_FILE: Final = ".opencode/append-system-prompt.md"

OPENCODE_OFFLINE_ENV: Final = {
    "OPENCODE_DISABLE_AUTOUPDATE": "1",
    "OPENCODE_DISABLE_MODELS_FETCH": "1",
    "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
    "OPENCODE_DISABLE_SHARE": "1",
    "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
}
"""The switches that stop update checks, the model catalogue fetch, LSP downloads, sharing
and the default plugins."""


def _plugin_seed() -> list[tuple[str, str]]:
    package = {"dependencies": {"@opencode-ai/plugin": OPENCODE_PLUGIN_VERSION}}
    lock = {
        "name": "opencode", "lockfileVersion": 3, "requires": True,
        "packages": {
            "": package,
            "node_modules/@opencode-ai/plugin": {"version": OPENCODE_PLUGIN_VERSION},
        },
    }
    manifest = {"name": "@opencode-ai/plugin", "version": OPENCODE_PLUGIN_VERSION}
    base = ".config/opencode"
    return [
        (f"{base}/package.json", json.dumps(package, indent=2) + "\n"),
        (f"{base}/package-lock.json", json.dumps(lock, indent=2) + "\n"),
        (f"{base}/node_modules/@opencode-ai/plugin/package.json", json.dumps(manifest, indent=2) + "\n"),
    ]


class OpencodeAdapter:
    """The opencode adapter (see the module for the mapping)."""

    harness: HarnessType = "opencode"
    api: HarnessApi = "chat.completions"
    refusal = RefusalBehaviour(
        refusal_status=400,
        exits_on_refusal=True,
        retries_429_forever=True,
        requests_per_refusal=1,
        note="exits 1 on HTTP 400 (a non-retryable 4xx); retries 429 and 5xx without end, so the "
             "gateway must never refuse it with 429 and every run needs a time limit",
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
        """The launch of opencode; refused when the profile holds a field it cannot honour."""
        fields = ProfileFields(profile, self.harness)
        fields.model(access.model)
        model_entry: dict[str, Any] = {"name": access.model}
        effort = fields.take("/model/reasoningEffort")
        if effort is not None:
            control = native_reasoning_control(self.harness, effort)
            if effort not in harness_reasoning_efforts(self.harness) or control is None:
                fields.refuse("/model/reasoningEffort", "the effort has no native control")
            else:
                model_entry["options"] = {"reasoningEffort": control}
                fields.setting("/model/reasoningEffort", "opencode.json:provider.models.options.reasoningEffort",
                               control)
        for key in ("maxVisibleOutputTokens", "maxReasoningTokens", "maxTotalOutputTokens"):
            if fields.take(f"/model/{key}") is not None:
                fields.refuse(f"/model/{key}", "the output ceiling has no native control the gateway can verify")
        model_ref = f"{OPENCODE_PROVIDER}/{access.model}"
        config: dict[str, Any] = {
            "$schema": "https://opencode.ai/config.json",
            "autoupdate": False,
            "share": "disabled",
            "snapshot": False,
            "model": model_ref,
            "small_model": model_ref,
            "provider": {
                OPENCODE_PROVIDER: {
                    "npm": "@ai-sdk/openai-compatible",
                    "name": OPENCODE_PROVIDER,
                    "options": {"baseURL": "{env:" + _URL_ENV + "}", "apiKey": "{env:" + _KEY_ENV + "}"},
                    "models": {access.model: model_entry},
                }
            },
            "permission": {"edit": "allow", "bash": "allow", "webfetch": "deny"},
        }
        if fields.get("/prompt/systemPrompt") is not None:
            fields.refuse("/prompt/systemPrompt", "opencode cannot delete its own system prompt, only add to it")
        append = fields.take("/prompt/appendSystemPrompt")
        if append is not None:
            fields.add_file("workspace", _APPEND_FILE, append, source="/prompt/appendSystemPrompt")
            config["instructions"] = [_APPEND_FILE]
            fields.setting("/prompt/appendSystemPrompt", "opencode.json:instructions", _APPEND_FILE)
        text, pointers = fields.instructions()
        if text:  # the global file: the task repository's own AGENTS.md stays in force beside it
            fields.add_file("home", ".config/opencode/AGENTS.md", text + "\n", source=pointers[0])
            for pointer in pointers:
                fields.setting(pointer, "~/.config/opencode/AGENTS.md", "instructions")
        tools = fields.take("/tools")
        if tools:
            config["tools"] = dict(tools)
            fields.setting("/tools", "opencode.json:tools", json.dumps(tools, sort_keys=True))
        for name, rule in (fields.take("/permissions") or {}).items():
            pointer = json_pointer(("permissions", name))
            values = rule.values() if isinstance(rule, Mapping) else [rule]
            if "ask" in values:
                fields.refuse(pointer, "'ask' needs someone to answer, and no one does in a measured run")
                continue
            config["permission"][name] = dict(rule) if isinstance(rule, Mapping) else rule
            fields.setting(pointer, f"opencode.json:permission.{name}", json.dumps(rule, sort_keys=True))
        mcp: dict[str, Any] = {}
        for server in fields.mcp_servers():
            if server.cwd is not None:
                fields.refuse(server.pointer + "/cwd", "opencode has no working directory for an MCP server")
                continue
            entry: dict[str, Any] = {"type": "local", "enabled": server.enabled}
            if server.enabled:
                entry["command"] = [server.command, *server.args]
                if server.env:
                    entry["environment"] = dict(server.env)
            else:
                entry["command"] = ["true"]
            mcp[server.name] = entry
            fields.setting(server.pointer, f"opencode.json:mcp.{server.name}", "local" if server.enabled else "disabled")
        if mcp:
            config["mcp"] = mcp
        for path, content in _plugin_seed():
            fields.add_file("home", path, content)
        fields.setting("", "~/.config/opencode", "pre-seeded plugin directory (no background npm install)")
        fields.skills(".opencode/skills")
        for agent in fields.inline_resources("agents"):
            path = f".opencode/agents/{agent.name}.md"
            text = agent.content if agent.content.startswith("---\n") else (
                f"---\ndescription: {json.dumps(agent.name)}\nmode: subagent\n---\n\n{agent.content}")
            fields.add_file("workspace", path, text, source=agent.pointer)
            fields.setting(agent.pointer, path, "agent")
        agents = self._subagents(fields, model_ref, access.model)
        if agents:
            config["agent"] = agents
        fields.add_file("workspace", "opencode.json", json.dumps(config, indent=2) + "\n")
        fields.setting("", "opencode.json", json.dumps(config, sort_keys=True))
        fields.file_mounts()
        fields.check()
        argv = (binary, "run", "--pure", "--format", "json", "--model", model_ref, "--title", "task", "--",
                instruction)
        fields.setting("", "argv", f"run --pure --format json --model {model_ref} --title task")
        env = {"HOME": home, "PATH": "/usr/local/bin:/usr/bin:/bin", "SHELL": "/bin/bash",
               _URL_ENV: access.openai_base_url, _KEY_ENV: access.token, **OPENCODE_OFFLINE_ENV}
        for name in sorted(env):
            if name not in ("HOME", "PATH"):
                shown = {"TANGLE_GATEWAY_API_KEY": "<run token>", _URL_ENV: "<gateway>"}.get(name, env[name])
                fields.setting("", f"env:{name}", shown)
        return HarnessLaunch(self.harness, argv, env, tuple(fields.files), tuple(fields.settings),
                             tuple(fields.reported))

    @staticmethod
    def _subagents(fields: ProfileFields, model_ref: str, model: str) -> dict[str, Any]:
        agents: dict[str, Any] = {}
        for name, spec in (fields.take("/subagents") or {}).items():
            pointer = json_pointer(("subagents", name))
            entry: dict[str, Any] = {"mode": "subagent", "description": spec.get("description") or name}
            if spec.get("prompt"):
                entry["prompt"] = spec["prompt"]
            if spec.get("model") not in (None, model):
                fields.refuse(f"{pointer}/model", "it names another model than the run's", code="model_route_mismatch")
            elif spec.get("model") is not None:
                entry["model"] = model_ref
            if spec.get("tools"):
                entry["tools"] = dict(spec["tools"])
            for key, rule in (spec.get("permissions") or {}).items():
                values = rule.values() if isinstance(rule, Mapping) else [rule]
                if "ask" in values:
                    fields.refuse(f"{pointer}/permissions/{key}",
                                  "'ask' needs someone to answer, and no one does in a measured run")
                    continue
                entry.setdefault("permission", {})[key] = dict(rule) if isinstance(rule, Mapping) else rule
            for key in ("maxSteps", "metadata"):
                if spec.get(key) is not None:
                    fields.refuse(f"{pointer}/{key}", "an opencode agent has no such setting")
            agents[name] = entry
            fields.setting(pointer, f"opencode.json:agent.{name}", "subagent")
        return agents

    def parse_output(self, exit_code: int, stdout: bytes, stderr: bytes) -> HarnessOutcome:
        """Read the ``--format json`` event lines: usage summed over ``step_finish`` parts,
        the text parts of the last step as the final text, an ``error`` event as the error
        (with its ``statusCode``)."""
        events = json_lines(stdout)
        input_tokens = output_tokens = cached = reasoning = 0
        texts: list[str] = []
        error: str | None = None
        api_status: int | None = None
        finished = False
        for event in events:
            kind = event.get("type")
            part = mapping(event.get("part"))
            if kind == "step_start":
                texts = []
            elif kind == "text" and isinstance(part.get("text"), str):
                texts.append(part["text"])
            elif kind == "step_finish":
                finished = True
                tokens = mapping(part.get("tokens"))
                cache = mapping(tokens.get("cache"))
                input_tokens += non_negative(tokens.get("input")) + non_negative(cache.get("read"))
                output_tokens += non_negative(tokens.get("output"))
                cached += non_negative(cache.get("read"))
                reasoning += non_negative(tokens.get("reasoning"))
            elif kind == "error":
                error = "api_error"
                detail = mapping(event.get("error"))
                data = mapping(detail.get("data"))
                status = data.get("statusCode")
                if isinstance(status, int) and not isinstance(status, bool):
                    api_status = status
        if error is None and exit_code != 0:
            error = "exit_nonzero"
        if error is None and not finished:
            error = "no_result"
        usage = HarnessUsage(input_tokens, output_tokens, cached, reasoning) if events else None
        return HarnessOutcome("error" if error else "completed", exit_code, "".join(texts) or None, usage,
                              error, api_status)
