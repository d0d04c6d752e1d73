"""The provider kit is proven by what it catches: every check it records has a broken
provider that fails it by name, without failing unrelated checks."""

from __future__ import annotations

import re

import pytest

from agent_interface.conformance import (
    PROVIDER_CHECKS,
    ConformanceFailure,
    run_provider_conformance,
)
from agent_interface.testing import InMemoryAgentEnvironmentProvider
from tests.conformance.broken_consistency import CONSISTENCY_BROKEN
from tests.conformance.broken_providers import BROKEN as PROMISES
from tests.conformance.broken_providers import Broken
from tests.conformance.broken_streams import STREAM_BROKEN
from tests.conformance.fake_provider import COMPLETE, DISABLED, FakeProvider

_ALL = (PROMISES, STREAM_BROKEN, CONSISTENCY_BROKEN)
BROKEN = {name: [entry for source in _ALL for entry in source.get(name, [])] for name in {k for s in _ALL for k in s}}
ENTRIES = [(name, entry) for name, entries in BROKEN.items() for entry in entries]


def _unexpected(name: str, entry: Broken, failed: list[str]) -> list[str]:
    allowed = {name} | entry.also
    wildcard = "branching.*" in entry.also
    return [check for check in failed if check not in allowed and not (wildcard and check.startswith("branching."))]


@pytest.mark.parametrize(("name", "entry"), ENTRIES, ids=[f"{name}: {entry.why}" for name, entry in ENTRIES])
def test_a_broken_provider_fails_the_check_that_names_it(name: str, entry: Broken) -> None:
    provider = entry.build()
    report = run_provider_conformance(provider, **entry.options)
    assert report.check(name).failed, str(report)
    assert not _unexpected(name, entry, list(report.names("failed"))), str(report)
    assert not report.ok
    with pytest.raises(ConformanceFailure, match=re.escape(f"[FAILED] {name}")):
        report.raise_for_failures()
    if isinstance(provider, FakeProvider) and name not in ("destroy", "environment.id") and not entry.leaves_environments:
        assert provider.live == {}, "the kit left environments behind"


def test_every_check_of_the_kit_has_a_broken_provider() -> None:
    unproven = [name for name in PROVIDER_CHECKS if not BROKEN.get(name)]
    assert not unproven, f"claimed but not proven by any broken provider: {unproven}"
    assert set(BROKEN) <= set(PROVIDER_CHECKS), set(BROKEN) - set(PROVIDER_CHECKS)
    assert len(set(PROVIDER_CHECKS)) == len(PROVIDER_CHECKS)


@pytest.mark.parametrize(
    "provider",
    [InMemoryAgentEnvironmentProvider(), InMemoryAgentEnvironmentProvider(durable_branching=False), FakeProvider(COMPLETE), FakeProvider(DISABLED)],
    ids=["in-memory", "in-memory without branching", "fake declaring everything", "fake declaring nothing"],
)
def test_the_kit_records_only_the_checks_it_declares(provider: object) -> None:
    report = run_provider_conformance(provider)
    report.raise_for_failures()
    own = [name for name in report.names() if not name.startswith("branching.") or name in PROVIDER_CHECKS]
    assert sorted(own) == sorted(PROVIDER_CHECKS)
    nested = [name for name in report.names() if name not in PROVIDER_CHECKS]
    assert all(name.startswith("branching.") for name in nested)
