"""Provider configuration and model-gateway defaults (``provider-config.ts``).

The reference declares these as TypeScript types without runtime schemas; the models
here validate the same shapes strictly. ``apiKey`` and auth-file ``content`` are
credentials: they are hidden from ``repr`` and never appear in error messages.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Final, Literal

from pydantic import Field

from agent_interface.core.contract_limits import FiniteNumber
from agent_interface.core.model import (
    JsonObject,
    WireList,
    WireModel,
)
from agent_interface.core.numbers import SafeInt as WireInt
from agent_interface.core.registry import register_wire_models

__all__ = [
    "TANGLE_ROUTER_DEFAULT_MODEL",
    "TANGLE_ROUTER_DEFAULT_ROOT_URL",
    "BackendCapabilities",
    "CliAuthFile",
    "ModelGatewayDefaults",
    "NativeWebToolPosture",
    "ProviderCapabilities",
    "ProviderConfig",
    "ProviderModelConfig",
    "ProviderServerConfig",
    "ProviderWorkspaceConfig",
    "normalize_open_ai_compatible_base_url",
    "normalize_openai_compatible_base_url",
    "resolve_native_web_tools",
    "resolve_tangle_router_defaults",
    "with_model_gateway_defaults",
]

TANGLE_ROUTER_DEFAULT_ROOT_URL: Final = "https://router.tangle.tools"
TANGLE_ROUTER_DEFAULT_MODEL: Final = "zai/glm-5.2"
"""Model a managed run requests when nothing else names one."""


class BackendCapabilities(WireModel):
    """What a backend supports: streaming, tool use, reasoning, multimodal input, its context window
    and interactions."""

    streaming: bool
    tool_use: bool
    reasoning: bool
    multimodal: bool
    context_window: FiniteNumber
    interactions: WireList[str] | None = None


class ProviderCapabilities(WireModel):
    """What a model provider supports: vision, log probabilities, tool calls and computer use."""

    supports_vision: bool
    supports_logprobs: bool
    supports_tool_calls: bool
    supports_computer_use: bool


class CliAuthFile(WireModel):
    """A CLI credential file; ``content`` is secret and hidden from ``repr``."""

    path: str
    content: str = Field(repr=False)
    mode: WireInt | None = None


class ProviderModelConfig(WireModel):
    """``ProviderConfig.model``; ``apiKey`` is secret and hidden from ``repr``."""

    provider: str | None = None
    model: str | None = None
    api_key: str | None = Field(default=None, repr=False)
    base_url: str | None = None
    max_thinking_tokens: FiniteNumber | None = None
    mode: Literal["api", "cli"] | None = None
    auth_mode: Literal["api-key", "oauth"] | None = None
    auth_files: WireList[CliAuthFile] | None = Field(default=None, repr=False)


class ProviderServerConfig(WireModel):
    """The port and hostname a provider's server listens on."""

    port: FiniteNumber | None = None
    hostname: str | None = None


class ProviderWorkspaceConfig(WireModel):
    """The workspace root path a provider works in."""

    root_path: str


class ProviderConfig(WireModel):
    """How to run a provider: model, server, workspace, metadata and the profile to apply."""

    model: ProviderModelConfig
    server: ProviderServerConfig | None = None
    workspace: ProviderWorkspaceConfig | None = None
    metadata: JsonObject | None = None
    profile: JsonObject | None = None


class ModelGatewayDefaults(WireModel):
    """Defaults for reaching a model through a gateway: provider, name, URLs, model and the
    environment variable holding the API key."""

    provider: str
    name: str
    root_url: str
    base_url: str
    model: str
    api_key_env_var: str


class NativeWebToolPosture(WireModel):
    """Whether a harness's native web search and fetch tools are on."""

    search: bool | None = None
    fetch: bool | None = None


_VERSION_SUFFIX: Final = re.compile(r"/v[0-9]+\Z")


def normalize_openai_compatible_base_url(base_url: str) -> str:
    """Strip trailing slashes and add ``/v1`` unless the URL already ends in ``/v<N>``."""
    trimmed = re.sub(r"/+\Z", "", base_url)
    return trimmed if _VERSION_SUFFIX.search(trimmed) else f"{trimmed}/v1"


normalize_open_ai_compatible_base_url = normalize_openai_compatible_base_url
"""The mechanical snake_case of ``normalizeOpenAiCompatibleBaseUrl``; the same function."""


def resolve_tangle_router_defaults(
    env: Mapping[str, str | None] | None = None,
) -> ModelGatewayDefaults:
    """Router defaults from ``TANGLE_ROUTER_*`` variables (empty values count as unset)."""
    source: Mapping[str, str | None] = os.environ if env is None else env

    def pick(name: str, fallback: str) -> str:
        value = source.get(name)
        return value if value else fallback

    root_url = pick("TANGLE_ROUTER_URL", TANGLE_ROUTER_DEFAULT_ROOT_URL)
    return ModelGatewayDefaults(
        provider="openai-compat",
        name=pick("TANGLE_ROUTER_PROVIDER_NAME", "Tangle Router"),
        root_url=root_url,
        base_url=normalize_openai_compatible_base_url(pick("TANGLE_ROUTER_BASE_URL", root_url)),
        model=pick("TANGLE_ROUTER_MODEL", TANGLE_ROUTER_DEFAULT_MODEL),
        api_key_env_var=pick("TANGLE_ROUTER_API_KEY_ENV", "OPENCODE_MODEL_API_KEY"),
    )


def with_model_gateway_defaults(
    model: ProviderModelConfig, defaults: ModelGatewayDefaults | None = None
) -> ProviderModelConfig:
    """Fill an empty provider, model or base URL from the gateway defaults."""
    chosen = defaults if defaults is not None else resolve_tangle_router_defaults()
    return model.model_copy(
        update={
            "provider": model.provider or chosen.provider,
            "model": model.model or chosen.model,
            "base_url": model.base_url or chosen.base_url,
        }
    )


_SEARCH_KEYS: Final = frozenset({"websearch"})
_FETCH_KEYS: Final = frozenset({"webfetch", "fetch"})


def resolve_native_web_tools(tools: Mapping[str, object] | None) -> NativeWebToolPosture:
    """Read the native web search/fetch posture from a profile tool map.

    Keys are compared after dropping every non-alphanumeric ASCII character and
    lowercasing (``Web_Search`` is ``websearch``); non-boolean values are ignored and
    a later key overrides an earlier one.
    """
    if not tools:
        return NativeWebToolPosture()
    search: bool | None = None
    fetch: bool | None = None
    for key, value in tools.items():
        if not isinstance(value, bool):
            continue
        normalized = re.sub(r"[^a-zA-Z0-9]", "", key).lower()
        if normalized in _SEARCH_KEYS:
            search = value
        elif normalized in _FETCH_KEYS:
            fetch = value
    return NativeWebToolPosture(search=search, fetch=fetch)


register_wire_models(
    BackendCapabilities=BackendCapabilities,
    ProviderCapabilities=ProviderCapabilities,
    CliAuthFile=CliAuthFile,
    ProviderConfig=ProviderConfig,
    ModelGatewayDefaults=ModelGatewayDefaults,
    NativeWebToolPosture=NativeWebToolPosture,
)
