"""The provider conformance kit: the in-memory provider passes; broken providers fail with
a readable report."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import pytest

from agent_interface.conformance.provider import (
    ConformanceFailure,
    ProviderConformanceReport,
    provider_conformance,
    run_provider_conformance,
)
from agent_interface.testing.provider import (
    InMemoryAgentEnvironmentProvider,
    in_memory_capabilities,
)


def test_in_memory_provider_passes() -> None:
    report = run_provider_conformance(InMemoryAgentEnvironmentProvider())
    report.raise_for_failures()
    names = {check.name for check in report.checks}
    assert {
        "capabilities.valid",
        "surface.provider",
        "surface.environment",
        "metadata.detached",
        "metadata.immutable",
        "idempotency.replay",
        "idempotency.conflict",
        "idempotency.concurrent",
        "refusal.system_prompt_replace",
        "refusal.cwd_base_host",
        "refusal.turn_profile",
    } <= names
    assert any(name.startswith("branching.") and name != "branching.durable" for name in names)
    assert report.check("branching.durable_flags_declared_together").status == "passed"


def test_in_memory_provider_without_durable_branching_passes() -> None:
    report = run_provider_conformance(InMemoryAgentEnvironmentProvider(durable_branching=False))
    report.raise_for_failures()
    assert report.check("branching.durable").status == "skipped"


def test_async_entry_point_inside_a_loop() -> None:
    async def scenario() -> ProviderConformanceReport:
        with pytest.raises(RuntimeError):
            run_provider_conformance(InMemoryAgentEnvironmentProvider())
        return await provider_conformance(InMemoryAgentEnvironmentProvider(durable_branching=False))

    assert asyncio.run(scenario()).passed


class BrokenEnvironment:
    def __init__(self, env_id: str, metadata: dict[str, Any]) -> None:
        self.id = env_id
        self.provider = "broken"
        self.creation = "created"
        self.metadata = metadata  # not detached, not immutable

    async def status(self) -> str:
        return "running"

    def stream(self, input: Any) -> Any:
        async def events() -> Any:
            yield {"type": "result", "data": {}}  # dispatches even with a profile

        return events()

    async def exec(self, command: str) -> Any:  # exposed although workspace.exec is false
        return None

    async def read(self, path: str) -> str:
        return ""

    async def write(self, path: str, content: str) -> None:
        return None


class BrokenProvider:
    """Ignores idempotency keys, keeps caller metadata by reference, accepts everything."""

    name = "broken"

    def __init__(self) -> None:
        self.ids = itertools.count(1)
        self.environments: list[BrokenEnvironment] = []

    async def capabilities(self) -> Any:
        caps = in_memory_capabilities(durable_branching=False).to_wire()
        caps["workspace"]["exec"] = False
        caps["placement"] = False
        return caps

    async def create(self, input: Any) -> BrokenEnvironment:
        environment = BrokenEnvironment(f"b-{next(self.ids)}", input.get("metadata"))
        self.environments.append(environment)
        return environment

    async def list(self) -> list[Any]:
        return list(self.environments)


def test_broken_provider_fails_with_a_readable_report() -> None:
    report = run_provider_conformance(BrokenProvider())
    assert not report.passed
    failed = {check.name for check in report.failures}
    assert {
        "surface.environment",
        "metadata.detached",
        "idempotency.replay",
        "idempotency.conflict",
        "idempotency.concurrent",
        "refusal.system_prompt_replace",
        "refusal.cwd_base_host",
        "refusal.turn_profile",
    } <= failed
    text = str(report)
    assert "provider conformance for 'broken'" in text
    assert "[FAILED] surface.environment: exec: environment exposes exec while /workspace/exec is not declared" in text
    assert "[FAILED] idempotency.conflict: same key with a changed create field was accepted" in text
    with pytest.raises(ConformanceFailure) as caught:
        report.raise_for_failures()
    assert "idempotency.replay" in str(caught.value)


def test_invalid_capability_document_stops_the_run() -> None:
    class Invalid(BrokenProvider):
        async def capabilities(self) -> Any:
            caps = await super().capabilities()
            caps["branching"] = {"checkpoint": True, "fork": True, "retrySafe": True}
            return caps

    report = run_provider_conformance(Invalid())
    assert [check.name for check in report.checks] == ["capabilities.valid"]
    assert "capabilities_durable_branching" in report.checks[0].message


def test_provider_that_refuses_after_an_effect_is_caught() -> None:
    class LateRefusal(BrokenProvider):
        records: dict[str, Any]

        def __init__(self) -> None:
            super().__init__()
            self.records = {}

        async def create(self, input: Any) -> BrokenEnvironment:
            environment = await super().create(input)  # the effect happens first
            if "workspace" in input or "prompt" in (input.get("profile") or {}):
                raise ValueError("unsupported")
            return environment

    report = run_provider_conformance(LateRefusal())
    assert report.check("refusal.system_prompt_replace").status == "failed"
    assert "only after an environment was created" in report.check("refusal.system_prompt_replace").message
