"""The gateway's Python API: limits from a task, more listening sockets, launch variables."""

from __future__ import annotations

import socket
from pathlib import Path

import aiohttp
import pytest

from agent_interface.candidate.task_terms import AgentCandidateExecutionLimits
from agent_interface.core.errors import ContractError
from agent_interface.evaluator.gateway import GatewayLimits
from tests.evaluator.gateway.gateway_helpers import USER, RecordingUpstream, open_run, serving

WIRE_LIMITS = {"timeoutMs": 60_000, "maxSteps": 8, "maxModelCalls": 4, "maxInputTokens": 10_000,
               "maxOutputTokens": 10_000, "maxTotalTokens": 20_000, "maxCostUsd": 0}


def test_limits_come_from_a_task_s_limits_wire_model_or_dict() -> None:
    expected = GatewayLimits(4, 10_000, 10_000, 20_000, 0.0)
    assert GatewayLimits.from_task_limits(WIRE_LIMITS) == expected
    assert GatewayLimits.from_task_limits(AgentCandidateExecutionLimits.parse_wire(WIRE_LIMITS)) == expected
    assert GatewayLimits.from_task_limits({**WIRE_LIMITS, "maxTotalTokens": None}).max_total_tokens is None


@pytest.mark.parametrize("bad", [{"max_model_calls": -1}, {"max_input_tokens": 1.5}, {"max_cost_usd": float("nan")},
                                 {"max_output_tokens": True}, {"max_cost_usd": -0.1}])
def test_limits_refuse_what_is_not_a_limit(bad: dict[str, object]) -> None:
    values: dict[str, object] = {"max_model_calls": 1, "max_input_tokens": 1, "max_output_tokens": 1,
                                 "max_total_tokens": None, "max_cost_usd": 0.0, **bad}
    with pytest.raises(ContractError):
        GatewayLimits(**values)  # type: ignore[arg-type]


def test_launch_env_names_the_run_prefix_and_the_token_as_both_keys() -> None:
    from agent_interface.evaluator.gateway import GatewayRun

    run = GatewayRun(run_id="r", requested_model="m", resolved={"model": "x"}, limits=GatewayLimits(1, 1, 1, None, 0))
    env = run.launch_env("http://model-gateway.internal")
    assert env == {"OPENAI_BASE_URL": f"http://model-gateway.internal/r/{run.token}/v1",
                   "ANTHROPIC_BASE_URL": f"http://model-gateway.internal/r/{run.token}",
                   "OPENAI_API_KEY": run.token, "ANTHROPIC_API_KEY": run.token}


@pytest.mark.asyncio
async def test_serve_socket_serves_more_listening_sockets_tcp_and_unix(tmp_path: Path) -> None:
    async with serving(RecordingUpstream([{"text": "ok"}], when_exhausted="cycle")) as gateway:
        run = open_run(gateway)
        extra = socket.socket()
        extra.bind(("127.0.0.1", 0))
        extra.listen(16)
        unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        unix.bind(str(tmp_path / "gateway.sock"))
        unix.listen(16)
        await gateway.serve_socket(extra)
        await gateway.serve_socket(unix)
        body = {"model": "demo-model", "messages": USER}
        headers = {"authorization": "Bearer " + run.token}
        port = extra.getsockname()[1]
        async with aiohttp.ClientSession() as session, session.post(
                f"http://127.0.0.1:{port}/v1/chat/completions", json=body, headers=headers) as answer:
            assert answer.status == 200
        connector = aiohttp.UnixConnector(str(tmp_path / "gateway.sock"))
        async with aiohttp.ClientSession(connector=connector) as session, session.post(
                "http://model-gateway.internal/v1/chat/completions", json=body, headers=headers) as answer:
            assert answer.status == 200 and (await answer.json())["choices"][0]["message"]["content"] == "ok"
        assert len(run.settle().calls) == 2
