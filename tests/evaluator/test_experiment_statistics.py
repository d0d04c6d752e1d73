"""The pure statistics of the measured comparison: determinism, exact sign symmetry, the
interval's order statistics."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_interface.evaluator.experiment.statistics import (
    paired_bootstrap_means,
    percentile_interval,
    sequential_mean,
)

scores = st.floats(min_value=-1, max_value=1, allow_nan=False)
shapes = st.lists(st.integers(min_value=1, max_value=4), min_size=1, max_size=6)


@st.composite
def samples(draw: st.DrawFn) -> tuple[np.ndarray, list[int]]:
    sizes = draw(shapes)
    values = draw(st.lists(scores, min_size=sum(sizes), max_size=sum(sizes)))
    return np.array(values, dtype=np.float64).reshape(-1, 1), sizes


@settings(max_examples=60, deadline=None)
@given(samples(), st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1))
def test_same_values_and_seed_give_the_same_resamples(sample: tuple[np.ndarray, list[int]], seed: int) -> None:
    deltas, sizes = sample
    first = paired_bootstrap_means(deltas, sizes, 300, seed)
    second = paired_bootstrap_means(deltas.copy(), list(sizes), 300, seed)
    assert first.tobytes() == second.tobytes()


@settings(max_examples=60, deadline=None)
@given(samples(), st.integers(min_value=0, max_value=2**32))
def test_negated_deltas_negate_every_resample_and_the_interval(
    sample: tuple[np.ndarray, list[int]], seed: int
) -> None:
    deltas, sizes = sample
    forward = paired_bootstrap_means(deltas, sizes, 257, seed)
    backward = paired_bootstrap_means(-deltas, sizes, 257, seed)
    assert (forward == -backward).all()
    lower, upper = percentile_interval(forward[:, 0], 0.9)
    assert percentile_interval(backward[:, 0], 0.9) == (-upper, -lower)


@settings(max_examples=60, deadline=None)
@given(samples())
def test_resampled_means_stay_within_the_observed_range(sample: tuple[np.ndarray, list[int]]) -> None:
    deltas, sizes = sample
    means = paired_bootstrap_means(deltas, sizes, 200, 7)[:, 0]
    assert means.min() >= deltas.min() - 1e-12
    assert means.max() <= deltas.max() + 1e-12


def test_one_task_resamples_its_repetitions() -> None:
    means = paired_bootstrap_means(np.array([[0.0], [1.0], [0.0], [1.0]]), [4], 2000, 1)[:, 0]
    assert 0.4 < means.mean() < 0.6
    assert means.std() > 0.1


def test_one_repetition_per_task_resamples_tasks() -> None:
    means = paired_bootstrap_means(np.array([[0.0], [1.0], [2.0]]), [1, 1, 1], 1000, 3)[:, 0]
    # each mean is an average of three draws of {0, 1, 2}: a multiple of 1/3
    assert np.allclose(np.round(means * 3), means * 3)


def test_a_different_seed_gives_different_resamples() -> None:
    deltas = np.arange(12, dtype=np.float64).reshape(-1, 1)
    first = paired_bootstrap_means(deltas, [3, 3, 3, 3], 200, 1)
    second = paired_bootstrap_means(deltas, [3, 3, 3, 3], 200, 2)
    assert first.tobytes() != second.tobytes()


@pytest.mark.parametrize(
    ("sizes", "rows"), [([], 0), ([0, 2], 2), ([2, 2], 3)]
)
def test_task_sizes_must_cover_the_pairs(sizes: list[int], rows: int) -> None:
    with pytest.raises(ValueError):
        paired_bootstrap_means(np.zeros((rows, 1)), sizes, 100, 1)


def test_the_interval_is_the_symmetric_order_statistics() -> None:
    means = np.arange(2000, dtype=np.float64)
    assert percentile_interval(means, 0.95) == (50.0, 1949.0)
    assert percentile_interval(np.array([3.0]), 0.95) == (3.0, 3.0)
    assert percentile_interval(np.array([2.0, 1.0]), 0.5) == (1.0, 2.0)


def test_sequential_mean_adds_left_to_right() -> None:
    values = [0.1] * 10 + [1e16, -1e16]
    total = 0.0
    for value in values:
        total += value
    assert sequential_mean(values) == total / len(values)


@pytest.mark.parametrize("bound", [1, 2, 5, 7, 1000])
def test_a_scalar_bound_draws_the_same_stream_as_an_array_of_it(bound: int) -> None:
    """The equal-task-sizes path relies on it: the same numbers either way."""
    scalar = np.random.Generator(np.random.PCG64(9)).integers(0, bound, size=5000)
    array = np.random.Generator(np.random.PCG64(9)).integers(0, np.full(5000, bound))
    assert (scalar == array).all()


def test_the_resamples_are_the_documented_two_stage_draws() -> None:
    deltas = np.arange(8, dtype=np.float64).reshape(-1, 1)
    # tasks drawn for a block of resamples, then each drawn task's pairs (array bound)
    generator = np.random.Generator(np.random.PCG64(3))
    drawn = generator.integers(0, 2, size=(100, 2))  # one block of draws
    flat = np.repeat(drawn.ravel(), 4)
    pairs = np.array([0, 4])[flat] + generator.integers(0, np.full(flat.size, 4))
    expected = deltas[pairs, 0].reshape(100, 8).mean(axis=1)
    assert np.allclose(paired_bootstrap_means(deltas, [4, 4], 100, 3)[:, 0], expected)
