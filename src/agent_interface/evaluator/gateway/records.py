"""What the gateway records of each call and what a closed run settles to.

:class:`ModelCallRecord` is one call as the gateway saw it, refused and failed calls
included; :class:`GatewaySettlement` is the run's closed account: every record, the
usage totals of the calls that reached the upstream, how many of them the upstream did
not report usage for, and whether the totals are within the run's limits.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from agent_interface.evaluator.gateway.limits import GatewayLimits

__all__ = ["Api", "GatewaySettlement", "ModelCallRecord"]

Api = Literal["chat.completions", "responses", "messages", "messages.count_tokens", "models"]


@dataclass(slots=True)
class ModelCallRecord:
    """One call (epoch milliseconds; token counts as the upstream counted them).

    ``status`` is ``"in_flight"`` while the call runs, then ``"succeeded"`` (the upstream
    answered 2xx in full) or ``"failed"``. A refused call (``refusal`` set: a limit, an
    ungranted model, a malformed or oversized request) never reached the upstream, is
    ``"failed"`` with zero usage and is not a model call. ``input_tokens`` is the raw
    input (the accounted input less what the gateway itself added, the injected system
    prompt); ``settled`` says the upstream reported usage (a dispatched call with
    ``settled`` false makes the run an invalid capture). ``reason`` names why a
    dispatched call failed (``upstream_status``, ``upstream_unreachable``,
    ``upstream_timeout``, ``upstream_stream_cut``, ``response_too_large``,
    ``client_disconnected``, ``run_closed``, ...), never with a secret or a body.
    """

    call_id: str
    generation_id: str
    status: str
    started_at_ms: int
    ended_at_ms: int
    input_tokens: int = 0
    accounted_input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0
    reasoning_tokens: int = 0
    cost_usd_nanos: int = 0
    request_sha256: str = ""
    response_sha256: str = ""
    refusal: str | None = None
    api: Api = "chat.completions"
    requested_model: str = ""
    served_model: str | None = None
    served_match: str = "unknown"
    http_status: int = 0
    settled: bool = False
    cost_provenance: Literal["observed", "estimated"] = "observed"
    reason: str | None = None
    stream: bool = False
    upstream_attempts: int = 0
    reserved_input_tokens: int = 0
    reserved_output_tokens: int = 0

    @property
    def dispatched(self) -> bool:
        """Whether the call reached (or was sent towards) the upstream: a model call."""
        return self.refusal is None

    def wire_call(self, model: str) -> dict[str, Any]:
        """This call as a settlement's wire call (``agentCandidateModelSettlementCall``): a call
        that did not succeed (failed, or still in flight) is ``failed``; ``model`` is the
        resolved model the receipt names."""
        return {"callId": self.call_id, "generationId": self.generation_id, "traceSpanId": self.generation_id,
                "status": "succeeded" if self.status == "succeeded" else "failed", "model": model,
                "startedAtMs": self.started_at_ms, "endedAtMs": max(self.ended_at_ms, self.started_at_ms),
                "inputTokens": self.input_tokens, "accountedInputTokens": self.accounted_input_tokens,
                "outputTokens": self.output_tokens, "cachedInputTokens": self.cached_input_tokens,
                "reasoningTokens": self.reasoning_tokens, "costUsdNanos": self.cost_usd_nanos,
                "costProvenance": self.cost_provenance}

    def event(self) -> dict[str, Any]:
        """The trace event of this record (``model.call`` or ``model.request_refused``)."""
        if self.refusal is not None:
            return {"event": "model.request_refused", "atMs": self.ended_at_ms, "callId": self.call_id,
                    "api": self.api, "code": self.refusal, "httpStatus": self.http_status,
                    "requestedModel": self.requested_model, "requestSha256": self.request_sha256}
        return {
            "event": "model.call", "atMs": self.ended_at_ms, "startedAtMs": self.started_at_ms,
            "callId": self.call_id,
            "generationId": self.generation_id, "api": self.api, "status": self.status,
            "stream": self.stream, "httpStatus": self.http_status, "settled": self.settled,
            "reason": self.reason, "requestedModel": self.requested_model,
            "servedModel": self.served_model, "servedMatch": self.served_match,
            "requestSha256": self.request_sha256, "responseSha256": self.response_sha256,
            "inputTokens": self.input_tokens, "accountedInputTokens": self.accounted_input_tokens,
            "outputTokens": self.output_tokens, "cachedInputTokens": self.cached_input_tokens,
            "reasoningTokens": self.reasoning_tokens, "costUsdNanos": self.cost_usd_nanos,
            "costProvenance": self.cost_provenance, "upstreamAttempts": self.upstream_attempts,
        }


@dataclass(frozen=True, slots=True)
class GatewaySettlement:
    """A closed run's account; totals count the dispatched calls (refusals are not model calls).

    ``unsettled_calls`` counts dispatched calls whose usage the upstream did not report,
    and calls still in flight when the run closed: when it is not zero the run's usage is
    not known and its cell is an invalid capture (never a zero). ``usage_within_limits``
    compares the totals with the limits, as the specification's router reports it.
    """

    run_id: str
    calls: tuple[ModelCallRecord, ...]
    events: tuple[dict[str, Any], ...]
    limits: GatewayLimits
    model_calls: int
    refused_calls: int
    unsettled_calls: int
    input_tokens: int
    accounted_input_tokens: int
    output_tokens: int
    cached_input_tokens: int
    reasoning_tokens: int
    cost_usd_nanos: int
    cost_provenance: Literal["observed", "estimated"]
    usage_within_limits: bool
    substituted_calls: int = 0
    price_table_version: str = ""
    closed: bool = field(default=True)

    @property
    def valid(self) -> bool:
        """Whether the usage is known: every dispatched call settled (zero calls is a valid zero)."""
        return self.unsettled_calls == 0

    def wire_calls(self, model: str) -> list[dict[str, Any]]:
        """The dispatched calls as the settlement's wire calls (``agentCandidateModelSettlementCall``).

        Refusals are left out (they are not model calls); a call still in flight is
        ``failed``. ``model`` is the resolved model the receipt names.
        """
        return [c.wire_call(model) for c in self.calls if c.refusal is None]

    def usage(self) -> dict[str, Any]:
        """The usage totals in the settlement's wire names (``inputTokens`` is the accounted input)."""
        return {
            "inputTokens": self.accounted_input_tokens, "outputTokens": self.output_tokens,
            "cachedInputTokens": self.cached_input_tokens, "reasoningTokens": self.reasoning_tokens,
            "modelCalls": self.model_calls, "costUsdNanos": self.cost_usd_nanos,
            "costProvenance": self.cost_provenance,
        }
