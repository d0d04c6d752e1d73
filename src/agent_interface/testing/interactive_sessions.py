"""In-memory native coding-agent TUIs with provider-issued control claims.

:class:`InMemoryInteractiveSessions` serves ``start_interactive`` and ``interactive``
with the contract's rules:

* a start is proven exact before any work; replaying it answers the same ref, even after
  the process exited; the preparation receipt comes from ``prepare`` (the provider owns
  profile materialization) and must match the start;
* control claims are compare-and-swap on the generation; an operation id is bound to its
  request digest, so a lost acknowledgement is recovered by resending (``replayed``), a
  changed request under a used id answers ``conflict``/``operation_reuse`` naming the
  stored digest, and a stale expected generation answers ``generation_mismatch``;
* prompts, attach and stop need the current, unexpired claim; a superseded or expired
  claim is refused before any effect; prompt and stop operations replay like claims, and
  a replay never delivers a prompt twice;
* the terminal returned by attach checks its claim on every write and on close;
* ``initial_control_generation`` is the generation persisted at launch: the first claim
  must expect it, so a coordinator that assumes zero is fenced off;
* concurrent calls have one effect: a start is recorded before its first ``await``, so
  concurrent identical starts prepare and launch one process (:attr:`start_count`
  counts launches) and share its ref or its error; a stop is recorded before the
  terminal is closed.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from agent_interface.core.canonical import canonical_digest, sha256_utf8
from agent_interface.core.errors import ContractError
from agent_interface.environment.preparation import build_agent_execution_preparation_receipt
from agent_interface.environment.preparation_receipt import AgentExecutionPreparationReceipt
from agent_interface.environment.workspace_lease import (
    AgentWorkspaceExecutionBindingRequest,
    AgentWorkspaceSealRequest,
)
from agent_interface.profile.materialization import profile_materialization_requests
from agent_interface.session.interactive_control import (
    AgentInteractiveSessionAttach,
    AgentInteractiveSessionControlClaim,
    AgentInteractiveSessionControlClaimAcknowledgement,
    AgentInteractiveSessionControlClaimRequest,
    AgentInteractiveSessionExited,
    AgentInteractiveSessionPromptAcknowledgement,
    AgentInteractiveSessionPromptCommand,
    AgentInteractiveSessionRef,
    AgentInteractiveSessionRunning,
    AgentInteractiveSessionStopAcknowledgement,
    AgentInteractiveSessionStopCommand,
    agent_interactive_session_ref_digest,
)
from agent_interface.session.interactive_start import (
    AgentInteractiveSessionStart,
    agent_interactive_session_ref_matches_start,
    exact_agent_interactive_session_start,
)
from agent_interface.session.terminal import (
    TerminalDetachAck,
    TerminalInput,
    TerminalReplayWindow,
    TerminalResize,
    TerminalSessionRef,
)
from agent_interface.session.timestamps import iso_epoch_ms, iso_of_epoch_ms, system_clock_ms
from agent_interface.testing.sessions import InMemoryWorkspaceLeases
from agent_interface.testing.terminals import InMemoryTerminals, InMemoryTerminalSession

__all__ = [
    "InMemoryExecutor",
    "InMemoryInteractiveSession",
    "InMemoryInteractiveSessions",
    "InMemoryInteractiveTerminal",
]

_Prepared = AgentExecutionPreparationReceipt | Mapping[str, Any]


@dataclass
class InMemoryExecutor:
    """Prepares a start the way an executor must before compute: it allocates a workspace
    lease from the start's source, seals it under the profile's activation, binds the lease
    to the receipt it builds, and returns that
    genuine, self-hashed preparation receipt, which expires no later than the lease (time comes
from the leases' clock). It applies the authored profile unchanged
    (every requested axis ``behavior``), so authored and effective digests agree."""

    leases: InMemoryWorkspaceLeases = field(default_factory=InMemoryWorkspaceLeases)
    receipt_ttl_ms: int = 3_600_000
    _counter: Any = field(default_factory=lambda: itertools.count(1), init=False, repr=False)

    async def __call__(self, start: AgentInteractiveSessionStart) -> AgentExecutionPreparationReceipt:
        profile = start.profile
        if profile.harness is None:
            raise ContractError.single("/profile/harness", "interactive_profile_harness_missing", "the profile names no harness")
        run = start.run
        grant = await self.leases.allocate(
            owner_id=run.run_id, source_snapshot_digest=sha256_utf8(f"in-memory-source:{run.environment_id}")
        )
        activation = canonical_digest({"kind": "in-memory-profile-activation", "profile": start.requested_profile_digest})
        sealed = await self.leases.seal(
            AgentWorkspaceSealRequest(
                lease_id=grant.record.lease_id, owner_token=grant.owner_token, profile_activation_digest=activation
            )
        )
        model = profile.model
        requested = model.default if model is not None and model.default is not None else ""
        resolved: dict[str, Any] = {"requested": requested, "resolved": requested or "in-memory-model"}
        if model is not None and model.provider is not None:
            resolved["provider"] = model.provider
        if model is not None and model.reasoning_effort is not None:
            effort = model.reasoning_effort
            resolved["reasoningEffort"] = {"requested": effort, "resolved": effort, "fidelity": "exact"}
        now = self.leases.clock_ms()
        receipt = build_agent_execution_preparation_receipt(
            preparation_id=f"in-memory-preparation-{next(self._counter)}",
            request_digest=run.request_digest,
            authored_profile=profile,
            effective_profile=profile,
            backend="in-memory",
            harness=profile.harness,
            harness_version="in-memory",
            resolved_model=resolved,
            workspace_lease=sealed,
            profile_activation={"digest": activation},
            axis_results=[
                {"axis": row.axis, "path": row.path, "disposition": "behavior", "owner": "executor", "mechanism": "in-memory"}
                for row in profile_materialization_requests(profile)
            ],
            execution_plan_digest=canonical_digest({"kind": "in-memory-execution-plan", "run": run.to_wire()}),
            materializer={"name": "in-memory", "version": "1"},
            expires_at_ms=min(now + self.receipt_ttl_ms, sealed.expires_at_ms),
            now_ms=now,
        )
        await self.leases.bind_execution(
            AgentWorkspaceExecutionBindingRequest(
                lease_id=grant.record.lease_id, owner_token=grant.owner_token, execution_preparation_digest=receipt.digest
            )
        )
        return receipt


def _parse(model: Any, value: Any) -> Any:
    if isinstance(value, model):
        return value
    if not isinstance(value, Mapping):
        raise TypeError(f"expected {model.__name__} or its wire mapping")
    return model.parse_wire(value)


@dataclass
class _Process:
    ref: AgentInteractiveSessionRef
    ref_digest: str
    terminal_id: str
    generation: int = 0
    claim: AgentInteractiveSessionControlClaim | None = None
    ended_at: str | None = None
    claims: dict[str, tuple[str, AgentInteractiveSessionControlClaim]] = field(default_factory=dict)
    prompts: dict[str, AgentInteractiveSessionPromptAcknowledgement] = field(default_factory=dict)
    stops: dict[str, AgentInteractiveSessionStopAcknowledgement] = field(default_factory=dict)
    delivered: list[str] = field(default_factory=list)


class InMemoryInteractiveTerminal:
    """The TUI's terminal for one attachment; every write needs the attach-time claim to
    still be the current, unexpired claim."""

    def __init__(self, owner: InMemoryInteractiveSessions, process: _Process, control: AgentInteractiveSessionControlClaim) -> None:
        self._owner = owner
        self._process = process
        self._control = control
        self._terminal: InMemoryTerminalSession = owner._terminals.terminal(process.terminal_id)

    @property
    def control(self) -> AgentInteractiveSessionControlClaim:
        return self._control

    @property
    def ref(self) -> TerminalSessionRef:
        return self._terminal.ref

    @property
    def cursors(self) -> TerminalReplayWindow:
        return self._terminal.cursors

    async def input(self, input: TerminalInput | Mapping[str, Any]) -> None:
        self._owner._require_current(self._process, self._control)
        await self._terminal.input(input)

    async def resize(self, resize: TerminalResize | Mapping[str, Any]) -> None:
        self._owner._require_current(self._process, self._control)
        await self._terminal.resize(resize)

    async def detach(self) -> TerminalDetachAck:
        return await self._terminal.detach()

    async def close(self) -> TerminalDetachAck:
        """Closes this connection only (the coding-agent process keeps running); like
        every write, it needs the attach-time claim to still be current."""
        self._owner._require_current(self._process, self._control)
        return await self._terminal.detach()

    def events(self, *, since: int | None = None) -> AsyncIterator[Any]:
        return self._terminal.events(since=since)


class InMemoryInteractiveSession:
    """The handle of one exact TUI process (an ``AgentInteractiveSession``)."""

    def __init__(self, owner: InMemoryInteractiveSessions, process: _Process) -> None:
        self._owner = owner
        self._process = process

    @property
    def ref(self) -> AgentInteractiveSessionRef:
        return self._process.ref

    @property
    def delivered_prompts(self) -> tuple[str, ...]:
        """Prompts the process received, once each."""
        return tuple(self._process.delivered)

    def _own(self, ref: AgentInteractiveSessionRef) -> None:
        if agent_interactive_session_ref_digest(ref) != self._process.ref_digest:
            raise ContractError.single("/ref", "interactive_ref_mismatch", "the command names another process")

    async def claim_control(
        self, request: AgentInteractiveSessionControlClaimRequest | Mapping[str, Any]
    ) -> AgentInteractiveSessionControlClaimAcknowledgement:
        exact: AgentInteractiveSessionControlClaimRequest = _parse(AgentInteractiveSessionControlClaimRequest, request)
        self._own(exact.ref)
        process = self._process
        base: dict[str, Any] = {"operation_id": exact.operation_id, "request_digest": exact.request_digest, "ref": process.ref}
        stored = process.claims.get(exact.operation_id)
        if stored is not None:
            if stored[0] == exact.request_digest:
                return AgentInteractiveSessionControlClaimAcknowledgement(**base, status="replayed", control=stored[1])
            return AgentInteractiveSessionControlClaimAcknowledgement(
                **base,
                status="conflict",
                conflict_reason="operation_reuse",
                current_generation=process.generation,
                existing_request_digest=stored[0],
            )
        if exact.expected_generation != process.generation:
            return AgentInteractiveSessionControlClaimAcknowledgement(
                **base, status="conflict", conflict_reason="generation_mismatch", current_generation=process.generation
            )
        process.generation += 1
        claim = AgentInteractiveSessionControlClaim(
            ref_digest=process.ref_digest,
            generation=process.generation,
            lease_id=f"{process.ref.incarnation_id}-lease-{process.generation}",
            holder_id=exact.holder_id,
            expires_at=iso_of_epoch_ms(self._owner.clock_ms() + self._owner.claim_ttl_ms),
        )
        process.claim = claim
        process.claims[exact.operation_id] = (exact.request_digest, claim)
        return AgentInteractiveSessionControlClaimAcknowledgement(**base, status="accepted", control=claim)

    async def status(self) -> AgentInteractiveSessionRunning | AgentInteractiveSessionExited:
        process = self._process
        if process.ended_at is None:
            return AgentInteractiveSessionRunning(state="running", ref=process.ref)
        return AgentInteractiveSessionExited(state="exited", ref=process.ref, ended_at=process.ended_at, reason="stopped")

    async def attach(self, request: AgentInteractiveSessionAttach | Mapping[str, Any]) -> InMemoryInteractiveTerminal:
        exact: AgentInteractiveSessionAttach = _parse(AgentInteractiveSessionAttach, request)
        self._owner._require_current(self._process, exact.control)
        self._owner._require_live(self._process)
        if exact.cols is not None and exact.rows is not None:
            await self._owner._terminals.terminal(self._process.terminal_id).resize({"cols": exact.cols, "rows": exact.rows})
        return InMemoryInteractiveTerminal(self._owner, self._process, exact.control)

    async def send_prompt(
        self, command: AgentInteractiveSessionPromptCommand | Mapping[str, Any]
    ) -> AgentInteractiveSessionPromptAcknowledgement:
        exact: AgentInteractiveSessionPromptCommand = _parse(AgentInteractiveSessionPromptCommand, command)
        self._own(exact.ref)
        process = self._process
        base: dict[str, Any] = {
            "operation_id": exact.operation_id,
            "request_digest": exact.request_digest,
            "ref": process.ref,
            "control": exact.control,
        }
        stored = process.prompts.get(exact.operation_id)
        if stored is not None:
            if stored.request_digest == exact.request_digest:
                return AgentInteractiveSessionPromptAcknowledgement(**base, status="replayed")
            return AgentInteractiveSessionPromptAcknowledgement(
                **base, status="conflict", existing_request_digest=stored.request_digest
            )
        self._owner._require_current(process, exact.control)
        self._owner._require_live(process)
        process.delivered.append(exact.prompt)
        self._owner._terminals.write_output(process.terminal_id, exact.prompt)
        acknowledgement = AgentInteractiveSessionPromptAcknowledgement(**base, status="accepted")
        process.prompts[exact.operation_id] = acknowledgement
        return acknowledgement

    async def stop(
        self, command: AgentInteractiveSessionStopCommand | Mapping[str, Any]
    ) -> AgentInteractiveSessionStopAcknowledgement:
        exact: AgentInteractiveSessionStopCommand = _parse(AgentInteractiveSessionStopCommand, command)
        self._own(exact.ref)
        process = self._process
        base: dict[str, Any] = {
            "operation_id": exact.operation_id,
            "request_digest": exact.request_digest,
            "ref": process.ref,
            "control": exact.control,
        }
        stored = process.stops.get(exact.operation_id)
        if stored is not None:
            if stored.request_digest == exact.request_digest:
                return AgentInteractiveSessionStopAcknowledgement(**base, status="replayed", effect=stored.effect)
            return AgentInteractiveSessionStopAcknowledgement(
                **base, status="conflict", effect="unknown", existing_request_digest=stored.request_digest
            )
        self._owner._require_current(process, exact.control)
        if process.ended_at is None:
            process.ended_at = iso_of_epoch_ms(self._owner.clock_ms())
            acknowledgement = AgentInteractiveSessionStopAcknowledgement(**base, status="accepted", effect="stopped")
            process.stops[exact.operation_id] = acknowledgement  # recorded before the await
            await self._owner._terminals.terminal(process.terminal_id).close()
            return acknowledgement
        acknowledgement = AgentInteractiveSessionStopAcknowledgement(**base, status="accepted", effect="not_live")
        process.stops[exact.operation_id] = acknowledgement
        return acknowledgement


@dataclass
class InMemoryInteractiveSessions:
    """TUIs of one in-memory environment.

    ``prepare`` returns (or awaits) the executor's preparation receipt for a proven start;
    its authored profile digest and harness must be the requested ones. By default an
    :class:`InMemoryExecutor` prepares it. ``initial_control_generation`` is the control
    generation persisted at launch. ``claim_ttl_ms`` is the lifetime of a control
    claim; ``clock_ms`` the time source in epoch milliseconds.
    """

    prepare: Callable[[AgentInteractiveSessionStart], _Prepared | Awaitable[_Prepared]] = field(
        default_factory=InMemoryExecutor
    )
    claim_ttl_ms: int = 600_000
    clock_ms: Callable[[], int] = system_clock_ms
    initial_control_generation: int = 0
    _processes: dict[str, _Process] = field(default_factory=dict, init=False, repr=False)
    _starting: dict[str, asyncio.Future[AgentInteractiveSessionRef]] = field(default_factory=dict, init=False, repr=False)
    _terminals: InMemoryTerminals = field(init=False, repr=False)
    _counter: Any = field(default_factory=lambda: itertools.count(1), init=False, repr=False)
    _launched: int = field(default=0, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.initial_control_generation < 0:
            raise ValueError("initial_control_generation must be zero or more")
        self._terminals = InMemoryTerminals(ttl_ms=10 * 365 * 86_400_000, clock_ms=self.clock_ms)

    @property
    def start_count(self) -> int:
        """How many coding-agent processes were launched (replays launch none)."""
        return self._launched

    async def start_interactive(self, request: AgentInteractiveSessionStart | Mapping[str, Any]) -> AgentInteractiveSessionRef:
        start = exact_agent_interactive_session_start(request)
        key = start.run.request_digest
        known = self._processes.get(key)
        if known is not None:
            return known.ref
        starting = self._starting.get(key)
        if starting is not None:
            return await asyncio.shield(starting)  # an identical start is launching: its outcome
        starting = asyncio.get_running_loop().create_future()
        self._starting[key] = starting
        try:
            ref = await self._launch(start)
        except BaseException as error:
            if isinstance(error, asyncio.CancelledError):
                starting.cancel()
            else:
                starting.set_exception(error)
                starting.add_done_callback(lambda done: done.exception())
            raise
        finally:
            del self._starting[key]
        starting.set_result(ref)
        return ref

    async def _launch(self, start: AgentInteractiveSessionStart) -> AgentInteractiveSessionRef:
        prepared = self.prepare(start)
        if inspect.isawaitable(prepared):
            prepared = await prepared
        receipt = _parse(AgentExecutionPreparationReceipt, prepared)
        number = next(self._counter)
        ref = AgentInteractiveSessionRef(
            run=start.run,
            preparation_receipt=receipt,
            incarnation_id=f"interactive-{number}",
            started_at=iso_of_epoch_ms(self.clock_ms()),
        )
        if not agent_interactive_session_ref_matches_start(start, ref):
            raise ContractError.single(
                "/preparationReceipt", "interactive_receipt_mismatch", "the preparation receipt does not answer this start"
            )
        opened = await self._terminals.attach_terminal(
            {"parentExecutionId": start.run.execution_id, "mode": "attach", "cols": start.cols or 80, "rows": start.rows or 24}
        )
        self._launched += 1
        self._processes[start.run.request_digest] = _Process(
            ref=ref,
            ref_digest=agent_interactive_session_ref_digest(ref),
            terminal_id=opened.ref.terminal_session_id,
            generation=self.initial_control_generation,
        )
        if start.initial_prompt:
            self._terminals.write_output(opened.ref.terminal_session_id, start.initial_prompt)
        return ref

    def interactive(self, ref: AgentInteractiveSessionRef | Mapping[str, Any]) -> InMemoryInteractiveSession:
        """The handle of the exact process ``ref`` names; any other ref is refused."""
        exact: AgentInteractiveSessionRef = _parse(AgentInteractiveSessionRef, ref)
        process = self._processes.get(exact.run.request_digest)
        if process is None or process.ref_digest != agent_interactive_session_ref_digest(exact):
            raise ContractError.single("", "interactive_session_not_found", "no process has this exact ref")
        return InMemoryInteractiveSession(self, process)

    def _require_current(self, process: _Process, control: AgentInteractiveSessionControlClaim) -> None:
        current = process.claim
        if current is None or control.to_wire() != current.to_wire():
            raise ContractError.single(
                "/control", "interactive_control_superseded", "the control claim is not the current claim"
            )
        expires = iso_epoch_ms(current.expires_at)
        if expires is None or self.clock_ms() >= expires:
            raise ContractError.single("/control/expiresAt", "interactive_control_expired", "the control claim has expired")

    def _require_live(self, process: _Process) -> None:
        if process.ended_at is not None:
            raise ContractError.single("/ref", "interactive_not_live", "the coding-agent process is not running")
