"""Minting the materialization receipt from a verified bundle plus the evaluator's facts."""

from __future__ import annotations

import base64
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agent_interface.candidate.materialization import (
    CandidateMaterializationContext,
    materialization_receipt,
)
from agent_interface.candidate.receipts import AgentCandidateMaterializationReceipt
from agent_interface.candidate.verification_result import (
    CandidateVerification,
    CandidateVerifiedContainer,
)
from agent_interface.cli.main import main
from agent_interface.core.canonical import canonical_bytes, canonical_digest, sha256_bytes
from agent_interface.core.errors import ContractError
from agent_interface.evaluator.verify.integrity import verify_candidate_bundle
from tests.candidate.reference_documents import accepted
from tests.evaluator.git_fixtures import ENV

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "candidate"


def _reference() -> dict[str, Any]:
    return accepted("AgentCandidateMaterializationReceipt", lambda v: v["codeKind"] == "git-patch")


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory) -> CandidateVerification:
    clone = tmp_path_factory.mktemp("receipt") / "demo"
    subprocess.run(
        ["git", "clone", "-q", str(EXAMPLE / "repository.bundle"), str(clone)], check=True, env=ENV
    )
    return verify_candidate_bundle((EXAMPLE / "bundle.json").read_bytes(), repository=clone)


def _reseal(evidence: dict[str, Any]) -> None:
    data = canonical_bytes(evidence["material"])
    evidence["artifact"] = {
        "encoding": "base64",
        "content": base64.b64encode(data).decode("ascii"),
        "sha256": sha256_bytes(data),
        "byteLength": len(data),
    }
    evidence["digest"] = sha256_bytes(data)


def context_for(result: CandidateVerification) -> dict[str, Any]:
    """The example context: built by the public builders for ``examples/candidate/bundle.json``."""
    assert result.bundle_digest == json.loads((EXAMPLE / "bundle.json").read_text())["digest"]
    context: dict[str, Any] = json.loads((EXAMPLE / "context.json").read_text())
    return context


def test_receipt_for_a_verified_bundle_is_valid_and_sealed(result: CandidateVerification) -> None:
    context = CandidateMaterializationContext.parse_wire(context_for(result))
    receipt = materialization_receipt(result, context)
    wire = receipt.to_wire()
    assert wire["bundleDigest"] == result.bundle_digest
    assert wire["materializedTree"] == result.materialized_tree
    assert wire["entrypoint"]["path"] == "src/agent.py"
    assert wire["container"]["source"] == "evaluator-task-container"
    material = {key: value for key, value in wire.items() if key != "digest"}
    assert wire["digest"] == canonical_digest(material)
    assert AgentCandidateMaterializationReceipt.parse_wire(json.dumps(wire)).verify_digest()


def test_receipt_fields_come_from_the_result_and_the_context() -> None:
    reference = _reference()
    simulated = CandidateVerification.parse_wire(
        {
            "bundleDigest": reference["bundleDigest"],
            "codeKind": reference["codeKind"],
            "materializedTree": reference["materializedTree"],
            "repositoryChecked": True,
            "harness": reference["harness"],
            "harnessVersion": reference["harnessVersion"],
            "container": {"source": "evaluator-task-container"},
            "candidateWorkspace": reference["candidateWorkspace"],
            "entrypoint": reference["entrypoint"],
            "knowledgeManifestDigest": reference["knowledgeManifestDigest"],
            "checks": [],
            "artifacts": [],
        }
    )
    container = reference["container"]
    context = CandidateMaterializationContext.parse_wire(
        {
            "benchmark": reference["benchmark"],
            "profileActivation": reference["profileActivation"],
            "executionPlan": reference["executionPlan"],
            "container": {k: container[k] for k in ("image", "indexDigest", "manifestDigest", "platform")},
            "resolvedModel": reference["resolvedModel"],
        }
    )
    # The reference receipt's activation digest and profile plan are not derived from a
    # verified bundle here, so the binding refuses them instead of minting.
    with pytest.raises(ContractError) as caught:
        materialization_receipt(simulated, context)
    codes = {issue.code for issue in caught.value.issues}
    assert {"profile_plan_source_mismatch", "verification_lacks_launch"} <= codes


def test_a_plan_for_another_bundle_is_refused(result: CandidateVerification) -> None:
    context = CandidateMaterializationContext.parse_wire(
        {**context_for(result), "executionPlan": _reference()["executionPlan"]}
    )
    with pytest.raises(ContractError) as caught:
        materialization_receipt(result, context)
    assert any(i.path.startswith("/executionPlan") for i in caught.value.issues)


def test_an_unchecked_no_op_tree_gets_no_receipt(result: CandidateVerification) -> None:
    unchecked = result.model_copy(update={"code_kind": "no-op", "repository_checked": False})
    context = CandidateMaterializationContext.parse_wire(context_for(result))
    with pytest.raises(ContractError) as caught:
        materialization_receipt(unchecked, context)
    assert caught.value.issues[0].code == "code_not_materialized"


def test_container_selection_must_match_the_pinned_one(result: CandidateVerification) -> None:
    pinned = result.model_copy(
        update={
            "container": CandidateVerifiedContainer(
                source="pinned-container", image="python:3.12", index_digest="sha256:" + "5" * 64
            )
        }
    )
    context = CandidateMaterializationContext.parse_wire(context_for(result))
    with pytest.raises(ContractError) as caught:
        materialization_receipt(pinned, context)
    assert (caught.value.issues[0].path, caught.value.issues[0].code) == (
        "/container/image", "container_mismatch"
    )


def test_an_evaluator_container_needs_its_image(result: CandidateVerification) -> None:
    raw = context_for(result)
    raw["container"].pop("image")
    raw["container"].pop("indexDigest")
    with pytest.raises(ContractError) as caught:
        materialization_receipt(result, CandidateMaterializationContext.parse_wire(raw))
    assert caught.value.issues[0].code == "container_selection_required"


def test_cli_mints_the_receipt(
    tmp_path: Path, result: CandidateVerification, capsys: pytest.CaptureFixture[str]
) -> None:
    result_path = tmp_path / "result.json"
    result_path.write_text(json.dumps(result.to_wire()), encoding="utf-8")
    context_path = tmp_path / "context.json"
    context_path.write_text(json.dumps(context_for(result)), encoding="utf-8")
    assert main(["candidate", "receipt", str(result_path), "--context", str(context_path)]) == 0
    receipt = json.loads(capsys.readouterr().out)
    assert receipt["kind"] == "agent-candidate-materialization"
    AgentCandidateMaterializationReceipt.parse_wire(receipt).verify_digest()

    wrong = context_for(result)
    wrong["executionPlan"] = _reference()["executionPlan"]
    context_path.write_text(json.dumps(wrong), encoding="utf-8")
    assert main(["candidate", "receipt", str(result_path), "--context", str(context_path)]) == 1
    assert "/executionPlan" in capsys.readouterr().err
    missing = str(tmp_path / "absent.json")
    assert main(["candidate", "receipt", str(result_path), "--context", missing]) == 2
