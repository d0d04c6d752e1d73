"""A kit runs untrusted code: it never hangs, never crashes and never lets a provider's
exception out as anything but a failed check (``KeyboardInterrupt`` aside, which
propagates after the kit destroyed what it made); every message it keeps is capped.

The table of ``broken_streams`` proves each case fails its check by name; these tests
prove the bounds themselves (the time a blocked kit takes to give up is asserted only
against the much longer time the provider blocks, never as a benchmark)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest

from agent_interface.conformance import ConformanceFailure, run_provider_conformance
from agent_interface.conformance.bounds import (
    MESSAGE_LIMIT,
    CallTimedOut,
    ProviderEscape,
    cap,
    describe_error,
    safe_str,
    settle,
)
from agent_interface.environment.events import AgentEnvironmentEvent
from tests.conformance.broken_providers import fake_with
from tests.conformance.broken_streams import HUGE_MESSAGE, _Huge, _raising, _Recursing
from tests.conformance.fake_provider import DISABLED, FakeEnvironment, FakeProvider

BLOCK_SECONDS = 5.0


class _BlockedDocument(FakeProvider):
    """capabilities() blocks its thread far longer than the kit's timeout."""

    def capabilities(self) -> Any:  # type: ignore[override]
        time.sleep(BLOCK_SECONDS)
        return super().capabilities()


def test_a_provider_that_blocks_the_kits_thread_makes_the_kit_give_up_and_say_why() -> None:
    started = time.monotonic()
    report = run_provider_conformance(_BlockedDocument(DISABLED), timeout=0.2)
    elapsed = time.monotonic() - started
    assert elapsed < BLOCK_SECONDS / 2, elapsed  # the kit did not wait for the provider
    assert not report.ok and "timed out" in report.gave_up and "capabilities.valid" in report.gave_up
    assert report.check("capabilities.valid").failed
    with pytest.raises(ConformanceFailure, match="gave up: timed out after"):
        report.raise_for_failures()


def test_a_huge_exception_message_is_capped_in_the_report() -> None:
    provider = fake_with(_raising(_Huge(HUGE_MESSAGE)), DISABLED)()
    report = run_provider_conformance(provider)
    message = report.check("stream.events").message
    assert len(message) <= MESSAGE_LIMIT + 60 and "characters cut" in message
    assert len(str(report)) < 40 * MESSAGE_LIMIT


def test_a_recursing_exception_is_described_safely() -> None:
    text = describe_error(_Recursing())
    assert text.startswith("_Recursing") and "RecursionError" in text
    report = run_provider_conformance(fake_with(_raising(_Recursing()), DISABLED)())
    assert report.check("stream.events").failed


class _Interrupting(FakeEnvironment):
    def stream(self, input: Any) -> AsyncIterator[AgentEnvironmentEvent]:
        async def emit() -> AsyncIterator[AgentEnvironmentEvent]:
            raise KeyboardInterrupt
            yield  # pragma: no cover

        return emit()


class _Counting(FakeProvider):
    environment_class = _Interrupting
    made = 0

    def new_environment(self, input: Any) -> FakeEnvironment:
        self.made += 1
        return super().new_environment(input)


def test_keyboard_interrupt_propagates_after_the_kit_destroyed_what_it_made() -> None:
    provider = _Counting(DISABLED)
    with pytest.raises(KeyboardInterrupt):
        run_provider_conformance(provider)
    assert provider.made and provider.live == {}


def test_settle_bounds_turns_escapes_into_exceptions_and_abandons_swallowers() -> None:
    async def swallow() -> None:
        while True:
            try:
                await asyncio.sleep(10)
            except asyncio.CancelledError:
                continue

    async def exits() -> None:
        raise SystemExit(4)

    async def main() -> None:
        with pytest.raises(CallTimedOut, match="ignored cancellation"):
            await settle(swallow(), 0.05, "swallow()")
        with pytest.raises(ProviderEscape) as escaped:
            await settle(exits(), 1.0, "exits()")
        assert describe_error(escaped.value) == "SystemExit: 4"
        assert await settle(7, 1.0, "a plain value") == 7

    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(main())
    finally:
        loop.close()  # the abandoned swallower is never awaited again


def test_cap_and_safe_str() -> None:
    assert cap("x" * 10, 4) == "xxxx... [6 characters cut]"
    assert cap("short") == "short"
    assert safe_str(_Recursing()).startswith("<_Recursing whose str() raised")


def test_an_exception_escaping_outside_any_check_ends_the_run_with_a_report() -> None:
    from agent_interface.conformance import (
        run_interactive_session_conformance,
        run_interactive_session_conformance_async,
    )
    from agent_interface.testing import InMemoryInteractiveSessions

    class ExitingCounter(InMemoryInteractiveSessions):
        @property
        def start_count(self) -> int:  # type: ignore[override]
            raise SystemExit(5)

    for report in (
        run_interactive_session_conformance(ExitingCounter()),
        asyncio.run(run_interactive_session_conformance_async(ExitingCounter())),
    ):
        assert not report.ok and "SystemExit: 5" in report.gave_up, str(report)


class _SlowSyncDocument(FakeProvider):
    """capabilities() answers, but only after blocking four times the timeout."""

    def capabilities(self) -> Any:  # type: ignore[override]
        time.sleep(2.0)
        return super().capabilities()


def test_a_sync_call_far_beyond_the_timeout_is_not_reported_ok() -> None:
    report = run_provider_conformance(_SlowSyncDocument(DISABLED), timeout=0.5)
    assert not report.ok and report.check("capabilities.valid").failed, str(report)
    assert "timed out after 0.5 s" in report.check("capabilities.valid").message


async def _hang_forever(*args: Any) -> None:
    while True:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            continue


def test_the_branching_kit_abandons_an_engine_that_hangs_and_ignores_cancellation() -> None:
    from agent_interface.conformance import run_branching_conformance

    class Hangs:
        provider = "hangs"
        checkpoint = lookup_checkpoint = delete_checkpoint = fork = lookup_fork = destroy_fork = staticmethod(_hang_forever)

    report = run_branching_conformance(Hangs(), timeout=0.2)
    assert not report.ok
    assert "ignored cancellation" in report.check("checkpoint_created").message, str(report)


def test_the_interactive_kit_abandons_a_target_that_hangs_and_ignores_cancellation() -> None:
    from agent_interface.conformance import run_interactive_session_conformance

    class Hangs:
        start_interactive = interactive = staticmethod(_hang_forever)

    report = run_interactive_session_conformance(Hangs(), timeout=0.2)
    assert not report.ok
    assert "ignored cancellation" in report.check("interactive.start").message, str(report)


class _SlowStream(FakeEnvironment):
    def stream(self, input: Any) -> AsyncIterator[AgentEnvironmentEvent]:
        async def emit() -> AsyncIterator[AgentEnvironmentEvent]:
            await asyncio.sleep(5)
            yield AgentEnvironmentEvent(type="result", data={})

        return emit()


class _CountingSlow(_Counting):
    environment_class = _SlowStream


def test_ctrl_c_while_waiting_cancels_the_kit_which_destroys_what_it_made() -> None:
    import _thread
    import threading

    provider = _CountingSlow(DISABLED)
    timer = threading.Timer(0.5, _thread.interrupt_main)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            run_provider_conformance(provider, timeout=3.0)
    finally:
        timer.cancel()
    assert provider.made and provider.live == {}
