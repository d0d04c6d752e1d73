"""Per-task execution plans (``agent-candidate-execution-plan-schema.ts`` and its tests)."""

from __future__ import annotations

from typing import Any

import pytest

from agent_interface.candidate.execution_plan import (
    AgentCandidateEffectiveMemory,
    AgentCandidateExecutionPlanEvidence,
    AgentCandidateExecutionPlanMaterial,
    AgentCandidateModelAccessNetwork,
    execution_plan_digest,
    is_canonical_absolute_path,
    is_exact_public_gateway_domain,
)
from agent_interface.core.canonical import canonical_digest
from agent_interface.core.errors import ContractError
from agent_interface.core.model import wire_adapter
from tests.candidate.fixtures import embedded, sha
from tests.candidate.plan_fixtures import disabled_plan, plan, workspace

Plan = AgentCandidateExecutionPlanMaterial


def issues(data: Any, tp: Any = Plan) -> list[tuple[str, str]]:
    with pytest.raises(ContractError) as caught:
        wire_adapter(tp).parse(data)
    return [(issue.path, issue.code) for issue in caught.value.issues]


def test_reference_plan_round_trips() -> None:
    parsed = Plan.parse_wire(plan())
    assert parsed.to_wire() == plan()
    assert Plan.parse_wire(disabled_plan()).to_wire() == disabled_plan()


def test_plan_is_strict_and_digest_free() -> None:
    assert issues({**plan(), "schemaVersion": 2}) == [("/schemaVersion", "extra_forbidden")]
    assert issues({**plan(), "digest": sha("f")}) == [("/digest", "extra_forbidden")]
    for field in ("task", "grader"):
        assert issues({**plan(), field: {}}) == [(f"/{field}", "extra_forbidden")]
    assert ("/limits/timeoutMs", "missing") in issues({**plan(), "limits": {}})
    assert issues({**plan(), "runCell": {**plan()["runCell"], "maxAttempts": 2}}) == [
        ("/runCell/maxAttempts", "extra_forbidden")
    ]
    assert issues({**plan(), "runCell": {**plan()["runCell"], "attempt": 0}}) == [
        ("/runCell/attempt", "greater_than_equal")
    ]


@pytest.mark.parametrize(
    ("task_root", "candidate_root"), [("/work", "/work/candidate"), ("/a/b", "/a"), ("/x", "/x")]
)
def test_workspace_roots_must_be_disjoint(task_root: str, candidate_root: str) -> None:
    value = {**plan(), "workspaces": {"taskRoot": task_root, "candidateRoot": candidate_root}}
    assert ("/workspaces", "workspace_roots_overlap") in issues(value)


def test_sibling_roots_with_a_shared_prefix_are_disjoint() -> None:
    assert Plan.parse_wire({**plan(), "workspaces": {"taskRoot": "/work", "candidateRoot": "/workx"}})


@pytest.mark.parametrize("root", ["/work\\task", "/work/ta\nsk", "/work/../task", "/", "work", "/a//b", "/a/.git"])
def test_roots_must_be_canonical_absolute_paths(root: str) -> None:
    assert not is_canonical_absolute_path(root)
    value = {**plan(), "workspaces": {**plan()["workspaces"], "taskRoot": root}}
    assert issues(value) == [("/workspaces/taskRoot", "non_canonical_root")]


def test_task_file_is_fixed_and_outside_workspaces() -> None:
    value = {**plan(), "workspaces": {**plan()["workspaces"], "taskRoot": "/tangle/input"}}
    assert issues(value) == [("/launch/env/TANGLE_CANDIDATE_TASK_PATH", "task_path_in_workspace")]
    other = plan()
    other["launch"]["env"]["TANGLE_CANDIDATE_TASK_PATH"] = {"kind": "public", "value": "/tmp/task.txt"}
    assert issues(other) == [("/launch/env/TANGLE_CANDIDATE_TASK_PATH", "task_path_fixed")]


def test_relative_executable_needs_a_public_path() -> None:
    value = plan()
    value["launch"]["env"] = {}
    # The rule names /launch/env/PATH; the core's pointer mapping stops at the last key
    # present in the document.
    assert issues(value) == [("/launch/env", "path_required")]
    value["launch"]["env"] = {"PATH": {"kind": "public", "value": " \u00a0\ufeff"}}
    assert issues(value) == [("/launch/env/PATH", "path_required")]
    value["launch"]["executable"] = "/usr/bin/node"
    assert Plan.parse_wire(value)


@pytest.mark.parametrize("executable", ["/bin/sh", "bash", "PWSH", "./node", "node ", "/a/../b"])
def test_launch_is_shell_free(executable: str) -> None:
    value = plan()
    value["launch"]["executable"] = executable
    assert issues(value) == [("/launch/executable", "unsafe_executable")]


def test_launch_config_is_public_only() -> None:
    value = plan()
    value["launch"]["env"]["OPENAI_API_KEY"] = {"kind": "public", "value": "x"}
    assert ("/launch/env/OPENAI_API_KEY", "credential_config_name") in issues(value)
    value = plan()
    value["launch"]["args"] = [{"kind": "public", "value": "sk-abcdefghijklmnopqrs"}]
    (problem,) = issues(value)
    assert problem == ("/launch/args/0/value", "candidate_config_credential")


def test_model_access_is_required_and_evaluator_mediated() -> None:
    value = plan()
    del value["model"]["access"]
    assert issues(value) == [("/model/access", "missing")]
    value = plan()
    value["model"]["access"]["kind"] = "candidate-key"
    assert issues(value) == [("/model/access/kind", "literal_error")]


def test_every_route_requests_the_resolved_model() -> None:
    value = plan()
    value["model"]["routes"][1]["requested"] = "openai/gpt-5-mini"
    assert issues(value) == [("/model/routes/1/requested", "route_model_mismatch")]
    value["model"]["routes"] = [{"kind": "subagent", "name": "reviewer", "requested": "openai/gpt-5.4"}]
    assert issues(value) == [("/model/routes", "primary_route_required")]
    value["model"]["routes"] = [{"kind": "primary"}, {"kind": "primary"}]
    assert issues(value) == [("/model/routes/1", "duplicate_value")]
    value["model"]["routes"] = [
        {"kind": "primary"},
        {"kind": "mode", "name": "a", "requested": "openai/gpt-5.4"},
        {"kind": "subagent", "name": "a", "requested": "openai/gpt-5.4"},
    ]
    assert Plan.parse_wire(value)


def test_resolved_model_is_complete() -> None:
    for field in ("snapshot", "reasoningEffort"):
        value = plan()
        del value["model"]["resolved"][field]
        assert issues(value) == [(f"/model/resolved/{field}", "missing")]


@pytest.mark.parametrize("domain", ["router.tangle.tools", "a.b1", "xn--bcher-kva.example", "a" * 63 + ".com"])
def test_exact_public_gateway_domains_accepted(domain: str) -> None:
    assert is_exact_public_gateway_domain(domain)


@pytest.mark.parametrize(
    "domain",
    ["*.tangle.tools", ".tangle.tools", "https://router.tangle.tools", "ROUTER.TANGLE.TOOLS",
     "localhost", "10.0.0.1", "a.localhost", "a.1", "a.b.", "a:80.com", "-a.com", "a_b.com",
     "a" * 64 + ".com", "metadata.google.internal", "com"],
)
def test_gateway_domains_must_be_exact_public_names(domain: str) -> None:
    assert not is_exact_public_gateway_domain(domain)
    network = {"mode": "gateway-only", "domains": [domain]}
    assert issues(network, AgentCandidateModelAccessNetwork) == [("/domains/0", "gateway_domain")]


def test_gateway_domains_are_sorted_unique_and_non_empty() -> None:
    value = plan()
    value["model"]["access"]["network"]["domains"] = ["z.example.com", "a.example.com"]
    assert issues(value) == [("/model/access/network/domains/1", "unsorted")]
    value["model"]["access"]["network"]["domains"] = ["a.example.com", "a.example.com"]
    assert ("/model/access/network/domains/1", "duplicate_value") in issues(value)
    assert issues({"mode": "gateway-only", "domains": []}, AgentCandidateModelAccessNetwork) == [
        ("/domains", "too_short")
    ]


def test_mount_paths_are_canonical_sorted_and_unique() -> None:
    value = plan()
    value["profile"]["mountPaths"] = ["AGENTS.md", ".codex/config.toml"]
    assert issues(value) == [("/profile/mountPaths/1", "unsorted")]
    # UTF-16 order: U+FF01 sorts after the surrogate pair of U+1F600.
    value["profile"]["mountPaths"] = ["\U0001f600", "\uff01"]
    assert Plan.parse_wire(value)
    value["profile"]["mountPaths"] = ["../escape"]
    assert issues(value) == [("/profile/mountPaths/0", "unsafe_relative_path")]


def test_active_code_needs_candidate_workspace_and_root() -> None:
    value = plan()
    del value["candidateWorkspace"]
    assert issues(value) == [("/candidateWorkspace", "candidate_workspace_required")]
    value = plan()
    value["workspaces"] = {"taskRoot": "/work/task"}
    assert issues(value) == [("/workspaces/candidateRoot", "candidate_root_required")]
    value = plan()
    value["candidateWorkspace"]["material"]["files"] = []
    assert issues(value) == [("/candidateWorkspace/material/files", "empty_candidate_workspace")]
    control = disabled_plan()
    control["candidateWorkspace"] = workspace("dist/agent.js", "5")
    assert issues(control) == [("/candidateWorkspace", "candidate_workspace_required")]


def test_candidate_targets_need_a_candidate_root() -> None:
    value = disabled_plan()
    value["profile"]["targetWorkspace"] = "candidate"
    assert issues(value) == [("/profile/targetWorkspace", "candidate_root_required")]
    value = disabled_plan()
    value["launch"]["cwd"] = {"workspace": "candidate", "path": "."}
    assert issues(value) == [("/launch/cwd/workspace", "candidate_root_required")]


def test_memory_reset_needs_evidence() -> None:
    isolated = {
        "mode": "isolated",
        "scope": "task",
        "effectiveNamespace": "execution-1-memory",
        "reset": {"kind": "fresh", "evidence": embedded("c"), "emptyStateDigest": sha("d")},
        "beforeState": workspace("memory.json", "e"),
    }
    assert wire_adapter(AgentCandidateEffectiveMemory).parse(isolated)
    assert Plan.parse_wire({**plan(), "memory": isolated})
    empty = {**isolated, "reset": {**isolated["reset"], "evidence": embedded("c", "", 0)}}
    assert issues(empty, AgentCandidateEffectiveMemory) == [("/reset/evidence/byteLength", "empty_reset_evidence")]
    partial = {"mode": "isolated", "scope": "task", "effectiveNamespace": "execution-1-memory"}
    assert ("/memory/reset", "missing") in issues({**plan(), "memory": partial})


def test_lone_surrogates_are_refused_in_the_plan_but_not_alone() -> None:
    value = plan()
    value["executionId"] = "execution-\ud800"
    assert issues(value) == [("", "non_canonical_json")]
    value = plan()
    value["model"]["resolved"]["snapshot"] = "\udc00"
    assert issues(value) == [("", "non_canonical_json")]


def test_limits_carry_the_exact_aggregate_token_field() -> None:
    assert Plan.parse_wire(plan()).limits.max_total_tokens == 120_000
    for bad in (-1, 1.5, 2**53):
        value = plan()
        value["limits"]["maxTotalTokens"] = bad
        assert len(issues(value)) == 1


def test_evidence_binds_artifact_to_digest_and_seals() -> None:
    material = Plan.parse_wire(plan())
    evidence = AgentCandidateExecutionPlanEvidence.seal(material)
    assert evidence.digest == execution_plan_digest(plan()) == canonical_digest(plan())
    assert evidence.verify_digest() is evidence
    wire = evidence.to_wire()
    assert issues({**wire, "digest": sha("1")}, AgentCandidateExecutionPlanEvidence) == [
        ("/artifact/sha256", "evidence_digest_mismatch")
    ]
    # The schema is structural, as in the reference: a matching but wrong digest parses...
    forged = {**wire, "digest": sha("1"), "artifact": {**wire["artifact"], "sha256": sha("1")}}
    parsed = AgentCandidateExecutionPlanEvidence.parse_wire(forged)
    # ...and verify_digest refuses it.
    with pytest.raises(ContractError) as caught:
        parsed.verify_digest()
    assert caught.value.issues[0].code == "digest_mismatch"
