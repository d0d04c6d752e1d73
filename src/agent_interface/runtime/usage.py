"""Token usage and how one turn's usage is totalled (``TokenUsage``, ``usageMode``).

A provider reports usage on its environment events with a ``usageMode``:

* ``"delta"``: the event carries new usage; it adds to the turn total.
* ``"cumulative"``: the event carries the turn total so far; it replaces the prior
  total, so repeating the same cumulative total adds nothing.
* absent: the aggregation semantics are unknown, and so is the total.

:class:`TurnUsageAggregator` applies those rules and never turns an unknown into a
zero.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Annotated, Any, Final, Literal

from pydantic import BeforeValidator
from pydantic_core import PydanticCustomError

from agent_interface.core.contract_limits import (
    NonNegativeNumber,
    NonNegativeSafeInt,
)
from agent_interface.core.errors import ContractError
from agent_interface.core.model import WireModel
from agent_interface.core.registry import register_wire_models
from agent_interface.core.surrogate_text import marker_transparent

__all__ = [
    "NullWhenSent",
    "TokenUsage",
    "TurnUsageAggregator",
    "TurnUsageTotal",
    "UsageMode",
    "UsageModeLiteral",
    "VersionOne",
    "add_token_usage",
]


@marker_transparent  # type only (core.surrogate_text)
def _refuse_bool(value: Any) -> Any:
    if isinstance(value, bool):
        raise PydanticCustomError("literal_error", "value must be the number 1, not a boolean")
    return value


VersionOne = Annotated[Literal[1], BeforeValidator(_refuse_bool)]
"""zod ``z.literal(1)`` (pydantic's strict ``Literal[1]`` alone would accept ``true``)."""


class NullWhenSent(WireModel):
    """Base for models with optional fields whose own schema accepts JSON ``null``
    (zod ``boundedJsonSchema.optional()``): such a field listed in ``wire_nullable``
    accepts an explicit ``null``, and ``to_wire()`` writes ``null`` only when it was
    sent; an absent field stays absent."""

    def _none_fields_present(self) -> Iterator[str]:
        yield from super()._none_fields_present()
        fields = type(self).model_fields
        for name in type(self).wire_nullable:
            if getattr(self, name) is None and name not in self.model_fields_set:
                yield fields[name].alias or name


class TokenUsage(WireModel):
    """Token usage and cost for one execution (``TokenUsage`` / ``ModelUsageSchema``)."""

    input_tokens: NonNegativeSafeInt
    output_tokens: NonNegativeSafeInt
    total_tokens: NonNegativeSafeInt | None = None
    cache_read_input_tokens: NonNegativeSafeInt | None = None
    cache_creation_input_tokens: NonNegativeSafeInt | None = None
    reasoning_tokens: NonNegativeSafeInt | None = None
    cost: NonNegativeNumber | None = None


UsageModeLiteral = Literal["delta", "cumulative"]


class UsageMode:
    """The two ``usageMode`` values (``AgentEnvironmentEvent.usageMode``)."""

    DELTA: Final = "delta"
    CUMULATIVE: Final = "cumulative"


_OPTIONAL_COUNTERS: Final = (
    "total_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
    "reasoning_tokens",
)


def add_token_usage(left: TokenUsage, right: TokenUsage) -> TokenUsage:
    """Sum two usages. An optional counter stays absent unless both sides report it:
    adding a reported count to an unreported one would state a floor as a total."""
    values: dict[str, Any] = {
        "input_tokens": left.input_tokens + right.input_tokens,
        "output_tokens": left.output_tokens + right.output_tokens,
    }
    for name in (*_OPTIONAL_COUNTERS, "cost"):
        a, b = getattr(left, name), getattr(right, name)
        if a is not None and b is not None:
            values[name] = a + b
    return TokenUsage(**values)


@dataclass(frozen=True, slots=True)
class TurnUsageTotal:
    """The aggregated usage of one turn.

    ``usage`` is ``None`` when the total is unknown: no usage was reported, or some
    usage arrived without a ``usageMode``. ``known`` says whether ``usage`` is a
    complete total for the events seen; ``unknown_reports`` counts mode-less reports.
    """

    usage: TokenUsage | None
    known: bool
    reports: int
    unknown_reports: int


@dataclass(slots=True)
class TurnUsageAggregator:
    """Totals the usage of one turn from its environment events.

    ``delta`` adds; ``cumulative`` replaces the total built so far (including deltas
    that preceded it, which it already contains); repeated cumulative totals add
    nothing; a report without a mode makes the total unknown for the rest of the
    turn. Nothing reported means unknown, never zero.

    >>> agg = TurnUsageAggregator()
    >>> agg.add(TokenUsage(input_tokens=3, output_tokens=1), "delta")
    >>> agg.add(TokenUsage(input_tokens=3, output_tokens=1), "delta")
    >>> agg.total().usage.input_tokens
    6
    """

    _usage: TokenUsage | None = None
    _reports: int = 0
    _unknown: int = 0
    _seen_ids: set[str] = field(default_factory=set)

    def add(
        self,
        usage: TokenUsage | None,
        mode: UsageModeLiteral | None,
        *,
        event_id: str | None = None,
    ) -> None:
        """Apply one usage report. ``event_id`` makes a replayed copy a no-op."""
        if usage is None:
            if mode is not None:
                raise ContractError.single(
                    "/usageMode", "usage_mode_without_usage", "usageMode requires usage"
                )
            return
        if event_id is not None:
            if event_id in self._seen_ids:
                return
            self._seen_ids.add(event_id)
        self._reports += 1
        if mode is None:
            self._unknown += 1
            return
        if mode == "cumulative":
            self._usage = usage
        elif mode == "delta":
            self._usage = usage if self._usage is None else add_token_usage(self._usage, usage)
        else:
            raise ContractError.single(
                "/usageMode", "usage_mode", "usageMode must be delta or cumulative"
            )

    def add_event(self, event: Any) -> None:
        """Apply an ``AgentEnvironmentEvent`` (its ``usage``, ``usage_mode`` and ``id``)."""
        self.add(
            getattr(event, "usage", None),
            getattr(event, "usage_mode", None),
            event_id=getattr(event, "id", None),
        )

    def total(self) -> TurnUsageTotal:
        known = self._unknown == 0 and self._usage is not None
        return TurnUsageTotal(
            usage=self._usage if known else None,
            known=known,
            reports=self._reports,
            unknown_reports=self._unknown,
        )


def aggregate_turn_usage(events: Any) -> TurnUsageTotal:
    """Total an iterable of environment events with :class:`TurnUsageAggregator`."""
    aggregator = TurnUsageAggregator()
    for event in events:
        aggregator.add_event(event)
    return aggregator.total()


__all__ += ["aggregate_turn_usage"]


register_wire_models(ModelUsage=TokenUsage)
