"""Knowledge, memory isolation and ancestry."""

from __future__ import annotations

from typing import Any

import pytest

from agent_interface.candidate.lineage import (
    AgentCandidateKnowledge,
    AgentCandidateLineage,
    AgentCandidateMemoryPolicy,
)
from agent_interface.core.errors import ContractError
from agent_interface.core.model import wire_adapter
from tests.candidate.fixtures import bundle, sha


def codes(tp: Any, data: Any) -> list[tuple[str, str]]:
    with pytest.raises(ContractError) as caught:
        wire_adapter(tp).parse_value(data)
    return [(issue.path, issue.code) for issue in caught.value.issues]


def generated(**extra: Any) -> dict[str, Any]:
    return {
        "source": "optimizer",
        "parentDigests": [sha("1")],
        "runIds": ["run-1"],
        "developmentSplitDigest": sha("2"),
        **extra,
    }


def test_generated_candidates_name_parents_runs_and_split() -> None:
    assert AgentCandidateLineage.parse_wire(generated())
    assert AgentCandidateLineage.parse_wire({"source": "human"})
    assert codes(AgentCandidateLineage, {"source": "optimizer"}) == [
        ("/parentDigests", "generated_parent_missing"),
        ("/runIds", "generated_run_missing"),
        ("/developmentSplitDigest", "generated_split_missing"),
    ]
    assert codes(AgentCandidateLineage, generated(source="compound")) == [
        ("/parentDigests", "compound_parents")
    ]
    assert AgentCandidateLineage.parse_wire(generated(source="compound", parentDigests=[sha("1"), sha("3")]))


def test_lineage_lists_are_unique() -> None:
    assert codes(AgentCandidateLineage, generated(runIds=["a", "a"])) == [("/runIds/1", "duplicate_value")]
    assert codes(AgentCandidateLineage, generated(modelSnapshots=["m", "n", "m"])) == [
        ("/modelSnapshots/2", "duplicate_value")
    ]
    assert codes(AgentCandidateLineage, generated(runIds=[""]))
    assert codes(AgentCandidateLineage, {"source": "agent"})


def test_memory_is_disabled_or_task_isolated() -> None:
    memory = wire_adapter(AgentCandidateMemoryPolicy)
    assert memory.parse_value({"mode": "disabled"})
    assert memory.parse_value({"mode": "isolated", "scope": "task"})
    assert codes(AgentCandidateMemoryPolicy, {"mode": "isolated", "scope": "session"})
    assert codes(AgentCandidateMemoryPolicy, {"mode": "shared"})
    assert codes(AgentCandidateMemoryPolicy, {"mode": "disabled", "seed": {}})


def test_knowledge_is_a_frozen_reviewed_candidate() -> None:
    knowledge = bundle()["knowledge"]
    assert AgentCandidateKnowledge.parse_wire(knowledge)
    knowledge["candidate"]["goalHash"] = "sha256:short"
    assert codes(AgentCandidateKnowledge, knowledge)
    missing = bundle()["knowledge"]
    del missing["evaluation"]
    assert codes(AgentCandidateKnowledge, missing) == [("/evaluation", "missing")]
