"""No credential, token or secret reaches a record, an acknowledgement, a repr or an error."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agent_interface.core.errors import ContractError
from agent_interface.core.model import wire_adapter
from agent_interface.environment.workspace_lease import (
    AgentWorkspaceLeaseRecordMaterial,
    AgentWorkspaceSealRequest,
)
from agent_interface.session.instance import (
    AgentInstanceRecord,
    AgentInstanceSpec,
    AgentInstanceStopRequest,
)
from agent_interface.session.terminal import (
    TerminalAttachRequest,
    TerminalInput,
    TerminalOutputEvent,
    TerminalSessionRef,
)
from agent_interface.testing.sessions import InMemoryWorkspaceLeases

SECRET = "sk-" + "Z9" * 24
OUTPUT = wire_adapter(TerminalOutputEvent)


@pytest.mark.parametrize(
    ("parse", "value"),
    [
        (AgentInstanceSpec.parse_wire, {"id": SECRET + " "}),
        (AgentInstanceSpec.parse_wire, {"name": SECRET + "\n"}),
        (AgentInstanceSpec.parse_wire, {"metadata": {"apiKey": SECRET}}),
        (AgentInstanceStopRequest.parse_wire, {"agentId": SECRET, "force": SECRET}),
        (AgentInstanceRecord.parse_wire, {"kind": SECRET}),
        (TerminalInput.parse_wire, {"data": SECRET * 400}),
        (TerminalInput.parse_wire, {"data": SECRET, "token": SECRET}),
        (TerminalAttachRequest.parse_wire, {"parentExecutionId": " " + SECRET, "mode": SECRET}),
        (OUTPUT.parse_value, {"type": "output", "seq": SECRET, "data": SECRET}),
        (AgentWorkspaceLeaseRecordMaterial.parse_wire, {"ownerId": SECRET, "leaseId": "https://u:" + SECRET + "@h.test/"}),
    ],
)
def test_refusals_do_not_quote_values(parse: Any, value: Any) -> None:
    with pytest.raises(ContractError) as caught:
        parse(value)
    assert SECRET not in str(caught.value)
    assert SECRET not in repr(caught.value)
    assert all(SECRET not in issue.message for issue in caught.value.issues)


def test_reprs_leave_out_keystrokes_output_and_commands() -> None:
    assert SECRET not in repr(TerminalInput(data=SECRET))
    assert SECRET not in repr(OUTPUT.parse_value({"type": "output", "seq": 1, "data": SECRET}))
    assert SECRET not in repr(TerminalAttachRequest(parent_execution_id="e", mode="attach", command=f"login --token {SECRET}"))
    ref = TerminalSessionRef.parse_wire(
        {
            "terminalSessionId": "t",
            "parentExecutionId": "e",
            "name": "n",
            "shell": "/bin/sh",
            "command": f"login --token {SECRET}",
            "cwd": "/w",
            "cols": 1,
            "rows": 1,
            "createdAt": "2026-01-01T00:00:00Z",
            "lastActivityAt": "2026-01-01T00:00:00Z",
            "expiresAt": "2026-01-02T00:00:00Z",
            "isRunning": True,
            "attachCount": 0,
        }
    )
    assert SECRET not in repr(ref)
    # the value is still there for whoever asks for it
    assert ref.command is not None and SECRET in ref.command


def test_owner_tokens_stay_private() -> None:
    leases = InMemoryWorkspaceLeases()
    grant = asyncio.run(leases.allocate(owner_id="run", source_snapshot_digest="sha256:" + "1" * 64))
    token = grant.owner_token
    assert token not in repr(grant)
    assert token not in grant.record.to_wire_json().decode()
    assert token not in repr(leases)
    request = AgentWorkspaceSealRequest(lease_id="lease-1", owner_token=token, profile_activation_digest="sha256:" + "2" * 64)
    assert token not in repr(request)
    with pytest.raises(ContractError) as caught:
        asyncio.run(
            leases.seal(
                AgentWorkspaceSealRequest(lease_id="lease-1", owner_token=token + "x", profile_activation_digest="sha256:" + "2" * 64)
            )
        )
    assert token not in str(caught.value)
    # the provider keeps only a one-way digest of the token
    assert all(token not in repr(vars(lease)) for lease in leases._leases.values())
