"""Numbers as JavaScript reads them from JSON: the one rule every number type follows.

JavaScript has one number type, the IEEE double. ``JSON.parse`` reads an integer literal
beyond 2**53 as the nearest double (``9007199254740993`` is ``9007199254740992``) and one
beyond the double range as ``Infinity``, exactly as it reads ``1e400``. zod then refuses
``Infinity`` everywhere, and ``z.number().int()`` refuses every integer beyond
±(2**53 - 1). So, in every number type of this package:

* **beyond the double range** (|n| ≥ 2**1024 − 2**970, where a double rounds to
  infinity): refused, like ``1e400``, whether the number is written as an integer or
  not. Free JSON (``JsonValue``, bounded JSON) refuses it too (``finite_number``).
* **integers (``z.number().int()``)**, the ``SafeInt`` family and ``WireInt``: only
  ±(2**53 − 1); ``5.0`` reads as 5; anything larger is refused (``less_than_equal``).
* **numbers (``z.number()``)**, the ``FiniteNumber`` family: a safe integer keeps its
  ``int`` form; a larger one is read as the double JavaScript holds (a ``float``), so it
  digests as the reference digests it.

The types are pydantic-core unions and bounds, checked without a Python call.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, Field, Strict
from pydantic_core import PydanticCustomError

from agent_interface.core.canonical import MAX_FINITE_INTEGER, MAX_SAFE_INTEGER
from agent_interface.core.fast_schema import core_equivalent, inner_schema

__all__ = [
    "FiniteNumber",
    "GreaterThanZeroSafeInt",
    "NonNegativeNumber",
    "NonNegativeSafeInt",
    "OpenUnitInterval",
    "PositiveNumber",
    "PositiveSafeInt",
    "SafeInt",
    "StrictFiniteNumber",
    "UnitInterval",
    "integral_float_to_int",
    "is_finite_integer",
    "js_integer",
]



def is_finite_integer(value: int) -> bool:
    """True when JavaScript reads the integer ``value`` as a finite number."""
    return -MAX_FINITE_INTEGER <= value <= MAX_FINITE_INTEGER


def js_integer(value: int) -> int | float:
    """An ``int`` as JavaScript reads it: itself while safe, else the nearest double; one
    beyond the double range is refused with ``finite_number``, as ``1e400`` is. For number
    types whose checks are written in Python."""
    if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
        return value
    if not is_finite_integer(value):
        raise PydanticCustomError("finite_number", "number must be finite")
    return float(value)


def integral_float_to_int(value: Any) -> Any:
    """Read an integral float as an int, as zod's ``.int()`` does (JSON ``5.0`` is 5).

    Any integral float is converted; the safe-integer bounds of the types below then
    refuse a large one with ``less_than_equal``.
    """
    if type(value) is float and value.is_integer():
        return int(value)
    return value


# The bounded integer alone: a float, even an integral one, takes the precise path.
core_equivalent(integral_float_to_int)(inner_schema)

_SAFE = Field(ge=-MAX_SAFE_INTEGER, le=MAX_SAFE_INTEGER)

# The bounds come before the float-reading validator so pydantic-core checks them itself.
SafeInt = Annotated[int, _SAFE, BeforeValidator(integral_float_to_int)]
"""zod ``z.number().int()``: a safe integer (``5.0`` on the wire reads as 5)."""

NonNegativeSafeInt = Annotated[
    int, Field(ge=0, le=MAX_SAFE_INTEGER), BeforeValidator(integral_float_to_int)
]
"""zod ``z.number().int().nonnegative()``; ``-1`` is refused with ``greater_than_equal``."""

PositiveSafeInt = Annotated[
    int, Field(ge=1, le=MAX_SAFE_INTEGER), BeforeValidator(integral_float_to_int)
]
"""zod ``z.number().int().positive()``; ``0`` is refused with ``greater_than_equal``."""

GreaterThanZeroSafeInt = Annotated[
    int, Field(gt=0, le=MAX_SAFE_INTEGER), BeforeValidator(integral_float_to_int)
]
"""The same values as :data:`PositiveSafeInt`, but ``0`` is refused with ``greater_than``
(the refusal code the workspace, exact-process, MCP and provider models report)."""

# A number: the safe integer keeps its int form; any other number is a finite double
# (pydantic's strict float reads an int as the nearest double and refuses one that
# overflows, as it refuses NaN and the infinities).
FiniteNumber = Annotated[int, _SAFE] | Annotated[float, Field(allow_inf_nan=False)]
"""zod ``z.number()`` (finite)."""

StrictFiniteNumber = (
    Annotated[int, Strict(), _SAFE] | Annotated[float, Strict(), Field(allow_inf_nan=False)]
)
""":data:`FiniteNumber`, strict by itself (for a type validated outside a strict model)."""

NonNegativeNumber = (
    Annotated[int, Field(ge=0, le=MAX_SAFE_INTEGER)]
    | Annotated[float, Field(ge=0, allow_inf_nan=False)]
)
"""zod ``z.number().finite().nonnegative()``."""

PositiveNumber = (
    Annotated[int, Field(gt=0, le=MAX_SAFE_INTEGER)]
    | Annotated[float, Field(gt=0, allow_inf_nan=False)]
)
"""zod ``z.number().positive()`` (finite)."""

OpenUnitInterval = (
    Annotated[int, Field(gt=0, lt=1)] | Annotated[float, Field(gt=0, lt=1, allow_inf_nan=False)]
)
"""A finite number strictly between 0 and 1 (a confidence level)."""

UnitInterval = (
    Annotated[int, Field(ge=0, le=1)] | Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]
)
"""A finite number in [0, 1] (a normalized score)."""
