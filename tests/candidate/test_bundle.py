"""The candidate bundle, its structural rules and its digest (spec: "AgentCandidateBundle is
the portable output of an improvement run ...")."""

from __future__ import annotations

from typing import Any

import pytest

from agent_interface.candidate.bundle import (
    AgentCandidateBundle,
    agent_candidate_bundle_digest,
    define_agent_candidate_bundle,
    seal_agent_candidate_bundle,
)
from agent_interface.core.canonical import canonical_digest
from agent_interface.core.errors import ContractError
from tests.candidate.fixtures import bundle


def codes(data: Any) -> list[tuple[str, str]]:
    with pytest.raises(ContractError) as caught:
        AgentCandidateBundle.parse_wire(data)
    return [(issue.path, issue.code) for issue in caught.value.issues]


def control(**code: Any) -> dict[str, Any]:
    value = bundle()
    value["code"] = {"kind": "disabled", **code}
    value["execution"]["cwd"] = {"workspace": "task", "path": "."}
    value["execution"]["launch"] = {"kind": "container-command", "executable": "/usr/local/bin/agent"}
    del value["execution"]["workspace"]
    return value


def test_reference_fixture_and_control_are_accepted() -> None:
    assert define_agent_candidate_bundle(bundle()).kind == "agent-candidate-bundle"
    assert AgentCandidateBundle.parse_wire(control())
    assert AgentCandidateBundle.parse_wire(control(reason="control"))
    assert AgentCandidateBundle.parse_wire(control(reason="not-applicable"))


def test_disabled_code_runs_a_container_command_in_the_task_workspace() -> None:
    value = control()
    value["execution"]["cwd"]["workspace"] = "candidate"
    assert codes(value) == [("/execution/cwd/workspace", "disabled_code_workspace")]
    value = control()
    value["execution"]["launch"] = bundle()["execution"]["launch"]
    assert ("/execution/launch", "disabled_code_launch") in codes(value)
    value = control()
    value["execution"]["workspace"] = bundle()["execution"]["workspace"]
    assert codes(value) == [("/execution/workspace", "disabled_code_candidate_workspace")]


def test_active_code_launches_its_pinned_entrypoint() -> None:
    value = bundle()
    value["execution"]["launch"] = {"kind": "container-command", "executable": "/usr/bin/agent"}
    assert codes(value) == [("/execution/launch", "active_code_launch")]
    value = bundle()
    del value["execution"]["workspace"]
    assert codes(value) == [("/execution/workspace", "active_code_workspace_missing")]
    value = bundle()
    value["execution"]["workspace"]["material"]["files"] = []
    assert codes(value) == [("/execution/workspace/material/files", "active_code_workspace_empty")]
    value = bundle()
    value["execution"]["launch"]["entrypoint"] = "dist/other.js"
    assert codes(value) == [("/execution/launch/entrypoint", "entrypoint_not_in_workspace")]
    value = bundle()
    del value["execution"]["launch"]["interpreter"]
    assert AgentCandidateBundle.parse_wire(value)
    value["execution"]["workspace"]["material"]["files"][0]["mode"] = 0o644
    assert codes(value) == [("/execution/launch/entrypoint", "entrypoint_not_executable")]


def test_profile_harness_is_the_execution_harness() -> None:
    value = bundle()
    value["profile"]["harness"] = "claude-code"
    assert codes(value) == [("/execution/harness", "harness_mismatch")]


def test_whole_bundle_is_rfc8785_json() -> None:
    value = bundle()
    value["execution"]["harnessVersion"] = "\ud800"
    assert codes(value) == [("", "non_canonical_json")]


def test_digest_algorithm_and_strictness() -> None:
    assert codes({**bundle(), "digestAlgorithm": "sha256"})
    assert codes({**bundle(), "extensions": {}}) == [("/extensions", "extra_forbidden")]
    without = bundle()
    del without["digest"]
    assert codes(without) == [("/digest", "missing")]


def test_seal_digests_everything_but_the_digest() -> None:
    material = bundle()
    del material["digest"]
    del material["digestAlgorithm"]
    sealed = seal_agent_candidate_bundle(material)
    assert sealed.digest_algorithm == "rfc8785-sha256"
    wire = sealed.to_wire()
    assert sealed.digest == canonical_digest({k: v for k, v in wire.items() if k != "digest"})
    assert agent_candidate_bundle_digest(sealed) == sealed.digest
    assert AgentCandidateBundle.seal(sealed) == sealed
    # A producer helper never adds ``reason`` to disabled code on its own.
    plain = control()
    assert seal_agent_candidate_bundle(plain).to_wire()["code"] == {"kind": "disabled"}


def test_provenance_is_part_of_the_identity() -> None:
    base = bundle()
    resource = base["profile"]["resources"]["files"][0]["resource"]
    resource["source"] = {
        "kind": "public-agent-resource",
        "sourceIdentity": "github:example/agents/policy.json",
        "sourceDigest": resource["sha256"],
        "sourceRevision": 1,
        "license": {"kind": "spdx", "expression": "Apache-2.0"},
        "attribution": ["Copyright Example"],
    }
    with_source = seal_agent_candidate_bundle(base).digest
    del resource["source"]["license"]
    without_licence = seal_agent_candidate_bundle(base).digest
    del resource["source"]
    without_source = seal_agent_candidate_bundle(base).digest
    assert len({with_source, without_licence, without_source}) == 3


def test_seal_normalizes_before_digesting() -> None:
    base = bundle()
    base["execution"]["env"]["__proto__"] = {"kind": "public", "value": "dropped"}
    sealed = seal_agent_candidate_bundle(base)
    assert "__proto__" not in sealed.to_wire()["execution"]["env"]
    assert sealed.digest == seal_agent_candidate_bundle(bundle()).digest
