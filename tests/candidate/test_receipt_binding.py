"""A materialization context must launch and configure exactly the verified bundle."""

from __future__ import annotations

import copy
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agent_interface.candidate.digests import seal_evidence
from agent_interface.candidate.execution_plan import AgentCandidateExecutionPlanEvidence
from agent_interface.candidate.materialization import (
    CandidateMaterializationContext,
    materialization_receipt,
)
from agent_interface.candidate.verification_result import CandidateVerification
from agent_interface.core.errors import ContractError
from agent_interface.evaluator.verify.integrity import verify_candidate_bundle

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "candidate"


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory) -> CandidateVerification:
    clone = tmp_path_factory.mktemp("binding") / "demo"
    subprocess.run(["git", "clone", "-q", str(EXAMPLE / "repository.bundle"), str(clone)], check=True)
    return verify_candidate_bundle((EXAMPLE / "bundle.json").read_bytes(), repository=clone)


def _context() -> dict[str, Any]:
    context: dict[str, Any] = json.loads((EXAMPLE / "context.json").read_text())
    return context


def _codes(result: CandidateVerification, context: dict[str, Any]) -> set[str]:
    with pytest.raises(ContractError) as caught:
        materialization_receipt(result, CandidateMaterializationContext.parse_wire(context))
    return {issue.code for issue in caught.value.issues}


def test_the_example_context_binds(result: CandidateVerification) -> None:
    receipt = materialization_receipt(result, CandidateMaterializationContext.parse_wire(_context()))
    assert receipt.verify_digest().bundle_digest == result.bundle_digest


def _replan(context: dict[str, Any], edit: Any) -> dict[str, Any]:
    material = copy.deepcopy(context["executionPlan"]["material"])
    edit(material)
    plan = seal_evidence(AgentCandidateExecutionPlanEvidence, "agent-candidate-execution-plan", material)
    return {**context, "executionPlan": plan.to_wire()}


def test_another_launch_is_refused(result: CandidateVerification) -> None:
    def node(material: dict[str, Any]) -> None:
        material["launch"]["executable"] = "/usr/bin/node"
        material["launch"]["args"] = [{"kind": "public", "value": "other.js"}]

    assert "plan_launch_mismatch" in _codes(result, _replan(_context(), node))


def test_an_added_or_changed_variable_is_refused(result: CandidateVerification) -> None:
    def env(material: dict[str, Any]) -> None:
        material["launch"]["env"]["PATH"] = {"kind": "public", "value": "/opt/evil/bin"}
        material["launch"]["env"]["EXTRA"] = {"kind": "public", "value": "1"}

    assert {"plan_env_mismatch", "plan_env_added"} <= _codes(result, _replan(_context(), env))


def test_an_invented_profile_plan_and_activation_digest_are_refused(result: CandidateVerification) -> None:
    context = _context()
    context["profileActivation"]["digest"] = "sha256:" + "0" * 64
    assert "activation_digest_mismatch" in _codes(result, context)
    context = _context()
    plan = context["profileActivation"]["profilePlan"]
    plan["material"]["sourceProfileDigest"] = "sha256:" + "3" * 64
    assert "profile_plan_source_mismatch" in _codes(result, context) | {"digest_mismatch"}


def test_a_plan_whose_digest_is_stale_is_refused(result: CandidateVerification) -> None:
    context = _context()
    context["executionPlan"]["material"]["executionId"] = "another"
    assert "digest_mismatch" in _codes(result, context)
