"""What a run settles to: unsettled calls, served-model identity, zero calls, records and events."""

from __future__ import annotations

import openai
import pytest

from agent_interface.evaluator.gateway.served_model import served_match
from tests.evaluator.gateway.gateway_helpers import (
    USER,
    RecordingUpstream,
    open_run,
    openai_client,
    serving,
)


@pytest.mark.asyncio
async def test_an_upstream_that_omits_usage_leaves_the_call_unsettled_and_the_run_invalid() -> None:
    async with serving(RecordingUpstream([{"text": "a", "usage": "omit"}, {"text": "b"}])) as gateway:
        run = open_run(gateway)
        client = openai_client(gateway, run)
        await client.chat.completions.create(model="demo-model", messages=USER)
        await client.chat.completions.create(model="demo-model", messages=USER)
        settlement = run.settle()
    omitted, reported = settlement.calls
    assert not omitted.settled and omitted.status == "succeeded" and reported.settled
    assert settlement.unsettled_calls == 1 and not settlement.valid
    assert settlement.events[0]["settled"] is False


@pytest.mark.asyncio
async def test_an_omitted_usage_in_a_stream_is_unsettled_too() -> None:
    async with serving(RecordingUpstream([{"text": "a b", "usage": "omit"}])) as gateway:
        run = open_run(gateway)
        stream = await openai_client(gateway, run).chat.completions.create(model="demo-model", messages=USER,
                                                                           stream=True)
        assert "".join([c.choices[0].delta.content or "" async for c in stream if c.choices]) == "a b"
        assert run.settle().unsettled_calls == 1


@pytest.mark.asyncio
async def test_a_run_with_no_call_is_a_valid_zero() -> None:
    async with serving(RecordingUpstream([{"text": "a"}])) as gateway:
        settlement = open_run(gateway).settle()
    assert settlement.valid and settlement.model_calls == 0 and settlement.usage_within_limits
    assert settlement.usage() == {"inputTokens": 0, "outputTokens": 0, "cachedInputTokens": 0,
                                  "reasoningTokens": 0, "modelCalls": 0, "costUsdNanos": 0,
                                  "costProvenance": "observed"}


@pytest.mark.asyncio
async def test_a_substituted_served_model_is_recorded_in_the_record_and_the_event() -> None:
    async with serving(RecordingUpstream([{"text": "a", "servedModel": "cheap-model"},
                                          {"text": "b", "servedModel": "echo-2026-01-01"}])) as gateway:
        run = open_run(gateway)
        client = openai_client(gateway, run)
        await client.chat.completions.create(model="demo-model", messages=USER)
        await client.chat.completions.create(model="demo-model", messages=USER)
        settlement = run.settle()
    substituted, alias = settlement.calls
    assert (substituted.served_model, substituted.served_match) == ("cheap-model", "substituted")
    assert (alias.served_model, alias.served_match) == ("echo-2026-01-01", "alias")
    assert settlement.events[0]["servedMatch"] == "substituted" and settlement.substituted_calls == 1
    assert settlement.events[1] == {"event": "model.served_model_substituted", "atMs": substituted.ended_at_ms,
                                    "callId": substituted.call_id, "resolvedModel": "echo",
                                    "servedModel": "cheap-model"}
    assert [e["event"] for e in settlement.events[2:]] == ["model.call"]  # an alias is not a substitution


def test_the_served_model_rule() -> None:
    assert served_match("gpt-4o", "gpt-4o") == "exact"
    assert served_match("echo-1", "echo", "echo-1") == "exact"
    assert served_match("gpt-4o-2024-08-06", "gpt-4o") == "alias"
    assert served_match("claude-sonnet-4-5-20250929", "claude-sonnet-4-5") == "alias"
    assert served_match("openai/gpt-4o", "gpt-4o") == "alias"
    assert served_match("gpt-4o-mini", "gpt-4o") == "substituted"
    assert served_match(None, "gpt-4o") == "unknown"


@pytest.mark.asyncio
async def test_an_upstream_error_answer_is_a_failed_call_settled_at_zero_and_forwarded() -> None:
    async with serving(RecordingUpstream([{"status": 400, "error": "bad tool schema"}])) as gateway:
        run = open_run(gateway)
        with pytest.raises(openai.BadRequestError) as failed:
            await openai_client(gateway, run).chat.completions.create(model="demo-model", messages=USER)
        settlement = run.settle()
    assert "bad tool schema" in str(failed.value)
    (call,) = settlement.calls
    assert (call.status, call.reason, call.settled, call.refusal, call.http_status) == (
        "failed", "upstream_status", True, None, 400)
    assert settlement.model_calls == 1 and settlement.valid


@pytest.mark.asyncio
async def test_records_carry_digests_and_times_and_settle_is_idempotent() -> None:
    async with serving(RecordingUpstream([{"text": "a"}])) as gateway:
        run = open_run(gateway)
        await openai_client(gateway, run).chat.completions.create(model="demo-model", messages=USER)
        first = run.settle()
        assert run.settle() is first and run.closed
    (call,) = first.calls
    assert call.request_sha256.startswith("sha256:") and len(call.response_sha256) == 71
    assert call.ended_at_ms >= call.started_at_ms > 0 and call.generation_id.startswith("gen-")
    assert "gw-***" in repr(run) and run.token not in repr(run)


@pytest.mark.asyncio
async def test_the_wire_calls_are_what_the_reference_s_settlement_call_accepts() -> None:
    from agent_interface.candidate.outcomes import AgentCandidateModelSettlementCall

    async with serving(RecordingUpstream([{"text": "a"}, {"status": 500}])) as gateway:
        run = open_run(gateway)
        client = openai_client(gateway, run)
        await client.chat.completions.create(model="demo-model", messages=USER)
        with pytest.raises(openai.InternalServerError):
            await client.chat.completions.create(model="demo-model", messages=USER)
        with pytest.raises(openai.BadRequestError):
            await client.chat.completions.create(model="other", messages=USER)
        settlement = run.settle()
    calls = settlement.wire_calls("echo")
    assert [call["status"] for call in calls] == ["succeeded", "failed"]  # the refusal is not a model call
    for call in calls:
        AgentCandidateModelSettlementCall.parse_wire(call)
