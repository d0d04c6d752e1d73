"""The shared kit API: one report, one check, sync and async entry points."""

from __future__ import annotations

import asyncio

import pytest

from agent_interface.conformance.report import (
    CheckFailed,
    CheckRun,
    ConformanceFailure,
    ConformanceReport,
    expect,
    run_sync,
)


async def _kit(*, fail: bool = False, secrets: tuple[str, ...] = ()) -> ConformanceReport:
    run = CheckRun("demo", "subject", secrets=secrets)

    async def good() -> None:
        expect(True, "never")

    async def bad() -> None:
        expect(not fail, "the property does not hold")

    async def crashes() -> None:
        raise RuntimeError("boom s3cret")

    await run.check("good", good)
    await run.check("bad", bad)
    if secrets:
        await run.check("crashes", crashes)
    run.skip("optional", "not declared")
    return run.report(not_certified=("network isolation",))


def test_passing_report_is_ok_and_counts_skips_apart() -> None:
    report = run_sync(_kit())
    assert report.ok
    assert report.names("passed") == ("good", "bad")
    assert report.names("skipped") == ("optional",)
    assert report.check("optional").skipped and not report.check("optional").passed
    report.raise_for_failures()
    assert "all 2 checks passed, 1 skipped" in str(report)
    assert "(not certified) network isolation" in str(report)


def test_failed_check_fails_the_report_with_its_name() -> None:
    report = run_sync(_kit(fail=True))
    assert not report.ok
    assert report.check("bad").message == "the property does not hold"
    with pytest.raises(ConformanceFailure, match=r"\[FAILED\] bad"):
        report.raise_for_failures()


def test_nothing_checked_is_not_a_pass() -> None:
    run = CheckRun("demo", "nothing")
    run.skip("everything", "not declared")
    report = run.report()
    assert not report.ok
    with pytest.raises(ConformanceFailure, match="nothing was checked"):
        report.raise_for_failures()
    assert not ConformanceReport("demo", "empty", ()).ok


def test_a_message_quoting_a_secret_is_withheld() -> None:
    report = run_sync(_kit(secrets=("s3cret",)))
    message = report.check("crashes").message
    assert "s3cret" not in message and "withheld" in message


def test_run_sync_works_inside_a_running_loop() -> None:
    async def outer() -> ConformanceReport:
        return run_sync(_kit())

    assert asyncio.run(outer()).ok


def test_run_sync_hands_back_the_kits_exception() -> None:
    async def broken() -> None:
        raise CheckFailed("usage")

    async def outer() -> None:
        run_sync(broken())

    with pytest.raises(CheckFailed):
        asyncio.run(outer())
    with pytest.raises(CheckFailed):
        run_sync(broken())


def test_the_summary_names_the_failed_checks_and_counts_not_applicable() -> None:
    run = CheckRun("demo", "subject")
    run.passed("good")
    run.fail("bad", "it broke")
    run.skip("later", "not run: bad failed")
    run.not_applicable("optional", "neither declared nor offered")
    report = run.report()
    assert report.summary() == "1 of 4 checks failed: bad, 1 skipped, 1 not applicable"
    assert report.check("optional").not_applicable and not report.check("optional").passed
    assert report.names("not_applicable") == ("optional",)
    assert "[N/A] optional" in str(report)
    with pytest.raises(ConformanceFailure, match="checks failed: bad"):
        report.raise_for_failures()


def test_a_kit_that_gave_up_is_not_ok_and_says_why() -> None:
    run = CheckRun("demo", "subject")
    run.passed("good")
    report = run.abandoned("timed out after 2 s in slow", "slow")
    assert not report.ok and report.check("slow").failed
    assert report.summary().startswith("the kit gave up: timed out after 2 s in slow")
    assert report.to_dict()["gaveUp"] == "timed out after 2 s in slow"


def test_every_message_is_capped() -> None:
    run = CheckRun("demo", "s" * 1000)
    run.fail("long", "m" * 100_000)
    report = run.report()
    assert len(report.check("long").message) < 2_100 and "characters cut" in report.check("long").message
    assert len(report.subject) < 250


def test_a_check_that_raises_system_exit_or_times_out_fails() -> None:
    async def kit() -> ConformanceReport:
        run = CheckRun("demo", "subject", timeout=0.05)

        async def exits() -> None:
            raise SystemExit(1)

        async def hangs() -> None:
            await asyncio.Event().wait()

        await run.check("exits", exits)
        await run.check("hangs", hangs)
        return run.report()

    report = run_sync(kit())
    assert report.check("exits").message == "raised SystemExit: 1"
    assert "timed out after 0.05 s" in report.check("hangs").message
