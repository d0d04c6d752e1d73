"""Concurrent same-key calls on the in-memory interactive sessions have one effect, even
when preparation awaits (issue: check key, await hook, then record)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agent_interface.core.errors import ContractError
from agent_interface.profile.canonical import canonical_agent_profile_digest
from agent_interface.session.interactive_control import (
    AgentInteractiveSessionControlClaimRequest,
    AgentInteractiveSessionPromptCommand,
    AgentInteractiveSessionStopCommand,
)
from agent_interface.session.interactive_start import agent_interactive_session_run_ref
from agent_interface.testing import InMemoryExecutor, InMemoryInteractiveSessions

WAYS = 200
PROFILE = {"name": "agent", "harness": "codex"}
WHERE = {"provider": "p", "environmentId": "e", "sessionId": "s", "executionId": "x"}


def _start(prompt: str = "go") -> dict[str, Any]:
    material = {"profile": PROFILE, "requestedProfileDigest": canonical_agent_profile_digest(PROFILE), "initialPrompt": prompt}
    return {"run": agent_interactive_session_run_ref(WHERE, material).to_wire(), **material}


class SlowExecutor:
    def __init__(self, *, fail_first: bool = False) -> None:
        self.inner = InMemoryExecutor()
        self.calls = 0
        self.fail_first = fail_first

    async def __call__(self, start: Any) -> Any:
        self.calls += 1
        for _ in range(5):
            await asyncio.sleep(0)
        if self.fail_first and self.calls == 1:
            raise RuntimeError("the executor is down")
        return await self.inner(start)


def test_concurrent_identical_starts_launch_one_process() -> None:
    async def scenario() -> None:
        executor = SlowExecutor()
        sessions = InMemoryInteractiveSessions(prepare=executor)
        refs = await asyncio.gather(*(sessions.start_interactive(_start()) for _ in range(WAYS)))
        assert executor.calls == 1 and sessions.start_count == 1
        assert all(ref == refs[0] for ref in refs)

    asyncio.run(scenario())


def test_concurrent_changed_starts_are_refused_and_launch_nothing() -> None:
    async def scenario() -> None:
        executor = SlowExecutor()
        sessions = InMemoryInteractiveSessions(prepare=executor)
        good = _start()
        changed = [{**good, "initialPrompt": f"changed {index}"} for index in range(WAYS - 1)]
        answers = await asyncio.gather(
            sessions.start_interactive(good), *(sessions.start_interactive(item) for item in changed), return_exceptions=True
        )
        assert not isinstance(answers[0], BaseException)
        assert all(isinstance(answer, ContractError) for answer in answers[1:])
        assert executor.calls == 1 and sessions.start_count == 1

    asyncio.run(scenario())


def test_a_failed_first_start_is_everyones_outcome_and_a_retry_launches() -> None:
    async def scenario() -> None:
        executor = SlowExecutor(fail_first=True)
        sessions = InMemoryInteractiveSessions(prepare=executor)
        answers = await asyncio.gather(*(sessions.start_interactive(_start()) for _ in range(WAYS)), return_exceptions=True)
        assert all(isinstance(answer, RuntimeError) for answer in answers)
        assert executor.calls == 1 and sessions.start_count == 0
        await sessions.start_interactive(_start())
        assert executor.calls == 2 and sessions.start_count == 1

    asyncio.run(scenario())


@pytest.mark.parametrize("what", ["claim", "prompt", "stop"])
def test_concurrent_same_operation_commands_have_one_effect(what: str) -> None:
    async def scenario() -> None:
        sessions = InMemoryInteractiveSessions()
        ref = await sessions.start_interactive(_start())
        session = sessions.interactive(ref)
        claim = AgentInteractiveSessionControlClaimRequest.seal(
            {"operationId": "claim-1", "ref": ref, "holderId": "a", "expectedGeneration": 0}
        )
        if what == "claim":
            answers = await asyncio.gather(*(session.claim_control(claim) for _ in range(WAYS)))
            assert [answer.status for answer in answers].count("accepted") == 1
            assert {answer.control for answer in answers} == {answers[0].control}
            return
        control = (await session.claim_control(claim)).control
        if what == "prompt":
            prompt = AgentInteractiveSessionPromptCommand.seal(
                {"operationId": "prompt-1", "ref": ref, "control": control, "prompt": "once"}
            )
            answers = await asyncio.gather(*(session.send_prompt(prompt) for _ in range(WAYS)))
            assert [answer.status for answer in answers].count("accepted") == 1
            assert session.delivered_prompts.count("once") == 1
            return
        stop = AgentInteractiveSessionStopCommand.seal({"operationId": "stop-1", "ref": ref, "control": control})
        answers = await asyncio.gather(*(session.stop(stop) for _ in range(WAYS)))
        statuses = [answer.status for answer in answers]
        assert statuses.count("accepted") == 1 and statuses.count("replayed") == WAYS - 1
        assert {answer.effect for answer in answers} == {"stopped"}

    asyncio.run(scenario())
