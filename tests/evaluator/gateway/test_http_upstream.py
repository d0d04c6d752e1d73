"""The HTTP upstreams against stand-ins of the real APIs on loopback: keys, retries, streams, secrecy."""

from __future__ import annotations

import contextlib
import json
import logging
import secrets
import socket
from collections.abc import AsyncIterator
from typing import Any

import openai
import pytest
from aiohttp import web

from agent_interface.evaluator.gateway import (
    AnthropicUpstream,
    ModelPrice,
    OpenAICompatibleUpstream,
    ScriptedUpstream,
    UpstreamCall,
)
from tests.evaluator.gateway.gateway_helpers import (
    USER,
    anthropic_client,
    open_run,
    openai_client,
    serving,
)

pytestmark = pytest.mark.asyncio

FREE = {"echo": ModelPrice(0, 0, 0)}


class StandIn:
    """An OpenAI- and Anthropic-like server: key check, scripted answers, scheduled failures."""

    def __init__(self, key: str, replies: list[dict[str, Any]]) -> None:
        self.key = key
        self.script = ScriptedUpstream(replies, when_exhausted="cycle")
        self.failures: list[int] = []
        self.requests: list[dict[str, Any]] = []
        self.cut_stream = False

    async def handle(self, request: web.Request) -> web.StreamResponse:
        anthropic_api = request.path.startswith("/v1/messages")
        given = request.headers.get("x-api-key") if anthropic_api else request.headers.get("authorization")
        expected = self.key if anthropic_api else "Bearer " + self.key
        self.requests.append({"path": request.path, "query": request.query_string,
                              "headers": dict(request.headers)})
        if given != expected:
            return web.json_response({"error": {"message": "Incorrect API key provided", "type": "invalid_request_error",
                                                "code": "invalid_api_key"}}, status=401)
        if anthropic_api and "anthropic-version" not in request.headers:
            return web.json_response({"type": "error", "error": {"type": "invalid_request_error",
                                                                 "message": "anthropic-version missing"}}, status=400)
        if self.failures:
            status = self.failures.pop(0)
            return web.json_response({"error": {"message": "slow down", "type": "rate_limit"}}, status=status,
                                     headers={"retry-after": "0"})
        payload = await request.json()
        if request.path.endswith("/count_tokens"):
            return web.json_response({"input_tokens": 42})
        api = "messages" if anthropic_api else ("responses" if request.path.endswith("/responses")
                                                else "chat.completions")
        cap = payload.get("max_tokens") or payload.get("max_output_tokens") or payload.get("max_completion_tokens")
        call = UpstreamCall(api=api, path=request.path, query="", headers={}, body=b"", payload=payload,
                            stream=payload.get("stream") is True, run_id="standin", max_output_tokens=cap)
        status, body = self.script.answer(call)
        if isinstance(body, bytes):
            return web.Response(status=status, body=body, content_type="application/json")
        answer = web.StreamResponse(headers={"content-type": "text/event-stream"})
        await answer.prepare(request)
        for index, event in enumerate(body):
            if self.cut_stream and index == 2:
                assert request.transport is not None
                request.transport.close()
                return answer
            await answer.write(event)
        await answer.write_eof()
        return answer


@contextlib.asynccontextmanager
async def stand_in(key: str, replies: list[dict[str, Any]]) -> AsyncIterator[tuple[StandIn, str]]:
    server = StandIn(key, replies)
    app = web.Application()
    app.router.add_route("POST", "/{tail:.*}", server.handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        yield server, f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


@pytest.fixture
def secret_key(monkeypatch: pytest.MonkeyPatch) -> str:
    key = "sk-test-" + secrets.token_hex(16)
    monkeypatch.setenv("GATEWAY_TEST_KEY", key)
    return key


async def test_an_openai_compatible_upstream_gets_the_key_from_the_named_variable(secret_key: str) -> None:
    async with stand_in(secret_key, [{"text": "real answer"}]) as (server, base):
        upstream = OpenAICompatibleUpstream(base + "/v1", key_env="GATEWAY_TEST_KEY", prices=FREE)
        async with serving(upstream) as gateway:
            run = open_run(gateway)
            client = openai_client(gateway, run)
            reply = await client.chat.completions.create(model="demo-model", messages=USER)
            stream = await client.chat.completions.create(model="demo-model", messages=USER, stream=True)
            streamed = "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])
            response = await client.responses.create(model="demo-model", input="hi")
            settlement = run.settle()
    assert reply.choices[0].message.content == "real answer" == streamed == response.output_text
    assert [r["path"] for r in server.requests] == ["/v1/chat/completions"] * 2 + ["/v1/responses"]
    assert server.requests[0]["headers"]["Authorization"] == "Bearer " + secret_key
    assert all(call.settled and call.status == "succeeded" for call in settlement.calls)


async def test_429_and_500_are_retried_as_infrastructure_not_model_calls(secret_key: str) -> None:
    async with stand_in(secret_key, [{"text": "after retries"}]) as (server, base):
        server.failures = [429, 500, 503]
        upstream = OpenAICompatibleUpstream(base + "/v1", key_env="GATEWAY_TEST_KEY", prices=FREE, backoff=0.01)
        async with serving(upstream) as gateway:
            run = open_run(gateway)
            reply = await openai_client(gateway, run).chat.completions.create(model="demo-model", messages=USER)
            settlement = run.settle()
    assert reply.choices[0].message.content == "after retries"
    assert settlement.model_calls == 1 and settlement.calls[0].upstream_attempts == 4


async def test_retries_are_bounded_and_a_lasting_429_is_not_passed_on_as_429(secret_key: str) -> None:
    async with stand_in(secret_key, [{"text": "never"}]) as (server, base):
        server.failures = [429] * 10
        upstream = OpenAICompatibleUpstream(base + "/v1", key_env="GATEWAY_TEST_KEY", prices=FREE, backoff=0.01,
                                            retries=2)
        async with serving(upstream) as gateway:
            run = open_run(gateway)
            with pytest.raises(openai.APIStatusError) as failed:
                await openai_client(gateway, run).chat.completions.create(model="demo-model", messages=USER)
            settlement = run.settle()
    assert failed.value.status_code == 502 and len(server.requests) == 3
    assert settlement.calls[0].reason == "upstream_status" and settlement.calls[0].upstream_attempts == 3


async def test_an_anthropic_upstream_gets_x_api_key_and_a_version(secret_key: str) -> None:
    async with stand_in(secret_key, [{"text": "claude says hi"}]) as (server, base):
        upstream = AnthropicUpstream(base, key_env="GATEWAY_TEST_KEY", prices=FREE)
        async with serving(upstream) as gateway:
            run = open_run(gateway)
            client = anthropic_client(gateway, run)
            message = await client.messages.create(model="demo-model", max_tokens=32,
                                                   messages=[{"role": "user", "content": "hi"}])
            async with client.messages.stream(model="demo-model", max_tokens=32,
                                              messages=[{"role": "user", "content": "hi"}]) as stream:
                final = await stream.get_final_message()
            counted = await client.messages.count_tokens(model="demo-model",
                                                         messages=[{"role": "user", "content": "hi"}])
            with pytest.raises(openai.BadRequestError) as mismatch:
                await openai_client(gateway, run).chat.completions.create(model="demo-model", messages=USER)
            settlement = run.settle()
    assert message.content[0].type == "text" and message.content[0].text == "claude says hi"
    assert final.content[0].type == "text" and final.content[0].text == "claude says hi"
    assert server.requests[0]["headers"]["x-api-key"] == secret_key
    assert server.requests[0]["headers"]["anthropic-version"]  # the agent's own, forwarded
    assert mismatch.value.code == "api_not_supported"
    assert counted.input_tokens == 42 and server.requests[-1]["path"] == "/v1/messages/count_tokens"
    assert [c.settled for c in settlement.calls if c.refusal is None] == [True, True]


async def test_an_anthropic_version_is_added_when_the_agent_sent_none(secret_key: str) -> None:
    async with stand_in(secret_key, [{"text": "ok"}]) as (server, base):
        upstream = AnthropicUpstream(base, key_env="GATEWAY_TEST_KEY", prices=FREE)
        payload = {"model": "echo", "max_tokens": 8, "messages": [{"role": "user", "content": "hi"}]}
        call = UpstreamCall(api="messages", path="/v1/messages", query="", headers={},
                            body=json.dumps(payload).encode(), payload=payload, stream=False, run_id="r",
                            max_output_tokens=8)
        response = await upstream.send(call)
        body = b"".join([chunk async for chunk in response.chunks])
        await upstream.close()
    assert response.status == 200 and b"ok" in body
    assert server.requests[0]["headers"]["anthropic-version"] == "2023-06-01"


async def test_a_missing_key_variable_is_a_failure_not_an_anonymous_call(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GATEWAY_TEST_KEY", raising=False)
    async with stand_in("k", [{"text": "never"}]) as (server, base):
        upstream = OpenAICompatibleUpstream(base + "/v1", key_env="GATEWAY_TEST_KEY", prices=FREE)
        async with serving(upstream) as gateway:
            run = open_run(gateway)
            with pytest.raises(openai.APIStatusError):
                await openai_client(gateway, run).chat.completions.create(model="demo-model", messages=USER)
            assert run.settle().calls[0].reason == "upstream_key_missing" and server.requests == []


async def test_a_stream_cut_by_the_upstream_is_a_failed_unsettled_call(secret_key: str) -> None:
    async with stand_in(secret_key, [{"text": "a b c d e f"}]) as (server, base):
        server.cut_stream = True
        upstream = OpenAICompatibleUpstream(base + "/v1", key_env="GATEWAY_TEST_KEY", prices=FREE)
        async with serving(upstream) as gateway:
            run = open_run(gateway)
            stream = await openai_client(gateway, run).chat.completions.create(model="demo-model", messages=USER,
                                                                               stream=True)
            with pytest.raises(openai.APIError):
                async for _ in stream:
                    pass
            settlement = run.settle()
    (call,) = settlement.calls
    assert call.status == "failed" and call.reason == "upstream_stream_cut" and not call.settled
    assert not settlement.valid


async def test_an_unreachable_upstream_is_a_failed_call_never_dispatched() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    upstream = OpenAICompatibleUpstream(f"http://127.0.0.1:{port}/v1", prices=FREE, retries=1, backoff=0.01)
    async with serving(upstream) as gateway:
        run = open_run(gateway)
        with pytest.raises(openai.APIStatusError) as failed:
            await openai_client(gateway, run).chat.completions.create(model="demo-model", messages=USER)
        settlement = run.settle()
    assert failed.value.status_code == 502
    (call,) = settlement.calls
    assert (call.status, call.reason, call.settled, call.upstream_attempts) == (
        "failed", "upstream_unreachable", True, 2)


async def test_the_key_never_appears_in_records_events_reprs_logs_errors_or_answers(
        secret_key: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    seen: list[str] = []
    async with stand_in(secret_key, [{"text": "fine"}, {"status": 400, "error": "no"}]) as (server, base):
        server.failures = [500]
        upstream = OpenAICompatibleUpstream(base + "/v1", key_env="GATEWAY_TEST_KEY", prices=FREE, backoff=0.01)
        anthropic_upstream = AnthropicUpstream(base, key_env="GATEWAY_TEST_KEY", prices=FREE)
        seen += [repr(upstream), repr(anthropic_upstream), str(vars(upstream)), str(vars(anthropic_upstream))]
        async with serving(upstream) as gateway:
            run = open_run(gateway)
            client = openai_client(gateway, run)
            raw = await client.chat.completions.with_raw_response.create(model="demo-model", messages=USER)
            seen.append(raw.http_response.text + str(raw.headers))
            for request in ({"messages": USER}, {"messages": USER, "stream": True}):
                try:
                    result = await client.chat.completions.create(model="demo-model", **request)  # type: ignore[call-overload]
                    if request.get("stream"):
                        seen += [repr(chunk) async for chunk in result]
                except openai.APIError as error:
                    chain: BaseException | None = error
                    while chain is not None:
                        seen += [str(chain), repr(chain), repr(getattr(chain, "body", None))]
                        chain = chain.__cause__ or chain.__context__
            seen += [repr(gateway), repr(run)]
            settlement = run.settle()
        seen += [repr(settlement), json.dumps(list(settlement.events), default=str)]
        seen += [record.message for record in caplog.records] + [caplog.text]
    assert settlement.model_calls == 3
    everything = "\n".join(seen)
    assert secret_key not in everything and secret_key[8:] not in everything
