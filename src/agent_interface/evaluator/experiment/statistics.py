"""The paired statistics an evaluation policy pre-registers, as pure numpy functions.

* :func:`sequential_mean` is the mean exactly as the contract's checker recomputes it
  (left-to-right float sum, then one division), so a reported mean is never off by a ulp.
* :func:`paired_bootstrap_means` is a two-stage paired bootstrap: each resample draws the
  suite's tasks with replacement, then each drawn task's paired repetitions with
  replacement, and takes the mean of every metric's per-pair deltas over the drawn pairs.
  The draws come from ``numpy.random.Generator(PCG64(seed mod 2**64))`` in fixed blocks of
  :data:`BLOCK` resamples and depend only on the task sizes, never on the values: the same
  cells always give the same numbers, and negating the deltas (swapping the arms) negates
  every resample exactly. Sums are ``numpy.bincount`` accumulations (sequential, no BLAS).
* :func:`percentile_interval` takes symmetric order statistics of the resampled means, so
  the interval of negated deltas is exactly the negated interval (the comparison's rule
  before issue 43; the calibration harness keeps it for the "before" figures). The
  comparison's intervals are made by :mod:`.inference`, its power by :mod:`.power`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "BLOCK",
    "SPREAD_FLOOR",
    "paired_bootstrap_means",
    "percentile_interval",
    "sequential_mean",
]

BLOCK: Final = 128
"""Resamples drawn per block; fixed, because the draw order depends on it."""

SPREAD_FLOOR: Final = 1e-9
"""A resampled spread at or below this (rounding noise on a score scale) counts as none."""


def sequential_mean(values: Sequence[float]) -> float:
    """The mean as the contract's checker computes it: a left-to-right sum divided by the count."""
    total: float = 0
    for value in values:
        total += value
    return total / len(values)


def paired_bootstrap_means(
    deltas: NDArray[np.float64],
    task_sizes: Sequence[int],
    resamples: int,
    seed: int,
) -> NDArray[np.float64]:
    """Resampled means of each column of ``deltas`` (pairs x metrics, pairs grouped by task
    in ``task_sizes`` order), shape ``(resamples, metrics)``.

    Every task size must be positive and their total the number of rows.
    """
    sizes = np.asarray(task_sizes, dtype=np.int64)
    if sizes.ndim != 1 or sizes.size == 0 or bool((sizes <= 0).any()):
        raise ValueError("every task needs at least one pair")
    if int(sizes.sum()) != deltas.shape[0] or resamples <= 0:
        raise ValueError("task sizes must cover the pairs, and resamples must be positive")
    offsets = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    tasks = sizes.size
    metrics = deltas.shape[1]
    # PCG64 takes a non-negative seed; a policy's seed is any safe integer (two's complement).
    generator = np.random.Generator(np.random.PCG64(seed % 2**64))
    # Equal task sizes draw with a scalar bound: numpy gives the same stream, faster.
    uniform = int(sizes[0]) if bool((sizes == sizes[0]).all()) else None
    result = np.empty((resamples, metrics), dtype=np.float64)
    for start in range(0, resamples, BLOCK):
        block = min(BLOCK, resamples - start)
        drawn = generator.integers(0, tasks, size=(block, tasks))
        counts = sizes[drawn]
        flat = np.repeat(drawn.ravel(), counts.ravel())
        within = (
            generator.integers(0, uniform, size=flat.size)
            if uniform is not None
            else generator.integers(0, sizes[flat])
        )
        pairs = offsets[flat] + within
        owner = np.repeat(np.arange(block), counts.sum(axis=1))
        denominators = counts.sum(axis=1).astype(np.float64)
        for metric in range(metrics):
            sums = np.bincount(owner, weights=deltas[pairs, metric], minlength=block)
            result[start : start + block, metric] = sums / denominators
    return result


def percentile_interval(means: NDArray[np.float64], level: float) -> tuple[float, float]:
    """The ``level`` interval of resampled means: the order statistics ``k`` and
    ``R - 1 - k`` with ``k = floor(R * (1 - level) / 2)``."""
    ordered = np.sort(means)
    count = ordered.size
    low = min(math.floor(count * (1 - level) / 2), (count - 1) // 2)
    return float(ordered[low]), float(ordered[count - 1 - low])
