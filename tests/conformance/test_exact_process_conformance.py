"""The exact-process kit: the in-memory engine passes, each broken promise fails its check."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agent_interface.conformance import (
    ExactProcessLaunches,
    run_exact_process_conformance,
    run_exact_process_conformance_async,
)
from agent_interface.conformance.exact_process import (
    EXACT_PROCESS_CHECKS,
    EXACT_PROCESS_NOT_CERTIFIED,
    exact_process_terminations_equal,
)
from agent_interface.conformance.report import ConformanceFailure, ConformanceUsageError
from agent_interface.testing import (
    InMemoryAgentEnvironmentProvider,
    InMemoryExactProcessProvider,
    InMemoryExactProcessStore,
)
from tests.conformance.broken_exact_process import VARIANTS

CREATE_INPUT: dict[str, Any] = {
    "image": "registry.example/exact@sha256:" + "a" * 64,
    "egress": {"mode": "blocked"},
    "maxLifetimeMs": 600_000,
    "resources": {"cpu": 1, "memoryMb": 512, "diskMb": 64},
    "metadata": {"suite": "exact-process-kit"},
    "idempotencyKey": "kit",
}


def _in_memory(**options: Any) -> Any:
    store = InMemoryExactProcessStore()
    return lambda: InMemoryExactProcessProvider(store, **options)


def test_in_memory_engine_passes_every_check() -> None:
    report = run_exact_process_conformance(_in_memory(), CREATE_INPUT, ExactProcessLaunches.simulated())
    report.raise_for_failures()
    assert report.names() == EXACT_PROCESS_CHECKS
    assert report.names("skipped") == ("exact-process-egress-refusal",)  # both modes declared
    assert report.not_certified == EXACT_PROCESS_NOT_CERTIFIED


def test_in_memory_engine_with_one_egress_mode_runs_the_egress_refusal() -> None:
    report = run_exact_process_conformance(
        _in_memory(egress=("blocked",)), CREATE_INPUT, ExactProcessLaunches.simulated()
    )
    report.raise_for_failures()
    assert report.check("exact-process-egress-refusal").passed
    assert not report.skipped


def test_async_entry_point_inside_a_running_loop() -> None:
    async def main() -> None:
        report = await run_exact_process_conformance_async(
            _in_memory(), CREATE_INPUT, ExactProcessLaunches.simulated()
        )
        assert report.ok
        # The sync entry point also works from inside a running loop.
        assert run_exact_process_conformance(_in_memory(), CREATE_INPUT, ExactProcessLaunches.simulated()).ok

    asyncio.run(main())


def test_the_kit_cleans_up_what_it_created() -> None:
    store = InMemoryExactProcessStore()
    report = run_exact_process_conformance(
        lambda: InMemoryExactProcessProvider(store), CREATE_INPUT, ExactProcessLaunches.simulated()
    )
    assert report.ok
    assert store.environments and all(state.destroyed for state in store.environments.values())


def test_runs_are_independent_over_one_durable_store() -> None:
    store = InMemoryExactProcessStore()
    for _ in range(2):
        report = run_exact_process_conformance(
            lambda: InMemoryExactProcessProvider(store), CREATE_INPUT, ExactProcessLaunches.simulated()
        )
        assert report.ok, str(report)


def test_missing_launches_are_skipped_never_passed() -> None:
    full = ExactProcessLaunches.simulated()
    partial = ExactProcessLaunches(
        output=full.output, expected_stdout=full.expected_stdout,
        expected_stderr=full.expected_stderr, expected_exit_code=full.expected_exit_code,
    )
    report = run_exact_process_conformance(_in_memory(), CREATE_INPUT, partial)
    assert report.ok
    for name in ("exact-process-timeout", "exact-process-signal", "exact-process-cancel"):
        assert report.check(name).skipped


def test_a_provider_without_exact_process_is_skipped_and_not_ok() -> None:
    report = run_exact_process_conformance(
        InMemoryAgentEnvironmentProvider, CREATE_INPUT, ExactProcessLaunches.simulated()
    )
    assert report.names("skipped") == EXACT_PROCESS_CHECKS
    assert not report.ok
    with pytest.raises(ConformanceFailure):
        report.raise_for_failures()


def test_refuses_a_factory_that_is_not_callable() -> None:
    with pytest.raises(ConformanceUsageError):
        run_exact_process_conformance(
            InMemoryExactProcessProvider(), CREATE_INPUT, ExactProcessLaunches.simulated()  # type: ignore[arg-type]
        )


def test_wrong_expectations_fail_the_run_check() -> None:
    full = ExactProcessLaunches.simulated()
    wrong = ExactProcessLaunches(
        output=full.output, expected_stdout="something else",
        expected_stderr=full.expected_stderr, expected_exit_code=full.expected_exit_code,
    )
    report = run_exact_process_conformance(_in_memory(), CREATE_INPUT, wrong)
    assert report.names("failed") == ("exact-process-run",)
    assert "stdout differs" in report.check("exact-process-run").message


def test_termination_equality() -> None:
    assert exact_process_terminations_equal({"kind": "exit", "exitCode": 0}, {"kind": "exit", "exitCode": 0})
    assert not exact_process_terminations_equal({"kind": "exit", "exitCode": 0}, {"kind": "exit", "exitCode": 1})
    assert not exact_process_terminations_equal({"kind": "timeout", "timeoutMs": 5}, {"kind": "cancelled"})
    assert exact_process_terminations_equal({"kind": "signal", "signal": "SIGTERM"}, {"kind": "signal", "signal": "SIGTERM"})
    assert not exact_process_terminations_equal({"kind": "bogus"}, {"kind": "bogus"})


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_each_broken_variant_fails_the_check_that_names_its_promise(variant: str) -> None:
    build, named, cascade = VARIANTS[variant]
    report = run_exact_process_conformance(build(), CREATE_INPUT, ExactProcessLaunches.simulated())
    assert not report.ok
    assert set(report.names("failed")) == {named, *cascade}, str(report)


def test_every_check_is_exercised_by_a_broken_variant() -> None:
    named = {check for _, check, _ in VARIANTS.values()}
    assert named == set(EXACT_PROCESS_CHECKS)
