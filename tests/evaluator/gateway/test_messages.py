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


async def test_a_streamed_tool_use_accumulates_in_the_sdk() -> None:
    upstream = RecordingUpstream([{"text": "Let me look.", "toolCalls": [{"id": "toolu_2", "name": "get_weather",
                                                                           "arguments": {"city": "Kyiv"}}]}])
    async with serving(upstream) as gateway:
        run = open_run(gateway)
        async with anthropic_client(gateway, run).messages.stream(
                model="demo-model", max_tokens=64, messages=[{"role": "user", "content": "go"}],
                tools=[TOOL]) as stream:  # type: ignore[list-item]
            final = await stream.get_final_message()
    text, tool = final.content
    assert text.type == "text" and text.text == "Let me look."
    assert tool.type == "tool_use" and tool.input == {"city": "Kyiv"} and final.stop_reason == "tool_use"


async def test_a_thinking_budget_is_lowered_below_the_capped_max_tokens_and_kept_when_it_fits() -> None:
    from agent_interface.evaluator.gateway import GatewayLimits

    upstream = RecordingUpstream([{"text": "ok"}], when_exhausted="cycle")
    async with serving(upstream) as gateway:
        run = open_run(gateway, GatewayLimits(10, 10**9, 3000, None, 0.0))
        client = anthropic_client(gateway, run)
        await client.messages.create(model="demo-model", max_tokens=8000, messages=[{"role": "user", "content": "a"}],
                                     thinking={"type": "enabled", "budget_tokens": 5000})
        await client.messages.create(model="demo-model", max_tokens=2000, messages=[{"role": "user", "content": "a"}],
                                     thinking={"type": "enabled", "budget_tokens": 1500})
    lowered, kept = (json.loads(call.body) for call in upstream.seen)
    assert lowered["max_tokens"] == 3000 and lowered["thinking"]["budget_tokens"] == 2999
    assert kept["max_tokens"] == 2000 and kept["thinking"]["budget_tokens"] == 1500


async def test_a_token_count_is_free_consumes_no_reply_and_is_traced() -> None:
    upstream = RecordingUpstream([{"text": "the one reply"}])
    async with serving(upstream) as gateway:
        run = open_run(gateway, system_prompt="Be brief.")
        client = anthropic_client(gateway, run)
        counted = await client.messages.count_tokens(model="demo-model",
                                                     messages=[{"role": "user", "content": "three words here"}])
        message = await client.messages.create(model="demo-model", max_tokens=16,
                                               messages=[{"role": "user", "content": "hi"}])
        with pytest.raises(anthropic.BadRequestError):
            await client.messages.count_tokens(model="other-model", messages=[{"role": "user", "content": "x"}])
        settlement = run.settle()
    assert counted.input_tokens == 5  # the agent's 3 words and the injected prompt's 2
    assert message.content[0].type == "text" and message.content[0].text == "the one reply"
    assert settlement.model_calls == 1 and len(settlement.calls) == 1
    assert [e["event"] for e in settlement.events].count("model.count_tokens") == 2


async def test_x_api_key_attributes_a_call_and_an_unknown_one_is_anthropic_s_authentication_error() -> None:
    from tests.evaluator.gateway.gateway_helpers import track

    async with serving(RecordingUpstream([{"text": "ok"}])) as gateway:
        run = open_run(gateway)
        known = track(anthropic.AsyncAnthropic(base_url=gateway.origin, api_key=run.token, max_retries=0))
        unknown = track(anthropic.AsyncAnthropic(base_url=gateway.origin, api_key="sk-ant-nope", max_retries=0))
        message = await known.messages.create(model="demo-model", max_tokens=8,
                                              messages=[{"role": "user", "content": "hi"}])
        with pytest.raises(anthropic.AuthenticationError) as refused:
            await unknown.messages.create(model="demo-model", max_tokens=8,
                                          messages=[{"role": "user", "content": "hi"}])
    assert message.content[0].type == "text" and message.content[0].text == "ok"
    assert isinstance(refused.value.body, dict) and refused.value.body["error"]["type"] == "authentication_error"
