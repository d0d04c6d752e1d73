"""Replay the recorded reference verdicts of the agent profile area.

Every line of ``tests/golden/profile_parity.jsonl`` was produced by the reference
TypeScript implementation (version 1.6.0); no Node is needed here. Schema lines hold a
document, the reference verdict and, when accepted, the canonical JSON of the
reference's parsed output. Function lines hold a call and the reference result in the
comparable form documented in ``docs/parity/profile.md``: an argument ``null`` stands
for ``undefined``; ``{"error": true}`` means the reference threw; a profile result is
its canonical JSON; a security result is ``{"ok", "issues": [[code, JSON Pointer]]}``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import agent_interface as p
from agent_interface.core.canonical import canonical_json
from agent_interface.core.errors import ContractError
from agent_interface.core.registry import wire_schemas
from agent_interface.profile import harness as h
from agent_interface.profile import security as ps

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "profile_parity.jsonl"
LINES = [
    json.loads(line) for line in GOLDEN.read_text(encoding="utf-8").split("\n") if line.strip()
]
SCHEMA_LINES = [line for line in LINES if "schema" in line]
FUNCTION_LINES = [line for line in LINES if "function" in line]


def _policy(raw: dict[str, Any] | None) -> ps.AgentProfileSecurityPolicy:
    if raw is None:
        return ps.DEFAULT_CLOUD_AGENT_PROFILE_SECURITY_POLICY
    hosts = raw.get("allowedMcpHosts")
    return ps.AgentProfileSecurityPolicy(
        allow_local_mcp=raw["allowLocalMcp"],
        allow_hooks=raw["allowHooks"],
        allowed_mcp_hosts=None if hosts is None else tuple(hosts),
        allow_connections=raw.get("allowConnections"),
    )


def _security(profile: Any, policy: dict[str, Any] | None) -> dict[str, Any]:
    issues = ps.validate_agent_profile_security(profile, _policy(policy))
    return {"ok": not issues, "issues": [[issue.code, issue.path] for issue in issues]}


def _efforts_for(harness: Any, model: dict[str, Any] | None) -> Any:
    capability = None if model is None else h.ModelReasoningCapability.parse_wire(model)
    return list(h.reasoning_efforts_for(harness, capability))


def _listed(function: Callable[..., Any]) -> Callable[..., Any]:
    def call(*args: Any) -> Any:
        result = function(*args)
        return None if result is None else list(result)

    return call


def _merge(base: Any, overlay: Any) -> Any:
    merged = p.merge_agent_profiles(base, overlay)
    return None if merged is None else canonical_json(merged.to_wire())


CALLS: dict[str, Callable[..., Any]] = {
    "agent_interface.profile.looks_like_credential": p.looks_like_credential,
    "agent_interface.profile.is_credential_bearing_profile_config_name": p.is_credential_bearing_profile_config_name,
    "agent_interface.profile_security.is_runtime_process_control_environment_name": ps.is_runtime_process_control_environment_name,
    "agent_interface.profile.canonical_agent_profile_digest": p.canonical_agent_profile_digest,
    "agent_interface.profile.canonical_agent_profile_json": p.canonical_agent_profile_json,
    "agent_interface.profile.snapshot_agent_profile": lambda value: canonical_json(
        p.snapshot_agent_profile(value).to_wire()
    ),
    "agent_interface.profile.merge_agent_profiles": _merge,
    "agent_interface.profile_security.validate_agent_profile_security": _security,
    "agent_interface.harness.model_provider": h.model_provider,
    "agent_interface.harness.harness_providers": _listed(h.harness_providers),
    "agent_interface.harness.harness_supports_model": h.harness_supports_model,
    "agent_interface.harness.preferred_harness_for_model": h.preferred_harness_for_model,
    "agent_interface.harness.snap_model_to_harness": h.snap_model_to_harness,
    "agent_interface.harness.snap_harness_to_model": h.snap_harness_to_model,
    "agent_interface.harness.harness_reasoning_efforts": _listed(h.harness_reasoning_efforts),
    "agent_interface.harness.reasoning_efforts_for": _efforts_for,
    "agent_interface.harness.native_reasoning_control": h.native_reasoning_control,
    "agent_interface.harness.harness_honors_model": h.harness_honors_model,
    "agent_interface.harness.harness_honors_effort": h.harness_honors_effort,
    "agent_interface.harness.harness_honors_selectors": h.harness_honors_selectors,
    "agent_interface.harness.harness_system_prompt_intents": lambda harness: (
        h.harness_system_prompt_intents(harness).to_wire()
    ),
}


def _parse(name: str, doc: Any) -> tuple[bool, str | None]:
    adapter = wire_schemas()[name]
    try:
        # A bare string document is sent as JSON text (a str argument is read as JSON).
        value = adapter.parse(json.dumps(doc) if isinstance(doc, str) else doc)
    except ContractError:
        return False, None
    return True, canonical_json(adapter.to_wire(value))


def test_golden_file_covers_every_area() -> None:
    schemas = {line["schema"] for line in SCHEMA_LINES}
    functions = {line["function"] for line in FUNCTION_LINES}
    assert {"AgentProfile", "AgentProfileMcpServer", "Capability", "HarnessType"} <= schemas
    assert functions == set(CALLS)
    assert len(LINES) > 5000


@pytest.mark.parametrize("schema", sorted({line["schema"] for line in SCHEMA_LINES}))
def test_schema_lines_agree_with_reference(schema: str) -> None:
    disagreements = []
    for line in SCHEMA_LINES:
        if line["schema"] != schema:
            continue
        accepted, canonical = _parse(schema, line["doc"])
        if accepted != line["accepted"] or (accepted and canonical != line["canonical"]):
            disagreements.append(line)
    assert disagreements == [], f"{len(disagreements)} disagreements, first: {disagreements[0]}"


@pytest.mark.parametrize("function", sorted(CALLS))
def test_function_lines_agree_with_reference(function: str) -> None:
    call = CALLS[function]
    disagreements = []
    for line in FUNCTION_LINES:
        if line["function"] != function:
            continue
        expected = line["result"]
        try:
            actual = call(*line["args"])
        except ContractError:
            actual = {"error": True}
        if actual != expected:
            disagreements.append((line, actual))
    assert disagreements == [], f"{len(disagreements)} disagreements, first: {disagreements[0]}"
