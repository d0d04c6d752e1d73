"""What a receipt records of a harness run: observed, not declared.

:func:`observe` puts side by side the harness and CLI version that actually ran (from the
binary, beside the version the bundle declares), the harness's own account of the run (exit
code, error status, self-reported usage) and the gateway's count of calls and tokens, the
source of truth; ``usage_agrees`` says whether the two counts match (``None`` when the
harness reported no usage). The harness's status is an error when its exit code *or* its
output says so, so an agent that exits 0 on an API error is not recorded as a success.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agent_interface.evaluator.gateway.records import GatewaySettlement
from agent_interface.evaluator.harness.adapter import HarnessOutcome, HarnessUsage

__all__ = ["HarnessObservation", "observe"]


@dataclass(frozen=True)
class HarnessObservation:
    """One harness run as observed (see the module); :meth:`to_wire` is its JSON record."""

    harness: str
    declared_version: str
    observed_version: str
    exit_code: int
    status: str
    error: str | None
    api_error_status: int | None
    self_reported: HarnessUsage | None
    gateway_calls: int
    gateway_refused_calls: int
    gateway_unsettled_calls: int
    gateway_input_tokens: int
    gateway_output_tokens: int
    usage_agrees: bool | None

    def to_wire(self) -> dict[str, Any]:
        """The record as JSON (camelCase keys; absent values omitted)."""
        record: dict[str, Any] = {
            "harness": self.harness, "declaredVersion": self.declared_version,
            "observedVersion": self.observed_version, "exitCode": self.exit_code, "status": self.status,
            "gateway": {"modelCalls": self.gateway_calls, "refusedCalls": self.gateway_refused_calls,
                        "unsettledCalls": self.gateway_unsettled_calls, "inputTokens": self.gateway_input_tokens,
                        "outputTokens": self.gateway_output_tokens},
        }
        if self.error is not None:
            record["error"] = self.error
        if self.api_error_status is not None:
            record["apiErrorStatus"] = self.api_error_status
        if self.self_reported is not None:
            usage = self.self_reported
            record["selfReported"] = {"inputTokens": usage.input_tokens, "outputTokens": usage.output_tokens,
                                      "cachedInputTokens": usage.cached_input_tokens,
                                      "reasoningTokens": usage.reasoning_tokens}
        if self.usage_agrees is not None:
            record["usageAgrees"] = self.usage_agrees
        return record


def observe(harness: str, *, declared_version: str, observed_version: str, outcome: HarnessOutcome,
            settlement: GatewaySettlement) -> HarnessObservation:
    """The observation of one run from the harness's outcome and the gateway's settlement."""
    usage = outcome.usage
    agrees = None if usage is None else (usage.input_tokens, usage.output_tokens) == (
        settlement.input_tokens, settlement.output_tokens)
    return HarnessObservation(
        harness=harness, declared_version=declared_version, observed_version=observed_version,
        exit_code=outcome.exit_code, status=outcome.status, error=outcome.error,
        api_error_status=outcome.api_error_status, self_reported=usage,
        gateway_calls=settlement.model_calls, gateway_refused_calls=settlement.refused_calls,
        gateway_unsettled_calls=settlement.unsettled_calls, gateway_input_tokens=settlement.input_tokens,
        gateway_output_tokens=settlement.output_tokens, usage_agrees=agrees,
    )
