"""The upstream a ``--model-upstream`` value names (the CLI's and the Python API's choice)."""

from __future__ import annotations

from collections.abc import Mapping

from agent_interface.core.errors import ContractError
from agent_interface.evaluator.gateway.http_upstream import (
    AnthropicUpstream,
    OpenAICompatibleUpstream,
)
from agent_interface.evaluator.gateway.prices import PRICE_TABLE, ModelPrice
from agent_interface.evaluator.gateway.scripted import ScriptedUpstream
from agent_interface.evaluator.gateway.upstream import Upstream

__all__ = ["upstream_from_spec"]


def upstream_from_spec(spec: str, key_env: str | None = None, *,
                       prices: Mapping[str, ModelPrice] | None = None) -> Upstream:
    """The upstream a ``--model-upstream`` value names.

    ``echo`` (the scripted echo), ``scripted:PATH`` (a JSON or JSONL script),
    ``openai:URL`` (any OpenAI-compatible base URL, e.g. ``https://api.openai.com/v1``,
    ``http://127.0.0.1:8000/v1``), ``anthropic:URL`` (``https://api.anthropic.com``).
    ``key_env`` names the environment variable holding the key (read at call time); it is
    required for ``anthropic:`` and optional for ``openai:`` (local servers need none).
    ``prices`` adds to (or overrides) the built-in price table for an HTTP upstream (a
    local model: ``{"my-model": ModelPrice(0, 0, 0)}``). Refuses (``ContractError``) any
    other form.
    """
    kind, _, rest = spec.partition(":")
    if spec == "echo":
        return ScriptedUpstream.echo()
    if kind == "scripted" and rest:
        return ScriptedUpstream.from_file(rest)
    if kind == "openai" and rest:
        return OpenAICompatibleUpstream(rest, key_env=key_env, prices={**PRICE_TABLE, **(prices or {})})
    if kind == "anthropic" and rest:
        if not key_env:
            raise ContractError.single("/keyEnv", "upstream_key_env",
                                       "an Anthropic upstream needs the name of its key's environment variable")
        return AnthropicUpstream(rest, key_env=key_env, prices={**PRICE_TABLE, **(prices or {})})
    raise ContractError.single("/upstream", "upstream_spec",
                               "an upstream is echo, scripted:PATH, openai:URL or anthropic:URL")
