"""The model gateway: the evaluator-owned HTTP router every model call of a run goes through.

An agent reaches models only through :class:`ModelGateway` (``server``), which serves
OpenAI Chat Completions, OpenAI Responses and Anthropic Messages (streamed or not) and
``/v1/models`` to each open :class:`GatewayRun` (``run``), attributed by the run's
ephemeral token. Each call is refused or reserved against the run's
:class:`GatewayLimits` (``limits``) before dispatch (``request_rewrite``, ``run``),
forwarded to the evaluator's :class:`Upstream` (``upstream``, chosen by ``upstream_spec``: :class:`ScriptedUpstream`
in ``scripted`` and ``scripted_wire``, or :class:`OpenAICompatibleUpstream` /
:class:`AnthropicUpstream` in ``http_upstream``), and settled from the upstream's own
usage (``usage``, ``call``) into a :class:`ModelCallRecord` (``records``), priced by
``prices``, its served model compared by ``served_model``; errors take each API's shape
(``api_errors``). :meth:`GatewayRun.settle` closes the run into a
:class:`GatewaySettlement`. ``docs/gateway.md`` describes the rules.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agent_interface.evaluator.gateway.http_upstream import (
        AnthropicUpstream,
        OpenAICompatibleUpstream,
    )
    from agent_interface.evaluator.gateway.limits import GatewayLimits
    from agent_interface.evaluator.gateway.prices import PRICE_TABLE_VERSION, ModelPrice
    from agent_interface.evaluator.gateway.records import GatewaySettlement, ModelCallRecord
    from agent_interface.evaluator.gateway.run import GatewayRun
    from agent_interface.evaluator.gateway.scripted import ScriptedUpstream
    from agent_interface.evaluator.gateway.server import ModelGateway
    from agent_interface.evaluator.gateway.upstream import (
        Upstream,
        UpstreamCall,
        UpstreamFailure,
        UpstreamResponse,
    )
    from agent_interface.evaluator.gateway.upstream_spec import upstream_from_spec

_EXPORTS: dict[str, str] = {
    "AnthropicUpstream": "http_upstream",
    "GatewayLimits": "limits",
    "GatewayRun": "run",
    "GatewaySettlement": "records",
    "ModelCallRecord": "records",
    "ModelGateway": "server",
    "ModelPrice": "prices",
    "OpenAICompatibleUpstream": "http_upstream",
    "PRICE_TABLE_VERSION": "prices",
    "ScriptedUpstream": "scripted",
    "Upstream": "upstream",
    "UpstreamCall": "upstream",
    "UpstreamFailure": "upstream",
    "UpstreamResponse": "upstream",
    "upstream_from_spec": "upstream_spec",
}

__all__ = [
    "PRICE_TABLE_VERSION",
    "AnthropicUpstream",
    "GatewayLimits",
    "GatewayRun",
    "GatewaySettlement",
    "ModelCallRecord",
    "ModelGateway",
    "ModelPrice",
    "OpenAICompatibleUpstream",
    "ScriptedUpstream",
    "Upstream",
    "UpstreamCall",
    "UpstreamFailure",
    "UpstreamResponse",
    "upstream_from_spec",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'agent_interface.evaluator.gateway' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"agent_interface.evaluator.gateway.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
