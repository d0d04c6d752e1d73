"""Tolerant comparison of JavaScript numbers (``number-validation.ts``)."""

from __future__ import annotations

import math
import sys

__all__ = ["numbers_approximately_equal"]

_EPSILON = sys.float_info.epsilon  # Number.EPSILON, 2**-52


def _double(value: float) -> float:
    # A JavaScript number is a double: an integer too large for one is an infinity.
    if not isinstance(value, (int, float)):
        return math.nan  # not a number: equal to nothing
    try:
        return float.__float__(value) if isinstance(value, float) else float(int.__int__(value))
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def numbers_approximately_equal(left: float, right: float) -> bool:
    """True when two numbers differ by at most 16 ulps of the larger magnitude (at least
    ``16 * Number.EPSILON``), as ``numbersApproximatelyEqual``. NaN equals nothing, and
    neither does an infinity (the difference of two is NaN in JavaScript too); an integer
    beyond the double range is an infinity. Anything but an ``int`` or ``float`` is not a
    number and equals nothing."""
    a, b = _double(left), _double(right)
    tolerance = _EPSILON * max(1.0, abs(a), abs(b)) * 16
    return abs(a - b) <= tolerance
