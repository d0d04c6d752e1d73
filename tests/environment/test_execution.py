"""Execution inputs/results (execution-types.ts) and provider configuration (provider-config.ts)."""

from __future__ import annotations

from typing import Any

import pytest

from agent_interface.core.errors import ContractError
from agent_interface.environment.execution import (
    AgentExecutionInput,
    AgentExecutionResult,
)
from agent_interface.profile.provider_config import (
    TANGLE_ROUTER_DEFAULT_MODEL,
    CliAuthFile,
    ModelGatewayDefaults,
    ProviderConfig,
    ProviderModelConfig,
    normalize_openai_compatible_base_url,
    resolve_native_web_tools,
    resolve_tangle_router_defaults,
    with_model_gateway_defaults,
)

BINDING = {"runId": "run-1", "provider": "p", "environmentId": "e", "sessionId": "s", "executionId": "x"}


def refusal(model: Any, data: Any) -> list[tuple[str, str]]:
    with pytest.raises(ContractError) as caught:
        model.parse_wire(data)
    return [(issue.path, issue.code) for issue in caught.value.issues]


def test_execution_input_carries_posture_and_binding() -> None:
    document = {"systemPrompt": "system", "interactionBinding": BINDING, "interactions": {"permission": True, "acme.review": False}}
    parsed = AgentExecutionInput.parse_wire(document)
    assert parsed.to_wire() == document
    assert AgentExecutionInput.parse_wire({"systemPrompt": "s", "interactions": {}}).interactions == {}
    assert AgentExecutionInput.parse_wire({"systemPrompt": "s"}).interactions is None
    assert ("/interactions/permission", "bool_type") in refusal(AgentExecutionInput, {"systemPrompt": "s", "interactions": {"permission": 1}})
    assert refusal(AgentExecutionInput, {"systemPrompt": "s", "interactions": {"approval": True}})[0][0].startswith("/interactions")
    assert ("/interactionBinding/interactionId", "extra_forbidden") in refusal(
        AgentExecutionInput, {"systemPrompt": "s", "interactionBinding": {**BINDING, "interactionId": "i"}}
    )
    assert ("/systemPrompt", "missing") in refusal(AgentExecutionInput, {})


def test_execution_input_hides_headers_and_key() -> None:
    parsed = AgentExecutionInput.parse_wire({"systemPrompt": "s", "headers": {"authorization": "Bearer SECRET-1"}, "model": {"apiKey": "SECRET-2"}})
    assert "SECRET-1" not in repr(parsed) and "SECRET-2" not in repr(parsed)


def test_execution_result() -> None:
    document = {
        "outcome": {"type": "completed"}, "text": "done",
        "toolInvocations": [{"toolName": "shell", "input": {"cmd": "ls"}, "result": "ok", "isError": False}],
        "tokenUsage": {"inputTokens": 1, "outputTokens": 2}, "timing": {"startedAt": 1, "completedAt": 2, "durationMs": 1},
    }
    assert AgentExecutionResult.parse_wire(document).to_wire() == document
    assert ("/outcome/type", "union_tag_invalid") in refusal(AgentExecutionResult, {**document, "outcome": {"type": "paused"}})


def test_provider_config_secrets_hidden() -> None:
    config = ProviderConfig.parse_wire({"model": {"apiKey": "sk-SECRET", "authFiles": [{"path": "/a", "content": "TOKEN-XYZ", "mode": 384}]}})
    assert "sk-SECRET" not in repr(config) and "TOKEN-XYZ" not in repr(config)
    assert "TOKEN-XYZ" not in repr(CliAuthFile(path="/a", content="TOKEN-XYZ"))
    assert ("/model/mode", "literal_error") in refusal(ProviderConfig, {"model": {"mode": "web"}})


@pytest.mark.parametrize(
    ("url", "expected"),
    [("https://x.io", "https://x.io/v1"), ("https://x.io/", "https://x.io/v1"), ("https://x.io/v2//", "https://x.io/v2"),
     ("https://x.io/v1beta", "https://x.io/v1beta/v1"), ("https://x.io/api/v10", "https://x.io/api/v10")],
)
def test_normalize_base_url(url: str, expected: str) -> None:
    assert normalize_openai_compatible_base_url(url) == expected


def test_router_defaults() -> None:
    defaults = resolve_tangle_router_defaults({})
    assert defaults == ModelGatewayDefaults(
        provider="openai-compat", name="Tangle Router", root_url="https://router.tangle.tools",
        base_url="https://router.tangle.tools/v1", model=TANGLE_ROUTER_DEFAULT_MODEL, api_key_env_var="OPENCODE_MODEL_API_KEY",
    )
    custom = resolve_tangle_router_defaults({"TANGLE_ROUTER_URL": "https://r.example/", "TANGLE_ROUTER_MODEL": "", "TANGLE_ROUTER_API_KEY_ENV": "K"})
    assert custom.base_url == "https://r.example/v1" and custom.model == TANGLE_ROUTER_DEFAULT_MODEL and custom.api_key_env_var == "K"
    model = with_model_gateway_defaults(ProviderModelConfig(provider="", model="m"), defaults)
    assert (model.provider, model.model, model.base_url) == ("openai-compat", "m", "https://router.tangle.tools/v1")


def test_native_web_tools() -> None:
    assert resolve_native_web_tools(None).to_wire() == {}
    posture = resolve_native_web_tools({"Web_Search": True, "web-fetch": False, "fetch": True, "other": True, "websearch2": True, "WebSearch": "yes"})
    assert posture.to_wire() == {"search": True, "fetch": True}
