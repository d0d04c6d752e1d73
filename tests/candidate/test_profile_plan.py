"""Sealed profile plans and exact profile activations."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from agent_interface.candidate.profile_plan import (
    AgentCandidateProfileActivation,
    AgentCandidateProfilePlanEvidence,
    AgentCandidateProfilePlanMaterial,
)
from agent_interface.core.canonical import canonical_json
from agent_interface.core.errors import ContractError
from agent_interface.core.model import wire_adapter
from agent_interface.profile.activation import AgentProfileActivationEvidence
from tests.candidate.fixtures import embedded, sha
from tests.candidate.plan_fixtures import activation, profile_plan

Material = AgentCandidateProfilePlanMaterial
Activation = AgentCandidateProfileActivation
PROMPT = {"kind": "public", "value": "Use the repository rules."}


def issues(data: Any, tp: Any = Material) -> list[tuple[str, str]]:
    with pytest.raises(ContractError) as caught:
        wire_adapter(tp).parse(data)
    return [(issue.path, issue.code) for issue in caught.value.issues]


def base(**extra: Any) -> dict[str, Any]:
    return {
        "sourceProfileDigest": sha("0"),
        "harness": "claude-code",
        "files": [],
        "env": {},
        "flags": [],
        "unsupported": [],
        **extra,
    }


def plan_file(path: str, content: str = "x", mode: int = 0o644) -> dict[str, Any]:
    return {"relPath": path, "mode": mode, "contentSha256": "sha256:" + hashlib.sha256(content.encode()).hexdigest()}


def test_sealed_plans_cannot_omit_profile_behavior() -> None:
    assert Material.parse_wire(base())
    omitted = base(unsupported=[{"dimension": "hooks", "reason": "backend does not implement hooks"}])
    assert issues(omitted) == [("/unsupported", "too_long")]


def test_prompt_replacement_and_addition_are_distinct_typed_identities() -> None:
    replaced, added = base(systemPrompt=PROMPT), base(appendSystemPrompt=PROMPT)
    both = base(systemPrompt=PROMPT, appendSystemPrompt=PROMPT)
    for value in (replaced, added, both):
        assert Material.parse_wire(value).to_wire() == value
    assert canonical_json(added) != canonical_json(replaced)
    assert issues(base(systemPrompt="Use the repository rules.")) == [("/systemPrompt", "model_type")]
    assert issues(base(appendSystemPrompt="Use the repository rules.")) == [("/appendSystemPrompt", "model_type")]


def test_plan_config_is_public_only() -> None:
    assert issues(base(env={"GITHUB_TOKEN": {"kind": "public", "value": "x"}})) == [
        ("/env/GITHUB_TOKEN", "credential_config_name")
    ]
    assert issues(base(flags=[{"kind": "secret", "value": "x"}])) == [("/flags/0/kind", "literal_error")]


def test_plan_files_are_canonical_sorted_and_unique() -> None:
    assert Material.parse_wire(base(files=[plan_file(".codex/a.md"), plan_file("AGENTS.md")]))
    assert issues(base(files=[plan_file("b"), plan_file("a")])) == [("/files/1/relPath", "profile_plan_order")]
    assert issues(base(files=[plan_file("a"), plan_file("a")])) == [
        ("/files/1", "duplicate_value"), ("/files/1/relPath", "profile_plan_order")
    ]
    assert issues(base(files=[plan_file("../a")])) == [("/files/0/relPath", "unsafe_relative_path")]
    assert issues(base(files=[plan_file(".git/hooks/pre-commit")])) == [("/files/0/relPath", "unsafe_relative_path")]
    assert issues(base(files=[{**plan_file("a"), "mode": 0o1000}])) == [("/files/0/mode", "less_than_equal")]


def test_plan_evidence_binds_artifact_and_seals() -> None:
    assert AgentCandidateProfilePlanEvidence.parse_wire(profile_plan()).to_wire() == profile_plan()
    value = profile_plan()
    value["artifact"] = embedded("2")
    assert issues(value, AgentCandidateProfilePlanEvidence) == [("/artifact/sha256", "evidence_digest_mismatch")]
    sealed = AgentCandidateProfilePlanEvidence.seal(base())
    assert sealed.verify_digest() is sealed
    with pytest.raises(ContractError):
        AgentCandidateProfilePlanEvidence.parse_wire(profile_plan()).verify_digest()


def test_activation_matches_its_plan_file_by_file() -> None:
    parsed = Activation.parse_wire(activation())
    assert isinstance(parsed, AgentProfileActivationEvidence)
    assert parsed.to_wire() == activation()
    for change in ({"path": ".codex/different.md"}, {"mode": 0o755}, {"content": "different"}):
        value = activation()
        value["files"] = [{**value["files"][0], **change}]
        assert issues(value, Activation) == [("/files/0", "activation_file_mismatch")]


def test_activation_contains_every_planned_file_in_order() -> None:
    value = activation()
    value["files"] = []
    # The missing file is named at /files/0; pointers stop at the last key present.
    assert issues(value, Activation) == [("/files", "activation_file_count"), ("/files", "activation_file_mismatch")]
    value = activation()
    value["files"].append({"path": "extra.md", "mode": 0o644, "content": ""})
    assert issues(value, Activation) == [("/files", "activation_file_count")]
    two = activation()
    two["profilePlan"]["material"]["files"].append(plan_file("z.md", "z"))
    two["files"].append({"path": "z.md", "mode": 0o644, "content": "z"})
    assert Activation.parse_wire(two)
    two["files"].reverse()
    assert issues(two, Activation) == [("/files/0", "activation_file_mismatch"), ("/files/1", "activation_file_mismatch")]


def test_activation_is_strict_and_kinded() -> None:
    assert issues({**activation(), "kind": "other"}, Activation) == [("/kind", "literal_error")]
    assert issues({**activation(), "extra": 1}, Activation) == [("/extra", "extra_forbidden")]
    value = activation()
    value["files"][0]["content"] = "\ud800"
    assert issues(value, Activation) == [("/files/0/content", "ill_formed_unicode")]
