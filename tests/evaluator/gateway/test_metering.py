"""Limits enforced by reservation before dispatch, under concurrency; refusals in the API's shape."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import anthropic
import openai
import pytest

from agent_interface.evaluator.gateway import (
    GatewayLimits,
    ModelPrice,
    UpstreamCall,
    UpstreamResponse,
)
from agent_interface.evaluator.gateway.request_rewrite import (
    PER_MESSAGE_OVERHEAD,
    REQUEST_OVERHEAD,
    encode,
)
from tests.evaluator.gateway.gateway_helpers import (
    USER,
    RecordingUpstream,
    anthropic_client,
    open_run,
    openai_client,
    serving,
)

pytestmark = pytest.mark.asyncio

WORDS_40 = " ".join(f"w{i}" for i in range(40))


class SlowUpstream(RecordingUpstream):
    """Holds each call a while, and tracks the output reserved by the calls in flight."""

    def __init__(self, replies: list[dict[str, Any]], delay: float = 0.05, price: ModelPrice | None = None,
                 **options: Any) -> None:
        super().__init__(replies, when_exhausted="cycle", **options)
        self.delay = delay
        self.in_flight_output = 0
        self.peak_output = 0
        self._price = price

    def price(self, model: str) -> ModelPrice | None:
        return self._price if self._price is not None else super().price(model)

    async def send(self, call: UpstreamCall) -> UpstreamResponse:
        self.in_flight_output += call.max_output_tokens
        self.peak_output = max(self.peak_output, self.in_flight_output)
        try:
            await asyncio.sleep(self.delay)
            return await super().send(call)
        finally:
            self.in_flight_output -= call.max_output_tokens


def limits(**changes: Any) -> GatewayLimits:
    values: dict[str, Any] = {"max_model_calls": 1000, "max_input_tokens": 10_000_000, "max_output_tokens": 1_000_000,
                              "max_total_tokens": None, "max_cost_usd": 0.0}
    return GatewayLimits(**{**values, **changes})


async def _many(client: openai.AsyncOpenAI, count: int, **request: Any) -> list[Any]:
    async def one() -> Any:
        try:
            return await client.chat.completions.create(model="demo-model", messages=USER, **request)
        except openai.APIStatusError as error:
            return error
    return await asyncio.gather(*(one() for _ in range(count)))


async def test_fifty_concurrent_calls_reach_the_upstream_at_most_max_model_calls_times() -> None:
    upstream = SlowUpstream([{"text": "ok"}])
    async with serving(upstream) as gateway:
        run = open_run(gateway, limits(max_model_calls=5))
        results = await _many(openai_client(gateway, run), 50)
        settlement = run.settle()
    refused = [r for r in results if isinstance(r, openai.BadRequestError)]
    assert len(upstream.seen) == 5 and len(refused) == 45
    assert {r.code for r in refused} == {"max_model_calls"}
    assert settlement.model_calls == 5 and settlement.refused_calls == 45 and settlement.usage_within_limits


async def test_fifty_concurrent_calls_never_reserve_more_output_than_the_limit() -> None:
    upstream = SlowUpstream([{"text": WORDS_40}])
    async with serving(upstream) as gateway:
        run = open_run(gateway, limits(max_output_tokens=100))
        results = await _many(openai_client(gateway, run), 50, max_tokens=30)
        settlement = run.settle()
    assert upstream.peak_output <= 100
    assert all(json.loads(call.body)["max_tokens"] <= 30 for call in upstream.seen)
    assert settlement.output_tokens <= 100 and settlement.usage_within_limits
    refused = [r for r in results if isinstance(r, openai.BadRequestError)]
    assert refused and {r.code for r in refused} == {"max_output_tokens"}
    assert len(upstream.seen) + len(refused) == 50


async def test_fifty_concurrent_calls_within_the_total_and_input_limits() -> None:
    upstream = SlowUpstream([{"text": WORDS_40}])
    async with serving(upstream) as gateway:
        run = open_run(gateway, limits(max_total_tokens=2_000, max_input_tokens=1_500))
        results = await _many(openai_client(gateway, run), 50, max_tokens=50)
        settlement = run.settle()
    refused = {r.code for r in results if isinstance(r, openai.BadRequestError)}
    assert refused and refused <= {"max_total_tokens", "max_input_tokens"}
    assert settlement.accounted_input_tokens + settlement.output_tokens <= 2_000 and settlement.usage_within_limits
    assert run.peak_reserved_calls >= 1


async def test_the_output_cap_is_written_when_the_request_has_none_and_capped_when_it_asks_more() -> None:
    upstream = RecordingUpstream([{"text": "ok"}], when_exhausted="cycle")
    async with serving(upstream) as gateway:
        run = open_run(gateway, limits(max_output_tokens=64))
        client = openai_client(gateway, run)
        await client.chat.completions.create(model="demo-model", messages=USER)
        await client.chat.completions.create(model="demo-model", messages=USER, max_completion_tokens=10)
        await client.chat.completions.create(model="demo-model", messages=USER, max_tokens=1000)
    first, second, third = (json.loads(call.body) for call in upstream.seen)
    assert first["max_completion_tokens"] == 64 and "max_tokens" not in first
    assert second["max_completion_tokens"] == 10
    assert third["max_tokens"] == 64 - 1 - 1 and "max_completion_tokens" not in third


async def test_the_input_bound_admits_a_request_that_fits_and_refuses_one_that_may_not() -> None:
    upstream = RecordingUpstream([{"text": "ok"}], when_exhausted="cycle")
    async with serving(upstream) as gateway:
        run = open_run(gateway, limits(max_input_tokens=600))
        client = openai_client(gateway, run)
        await client.chat.completions.create(model="demo-model", messages=USER)
        with pytest.raises(openai.BadRequestError) as refused:
            await client.chat.completions.create(model="demo-model",
                                                 messages=[{"role": "user", "content": "x" * 600}])
        settlement = run.settle()
    assert refused.value.code == "max_input_tokens"
    sent = json.loads(upstream.seen[0].body)
    del sent["max_completion_tokens"]  # the cap is written after the bound is taken
    assert settlement.calls[0].reserved_input_tokens == len(encode(sent)) + REQUEST_OVERHEAD + PER_MESSAGE_OVERHEAD
    assert settlement.calls[0].accounted_input_tokens <= settlement.calls[0].reserved_input_tokens


async def test_the_worst_case_cost_is_reserved_and_the_output_cap_shrinks_to_the_money_left() -> None:
    price = ModelPrice(input_nanos=1000, cached_input_nanos=100, output_nanos=5000)
    upstream = SlowUpstream([{"text": "ok"}], delay=0, price=price)
    async with serving(upstream) as gateway:
        run = open_run(gateway, limits(max_cost_usd=0.002))  # 2,000,000 nano-dollars
        client = openai_client(gateway, run)
        await client.chat.completions.create(model="demo-model", messages=USER, max_tokens=1000)
        sent = json.loads(upstream.seen[0].body)
        bound = run.calls[0].reserved_input_tokens
        assert sent["max_tokens"] == min(1000, (2_000_000 - bound * 1000) // 5000)
        settlement_cost = run.calls[0].cost_usd_nanos
        assert settlement_cost == run.calls[0].accounted_input_tokens * 1000 + run.calls[0].output_tokens * 5000
        assert run.calls[0].cost_provenance == "estimated"
        with pytest.raises(openai.BadRequestError) as refused:
            await client.chat.completions.create(model="demo-model",
                                                 messages=[{"role": "user", "content": "x" * 3000}])
    assert refused.value.code == "max_cost_usd"


async def test_a_model_with_no_price_is_refused_and_a_free_one_is_not() -> None:
    class Unpriced(RecordingUpstream):
        def price(self, model: str) -> ModelPrice | None:
            return None

    async with serving(Unpriced([{"text": "never"}])) as gateway:
        run = open_run(gateway)
        with pytest.raises(openai.BadRequestError) as refused:
            await openai_client(gateway, run).chat.completions.create(model="demo-model", messages=USER)
    assert refused.value.code == "price_unknown"
    async with serving(RecordingUpstream([{"text": "free"}])) as gateway:
        run = open_run(gateway)
        reply = await openai_client(gateway, run).chat.completions.create(model="demo-model", messages=USER)
        assert reply.choices[0].message.content == "free" and run.settle().cost_provenance == "observed"


async def test_the_refusal_status_is_the_run_s_choice_never_a_retried_one() -> None:
    async with serving(RecordingUpstream([{"text": "never"}])) as gateway:
        run = open_run(gateway, limits(max_model_calls=0), refusal_status=402)
        with pytest.raises(openai.APIStatusError) as refused:
            await openai_client(gateway, run, max_retries=2).chat.completions.create(model="demo-model",
                                                                                      messages=USER)
        assert refused.value.status_code == 402 and refused.value.response.headers["x-should-retry"] == "false"
        assert len(run.calls) == 1  # the SDK did not retry
        with pytest.raises(ValueError):
            open_run(gateway, refusal_status=429)


async def test_a_refusal_reaches_the_anthropic_sdk_as_its_typed_error() -> None:
    async with serving(RecordingUpstream([{"text": "never"}])) as gateway:
        run = open_run(gateway, limits(max_output_tokens=0))
        with pytest.raises(anthropic.BadRequestError) as refused:
            await anthropic_client(gateway, run).messages.create(
                model="demo-model", max_tokens=16, messages=[{"role": "user", "content": "hi"}])
    assert "max_output_tokens" in str(refused.value)


async def test_fifty_concurrent_calls_never_spend_more_than_the_cost_limit() -> None:
    price = ModelPrice(input_nanos=1000, cached_input_nanos=100, output_nanos=5000)
    upstream = SlowUpstream([{"text": WORDS_40}], price=price)
    async with serving(upstream) as gateway:
        run = open_run(gateway, limits(max_cost_usd=0.003))
        results = await _many(openai_client(gateway, run), 50, max_tokens=40)
        settlement = run.settle()
    refused = {r.code for r in results if isinstance(r, openai.BadRequestError)}
    assert refused == {"max_cost_usd"} and upstream.seen
    assert settlement.cost_usd_nanos <= 3_000_000 and settlement.usage_within_limits
    assert settlement.cost_provenance == "estimated"
