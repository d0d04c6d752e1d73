"""Each real harness CLI through the real model gateway (``ModelGateway`` on a
``ScriptedUpstream``), in a loopback-only network namespace: the gateway's own count of
calls and tokens equals the harness's self-reported usage, every call is settled, and a
run cut by the model-call budget ends promptly with the gateway's refusal recorded and the
harness's error status set (the exit code is not trusted alone)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent_interface.evaluator.gateway import GatewayLimits
from agent_interface.evaluator.harness.adapters import adapter_for
from agent_interface.evaluator.harness.install import locate_cli, observed_version
from agent_interface.evaluator.harness.observation import observe

from .cli_runner import run_cli_through_gateway

HARNESSES = ("claude-code", "codex", "opencode")


def _write_call(harness: str, workspace: Path) -> dict[str, Any]:
    if harness == "claude-code":
        return {"name": "Write", "arguments": {"file_path": str(workspace / "hello.txt"), "content": "hello\n"}}
    if harness == "codex":
        return {"name": "exec_command", "arguments": {"cmd": "printf 'hello\\n' > hello.txt"}}
    return {"name": "write", "arguments": {"filePath": str(workspace / "hello.txt"), "content": "hello\n"}}


def _limits(calls: int) -> GatewayLimits:
    return GatewayLimits(max_model_calls=calls, max_input_tokens=10_000_000, max_output_tokens=1_000_000,
                         max_total_tokens=None, max_cost_usd=0.0)


@pytest.mark.parametrize("harness", HARNESSES)
def test_the_gateway_count_equals_the_harness_report(harness: str, tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    replies = [{"toolCalls": [_write_call(harness, workspace)]}, {"text": "done"}]
    run = run_cli_through_gateway(harness, tmp_path, replies, _limits(10), trace=True)
    assert run.exit_code == 0, run.stderr[-2000:]
    assert (workspace / "hello.txt").read_text() == "hello\n"
    settlement = run.settlement
    assert (settlement.model_calls, settlement.refused_calls, settlement.unsettled_calls) == (2, 0, 0)
    assert settlement.usage_within_limits
    assert all(call.served_model == "scripted" for call in settlement.calls)
    usage = run.outcome.usage
    assert usage is not None and run.outcome.status == "completed"
    assert (usage.input_tokens, usage.output_tokens) == (settlement.input_tokens, settlement.output_tokens)
    assert run.namespace and run.outside_connects == []
    binary = locate_cli(harness)
    assert binary is not None
    record = observe(harness, declared_version="0.0.0-declared", observed_version=observed_version(binary),
                     outcome=run.outcome, settlement=settlement).to_wire()
    assert record["usageAgrees"] is True and record["status"] == "completed"
    assert record["observedVersion"] != "0.0.0-declared" and record["gateway"]["modelCalls"] == 2


@pytest.mark.parametrize("harness", HARNESSES)
def test_a_run_cut_by_the_call_budget_ends_promptly(harness: str, tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    replies = [{"toolCalls": [_write_call(harness, workspace)]}, {"text": "done"}]
    run = run_cli_through_gateway(harness, tmp_path, replies, _limits(1), timeout=150)
    assert (workspace / "hello.txt").exists()  # the first call's tool ran
    assert run.exit_code > 0 and run.outcome.status == "error"  # exited by itself
    assert run.seconds < 90  # it ended by itself, long before the time limit (150 s)
    settlement = run.settlement
    assert settlement.model_calls == 1 and settlement.unsettled_calls == 0
    refusal = adapter_for(harness).refusal
    refused = [call for call in settlement.calls if call.refusal is not None]
    assert 1 <= len(refused) <= refusal.requests_per_refusal
    assert {call.http_status for call in refused} == {refusal.refusal_status}
    assert settlement.usage_within_limits
    if harness != "codex":
        assert run.outcome.api_error_status == refusal.refusal_status
    record = observe(harness, declared_version="x", observed_version="x", outcome=run.outcome,
                     settlement=settlement).to_wire()
    assert record["status"] == "error" and record["gateway"]["refusedCalls"] == len(refused)
