"""The session conformance kit: the in-memory implementations pass; broken ones fail
with a readable report."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from agent_interface.conformance.interactive_sessions import INTERACTIVE_CHECKS
from agent_interface.conformance.report import ConformanceReport, ConformanceUsageError
from agent_interface.conformance.sessions import (
    run_session_conformance,
    run_session_conformance_async,
)
from agent_interface.testing.interactive_sessions import InMemoryInteractiveSessions
from agent_interface.testing.sessions import InMemoryAgentInstances, InMemoryWorkspaceLeases
from agent_interface.testing.terminals import InMemoryTerminals


def test_in_memory_parts_pass() -> None:
    report = run_session_conformance(
        instances=InMemoryAgentInstances(),
        leases=InMemoryWorkspaceLeases(),
        terminals=InMemoryTerminals(),
    )
    report.raise_for_failures()
    names = {check.name for check in report.checks}
    assert {
        "instances.start",
        "instances.id_is_idempotency_key",
        "instances.refusal_before_effect",
        "instances.stop_is_idempotent",
        "leases.allocate",
        "leases.owner_token_required",
        "leases.phases_move_forward",
        "leases.destroy_is_final",
        "terminals.open",
        "terminals.replay_from_cursor",
        "terminals.reattach_bound_to_parent",
        "terminals.close_is_final",
    } <= names


def test_failing_cleanup_is_retried_to_destroyed() -> None:
    leases = InMemoryWorkspaceLeases()
    leases.fail_cleanup.add("lease-1")
    report = run_session_conformance(leases=leases)
    report.raise_for_failures()


def test_async_entry_point() -> None:
    report = asyncio.run(run_session_conformance_async(instances=InMemoryAgentInstances()))
    assert report.ok and len(report.checks) == 4
    assert isinstance(report, ConformanceReport) and report.kit == "session" and report.subject == "instances"


def test_nothing_to_check_is_a_usage_error() -> None:
    with pytest.raises(ConformanceUsageError, match="at least one of"):
        run_session_conformance()
    with pytest.raises(ConformanceUsageError):
        asyncio.run(run_session_conformance_async(instances=None))


def test_the_sync_entry_point_works_inside_a_running_loop() -> None:
    async def inside() -> ConformanceReport:
        return run_session_conformance(leases=InMemoryWorkspaceLeases())

    report = asyncio.run(inside())
    assert report.ok and report.names("passed")[0] == "leases.allocate"


class LeakyInstances(InMemoryAgentInstances):
    """Publishes the whole profile and forgets idempotency."""

    async def start(self, spec: Any) -> Any:
        record = await super().start(spec)
        wire = record.to_wire()
        wire["name"] = str(spec.get("profile", {}).get("prompt", {}).get("appendSystemPrompt", "x"))[:256]
        return wire

    async def stop(self, request: Any) -> Any:
        return {"agentId": request["agentId"], "outcome": "stopped"}


def test_leaky_instances_fail() -> None:
    report = run_session_conformance(instances=LeakyInstances())
    assert not report.ok
    assert not report.check("instances.start").passed
    assert "carries the profile" in report.check("instances.start").message


class NonIdempotentStop(InMemoryAgentInstances):
    async def stop(self, request: Any) -> Any:
        return {"agentId": request["agentId"], "outcome": "stopped"}


def test_non_idempotent_stop_fails() -> None:
    report = run_session_conformance(instances=NonIdempotentStop())
    assert [check.name for check in report.failed] == ["instances.stop_is_idempotent"]


class TokenEchoingLeases(InMemoryWorkspaceLeases):
    """Quotes the presented token in its refusal."""

    def _authorized(self, request: Any) -> Any:
        from agent_interface.core.errors import ContractError

        known = self._leases.get(request.lease_id)
        if known is None or known.token_digest != __import__(
            "agent_interface.core.canonical", fromlist=["sha256_utf8"]
        ).sha256_utf8(request.owner_token):
            raise ContractError.single("", "unauthorized", f"token {request.owner_token} is wrong")
        return known


def test_token_echoing_refusal_fails_without_leaking() -> None:
    report = run_session_conformance(leases=TokenEchoingLeases())
    failed = report.check("leases.owner_token_required")
    assert not failed.passed and "quotes a secret" in failed.message


class ForgetfulTerminals(InMemoryTerminals):
    """Ignores the parent execution on reattach."""

    async def attach_terminal(self, request: Any) -> Any:
        if isinstance(request, dict) and "terminalSessionId" in request:
            state = self._terminals[request["terminalSessionId"]]
            return {"status": "reattached", "mode": request["mode"], "ref": state.ref.to_wire(), "attachCount": 2}
        return await super().attach_terminal(request)


def test_forgetful_terminals_fail() -> None:
    report = run_session_conformance(terminals=ForgetfulTerminals())
    assert not report.check("terminals.reattach_bound_to_parent").passed


@pytest.mark.parametrize("max_frames", [1, 2, 256])
def test_small_retention_still_conforms(max_frames: int) -> None:
    report = run_session_conformance(terminals=InMemoryTerminals(max_frames=max(max_frames, 2)))
    report.raise_for_failures()


# --- interactive sessions ------------------------------------------------------------------

FIXTURES = json.loads((Path(__file__).resolve().parents[1] / "golden" / "interactive_session_fixtures.json").read_text())


def fixture_prepare(start: Any) -> Any:
    """The executor of the recorded reference receipt: it prepared exactly this profile."""
    return FIXTURES["receipt"]


def interactive_parts(sessions: Any = None) -> dict[str, Any]:
    return {
        "interactive": sessions or InMemoryInteractiveSessions(prepare=fixture_prepare),
        "interactive_profile": FIXTURES["profile"],
    }


def test_in_memory_interactive_sessions_pass() -> None:
    report = run_session_conformance(**interactive_parts())
    report.raise_for_failures()
    names = [check.name for check in report.checks]
    assert {
        "interactive.start",
        "interactive.control_claims",
        "interactive.superseded_claim_refused",
        "interactive.prompt_replay_safe",
        "interactive.stop_replay_safe",
    } <= set(names)
    assert names == [name for name in INTERACTIVE_CHECKS if name in names]


def test_default_executor_prepares_any_profile_with_a_harness() -> None:
    run_session_conformance(interactive=InMemoryInteractiveSessions()).raise_for_failures()
    run_session_conformance(
        interactive=InMemoryInteractiveSessions(), interactive_profile=FIXTURES["profile"]
    ).raise_for_failures()


def test_everything_together() -> None:
    run_session_conformance(
        instances=InMemoryAgentInstances(),
        leases=InMemoryWorkspaceLeases(),
        terminals=InMemoryTerminals(),
        interactive=InMemoryInteractiveSessions(),
    ).raise_for_failures()


def test_a_receipt_for_another_profile_is_refused() -> None:
    sessions = InMemoryInteractiveSessions(prepare=lambda start: FIXTURES["codexReceipt"])
    report = run_session_conformance(**interactive_parts(sessions))
    assert not report.check("interactive.start").passed


class ForgetfulInteractive(InMemoryInteractiveSessions):
    """Treats every claim as new: no replay after a lost acknowledgement."""

    def interactive(self, ref: Any) -> Any:
        session = super().interactive(ref)
        original = session.claim_control

        async def claim_control(request: Any) -> Any:
            session._process.claims.clear()
            return await original(request)

        session.claim_control = claim_control  # type: ignore[method-assign]
        return session


def test_claims_without_replay_fail() -> None:
    report = run_session_conformance(**interactive_parts(ForgetfulInteractive(prepare=fixture_prepare)))
    failed = report.check("interactive.control_claims")
    assert not failed.passed and "resent claim" in failed.message


class DoublePrompt(InMemoryInteractiveSessions):
    """Delivers every prompt, replays included."""

    def interactive(self, ref: Any) -> Any:
        session = super().interactive(ref)
        original = session.send_prompt

        async def send_prompt(command: Any) -> Any:
            session._process.prompts.clear()
            return await original(command)

        session.send_prompt = send_prompt  # type: ignore[method-assign]
        return session


def test_prompt_delivered_twice_fails() -> None:
    report = run_session_conformance(**interactive_parts(DoublePrompt(prepare=fixture_prepare)))
    assert not report.check("interactive.prompt_replay_safe").passed
