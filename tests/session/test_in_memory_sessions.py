"""The in-memory managed agents, workspace leases and terminals follow the contract's rules."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agent_interface.core.canonical import sha256_utf8
from agent_interface.core.errors import ContractError
from agent_interface.environment.workspace_lease import (
    AgentWorkspaceExecutionBindingRequest,
    AgentWorkspaceLeaseAuthorization,
    AgentWorkspaceLeaseRecord,
    AgentWorkspaceLeaseRenewalRequest,
    AgentWorkspaceSealRequest,
)
from agent_interface.session.instance import AgentInstanceFailure, AgentInstanceRecord
from agent_interface.session.terminal import (
    TerminalAttached,
    TerminalAttachUnavailable,
    TerminalOutputFrame,
    terminal_session_usable,
)
from agent_interface.session.timestamps import iso_of_epoch_ms
from agent_interface.testing.sessions import InMemoryAgentInstances, InMemoryWorkspaceLeases
from agent_interface.testing.terminals import InMemoryTerminals


class Clock:
    def __init__(self, start: int = 1_000_000) -> None:
        self.now = start

    def __call__(self) -> int:
        return self.now


def run(coro: Any) -> Any:
    return asyncio.run(coro)


# --- instances -----------------------------------------------------------------------------


def test_instance_lifecycle() -> None:
    clock = Clock()
    instances = InMemoryAgentInstances(clock_ms=clock)
    record = run(instances.start({"workspace": {"mode": "isolated"}, "harness": "codex"}))
    assert record.id == "agent-1" and record.profile is None and record.harness == "codex"
    assert record.workspace.mode == "isolated"
    default = run(instances.start({}))
    assert default.workspace.mode == "shared" and default.id != record.id
    clock.now += 5
    failed = instances.set_status(record.id, "failed", AgentInstanceFailure(message="exited"))
    assert AgentInstanceRecord.parse_wire(failed.to_wire()).status == "failed"
    assert failed.updated_at_ms == record.created_at_ms + 5
    ready = instances.set_status(record.id, "ready")
    assert ready.failure is None
    with pytest.raises(ContractError):
        instances.set_status(record.id, "failed")  # a failure needs its reason


def test_instance_id_conflict_is_refused_without_effect() -> None:
    instances = InMemoryAgentInstances()
    run(instances.start({"id": "planner", "name": "one"}))
    with pytest.raises(ContractError) as caught:
        run(instances.start({"id": "planner", "name": "two"}))
    assert caught.value.issues[0].code == "agent_instance_id_conflict"
    assert len(run(instances.list())) == 1
    # the profile's harness is the effective harness unless overridden
    record = run(instances.start({"id": "r", "profile": {"name": "r", "harness": "opencode"}, "harness": "claude-code"}))
    assert record.harness == "claude-code"


# --- leases --------------------------------------------------------------------------------

SOURCE = sha256_utf8("source")
ACTIVATION = sha256_utf8("activation")
EXECUTION = sha256_utf8("execution")


def test_lease_walk_and_self_digests() -> None:
    leases = InMemoryWorkspaceLeases()
    grant = run(leases.allocate(owner_id="run-1", source_snapshot_digest=SOURCE))
    token = grant.owner_token
    assert token not in repr(grant) and token not in grant.record.to_wire_json().decode()
    lease_id = grant.record.lease_id
    sealed = run(leases.seal(AgentWorkspaceSealRequest(lease_id=lease_id, owner_token=token, profile_activation_digest=ACTIVATION)))
    bound = run(
        leases.bind_execution(
            AgentWorkspaceExecutionBindingRequest(lease_id=lease_id, owner_token=token, execution_preparation_digest=EXECUTION)
        )
    )
    destroyed = run(leases.destroy(AgentWorkspaceLeaseAuthorization(lease_id=lease_id, owner_token=token)))
    for record in (grant.record, sealed, bound, destroyed):
        assert AgentWorkspaceLeaseRecord.parse_wire(record.to_wire()) == record
    assert [r.phase for r in (grant.record, sealed, bound, destroyed)] == [
        "copy-ready", "workspace-sealed", "execution-bound", "destroyed"
    ]
    assert destroyed.execution_preparation_digest == EXECUTION and destroyed.cleanup_attempts == 1


def test_lease_refusals_never_quote_the_token() -> None:
    clock = Clock()
    leases = InMemoryWorkspaceLeases(clock_ms=clock, ttl_ms=100)
    grant = run(leases.allocate(owner_id="run-1", source_snapshot_digest=SOURCE))
    lease_id, token = grant.record.lease_id, grant.owner_token
    for bad in (token + "x", "", "guess"):
        with pytest.raises(ContractError) as caught:
            run(leases.seal(AgentWorkspaceSealRequest(lease_id=lease_id, owner_token=bad, profile_activation_digest=ACTIVATION)))
        assert caught.value.issues[0].code == "workspace_lease_unauthorized"
        assert token not in str(caught.value) and (not bad or bad not in str(caught.value))
    with pytest.raises(ContractError) as caught:
        run(leases.seal(AgentWorkspaceSealRequest(lease_id="lease-404", owner_token=token, profile_activation_digest=ACTIVATION)))
    assert caught.value.issues[0].code == "workspace_lease_unauthorized"
    clock.now += 100
    with pytest.raises(ContractError) as caught:
        run(leases.seal(AgentWorkspaceSealRequest(lease_id=lease_id, owner_token=token, profile_activation_digest=ACTIVATION)))
    assert caught.value.issues[0].code == "workspace_lease_expired"
    # an expired lease can still be cleaned up
    assert run(leases.destroy(AgentWorkspaceLeaseAuthorization(lease_id=lease_id, owner_token=token))).phase == "destroyed"


def test_lease_renewal_and_failed_cleanup() -> None:
    clock = Clock()
    leases = InMemoryWorkspaceLeases(clock_ms=clock)
    grant = run(leases.allocate(owner_id="run-1", source_snapshot_digest=SOURCE))
    lease_id, token = grant.record.lease_id, grant.owner_token
    with pytest.raises(ContractError):
        run(leases.renew(AgentWorkspaceLeaseRenewalRequest(lease_id=lease_id, owner_token=token, expires_at_ms=clock.now)))
    later = grant.record.expires_at_ms + 10
    renewed = run(leases.renew(AgentWorkspaceLeaseRenewalRequest(lease_id=lease_id, owner_token=token, expires_at_ms=later)))
    assert renewed.expires_at_ms == later
    leases.fail_cleanup.add(lease_id)
    authorization = AgentWorkspaceLeaseAuthorization(lease_id=lease_id, owner_token=token)
    failed = run(leases.destroy(authorization))
    assert failed.phase == "cleanup-failed" and failed.cleanup_error and failed.cleanup_attempts == 1
    done = run(leases.destroy(authorization))
    assert done.phase == "destroyed" and done.cleanup_error is None and done.cleanup_attempts == 2


# --- terminals -----------------------------------------------------------------------------


def test_terminal_open_attach_and_expiry() -> None:
    clock = Clock()
    terminals = InMemoryTerminals(clock_ms=clock, ttl_ms=1_000, parent_executions=frozenset({"execution-1"}))
    unknown = run(terminals.attach_terminal({"parentExecutionId": "execution-9", "mode": "attach"}))
    assert isinstance(unknown, TerminalAttachUnavailable)
    opened = run(terminals.attach_terminal({"parentExecutionId": "execution-1", "mode": "attach", "connectionId": "c1"}))
    assert isinstance(opened, TerminalAttached) and opened.ref.connection_id == "c1"
    assert terminal_session_usable(opened.ref, iso_of_epoch_ms(clock.now))
    handle = terminals.terminal(opened.ref.terminal_session_id)
    detached = run(handle.detach())
    assert detached.status == "detached" and detached.connection_id == "c1" and handle.ref.connection_id is None
    clock.now += 1_000
    assert not terminal_session_usable(handle.ref, iso_of_epoch_ms(clock.now))
    with pytest.raises(ContractError):
        run(handle.input({"data": "late"}))
    again = run(terminals.attach_terminal({**{"parentExecutionId": "execution-1", "mode": "attach"}, "terminalSessionId": opened.ref.terminal_session_id}))
    assert isinstance(again, TerminalAttachUnavailable)
    with pytest.raises(ContractError):
        terminals.terminal("terminal-404")


def test_terminal_retention_window_and_eviction() -> None:
    terminals = InMemoryTerminals(max_frames=3)
    opened = run(terminals.attach_terminal({"parentExecutionId": "e", "mode": "attach"}))
    handle = terminals.terminal(opened.ref.terminal_session_id)

    async def scenario() -> list[int]:
        for index in range(5):
            await handle.input({"data": str(index)})
        await handle.resize({"cols": 10, "rows": 5})
        await handle.close()
        return [event.seq async for event in handle.events() if isinstance(event, TerminalOutputFrame)]

    assert run(scenario()) == [3, 4, 5]
    window = handle.cursors
    assert (window.earliest, window.latest) == (2, 5)
    with pytest.raises(ContractError) as caught:
        run(_drain(handle.events(since=1)))
    assert caught.value.issues[0].code == "terminal_cursor_unavailable"
    events = run(_drain(handle.events(since=4)))
    assert [e.type for e in events] == ["output", "resize", "exit"]
    assert handle.ref.cols == 10 and not handle.ref.is_running
    # a logical resume of an exited terminal replays; a live attach is refused
    logical = run(terminals.attach_terminal({"parentExecutionId": "e", "mode": "logical", "terminalSessionId": handle.ref.terminal_session_id}))
    assert isinstance(logical, TerminalAttached) and logical.mode == "logical"


def test_terminal_follows_live_output() -> None:
    terminals = InMemoryTerminals()

    async def scenario() -> list[str]:
        opened = await terminals.attach_terminal({"parentExecutionId": "e", "mode": "attach"})
        handle = terminals.terminal(opened.ref.terminal_session_id)
        seen: list[str] = []

        async def reader() -> None:
            async for event in handle.events(since=0):
                seen.append(event.type)

        task = asyncio.create_task(reader())
        await asyncio.sleep(0)
        await handle.input({"data": "a"})
        await asyncio.sleep(0)
        await handle.input({"data": "b"})
        await handle.close()
        await asyncio.wait_for(task, 1)
        return seen

    assert run(scenario()) == ["output", "output", "exit"]


async def _drain(events: Any) -> list[Any]:
    return [event async for event in events]
