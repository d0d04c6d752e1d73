"""The gateway's price table: what a model's tokens cost, versioned, per model.

Prices are integers in nano-dollars per token (US$1 per million tokens is 1000), so
cost arithmetic is exact. :data:`PRICE_TABLE_VERSION` names the table; a settlement
records the cost it computed from it with provenance ``"estimated"`` (the provider's
bill is the truth, the table an estimate of it). An upstream that reports the cost
itself (OpenRouter's ``usage.cost``) settles with provenance ``"observed"``; the
scripted upstream costs nothing, observed. A model not in the table has no price: the
gateway refuses its calls (``price_unknown``) unless the operator gives a price to the
upstream, because a cost limit could not be enforced before dispatch otherwise.

The entries are the providers' published list prices for standard (not batch, not
priority) requests; a cache write is priced as ordinary input.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from agent_interface.evaluator.gateway.served_model import dated_family

__all__ = ["PRICE_TABLE", "PRICE_TABLE_VERSION", "ModelPrice", "price_for"]

PRICE_TABLE_VERSION: Final = "tangle-gateway-prices/2026-12-06"


@dataclass(frozen=True, slots=True)
class ModelPrice:
    """Nano-dollars per token: uncached input, cached input (cache read), output.

    ``observed`` marks a price that is the bill itself (the scripted upstream's zero), so
    a settlement computed from it has provenance ``"observed"`` rather than ``"estimated"``.
    """

    input_nanos: int
    cached_input_nanos: int
    output_nanos: int
    observed: bool = False

    def cost_nanos(self, input_tokens: int, cached_input_tokens: int, output_tokens: int) -> int:
        """The cost of a call: uncached input, cached input and output at their prices."""
        cached = min(cached_input_tokens, input_tokens)
        return ((input_tokens - cached) * self.input_nanos + cached * self.cached_input_nanos
                + output_tokens * self.output_nanos)

    def worst_case_nanos(self, input_tokens: int, output_tokens: int) -> int:
        """The most a call of at most these token counts can cost (no input cached)."""
        return input_tokens * max(self.input_nanos, self.cached_input_nanos) + output_tokens * self.output_nanos


FREE: Final = ModelPrice(0, 0, 0, observed=True)
"""What the scripted upstream's calls cost: nothing, exactly."""

PRICE_TABLE: Final[Mapping[str, ModelPrice]] = {
    # OpenAI (US$ per million tokens: input / cached input / output)
    "gpt-4o": ModelPrice(2500, 1250, 10000),
    "gpt-4o-mini": ModelPrice(150, 75, 600),
    "gpt-4.1": ModelPrice(2000, 500, 8000),
    "gpt-4.1-mini": ModelPrice(400, 100, 1600),
    "gpt-4.1-nano": ModelPrice(100, 25, 400),
    "gpt-5": ModelPrice(1250, 125, 10000),
    "gpt-5-mini": ModelPrice(250, 25, 2000),
    "gpt-5-nano": ModelPrice(50, 5, 400),
    "o3": ModelPrice(2000, 500, 8000),
    "o4-mini": ModelPrice(1100, 275, 4400),
    # Anthropic (input / cache read / output)
    "claude-opus-4-1": ModelPrice(15000, 1500, 75000),
    "claude-opus-4": ModelPrice(15000, 1500, 75000),
    "claude-sonnet-4-5": ModelPrice(3000, 300, 15000),
    "claude-sonnet-4": ModelPrice(3000, 300, 15000),
    "claude-haiku-4-5": ModelPrice(1000, 100, 5000),
    "claude-3-5-haiku": ModelPrice(800, 80, 4000),
}

def price_for(model: str, table: Mapping[str, ModelPrice] = PRICE_TABLE) -> ModelPrice | None:
    """The price of ``model``: its entry, or the entry of the family of a dated snapshot
    (``gpt-4o-2024-08-06``, ``claude-sonnet-4-5-20250929``, ``...-latest``); else ``None``."""
    if model in table:
        return table[model]
    family = dated_family(model)
    return None if family is None else table.get(family)
