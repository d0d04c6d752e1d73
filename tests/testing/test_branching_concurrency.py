"""Concurrent same-key calls on the in-memory branching engine have exactly one effect,
even when its hooks await (issue: check key, await hook, then record)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agent_interface.core.canonical import sha256_utf8
from agent_interface.durable.checkpoint import WorkspaceCheckpointRequest
from agent_interface.durable.cleanup import WorkspaceCleanupRequest
from agent_interface.durable.fork import ForkedEnvironmentRef, WorkspaceForkRequest
from agent_interface.testing import InMemoryWorkspaceBranching

WAYS = 200


async def _yield(times: int = 5) -> None:
    for _ in range(times):
        await asyncio.sleep(0)


class Hooks:
    def __init__(self, *, fail_first: bool = False) -> None:
        self.created: list[str] = []
        self.destroyed: list[str] = []
        self.fail_first = fail_first

    async def on_created(self, ref: ForkedEnvironmentRef) -> None:
        await _yield()
        if self.fail_first and not self.created:
            self.created.append("failed")
            raise RuntimeError("the environment could not be made")
        self.created.append(ref.environment_id)

    async def on_destroyed(self, ref: ForkedEnvironmentRef) -> None:
        await _yield()
        self.destroyed.append(ref.environment_id)


async def _engine_with_checkpoint(hooks: Hooks) -> tuple[InMemoryWorkspaceBranching, Any]:
    engine = InMemoryWorkspaceBranching(
        provider="tangle", on_fork_created=hooks.on_created, on_fork_destroyed=hooks.on_destroyed
    )
    source = {
        "runId": "run-1",
        "provider": "tangle",
        "environmentId": "environment-source",
        "sessionId": "session-1",
        "executionId": "execution-1",
        "requestDigest": sha256_utf8("run-1"),
    }
    made = await engine.checkpoint(WorkspaceCheckpointRequest.seal({"source": source}, idempotency_key="checkpoint-1"))
    return engine, made.checkpoint


def _fork(checkpoint: Any, name: str = "fork") -> WorkspaceForkRequest:
    return WorkspaceForkRequest.seal(
        {"checkpoint": checkpoint, "name": name, "placement": {"kind": "local"}}, idempotency_key="fork-1"
    )


def test_concurrent_same_key_forks_have_one_effect() -> None:
    async def scenario() -> None:
        hooks = Hooks()
        engine, checkpoint = await _engine_with_checkpoint(hooks)
        request = _fork(checkpoint)
        answers = await asyncio.gather(*(engine.fork(request) for _ in range(WAYS)))
        assert len(hooks.created) == 1
        statuses = [answer.status for answer in answers]
        assert statuses.count("created") == 1 and statuses.count("replayed") == WAYS - 1
        assert len({answer.environment.environment_id for answer in answers}) == 1

    asyncio.run(scenario())


def test_concurrent_changed_input_conflicts_while_the_first_is_running() -> None:
    async def scenario() -> None:
        hooks = Hooks()
        engine, checkpoint = await _engine_with_checkpoint(hooks)
        first = _fork(checkpoint)
        changed = [_fork(checkpoint, name=f"changed-{index}") for index in range(WAYS - 1)]
        answers = await asyncio.gather(engine.fork(first), *(engine.fork(request) for request in changed))
        assert answers[0].status == "created"
        assert {answer.status for answer in answers[1:]} == {"conflict"}
        assert all(answer.existing_request_digest == first.request_digest for answer in answers[1:])
        assert len(hooks.created) == 1

    asyncio.run(scenario())


def test_a_failed_first_call_is_every_concurrent_callers_outcome_and_frees_the_key() -> None:
    async def scenario() -> None:
        hooks = Hooks(fail_first=True)
        engine, checkpoint = await _engine_with_checkpoint(hooks)
        request = _fork(checkpoint)
        answers = await asyncio.gather(*(engine.fork(request) for _ in range(WAYS)), return_exceptions=True)
        assert all(isinstance(answer, RuntimeError) for answer in answers)
        assert hooks.created == ["failed"]
        assert (await engine.lookup_fork(_lookup(request))).status == "not_found"
        retried = await engine.fork(request)
        assert retried.status == "created" and len(hooks.created) == 2

    asyncio.run(scenario())


def _lookup(request: WorkspaceForkRequest) -> dict[str, str]:
    return {"idempotencyKey": request.idempotency_key, "requestDigest": request.request_digest}


@pytest.mark.parametrize("same_operation", [True, False])
def test_concurrent_cleanups_of_one_fork_have_one_effect(same_operation: bool) -> None:
    async def scenario() -> None:
        hooks = Hooks()
        engine, checkpoint = await _engine_with_checkpoint(hooks)
        made = await engine.fork(_fork(checkpoint))
        target = made.environment.environment_id
        requests = [
            WorkspaceCleanupRequest.for_target(
                operation_id="destroy-1" if same_operation else f"destroy-{index}",
                kind="fork",
                target_id=target,
                provider="tangle",
            )
            for index in range(WAYS)
        ]
        answers = await asyncio.gather(*(engine.destroy_fork(request) for request in requests))
        assert hooks.destroyed == [target]
        statuses = [answer.status for answer in answers]
        assert statuses.count("deleted") == 1 and statuses.count("already_absent") == WAYS - 1

    asyncio.run(scenario())


def test_cleanup_while_the_fork_is_being_made_waits_for_it() -> None:
    async def scenario() -> None:
        hooks = Hooks()
        engine, checkpoint = await _engine_with_checkpoint(hooks)
        request = _fork(checkpoint)
        making = asyncio.ensure_future(engine.fork(request))
        await asyncio.sleep(0)
        environment_id = engine._forks[request.idempotency_key].ref.environment_id
        cleanup = WorkspaceCleanupRequest.for_target(
            operation_id="destroy-early", kind="fork", target_id=environment_id, provider="tangle"
        )
        blocked = await engine.delete_checkpoint(
            WorkspaceCleanupRequest.for_target(
                operation_id="delete-early", kind="checkpoint", target_id=checkpoint.checkpoint_id, provider="tangle"
            )
        )
        assert blocked.status == "in_use"
        destroyed = await engine.destroy_fork(cleanup)
        assert (await making).status == "created"
        assert destroyed.status == "deleted" and hooks.destroyed == [environment_id]

    asyncio.run(scenario())
