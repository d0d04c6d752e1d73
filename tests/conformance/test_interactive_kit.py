"""The interactive-session kit is proven by what it catches: one broken promise per
variant, each failing the check that names it; the in-memory sessions pass."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from agent_interface.conformance import (
    INTERACTIVE_CHECKS,
    ConformanceReport,
    ConformanceUsageError,
    run_interactive_session_conformance,
    run_interactive_session_conformance_async,
)
from agent_interface.core.errors import ContractError
from agent_interface.session.interactive_control import AgentInteractiveSessionRef
from agent_interface.session.interactive_start import exact_agent_interactive_session_start
from agent_interface.testing import InMemoryInteractiveSessions, InMemoryInteractiveTerminal

FIXTURES = json.loads((Path(__file__).resolve().parents[1] / "golden" / "interactive_session_fixtures.json").read_text())
LAUNCH_GENERATION = 2


def _report(target: Any, **options: Any) -> ConformanceReport:
    return run_interactive_session_conformance(target, **options)


def _sessions(kind: type[InMemoryInteractiveSessions] = InMemoryInteractiveSessions, **options: Any) -> Any:
    return kind(initial_control_generation=LAUNCH_GENERATION, **options)


# --- one broken promise each ----------------------------------------------------------------


class AcceptsChangedStart(InMemoryInteractiveSessions):
    """Answers a start with changed material with the running process instead of refusing."""

    async def start_interactive(self, request: Any) -> Any:
        try:
            return await super().start_interactive(request)
        except ContractError:
            return next(iter(self._processes.values())).ref


class ForeignReceipt:
    """Answers every start with a ref whose receipt prepared another profile."""

    def __init__(self) -> None:
        self.inner = InMemoryInteractiveSessions()
        self.initial_control_generation = 0
        self.real: dict[str, Any] = {}

    async def start_interactive(self, request: Any) -> Any:
        ref = await self.inner.start_interactive(request)
        forged = AgentInteractiveSessionRef.parse_wire(
            {**ref.to_wire(), "preparationReceipt": FIXTURES["receipt"]}
        )
        self.real[forged.incarnation_id] = ref
        return forged

    def interactive(self, ref: Any) -> Any:
        return self.inner.interactive(self.real.get(ref.incarnation_id, ref))

    @property
    def start_count(self) -> int:
        return self.inner.start_count


class RelaunchesOnReplay(InMemoryInteractiveSessions):
    async def start_interactive(self, request: Any) -> Any:
        known = self._processes.get(exact_agent_interactive_session_start(request).run.request_digest)
        if known is not None and known.ended_at is None:
            self._launched += 1  # a second process for the same exact start
        return await super().start_interactive(request)


class LaunchesBeforeRefusing(InMemoryInteractiveSessions):
    async def start_interactive(self, request: Any) -> Any:
        try:
            exact_agent_interactive_session_start(request)
        except ContractError:
            self._launched += 1  # launched, then noticed the material changed
            raise
        return await super().start_interactive(request)


class IgnoresLaunchGeneration(InMemoryInteractiveSessions):
    async def _launch(self, start: Any) -> Any:
        ref = await super()._launch(start)
        self._processes[start.run.request_digest].generation = 0
        return ref


class ForgetsClaims(InMemoryInteractiveSessions):
    def interactive(self, ref: Any) -> Any:
        session = super().interactive(ref)
        original = session.claim_control

        async def claim_control(request: Any) -> Any:
            session._process.claims.clear()
            return await original(request)

        session.claim_control = claim_control  # type: ignore[method-assign]
        return session


class AttachIgnoresClaim(InMemoryInteractiveSessions):
    def interactive(self, ref: Any) -> Any:
        session = super().interactive(ref)

        async def attach(request: Any) -> Any:
            control = request["control"] if isinstance(request, dict) else request.control
            from agent_interface.session.interactive_control import (
                AgentInteractiveSessionControlClaim,
            )

            claim = AgentInteractiveSessionControlClaim.parse_wire(control) if isinstance(control, dict) else control
            return InMemoryInteractiveTerminal(self, session._process, claim)

        session.attach = attach  # type: ignore[method-assign]
        return session


class DeliversReplays(InMemoryInteractiveSessions):
    def interactive(self, ref: Any) -> Any:
        session = super().interactive(ref)
        original = session.send_prompt

        async def send_prompt(command: Any) -> Any:
            session._process.prompts.clear()
            return await original(command)

        session.send_prompt = send_prompt  # type: ignore[method-assign]
        return session


class IgnoresIncarnation(InMemoryInteractiveSessions):
    """Finds a process by its run alone and takes any claim of the current generation."""

    def interactive(self, ref: Any) -> Any:
        exact = AgentInteractiveSessionRef.parse_wire(ref.to_wire()) if not isinstance(ref, dict) else ref
        process = self._processes[exact.run.request_digest]
        session = super().interactive(process.ref)
        session._own = lambda ref: None  # type: ignore[method-assign]
        return session

    def _require_current(self, process: Any, control: Any) -> None:
        current = process.claim
        if current is None or control.generation != current.generation:
            super()._require_current(process, control)


class IgnoresExpiry(InMemoryInteractiveSessions):
    def _require_current(self, process: Any, control: Any) -> None:
        current = process.claim
        if current is not None and control.model_copy(update={"expires_at": current.expires_at}) == current:
            return
        super()._require_current(process, control)


class LaxTerminal(InMemoryInteractiveTerminal):
    async def input(self, input: Any) -> None:
        await self._terminal.input(input)

    async def resize(self, resize: Any) -> None:
        await self._terminal.resize(resize)

    async def close(self) -> Any:
        return await self._terminal.detach()


class TerminalIgnoresClaim(InMemoryInteractiveSessions):
    def interactive(self, ref: Any) -> Any:
        session = super().interactive(ref)
        original = session.attach

        async def attach(request: Any) -> Any:
            terminal = await original(request)
            return LaxTerminal(self, session._process, terminal.control)

        session.attach = attach  # type: ignore[method-assign]
        return session


class StopIgnoresClaim(InMemoryInteractiveSessions):
    def interactive(self, ref: Any) -> Any:
        session = super().interactive(ref)
        original = session.stop

        async def stop(command: Any) -> Any:
            self._lax = True
            try:
                return await original(command)
            finally:
                self._lax = False

        session.stop = stop  # type: ignore[method-assign]
        return session

    def _require_current(self, process: Any, control: Any) -> None:
        if not getattr(self, "_lax", False):
            super()._require_current(process, control)


class ForgetsStops(InMemoryInteractiveSessions):
    def interactive(self, ref: Any) -> Any:
        session = super().interactive(ref)
        original = session.stop

        async def stop(command: Any) -> Any:
            session._process.stops.clear()
            return await original(command)

        session.stop = stop  # type: ignore[method-assign]
        return session


class RelaunchesAfterExit(InMemoryInteractiveSessions):
    async def start_interactive(self, request: Any) -> Any:
        known = self._processes.get(exact_agent_interactive_session_start(request).run.request_digest)
        if known is not None and known.ended_at is not None:
            self._launched += 1  # a fresh process behind the old ref
        return await super().start_interactive(request)


BROKEN: list[tuple[Any, str]] = [
    (lambda: _sessions(AcceptsChangedStart), "interactive.changed_start_refused"),
    (ForeignReceipt, "interactive.start_admission"),
    (lambda: _sessions(RelaunchesOnReplay), "interactive.start_replay_no_second_process"),
    (lambda: _sessions(LaunchesBeforeRefusing), "interactive.changed_start_no_second_process"),
    (lambda: _sessions(IgnoresLaunchGeneration), "interactive.launch_generation_fence"),
    (lambda: _sessions(ForgetsClaims), "interactive.control_claims"),
    (lambda: _sessions(AttachIgnoresClaim), "interactive.superseded_claim_refused"),
    (lambda: _sessions(DeliversReplays), "interactive.prompt_replay_safe"),
    (lambda: _sessions(IgnoresIncarnation), "interactive.stale_incarnation_prompt_refused"),
    (lambda: _sessions(IgnoresExpiry), "interactive.expired_claim_attach_refused"),
    (lambda: _sessions(TerminalIgnoresClaim), "interactive.stale_terminal_mutation_refused"),
    (lambda: _sessions(StopIgnoresClaim), "interactive.stale_stop_refused"),
    (lambda: _sessions(ForgetsStops), "interactive.stop_replay_safe"),
    (lambda: _sessions(RelaunchesAfterExit), "interactive.exited_replay_no_second_process"),
]


def test_in_memory_sessions_pass_every_check() -> None:
    report = _report(_sessions())
    report.raise_for_failures()
    assert report.names() == INTERACTIVE_CHECKS
    assert report.names("passed") == INTERACTIVE_CHECKS


def test_a_launch_at_generation_zero_skips_the_fence_and_nothing_else() -> None:
    report = _report(InMemoryInteractiveSessions())
    assert report.ok
    assert report.names("skipped") == ("interactive.launch_generation_fence",)


def test_the_recorded_reference_receipt_passes() -> None:
    report = _report(_sessions(prepare=lambda start: FIXTURES["receipt"]), profile=FIXTURES["profile"])
    report.raise_for_failures()


@pytest.mark.parametrize(("make", "failing"), BROKEN, ids=[name for _, name in BROKEN])
def test_each_broken_promise_fails_its_check(make: Any, failing: str) -> None:
    report = _report(make())
    assert not report.ok
    assert report.check(failing).failed, str(report)
    assert report.check(failing).message


def test_a_changed_start_is_reported_under_its_own_check() -> None:
    report = _report(_sessions(AcceptsChangedStart))
    assert report.check("interactive.start").passed, str(report)
    assert report.names("failed") == ("interactive.changed_start_refused",), str(report)


def test_every_check_is_exercised_by_a_broken_variant() -> None:
    failed: set[str] = set()
    for make, _ in BROKEN:
        failed.update(_report(make()).names("failed"))
    assert set(INTERACTIVE_CHECKS) <= failed


def test_absent_counter_and_methods_are_skipped_never_passed() -> None:
    class NoCounter:
        def __init__(self) -> None:
            self.inner = InMemoryInteractiveSessions()
            self.start_interactive = self.inner.start_interactive
            self.interactive = self.inner.interactive

    report = _report(NoCounter())
    assert report.ok
    for name in (
        "interactive.start_replay_no_second_process",
        "interactive.changed_start_no_second_process",
        "interactive.exited_replay_no_second_process",
    ):
        assert report.check(name).skipped

    class StartOnly:
        async def start_interactive(self, request: Any) -> Any:
            raise AssertionError("never called")

    only = _report(StartOnly())
    assert not only.ok and only.names("skipped") == INTERACTIVE_CHECKS

    class NoPrompts(InMemoryInteractiveSessions):
        def interactive(self, ref: Any) -> Any:
            session = super().interactive(ref)
            session.send_prompt = None  # type: ignore[assignment, method-assign]
            return session

    report = _report(NoPrompts())
    assert report.check("interactive.prompt_replay_safe").skipped
    assert report.check("interactive.stale_incarnation_prompt_refused").skipped


def test_usage_errors_and_async_entry_point() -> None:
    with pytest.raises(ConformanceUsageError):
        _report(object())
    with pytest.raises(ConformanceUsageError):
        _report(InMemoryInteractiveSessions(), start_count=3)
    report = asyncio.run(run_interactive_session_conformance_async(_sessions()))
    assert report.ok and report.kit == "interactive session"
