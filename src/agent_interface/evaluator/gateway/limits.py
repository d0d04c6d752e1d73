"""The limits one run's model calls are metered against, and the price table's entry type.

:class:`GatewayLimits` holds the plan's signed model limits (``maxModelCalls``,
``maxInputTokens``, ``maxOutputTokens``, ``maxTotalTokens``, ``maxCostUsd``) as the
gateway enforces them; :meth:`GatewayLimits.from_task_limits` reads them from a task's
``limits`` (the wire model or its wire dictionary).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agent_interface.core.errors import ContractError

__all__ = ["GatewayLimits"]


@dataclass(frozen=True, slots=True)
class GatewayLimits:
    """A run's model limits; ``max_total_tokens`` ``None`` means no total limit.

    Construction refuses (``ContractError``) a negative or non-integral count and a
    negative or non-finite cost.
    """

    max_model_calls: int
    max_input_tokens: int
    max_output_tokens: int
    max_total_tokens: int | None
    max_cost_usd: float

    def __post_init__(self) -> None:
        for name in ("max_model_calls", "max_input_tokens", "max_output_tokens", "max_total_tokens"):
            value = getattr(self, name)
            if value is None and name == "max_total_tokens":
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ContractError.single("/" + _wire(name), "gateway_limit", "a model limit is a non-negative integer")
        cost = self.max_cost_usd
        if isinstance(cost, bool) or not isinstance(cost, (int, float)) or not math.isfinite(cost) or cost < 0:
            raise ContractError.single("/maxCostUsd", "gateway_limit", "maxCostUsd is a finite non-negative number")

    @property
    def max_cost_usd_nanos(self) -> int:
        """``max_cost_usd`` in nano-dollars (rounded down: a limit is never widened)."""
        return math.floor(self.max_cost_usd * 1_000_000_000)

    @classmethod
    def from_task_limits(cls, limits: Any) -> GatewayLimits:
        """The model limits of a task's ``limits``: a wire model (``to_wire()``) or its wire dict."""
        wire: Mapping[str, Any] = limits.to_wire() if hasattr(limits, "to_wire") else limits
        return cls(
            max_model_calls=int(wire["maxModelCalls"]),
            max_input_tokens=int(wire["maxInputTokens"]),
            max_output_tokens=int(wire["maxOutputTokens"]),
            max_total_tokens=None if wire.get("maxTotalTokens") is None else int(wire["maxTotalTokens"]),
            max_cost_usd=float(wire["maxCostUsd"]),
        )


def _wire(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)
