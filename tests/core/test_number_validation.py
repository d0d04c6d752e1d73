"""numbers_approximately_equal: the reference's 16-epsilon relative tolerance."""

from __future__ import annotations

import math
import sys

import pytest

from agent_interface.core.number_validation import numbers_approximately_equal

EPS = sys.float_info.epsilon


@pytest.mark.parametrize(
    ("left", "right", "expected"),
    [
        (0.1 + 0.2, 0.3, True),
        (1, 1 + 16 * EPS, True),
        (1, 1 + 32 * EPS, False),
        (0, 16 * EPS, True),
        (0, 17 * EPS, False),
        (1e20, 1e20 + 1e5, True),  # relative to the larger magnitude
        (1e20, 1.001e20, False),
        (-2.5, -2.5, True),
        (2**60, 2**60 + 1, True),  # integers compare as doubles
        (10**400, math.inf, False),  # inf - inf is NaN, as in JavaScript
        (math.inf, 5, True),  # JavaScript: Infinity <= Infinity
        (math.nan, math.nan, False),
        (1, math.nan, False),
    ],
)
def test_tolerance(left: float, right: float, expected: bool) -> None:
    assert numbers_approximately_equal(left, right) is expected
