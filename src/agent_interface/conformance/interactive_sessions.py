"""Conformance checks for native interactive sessions (``start_interactive`` /
``interactive``), run by :func:`~agent_interface.conformance.sessions.run_session_conformance`.

They prove, with the contract's own matchers: an exact start answers a matching ref and
replays to the same ref; a start whose run does not derive from its material is refused;
control claims are compare-and-swap with replay after a lost acknowledgement and the two
distinct conflicts; a newer claim supersedes the older one for attach and prompts;
prompts and stop replay without a second effect and detect a changed command under a
used operation id; a stopped process reports ``exited`` yet its start still replays.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from agent_interface.core.errors import ContractError
from agent_interface.core.model import wire_adapter
from agent_interface.durable.portable_context import plain_wire
from agent_interface.profile.canonical import canonical_agent_profile_digest
from agent_interface.session.interactive_control import (
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

__all__ = ["InteractiveCheckRun", "interactive_session_checks"]


class _Failed(Exception):
    pass


def _expect(condition: bool, message: str) -> None:
    if not condition:
        raise _Failed(message)


def _parse(tp: Any, value: Any, what: str) -> Any:
    try:
        return wire_adapter(tp).parse_value(plain_wire(value))
    except ContractError as error:
        raise _Failed(f"{what} is not a valid answer: {error}") from None


async def _refused(call: Awaitable[Any], what: str) -> None:
    try:
        answer = await call
    except ContractError:
        return
    raise _Failed(f"{what} was accepted (answered {type(answer).__name__})")


class InteractiveCheckRun:
    """What the checks need from the runner: ``check(name, body)``; ``_Failed`` raised by
    a body is reported as the check's failure message."""

    failure = _Failed

    def __init__(self, check: Callable[[str, Callable[[], Awaitable[None]]], Awaitable[bool]]) -> None:
        self.check = check


async def interactive_session_checks(
    run: InteractiveCheckRun,
    target: Any,
    nonce: str,
    *,
    profile: Mapping[str, Any],
    coordinates: Mapping[str, str] | None = None,
) -> None:
    """Drive ``target`` through one full session of ``profile`` (which must name a
    harness) at ``coordinates`` (fresh ones by default)."""
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
    start = {"run": agent_interactive_session_run_ref(where, material).to_wire(), **material}
    state: dict[str, Any] = {}

    async def started() -> None:
        ref = _parse(AgentInteractiveSessionRef, await target.start_interactive(start), "start_interactive()")
        _expect(agent_interactive_session_ref_matches_start(start, ref), "the ref does not answer the start")
        again = _parse(AgentInteractiveSessionRef, await target.start_interactive(start), "start_interactive() retry")
        _expect(
            agent_interactive_session_ref_digest(again) == agent_interactive_session_ref_digest(ref),
            "replaying the same start answered another ref",
        )
        await _refused(
            target.start_interactive({**start, "initialPrompt": f"changed {nonce}"}),
            "a start whose material changed after its run was derived",
        )
        state["ref"] = ref
        state["session"] = target.interactive(ref)
        status = _parse(AgentInteractiveSessionStatus, await state["session"].status(), "status()")
        _expect(status.state == "running", f"a started session is {status.state!r}")
        _expect(agent_interactive_session_status_matches_ref(ref, status), "the status describes another process")

    if not await run.check("interactive.start", started):
        return
    ref, session = state["ref"], state["session"]

    def claim_request(operation: str, holder: str, expected: int) -> AgentInteractiveSessionControlClaimRequest:
        return AgentInteractiveSessionControlClaimRequest.seal(
            {"operationId": f"{operation}-{nonce}", "ref": ref, "holderId": holder, "expectedGeneration": expected}
        )

    async def claim(request: Any, what: str) -> Any:
        answer = _parse(AgentInteractiveSessionControlClaimAcknowledgement, await session.claim_control(request), what)
        _expect(
            agent_interactive_session_control_claim_acknowledgement_matches_request(request, answer),
            f"{what}: the acknowledgement does not answer the request",
        )
        return answer

    async def claims() -> None:
        first = claim_request("claim-1", "coordinator-a", 0)
        accepted = await claim(first, "claim_control()")
        _expect(accepted.status == "accepted", f"a first claim answered {accepted.status!r}")
        _expect(agent_interactive_session_control_claim_matches_ref(ref, accepted.control), "the claim binds another ref")
        replayed = await claim(first, "claim_control() after a lost acknowledgement")
        _expect(replayed.status == "replayed", f"a resent claim answered {replayed.status!r}")
        _expect(replayed.control == accepted.control, "the replay returned another claim")
        reuse = await claim(claim_request("claim-1", "coordinator-b", 0), "claim_control() reused operation")
        _expect(
            reuse.status == "conflict" and reuse.conflict_reason == "operation_reuse",
            f"a changed claim under a used operation id answered {reuse.status!r}/{reuse.conflict_reason!r}",
        )
        _expect(reuse.existing_request_digest == first.request_digest, "the conflict does not name the stored digest")
        stale = await claim(claim_request("claim-stale", "coordinator-b", 0), "claim_control() stale generation")
        _expect(
            stale.status == "conflict" and stale.conflict_reason == "generation_mismatch",
            f"a stale expected generation answered {stale.status!r}/{stale.conflict_reason!r}",
        )
        _expect(stale.current_generation == accepted.control.generation, "the conflict misreports the generation")
        recovered = await claim(
            claim_request("claim-2", "coordinator-b", accepted.control.generation), "claim_control() recovery"
        )
        _expect(recovered.status == "accepted", f"a recovery claim answered {recovered.status!r}")
        _expect(
            agent_interactive_session_control_claim_is_newer(recovered.control, accepted.control),
            "the recovered claim does not stand over the first",
        )
        state.update(old=accepted.control, control=recovered.control)

    if not await run.check("interactive.control_claims", claims):
        return
    old, control = state["old"], state["control"]

    async def superseded() -> None:
        await _refused(session.attach({"control": old.to_wire()}), "attach with a superseded claim")
        stale_prompt = AgentInteractiveSessionPromptCommand.seal(
            {"operationId": f"prompt-stale-{nonce}", "ref": ref, "control": old, "prompt": "stale"}
        )
        await _refused(session.send_prompt(stale_prompt), "a prompt under a superseded claim")
        terminal = await session.attach({"control": control.to_wire(), "cols": 90, "rows": 20})
        _expect(terminal.control == control, "the attached terminal is not bound to the claim")

    await run.check("interactive.superseded_claim_refused", superseded)

    prompt = AgentInteractiveSessionPromptCommand.seal(
        {"operationId": f"prompt-{nonce}", "ref": ref, "control": control, "prompt": f"next step {nonce}"}
    )

    async def prompts() -> None:
        if not hasattr(session, "send_prompt"):
            return
        first = _parse(AgentInteractiveSessionPromptAcknowledgement, await session.send_prompt(prompt), "send_prompt()")
        _expect(first.status == "accepted", f"a prompt answered {first.status!r}")
        _expect(agent_interactive_session_prompt_acknowledgement_matches_command(prompt, first), "the prompt ack does not match")
        again = _parse(AgentInteractiveSessionPromptAcknowledgement, await session.send_prompt(prompt), "send_prompt() retry")
        _expect(again.status == "replayed", f"a resent prompt answered {again.status!r}")
        _expect(agent_interactive_session_prompt_acknowledgement_matches_command(prompt, again), "the replay does not match")
        changed = AgentInteractiveSessionPromptCommand.seal(
            {"operationId": prompt.operation_id, "ref": ref, "control": control, "prompt": "a different action"}
        )
        conflict = _parse(AgentInteractiveSessionPromptAcknowledgement, await session.send_prompt(changed), "send_prompt() changed")
        _expect(conflict.status == "conflict", f"a changed prompt under a used operation id answered {conflict.status!r}")
        _expect(conflict.existing_request_digest == prompt.request_digest, "the conflict does not name the stored digest")
        delivered = getattr(session, "delivered_prompts", None)
        if delivered is not None:
            _expect(list(delivered).count(prompt.prompt) == 1, "a replayed prompt was delivered twice")

    await run.check("interactive.prompt_replay_safe", prompts)

    stop = AgentInteractiveSessionStopCommand.seal({"operationId": f"stop-{nonce}", "ref": ref, "control": control})

    async def stopped() -> None:
        first = _parse(AgentInteractiveSessionStopAcknowledgement, await session.stop(stop), "stop()")
        _expect(first.status == "accepted" and first.effect in ("stop_requested", "stopped"), f"stop answered {first.status!r}")
        _expect(agent_interactive_session_stop_acknowledgement_matches_command(stop, first), "the stop ack does not match")
        again = _parse(AgentInteractiveSessionStopAcknowledgement, await session.stop(stop), "stop() retry")
        _expect(again.status == "replayed", f"a resent stop answered {again.status!r}")
        _expect(agent_interactive_session_stop_acknowledgement_matches_command(stop, again), "the replay does not match")
        changed = AgentInteractiveSessionStopCommand.seal({"operationId": stop.operation_id, "ref": ref, "control": old})
        conflict = _parse(AgentInteractiveSessionStopAcknowledgement, await session.stop(changed), "stop() changed")
        _expect(conflict.status == "conflict" and conflict.effect == "unknown", f"a changed stop answered {conflict.status!r}")
        status = _parse(AgentInteractiveSessionStatus, await session.status(), "status() after stop")
        _expect(status.state in ("exited", "unknown") or first.effect == "stop_requested", f"a stopped session is {status.state!r}")
        replay = _parse(AgentInteractiveSessionRef, await target.start_interactive(start), "start_interactive() after stop")
        _expect(
            agent_interactive_session_ref_digest(replay) == agent_interactive_session_ref_digest(ref),
            "replaying the start after the process exited answered another ref",
        )

    await run.check("interactive.stop_replay_safe", stopped)
