"""The candidate profile (spec: "Candidate bundles reject unregistered backend extensions
instead of accepting an untyped behavior or credential channel")."""

from __future__ import annotations

from typing import Any

import pytest

from agent_interface.candidate.profile import (
    AgentCandidateHookCommand,
    AgentCandidateMcpServer,
    AgentCandidateProfile,
)
from agent_interface.core.errors import ContractError
from agent_interface.core.model import wire_adapter
from tests.candidate.fixtures import bundle


def profile(**extra: Any) -> dict[str, Any]:
    return {**bundle()["profile"], **extra}


def codes(tp: Any, data: Any) -> list[tuple[str, str]]:
    with pytest.raises(ContractError) as caught:
        wire_adapter(tp).parse_value(data)
    return [(issue.path, issue.code) for issue in caught.value.issues]


def public(value: str) -> dict[str, str]:
    return {"kind": "public", "value": value}


def test_reference_profile_is_accepted() -> None:
    assert AgentCandidateProfile.parse_wire(profile())


@pytest.mark.parametrize("key", ["extensions", "metadata", "connections", "seats", "unknown"])
def test_untyped_channels_are_refused(key: str) -> None:
    assert codes(AgentCandidateProfile, profile(**{key: {}})) == [(f"/{key}", "extra_forbidden")]


def test_strict_at_every_depth() -> None:
    assert codes(AgentCandidateProfile, profile(prompt={"systemPrompt": "x", "extra": 1}))
    assert codes(AgentCandidateProfile, profile(model={"default": "m", "metadata": {}}))
    assert codes(AgentCandidateProfile, profile(subagents={"s": {"metadata": {}}}))
    assert codes(AgentCandidateProfile, profile(modes={"m": {"metadata": {}}}))
    assert codes(AgentCandidateProfile, profile(confidential={"tee": "tdx", "x": 1}))


def test_mcp_servers_are_local_public_and_shell_free() -> None:
    server = wire_adapter(AgentCandidateMcpServer)
    local = {"command": "mcp-fs", "args": [public("--root=.")], "env": {"MODE": public("ro")}, "cwd": "."}
    assert server.parse_value(local)
    assert server.parse_value({"enabled": False})
    assert codes(AgentCandidateMcpServer, {"enabled": False, "command": "mcp-fs"})
    assert codes(AgentCandidateMcpServer, {"url": "https://mcp.example.com"})
    assert codes(AgentCandidateMcpServer, {"command": "bash"})
    assert codes(AgentCandidateMcpServer, {**local, "transport": "http"})
    assert codes(AgentCandidateMcpServer, {**local, "env": {"API_KEY": public("x")}})
    assert codes(AgentCandidateMcpServer, {**local, "env": {"K": {"kind": "secret-ref", "key": "K"}}})
    assert codes(AgentCandidateMcpServer, {**local, "cwd": "../up"})


def test_hooks_are_shell_free() -> None:
    hook = {"executable": "/usr/bin/lint", "args": [public("--fix")], "timeoutMs": 1.5, "blocking": True}
    assert AgentCandidateHookCommand.parse_wire(hook)
    assert codes(AgentCandidateHookCommand, {**hook, "executable": "sh"})
    assert codes(AgentCandidateHookCommand, {"command": "lint --fix"})
    assert codes(AgentCandidateHookCommand, {**hook, "timeoutMs": 0})


def test_every_model_route_is_the_primary_model() -> None:
    ok = profile(
        model={"default": "openai/gpt-5.4", "small": "openai/gpt-5.4"},
        subagents={"reviewer": {"model": "openai/gpt-5.4"}},
        modes={"plan": {"model": "openai/gpt-5.4"}},
    )
    assert AgentCandidateProfile.parse_wire(ok)
    bad = profile(
        model={"default": "openai/gpt-5.4", "small": "openai/gpt-5.4-mini"},
        subagents={"reviewer": {"model": "other"}},
        modes={"plan": {"model": "other"}},
    )
    assert codes(AgentCandidateProfile, bad) == [
        ("/model/small", "model_route_not_primary"),
        ("/subagents/reviewer/model", "model_route_not_primary"),
        ("/modes/plan/model", "model_route_not_primary"),
    ]
    no_primary = profile(model={"small": "m"})
    assert codes(AgentCandidateProfile, no_primary) == [("/model/small", "model_route_not_primary")]


def test_token_ceilings_and_positive_integers() -> None:
    assert codes(AgentCandidateProfile, profile(model={"maxTotalOutputTokens": 5, "maxReasoningTokens": 6})) == [
        ("/model/maxReasoningTokens", "token_ceiling_exceeds_total")
    ]
    assert codes(AgentCandidateProfile, profile(subagents={"s": {"maxSteps": 1.5}}))
    assert AgentCandidateProfile.parse_wire(profile(subagents={"s": {"maxSteps": 2.0}}))


def test_only_rfc8785_json() -> None:
    assert codes(AgentCandidateProfile, profile(prompt={"systemPrompt": "\ud800"})) == [
        ("", "non_canonical_json")
    ]
    assert codes(AgentCandidateProfile, profile(tools={"\udc00": True}))


def test_plain_records_drop_proto_keys_like_the_reference() -> None:
    parsed = AgentCandidateProfile.parse_wire(profile(tools={"__proto__": True, "read": False}))
    assert parsed.to_wire()["tools"] == {"read": False}
    # Permission maps inside a subagent keep every own key.
    nested = AgentCandidateProfile.parse_wire(profile(subagents={"s": {"tools": {"__proto__": True}}}))
    assert nested.to_wire()["subagents"]["s"]["tools"] == {"__proto__": True}
