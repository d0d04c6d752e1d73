"""Shared helpers of the gateway tests: a gateway on loopback, a run, the SDK clients."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import anthropic
import openai

from agent_interface.evaluator.gateway import (
    GatewayLimits,
    GatewayRun,
    ModelGateway,
    ScriptedUpstream,
    UpstreamCall,
    UpstreamResponse,
)

RESOLVED = {"requested": "demo-model", "provider": "local", "model": "echo", "snapshot": "echo-1",
            "reasoningEffort": "low"}
ROOMY = GatewayLimits(max_model_calls=100, max_input_tokens=10_000_000, max_output_tokens=1_000_000,
                      max_total_tokens=None, max_cost_usd=0.0)


class RecordingUpstream(ScriptedUpstream):
    """A scripted upstream that keeps every call it was sent."""

    def __init__(self, replies: Sequence[Mapping[str, Any]], **options: Any) -> None:
        super().__init__(replies, **options)
        self.seen: list[UpstreamCall] = []

    async def send(self, call: UpstreamCall) -> UpstreamResponse:
        self.seen.append(call)
        return await super().send(call)


_CLIENTS: list[Any] = []


@contextlib.asynccontextmanager
async def serving(upstream: Any, **options: Any) -> AsyncIterator[ModelGateway]:
    gateway = ModelGateway(upstream, **options)
    await gateway.start()
    try:
        yield gateway
    finally:
        while _CLIENTS:
            await _CLIENTS.pop().close()
        await gateway.close()


def open_run(gateway: ModelGateway, limits: GatewayLimits = ROOMY, **options: Any) -> GatewayRun:
    return gateway.open_run(run_id=options.pop("run_id", "run-1"), requested_model="demo-model",
                            resolved=RESOLVED, limits=limits, **options)


def openai_client(gateway: ModelGateway, run: GatewayRun, **options: Any) -> openai.AsyncOpenAI:
    env = run.launch_env(gateway.origin)
    client = openai.AsyncOpenAI(base_url=env["OPENAI_BASE_URL"], api_key=env["OPENAI_API_KEY"],
                                **{"max_retries": 0, **options})
    _CLIENTS.append(client)
    return client


def anthropic_client(gateway: ModelGateway, run: GatewayRun, **options: Any) -> anthropic.AsyncAnthropic:
    env = run.launch_env(gateway.origin)
    client = anthropic.AsyncAnthropic(base_url=env["ANTHROPIC_BASE_URL"], api_key=env["ANTHROPIC_API_KEY"],
                                      **{"max_retries": 0, **options})
    _CLIENTS.append(client)
    return client


def track(client: Any) -> Any:
    """Close ``client`` when the gateway closes."""
    _CLIENTS.append(client)
    return client


USER = [{"role": "user", "content": "hello there"}]
WEATHER_TOOL = {"type": "function", "function": {"name": "get_weather", "description": "Weather of a city",
                                                 "parameters": {"type": "object",
                                                                "properties": {"city": {"type": "string"}},
                                                                "required": ["city"]}}}
