"""Run cells and the digest helpers they share with tasks, suites and evidence."""

from __future__ import annotations

from typing import Any

import pytest

from agent_interface.candidate.digests import (
    is_digestible,
    seal_top_level_digest,
    top_level_digest,
    verify_evidence_digest,
    verify_top_level_digest,
)
from agent_interface.candidate.execution_plan import AgentCandidateExecutionPlanEvidence
from agent_interface.candidate.run_cell import (
    AgentCandidateBenchmarkCellRef,
    AgentCandidateRunCell,
    AgentCandidateRunCellMaterial,
)
from agent_interface.candidate.task_terms import AgentCandidateResolvedModel
from agent_interface.core.canonical import canonical_digest
from agent_interface.core.errors import ContractError
from agent_interface.core.model import wire_adapter
from tests.candidate.fixtures import sha
from tests.candidate.plan_fixtures import RESOLVED, RUN_CELL, disabled_plan, s3

MATERIAL = {key: value for key, value in RUN_CELL.items() if key != "digest"}


def issues(tp: Any, data: Any) -> list[tuple[str, str]]:
    with pytest.raises(ContractError) as caught:
        wire_adapter(tp).parse(data)
    return [(issue.path, issue.code) for issue in caught.value.issues]


def test_run_cell_round_trips_and_is_strict() -> None:
    assert AgentCandidateRunCell.parse_wire(RUN_CELL).to_wire() == RUN_CELL
    assert AgentCandidateRunCellMaterial.parse_wire(MATERIAL).to_wire() == MATERIAL
    assert issues(AgentCandidateRunCellMaterial, RUN_CELL) == [("/digest", "extra_forbidden")]
    assert issues(AgentCandidateRunCell, MATERIAL) == [("/digest", "missing")]


@pytest.mark.parametrize(
    ("field", "value", "code"),
    [
        ("attempt", 0, "greater_than_equal"),
        ("taskIndex", -1, "greater_than_equal"),
        ("seed", 2**53, "less_than_equal"),
        ("seed", 1.5, "int_type"),
        ("arm", "control", "literal_error"),
        ("bundleDigest", "sha256:" + "A" * 64, "string_pattern_mismatch"),
    ],
)
def test_run_cell_field_rules(field: str, value: Any, code: str) -> None:
    assert issues(AgentCandidateRunCell, {**RUN_CELL, field: value}) == [(f"/{field}", code)]


def test_run_cell_accepts_negative_seeds_and_integral_floats() -> None:
    parsed = AgentCandidateRunCell.parse_wire({**RUN_CELL, "seed": -(2**53 - 1), "attempt": 2.0})
    assert parsed.attempt == 2


def test_cell_ref_is_positional() -> None:
    ref = {"suiteDigest": sha("1"), "taskIndex": 3, "repetition": 0}
    assert AgentCandidateBenchmarkCellRef.parse_wire(ref).to_wire() == ref
    assert issues(AgentCandidateBenchmarkCellRef, {**ref, "seed": 1}) == [("/seed", "extra_forbidden")]


def test_seal_computes_the_digest_of_the_material() -> None:
    sealed = AgentCandidateRunCell.seal(MATERIAL)
    assert sealed.digest == canonical_digest(MATERIAL) == top_level_digest(RUN_CELL)
    assert AgentCandidateRunCell.seal(RUN_CELL) == sealed
    assert AgentCandidateRunCell.seal(AgentCandidateRunCellMaterial.parse_wire(MATERIAL)) == sealed
    assert sealed.verify_digest() is sealed
    assert seal_top_level_digest(AgentCandidateRunCell, sealed) == sealed


def test_verify_refuses_a_digest_that_does_not_match() -> None:
    with pytest.raises(ContractError) as caught:
        AgentCandidateRunCell.parse_wire(RUN_CELL).verify_digest()
    assert [(i.path, i.code) for i in caught.value.issues] == [("/digest", "digest_mismatch")]
    changed = AgentCandidateRunCell.seal(MATERIAL).model_copy(update={"attempt": 2})
    with pytest.raises(ContractError):
        verify_top_level_digest(changed)


def test_evidence_verification_checks_digest_and_embedded_bytes() -> None:
    sealed = AgentCandidateExecutionPlanEvidence.seal(disabled_plan())
    assert verify_evidence_digest(sealed) is sealed
    located = AgentCandidateExecutionPlanEvidence.parse_wire(
        {**sealed.to_wire(), "artifact": {**s3("plans/p.json", "0"), "sha256": sealed.digest}}
    )
    assert verify_evidence_digest(located) is located
    wire = sealed.to_wire()
    wire["artifact"]["content"] = "e30="
    wire["artifact"]["byteLength"] = 2
    tampered = AgentCandidateExecutionPlanEvidence.parse_wire(wire)
    with pytest.raises(ContractError) as caught:
        verify_evidence_digest(tampered)
    assert caught.value.issues[0].code == "artifact_mismatch"


def test_is_digestible_finds_lone_surrogates_at_any_depth() -> None:
    assert is_digestible(AgentCandidateResolvedModel.parse_wire(RESOLVED))
    assert is_digestible(AgentCandidateResolvedModel.parse_wire({**RESOLVED, "model": "\U0001f600"}))
    # Alone, the reference accepts lone surrogates here; the containing documents refuse them.
    assert not is_digestible(AgentCandidateResolvedModel.parse_wire({**RESOLVED, "snapshot": "\ud800"}))
