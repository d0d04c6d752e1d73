"""The measured comparison minted from an experiment's cells: it passes the contract's
checker, is deterministic, symmetric in the arms, decides as the policy pre-registers,
and counts and excludes invalid captures; every rule of the checker refuses a tampered
copy of a minted comparison."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_interface.candidate.experiment import AgentImprovementMeasuredComparison
from agent_interface.core.canonical import canonical_bytes
from agent_interface.core.errors import ContractError
from agent_interface.evaluator.experiment.comparison import (
    ComparisonContext,
    analyze_cells,
    mint_measured_comparison,
)
from agent_interface.evaluator.experiment.decision import CriticalDimension, DecisionInputs, decide
from tests.evaluator.measured_fixtures import cell, cells, experiment, invalid, reference_comparison

FAST = settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
unit = st.integers(min_value=0, max_value=20).map(lambda x: x / 20)


def minted(**policy: Any) -> dict[str, Any]:
    exp = experiment(6, 2, **policy)
    records = cells(exp, [0.2, 0.4, 0.5, 0.1] * 3, [0.6, 0.7, 0.8, 0.4] * 3,
                    dimensions={"tests": 0.5})
    return mint_measured_comparison(exp, records).to_wire()


def codes(value: dict[str, Any]) -> set[str]:
    with pytest.raises(ContractError) as error:
        AgentImprovementMeasuredComparison.parse_wire(value)
    return {issue.code for issue in error.value.issues}


def test_a_minted_comparison_passes_the_checker_and_round_trips() -> None:
    value = minted()
    parsed = AgentImprovementMeasuredComparison.parse_wire(value)
    assert parsed.to_wire() == value
    assert value["overall"]["n"] == 12 and value["power"]["n"] == 12
    assert value["decision"]["outcome"] == "ship"
    assert {"name": "enough-tasks", "passed": True} in value["decision"]["contributingChecks"]


@pytest.mark.parametrize(("tasks", "reps"), [(2, 2), (3, 5), (5, 1)])
def test_fewer_tasks_than_the_floor_are_not_enough_to_decide(tasks: int, reps: int) -> None:
    """Below 6 tasks (level 0.95) even a gain on every task is no evidence: the decision
    says so instead of guessing, and the power names how many more tasks would decide."""
    exp = experiment(tasks, reps, criticalDimensions=[])
    n = tasks * reps
    value = mint_measured_comparison(
        exp, cells(exp, [0.1 * (i % 3) for i in range(n)], [0.1 * (i % 3) + 0.5 for i in range(n)])
    ).to_wire()
    assert value["decision"]["outcome"] == "need_more_work"
    assert value["decision"]["reasons"][0].startswith("not enough tasks to decide")
    assert {"name": "enough-tasks", "passed": False} in value["decision"]["contributingChecks"]
    assert not value["power"]["sufficient"]
    assert "more tasks this would have decided" in value["power"]["reason"]
    assert value["metadata"]["agentInterface"]["moreTasksToDecide"] >= 6 - tasks


def test_the_reference_cells_give_the_reference_means() -> None:
    reference = reference_comparison()
    exp = AgentImprovementMeasuredComparison.parse_wire(reference).experiment
    from agent_interface.candidate.experiment import CandidateExecutionEvidence

    records = [
        CandidateExecutionEvidence.parse_wire(m[arm])
        for m in reference["measurements"]
        for arm in ("baseline", "candidate")
    ]
    value = mint_measured_comparison(exp, records, ComparisonContext(label="improved prompt")).to_wire()
    for key in ("baseline", "candidate", "delta", "n"):
        assert value["overall"][key] == reference["overall"][key]
    assert value["evaluation"]["measurement"]["cost"] == reference["evaluation"]["measurement"]["cost"] | {
        "usd": value["evaluation"]["measurement"]["cost"]["usd"]
    }
    assert value["evaluation"]["measurement"]["workDurationMs"] == 720
    assert value["candidate"] == {"label": "improved prompt"}
    # the policy's critical dimension "tests" is not graded: not shippable
    assert value["decision"]["outcome"] == "need_more_work"


# -- one accepted (above) and one refused example per rule of the checker ---------------

def _set(path: list[Any], new: Any) -> Callable[[dict[str, Any]], None]:
    def mutate(value: dict[str, Any]) -> None:
        node = value
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = new(node[path[-1]]) if callable(new) else new

    return mutate


RULES: list[tuple[str, Callable[[dict[str, Any]], None]]] = [
    ("measured_delta", _set(["overall", "delta"], lambda d: d + 0.01)),
    ("confidence_interval", _set(["overall", "confidenceInterval", "lower"], lambda d: d + 1)),
    ("evaluation_totals", _set(["evaluation", "total", "wallDurationMs"], lambda d: d + 5)),
    ("measured_sample_count", _set(["overall", "n"], 5)),
    ("measured_mean", _set(["objectives", 0, "baseline"], lambda d: d + 0.25)),
    ("measurement_accounting", _set(["evaluation", "measurement", "workDurationMs"], lambda d: d + 1)),
    ("measured_cost_latency", lambda v: v["objectives"].pop()),
    ("measured_quality_objective", lambda v: v["objectives"].pop(0)),
    ("measured_dimension_parent", _set(["objectives", 1, "objective"], "elsewhere")),
    ("measured_dimension_missing", _set(["objectives", 1, "name"], "style")),
    ("measured_objective_duplicate", lambda v: v["objectives"].append(v["objectives"][0])),
    ("power_sample", _set(["power", "n"], 3)),
    ("frozen_policy", _set(["power", "confidenceLevel"], 0.9)),
    ("frozen_policy", _set(["objectives", 2, "confidenceInterval", "resamples"], 999)),
]


@pytest.mark.parametrize(("code", "mutate"), RULES, ids=[f"{c}-{i}" for i, (c, _) in enumerate(RULES)])
def test_each_checker_rule_refuses_a_tampered_comparison(
    code: str, mutate: Callable[[dict[str, Any]], None]
) -> None:
    value = minted()
    mutate(value)
    assert code in codes(value)


# -- properties ---------------------------------------------------------------------------

@FAST
@given(st.lists(st.tuples(unit, unit), min_size=4, max_size=6), st.randoms(use_true_random=False))
def test_same_cells_in_any_order_give_identical_bytes(pairs: list[tuple[float, float]], rnd: random.Random) -> None:
    exp = experiment(len(pairs) // 2, 2)
    pairs = pairs[: (len(pairs) // 2) * 2]
    records = cells(exp, [b for b, _ in pairs], [c for _, c in pairs])
    first = canonical_bytes(mint_measured_comparison(exp, records).to_wire())
    rnd.shuffle(records)
    assert canonical_bytes(mint_measured_comparison(exp, records).to_wire()) == first


@FAST
@given(st.lists(st.tuples(unit, unit), min_size=3, max_size=6))
def test_swapping_the_arms_flips_the_sign(pairs: list[tuple[float, float]]) -> None:
    exp = experiment(len(pairs), 1)
    forward = mint_measured_comparison(exp, cells(exp, [b for b, _ in pairs], [c for _, c in pairs]))
    backward = mint_measured_comparison(exp, cells(exp, [c for _, c in pairs], [b for b, _ in pairs]))
    f, b = forward.overall, backward.overall
    assert (b.baseline, b.candidate, b.delta) == (f.candidate, f.baseline, -f.delta)
    assert (b.confidence_interval.lower, b.confidence_interval.upper) == (
        -f.confidence_interval.upper,
        -f.confidence_interval.lower,
    )


@FAST
@given(
    st.lists(st.tuples(st.integers(0, 10), st.integers(4, 6)), min_size=6, max_size=8),
    st.integers(min_value=-(2**40), max_value=2**40),
)
def test_a_candidate_better_on_every_task_ships(gains: list[tuple[int, int]], seed: int) -> None:
    exp = experiment(len(gains), 1, criticalDimensions=[], bootstrapSeed=seed)
    baseline = [b / 20 for b, _ in gains]
    candidate = [(b + g) / 20 for b, g in gains]
    value = mint_measured_comparison(exp, cells(exp, baseline, candidate)).to_wire()
    assert value["decision"]["outcome"] == "ship", value["decision"]
    assert value["power"]["sufficient"]


@pytest.mark.parametrize(("tasks", "reps"), [(1, 2), (2, 1)])
def test_too_few_productive_runs_are_inconclusive(tasks: int, reps: int) -> None:
    exp = experiment(tasks, reps, criticalDimensions=[])
    value = mint_measured_comparison(exp, cells(exp, [0.0] * 2, [1.0] * 2)).to_wire()
    assert value["decision"]["outcome"] == "need_more_work"
    assert not value["power"]["sufficient"]
    assert {"name": "productive-runs", "passed": False} in value["decision"]["contributingChecks"]


def test_invalid_captures_are_counted_and_excluded() -> None:
    exp = experiment(3, 2, criticalDimensions=[])
    baseline, candidate = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6], [0.9, 0.8, 0.7, 0.6, 0.5, 0.4]
    records = [
        r
        for r in cells(exp, baseline, candidate)
        if not (r.receipt.run_cell_digest and _slot(r) in {("candidate", 0, 1), ("baseline", 2, 0)})
    ]
    records += [invalid(exp, "candidate", 0, 1), invalid(exp, "baseline", 2, 0)]
    analysis = analyze_cells(exp, records)
    counts = analysis.metadata["agentInterface"]["cells"]
    assert counts == {
        "expected": 12, "measured": 10, "invalidCapture": 2, "missing": 0, "retried": 0,
        "productivePairs": 4,
    }
    kept = [0, 2, 3, 5]
    overall = analysis.summary["overall"]
    assert overall["n"] == 4
    assert overall["baseline"] == sum(baseline[i] for i in kept) / 4
    assert overall["candidate"] == sum(candidate[i] for i in kept) / 4
    assert analysis.summary["decision"]["outcome"] == "need_more_work"
    assert not analysis.summary["power"]["sufficient"]
    with pytest.raises(ContractError) as error:
        mint_measured_comparison(exp, analysis)
    assert {(i.path, i.code) for i in error.value.issues} == {
        ("/measurements/1/candidate", "comparison_incomplete"),
        ("/measurements/4/baseline", "comparison_incomplete"),
    }
    assert "model_call_unsettled" in str(error.value)


def _slot(record: Any) -> tuple[str, int, int]:
    run_cell = record.materialization_receipt.execution_plan.material.run_cell
    return run_cell.arm, run_cell.task_index, run_cell.repetition


def test_missing_cells_are_counted_and_refused() -> None:
    exp = experiment(2, 2)
    records = cells(exp, [0.1] * 4, [0.2] * 4)[:-1]
    analysis = analyze_cells(exp, records)
    assert analysis.metadata["agentInterface"]["cells"]["missing"] == 1
    assert not analysis.complete
    with pytest.raises(ContractError):
        mint_measured_comparison(exp, records)


def test_a_later_attempt_is_counted_but_never_published() -> None:
    exp = experiment(2, 2, attempts=2, criticalDimensions=[])
    records = cells(exp, [0.1] * 4, [0.2] * 4)
    retry = cell(exp, "candidate", 0, 0, 1.0, attempt=2)
    analysis = analyze_cells(exp, [*records, retry])
    assert analysis.metadata["agentInterface"]["cells"]["retried"] == 1
    assert analysis.summary["overall"]["candidate"] == pytest.approx(0.2)
    value = mint_measured_comparison(exp, analysis).to_wire()
    assert all(m["candidate"]["receipt"]["benchmarkResult"]["material"]["score"] == 0.2
               for m in value["measurements"])


def test_an_attempt_the_task_does_not_allow_is_foreign() -> None:
    exp = experiment(2, 2)
    records = cells(exp, [0.1] * 4, [0.2] * 4)
    with pytest.raises(ContractError) as error:
        analyze_cells(exp, [*records, cell(exp, "candidate", 0, 0, 1.0, attempt=2)])
    assert error.value.issues[0].code == "cell_foreign"


def test_foreign_and_duplicate_cells_are_refused() -> None:
    exp = experiment(2, 2)
    other = experiment(2, 2, bootstrapSeed=99)
    records = cells(exp, [0.1] * 4, [0.2] * 4)
    with pytest.raises(ContractError) as error:
        analyze_cells(exp, [*records, cell(other, "baseline", 0, 0, 0.5)])
    assert [(i.path, i.code) for i in error.value.issues] == [("/cells/8", "cell_foreign")]
    with pytest.raises(ContractError) as error:
        analyze_cells(exp, [*records, cell(exp, "baseline", 0, 0, 0.5, tag="again")])
    assert [(i.path, i.code) for i in error.value.issues] == [("/cells/8", "cell_duplicate")]


def test_dimensions_not_on_every_cell_are_unavailable() -> None:
    exp = experiment(2, 2, criticalDimensions=["tests"])
    records = cells(exp, [0.1] * 4, [0.9] * 4)
    records[0] = cell(exp, "baseline", 0, 0, 0.1, dimensions={"tests": 1.0})
    value = mint_measured_comparison(exp, records).to_wire()
    tests = next(o for o in value["objectives"] if o["kind"] == "dimension")
    assert tests["availability"] == "unavailable"
    assert tests["reason"] == "reported by 1 of 8 measured cells"
    assert value["decision"]["outcome"] == "need_more_work"


def test_the_budget_and_context_are_accounted() -> None:
    exp = experiment(2, 2, budgetUsd=5, criticalDimensions=[])
    context = ComparisonContext(
        run_id="nightly-7", diff="-a\n+b", preparation_wall_ms=10, preparation_cost_usd=0.5,
        preparation_cost_provenance="estimated", generations_explored=3,
    )
    value = mint_measured_comparison(exp, cells(exp, [0.0] * 4, [1.0] * 4), context).to_wire()
    evaluation = value["evaluation"]
    assert evaluation["generationsExplored"] == 3
    assert evaluation["total"]["cost"] == {
        "usd": 0.5 + evaluation["measurement"]["cost"]["usd"], "provenance": "estimated"
    }
    assert value["provenance"]["runId"] == "nightly-7" and value["diff"] == "-a\n+b"
    assert value["decision"]["outcome"] == "hold"  # 8 cells at $1.275 overspend $5
    assert any("budget" in reason for reason in value["decision"]["reasons"])


# -- the decision rule ---------------------------------------------------------------------

def _decide(overall: tuple[float, float, float] | None, critical: list[CriticalDimension] | None = None, **policy: Any) -> str:
    exp = experiment(1, 3, **policy)
    inputs = DecisionInputs(
        productive_pairs=3, invalid_cells=0, missing_cells=0, overall=overall,
        critical=critical or [], spend_usd=1,
    )
    outcome: str = decide(exp.policy, inputs)["outcome"]
    return outcome


@pytest.mark.parametrize(
    ("overall", "critical", "outcome"),
    [
        ((0.2, 0.1, 0.3), [], "ship"),
        ((0.2, 0.0, 0.3), [], "need_more_work"),  # the lower end must clear the threshold 0
        ((-0.2, -0.3, -0.1), [], "hold"),
        ((0.0, 0.0, 0.0), [], "hold"),  # identical arms: no improvement
        ((0.2, 0.1, 0.3), [CriticalDimension("tests", (-0.3, -0.1))], "hold"),
        ((0.2, 0.1, 0.3), [CriticalDimension("tests", (-0.1, 0.1))], "need_more_work"),
        ((0.2, 0.1, 0.3), [CriticalDimension("tests", (-0.05, 0.1))], "ship"),  # within tolerance
        ((0.2, 0.1, 0.3), [CriticalDimension("tests", None)], "need_more_work"),
        (None, [], "need_more_work"),
    ],
)
def test_the_decision_rule(
    overall: tuple[float, float, float] | None, critical: list[CriticalDimension], outcome: str
) -> None:
    assert _decide(overall, critical) == outcome


def test_the_delta_threshold_is_pre_registered() -> None:
    assert _decide((0.2, 0.1, 0.3), deltaThreshold=0.15) == "need_more_work"
    assert _decide((0.1, 0.05, 0.12), deltaThreshold=0.15) == "hold"


def test_minting_runs_the_contract_check_on_the_summary() -> None:
    import copy
    import dataclasses

    exp = experiment(2, 2, criticalDimensions=[])
    analysis = analyze_cells(exp, cells(exp, [0.1, 0.2, 0.3, 0.4], [0.5, 0.6, 0.7, 0.8]))
    summary = copy.deepcopy(analysis.summary)
    summary["overall"]["baseline"] += 0.01
    summary["overall"]["delta"] -= 0.01
    with pytest.raises(ContractError) as error:
        mint_measured_comparison(exp, dataclasses.replace(analysis, summary=summary))
    assert ("/overall/baseline", "measured_mean") in {(i.path, i.code) for i in error.value.issues}
    other = experiment(2, 2, criticalDimensions=[], bootstrapSeed=5)
    with pytest.raises(ContractError) as error:
        mint_measured_comparison(other, analysis)
    assert "execution_binding" in {i.code for i in error.value.issues}


@FAST
@given(st.sets(st.tuples(st.sampled_from(["baseline", "candidate"]), st.integers(0, 5)), max_size=5),
       st.lists(st.tuples(unit, unit), min_size=6, max_size=6))
def test_any_invalid_captures_are_counted_and_excluded(
    broken: set[tuple[str, int]], pairs: list[tuple[float, float]]
) -> None:
    exp = experiment(3, 2, criticalDimensions=[])
    records: list[Any] = []
    for index, (b, c) in enumerate(pairs):
        task, rep = divmod(index, 2)
        for arm, score in (("baseline", b), ("candidate", c)):
            records.append(
                invalid(exp, arm, task, rep) if (arm, index) in broken
                else cell(exp, arm, task, rep, score)
            )
    analysis = analyze_cells(exp, records)
    kept = [i for i in range(6) if ("baseline", i) not in broken and ("candidate", i) not in broken]
    counts = analysis.metadata["agentInterface"]["cells"]
    assert (counts["invalidCapture"], counts["measured"], counts["productivePairs"]) == (
        len(broken), 12 - len(broken), len(kept),
    )
    assert analysis.complete == (not broken)
    if kept:
        overall = analysis.summary["overall"]
        assert overall["n"] == len(kept)
        total = 0.0
        for i in kept:
            total += pairs[i][0]
        assert overall["baseline"] == total / len(kept)
    if broken:
        assert analysis.summary["decision"]["outcome"] == "need_more_work"
        with pytest.raises(ContractError) as error:
            mint_measured_comparison(exp, analysis)
        assert len(error.value.issues) == len(broken)


@FAST
@given(st.integers(6, 7), st.integers(1, 3), st.integers(3, 25))
def test_fewer_pairs_than_the_minimum_are_inconclusive(tasks: int, reps: int, minimum: int) -> None:
    exp = experiment(tasks, reps, criticalDimensions=[], minProductiveRuns=minimum)
    n = tasks * reps
    value = mint_measured_comparison(exp, cells(exp, [0.0] * n, [1.0] * n)).to_wire()
    assert value["power"]["sufficient"] == (n >= minimum)
    assert value["decision"]["outcome"] == ("ship" if n >= minimum else "need_more_work")


def test_score_intervals_stay_within_the_range_a_delta_can_take() -> None:
    """Student's interval on 3 task means (delta 2/3) reaches past 1; a score's is clipped."""
    exp = experiment(3, 1, criticalDimensions=[])
    value = mint_measured_comparison(exp, cells(exp, [0.0, 0.0, 0.5], [1.0, 1.0, 0.5])).to_wire()
    interval = value["overall"]["confidenceInterval"]
    assert -1.0 <= interval["lower"] < value["overall"]["delta"] and interval["upper"] == 1.0
