"""Finite numbers as zod's ``z.number()`` reads them from JSON.

JavaScript has one number type: an integer literal beyond 2**53 is read as the nearest
double (``9007199254740993`` becomes ``9007199254740992``) and one beyond the double range
is ``Infinity``, which ``z.number()`` refuses. These types give the same reading:
an integer keeps its exact form while it is safe, a larger one becomes the double
JavaScript would hold (so it digests as the reference digests it), and booleans, strings
and non-finite values are refused.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, Field
from pydantic_core import PydanticCustomError

from agent_interface.core.canonical import MAX_SAFE_INTEGER
from agent_interface.core.surrogate_text import marker_transparent

__all__: list[str] = []  # number types for the candidate models, not root exports


@marker_transparent  # numbers only (core.surrogate_text)
def _as_js_number(value: Any) -> Any:
    if type(value) is int and abs(value) > MAX_SAFE_INTEGER:
        try:
            return float(value)
        except OverflowError:
            raise PydanticCustomError("finite_number", "number must be finite") from None
    return value


_JS_NUMBER = BeforeValidator(_as_js_number)

Number = Annotated[int | float, _JS_NUMBER]
"""Any finite number."""

NonNegativeNumber = Annotated[
    Annotated[int, Field(ge=0)] | Annotated[float, Field(ge=0)], _JS_NUMBER
]
"""A finite number at least 0 (``z.number().finite().nonnegative()``)."""

OpenUnitInterval = Annotated[
    Annotated[int, Field(gt=0, lt=1)] | Annotated[float, Field(gt=0, lt=1)], _JS_NUMBER
]
"""A finite number strictly between 0 and 1 (a confidence level)."""

UnitInterval = Annotated[
    Annotated[int, Field(ge=0, le=1)] | Annotated[float, Field(ge=0, le=1)], _JS_NUMBER
]
"""A finite number in [0, 1] (a normalized score)."""
