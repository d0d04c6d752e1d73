"""Conformance checks for the long-lived session surfaces of a provider.

:func:`run_session_conformance` drives whichever parts it is given and checks every
answer with the contract's own schemas and matchers:

* ``instances`` (start / get / stop managed agents): a record never carries the profile,
  an id is an idempotency key, a changed spec under a used id is refused, stop is
  idempotent;
* ``leases`` (allocate / seal / bind_execution / renew / destroy workspace leases): every
  record re-parses with a valid self-digest, phases move only forward, a wrong owner
  token or an expired lease changes nothing, and the token never appears in a record,
  a ``repr`` or an error;
* ``terminals`` (``attach_terminal`` / ``terminal``): attach answers bind to their
  request, output replays from a cursor without loss or duplication, an evicted cursor is
  refused, a closed terminal is no longer usable;
* ``interactive`` (``start_interactive`` / ``interactive``): see
  :mod:`agent_interface.conformance.interactive_sessions`.

It returns a :class:`~agent_interface.conformance.report.ConformanceReport`; a failed
check is reported, never raised. Called with no part at all it raises
:class:`~agent_interface.conformance.report.ConformanceUsageError`. From pytest::

    def test_my_sessions_conform() -> None:
        run_session_conformance(instances=MyInstances()).raise_for_failures()

    async def test_my_sessions_conform_async() -> None:
        (await run_session_conformance_async(leases=MyLeases())).raise_for_failures()
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from agent_interface.conformance.interactive_sessions import (
    InteractiveCheckRun,
    interactive_session_checks,
)
from agent_interface.conformance.report import (
    CheckFailed,
    CheckRun,
    ConformanceReport,
    ConformanceUsageError,
    contained,
    expect,
    run_sync,
)
from agent_interface.core.canonical import canonical_digest, sha256_utf8
from agent_interface.core.errors import ContractError
from agent_interface.core.model import wire_adapter
from agent_interface.durable.portable_context import plain_wire
from agent_interface.environment.workspace_lease import (
    AgentWorkspaceExecutionBindingRequest,
    AgentWorkspaceLeaseAuthorization,
    AgentWorkspaceLeaseRecord,
    AgentWorkspaceLeaseRenewalRequest,
    AgentWorkspaceSealRequest,
)
from agent_interface.profile.canonical import canonical_agent_profile_digest
from agent_interface.session.instance import (
    AgentInstanceRecord,
    AgentInstanceStopAcknowledgement,
)
from agent_interface.session.terminal import (
    TerminalAttachResult,
    TerminalDetachAck,
    TerminalOutputEvent,
    TerminalReplayWindow,
    terminal_attach_result_matches_request,
    terminal_session_usable,
)
from agent_interface.session.timestamps import iso_of_epoch_ms, system_clock_ms

__all__ = [
    "run_session_conformance",
    "run_session_conformance_async",
]



def _parse(tp: Any, value: Any, what: str) -> Any:
    try:
        return wire_adapter(tp).parse_value(plain_wire(value))
    except ContractError as error:
        raise CheckFailed(f"{what} is not a valid answer: {error}") from None


class _Run(CheckRun):
    """The shared :class:`CheckRun`, whose ``secrets`` list the lease checks extend."""

    def __init__(self, subject: str) -> None:
        self.secrets: list[str] = []
        super().__init__("session", subject, secrets=self.secrets)

    def _leaks(self, text: str) -> bool:
        return any(secret and secret in text for secret in self.secrets)

    async def interactive_check(self, name: str, body: Callable[[], Awaitable[None]]) -> bool:
        """A check of the interactive kit, whose bodies fail with its own exception."""

        async def translated() -> None:
            try:
                await body()
            except InteractiveCheckRun.failure as failure:
                raise CheckFailed(str(failure)) from None

        return await self.check(name, translated)


async def _refused(call: Awaitable[Any], what: str, secrets: list[str] = []) -> ContractError:  # noqa: B006
    try:
        answer = await call
    except ContractError as error:
        for secret in secrets:
            expect(secret not in str(error) and secret not in repr(error), f"{what}: the refusal quotes a secret")
        return error
    raise CheckFailed(f"{what} was accepted (answered {type(answer).__name__})")


def _wire_text(value: Any) -> str:
    return json.dumps(plain_wire(value), ensure_ascii=False)


# --- managed agents ------------------------------------------------------------------------


async def _instance_checks(run: _Run, instances: Any, nonce: str) -> None:
    agent_id = f"conformance-{nonce}"
    prompt = f"Conformance prompt {nonce}: be brief."
    profile = {"name": f"conformance-{nonce}", "harness": "codex", "prompt": {"appendSystemPrompt": prompt}}
    spec = {"id": agent_id, "name": "Conformance agent", "profile": profile, "workspace": {"mode": "shared"}}
    state: dict[str, Any] = {}

    async def started() -> None:
        record = _parse(AgentInstanceRecord, await instances.start(spec), "start()")
        expect(record.id == agent_id, "the record does not carry the caller-selected id")
        expect(record.status in ("starting", "ready"), f"a new agent is {record.status!r}")
        expect(record.profile is not None, "the record does not identify the profile it runs")
        expect(
            record.profile.digest == canonical_agent_profile_digest(profile),
            "the profile identity is not the profile's canonical digest",
        )
        expect(prompt not in _wire_text(record), "the record carries the profile itself")
        expect(record.harness == "codex", "the effective harness is not the profile's")
        state["record"] = record

    if not await run.check("instances.start", started):
        return

    async def replayed() -> None:
        again = _parse(AgentInstanceRecord, await instances.start(spec), "start() retry")
        expect(again.id == agent_id and again.created_at_ms == state["record"].created_at_ms, "a repeated start made another agent")
        changed = {**spec, "workspace": {"mode": "isolated"}}
        await _refused(instances.start(changed), "a changed spec under a used id")

    await run.check("instances.id_is_idempotency_key", replayed)

    async def refused_before_effect() -> None:
        before = len(await instances.list())
        await _refused(instances.start({"id": f"bad-{nonce}", "machineShape": "vm"}), "a spec with an unknown field")
        await _refused(instances.start({"id": f"-{nonce}"}), "a spec with an invalid id")
        expect(len(await instances.list()) == before, "a refused spec started an agent")

    await run.check("instances.refusal_before_effect", refused_before_effect)

    async def stopped() -> None:
        first = _parse(AgentInstanceStopAcknowledgement, await instances.stop({"agentId": agent_id}), "stop()")
        expect(first.agent_id == agent_id and first.outcome == "stopped", f"stop answered {first.outcome!r}")
        again = _parse(AgentInstanceStopAcknowledgement, await instances.stop({"agentId": agent_id}), "stop() retry")
        expect(again.outcome == "already-stopped", f"a repeated stop answered {again.outcome!r}")
        missing = _parse(
            AgentInstanceStopAcknowledgement, await instances.stop({"agentId": f"missing-{nonce}"}), "stop() unknown"
        )
        expect(missing.outcome == "not-found", f"stopping an unknown agent answered {missing.outcome!r}")
        record = _parse(AgentInstanceRecord, await instances.get(agent_id), "get()")
        expect(record.status == "stopped", f"a stopped agent reads {record.status!r}")
        expect(record.updated_at_ms >= record.created_at_ms, "the record's update precedes its creation")

    await run.check("instances.stop_is_idempotent", stopped)


# --- workspace leases ----------------------------------------------------------------------


async def _lease_checks(run: _Run, leases: Any, nonce: str) -> None:
    source = sha256_utf8(f"source-{nonce}")
    activation = sha256_utf8(f"activation-{nonce}")
    execution = sha256_utf8(f"execution-{nonce}")
    state: dict[str, Any] = {}

    def record_of(value: Any, what: str) -> AgentWorkspaceLeaseRecord:
        record: AgentWorkspaceLeaseRecord = _parse(AgentWorkspaceLeaseRecord, value, what)
        text = _wire_text(record)
        expect(not run._leaks(text), f"{what}: the record carries the owner token")
        expect("ownerToken" not in text, f"{what}: the record carries an owner token field")
        return record

    async def allocated() -> None:
        grant = await leases.allocate(owner_id=f"owner-{nonce}", source_snapshot_digest=source)
        token = grant.owner_token
        expect(isinstance(token, str) and token != "", "the grant carries no owner token")
        run.secrets.append(token)
        expect(token not in repr(grant), "the grant's repr shows the owner token")
        record = record_of(grant.record, "allocate()")
        expect(record.phase == "copy-ready" and record.cleanup_attempts == 0, f"a new lease is {record.phase!r}")
        expect(record.source_snapshot_digest == source, "the lease does not bind the requested source snapshot")
        expect(
            record.digest == canonical_digest({k: v for k, v in record.to_wire().items() if k != "digest"}),
            "the digest does not cover exactly the lease material",
        )
        state.update(record=record, token=token)

    if not await run.check("leases.allocate", allocated):
        return
    lease_id, token = state["record"].lease_id, state["token"]
    wrong = AgentWorkspaceLeaseAuthorization(lease_id=lease_id, owner_token=token[::-1] + "x")

    async def wrong_token() -> None:
        seal = AgentWorkspaceSealRequest(lease_id=lease_id, owner_token=wrong.owner_token, profile_activation_digest=activation)
        await _refused(leases.seal(seal), "a seal with a wrong owner token", [token, wrong.owner_token])
        await _refused(leases.destroy(wrong), "a destroy with a wrong owner token", [token, wrong.owner_token])
        after = record_of(await leases.get(lease_id), "get()")
        expect(after.digest == state["record"].digest, "a refused change altered the lease")

    await run.check("leases.owner_token_required", wrong_token)

    async def phases_forward() -> None:
        bind = AgentWorkspaceExecutionBindingRequest(lease_id=lease_id, owner_token=token, execution_preparation_digest=execution)
        await _refused(leases.bind_execution(bind), "binding an execution before the seal", [token])
        seal = AgentWorkspaceSealRequest(lease_id=lease_id, owner_token=token, profile_activation_digest=activation)
        sealed = record_of(await leases.seal(seal), "seal()")
        expect(sealed.phase == "workspace-sealed", f"a sealed lease is {sealed.phase!r}")
        expect(sealed.profile_activation_digest == activation, "the seal does not bind the profile activation")
        again = record_of(await leases.seal(seal), "seal() retry")
        expect(again.digest == sealed.digest, "a repeated seal changed the lease")
        bound = record_of(await leases.bind_execution(bind), "bind_execution()")
        expect(bound.phase == "execution-bound" and bound.execution_preparation_digest == execution, "the binding is wrong")
        expect(bound.prepared_workspace_digest == sealed.prepared_workspace_digest, "binding changed the prepared workspace")
        other = AgentWorkspaceSealRequest(
            lease_id=lease_id, owner_token=token, profile_activation_digest=sha256_utf8(f"other-{nonce}")
        )
        await _refused(leases.seal(other), "resealing a bound lease with another activation", [token])
        renew = AgentWorkspaceLeaseRenewalRequest(lease_id=lease_id, owner_token=token, expires_at_ms=bound.expires_at_ms + 1_000)
        renewed = record_of(await leases.renew(renew), "renew()")
        expect(renewed.expires_at_ms == renew.expires_at_ms, "the renewal did not move the expiry")
        state["bound"] = renewed

    await run.check("leases.phases_move_forward", phases_forward)

    async def destroyed() -> None:
        authorization = AgentWorkspaceLeaseAuthorization(lease_id=lease_id, owner_token=token)
        record = record_of(await leases.destroy(authorization), "destroy()")
        expect(record.phase in ("destroying", "destroyed", "cleanup-failed"), f"a destroyed lease is {record.phase!r}")
        expect(record.cleanup_attempts >= 1, "cleanup did not count its attempt")
        while record.phase != "destroyed":
            record = record_of(await leases.destroy(authorization), "destroy() retry")
        again = record_of(await leases.destroy(authorization), "destroy() after destroyed")
        expect(again.digest == record.digest, "destroying a destroyed lease changed it")
        renew = AgentWorkspaceLeaseRenewalRequest(lease_id=lease_id, owner_token=token, expires_at_ms=record.expires_at_ms + 5)
        await _refused(leases.renew(renew), "renewing a destroyed lease", [token])

    await run.check("leases.destroy_is_final", destroyed)


# --- terminals -----------------------------------------------------------------------------


async def _terminal_checks(run: _Run, terminals: Any, parent_execution_id: str, now: Callable[[], str]) -> None:
    request = {"parentExecutionId": parent_execution_id, "mode": "attach", "cols": 100, "rows": 30}
    state: dict[str, Any] = {}

    async def opened() -> None:
        answer = _parse(TerminalAttachResult, await terminals.attach_terminal(request), "attach_terminal()")
        expect(answer.status == "attached", f"opening a terminal answered {answer.status!r}")
        expect(terminal_attach_result_matches_request(request, answer), "the attach answer does not match its request")
        expect(terminal_session_usable(answer.ref, now()), "a new terminal is not usable")
        state["ref"] = answer.ref

    if not await run.check("terminals.open", opened):
        return
    terminal_id = state["ref"].terminal_session_id
    handle = terminals.terminal(terminal_id)

    async def replay() -> None:
        for index in range(3):
            await handle.input({"data": f"line-{index}\n"})
        window = _parse(TerminalReplayWindow, handle.cursors, "cursors")
        expect(window.latest >= window.earliest, "the replay window is inverted")
        frames = []
        async for event in handle.events(since=window.latest - 2):
            frames.append(_parse(TerminalOutputEvent, event, "events()"))
            if len(frames) == 2:
                break
        seqs = [frame.seq for frame in frames if frame.type == "output"]
        expect(seqs == [window.latest - 1, window.latest], f"replay from a cursor answered seqs {seqs}")
        await _refused(_first(handle.events(since=window.latest + 10)), "a cursor beyond the window")

    await run.check("terminals.replay_from_cursor", replay)

    async def reattached() -> None:
        again = {**request, "terminalSessionId": terminal_id}
        answer = _parse(TerminalAttachResult, await terminals.attach_terminal(again), "attach_terminal() again")
        expect(answer.status == "reattached", f"reattaching answered {answer.status!r}")
        expect(terminal_attach_result_matches_request(again, answer), "the reattach answer does not match its request")
        foreign = {**again, "parentExecutionId": f"{parent_execution_id}-other"}
        other = _parse(TerminalAttachResult, await terminals.attach_terminal(foreign), "attach_terminal() foreign")
        expect(
            other.status not in ("attached", "reattached"),
            "a terminal was attached under another parent execution",
        )

    await run.check("terminals.reattach_bound_to_parent", reattached)

    async def closed() -> None:
        ack = _parse(TerminalDetachAck, await handle.close(), "close()")
        expect(ack.status == "closed" and ack.terminal_session_id == terminal_id, f"close answered {ack.status!r}")
        again = _parse(TerminalDetachAck, await handle.close(), "close() retry")
        expect(again.status == "closed", "a repeated close did not answer closed")
        expect(not terminal_session_usable(handle.ref, now()), "a closed terminal is still usable")
        await _refused(handle.input({"data": "late"}), "input to a closed terminal")
        tail = [_parse(TerminalOutputEvent, event, "events()") async for event in handle.events(since=handle.cursors.latest)]
        expect(bool(tail) and tail[-1].type == "exit", "the event stream of a closed terminal does not end with exit")
        live = {**request, "terminalSessionId": terminal_id}
        answer = _parse(TerminalAttachResult, await terminals.attach_terminal(live), "attach_terminal() closed")
        expect(answer.status != "attached" and answer.status != "reattached", "a closed terminal accepted a live attach")

    await run.check("terminals.close_is_final", closed)


async def _first(events: Any) -> Any:
    async for event in events:
        return event
    return None


@contained
async def run_session_conformance_async(
    *,
    instances: Any = None,
    leases: Any = None,
    terminals: Any = None,
    parent_execution_id: str | None = None,
    now: Callable[[], str] | None = None,
    interactive: Any = None,
    interactive_profile: Mapping[str, Any] | None = None,
    interactive_coordinates: Mapping[str, str] | None = None,
) -> ConformanceReport:
    """Run the checks of every part given. ``parent_execution_id`` is an execution the
    terminals accept; ``now`` returns the current ISO time the terminals' expiry is judged
    against (the wall clock by default). ``interactive_profile`` is the profile the
    interactive checks start (it needs a harness its executor can prepare; a minimal
    ``codex`` profile by default)."""
    parts = {"instances": instances, "leases": leases, "terminals": terminals, "interactive": interactive}
    given = [name for name, part in parts.items() if part is not None]
    if not given:
        raise ConformanceUsageError(
            "run_session_conformance needs at least one of instances=, leases=, terminals=, interactive="
        )
    run = _Run(", ".join(given))
    nonce = uuid.uuid4().hex[:12]
    if instances is not None:
        await _instance_checks(run, instances, nonce)
    if leases is not None:
        await _lease_checks(run, leases, nonce)
    if terminals is not None:
        clock = now or (lambda: iso_of_epoch_ms(system_clock_ms()))
        await _terminal_checks(run, terminals, parent_execution_id or f"conformance-execution-{nonce}", clock)
    if interactive is not None:
        await interactive_session_checks(
            InteractiveCheckRun(run.interactive_check),
            interactive,
            nonce,
            profile=interactive_profile or {"name": "conformance-agent", "harness": "codex"},
            coordinates=interactive_coordinates,
        )
    return run.report()


def run_session_conformance(**parts: Any) -> ConformanceReport:
    """Synchronous :func:`run_session_conformance_async` (works inside a running loop)."""
    return run_sync(run_session_conformance_async(**parts))

