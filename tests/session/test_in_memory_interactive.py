"""The in-memory native TUIs: claims are compare-and-swap, stale or expired claims are
refused before any effect, commands replay without a second effect."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from agent_interface.core.errors import ContractError
from agent_interface.session.interactive_control import (
    AgentInteractiveSessionControlClaimRequest,
    AgentInteractiveSessionPromptCommand,
    AgentInteractiveSessionStopCommand,
    agent_interactive_session_status_matches_ref,
    agent_interactive_session_stop_acknowledgement_matches_command,
)
from agent_interface.testing.interactive_sessions import InMemoryInteractiveSessions

FIXTURES = json.loads((Path(__file__).resolve().parents[1] / "golden" / "interactive_session_fixtures.json").read_text())
START = {"run": FIXTURES["run"], **FIXTURES["startInput"]}


class Clock:
    def __init__(self) -> None:
        self.now = 1_786_000_000_000

    def __call__(self) -> int:
        return self.now


def setup(clock: Clock | None = None) -> tuple[InMemoryInteractiveSessions, Any]:
    sessions = InMemoryInteractiveSessions(prepare=lambda start: FIXTURES["receipt"], clock_ms=clock or Clock(), claim_ttl_ms=1_000)
    ref = asyncio.run(sessions.start_interactive(START))
    return sessions, sessions.interactive(ref)


def claim(session: Any, operation: str, expected: int, holder: str = "coordinator") -> Any:
    request = AgentInteractiveSessionControlClaimRequest.seal(
        {"operationId": operation, "ref": session.ref, "holderId": holder, "expectedGeneration": expected}
    )
    return asyncio.run(session.claim_control(request))


def test_start_replays_and_refuses_other_refs() -> None:
    sessions, session = setup()
    again = asyncio.run(sessions.start_interactive(START))
    assert again == session.ref
    with pytest.raises(ContractError) as caught:
        sessions.interactive({**session.ref.to_wire(), "incarnationId": "interactive-other"})
    assert caught.value.issues[0].code == "interactive_session_not_found"
    with pytest.raises(ContractError):
        asyncio.run(sessions.start_interactive({**START, "cols": 81}))  # run no longer derives from the material
    status = asyncio.run(session.status())
    assert status.state == "running" and agent_interactive_session_status_matches_ref(session.ref, status)


def test_prepare_must_answer_the_start() -> None:
    sessions = InMemoryInteractiveSessions(prepare=lambda start: FIXTURES["codexReceipt"])
    with pytest.raises(ContractError) as caught:
        asyncio.run(sessions.start_interactive(START))
    assert caught.value.issues[0].code == "interactive_receipt_mismatch"


def test_expired_and_superseded_claims_are_refused_before_effect() -> None:
    clock = Clock()
    _, session = setup(clock)
    first = claim(session, "claim-1", 0).control
    terminal = asyncio.run(session.attach({"control": first.to_wire()}))
    asyncio.run(terminal.input({"data": "ok"}))
    clock.now += 1_000
    with pytest.raises(ContractError) as caught:
        asyncio.run(terminal.input({"data": "late"}))
    assert caught.value.issues[0].code == "interactive_control_expired"
    second = claim(session, "claim-2", 1).control
    with pytest.raises(ContractError) as caught:
        asyncio.run(terminal.input({"data": "stale"}))
    assert caught.value.issues[0].code == "interactive_control_superseded"
    prompt = AgentInteractiveSessionPromptCommand.seal(
        {"operationId": "p-1", "ref": session.ref, "control": first, "prompt": "stale"}
    )
    with pytest.raises(ContractError):
        asyncio.run(session.send_prompt(prompt))
    assert session.delivered_prompts == ()
    fresh = AgentInteractiveSessionPromptCommand.seal(
        {"operationId": "p-1", "ref": session.ref, "control": second, "prompt": "fresh"}
    )
    assert asyncio.run(session.send_prompt(fresh)).status == "accepted"
    assert asyncio.run(session.send_prompt(fresh)).status == "replayed"
    assert session.delivered_prompts == ("fresh",)


def test_stop_is_final_and_replayable() -> None:
    _, session = setup()
    control = claim(session, "claim-1", 0).control
    stop = AgentInteractiveSessionStopCommand.seal({"operationId": "stop-1", "ref": session.ref, "control": control})
    first = asyncio.run(session.stop(stop))
    assert first.effect == "stopped" and agent_interactive_session_stop_acknowledgement_matches_command(stop, first)
    replay = asyncio.run(session.stop(stop))
    assert replay.status == "replayed" and replay.effect == "stopped"
    other = AgentInteractiveSessionStopCommand.seal({"operationId": "stop-2", "ref": session.ref, "control": control})
    assert asyncio.run(session.stop(other)).effect == "not_live"
    status = asyncio.run(session.status())
    assert status.state == "exited" and status.reason == "stopped"
    with pytest.raises(ContractError) as caught:
        asyncio.run(session.attach({"control": control.to_wire()}))
    assert caught.value.issues[0].code == "interactive_not_live"


def test_commands_for_another_process_are_refused() -> None:
    _, session = setup()
    other_ref = {**session.ref.to_wire(), "incarnationId": "interactive-other"}
    request = AgentInteractiveSessionControlClaimRequest.seal(
        {"operationId": "c", "ref": other_ref, "holderId": "h", "expectedGeneration": 0}
    )
    with pytest.raises(ContractError) as caught:
        asyncio.run(session.claim_control(request))
    assert caught.value.issues[0].code == "interactive_ref_mismatch"


def test_attached_terminal_sees_prompts_and_close_keeps_the_process() -> None:
    _, session = setup()
    control = claim(session, "claim-1", 0).control
    terminal = asyncio.run(session.attach({"control": control.to_wire(), "cols": 90, "rows": 20}))
    assert terminal.control == control and terminal.ref.cols == 90
    prompt = AgentInteractiveSessionPromptCommand.seal(
        {"operationId": "p", "ref": session.ref, "control": control, "prompt": "hello"}
    )
    asyncio.run(session.send_prompt(prompt))
    window = terminal.cursors
    assert window.latest == 2  # the initial prompt, then this one
    asyncio.run(terminal.close())
    assert asyncio.run(session.status()).state == "running"


def test_default_executor_binds_a_sealed_lease_into_the_receipt() -> None:
    from agent_interface.environment.preparation import validate_agent_execution_preparation_receipt
    from agent_interface.testing.interactive_sessions import InMemoryExecutor

    executor = InMemoryExecutor()
    sessions = InMemoryInteractiveSessions(prepare=executor)
    ref = asyncio.run(sessions.start_interactive(START))
    receipt = ref.preparation_receipt
    lease = asyncio.run(executor.leases.get(receipt.workspace.lease_id))
    assert lease is not None and lease.phase == "execution-bound"
    assert lease.execution_preparation_digest == receipt.digest
    assert receipt.workspace.prepared_workspace_digest == lease.prepared_workspace_digest
    assert receipt.authored_profile_digest == FIXTURES["profileDigest"] == receipt.effective_profile_digest
    assert receipt.request_digest == FIXTURES["run"]["requestDigest"]
    result = validate_agent_execution_preparation_receipt(
        receipt=receipt,
        request_digest=receipt.request_digest,
        authored_profile=FIXTURES["profile"],
        effective_profile=FIXTURES["profile"],
        execution_plan_digest=receipt.execution_plan_digest,
        profile_activation={"digest": lease.profile_activation_digest},
        workspace_lease=lease,
    )
    assert result.ok, result.issues
