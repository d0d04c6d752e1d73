"""What one candidate run cost and produced (``agent-candidate-outcome-schema.ts``).

* :class:`AgentCandidateFixedSpend` is exact fixed-point spend: whole tokens, calls and
  nano-dollars, each a nonnegative safe integer.
* :class:`AgentCandidateModelSettlementMaterial` is the router's terminal settlement: every
  call with its raw ``inputTokens`` and its ``accountedInputTokens``, plus the router's
  ``usageWithinLimits`` verdict. Its ``usage`` must equal the exact per-call aggregate, and
  the aggregate input total is the *accounted* input, so limits cannot be recomputed from
  raw provider input alone.
* :class:`AgentCandidateTaskOutcomeMaterial` is the captured result (a workspace change or a
  bounded typed output); :class:`AgentCandidateBenchmarkResultMaterial` is its grading.
* Each ``*Evidence`` record binds its material to a captured artifact whose hash equals the
  evidence digest. Like the reference, the schema does not recompute that digest from the
  material: the integrity verifier that fetches the artifact does.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Final, Literal

from pydantic import Field, model_validator

from agent_interface.candidate.numbers import UnitInterval
from agent_interface.core.canonical import MAX_SAFE_INTEGER, Sha256Digest, is_canonical_json_value
from agent_interface.core.contract_limits import (
    NonNegativeSafeInt,
    PositiveSafeInt,
    Utf16Length,
)
from agent_interface.core.errors import Refinement
from agent_interface.core.model import WireList, WireModel
from agent_interface.core.registry import register_wire_models

__all__ = [
    "AgentCandidateBenchmarkDimension",
    "AgentCandidateCostProvenance",
    "AgentCandidateFixedSpend",
    "AgentCandidateModelSettlementCall",
    "BenchmarkScore",
]

AgentCandidateCostProvenance = Literal["observed", "estimated"]

SettlementIdentifier = Annotated[str, Utf16Length(min=1, max=256)]
"""A router-assigned identifier: 1..256 UTF-16 code units."""

BenchmarkScore = UnitInterval
"""A normalized score in [0, 1]."""

_DIMENSION_NAME_RE: Final = re.compile(r"[a-z0-9]+(?:[._-][a-z0-9]+)*")
DimensionName = Annotated[str, Field(pattern=r"^[a-z0-9]+(?:[._-][a-z0-9]+)*$")]
"""A normalized lowercase dimension identifier (``tests``, ``code.lint``)."""


class AgentCandidateFixedSpend(WireModel):
    """Exact spend of one arm or one grading: whole tokens, calls and nano-dollars."""

    input_tokens: NonNegativeSafeInt
    output_tokens: NonNegativeSafeInt
    cached_input_tokens: NonNegativeSafeInt
    reasoning_tokens: NonNegativeSafeInt
    model_calls: NonNegativeSafeInt
    cost_usd_nanos: NonNegativeSafeInt
    cost_provenance: AgentCandidateCostProvenance


class AgentCandidateModelSettlementCall(WireModel):
    """One router call as settled: raw and accounted input, output, cache, cost."""

    call_id: SettlementIdentifier
    generation_id: SettlementIdentifier
    trace_span_id: SettlementIdentifier
    status: Literal["succeeded", "failed"]
    model: SettlementIdentifier
    started_at_ms: PositiveSafeInt
    ended_at_ms: PositiveSafeInt
    input_tokens: NonNegativeSafeInt
    accounted_input_tokens: NonNegativeSafeInt
    output_tokens: NonNegativeSafeInt
    cached_input_tokens: NonNegativeSafeInt
    reasoning_tokens: NonNegativeSafeInt
    cost_usd_nanos: NonNegativeSafeInt
    cost_provenance: AgentCandidateCostProvenance

    @model_validator(mode="after")
    def _router_identity_and_order(self) -> AgentCandidateModelSettlementCall:
        issues = Refinement("AgentCandidateModelSettlementCall")
        if self.trace_span_id != self.generation_id:
            issues.add(
                ("traceSpanId",),
                "settlement_trace_span",
                "model settlement trace span id must equal the router generation id",
            )
        if self.ended_at_ms < self.started_at_ms:
            issues.add(
                ("endedAtMs",),
                "settlement_call_order",
                "model settlement call cannot end before it starts",
            )
        issues.check()
        return self


class AgentCandidateBenchmarkDimension(WireModel):
    """One named, normalized grading dimension."""

    name: DimensionName
    score: BenchmarkScore


_SUMMED_FIELDS: Final = ("output_tokens", "cached_input_tokens", "reasoning_tokens", "cost_usd_nanos")


def _wire_name(field: str) -> str:
    head, *rest = field.split("_")
    return head + "".join(part.title() for part in rest)


def refine_model_settlement(
    calls: tuple[AgentCandidateModelSettlementCall, ...],
    resolved_model: str,
    usage: AgentCandidateFixedSpend,
    issues: Refinement,
) -> None:
    """Settlement rules: unique router identities, the resolved model on every call,
    accounted input never below raw input, and ``usage`` equal to the exact aggregate
    (input counted as accounted input)."""
    seen: dict[str, set[str]] = {"callId": set(), "traceSpanId": set(), "generationId": set()}
    totals: dict[str, int] = {"input_tokens": 0, **{field: 0 for field in _SUMMED_FIELDS}}
    for index, call in enumerate(calls):
        for key, value, what in (
            ("callId", call.call_id, "call ids"),
            ("traceSpanId", call.trace_span_id, "trace span ids"),
            ("generationId", call.generation_id, "generation ids"),
        ):
            if value in seen[key]:
                issues.add(
                    ("calls", index, key),
                    "settlement_duplicate_identity",
                    f"model settlement {what} must be unique",
                )
            seen[key].add(value)
        if call.model != resolved_model:
            issues.add(
                ("calls", index, "model"),
                "settlement_model",
                "settled call model must match the resolved single model",
            )
        if call.accounted_input_tokens < call.input_tokens:
            issues.add(
                ("calls", index, "accountedInputTokens"),
                "settlement_accounted_input",
                "accounted input tokens cannot be less than reported input tokens",
            )
        for field in _SUMMED_FIELDS:
            total = totals[field] + getattr(call, field)
            if total > MAX_SAFE_INTEGER:
                issues.add(
                    ("calls", index, _wire_name(field)),
                    "settlement_unsafe_total",
                    f"model settlement {_wire_name(field)} total exceeds safe integer range",
                )
            else:
                totals[field] = total
        accounted = totals["input_tokens"] + call.accounted_input_tokens
        if accounted > MAX_SAFE_INTEGER:
            issues.add(
                ("calls", index, "accountedInputTokens"),
                "settlement_unsafe_total",
                "model settlement accounted input total exceeds safe integer range",
            )
        else:
            totals["input_tokens"] = accounted
    provenance = "estimated" if any(c.cost_provenance == "estimated" for c in calls) else "observed"
    if (
        usage.input_tokens != totals["input_tokens"]
        or any(getattr(usage, field) != totals[field] for field in _SUMMED_FIELDS)
        or usage.model_calls != len(calls)
        or usage.cost_provenance != provenance
    ):
        issues.add(
            ("usage",),
            "settlement_usage_aggregate",
            "model settlement usage must equal the exact per-call aggregate",
        )


def refine_canonical(model: WireModel, issues: Refinement, what: str) -> None:
    """Refuse a record holding a value RFC 8785 cannot serialize (a lone surrogate)."""
    if not is_canonical_json_value(model.model_dump(by_alias=True)):
        issues.add((), "canonical_json", f"{what} must contain only RFC 8785 JSON values")


register_wire_models(
    AgentCandidateFixedSpend=AgentCandidateFixedSpend,
    AgentCandidateModelSettlementCall=AgentCandidateModelSettlementCall,
    AgentCandidateBenchmarkDimension=AgentCandidateBenchmarkDimension,
)
_ = (Any, WireList, Sha256Digest, _DIMENSION_NAME_RE)
