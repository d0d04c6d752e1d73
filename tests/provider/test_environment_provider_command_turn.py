"""Command turns (``environment-command-turn.ts``): exec answers, the turn's events, and
the exec-only capability document."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agent_interface.core.errors import ContractError
from agent_interface.environment.workspace import (
    ExecRequest,
    ExecResult,
)
from agent_interface.provider.command_turn import (
    command_turn_events,
    exec_only_environment_capabilities,
    exec_result_from_unknown,
)
from agent_interface.provider.turn import AgentTurnInput

SOURCE = "Test sandbox exec"


def test_reads_either_name_for_each_fact() -> None:
    assert exec_result_from_unknown({"exitCode": 0, "stdout": "o", "stderr": "e"}, SOURCE).to_wire() == {
        "exitCode": 0, "stdout": "o", "stderr": "e"
    }
    assert exec_result_from_unknown({"code": 3, "output": "o", "error": "e"}, SOURCE).to_wire() == {
        "exitCode": 3, "stdout": "o", "stderr": "e"
    }


def test_prefers_the_primary_name() -> None:
    result = exec_result_from_unknown({"exitCode": 1, "code": 2, "stdout": "a", "output": "b", "stderr": "c", "error": "d"}, SOURCE)
    assert (result.exit_code, result.stdout, result.stderr) == (1, "a", "c")


def test_reads_output_only_from_strings() -> None:
    result = exec_result_from_unknown({"exitCode": 0, "stdout": 5, "stderr": ["x"]}, SOURCE)
    assert (result.stdout, result.stderr) == ("", "")


@pytest.mark.parametrize("answer", [{}, None, "ok", {"exitCode": "0"}, {"exitCode": float("nan")}, {"exitCode": True}, {"stdout": "x"}])
def test_refuses_an_answer_without_exit_status(answer: Any) -> None:
    with pytest.raises(ContractError) as caught:
        exec_result_from_unknown(answer, SOURCE)
    assert caught.value.issues[0].code == "exec_exit_status_missing"
    assert SOURCE in caught.value.issues[0].message


def test_accepts_a_measured_zero() -> None:
    assert exec_result_from_unknown({"exitCode": 0}, SOURCE).exit_code == 0
    assert exec_result_from_unknown({"code": 0.0}, SOURCE).exit_code == 0


class Recorder:
    def __init__(self, result: ExecResult) -> None:
        self.result = result
        self.commands: list[str] = []
        self.requests: list[ExecRequest] = []

    async def exec(self, command: str, request: ExecRequest) -> ExecResult:
        self.commands.append(command)
        self.requests.append(request)
        return self.result


def drain(input: dict[str, Any], environment: Any, turn_command: Any = None) -> list[dict[str, Any]]:
    async def collect() -> list[dict[str, Any]]:
        turn = AgentTurnInput.parse_wire(input)
        return [event.to_wire() async for event in command_turn_events(turn, environment, "Test", turn_command)]

    return asyncio.run(collect())


OK = ExecResult(exit_code=0, stdout="out", stderr="")


def test_caller_turn_command_comes_first() -> None:
    env = Recorder(OK)

    async def chosen(turn: AgentTurnInput, environment: Any) -> str:
        return "caller"

    drain({"prompt": "prompt", "providerOptions": {"command": "option"}}, env, chosen)
    assert env.commands == ["caller"]


def test_caller_answer_is_final_even_empty_and_none_falls_through() -> None:
    env = Recorder(OK)

    async def empty(turn: AgentTurnInput, environment: Any) -> str:
        return ""

    async def none(turn: AgentTurnInput, environment: Any) -> None:
        return None

    # The reference's ``turnCommand() ?? ...``: "" is an answer (refused), None is not.
    with pytest.raises(ContractError) as caught:
        drain({"prompt": "prompt", "providerOptions": {"command": "option"}}, env, empty)
    assert caught.value.issues[0].code == "command_turn_missing"
    assert env.commands == []
    drain({"prompt": "prompt", "providerOptions": {"command": "option"}}, env, none)
    assert env.commands == ["option"]


def test_falls_to_command_then_agent_command_then_prompt() -> None:
    env = Recorder(OK)
    drain({"prompt": "p", "providerOptions": {"command": "c", "agentCommand": "a"}}, env)
    drain({"prompt": "p", "providerOptions": {"command": "", "agentCommand": "a"}}, env)
    drain({"prompt": "p", "providerOptions": {"command": 5}}, env)
    assert env.commands == ["c", "a", "p"]


def test_refuses_an_empty_command_before_running() -> None:
    env = Recorder(OK)
    with pytest.raises(ContractError) as caught:
        drain({"providerOptions": {"command": ""}}, env)
    assert caught.value.issues[0].code == "command_turn_missing"
    assert "Test provider requires turnCommand, providerOptions.command, or prompt" in str(caught.value)
    assert env.commands == []


def test_non_zero_exit_is_a_failed_turn_with_stderr() -> None:
    env = Recorder(ExecResult(exit_code=2, stdout="partial", stderr="boom"))
    assert drain({"prompt": "run"}, env) == [
        {"type": "message.part.updated", "data": {"delta": "partial"}},
        {"type": "result", "data": {"finalText": "partial", "status": "failed", "exitCode": 2, "stderr": "boom"}},
    ]


def test_passes_timeout_and_cwd_to_exec() -> None:
    env = Recorder(OK)
    drain({"prompt": "run", "timeoutMs": 1000, "providerOptions": {"cwd": "/work"}}, env)
    assert env.requests[0].to_wire() == {"cwd": "/work", "timeoutMs": 1000}


def test_exec_only_capabilities_claim_only_the_workspace() -> None:
    workspace = {"read": True, "write": False, "exec": True, "git": False, "upload": True, "download": False}
    caps = exec_only_environment_capabilities(workspace)
    wire = caps.to_wire()
    assert wire["workspace"] == workspace
    assert wire["placement"] is True
    assert wire["streaming"] == {"live": False, "replay": False, "detach": False, "turnIdempotency": False}
    assert wire["branching"] == {"checkpoint": False, "fork": False}
    assert wire["profile"]["systemPrompt"] == {"replace": False, "append": False}
    assert "interactions" not in wire and "nativeContinuation" not in wire
    other = exec_only_environment_capabilities({**workspace, "git": True})
    assert other.workspace.git is True and caps.workspace.git is False
