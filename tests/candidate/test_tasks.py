"""Signed benchmark tasks and suites (``agent-candidate-task-schema.ts`` and its tests)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from agent_interface.candidate.run_cell import AgentCandidateBenchmarkCellRef
from agent_interface.candidate.tasks import (
    AgentCandidateBenchmarkSuite,
    AgentCandidateBenchmarkSuiteInputs,
    AgentCandidateBenchmarkSuiteMaterial,
    AgentCandidateBenchmarkTask,
    AgentCandidateBenchmarkTaskMaterial,
    benchmark_cell_seed,
)
from agent_interface.core.canonical import canonical_digest
from agent_interface.core.errors import ContractError
from agent_interface.core.model import wire_adapter
from tests.candidate.fixtures import sha
from tests.candidate.plan_fixtures import suite, task

Task = AgentCandidateBenchmarkTask
REPOSITORY = {
    "identity": "owner/repository",
    "rootIdentity": "owner/repository",
    "baseCommit": "a" * 40,
    "baseTree": "b" * 40,
}


def issues(data: Any, tp: Any = Task) -> list[tuple[str, str]]:
    with pytest.raises(ContractError) as caught:
        wire_adapter(tp).parse(data)
    return [(issue.path, issue.code) for issue in caught.value.issues]


def workspace_task(scenario_id: str = "case-18", digest: str = "b") -> dict[str, Any]:
    value = task()
    value.update(outcome={"kind": "workspace"}, repository=REPOSITORY, digest=sha(digest))
    value["scenario"] = {"id": scenario_id, "kind": "repo", "scenarioDigest": sha(digest)}
    return value


def test_reference_task_round_trips() -> None:
    assert Task.parse_wire(task()).to_wire() == task()
    material = {key: value for key, value in task().items() if key != "digest"}
    assert AgentCandidateBenchmarkTaskMaterial.parse_wire(material).to_wire() == material
    assert issues(material) == [("/digest", "missing")]
    assert issues(task(), AgentCandidateBenchmarkTaskMaterial) == [("/digest", "extra_forbidden")]


def test_workspace_results_need_a_pinned_repository() -> None:
    assert issues({**task(), "outcome": {"kind": "workspace"}}) == [("/repository", "repository_required")]
    assert Task.parse_wire(workspace_task())


def test_unbounded_or_unknown_execution_policy_is_refused() -> None:
    value = task()
    infinite = {**value, "limits": {**value["limits"], "maxCostUsd": float("inf")}}
    assert ("/limits/maxCostUsd", "finite_number") in issues(infinite)
    assert issues({**value, "funding": {"owner": "platform"}}) == [("/funding", "extra_forbidden")]
    assert issues({**value, "attempt": {"maxAttempts": 2, "retryPolicy": "none"}}) == [
        ("/attempt/maxAttempts", "single_attempt_required")
    ]
    assert Task.parse_wire({**value, "attempt": {"maxAttempts": 1, "retryPolicy": "none"}})
    grader = copy.deepcopy(value["grader"])
    grader["artifact"]["byteLength"] = 0
    assert issues({**value, "grader": grader}) == [("/grader/artifact/byteLength", "empty_grader_artifact")]


def test_dataset_snapshot_must_carry_bytes() -> None:
    value = task()
    value["datasetSnapshot"]["byteLength"] = 0
    assert issues(value) == [("/datasetSnapshot/byteLength", "empty_dataset_snapshot")]
    del value["datasetSnapshot"]
    assert Task.parse_wire(value)


def test_repository_objects_use_one_format() -> None:
    mixed = {**REPOSITORY, "baseTree": "b" * 64}
    assert issues({**workspace_task(), "repository": mixed}) == [("/repository", "git_object_format")]
    sha256_objects = {**REPOSITORY, "baseCommit": "a" * 64, "baseTree": "b" * 64}
    assert Task.parse_wire({**workspace_task(), "repository": sha256_objects})


def test_task_container_reuses_the_candidate_container_policy() -> None:
    value = task()
    value["evaluatorTaskContainer"]["image"] = "http://127.0.0.1/private"
    assert issues(value) == [("/evaluatorTaskContainer/image", "unsafe_oci_image")]
    value = task()
    value["evaluatorTaskContainer"]["source"] = "pinned-container"
    assert issues(value) == [("/evaluatorTaskContainer/source", "literal_error")]


def test_instruction_is_non_empty_well_formed_and_bounded() -> None:
    assert issues({**task(), "instruction": ""}) == [("/instruction", "string_too_short")]
    assert issues({**task(), "instruction": "do \ud800"}) == [("/instruction", "ill_formed_unicode")]
    assert Task.parse_wire({**task(), "instruction": "x" * (4 * 1024 * 1024)})
    # Counted in UTF-16 code units: 2**21 emoji are exactly the limit, one more is over.
    assert Task.parse_wire({**task(), "instruction": "\U0001f600" * 2**21})
    assert issues({**task(), "instruction": "\U0001f600" * 2**21 + "x"}) == [
        ("/instruction", "string_too_long")
    ]


def test_identities_are_bounded_and_lone_surrogates_refused() -> None:
    value = task()
    value["scenario"]["id"] = "x" * 513
    assert issues(value) == [("/scenario/id", "string_too_long")]
    value = task()
    value["benchmark"]["version"] = "\U0001f600" * 129
    assert issues(value) == [("/benchmark/version", "string_too_long")]
    value = task()
    value["grader"]["name"] = "grader-\ud800"
    assert issues(value) == [("", "non_canonical_json")]


def test_output_spec_is_bounded() -> None:
    value = task()
    value["outcome"]["maxBytes"] = 64 * 1024 * 1024
    assert Task.parse_wire(value)
    value["outcome"]["maxBytes"] = 64 * 1024 * 1024 + 1
    assert issues(value) == [("/outcome/maxBytes", "less_than_equal")]
    value["outcome"] = {"kind": "output", "mediaType": "Text/Plain", "maxBytes": 1}
    assert issues(value) == [("/outcome/mediaType", "string_pattern_mismatch")]


def test_reference_suite_enumerates_the_denominator() -> None:
    assert AgentCandidateBenchmarkSuite.parse_wire(suite()).to_wire() == suite()
    inputs = {"suite": suite(), "tasks": [task()]}
    assert AgentCandidateBenchmarkSuiteInputs.parse_wire(inputs).to_wire() == inputs


def test_suite_refuses_missing_seeds_and_duplicate_tasks() -> None:
    value = suite()
    assert issues({**value, "seeds": [42]}, AgentCandidateBenchmarkSuite) == [("/seeds", "seed_count")]
    duplicate = {**value, "taskDigests": [sha("a"), sha("a")], "seeds": [42, 43, 44, 45]}
    assert issues(duplicate, AgentCandidateBenchmarkSuite) == [("/taskDigests/1", "duplicate_task")]
    assert issues({**value, "taskDigests": []}, AgentCandidateBenchmarkSuite) == [("/taskDigests", "too_short")]
    assert issues({**value, "seeds": [2**53, 1]}, AgentCandidateBenchmarkSuite) == [("/seeds/0", "less_than_equal")]
    material = {key: item for key, item in value.items() if key != "digest"}
    assert AgentCandidateBenchmarkSuiteMaterial.parse_wire({**material, "seeds": [-(2**53 - 1), 0]})


def test_suite_inputs_refuse_substituted_reordered_or_aliased_tasks() -> None:
    assert issues({"suite": suite(), "tasks": [{**task(), "digest": sha("e")}]}, AgentCandidateBenchmarkSuiteInputs) == [
        ("/tasks/0/digest", "task_order")
    ]
    alias = {**task(), "digest": sha("e"), "scenario": {**task()["scenario"], "id": "case-18"}}
    two = {**suite(), "taskDigests": [sha("a"), sha("e")], "seeds": [42, 43, 44, 45]}
    assert issues({"suite": two, "tasks": [task(), alias]}, AgentCandidateBenchmarkSuiteInputs) == [
        ("/tasks/1/scenario/scenarioDigest", "duplicate_scenario")
    ]
    same_id = workspace_task("case-17", "e")
    assert issues({"suite": two, "tasks": [task(), same_id]}, AgentCandidateBenchmarkSuiteInputs) == [
        ("/tasks/1/scenario/id", "duplicate_task_id")
    ]
    other = workspace_task(digest="e")
    other["benchmark"]["version"] = "2026-08-01"
    assert issues({"suite": two, "tasks": [task(), other]}, AgentCandidateBenchmarkSuiteInputs) == [
        ("/tasks/1/benchmark", "benchmark_mismatch")
    ]
    assert issues({"suite": two, "tasks": [task()]}, AgentCandidateBenchmarkSuiteInputs) == [
        ("/tasks", "task_count")
    ]
    assert issues({"suite": two, "tasks": [workspace_task(digest="e"), task()]}, AgentCandidateBenchmarkSuiteInputs) == [
        ("/tasks/0/digest", "task_order"), ("/tasks/1/digest", "task_order")
    ]
    assert AgentCandidateBenchmarkSuiteInputs.parse_wire({"suite": two, "tasks": [task(), workspace_task(digest="e")]})


def test_seal_and_verify_bind_digests_to_content() -> None:
    sealed = Task.seal(task())
    assert sealed.digest == canonical_digest({k: v for k, v in task().items() if k != "digest"})
    assert sealed.verify_digest() is sealed
    with pytest.raises(ContractError) as caught:
        Task.parse_wire(task()).verify_digest()
    assert [(i.path, i.code) for i in caught.value.issues] == [("/digest", "digest_mismatch")]
    sealed_suite = AgentCandidateBenchmarkSuite.seal({**suite(), "taskDigests": [sealed.digest]})
    assert sealed_suite.verify_digest() is sealed_suite
    inputs = AgentCandidateBenchmarkSuiteInputs.parse_wire({"suite": sealed_suite.to_wire(), "tasks": [sealed.to_wire()]})
    assert inputs.tasks[0].digest == inputs.suite.task_digests[0]


def test_cell_seed_is_task_major() -> None:
    value = AgentCandidateBenchmarkSuite.parse_wire(
        {**suite(), "taskDigests": [sha("a"), sha("b")], "seeds": [10, 11, 20, 21]}
    )
    cell = AgentCandidateBenchmarkCellRef(suite_digest=value.digest, task_index=1, repetition=0)
    assert benchmark_cell_seed(value, cell) == 20
    assert benchmark_cell_seed(value, cell.model_copy(update={"repetition": 1})) == 21
    for bad, code in (
        ({"task_index": 2}, "task_index_range"),
        ({"repetition": 2}, "repetition_range"),
        ({"suite_digest": sha("0")}, "suite_mismatch"),
    ):
        with pytest.raises(ContractError) as caught:
            benchmark_cell_seed(value, cell.model_copy(update=bad))
        assert caught.value.issues[0].code == code
