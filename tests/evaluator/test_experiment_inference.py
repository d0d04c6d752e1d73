"""The calibrated paired interval, Student's t, Holm and the power figures, on reference
values: scipy's distributions and exact tests, and textbook examples."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from scipy import stats

from agent_interface.candidate.evaluation import AgentCandidateEvaluationPolicy
from agent_interface.evaluator.experiment.decision import (
    CriticalDimension,
    DecisionInputs,
    decide,
    minimum_tasks,
    one_sided_alpha,
)
from agent_interface.evaluator.experiment.inference import (
    overall_decision_inputs,
    paired_intervals,
    task_sizes,
)
from agent_interface.evaluator.experiment.multiplicity import holm_rejections
from agent_interface.evaluator.experiment.power import (
    detectable_delta,
    plan_suite,
    planned_spread,
    tasks_needed,
)
from agent_interface.evaluator.experiment.student_t import t_cdf, t_quantile


def policy(**overrides: object) -> AgentCandidateEvaluationPolicy:
    wire = {"confidenceLevel": 0.95, "resamples": 2000, "bootstrapSeed": 1337,
            "deltaThreshold": 0, "minProductiveRuns": 3, "criticalDimensions": [],
            "regressionTolerance": 0.05, **overrides}
    return AgentCandidateEvaluationPolicy.parse_wire(wire)


# -- Student's t ----------------------------------------------------------------------------

@pytest.mark.parametrize("df", [1, 2, 3, 5, 9, 29, 99, 10_000])
def test_t_matches_scipy(df: int) -> None:
    for x in (-40.0, -4.3, -1.0, 0.0, 0.7, 2.0, 12.7):
        assert t_cdf(x, df) == pytest.approx(stats.t.cdf(x, df), abs=1e-10)
    for p in (0.0005, 0.025, 0.2, 0.5, 0.8, 0.975, 0.9995):
        assert t_quantile(p, df) == pytest.approx(stats.t.ppf(p, df), rel=1e-10, abs=1e-12)


def test_t_textbook_quantiles_and_refusals() -> None:
    # Student's table: t(0.975, 2) = 4.303, t(0.975, 5) = 2.571, t(0.95, 10) = 1.812
    assert round(t_quantile(0.975, 2), 3) == 4.303
    assert round(t_quantile(0.975, 5), 3) == 2.571
    assert round(t_quantile(0.95, 10), 3) == 1.812
    assert t_quantile(0.975, 3) == -t_quantile(0.025, 3)
    with pytest.raises(ValueError):
        t_quantile(1.0, 3)
    with pytest.raises(ValueError):
        t_cdf(0.0, 0)


# -- Holm -----------------------------------------------------------------------------------

def test_holm_step_down_stops_at_the_first_failure() -> None:
    # Holm (1979)'s procedure on four p-values at 0.05: 0.005 <= 0.0125, 0.01 <= 0.0167,
    # 0.03 > 0.025 stops; 0.04 is not rejected though it is below 0.05.
    assert holm_rejections([0.01, 0.04, 0.03, 0.005], 0.05) == [True, False, False, True]
    assert holm_rejections([0.04], 0.05) == [True]
    assert holm_rejections([], 0.05) == []


def test_holm_is_applied_to_regression_claims_only() -> None:
    two = policy(criticalDimensions=["a", "b"])
    inputs = DecisionInputs(
        productive_pairs=12, invalid_cells=0, missing_cells=0, overall=(0.2, 0.1, 0.3),
        critical=[CriticalDimension("a", (-0.3, -0.06), 0.02),
                  CriticalDimension("b", (-0.3, -0.06), 0.02)],
        spend_usd=0, tasks=12,
    )
    # unadjusted, each p = 0.02 <= 0.025 would claim a regression; Holm needs 0.0125 first
    decision = decide(two, inputs)
    assert decision["outcome"] == "need_more_work"
    assert all("may regress" in reason for reason in decision["reasons"])
    one = replace(inputs, critical=[CriticalDimension("a", (-0.3, -0.06), 0.02)])
    assert decide(policy(criticalDimensions=["a"]), one)["outcome"] == "hold"


# -- the interval ---------------------------------------------------------------------------

def test_the_interval_is_the_t_interval_of_the_task_means() -> None:
    # 8 tasks x 3 repetitions: the bootstrap standard error over task means, made unbiased,
    # is the textbook standard error up to the bootstrap's Monte Carlo error (R = 20000).
    rng = np.random.default_rng(5)
    deltas = rng.normal(0.1, 0.3, size=(24, 1))
    means = deltas.reshape(8, 3).mean(axis=1)
    delta = float(deltas.mean())
    (interval,), _ = paired_intervals(deltas, [3] * 8, [delta], policy(resamples=20_000))
    reference = stats.t.interval(0.95, 7, loc=means.mean(), scale=stats.sem(means))
    assert interval.units == 8
    assert interval.lower == pytest.approx(reference[0], abs=0.02 * stats.sem(means) * 2.4)
    assert interval.upper == pytest.approx(reference[1], abs=0.02 * stats.sem(means) * 2.4)
    assert interval.standard_error == pytest.approx(stats.sem(means), rel=0.02)


def test_the_interval_is_deterministic_and_flips_exactly_with_the_arms() -> None:
    rng = np.random.default_rng(11)
    deltas = rng.uniform(-1, 1, size=(15, 2))
    point = [float(d) for d in deltas.mean(axis=0)]
    first, _ = paired_intervals(deltas, [5, 5, 5], point, policy())
    again, _ = paired_intervals(deltas.copy(), [5, 5, 5], point, policy())
    flipped, _ = paired_intervals(-deltas, [5, 5, 5], [-p for p in point], policy())
    assert first == again
    for forward, backward in zip(first, flipped, strict=True):
        assert (backward.lower, backward.upper) == (-forward.upper, -forward.lower)


def test_one_task_treats_its_pairs_as_the_units_and_one_pair_has_no_spread() -> None:
    (interval,), _ = paired_intervals(np.array([[0.1], [0.3], [0.2]]), [3], [0.2], policy())
    assert interval.units == 3 and interval.lower < 0.2 < interval.upper
    (single,), _ = paired_intervals(np.array([[0.4]]), [1], [0.4], policy())
    assert (single.lower, single.upper, single.standard_error) == (0.4, 0.4, 0.0)


def test_task_sizes_are_runs_of_task_indexes() -> None:
    assert task_sizes([0, 0, 0, 1, 2, 2]) == [3, 1, 2]
    assert task_sizes([]) == []


def test_regression_p_value_is_the_t_tail() -> None:
    (interval,), _ = paired_intervals(np.array([[-0.2], [-0.1], [-0.3], [-0.15], [-0.25],
                                                [-0.2], [-0.05]]), [1] * 7, [-0.1786], policy())
    p = interval.regression_p_value(-0.1786, 0.05)
    assert p == pytest.approx(stats.t.cdf((-0.1786 + 0.05) / interval.standard_error, 6))


# -- the task floor -------------------------------------------------------------------------

def test_the_task_floor_is_the_exact_sign_test_floor() -> None:
    # an exact one-sided sign test's smallest p-value with n tasks is 2**-n (scipy agrees)
    for level in (0.8, 0.9, 0.95, 0.99):
        floor = minimum_tasks(level)
        alpha = one_sided_alpha(level)
        assert stats.binomtest(floor, floor, 0.5, alternative="greater").pvalue <= alpha
        if floor > 2:
            below = floor - 1
            assert stats.binomtest(below, below, 0.5, alternative="greater").pvalue > alpha
    assert minimum_tasks(0.95) == 6


def test_all_gains_on_five_tasks_do_not_ship_but_on_six_do() -> None:
    five = overall_decision_inputs(policy(), [[0.0]] * 5, [[1.0]] * 5)
    six = overall_decision_inputs(policy(), [[0.0]] * 6, [[1.0]] * 6)
    assert decide(policy(), five)["outcome"] == "need_more_work"
    assert decide(policy(), six)["outcome"] == "ship"


def test_the_t_rule_agrees_with_the_t_test_on_a_textbook_sample() -> None:
    # Student's sleep data (Cushny & Peebles), 10 paired differences: t = 4.06, p = 0.0014
    differences = [1.2, 2.4, 1.3, 1.3, 0.0, 1.0, 1.8, 0.8, 4.6, 1.4]
    result = stats.ttest_1samp(differences, 0.0, alternative="greater")
    assert result.pvalue < 0.025
    inputs = overall_decision_inputs(policy(resamples=20_000), [[0.0]] * 10,
                                     [[d] for d in differences])
    assert decide(policy(), inputs)["outcome"] == "ship"
    assert inputs.overall is not None
    _, lower, _ = inputs.overall
    reference = stats.t.interval(0.95, 9, loc=np.mean(differences), scale=stats.sem(differences))
    assert lower == pytest.approx(reference[0], abs=0.05)


# -- power ----------------------------------------------------------------------------------

def test_detectable_delta_is_the_t_power_formula() -> None:
    spread = 0.3
    expected = (stats.t.ppf(0.975, 19) + stats.t.ppf(0.8, 19)) * spread / math.sqrt(20)
    assert detectable_delta(spread, 20, 0.95) == pytest.approx(expected, rel=1e-9)
    assert detectable_delta(spread, 5, 0.95) == math.inf


def test_the_power_formula_holds_against_the_noncentral_t() -> None:
    # the approximation's power at the detectable delta, by scipy's noncentral t, is ~80%
    spread, tasks = 0.3, 20
    mde = detectable_delta(spread, tasks, 0.95)
    noncentrality = mde / (spread / math.sqrt(tasks))
    power = stats.nct.sf(stats.t.ppf(0.975, tasks - 1), tasks - 1, noncentrality)
    assert 0.78 < power < 0.82


def test_tasks_needed_is_the_smallest_sufficient_suite() -> None:
    needed = tasks_needed(0.1, 0.3, 0.95)
    assert needed is not None
    assert detectable_delta(0.3, needed, 0.95) <= 0.1 < detectable_delta(0.3, needed - 1, 0.95)
    assert tasks_needed(0.0, 0.3, 0.95) is None
    assert tasks_needed(5.0, 0.3, 0.95) == 6


def test_the_plan_warns_below_the_floor_and_when_the_target_is_out_of_reach() -> None:
    small = plan_suite(3, 3, 0.95, 0.0)
    assert not small.decidable
    assert any("never decide" in line for line in small.lines(0.1))
    large = plan_suite(200, 3, 0.95, 0.0)
    assert large.decidable and not any("warning" in line for line in large.lines(0.1))
    middle = plan_suite(20, 1, 0.95, 0.0)
    assert any("cannot detect a true improvement of 0.1" in line for line in middle.lines(0.1))
    assert planned_spread(4) == pytest.approx(math.sqrt(0.15**2 + 0.5**2 / 4))
