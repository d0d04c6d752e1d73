"""Managed agent instances: one accepted and one refused example per rule, plus the
cases of the reference's ``agent-instance.test.ts``."""

from __future__ import annotations

from typing import Any

import pytest

from agent_interface.core.errors import ContractError
from agent_interface.core.model import wire_adapter
from agent_interface.session.instance import (
    AGENT_INSTANCE_STATUSES,
    AGENT_INSTANCE_WORKSPACE_MODES,
    AgentInstanceFailure,
    AgentInstanceProfileIdentity,
    AgentInstanceRecord,
    AgentInstanceSpec,
    AgentInstanceStatus,
    AgentInstanceStopAcknowledgement,
    AgentInstanceStopRequest,
)

DIGEST = "sha256:" + "a" * 64
BASE = {
    "kind": "agent-instance",
    "schemaVersion": 1,
    "id": "reviewer",
    "workspace": {"mode": "shared"},
    "createdAtMs": 10,
    "updatedAtMs": 11,
}


def refused(model: Any, value: Any) -> ContractError:
    with pytest.raises(ContractError) as caught:
        model.parse_wire(value)
    return caught.value


def test_enumerations() -> None:
    assert AGENT_INSTANCE_STATUSES == ("starting", "ready", "busy", "failed", "stopped")
    assert AGENT_INSTANCE_WORKSPACE_MODES == ("shared", "isolated")
    status = wire_adapter(AgentInstanceStatus)
    assert status.parse_value("busy") == "busy"
    with pytest.raises(ContractError):
        status.parse_value("paused")


def test_profile_less_spec() -> None:
    spec = {"id": "default", "workspace": {"mode": "shared"}}
    assert AgentInstanceSpec.parse_wire(spec).to_wire() == spec
    assert AgentInstanceSpec.parse_wire({}).to_wire() == {}


def test_inline_profile_harness_override_and_isolated_workspace() -> None:
    spec = AgentInstanceSpec.parse_wire(
        {
            "id": "reviewer",
            "profile": {"name": "reviewer", "harness": "opencode", "prompt": {"appendSystemPrompt": "Review every claim."}},
            "harness": "claude-code",
            "workspace": {"mode": "isolated"},
        }
    )
    assert spec.profile is not None and spec.profile.harness == "opencode"
    assert spec.harness == "claude-code"
    assert spec.workspace is not None and spec.workspace.mode == "isolated"


@pytest.mark.parametrize(
    "value",
    [
        {"id": "planner", "machineShape": "profile-specific-vm"},
        {"id": "planner", "metadata": {"apiKey": "secret"}},
        {"id": "-planner"},
        {"id": "planner-"},
        {"id": "plan ner"},
        {"id": "x" * 129},
        {"id": ""},
        {"name": ""},
        {"name": "tab\there"},
        {"name": "x" * 257},
        {"harness": "not-a-harness"},
        {"workspace": {"mode": "private"}},
        {"profile": {"name": "p", "unknownKey": 1}},
    ],
)
def test_spec_refusals(value: dict[str, Any]) -> None:
    error = refused(AgentInstanceSpec, value)
    assert "secret" not in str(error)


def test_identifier_and_label_limits() -> None:
    AgentInstanceSpec.parse_wire({"id": "a", "name": "n"})
    AgentInstanceSpec.parse_wire({"id": "a.b_c:d-e" + "x" * 119, "name": "é" * 256})
    AgentInstanceSpec.parse_wire({"name": "emoji \U0001f600 ok"})


def test_record_publishes_only_profile_identity() -> None:
    record = AgentInstanceRecord.parse_wire(
        {**BASE, "id": "planner", "profile": {"name": "planner", "digest": DIGEST}, "status": "ready"}
    )
    assert record.profile == AgentInstanceProfileIdentity(name="planner", digest=DIGEST)
    refused(AgentInstanceRecord, {**BASE, "status": "ready", "profile": {"name": "planner", "harness": "codex"}})
    refused(AgentInstanceProfileIdentity, {"digest": "sha256:" + "A" * 64})


def test_failure_only_and_always_when_failed() -> None:
    error = refused(AgentInstanceRecord, {**BASE, "status": "failed"})
    assert [(i.path, i.code) for i in error.issues] == [("/failure", "agent_instance_failure_missing")]
    error = refused(AgentInstanceRecord, {**BASE, "status": "ready", "failure": {"message": "not valid here"}})
    assert [(i.path, i.code) for i in error.issues] == [("/failure", "agent_instance_failure_out_of_state")]
    failed = AgentInstanceRecord.parse_wire(
        {**BASE, "status": "failed", "failure": {"code": "HARNESS_EXITED", "message": "process exited"}}
    )
    assert failed.failure is not None and failed.failure.code == "HARNESS_EXITED"


def test_failure_message_rules() -> None:
    AgentInstanceFailure.parse_wire({"message": "line one\nline two"})
    for message in ("", "nul\0byte", "\ud800"):
        refused(AgentInstanceFailure, {"message": message})
    refused(AgentInstanceFailure, {"code": "bad code", "message": "m"})


def test_reversed_timestamps_and_control_characters() -> None:
    error = refused(AgentInstanceRecord, {**BASE, "status": "ready", "createdAtMs": 20, "updatedAtMs": 10})
    assert [i.path for i in error.issues] == ["/updatedAtMs"]
    refused(AgentInstanceRecord, {**BASE, "status": "ready", "name": "bad\nname"})
    AgentInstanceRecord.parse_wire({**BASE, "status": "stopped", "createdAtMs": 5, "updatedAtMs": 5})
    for bad in (-1, 1.5, 2**53, "10"):
        refused(AgentInstanceRecord, {**BASE, "status": "ready", "createdAtMs": bad})


def test_record_shape() -> None:
    refused(AgentInstanceRecord, {**BASE, "status": "ready", "kind": "agent"})
    refused(AgentInstanceRecord, {**BASE, "status": "ready", "schemaVersion": 2})
    refused(AgentInstanceRecord, {**BASE, "status": "ready", "schemaVersion": True})
    refused(AgentInstanceRecord, {**BASE, "status": "ready", "pid": 4})
    refused(AgentInstanceRecord, {k: v for k, v in BASE.items() if k != "workspace"} | {"status": "ready"})


def test_stop_request_and_idempotent_outcomes() -> None:
    assert AgentInstanceStopRequest.parse_wire({"agentId": "planner", "force": True}).force is True
    refused(AgentInstanceStopRequest, {"agentId": "planner", "force": "yes"})
    ack = {"agentId": "planner", "outcome": "already-stopped"}
    assert AgentInstanceStopAcknowledgement.parse_wire(ack).to_wire() == ack
    refused(AgentInstanceStopAcknowledgement, {"agentId": "planner", "outcome": "killed"})
