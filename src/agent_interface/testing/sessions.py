"""In-memory managed agents and workspace leases that follow every rule of the contract.

:class:`InMemoryAgentInstances` starts, lists and stops managed agents:

* a spec is validated before anything happens; its record carries the profile's name and
  canonical digest, never the profile;
* a caller-chosen ``id`` is an idempotency key: the same spec again answers the same
  record, a changed spec under that id is refused (``agent_instance_id_conflict``);
* stop answers ``stopped`` once, then ``already-stopped``; an unknown id ``not-found``.

:class:`InMemoryWorkspaceLeases` allocates workspaces and moves their lease records
through ``copy-ready`` -> ``workspace-sealed`` -> ``execution-bound`` -> ``destroying``
-> ``destroyed`` (or ``cleanup-failed``, retried later):

* the owner token is handed out once, in :class:`WorkspaceLeaseGrant`, and only its
  digest is kept; every change presents it, and a wrong token, an expired lease or a
  change the phase does not allow is refused without touching the record;
* repeating a seal, binding or renewal that already happened answers the same record;
* every record is built with :func:`build_agent_workspace_lease_record`, so its digest
  covers exactly the public lease material.
"""

from __future__ import annotations

import hmac
import itertools
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from agent_interface.core.canonical import canonical_digest, sha256_utf8
from agent_interface.core.errors import ContractError
from agent_interface.environment.source_snapshot import AgentWorkspaceSourceSnapshotPolicy
from agent_interface.environment.workspace_lease import (
    AgentWorkspaceExecutionBindingRequest,
    AgentWorkspaceLeaseAuthorization,
    AgentWorkspaceLeaseRecord,
    AgentWorkspaceLeaseRenewalRequest,
    AgentWorkspaceSealRequest,
    build_agent_workspace_lease_record,
)
from agent_interface.profile.canonical import canonical_agent_profile_digest
from agent_interface.session.instance import (
    AgentInstanceFailure,
    AgentInstanceProfileIdentity,
    AgentInstanceRecord,
    AgentInstanceSpec,
    AgentInstanceStatus,
    AgentInstanceStopAcknowledgement,
    AgentInstanceStopRequest,
    AgentInstanceWorkspace,
)
from agent_interface.session.timestamps import system_clock_ms

__all__ = [
    "InMemoryAgentInstances",
    "InMemoryWorkspaceLeases",
    "WorkspaceLeaseGrant",
]


def _parse(model: Any, value: Any) -> Any:
    if isinstance(value, model):
        return value
    if not isinstance(value, Mapping):
        raise TypeError(f"expected {model.__name__} or its wire mapping")
    return model.parse_wire(value)


# --- managed agents ------------------------------------------------------------------------


@dataclass
class _Instance:
    spec_digest: str
    record: AgentInstanceRecord


@dataclass
class InMemoryAgentInstances:
    """Managed agents of one environment. ``default_workspace`` is the documented default
    view; ``clock_ms`` is the time source in epoch milliseconds."""

    default_workspace: str = "shared"
    clock_ms: Callable[[], int] = system_clock_ms
    _instances: dict[str, _Instance] = field(default_factory=dict, init=False, repr=False)
    _counter: Any = field(default_factory=lambda: itertools.count(1), init=False, repr=False)

    async def start(self, spec: AgentInstanceSpec | Mapping[str, Any]) -> AgentInstanceRecord:
        exact: AgentInstanceSpec = _parse(AgentInstanceSpec, spec)
        spec_digest = canonical_digest(exact.to_wire())
        if exact.id is not None and exact.id in self._instances:
            known = self._instances[exact.id]
            if known.spec_digest != spec_digest:
                raise ContractError.single(
                    "/id", "agent_instance_id_conflict", "this agent id already names a different spec"
                )
            return known.record
        agent_id = exact.id
        while agent_id is None or agent_id in self._instances:
            agent_id = f"agent-{next(self._counter)}"
        profile = None
        harness = exact.harness
        if exact.profile is not None:
            profile = AgentInstanceProfileIdentity(
                name=exact.profile.name, digest=canonical_agent_profile_digest(exact.profile)
            )
            harness = harness if harness is not None else exact.profile.harness
        now = self.clock_ms()
        record = AgentInstanceRecord(
            kind="agent-instance",
            schema_version=1,
            id=agent_id,
            name=exact.name,
            profile=profile,
            harness=harness,
            workspace=exact.workspace or AgentInstanceWorkspace(mode=self.default_workspace),  # type: ignore[arg-type]
            status="ready",
            created_at_ms=now,
            updated_at_ms=now,
        )
        self._instances[agent_id] = _Instance(spec_digest, record)
        return record

    async def get(self, agent_id: str) -> AgentInstanceRecord | None:
        known = self._instances.get(agent_id)
        return None if known is None else known.record

    async def list(self) -> tuple[AgentInstanceRecord, ...]:
        return tuple(known.record for known in self._instances.values())

    def set_status(
        self, agent_id: str, status: AgentInstanceStatus, failure: AgentInstanceFailure | None = None
    ) -> AgentInstanceRecord:
        """Drive an instance's lifecycle from a test (``busy``, ``failed`` with a reason, ...)."""
        known = self._instances[agent_id]
        wire = known.record.to_wire()
        wire.pop("failure", None)
        wire.update(status=status, updatedAtMs=max(self.clock_ms(), known.record.created_at_ms))
        if failure is not None:
            wire["failure"] = failure.to_wire()
        known.record = AgentInstanceRecord.parse_wire(wire)
        return known.record

    async def stop(self, request: AgentInstanceStopRequest | Mapping[str, Any]) -> AgentInstanceStopAcknowledgement:
        exact: AgentInstanceStopRequest = _parse(AgentInstanceStopRequest, request)
        known = self._instances.get(exact.agent_id)
        if known is None:
            return AgentInstanceStopAcknowledgement(agent_id=exact.agent_id, outcome="not-found")
        if known.record.status == "stopped":
            return AgentInstanceStopAcknowledgement(agent_id=exact.agent_id, outcome="already-stopped")
        self.set_status(exact.agent_id, "stopped")
        return AgentInstanceStopAcknowledgement(agent_id=exact.agent_id, outcome="stopped")


# --- workspace leases ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class WorkspaceLeaseGrant:
    """A new lease: its public record and the owner token, handed out this once."""

    record: AgentWorkspaceLeaseRecord
    owner_token: str = field(repr=False)


@dataclass
class _Lease:
    token_digest: str
    record: AgentWorkspaceLeaseRecord


_TRANSITIONS = {
    "seal": ("copy-ready",),
    "bind": ("workspace-sealed",),
    "renew": ("copy-ready", "workspace-sealed", "execution-bound"),
}


@dataclass
class InMemoryWorkspaceLeases:
    """Workspace leases of one provider. ``fail_cleanup`` makes the next destroy of a lease
    fail with a sanitized error, as a real cleanup may; the retry completes it."""

    provider: str = "in-memory/workspace"
    policy: AgentWorkspaceSourceSnapshotPolicy = field(
        default_factory=lambda: AgentWorkspaceSourceSnapshotPolicy(
            kind="provider-declared",
            name="in-memory/source-snapshot",
            version=1,
            digest=canonical_digest({"kind": "in-memory-source-snapshot-policy", "version": 1}),
        )
    )
    ttl_ms: int = 3_600_000
    clock_ms: Callable[[], int] = system_clock_ms
    fail_cleanup: set[str] = field(default_factory=set)
    _leases: dict[str, _Lease] = field(default_factory=dict, init=False, repr=False)
    _counter: Any = field(default_factory=lambda: itertools.count(1), init=False, repr=False)

    async def allocate(
        self, *, owner_id: str, source_snapshot_digest: str, isolation: str = "per-run"
    ) -> WorkspaceLeaseGrant:
        lease_id = f"lease-{next(self._counter)}"
        root = f"/workspaces/{lease_id}"
        now = self.clock_ms()
        material = {
            "kind": "agent-workspace-lease",
            "schemaVersion": 1,
            "phase": "copy-ready",
            "leaseId": lease_id,
            "ownerId": owner_id,
            "workspace": {
                "provider": self.provider,
                "root": root,
                "identityDigest": canonical_digest({"provider": self.provider, "leaseId": lease_id, "root": root}),
            },
            "isolation": isolation,
            "sourceSnapshotDigest": source_snapshot_digest,
            "sourceSnapshotPolicy": self.policy.to_wire(),
            "createdAtMs": now,
            "updatedAtMs": now,
            "expiresAtMs": now + self.ttl_ms,
            "cleanupAttempts": 0,
        }
        record = build_agent_workspace_lease_record(material)
        token = secrets.token_urlsafe(32)
        self._leases[lease_id] = _Lease(sha256_utf8(token), record)
        return WorkspaceLeaseGrant(record=record, owner_token=token)

    async def get(self, lease_id: str) -> AgentWorkspaceLeaseRecord | None:
        known = self._leases.get(lease_id)
        return None if known is None else known.record

    def _authorized(self, request: AgentWorkspaceLeaseAuthorization) -> _Lease:
        known = self._leases.get(request.lease_id)
        # one refusal for an unknown lease and a wrong token: neither reveals the other
        if known is None or not hmac.compare_digest(known.token_digest, sha256_utf8(request.owner_token)):
            raise ContractError.single(
                "", "workspace_lease_unauthorized", "the owner token does not authorize this lease"
            )
        return known

    def _change(self, known: _Lease, operation: str, **change: Any) -> AgentWorkspaceLeaseRecord:
        record = known.record
        if record.phase not in _TRANSITIONS[operation]:
            raise ContractError.single(
                "/phase", "workspace_lease_phase", f"a lease in phase {record.phase} cannot {operation}"
            )
        if self.clock_ms() >= record.expires_at_ms:
            raise ContractError.single("/expiresAtMs", "workspace_lease_expired", "the workspace lease has expired")
        wire = record.to_wire()
        del wire["digest"]
        wire.update(change, updatedAtMs=max(self.clock_ms(), record.created_at_ms))
        known.record = build_agent_workspace_lease_record(wire)
        return known.record

    async def seal(self, request: AgentWorkspaceSealRequest) -> AgentWorkspaceLeaseRecord:
        known = self._authorized(request)
        record = known.record
        if record.phase != "copy-ready" and record.profile_activation_digest == request.profile_activation_digest:
            return record
        prepared = canonical_digest(
            {
                "kind": "in-memory-prepared-workspace",
                "sourceSnapshotDigest": record.source_snapshot_digest,
                "profileActivationDigest": request.profile_activation_digest,
            }
        )
        return self._change(
            known,
            "seal",
            phase="workspace-sealed",
            preparedWorkspaceDigest=prepared,
            profileActivationDigest=request.profile_activation_digest,
        )

    async def bind_execution(self, request: AgentWorkspaceExecutionBindingRequest) -> AgentWorkspaceLeaseRecord:
        known = self._authorized(request)
        if known.record.execution_preparation_digest == request.execution_preparation_digest:
            return known.record
        return self._change(
            known, "bind", phase="execution-bound", executionPreparationDigest=request.execution_preparation_digest
        )

    async def renew(self, request: AgentWorkspaceLeaseRenewalRequest) -> AgentWorkspaceLeaseRecord:
        known = self._authorized(request)
        if known.record.expires_at_ms == request.expires_at_ms:
            return known.record
        if request.expires_at_ms <= self.clock_ms():
            raise ContractError.single(
                "/expiresAtMs", "workspace_lease_renewal_past", "a renewal must move expiry into the future"
            )
        return self._change(known, "renew", expiresAtMs=request.expires_at_ms)

    async def destroy(self, request: AgentWorkspaceLeaseAuthorization) -> AgentWorkspaceLeaseRecord:
        """Remove the workspace. Allowed in any phase and after expiry; a destroyed lease
        answers its final record again."""
        known = self._authorized(request)
        record = known.record
        if record.phase == "destroyed":
            return record
        wire = record.to_wire()
        del wire["digest"]
        wire.pop("cleanupError", None)
        wire.update(cleanupAttempts=record.cleanup_attempts + 1, updatedAtMs=max(self.clock_ms(), record.created_at_ms))
        if record.lease_id in self.fail_cleanup:
            self.fail_cleanup.discard(record.lease_id)
            wire.update(phase="cleanup-failed", cleanupError="workspace removal left files behind")
        else:
            wire["phase"] = "destroyed"
        known.record = build_agent_workspace_lease_record(wire)
        return known.record
