"""Holm's step-down adjustment across a family of one-sided claims.

The measured comparison makes two kinds of claim about the policy's critical dimensions:

* ``ship`` needs *every* critical dimension non-inferior *and* the overall improvement.
  A decision that requires all of its tests to reject is an intersection-union test
  (Berger, 1982): its false-ship rate is at most the level of each test, so no adjustment
  applies there, and adjusting would only give up power.
* ``hold`` is claimed when *any* critical dimension regressed beyond the tolerance: a
  union of claims, whose family-wise error grows with the number of dimensions. Those
  claims are adjusted here with Holm's procedure (Holm, 1979), which controls the
  family-wise error at ``alpha`` under any dependence between the dimensions.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["holm_rejections"]


def holm_rejections(p_values: Sequence[float], alpha: float) -> list[bool]:
    """Which claims Holm's step-down procedure accepts at family-wise level ``alpha``.

    The ``k``-th smallest p-value (from 0) is compared with ``alpha / (m - k)``; the first
    that fails stops the procedure. Ties keep their input order, so the result is
    deterministic.
    """
    order = sorted(range(len(p_values)), key=lambda index: (p_values[index], index))
    rejected = [False] * len(p_values)
    count = len(p_values)
    for rank, index in enumerate(order):
        if not p_values[index] <= alpha / (count - rank):
            break
        rejected[index] = True
    return rejected
