"""Conformance checks for native interactive sessions (``start_interactive`` /
``interactive``).

:func:`run_interactive_session_conformance` drives one full session and checks every
answer with the contract's own matchers, the reference testkit's properties included:

* a start answers a matching ref whose preparation receipt binds the requested profile
  and names the admitted route; replaying it answers the same ref and launches no
  second process, before and after the process exits; changed material under the same
  run is refused (``interactive.changed_start_refused``) and launches nothing;
* control claims are compare-and-swap: replay after a lost acknowledgement, the two
  distinct conflicts, and the launch-generation fence (a coordinator that assumes
  generation zero is refused when the provider launched at a later one);
* a superseded, expired or stale claim, or a stale process incarnation, is refused for
  attach, prompts, terminal input, resize and close, and stop;
* prompts and stop replay without a second effect and detect a changed command under a
  used operation id.

Process counts come from ``start_count`` (the target's attribute or method, or a
callable passed in) and the launch generation from ``initial_control_generation``, both read from the target
when not passed. A check whose method or counter is absent is skipped, never passed.
:func:`interactive_session_checks` runs the same checks inside another kit's run (the
session kit uses it).
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from agent_interface.conformance.bounds import settle
from agent_interface.conformance.report import (
    CheckFailed,
    CheckRun,
    ConformanceReport,
    ConformanceUsageError,
    contained,
    expect,
    maybe_await,
    run_sync,
)
from agent_interface.core.errors import ContractError
from agent_interface.core.model import wire_adapter
from agent_interface.durable.portable_context import plain_wire
from agent_interface.profile.canonical import canonical_agent_profile_digest
from agent_interface.session.interactive_control import (
    AgentInteractiveSessionControlClaim,
    AgentInteractiveSessionControlClaimAcknowledgement,
    AgentInteractiveSessionControlClaimRequest,
    AgentInteractiveSessionPromptAcknowledgement,
    AgentInteractiveSessionPromptCommand,
    AgentInteractiveSessionRef,
    AgentInteractiveSessionStatus,
    AgentInteractiveSessionStopAcknowledgement,
    AgentInteractiveSessionStopCommand,
    agent_interactive_session_control_claim_acknowledgement_matches_request,
    agent_interactive_session_control_claim_is_newer,
    agent_interactive_session_control_claim_matches_ref,
    agent_interactive_session_prompt_acknowledgement_matches_command,
    agent_interactive_session_ref_digest,
    agent_interactive_session_status_matches_ref,
    agent_interactive_session_stop_acknowledgement_matches_command,
)
from agent_interface.session.interactive_start import (
    agent_interactive_session_ref_matches_start,
    agent_interactive_session_run_ref,
)

__all__ = [
    "INTERACTIVE_CHECKS",
    "INTERACTIVE_NOT_CERTIFIED",
    "InteractiveCheckRun",
    "interactive_session_checks",
    "run_interactive_session_conformance",
    "run_interactive_session_conformance_async",
]

INTERACTIVE_NOT_CERTIFIED = ("what the terminal shows, and that a stopped process left no child behind",)
"""What this kit cannot prove by calling its subject (``ConformanceReport.not_certified``)."""

INTERACTIVE_CHECKS = (
    "interactive.start",
    "interactive.start_admission",
    "interactive.start_replay_no_second_process",
    "interactive.changed_start_no_second_process",
    "interactive.changed_start_refused",
    "interactive.launch_generation_fence",
    "interactive.control_claims",
    "interactive.superseded_claim_refused",
    "interactive.prompt_replay_safe",
    "interactive.stale_incarnation_prompt_refused",
    "interactive.expired_claim_attach_refused",
    "interactive.stale_terminal_mutation_refused",
    "interactive.stale_stop_refused",
    "interactive.stop_replay_safe",
    "interactive.exited_replay_no_second_process",
)
"""Every check the interactive kit records, in order."""

_EXPIRED = "2000-01-01T00:00:00.000Z"

COUNT_TIMEOUT = 30.0
"""Seconds the process counter may take to answer (it is also read outside any check)."""


def _after(name: str) -> tuple[str, ...]:
    """The checks recorded after ``name``, in order."""
    return INTERACTIVE_CHECKS[INTERACTIVE_CHECKS.index(name) + 1:]


def _parse(tp: Any, value: Any, what: str) -> Any:
    try:
        return wire_adapter(tp).parse_value(plain_wire(value))
    except ContractError as error:
        raise CheckFailed(f"{what} is not a valid answer: {error}") from None


async def _refused(call: Callable[[], Awaitable[Any] | Any], what: str) -> None:
    """``call`` must raise a typed refusal, synchronously or when awaited."""
    try:
        answer = await maybe_await(call())
    except ContractError:
        return
    raise CheckFailed(f"{what} was accepted (answered {type(answer).__name__})")


class InteractiveCheckRun:
    """Adapts another kit's runner: ``check(name, body)`` runs a check; ``skip(name,
    reason)`` records a skipped one (taken from the :class:`CheckRun` that owns ``check``
    when not given; a runner with no way to record a skip leaves it out). A body fails
    by raising :attr:`failure`."""

    failure = CheckFailed

    def __init__(
        self,
        check: Callable[[str, Callable[[], Awaitable[None]]], Awaitable[bool]],
        skip: Callable[[str, str], None] | None = None,
    ) -> None:
        self.check = check
        owner = getattr(check, "__self__", None)
        self.skip = skip or (owner.skip if isinstance(owner, CheckRun) else None)


async def interactive_session_checks(
    run: InteractiveCheckRun | CheckRun,
    target: Any,
    nonce: str,
    *,
    profile: Mapping[str, Any],
    coordinates: Mapping[str, str] | None = None,
    start_count: Any = None,
    initial_control_generation: int | None = None,
) -> None:
    """Drive ``target`` through one full session of ``profile`` (which must name a
    harness) at ``coordinates`` (fresh ones by default), recording each check on
    ``run``. ``start_count`` and ``initial_control_generation`` default to the target's
    attributes of those names."""
    checks = _Checks(run, target, nonce, profile, coordinates, start_count, initial_control_generation)
    await checks.run_all()


class _Checks:
    def __init__(
        self,
        run: InteractiveCheckRun | CheckRun,
        target: Any,
        nonce: str,
        profile: Mapping[str, Any],
        coordinates: Mapping[str, str] | None,
        start_count: Any,
        initial_control_generation: int | None,
    ) -> None:
        self.run, self.target, self.nonce = run, target, nonce
        if start_count is not None and not callable(start_count):
            raise ConformanceUsageError("start_count must be a callable returning the number of launched processes")
        self.counter: Callable[[], Any] | None = start_count
        if start_count is None and hasattr(target, "start_count"):
            self.counter = lambda: getattr(target, "start_count")  # noqa: B009 (read live)
        generation = initial_control_generation
        if generation is None:
            generation = getattr(target, "initial_control_generation", 0)
        self.generation: int = generation if isinstance(generation, int) else 0
        where = dict(
            coordinates
            or {
                "provider": "conformance",
                "environmentId": f"conformance-environment-{nonce}",
                "sessionId": f"conformance-session-{nonce}",
                "executionId": f"conformance-execution-{nonce}",
            }
        )
        material = {
            "profile": dict(profile),
            "requestedProfileDigest": canonical_agent_profile_digest(profile),
            "initialPrompt": f"conformance {nonce}",
            "cols": 100,
            "rows": 30,
        }
        self.start = {"run": agent_interactive_session_run_ref(where, material).to_wire(), **material}
        self.changed = {**self.start, "initialPrompt": f"changed {nonce}"}
        self.harness = profile.get("harness")
        self.state: dict[str, Any] = {}

    # --- helpers -----------------------------------------------------------------------

    def skip(self, name: str, reason: str) -> None:
        if self.run.skip is not None:
            self.run.skip(name, reason)

    async def count(self) -> int:
        assert self.counter is not None
        value = self.counter()
        value = await settle(value() if callable(value) else value, COUNT_TIMEOUT, "start_count")
        expect(isinstance(value, int), "start_count is not a number")
        assert isinstance(value, int)
        return value

    async def claim(self, request: AgentInteractiveSessionControlClaimRequest, what: str) -> Any:
        answer = _parse(
            AgentInteractiveSessionControlClaimAcknowledgement,
            await maybe_await(self.state["session"].claim_control(request)),
            what,
        )
        expect(
            agent_interactive_session_control_claim_acknowledgement_matches_request(request, answer),
            f"{what}: the acknowledgement does not answer the request",
        )
        return answer

    def claim_request(
        self, operation: str, holder: str, expected: int, ref: AgentInteractiveSessionRef | None = None
    ) -> AgentInteractiveSessionControlClaimRequest:
        return AgentInteractiveSessionControlClaimRequest.seal(
            {
                "operationId": f"{operation}-{self.nonce}",
                "ref": ref or self.state["ref"],
                "holderId": holder,
                "expectedGeneration": expected,
            }
        )

    def prompt(
        self, operation: str, control: AgentInteractiveSessionControlClaim, text: str, ref: Any = None
    ) -> AgentInteractiveSessionPromptCommand:
        return AgentInteractiveSessionPromptCommand.seal(
            {"operationId": f"{operation}-{self.nonce}", "ref": ref or self.state["ref"], "control": control, "prompt": text}
        )

    def stop(self, operation: str, control: AgentInteractiveSessionControlClaim) -> AgentInteractiveSessionStopCommand:
        return AgentInteractiveSessionStopCommand.seal(
            {"operationId": f"{operation}-{self.nonce}", "ref": self.state["ref"], "control": control}
        )

    # --- the checks --------------------------------------------------------------------

    async def run_all(self) -> None:
        run, state = self.run, self.state
        if self.counter is not None:
            try:
                state["before"] = await self.count()
            except Exception:
                self.counter = None
        passed = await run.check("interactive.start", self.started)
        if "ref" not in state:
            for name in INTERACTIVE_CHECKS[1:]:
                self.skip(name, "no session was started")
            return
        await run.check("interactive.start_admission", self.admission)
        await self.counted("interactive.start_replay_no_second_process", self.replay_counted)
        await self.counted("interactive.changed_start_no_second_process", self.changed_counted)
        await run.check("interactive.changed_start_refused", self.changed_refused)
        if not passed or "session" not in state:
            for name in _after("interactive.changed_start_refused"):
                self.skip(name, "the start did not answer a usable session")
            return
        if self.generation > 0:
            await run.check("interactive.launch_generation_fence", self.fence)
        else:
            self.skip("interactive.launch_generation_fence", "the provider launches at generation 0: nothing to fence")
        if not await run.check("interactive.control_claims", self.claims):
            for name in _after("interactive.control_claims"):
                self.skip(name, "no control claim was accepted")
            return
        await run.check("interactive.superseded_claim_refused", self.superseded)
        if callable(getattr(state["session"], "send_prompt", None)):
            await run.check("interactive.prompt_replay_safe", self.prompts)
            await run.check("interactive.stale_incarnation_prompt_refused", self.stale_incarnation)
        else:
            for name in ("interactive.prompt_replay_safe", "interactive.stale_incarnation_prompt_refused"):
                self.skip(name, "the session has no send_prompt()")
        await run.check("interactive.expired_claim_attach_refused", self.expired_attach)
        await run.check("interactive.stale_terminal_mutation_refused", self.stale_terminal)
        if "recovered" in state:
            await run.check("interactive.stale_stop_refused", self.stale_stop)
        else:
            self.skip("interactive.stale_stop_refused", "no newer claim superseded the current one")
        stopped = await run.check("interactive.stop_replay_safe", self.stopped)
        if stopped:
            await self.counted("interactive.exited_replay_no_second_process", self.exited_counted)
        else:
            self.skip("interactive.exited_replay_no_second_process", "the session was not stopped")

    async def counted(self, name: str, body: Callable[[], Awaitable[None]]) -> None:
        if self.counter is None or "before" not in self.state:
            self.skip(name, "the target exposes no start_count")
        else:
            await self.run.check(name, body)

    async def started(self) -> None:
        target, state = self.target, self.state
        ref = _parse(AgentInteractiveSessionRef, await maybe_await(target.start_interactive(self.start)), "start_interactive()")
        state["ref"] = ref
        expect(agent_interactive_session_ref_matches_start(self.start, ref), "the ref does not answer the start")
        again = _parse(AgentInteractiveSessionRef, await maybe_await(target.start_interactive(self.start)), "start_interactive() retry")
        expect(again == ref, "replaying the same start answered another ref or receipt")
        state["session"] = target.interactive(ref)
        status = _parse(AgentInteractiveSessionStatus, await maybe_await(state["session"].status()), "status()")
        expect(status.state == "running", f"a started session is {status.state!r}")
        expect(agent_interactive_session_status_matches_ref(ref, status), "the status describes another process")

    async def changed_refused(self) -> None:
        await _refused(
            lambda: self.target.start_interactive(self.changed), "a start whose material changed after its run was derived"
        )

    async def admission(self) -> None:
        ref, start = self.state["ref"], self.start
        receipt = ref.preparation_receipt
        expect(
            receipt.authored_profile_digest == start["requestedProfileDigest"],
            "the preparation receipt does not bind the requested profile",
        )
        expect(receipt.harness == self.harness, "the preparation receipt names another harness than the profile's")
        expect(
            bool(receipt.backend) and bool(receipt.harness_version) and bool(receipt.resolved_model.resolved),
            "the preparation receipt does not name the admitted route (backend, harness version, resolved model)",
        )

    async def replay_counted(self) -> None:
        now = await self.count()
        expect(now == self.state["before"] + 1, f"a first start and its replay launched {now - self.state['before']} processes, not 1")
        await maybe_await(self.target.start_interactive(self.start))
        expect(await self.count() == now, "replaying a running start launched another process")

    async def changed_counted(self) -> None:
        now = await self.count()
        with contextlib.suppress(Exception):
            await maybe_await(self.target.start_interactive(self.changed))
        expect(await self.count() == now, "a refused changed start launched a process")

    async def fence(self) -> None:
        probe = self.claim_request("launch-probe", "coordinator-probe", 0)
        answer = await self.claim(probe, "claim_control() expecting generation 0")
        expect(
            answer.status == "conflict"
            and answer.conflict_reason == "generation_mismatch"
            and answer.current_generation == self.generation,
            f"a claim expecting generation 0 after a launch at {self.generation} answered "
            f"{answer.status!r}/{answer.conflict_reason!r}/{answer.current_generation!r}",
        )

    async def claims(self) -> None:
        state, ref = self.state, self.state["ref"]
        first = self.claim_request("claim-1", "coordinator-a", self.generation)
        accepted = await self.claim(first, "claim_control()")
        expect(accepted.status == "accepted", f"a first claim answered {accepted.status!r}")
        expect(agent_interactive_session_control_claim_matches_ref(ref, accepted.control), "the claim binds another ref")
        replayed = await self.claim(first, "claim_control() after a lost acknowledgement")
        expect(replayed.status == "replayed", f"a resent claim answered {replayed.status!r}")
        expect(replayed.control == accepted.control, "the replay returned another claim")
        reuse = await self.claim(self.claim_request("claim-1", "coordinator-b", self.generation), "claim_control() reused operation")
        expect(
            reuse.status == "conflict" and reuse.conflict_reason == "operation_reuse",
            f"a changed claim under a used operation id answered {reuse.status!r}/{reuse.conflict_reason!r}",
        )
        expect(reuse.existing_request_digest == first.request_digest, "the conflict does not name the stored digest")
        stale = await self.claim(self.claim_request("claim-stale", "coordinator-b", self.generation), "claim_control() stale generation")
        expect(
            stale.status == "conflict" and stale.conflict_reason == "generation_mismatch",
            f"a stale expected generation answered {stale.status!r}/{stale.conflict_reason!r}",
        )
        expect(stale.current_generation == accepted.control.generation, "the conflict misreports the generation")
        recovered = await self.claim(
            self.claim_request("claim-2", "coordinator-b", accepted.control.generation), "claim_control() recovery"
        )
        expect(recovered.status == "accepted", f"a recovery claim answered {recovered.status!r}")
        expect(
            agent_interactive_session_control_claim_is_newer(recovered.control, accepted.control),
            "the recovered claim does not stand over the first",
        )
        state.update(old=accepted.control, control=recovered.control)

    async def superseded(self) -> None:
        session, old, control = self.state["session"], self.state["old"], self.state["control"]
        await _refused(lambda: session.attach({"control": old.to_wire()}), "attach with a superseded claim")
        if callable(getattr(session, "send_prompt", None)):
            stale_prompt = self.prompt("prompt-superseded", old, "stale")
            await _refused(lambda: session.send_prompt(stale_prompt), "a prompt under a superseded claim")
        terminal = await maybe_await(session.attach({"control": control.to_wire(), "cols": 90, "rows": 20}))
        expect(terminal.control == control, "the attached terminal is not bound to the claim")

    async def prompts(self) -> None:
        session, control = self.state["session"], self.state["control"]
        prompt = self.prompt("prompt", control, f"next step {self.nonce}")
        first = _parse(AgentInteractiveSessionPromptAcknowledgement, await maybe_await(session.send_prompt(prompt)), "send_prompt()")
        expect(first.status == "accepted", f"a prompt answered {first.status!r}")
        expect(agent_interactive_session_prompt_acknowledgement_matches_command(prompt, first), "the prompt ack does not match")
        again = _parse(AgentInteractiveSessionPromptAcknowledgement, await maybe_await(session.send_prompt(prompt)), "send_prompt() retry")
        expect(again.status == "replayed", f"a resent prompt answered {again.status!r}")
        expect(agent_interactive_session_prompt_acknowledgement_matches_command(prompt, again), "the replay does not match")
        changed = AgentInteractiveSessionPromptCommand.seal(
            {"operationId": prompt.operation_id, "ref": self.state["ref"], "control": control, "prompt": "a different action"}
        )
        conflict = _parse(
            AgentInteractiveSessionPromptAcknowledgement, await maybe_await(session.send_prompt(changed)), "send_prompt() changed"
        )
        expect(conflict.status == "conflict", f"a changed prompt under a used operation id answered {conflict.status!r}")
        expect(conflict.existing_request_digest == prompt.request_digest, "the conflict does not name the stored digest")
        delivered = getattr(session, "delivered_prompts", None)
        if delivered is not None:
            expect(list(delivered).count(prompt.prompt) == 1, "a replayed prompt was delivered twice")

    async def stale_incarnation(self) -> None:
        ref, control = self.state["ref"], self.state["control"]
        stale_ref = AgentInteractiveSessionRef.parse_wire({**ref.to_wire(), "incarnationId": f"{ref.incarnation_id}-stale"})
        stale_control = AgentInteractiveSessionControlClaim.parse_wire(
            {
                **control.to_wire(),
                "refDigest": agent_interactive_session_ref_digest(stale_ref),
                "leaseId": f"{control.lease_id}-stale",
            }
        )
        command = self.prompt("prompt-stale-incarnation", stale_control, "must not reach the stale process", ref=stale_ref)
        await _refused(
            lambda: self.target.interactive(stale_ref).send_prompt(command), "a prompt for a stale process incarnation"
        )
        delivered = getattr(self.state["session"], "delivered_prompts", None)
        if delivered is not None:
            expect(command.prompt not in list(delivered), "a prompt for a stale incarnation reached the process")

    async def expired_attach(self) -> None:
        session, control = self.state["session"], self.state["control"]
        expired = AgentInteractiveSessionControlClaim.parse_wire({**control.to_wire(), "expiresAt": _EXPIRED})
        await _refused(lambda: session.attach({"control": expired.to_wire()}), "attach with an expired claim")

    async def stale_terminal(self) -> None:
        state, session, control = self.state, self.state["session"], self.state["control"]
        terminal = await maybe_await(session.attach({"control": control.to_wire()}))
        await maybe_await(terminal.input({"data": "y"}))
        await maybe_await(terminal.resize({"cols": 100, "rows": 32}))
        recovery = self.claim_request("claim-3", "coordinator-c", control.generation)
        recovered = await self.claim(recovery, "claim_control() takeover")
        expect(recovered.status == "accepted", f"a takeover claim answered {recovered.status!r}")
        state["recovered"] = recovered.control
        await _refused(lambda: terminal.input({"data": "stale"}), "terminal input under a stale claim")
        await _refused(lambda: terminal.resize({"cols": 90, "rows": 30}), "a terminal resize under a stale claim")
        await _refused(lambda: terminal.close(), "closing a terminal under a stale claim")
        await _refused(lambda: session.attach({"control": control.to_wire()}), "attach with a stale claim")
        current = await maybe_await(session.attach({"control": recovered.control.to_wire()}))
        await maybe_await(current.close())

    async def stale_stop(self) -> None:
        session = self.state["session"]
        command = self.stop("stop-stale", self.state["control"])
        await _refused(lambda: session.stop(command), "a stop under a stale claim")
        status = _parse(AgentInteractiveSessionStatus, await maybe_await(session.status()), "status() after a stale stop")
        expect(status.state == "running", f"a refused stale stop left the session {status.state!r}")

    async def stopped(self) -> None:
        state, session, target = self.state, self.state["session"], self.target
        current = state.get("recovered", state["control"])
        stop = self.stop("stop", current)
        first = _parse(AgentInteractiveSessionStopAcknowledgement, await maybe_await(session.stop(stop)), "stop()")
        expect(first.status == "accepted" and first.effect in ("stop_requested", "stopped"), f"stop answered {first.status!r}")
        expect(agent_interactive_session_stop_acknowledgement_matches_command(stop, first), "the stop ack does not match")
        again = _parse(AgentInteractiveSessionStopAcknowledgement, await maybe_await(session.stop(stop)), "stop() retry")
        expect(again.status == "replayed", f"a resent stop answered {again.status!r}")
        expect(agent_interactive_session_stop_acknowledgement_matches_command(stop, again), "the replay does not match")
        changed = AgentInteractiveSessionStopCommand.seal(
            {"operationId": stop.operation_id, "ref": state["ref"], "control": state["old"]}
        )
        conflict = _parse(AgentInteractiveSessionStopAcknowledgement, await maybe_await(session.stop(changed)), "stop() changed")
        expect(conflict.status == "conflict" and conflict.effect == "unknown", f"a changed stop answered {conflict.status!r}")
        status = _parse(AgentInteractiveSessionStatus, await maybe_await(session.status()), "status() after stop")
        expect(status.state in ("exited", "unknown") or first.effect == "stop_requested", f"a stopped session is {status.state!r}")
        replay = _parse(AgentInteractiveSessionRef, await maybe_await(target.start_interactive(self.start)), "start_interactive() after stop")
        expect(replay == state["ref"], "replaying the start after the process exited answered another ref")

    async def exited_counted(self) -> None:
        now = await self.count()
        expect(now == self.state["before"] + 1, f"the session launched {now - self.state['before']} processes in all, not 1")
        await maybe_await(self.target.start_interactive(self.start))
        expect(await self.count() == now, "replaying an exited start launched another process")


@contained
async def run_interactive_session_conformance_async(
    target: Any,
    *,
    profile: Mapping[str, Any] | None = None,
    coordinates: Mapping[str, str] | None = None,
    start_count: Any = None,
    initial_control_generation: int | None = None,
    subject: str | None = None,
    timeout: float = 30.0,
) -> ConformanceReport:
    """Run every interactive check against ``target`` (an object with
    ``start_interactive`` and ``interactive``). ``profile`` must name a harness the
    target can prepare (a minimal ``codex`` profile by default); ``timeout`` bounds each
    check, in seconds. Raises
    :class:`ConformanceUsageError` when the target has neither method."""
    if target is None or not (
        callable(getattr(target, "start_interactive", None)) or callable(getattr(target, "interactive", None))
    ):
        raise ConformanceUsageError("run_interactive_session_conformance needs start_interactive() and interactive()")
    run = CheckRun("interactive session", subject or type(target).__name__, timeout=timeout)
    if not (callable(getattr(target, "start_interactive", None)) and callable(getattr(target, "interactive", None))):
        for name in INTERACTIVE_CHECKS:
            run.skip(name, "the target lacks start_interactive() or interactive()")
        return run.report(not_certified=INTERACTIVE_NOT_CERTIFIED)
    await interactive_session_checks(
        run,
        target,
        uuid.uuid4().hex[:12],
        profile=profile or {"name": "conformance-agent", "harness": "codex"},
        coordinates=coordinates,
        start_count=start_count,
        initial_control_generation=initial_control_generation,
    )
    return run.report(not_certified=INTERACTIVE_NOT_CERTIFIED)


def run_interactive_session_conformance(target: Any, **options: Any) -> ConformanceReport:
    """Synchronous :func:`run_interactive_session_conformance_async`."""
    return run_sync(run_interactive_session_conformance_async(target, **options))
