"""Each real harness CLI inside an OCI container on ``runc`` (a test root made of the host's
``/usr`` and the CLI's npm prefix, see ``container_runner``), joined to a loopback-only
network namespace where the model gateway serves a scripted upstream: the CLI edits a file
through its own tools, the gateway's count equals its self-reported usage, and a run cut
by the call budget ends promptly with the refusal recorded."""

from __future__ import annotations

from pathlib import Path

import pytest

from .cli_runner import run_cli_through_gateway
from .container_runner import runc_usable
from .test_real_clis_gateway import HARNESSES, _limits, _write_call

pytestmark = pytest.mark.skipif(not runc_usable(), reason="needs runc and root")


@pytest.mark.parametrize("harness", HARNESSES)
def test_the_cli_edits_a_file_in_a_container_through_the_gateway(harness: str, tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    replies = [{"toolCalls": [_write_call(harness, workspace)]}, {"text": "done"}]
    run = run_cli_through_gateway(harness, tmp_path, replies, _limits(10), container=True)
    assert run.exit_code == 0, run.stderr[-2000:]
    assert (workspace / "hello.txt").read_text() == "hello\n"
    settlement = run.settlement
    assert (settlement.model_calls, settlement.refused_calls, settlement.unsettled_calls) == (2, 0, 0)
    usage = run.outcome.usage
    assert usage is not None and run.outcome.status == "completed" and run.outcome.final_text == "done"
    assert (usage.input_tokens, usage.output_tokens) == (settlement.input_tokens, settlement.output_tokens)
    assert run.namespace


@pytest.mark.parametrize("harness", HARNESSES)
def test_a_budget_cut_in_a_container_ends_promptly(harness: str, tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    replies = [{"toolCalls": [_write_call(harness, workspace)]}, {"text": "done"}]
    run = run_cli_through_gateway(harness, tmp_path, replies, _limits(1), container=True, timeout=150)
    assert run.exit_code > 0 and run.outcome.status == "error"  # exited by itself
    assert run.seconds < 90  # it ended by itself, long before the time limit (150 s)
    assert run.settlement.model_calls == 1 and run.settlement.refused_calls >= 1
