"""Anthropic Messages through the gateway, driven by the official ``anthropic`` SDK."""

from __future__ import annotations

import json

import anthropic
import pytest

from tests.evaluator.gateway.gateway_helpers import (
    RecordingUpstream,
    anthropic_client,
    open_run,
    serving,
)

pytestmark = pytest.mark.asyncio

TOOL = {"name": "get_weather", "description": "Weather of a city",
        "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}


async def test_a_message_is_answered_and_settled_with_the_cache_counted_in_the_input() -> None:
    upstream = RecordingUpstream([{"text": "Bonjour.", "usage": {"inputTokens": 30, "outputTokens": 2,
                                                                 "cachedInputTokens": 10}}])
    async with serving(upstream) as gateway:
        run = open_run(gateway)
        message = await anthropic_client(gateway, run).messages.create(
            model="demo-model", max_tokens=64, messages=[{"role": "user", "content": "Hello"}])
        settlement = run.settle()
    assert message.content[0].type == "text" and message.content[0].text == "Bonjour."
    assert message.usage.input_tokens == 20 and message.usage.cache_read_input_tokens == 10
    (call,) = settlement.calls
    assert (call.api, call.accounted_input_tokens, call.cached_input_tokens, call.output_tokens) == (
        "messages", 30, 10, 2)


async def test_tool_use_and_system_entries_inside_messages_pass_through() -> None:
    upstream = RecordingUpstream([{"toolCalls": [{"id": "toolu_1", "name": "get_weather",
                                                  "arguments": {"city": "Rome"}}]}])
    messages = [{"role": "user", "content": "Weather?"}, {"role": "system", "content": "Use tools."}]
    async with serving(upstream) as gateway:
        run = open_run(gateway)
        message = await anthropic_client(gateway, run).messages.create(
            model="demo-model", max_tokens=64, messages=messages, tools=[TOOL])  # type: ignore[list-item]
    sent = json.loads(upstream.seen[0].body)
    assert sent["messages"] == messages and sent["tools"] == [TOOL]
    (block,) = message.content
    assert block.type == "tool_use" and block.id == "toolu_1" and block.input == {"city": "Rome"}
    assert message.stop_reason == "tool_use"


async def test_a_streamed_message_has_the_api_s_events_and_usage_from_message_delta() -> None:
    async with serving(RecordingUpstream([{"text": "x y z w"}])) as gateway:
        run = open_run(gateway)
        client = anthropic_client(gateway, run)
        async with client.messages.stream(model="demo-model", max_tokens=64,
                                          messages=[{"role": "user", "content": "go"}]) as stream:
            kinds = [event.type async for event in stream]
            final = await stream.get_final_message()
        settlement = run.settle()
    assert kinds[0] == "message_start" and kinds[-1] == "message_stop" and "message_delta" in kinds
    assert final.content[0].type == "text" and final.content[0].text == "x y z w"
    assert final.usage.output_tokens == 4
    assert settlement.calls[0].settled and settlement.calls[0].output_tokens == 4


async def test_beta_query_and_headers_reach_the_upstream() -> None:
    upstream = RecordingUpstream([{"text": "ok"}])
    async with serving(upstream) as gateway:
        run = open_run(gateway)
        await anthropic_client(gateway, run).beta.messages.create(
            model="demo-model", max_tokens=16, messages=[{"role": "user", "content": "hi"}],
            betas=["interleaved-thinking-2025-05-14"], extra_query={"beta": "true"})  # as Claude Code sends it
    (call,) = upstream.seen
    assert call.query == "beta=true" and call.headers["anthropic-beta"] == "interleaved-thinking-2025-05-14"
    assert "x-api-key" not in call.headers and "authorization" not in call.headers


async def test_the_system_prompt_goes_in_front_of_the_agent_s_system_blocks() -> None:
    upstream = RecordingUpstream([{"text": "ok"}])
    async with serving(upstream) as gateway:
        run = open_run(gateway, system_prompt="Be brief.")
        await anthropic_client(gateway, run).messages.create(
            model="demo-model", max_tokens=16, system=[{"type": "text", "text": "Be kind."}],
            messages=[{"role": "user", "content": "hi"}])
    assert json.loads(upstream.seen[0].body)["system"] == [{"type": "text", "text": "Be brief."},
                                                           {"type": "text", "text": "Be kind."}]


async def test_an_ungranted_model_is_the_sdk_s_bad_request_in_anthropic_s_shape() -> None:
    upstream = RecordingUpstream([{"text": "never"}])
    async with serving(upstream) as gateway:
        run = open_run(gateway)
        with pytest.raises(anthropic.BadRequestError) as refused:
            await anthropic_client(gateway, run).messages.create(
                model="claude-opus-4-1", max_tokens=16, messages=[{"role": "user", "content": "hi"}])
    body = refused.value.body
    assert isinstance(body, dict) and body["type"] == "error"
    assert body["error"]["type"] == "invalid_request_error" and "model_not_granted" in body["error"]["message"]
    assert upstream.seen == []


async def test_models_in_anthropic_s_shape() -> None:
    async with serving(RecordingUpstream([{"text": "ok"}])) as gateway:
        run = open_run(gateway)
        models = [model.id async for model in anthropic_client(gateway, run).models.list()]
    assert models == ["demo-model"]
