"""OpenAI Responses through the gateway, driven by the official ``openai`` SDK."""

from __future__ import annotations

import json

import openai
import pytest

from tests.evaluator.gateway.gateway_helpers import (
    RecordingUpstream,
    open_run,
    openai_client,
    serving,
)

pytestmark = pytest.mark.asyncio

FUNCTION_TOOL = {"type": "function", "name": "get_weather", "description": "Weather of a city",
                 "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}
CUSTOM_TOOL = {"type": "custom", "name": "apply_patch", "description": "Apply a patch"}


async def test_a_response_is_answered_and_settled() -> None:
    upstream = RecordingUpstream([{"text": "Paris is sunny.", "usage": {"inputTokens": 20, "outputTokens": 4,
                                                                         "cachedInputTokens": 8,
                                                                         "reasoningTokens": 2}}])
    async with serving(upstream) as gateway:
        run = open_run(gateway)
        response = await openai_client(gateway, run).responses.create(model="demo-model", input="Weather?",
                                                                      max_output_tokens=100)
        settlement = run.settle()
    assert response.output_text == "Paris is sunny." and response.status == "completed"
    assert json.loads(upstream.seen[0].body)["max_output_tokens"] == 100
    (call,) = settlement.calls
    assert (call.api, call.accounted_input_tokens, call.output_tokens, call.cached_input_tokens,
            call.reasoning_tokens, call.settled) == ("responses", 20, 4, 8, 2, True)


async def test_function_and_custom_tool_calls_come_back_and_tools_pass_through() -> None:
    upstream = RecordingUpstream([{"toolCalls": [{"id": "call_1", "name": "get_weather", "arguments": {"city": "Oslo"}},
                                                 {"id": "call_2", "name": "apply_patch", "input": "*** Begin Patch"}]}])
    async with serving(upstream) as gateway:
        run = open_run(gateway)
        response = await openai_client(gateway, run).responses.create(
            model="demo-model", input=[{"role": "user", "content": "go"}], tools=[FUNCTION_TOOL, CUSTOM_TOOL])
    assert json.loads(upstream.seen[0].body)["tools"] == [FUNCTION_TOOL, CUSTOM_TOOL]
    function_call, custom_call = response.output
    assert function_call.type == "function_call" and function_call.call_id == "call_1"
    assert json.loads(function_call.arguments) == {"city": "Oslo"}
    assert custom_call.type == "custom_tool_call" and custom_call.input == "*** Begin Patch"


async def test_a_streamed_response_has_the_api_s_event_sequence_and_settles() -> None:
    async with serving(RecordingUpstream([{"text": "a b c"}])) as gateway:
        run = open_run(gateway)
        client = openai_client(gateway, run)
        kinds = []
        async with client.responses.stream(model="demo-model", input="hi") as stream:
            async for event in stream:
                kinds.append(event.type)
            final = await stream.get_final_response()
        settlement = run.settle()
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
    assert kinds.count("response.output_text.delta") == 3
    assert final.output_text == "a b c" and final.usage is not None and final.usage.output_tokens == 3
    assert settlement.calls[0].settled and settlement.calls[0].stream


async def test_the_system_prompt_becomes_instructions_in_front_of_the_agent_s() -> None:
    upstream = RecordingUpstream([{"text": "ok"}])
    async with serving(upstream) as gateway:
        run = open_run(gateway, system_prompt="Be brief.")
        await openai_client(gateway, run).responses.create(model="demo-model", input="hi", instructions="Be kind.")
    assert json.loads(upstream.seen[0].body)["instructions"] == "Be brief.\n\nBe kind."


async def test_stored_state_the_gateway_cannot_meter_is_refused() -> None:
    upstream = RecordingUpstream([{"text": "never"}])
    async with serving(upstream) as gateway:
        run = open_run(gateway)
        with pytest.raises(openai.BadRequestError) as refused:
            await openai_client(gateway, run).responses.create(model="demo-model", input="hi",
                                                               previous_response_id="resp_1")
    assert refused.value.code == "stored_state_unsupported" and upstream.seen == []


async def test_streamed_function_and_custom_tool_calls_accumulate_in_the_sdk() -> None:
    upstream = RecordingUpstream([{"toolCalls": [{"id": "call_1", "name": "get_weather", "arguments": {"city": "Oslo"}},
                                                 {"id": "call_2", "name": "apply_patch", "input": "*** Begin Patch"}]}])
    async with serving(upstream) as gateway:
        run = open_run(gateway)
        async with openai_client(gateway, run).responses.stream(
                model="demo-model", input="go", tools=[FUNCTION_TOOL, CUSTOM_TOOL]) as stream:  # type: ignore[list-item]
            kinds = [event.type async for event in stream]
            final = await stream.get_final_response()
    assert "response.function_call_arguments.delta" in kinds and "response.custom_tool_call_input.delta" in kinds
    function_call, custom_call = final.output
    assert function_call.type == "function_call" and json.loads(function_call.arguments) == {"city": "Oslo"}
    assert custom_call.type == "custom_tool_call" and custom_call.input == "*** Begin Patch"


async def test_a_background_response_is_refused_and_a_foreground_one_served() -> None:
    upstream = RecordingUpstream([{"text": "ok"}])
    async with serving(upstream) as gateway:
        run = open_run(gateway)
        client = openai_client(gateway, run)
        with pytest.raises(openai.BadRequestError) as refused:
            await client.responses.create(model="demo-model", input="hi", background=True)
        assert (await client.responses.create(model="demo-model", input="hi", background=False)).output_text == "ok"
    assert refused.value.code == "stored_state_unsupported" and len(upstream.seen) == 1
