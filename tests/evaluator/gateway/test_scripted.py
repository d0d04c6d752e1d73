"""The scripted upstream: its format, per-run cursors, determinism, echo, and upstream specs."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from agent_interface.core.errors import ContractError
from agent_interface.evaluator.gateway import (
    AnthropicUpstream,
    ModelPrice,
    OpenAICompatibleUpstream,
    ScriptedUpstream,
    upstream_from_spec,
)
from agent_interface.evaluator.gateway.upstream import UpstreamCall
from tests.evaluator.gateway.gateway_helpers import USER, open_run, openai_client, serving


def _call(run_id: str = "r", stream: bool = False, api: str = "chat.completions") -> UpstreamCall:
    payload = {"model": "echo", "messages": USER, "stream": stream, "stream_options": {"include_usage": True}}
    return UpstreamCall(api=api, path="/v1/chat/completions", query="", headers={}, body=b"", payload=payload,  # type: ignore[arg-type]
                        stream=stream, run_id=run_id, max_output_tokens=100)


def test_the_same_script_gives_the_same_bytes_every_time() -> None:
    for api in ("chat.completions", "responses", "messages"):
        for stream in (False, True):
            first = ScriptedUpstream([{"text": "one two", "toolCalls": [{"name": "t", "arguments": {"a": 1}}]}])
            second = ScriptedUpstream([{"text": "one two", "toolCalls": [{"name": "t", "arguments": {"a": 1}}]}])
            assert first.answer(_call(stream=stream, api=api)) == second.answer(_call(stream=stream, api=api))


def test_each_run_reads_the_script_from_its_start() -> None:
    upstream = ScriptedUpstream([{"text": "first"}, {"text": "second"}])
    a1, b1, a2 = (upstream.answer(_call(run)) for run in ("a", "b", "a"))
    assert b"first" in a1[1] and b"first" in b1[1] and b"second" in a2[1]  # type: ignore[operator]
    status, body = upstream.answer(_call("a"))
    assert status == 400 and b"script_exhausted" in body  # type: ignore[operator]


@pytest.mark.asyncio
async def test_concurrent_runs_each_get_their_own_replies_in_order() -> None:
    upstream = ScriptedUpstream([{"text": "first"}, {"text": "second"}, {"text": "third"}])
    async with serving(upstream) as gateway:
        runs = [open_run(gateway, run_id=f"run-{n}") for n in range(5)]

        async def three(run: object) -> list[str]:
            client = openai_client(gateway, run)  # type: ignore[arg-type]
            return [(await client.chat.completions.create(model="demo-model", messages=USER)).choices[0]
                    .message.content or "" for _ in range(3)]

        answers = await asyncio.gather(*(three(run) for run in runs))
    assert answers == [["first", "second", "third"]] * 5


@pytest.mark.asyncio
async def test_echo_answers_the_last_user_text() -> None:
    async with serving(upstream_from_spec("echo")) as gateway:
        run = open_run(gateway)
        reply = await openai_client(gateway, run).chat.completions.create(model="demo-model", messages=USER)
    assert reply.choices[0].message.content == "echo: hello there"


def test_a_reply_is_cut_to_the_output_cap_as_the_api_cuts_it() -> None:
    upstream = ScriptedUpstream([{"text": "a b c d e f"}])
    call = _call()
    capped = UpstreamCall(**{**{k: getattr(call, k) for k in call.__dataclass_fields__}, "max_output_tokens": 2})
    status, body = upstream.answer(capped)
    assert status == 200
    document = json.loads(body)  # type: ignore[arg-type]
    assert document["choices"][0]["finish_reason"] == "length" and document["choices"][0]["message"]["content"] == "a b"
    assert document["usage"]["completion_tokens"] == 2


def test_script_files_json_and_jsonl(tmp_path: Path) -> None:
    (tmp_path / "s.json").write_text(json.dumps({"replies": [{"text": "x"}], "whenExhausted": "cycle"}))
    (tmp_path / "s.jsonl").write_text('{"text": "x"}\n{"text": "y"}\n')
    assert repr(upstream_from_spec(f"scripted:{tmp_path / 's.json'}")) == (
        "ScriptedUpstream(replies=1, when_exhausted='cycle')")
    assert repr(ScriptedUpstream.from_file(tmp_path / "s.jsonl")) == "ScriptedUpstream(replies=2, when_exhausted='error')"


@pytest.mark.parametrize("document", [[], [{"text": 1}], [{"bogus": True}], [{"usage": {"inputTokens": -1,
                                                                                       "outputTokens": 0}}],
                                      [{"status": 200}], {"replies": [{}], "whenExhausted": "never"}, "text"])
def test_a_malformed_script_is_refused(document: object) -> None:
    with pytest.raises(ContractError):
        ScriptedUpstream.from_document(document)


def test_upstream_specs() -> None:
    local = upstream_from_spec("openai:http://127.0.0.1:8000/v1", prices={"qwen3-8b": ModelPrice(0, 0, 0)})
    assert isinstance(local, OpenAICompatibleUpstream)
    assert local.price("qwen3-8b") == ModelPrice(0, 0, 0) and local.price("gpt-4o") is not None
    assert local.price("unknown-model") is None
    assert isinstance(upstream_from_spec("anthropic:https://api.anthropic.com", "ANTHROPIC_KEY"), AnthropicUpstream)
    for bad, key in (("anthropic:https://api.anthropic.com", None), ("gemini:x", None), ("openai:ftp://x", None),
                     ("openai:https://user:pw@host/v1", None)):
        with pytest.raises(ContractError) as refused:
            upstream_from_spec(bad, key)
        assert "pw" not in str(refused.value)
