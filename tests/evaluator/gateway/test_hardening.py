"""Bounds of the gateway: connections, in-flight calls, request size, slow clients, failures mid-way."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import anthropic
import openai
import pytest

from agent_interface.evaluator.gateway import UpstreamCall, UpstreamResponse
from tests.evaluator.gateway.gateway_helpers import (
    USER,
    RecordingUpstream,
    anthropic_client,
    open_run,
    openai_client,
    serving,
)

pytestmark = pytest.mark.asyncio


class SlowStream(RecordingUpstream):
    """Streams its events with a pause between them, counting concurrent sends."""

    def __init__(self, replies: list[dict[str, Any]], pause: float) -> None:
        super().__init__(replies, when_exhausted="cycle")
        self.pause = pause
        self.active = 0
        self.peak = 0

    async def send(self, call: UpstreamCall) -> UpstreamResponse:
        self.active += 1
        self.peak = max(self.peak, self.active)
        response = await super().send(call)
        inner = response.chunks

        async def paced() -> Any:
            try:
                async for chunk in inner:
                    await asyncio.sleep(self.pause)
                    yield chunk
            finally:
                self.active -= 1

        response.chunks = paced()
        return response


async def _idle_connections(origin: str, count: int) -> list[tuple[asyncio.StreamReader, asyncio.StreamWriter]]:
    host, port = origin.removeprefix("http://").split(":")
    return [await asyncio.open_connection(host, int(port)) for _ in range(count)]


async def test_connections_over_the_cap_are_closed_at_once_and_the_rest_keep_working() -> None:
    async with serving(RecordingUpstream([{"text": "ok"}], when_exhausted="cycle"), max_connections=8) as gateway:
        idle = await _idle_connections(gateway.origin, 30)
        await asyncio.sleep(0.2)
        assert gateway.connections <= 8 and gateway.refused_connections >= 22
        closed = 0
        for reader, _ in idle:
            with contextlib.suppress(TimeoutError, ConnectionError):
                if await asyncio.wait_for(reader.read(1), 0.05) == b"":
                    closed += 1
        assert closed >= 22
        for _, writer in idle:
            writer.close()
        await asyncio.sleep(0.2)
        run = open_run(gateway)
        reply = await openai_client(gateway, run).chat.completions.create(model="demo-model", messages=USER)
        assert reply.choices[0].message.content == "ok"


async def test_a_connection_that_never_completes_its_request_head_is_closed() -> None:
    async with serving(RecordingUpstream([{"text": "ok"}]), keepalive_timeout=0.5) as gateway:
        (reader, writer), = await _idle_connections(gateway.origin, 1)
        writer.write(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n")
        ended = False
        for _ in range(30):  # one more header line every 0.1 s, never the end of the head
            writer.write(b"X-Slow: 1\r\n")
            with contextlib.suppress(ConnectionError):
                await writer.drain()
            with contextlib.suppress(TimeoutError):
                if await asyncio.wait_for(reader.read(1024), 0.1) == b"":
                    ended = True
                    break
        writer.close()
    assert ended


async def test_a_body_not_sent_in_time_is_refused_and_recorded() -> None:
    async with serving(RecordingUpstream([{"text": "never"}]), body_timeout=0.3) as gateway:
        run = open_run(gateway)
        (reader, writer), = await _idle_connections(gateway.origin, 1)
        writer.write(b"POST /r/" + run.token.encode() + b"/v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
                     b"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"model\":")
        await writer.drain()
        answer = await asyncio.wait_for(reader.read(4096), 5)
        writer.close()
        settlement = run.settle()
    assert answer.startswith(b"HTTP/1.1 400") and b"request_timeout" in answer
    assert settlement.calls[0].refusal == "request_timeout" and settlement.model_calls == 0


async def test_a_request_up_to_the_bound_is_served_and_a_larger_one_is_413_in_the_api_shape() -> None:
    limit = 64 << 10
    upstream = RecordingUpstream([{"text": "ok"}], when_exhausted="cycle")
    async with serving(upstream, max_request_bytes=limit) as gateway:
        run = open_run(gateway)
        client = openai_client(gateway, run)
        fits = [{"role": "user", "content": "x" * (limit - 200)}]
        await client.chat.completions.create(model="demo-model", messages=fits)
        with pytest.raises(openai.APIStatusError) as too_large:
            await client.chat.completions.create(model="demo-model", messages=[{"role": "user",
                                                                                 "content": "x" * (2 * limit)}])
        with pytest.raises(anthropic.APIStatusError) as too_large_messages:
            await anthropic_client(gateway, run).messages.create(
                model="demo-model", max_tokens=8, messages=[{"role": "user", "content": "x" * (2 * limit)}])
        settlement = run.settle()
    assert too_large.value.status_code == 413 and too_large.value.code == "request_too_large"
    assert too_large_messages.value.status_code == 413
    assert isinstance(too_large_messages.value.body, dict)
    assert too_large_messages.value.body["error"]["type"] == "request_too_large"
    assert len(upstream.seen) == 1 and [c.refusal for c in settlement.calls] == [
        None, "request_too_large", "request_too_large"]


async def test_calls_beyond_the_in_flight_bound_wait_their_turn() -> None:
    upstream = SlowStream([{"text": "a b"}], pause=0.02)
    async with serving(upstream, max_in_flight=2) as gateway:
        run = open_run(gateway)
        client = openai_client(gateway, run)
        replies = await asyncio.gather(*(client.chat.completions.create(model="demo-model", messages=USER)
                                         for _ in range(10)))
    assert upstream.peak <= 2 and all(r.choices[0].message.content == "a b" for r in replies)


async def test_a_client_that_leaves_mid_stream_is_recorded_and_its_usage_still_settles() -> None:
    upstream = SlowStream([{"text": " ".join(["word"] * 30)}], pause=0.01)
    async with serving(upstream) as gateway:
        run = open_run(gateway)
        stream = await openai_client(gateway, run).chat.completions.create(model="demo-model", messages=USER,
                                                                           stream=True)
        async for _ in stream:
            break
        await stream.close()
        for _ in range(100):
            if run.in_flight == 0:
                break
            await asyncio.sleep(0.02)
        settlement = run.settle()
    (call,) = settlement.calls
    assert call.status == "failed" and call.reason == "client_disconnected"
    assert call.settled and call.output_tokens == 30


async def test_an_unreadable_answer_is_recorded_unsettled() -> None:
    class Garbled(RecordingUpstream):
        async def send(self, call: UpstreamCall) -> UpstreamResponse:
            async def body() -> Any:
                yield b"{not json"
            return UpstreamResponse(status=200, content_type="application/json", chunks=body())

    async with serving(Garbled([{"text": "x"}])) as gateway:
        run = open_run(gateway)
        with pytest.raises(ValueError):  # forwarded as it came: the SDK cannot read it either
            await openai_client(gateway, run).chat.completions.create(model="demo-model", messages=USER)
        settlement = run.settle()
    assert settlement.calls[0].settled is False and settlement.unsettled_calls == 1


async def test_an_upstream_that_raises_is_a_failed_recorded_call() -> None:
    class Broken(RecordingUpstream):
        async def send(self, call: UpstreamCall) -> UpstreamResponse:
            raise RuntimeError("boom")

    async with serving(Broken([{"text": "x"}])) as gateway:
        run = open_run(gateway)
        with pytest.raises(openai.InternalServerError):
            await openai_client(gateway, run).chat.completions.create(model="demo-model", messages=USER)
        settlement = run.settle()
    (call,) = settlement.calls
    assert call.status == "failed" and call.reason == "upstream_error" and not call.settled


@pytest.mark.parametrize("body", [b"not json", b'{"model":"demo-model","messages":[],"t":NaN}', b"[1]",
                                  b"[" * 100_000, b'{"model":"demo-model","messages":"no"}',
                                  b'{"model":"demo-model","messages":[],"max_tokens":"9"}', b"\xff\xfe"])
async def test_a_malformed_request_is_refused_in_the_api_shape_and_recorded(body: bytes) -> None:
    import aiohttp

    upstream = RecordingUpstream([{"text": "never"}])
    async with serving(upstream) as gateway:
        run = open_run(gateway)
        async with aiohttp.ClientSession() as session, session.post(
                gateway.origin + "/v1/chat/completions", data=body,
                headers={"authorization": "Bearer " + run.token, "content-type": "application/json"}) as answer:
            document = await answer.json()
        settlement = run.settle()
    assert answer.status == 400 and answer.headers["x-should-retry"] == "false"
    assert document["error"]["code"] in {"invalid_json", "invalid_request"}
    assert upstream.seen == [] and settlement.calls[0].refusal in {"invalid_json", "invalid_request"}


async def test_a_lone_surrogate_the_agent_escaped_reaches_the_upstream_escaped() -> None:
    import aiohttp

    upstream = RecordingUpstream([{"text": "ok"}])
    async with serving(upstream) as gateway:
        run = open_run(gateway)
        body = b'{"model":"demo-model","messages":[{"role":"user","content":"a\\ud800b"}]}'
        async with aiohttp.ClientSession() as session, session.post(
                gateway.origin + "/v1/chat/completions", data=body,
                headers={"authorization": "Bearer " + run.token}) as answer:
            assert answer.status == 200
    assert b"a\\ud800b" in upstream.seen[0].body


async def test_a_call_in_flight_when_the_run_settles_is_unsettled_in_the_settlement() -> None:
    upstream = SlowStream([{"text": "a b c"}], pause=0.2)
    async with serving(upstream) as gateway:
        run = open_run(gateway)
        task = asyncio.create_task(openai_client(gateway, run).chat.completions.create(model="demo-model",
                                                                                       messages=USER))
        while run.in_flight == 0:
            await asyncio.sleep(0.01)
        settlement = run.settle()
        await task
    assert settlement.unsettled_calls == 1 and settlement.calls[0].status == "in_flight"
    assert settlement.wire_calls("echo")[0]["status"] == "failed" and not settlement.valid


async def test_a_declared_body_far_over_the_bound_is_cut_unread_and_still_recorded() -> None:
    import aiohttp

    upstream = RecordingUpstream([{"text": "never"}])
    async with serving(upstream, max_request_bytes=1024) as gateway:
        run = open_run(gateway)
        with contextlib.suppress(aiohttp.ClientError):
            async with aiohttp.ClientSession() as session, session.post(
                    gateway.origin + "/v1/chat/completions", data=b"x" * (64 << 10),
                    headers={"authorization": "Bearer " + run.token}) as answer:
                assert answer.status == 413
        settlement = run.settle()
    assert [c.refusal for c in settlement.calls] == ["request_too_large"] and upstream.seen == []


async def test_expect_100_continue_is_answered_and_an_oversized_declared_body_refused_before_it_is_sent() -> None:
    upstream = RecordingUpstream([{"text": "ok"}])
    async with serving(upstream, max_request_bytes=1024) as gateway:
        run = open_run(gateway)
        body = b'{"model":"demo-model","messages":[{"role":"user","content":"hi"}]}'
        head = (b"POST /r/" + run.token.encode() + b"/v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
                b"Content-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: ")
        (reader, writer), = await _idle_connections(gateway.origin, 1)
        writer.write(head + str(len(body)).encode() + b"\r\n\r\n")
        assert await asyncio.wait_for(reader.readline(), 5) == b"HTTP/1.1 100 Continue\r\n"
        writer.write(body)
        answer = await asyncio.wait_for(reader.readuntil(b"HTTP/1.1 200"), 5)
        writer.close()
        (reader, writer), = await _idle_connections(gateway.origin, 1)
        writer.write(head + b"5000\r\n\r\n")
        refused = await asyncio.wait_for(reader.read(65536), 5)
        writer.close()
        settlement = run.settle()
    assert b"HTTP/1.1 200" in answer and refused.startswith(b"HTTP/1.1 413")
    assert [c.refusal for c in settlement.calls] == [None, "request_too_large"]


async def test_closing_the_gateway_mid_stream_ends_the_call_failed_and_recorded() -> None:
    from agent_interface.evaluator.gateway import ModelGateway

    upstream = SlowStream([{"text": " ".join(["w"] * 200)}], pause=0.05)
    gateway = ModelGateway(upstream)
    await gateway.start()
    run = open_run(gateway)
    client = openai_client(gateway, run)
    stream = await client.chat.completions.create(model="demo-model", messages=USER, stream=True)
    async for _ in stream:
        break
    await asyncio.wait_for(gateway.close(), 10)
    with contextlib.suppress(openai.APIError, Exception):
        async for _ in stream:
            pass
    await client.close()
    (call,) = run.settle().calls
    assert call.status == "failed" and call.reason in {"cancelled", "client_disconnected"} and not call.settled
