"""Finite numbers as zod's ``z.number()`` reads them from JSON, for the candidate models.

The rule is ``core.numbers``' (one rule for every number type of the package): an
integer keeps its exact form while it is safe, a larger one becomes the double
JavaScript would hold (so it digests as the reference digests it), one beyond the double
range is refused like ``1e400``, and booleans, strings and non-finite values are refused.
"""

from __future__ import annotations

from agent_interface.core.numbers import FiniteNumber
from agent_interface.core.numbers import NonNegativeNumber as NonNegativeNumber
from agent_interface.core.numbers import OpenUnitInterval as OpenUnitInterval
from agent_interface.core.numbers import UnitInterval as UnitInterval

__all__: list[str] = []  # number types for the candidate models, not root exports

Number = FiniteNumber
"""Any finite number."""
