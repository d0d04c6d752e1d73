"""OpenAI Chat Completions through the gateway, driven by the official ``openai`` SDK."""

from __future__ import annotations

import json

import openai
import pytest

from tests.evaluator.gateway.gateway_helpers import (
    USER,
    WEATHER_TOOL,
    RecordingUpstream,
    open_run,
    openai_client,
    serving,
    track,
)

pytestmark = pytest.mark.asyncio


async def test_a_completion_is_answered_and_settled_from_the_upstream_usage() -> None:
    upstream = RecordingUpstream([{"text": "Hi, how are you?", "usage": {"inputTokens": 9, "outputTokens": 5}}])
    async with serving(upstream) as gateway:
        run = open_run(gateway)
        reply = await openai_client(gateway, run).chat.completions.create(model="demo-model", messages=USER)
        assert reply.choices[0].message.content == "Hi, how are you?"
        assert reply.usage is not None and reply.usage.prompt_tokens == 9
        assert json.loads(upstream.seen[0].body)["model"] == "echo"  # routed to the resolved model
        settlement = run.settle()
    (call,) = settlement.calls
    assert (call.api, call.status, call.settled, call.accounted_input_tokens, call.output_tokens) == (
        "chat.completions", "succeeded", True, 9, 5)
    assert (call.requested_model, call.served_model, call.served_match, call.http_status) == (
        "demo-model", "echo", "exact", 200)
    assert settlement.usage_within_limits and settlement.valid and settlement.model_calls == 1


async def test_tools_pass_through_untouched_and_tool_calls_come_back() -> None:
    upstream = RecordingUpstream([{"toolCalls": [{"id": "call_7", "name": "get_weather",
                                                  "arguments": {"city": "Paris"}}]}])
    messages = [{"role": "system", "content": "You are terse."}, *USER]
    async with serving(upstream) as gateway:
        run = open_run(gateway)
        reply = await openai_client(gateway, run).chat.completions.create(
            model="demo-model", messages=messages, tools=[WEATHER_TOOL], tool_choice="auto")
    sent = json.loads(upstream.seen[0].body)
    assert sent["tools"] == [WEATHER_TOOL] and sent["tool_choice"] == "auto" and sent["messages"] == messages
    (tool_call,) = reply.choices[0].message.tool_calls or []
    assert reply.choices[0].finish_reason == "tool_calls"
    assert tool_call.id == "call_7" and tool_call.function.name == "get_weather"
    assert json.loads(tool_call.function.arguments) == {"city": "Paris"}


async def test_a_streamed_completion_carries_usage_when_asked() -> None:
    async with serving(RecordingUpstream([{"text": "one two three"}])) as gateway:
        run = open_run(gateway)
        stream = await openai_client(gateway, run).chat.completions.create(
            model="demo-model", messages=USER, stream=True, stream_options={"include_usage": True})
        chunks = [chunk async for chunk in stream]
        settlement = run.settle()
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "one two three"
    assert chunks[-1].choices == [] and chunks[-1].usage is not None and chunks[-1].usage.completion_tokens == 3
    assert settlement.calls[0].settled and settlement.calls[0].output_tokens == 3 and settlement.calls[0].stream


async def test_the_usage_chunk_the_gateway_asked_for_is_not_forwarded_when_the_agent_did_not_ask() -> None:
    upstream = RecordingUpstream([{"text": "one two"}])
    async with serving(upstream) as gateway:
        run = open_run(gateway)
        stream = await openai_client(gateway, run).chat.completions.create(model="demo-model", messages=USER,
                                                                           stream=True)
        chunks = [chunk async for chunk in stream]
        settlement = run.settle()
    assert json.loads(upstream.seen[0].body)["stream_options"] == {"include_usage": True}
    assert all(chunk.choices for chunk in chunks) and all(chunk.usage is None for chunk in chunks)
    assert settlement.calls[0].settled and settlement.calls[0].output_tokens == 2


async def test_the_system_prompt_is_a_leading_system_message_counted_apart_from_the_raw_input() -> None:
    upstream = RecordingUpstream([{"text": "ok"}])
    async with serving(upstream) as gateway:
        run = open_run(gateway, system_prompt="Answer in French please")
        await openai_client(gateway, run).chat.completions.create(model="demo-model", messages=USER)
        settlement = run.settle()
    assert json.loads(upstream.seen[0].body)["messages"][0] == {"role": "system",
                                                                 "content": "Answer in French please"}
    (call,) = settlement.calls
    assert (call.accounted_input_tokens, call.input_tokens) == (6, 2)  # 4 words injected, 2 from the agent
    assert settlement.input_tokens == 2 and settlement.accounted_input_tokens == 6


async def test_an_ungranted_model_is_refused_as_the_sdk_s_bad_request_and_recorded() -> None:
    upstream = RecordingUpstream([{"text": "never"}])
    async with serving(upstream) as gateway:
        run = open_run(gateway)
        with pytest.raises(openai.BadRequestError) as refused:
            await openai_client(gateway, run).chat.completions.create(model="gpt-4o", messages=USER)
        settlement = run.settle()
    assert refused.value.code == "model_not_granted" and refused.value.status_code == 400
    assert upstream.seen == [] and settlement.model_calls == 0 and settlement.refused_calls == 1
    assert settlement.calls[0].refusal == "model_not_granted"
    assert settlement.events[0]["event"] == "model.request_refused"


async def test_a_model_granted_by_the_run_is_accepted() -> None:
    async with serving(RecordingUpstream([{"text": "ok"}])) as gateway:
        run = open_run(gateway, granted_models={"claude-haiku-4-5"})
        reply = await openai_client(gateway, run).chat.completions.create(model="claude-haiku-4-5", messages=USER)
    assert reply.choices[0].message.content == "ok"


async def test_an_unknown_token_is_the_sdk_s_authentication_error() -> None:
    async with serving(RecordingUpstream([{"text": "never"}])) as gateway:
        open_run(gateway)
        client = track(openai.AsyncOpenAI(base_url=gateway.origin + "/v1", api_key="not-a-run", max_retries=0))
        with pytest.raises(openai.AuthenticationError):
            await client.chat.completions.create(model="demo-model", messages=USER)


async def test_the_key_header_attributes_a_call_without_the_path_prefix() -> None:
    async with serving(RecordingUpstream([{"text": "ok"}])) as gateway:
        run = open_run(gateway)
        client = track(openai.AsyncOpenAI(base_url=gateway.origin + "/v1", api_key=run.token, max_retries=0))
        reply = await client.chat.completions.create(model="demo-model", messages=USER)
        assert reply.choices[0].message.content == "ok" and len(run.settle().calls) == 1


async def test_a_settled_run_refuses_later_calls() -> None:
    async with serving(RecordingUpstream([{"text": "ok"}], when_exhausted="cycle")) as gateway:
        run = open_run(gateway)
        client = openai_client(gateway, run)
        await client.chat.completions.create(model="demo-model", messages=USER)
        run.settle()
        with pytest.raises(openai.AuthenticationError):
            await client.chat.completions.create(model="demo-model", messages=USER)


async def test_models_lists_the_plan_s_model_only() -> None:
    async with serving(RecordingUpstream([{"text": "ok"}])) as gateway:
        run = open_run(gateway)
        client = openai_client(gateway, run)
        models = [model.id async for model in client.models.list()]
        assert models == ["demo-model"]
        assert (await client.models.retrieve("demo-model")).id == "demo-model"
        with pytest.raises(openai.NotFoundError):
            await client.models.retrieve("gpt-4o")


async def test_streamed_tool_calls_accumulate_in_the_sdk_s_stream_helper() -> None:
    upstream = RecordingUpstream([{"toolCalls": [{"id": "call_9", "name": "get_weather", "arguments": {"city": "Lima"}}]}])
    async with serving(upstream) as gateway:
        run = open_run(gateway)
        async with openai_client(gateway, run).chat.completions.stream(
                model="demo-model", messages=USER, tools=[WEATHER_TOOL]) as stream:  # type: ignore[list-item]
            final = await stream.get_final_completion()
    (tool_call,) = final.choices[0].message.tool_calls or []
    assert tool_call.id == "call_9" and json.loads(tool_call.function.arguments) == {"city": "Lima"}
