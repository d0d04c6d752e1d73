"""Measured profile improvement: signed tasks, suites, experiments, run cells and receipts
(digests verified on parse), the measured change and its surfaces, and the paired comparison
(cases of the reference's ``agent-profile-improvement-schema.test.ts``)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from agent_interface.candidate.improvement import (
    AgentProfileImprovementExperiment,
    AgentProfileImprovementRunCell,
    AgentProfileImprovementRunReceipt,
    AgentProfileImprovementSuite,
    AgentProfileImprovementSuiteInputs,
    AgentProfileImprovementTask,
    top_level_record_digest,
)
from agent_interface.candidate.improvement_change import AgentProfileImprovementChangeStep
from agent_interface.candidate.improvement_comparison import (
    AgentProfileImprovementMeasuredComparison,
)
from agent_interface.candidate.surfaces import changed_profile_improvement_surfaces
from agent_interface.core.errors import ContractError
from agent_interface.core.model import wire_adapter
from agent_interface.core.registry import wire_schema
from tests.candidate.reference_documents import accepted, sha


def comparison() -> dict[str, Any]:
    return accepted("AgentProfileImprovementMeasuredComparison")


def resign(record: dict[str, Any]) -> dict[str, Any]:
    record["digest"] = top_level_record_digest(record)
    return record


def refused(model: Any, value: Any) -> ContractError:
    with pytest.raises(ContractError) as error:
        wire_adapter(model).parse_value(value)
    return error.value


def paths(error: ContractError) -> set[str]:
    return {issue.path for issue in error.issues}


def change(*steps: dict[str, Any]) -> Any:
    return wire_schema("AgentProfileImprovementChange").parse_value(
        [{"kind": "agent-profile-diff", **step} for step in steps]
    )


# -- digests are verified on parse ----------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "locate"),
    [
        (AgentProfileImprovementTask, lambda c: c["experiment"]["benchmark"]["tasks"][0]),
        (AgentProfileImprovementSuite, lambda c: c["experiment"]["benchmark"]["suite"]),
        (AgentProfileImprovementExperiment, lambda c: c["experiment"]),
        (AgentProfileImprovementRunCell, lambda c: c["measurements"][0]["baseline"]["runCell"]),
        (AgentProfileImprovementRunReceipt, lambda c: c["measurements"][0]["baseline"]),
    ],
)
def test_a_digest_must_be_the_record_without_its_digest(model: Any, locate: Any) -> None:
    record = locate(comparison())
    parsed = model.parse_wire(record)
    assert parsed.digest == top_level_record_digest(record)
    assert model.seal(record).digest == parsed.digest
    error = refused(model, {**record, "digest": sha("0")})
    assert paths(error) == {"/digest"}
    assert {issue.code for issue in error.issues} == {"digest_mismatch"}


def test_the_digest_covers_every_field_but_itself() -> None:
    task = comparison()["experiment"]["benchmark"]["tasks"][0]
    task["scenario"]["id"] = "support-case-2"
    refused(AgentProfileImprovementTask, task)
    AgentProfileImprovementTask.parse_wire(resign(task))


# -- suites ---------------------------------------------------------------------------------


def test_suite_inputs_have_one_seed_per_task_and_repetition() -> None:
    inputs = comparison()["experiment"]["benchmark"]
    AgentProfileImprovementSuiteInputs.parse_wire(inputs)
    inputs["suite"]["seeds"] = inputs["suite"]["seeds"][:-1]
    resign(inputs["suite"])
    assert paths(refused(AgentProfileImprovementSuiteInputs, inputs)) == {"/suite/seeds"}


def test_suite_inputs_list_the_signed_tasks_in_order() -> None:
    inputs = comparison()["experiment"]["benchmark"]
    inputs["suite"]["taskDigests"] = [sha("0")]
    resign(inputs["suite"])
    assert paths(refused(AgentProfileImprovementSuiteInputs, inputs)) == {"/tasks/0/digest"}
    inputs = comparison()["experiment"]["benchmark"]
    inputs["tasks"] = inputs["tasks"] * 2
    assert "/tasks" in paths(refused(AgentProfileImprovementSuiteInputs, inputs))


# -- the measured change --------------------------------------------------------------------


def test_ordered_reset_and_replacement_of_one_skill() -> None:
    steps = change(
        {"id": "reset", "remove": {"resources": {"skills": True}}},
        {
            "id": "set",
            "set": {
                "resources": {
                    "skills": [{"kind": "inline", "name": "policy", "content": "Cite policy."}]
                }
            },
        },
    )
    assert changed_profile_improvement_surfaces(steps) == ["skills"]


@pytest.mark.parametrize(
    ("overlay", "surfaces"),
    [
        ({"prompt": {"systemPrompt": "Reflect, then answer."}}, ["prompt"]),
        ({"resources": {"skills": [{"kind": "inline", "name": "r", "content": "R."}]}}, ["skills"]),
        (
            {
                "prompt": {"instructions": ["Reflect."]},
                "resources": {"skills": [{"kind": "inline", "name": "r", "content": "R."}]},
            },
            ["prompt", "skills"],
        ),
        (
            {"prompt": {"instructions": ["Reflect."]}, "model": {"reasoningEffort": "high"}},
            ["prompt", "agent-profile"],
        ),
        (
            {
                "resources": {
                    "tools": [{"kind": "inline", "name": "search", "content": "Search."}],
                    "agents": [{"kind": "inline", "name": "critic", "content": "Critique."}],
                }
            },
            ["tools", "subagents"],
        ),
        ({"model": {"reasoningEffort": "high"}, "tools": {"shell": True}}, ["tools", "agent-profile"]),
        ({"name": "changed"}, ["agent-profile"]),
        ({"harness": "codex"}, ["agent-profile"]),
        ({"permissions": {"shell": "allow"}}, ["agent-profile"]),
        ({"mcp": {"papers": {"url": "https://mcp.example.test"}}}, ["mcp"]),
        ({"subagents": {"critic": {"prompt": "Find confounds."}}}, ["subagents"]),
        ({"hooks": {"afterRun": [{"command": "capture-result"}]}}, ["hooks"]),
        ({"modes": {"adversarial": {"prompt": "Try to refute it."}}}, ["agent-profile"]),
        ({"resources": {"instructions": "Observe before deciding."}}, ["agent-profile"]),
        ({"resources": {"failOnError": False}}, ["agent-profile"]),
        ({"metadata": {"role": "driver"}}, ["agent-profile"]),
    ],
)
def test_each_profile_axis_maps_to_its_surface_or_the_complete_profile(
    overlay: dict[str, Any], surfaces: list[str]
) -> None:
    assert changed_profile_improvement_surfaces(change({"set": overlay})) == surfaces


def test_a_complete_resource_removal_reports_every_surface_it_can_change() -> None:
    steps = change({"remove": {"resources": True}})
    assert changed_profile_improvement_surfaces(steps) == [
        "skills",
        "tools",
        "subagents",
        "agent-profile",
    ]


def test_empty_resource_removals_are_not_labelled_beside_an_effective_one() -> None:
    steps = change({"remove": {"resources": {"tools": [], "instructions": True}}})
    assert changed_profile_improvement_surfaces(steps) == ["agent-profile"]


@pytest.mark.parametrize(
    "remove",
    [
        {"tags": []},
        {"prompt": {}},
        {"model": []},
        {"connections": []},
        {"resources": {}},
        {"resources": {"tools": []}},
    ],
)
def test_a_step_that_cannot_change_the_profile_is_refused(remove: dict[str, Any]) -> None:
    error = refused(AgentProfileImprovementChangeStep, {"kind": "agent-profile-diff", "remove": remove})
    assert "profile_patch_empty" in {issue.code for issue in error.issues}


@pytest.mark.parametrize(
    "resources",
    [
        {"skills": [{"kind": "github", "owner": "o", "repo": "r", "ref": "main", "path": "s.md"}]},
        {"instructions": {"kind": "github", "owner": "o", "repo": "r", "ref": "main", "path": "i.md"}},
    ],
)
def test_measured_resource_patches_carry_inline_bytes(resources: dict[str, Any]) -> None:
    with pytest.raises(ContractError):
        change({"set": {"resources": resources}})


def test_a_change_has_at_least_one_step() -> None:
    with pytest.raises(ContractError):
        wire_schema("AgentProfileImprovementChange").parse_value([])


# -- experiments ----------------------------------------------------------------------------


def experiment() -> dict[str, Any]:
    value: dict[str, Any] = comparison()["experiment"]
    return value


@pytest.mark.parametrize(
    ("mutate", "path"),
    [
        (lambda e: e["baseline"].update(stateDigest=sha("9")), "/baseline/stateDigest"),
        (lambda e: e["candidate"].update(stateDigest=e["baseline"]["stateDigest"]), "/candidate/stateDigest"),
        (
            lambda e: e["candidateLineage"].update(parentDigests=[e["candidate"]["stateDigest"], sha("5")]),
            "/candidateLineage/parentDigests",
        ),
        (
            lambda e: e["candidateLineage"].update(
                developmentSplitDigest=e["benchmark"]["suite"]["splitDigest"]
            ),
            "/candidateLineage/developmentSplitDigest",
        ),
    ],
)
def test_experiment_binds_source_arms_lineage_and_held_out_split(mutate: Any, path: str) -> None:
    value = experiment()
    AgentProfileImprovementExperiment.parse_wire(value)
    mutate(value)
    assert path in paths(refused(AgentProfileImprovementExperiment, resign(value)))


def test_experiment_requires_the_sealed_runner_reference() -> None:
    value = experiment()
    del value["executionRef"]
    refused(AgentProfileImprovementExperiment, resign(value))


# -- run receipts ---------------------------------------------------------------------------


def run_receipt() -> dict[str, Any]:
    value: dict[str, Any] = comparison()["measurements"][0]["baseline"]
    return value


def test_grader_spend_counts_against_the_complete_arm_limits() -> None:
    value = run_receipt()
    AgentProfileImprovementRunReceipt.parse_wire(value)
    value["limits"]["maxCostUsd"] = value["usage"]["costUsdNanos"] / 1_000_000_000
    error = refused(AgentProfileImprovementRunReceipt, resign(value))
    assert "/usage/costUsdNanos" in paths(error)


def test_total_tokens_bound_agent_plus_grader_tokens() -> None:
    value = run_receipt()
    usage, grading = value["usage"], value["grading"]["usage"]
    total = usage["inputTokens"] + usage["outputTokens"] + grading["inputTokens"] + grading["outputTokens"]
    value["limits"]["maxTotalTokens"] = total
    AgentProfileImprovementRunReceipt.parse_wire(resign(value))
    value["limits"]["maxTotalTokens"] = total - 1
    assert "/usage/totalTokens" in paths(refused(AgentProfileImprovementRunReceipt, resign(value)))


def test_trace_and_grading_evidence_are_consistent_and_distinct() -> None:
    value = run_receipt()
    value["trace"]["modelCallCount"] += 1
    assert "/trace/modelCallCount" in paths(refused(AgentProfileImprovementRunReceipt, resign(value)))
    value = run_receipt()
    value["grading"]["evidence"] = dict(value["output"])
    assert "/grading/evidence" in paths(refused(AgentProfileImprovementRunReceipt, resign(value)))
    value = run_receipt()
    value["billing"] = value["billing"] * 2
    assert "/billing" in paths(refused(AgentProfileImprovementRunReceipt, resign(value)))


def test_evidence_kind_and_identity_are_trimmed_like_the_reference() -> None:
    value = run_receipt()
    identity = value["runRecord"]["identity"]
    value["runRecord"]["identity"] = "  " + identity + "\n"
    # The digest covers the parsed (trimmed) record, as the reference computes it.
    parsed = AgentProfileImprovementRunReceipt.parse_wire(value)
    assert parsed.run_record.identity == identity
    assert parsed.to_wire() == run_receipt()
    refused(AgentProfileImprovementRunReceipt, resign(value))


def test_profile_timing_duration_is_end_minus_start() -> None:
    value = run_receipt()
    value["timing"]["durationMs"] += 1
    assert "/timing/durationMs" in paths(refused(AgentProfileImprovementRunReceipt, resign(value)))


# -- the paired comparison ------------------------------------------------------------------


def test_accepts_an_exact_paid_profile_comparison() -> None:
    value = comparison()
    assert AgentProfileImprovementMeasuredComparison.parse_wire(value).to_wire() == value


@pytest.mark.parametrize(
    "alteration",
    [
        {"workDurationMs": 1},
        {"cost": {"usd": 0.01}},
        {"cost": {"provenance": "estimated"}},
    ],
)
def test_measurement_accounting_equals_the_signed_receipts(alteration: dict[str, Any]) -> None:
    value = comparison()
    measurement = value["evaluation"]["measurement"]
    if "workDurationMs" in alteration:
        measurement["workDurationMs"] += 1
    elif "usd" in alteration["cost"]:
        measurement["cost"]["usd"] += 0.01
    else:
        measurement["cost"]["provenance"] = "estimated"
    refused(AgentProfileImprovementMeasuredComparison, value)


def rebind(value: dict[str, Any], index: int, arm: str, mutate: Any) -> dict[str, Any]:
    receipt = value["measurements"][index][arm]
    mutate(receipt)
    resign(receipt["runCell"])
    resign(receipt)
    return value


@pytest.mark.parametrize(
    ("mutate", "suffix"),
    [
        (lambda r: r["resolvedModel"].update(snapshot="other"), "resolvedModel"),
        (lambda r: r["limits"].update(maxSteps=r["limits"]["maxSteps"] + 1), "limits"),
        (lambda r: r["runCell"].update(attempt=2), "runCell"),
        (lambda r: r["executionRef"].update(identity="other-runner"), "executionRef"),
        (lambda r: r["grading"]["grader"].update(version="2"), "grading/grader"),
    ],
)
def test_each_receipt_binds_the_signed_task_runner_and_first_attempt(mutate: Any, suffix: str) -> None:
    value = rebind(comparison(), 0, "candidate", mutate)
    assert f"/measurements/0/candidate/{suffix}" in paths(
        refused(AgentProfileImprovementMeasuredComparison, value)
    )


def test_billing_evidence_is_not_reused_across_arms() -> None:
    value = comparison()
    billing = copy.deepcopy(value["measurements"][0]["baseline"]["billing"])
    rebind(value, 0, "candidate", lambda r: r.update(billing=billing))
    assert "/measurements/0/candidate/billing" in paths(
        refused(AgentProfileImprovementMeasuredComparison, value)
    )


def test_a_shippable_comparison_has_no_failed_execution() -> None:
    value = rebind(
        comparison(),
        0,
        "candidate",
        lambda r: r.update(outcome={"status": "failed", "code": "crash", "message": "exited"}),
    )
    assert "/measurements" in paths(refused(AgentProfileImprovementMeasuredComparison, value))
    value["decision"]["outcome"] = "hold"
    AgentProfileImprovementMeasuredComparison.parse_wire(value)


def test_reported_means_equal_the_signed_receipts() -> None:
    value = comparison()
    value["objectives"][1]["baseline"] += 0.1
    value["objectives"][1]["delta"] -= 0.1
    assert "/objectives/1/baseline" in paths(refused(AgentProfileImprovementMeasuredComparison, value))


def test_provenance_names_both_measured_states() -> None:
    value = comparison()
    value["provenance"]["candidateContentHash"] = sha("0")
    assert "/provenance" in paths(refused(AgentProfileImprovementMeasuredComparison, value))


def test_every_signed_cell_is_present() -> None:
    value = comparison()
    value["measurements"] = value["measurements"][:-1]
    assert "/measurements" in paths(refused(AgentProfileImprovementMeasuredComparison, value))


def test_uncertainty_uses_the_frozen_policy() -> None:
    value = comparison()
    value["overall"]["confidenceInterval"]["resamples"] += 1
    assert "/experiment/policy" in paths(refused(AgentProfileImprovementMeasuredComparison, value))
