"""One run's account at the gateway: its token, grants, reservations, records and settlement.

Metering is by reservation. Before a call is dispatched, :meth:`GatewayRun.reserve`
checks and takes, in one step with no ``await`` inside it (so no other call of the run
can interleave on the event loop), one model call, the request's input bound, its
output cap and its worst-case cost; the request is refused when any would exceed what
the settled calls and the other reservations leave. After the answer,
:meth:`GatewayRun.finish` replaces the reservation by what the upstream counted; a
dispatched call the upstream reported no usage for keeps its whole reservation
consumed (its usage is unknown, so the run cannot spend it twice) and is unsettled.
"""

from __future__ import annotations

import secrets
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Final

from agent_interface.evaluator.gateway.limits import GatewayLimits
from agent_interface.evaluator.gateway.prices import PRICE_TABLE_VERSION, ModelPrice
from agent_interface.evaluator.gateway.records import Api, GatewaySettlement, ModelCallRecord
from agent_interface.evaluator.gateway.request_rewrite import RequestRefused

__all__ = ["DEFAULT_MAX_OUTPUT_TOKENS", "GatewayRun", "Reservation"]

DEFAULT_MAX_OUTPUT_TOKENS: Final = 8192
"""The output cap of a request that names none, when the run has more left than this."""


@dataclass(frozen=True, slots=True)
class Reservation:
    """What one call holds until it settles: input bound, output cap (all choices), worst cost."""

    input_tokens: int
    output_tokens: int
    cost_nanos: int
    cap_per_choice: int


def now_ms() -> int:
    """The wall clock in epoch milliseconds."""
    return int(time.time() * 1000)


class GatewayRun:
    """A run open at the gateway: calls bearing its token are metered against its limits.

    ``token`` is the run's ephemeral bearer (masked in the repr, refused after
    :meth:`settle`); ``calls`` holds every call in order of start, refusals included;
    ``events`` the trace events in order of end.
    """

    def __init__(self, *, run_id: str, requested_model: str, resolved: Mapping[str, Any],
                 limits: GatewayLimits, system_prompt: str = "", granted_models: frozenset[str] | None = None,
                 refusal_status: int = 400, default_max_output_tokens: int = DEFAULT_MAX_OUTPUT_TOKENS) -> None:
        self.token = "gw-" + secrets.token_urlsafe(24)
        self.run_id = run_id
        self.requested_model = requested_model
        self.resolved = dict(resolved)
        self.resolved_model = str(self.resolved.get("model") or requested_model)
        self.snapshot = self.resolved.get("snapshot")
        self.limits = limits
        self.system_prompt = system_prompt
        self.granted = frozenset(granted_models) if granted_models else frozenset({requested_model})
        self.refusal_status = refusal_status
        self.default_max_output_tokens = default_max_output_tokens
        self.calls: list[ModelCallRecord] = []
        self.events: list[dict[str, Any]] = []
        self.in_flight = 0
        self.closed = False
        self.price: ModelPrice | None = None
        """The resolved model's price (set by the gateway from its upstream)."""
        self.injected_tokens = 0
        """Input tokens the injected system prompt adds (the upstream's count or bound)."""
        self.peak_reserved_calls = 0
        self._reserved = [0, 0, 0, 0]  # calls, input, output, cost
        self._used = [0, 0, 0, 0]
        self._settlement: GatewaySettlement | None = None
        self.on_settle: Callable[[GatewayRun], None] | None = None
        """Called once when the run settles (the gateway forgets the run's token then)."""

    def __repr__(self) -> str:
        return (f"GatewayRun(run_id={self.run_id!r}, token='gw-***', calls={len(self.calls)}, "
                f"closed={self.closed})")

    def launch_env(self, origin: str) -> dict[str, str]:
        """The variables an agent needs to reach the gateway as this run (token included)."""
        base = origin.rstrip("/") + "/r/" + self.token
        return {"OPENAI_BASE_URL": base + "/v1", "ANTHROPIC_BASE_URL": base,
                "OPENAI_API_KEY": self.token, "ANTHROPIC_API_KEY": self.token}

    # -- records -------------------------------------------------------------------

    def begin(self, api: Api, request_sha256: str, *, stream: bool = False) -> ModelCallRecord:
        """A new in-flight record, in order of start."""
        started = now_ms()
        record = ModelCallRecord(call_id="call-" + uuid.uuid4().hex, generation_id="gen-" + uuid.uuid4().hex,
                                 status="in_flight", started_at_ms=started, ended_at_ms=started,
                                 request_sha256=request_sha256, api=api, stream=stream)
        self.calls.append(record)
        self.in_flight += 1
        return record

    def refuse(self, record: ModelCallRecord, code: str, status: int) -> None:
        """Close ``record`` as refused (never dispatched, not a model call)."""
        record.status = "failed"
        record.refusal = code
        record.http_status = status
        record.settled = True
        self._end(record)

    def _end(self, record: ModelCallRecord) -> None:
        record.ended_at_ms = max(now_ms(), record.started_at_ms)
        self.in_flight -= 1
        self.events.append(record.event())

    # -- metering ------------------------------------------------------------------

    def reserve(self, input_bound: int, requested_output: int | None, choices: int,
                price: ModelPrice | None) -> Reservation:
        """Take a reservation for one call, or raise :class:`RequestRefused` (see the module)."""
        limits = self.limits
        calls, used_in, used_out, used_cost = (u + r for u, r in zip(self._used, self._reserved, strict=True))
        if calls + 1 > limits.max_model_calls:
            raise RequestRefused("max_model_calls", "the run's model-call limit is reached")
        if used_in + input_bound > limits.max_input_tokens:
            raise RequestRefused("max_input_tokens", "the request's input bound exceeds the run's input tokens left")
        cap = (limits.max_output_tokens - used_out) // choices
        if cap < 1:
            raise RequestRefused("max_output_tokens", "the run's output-token limit is reached")
        if limits.max_total_tokens is not None:
            total_cap = (limits.max_total_tokens - used_in - used_out - input_bound) // choices
            if total_cap < 1:
                raise RequestRefused("max_total_tokens", "the run's total-token limit is reached")
            cap = min(cap, total_cap)
        cap = min(cap, requested_output if requested_output is not None else self.default_max_output_tokens)
        if price is None:
            raise RequestRefused("price_unknown", "the model has no price: its cost limit cannot be enforced")
        cost_left = limits.max_cost_usd_nanos - used_cost
        input_cost = price.worst_case_nanos(input_bound, 0)
        if price.output_nanos > 0:
            cap = min(cap, (cost_left - input_cost) // (price.output_nanos * choices))
        if input_cost > cost_left or cap < 1:
            raise RequestRefused("max_cost_usd", "the call's worst-case cost exceeds the run's cost left")
        reservation = Reservation(input_bound, cap * choices, price.worst_case_nanos(input_bound, cap * choices), cap)
        for index, value in enumerate((1, reservation.input_tokens, reservation.output_tokens,
                                       reservation.cost_nanos)):
            self._reserved[index] += value
        self.peak_reserved_calls = max(self.peak_reserved_calls, self._reserved[0] + self._used[0])
        return reservation

    def finish(self, record: ModelCallRecord, reservation: Reservation, *, status: str, reason: str | None,
               settled: bool) -> None:
        """Replace ``reservation`` by ``record``'s counted usage (or keep it all when unsettled)."""
        for index, value in enumerate((1, reservation.input_tokens, reservation.output_tokens,
                                       reservation.cost_nanos)):
            self._reserved[index] -= value
        record.status = status
        record.reason = reason
        record.settled = settled
        if settled:
            counted = (1, record.accounted_input_tokens, record.output_tokens, record.cost_usd_nanos)
        else:
            counted = (1, reservation.input_tokens, reservation.output_tokens, reservation.cost_nanos)
        for index, value in enumerate(counted):
            self._used[index] += value
        self._end(record)
        if record.served_match == "substituted":
            self.events.append({"event": "model.served_model_substituted", "atMs": record.ended_at_ms,
                                "callId": record.call_id, "resolvedModel": self.resolved_model,
                                "servedModel": record.served_model})

    # -- closing -------------------------------------------------------------------

    def settle(self) -> GatewaySettlement:
        """Close the run (later calls are refused) and return its account; idempotent."""
        if self._settlement is not None:
            return self._settlement
        self.closed = True
        calls = tuple(replace(record) for record in self.calls)
        dispatched = [c for c in calls if c.refusal is None]
        accounted = sum(c.accounted_input_tokens for c in dispatched)
        output = sum(c.output_tokens for c in dispatched)
        cost = sum(c.cost_usd_nanos for c in dispatched)
        limits = self.limits
        within = (len(dispatched) <= limits.max_model_calls and accounted <= limits.max_input_tokens
                  and output <= limits.max_output_tokens
                  and (limits.max_total_tokens is None or accounted + output <= limits.max_total_tokens)
                  and cost <= limits.max_cost_usd_nanos)
        self._settlement = GatewaySettlement(
            run_id=self.run_id, calls=calls, events=tuple(dict(event) for event in self.events), limits=limits,
            model_calls=len(dispatched), refused_calls=len(calls) - len(dispatched),
            unsettled_calls=sum(1 for c in dispatched if not c.settled or c.status == "in_flight"),
            input_tokens=sum(c.input_tokens for c in dispatched), accounted_input_tokens=accounted,
            output_tokens=output, cached_input_tokens=sum(c.cached_input_tokens for c in dispatched),
            reasoning_tokens=sum(c.reasoning_tokens for c in dispatched), cost_usd_nanos=cost,
            cost_provenance="observed" if all(c.cost_provenance == "observed" for c in dispatched) else "estimated",
            usage_within_limits=within,
            substituted_calls=sum(1 for c in dispatched if c.served_match == "substituted"),
            price_table_version=PRICE_TABLE_VERSION,
        )
        if self.on_settle is not None:
            self.on_settle(self)
        return self._settlement
