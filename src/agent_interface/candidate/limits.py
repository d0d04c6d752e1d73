"""Proof that an execution stayed within its frozen limits (``agent-execution-limits.ts``).

An :class:`AgentExecutionLimitObservation` holds the observable facts (wall duration,
steps, exact spend). Each limit is checked against them: timeout, steps, model calls,
input tokens (accounted input, as settled), output tokens, the optional ``maxTotalTokens``
over accounted input plus output, and the cost in dollars (nano-dollars / 1e9). Reaching a
limit is allowed; exceeding it is refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from agent_interface.candidate.numbers import NonNegativeNumber
from agent_interface.candidate.outcomes import AgentCandidateFixedSpend
from agent_interface.core.canonical import es_number
from agent_interface.core.contract_limits import NonNegativeSafeInt
from agent_interface.core.errors import ContractError, ContractIssue, Refinement, json_pointer
from agent_interface.core.model import WireModel
from agent_interface.core.registry import register_wire_models

__all__ = [
    "AgentExecutionLimitObservation",
    "ExecutionLimitViolation",
    "ExecutionLimits",
    "agent_execution_limit_violations",
    "assert_agent_execution_within_limits",
    "refine_agent_execution_within_limits",
]


class ExecutionLimits(Protocol):
    """The limit fields read here (``AgentCandidateExecutionLimits``)."""

    @property
    def timeout_ms(self) -> int: ...
    @property
    def max_steps(self) -> int: ...
    @property
    def max_model_calls(self) -> int: ...
    @property
    def max_input_tokens(self) -> int: ...
    @property
    def max_output_tokens(self) -> int: ...
    @property
    def max_total_tokens(self) -> int | None: ...
    @property
    def max_cost_usd(self) -> float: ...


class AgentExecutionLimitObservation(WireModel):
    """The observable facts that prove a frozen limit was respected."""

    duration_ms: NonNegativeNumber
    steps: NonNegativeSafeInt
    usage: AgentCandidateFixedSpend


@dataclass(frozen=True, slots=True)
class ExecutionLimitViolation:
    """One limit exceeded: where (relative to the observation), what, and by how much."""

    path: tuple[str, ...]
    label: str
    actual: float
    maximum: float

    @property
    def message(self) -> str:
        return (
            f"execution {self.label} {_number(self.actual)} exceeds frozen limit "
            f"{_number(self.maximum)}"
        )


def _number(value: float) -> str:
    return es_number(float(value)) if isinstance(value, float) else str(value)


def agent_execution_limit_violations(
    limits: ExecutionLimits, observation: AgentExecutionLimitObservation
) -> list[ExecutionLimitViolation]:
    """Every limit the observation exceeds, in the reference's order."""
    usage = observation.usage
    checks = [
        ExecutionLimitViolation(("timing", "durationMs"), "durationMs", observation.duration_ms, limits.timeout_ms),
        ExecutionLimitViolation(("steps",), "steps", observation.steps, limits.max_steps),
        ExecutionLimitViolation(("usage", "modelCalls"), "modelCalls", usage.model_calls, limits.max_model_calls),
        ExecutionLimitViolation(("usage", "inputTokens"), "inputTokens", usage.input_tokens, limits.max_input_tokens),
        ExecutionLimitViolation(
            ("usage", "outputTokens"), "outputTokens", usage.output_tokens, limits.max_output_tokens
        ),
    ]
    if limits.max_total_tokens is not None:
        checks.append(
            ExecutionLimitViolation(
                ("usage", "totalTokens"),
                "totalTokens",
                usage.input_tokens + usage.output_tokens,
                limits.max_total_tokens,
            )
        )
    checks.append(
        ExecutionLimitViolation(
            ("usage", "costUsdNanos"), "costUsd", usage.cost_usd_nanos / 1_000_000_000, limits.max_cost_usd
        )
    )
    return [check for check in checks if check.actual > check.maximum]


def refine_agent_execution_within_limits(
    limits: ExecutionLimits,
    observation: AgentExecutionLimitObservation,
    issues: Refinement,
    *,
    path_prefix: tuple[str | int, ...] = (),
    usage_path: tuple[str | int, ...] = ("usage",),
) -> None:
    """Record one issue per exceeded limit, at the path of the observed value in the
    enclosing record (``usage_path`` replaces ``usage`` when spend lives elsewhere)."""
    for violation in agent_execution_limit_violations(limits, observation):
        if violation.path[0] == "usage":
            path = (*path_prefix, *usage_path, *violation.path[1:])
        else:
            path = (*path_prefix, *violation.path)
        issues.add(path, "execution_limit_exceeded", violation.message)


def assert_agent_execution_within_limits(
    limits: ExecutionLimits | Mapping[str, Any],
    observation: AgentExecutionLimitObservation | Mapping[str, Any],
) -> None:
    """Raise :class:`ContractError` unless the observation satisfies every limit."""
    parsed_limits = _parse_limits(limits)
    parsed = (
        observation
        if isinstance(observation, AgentExecutionLimitObservation)
        else AgentExecutionLimitObservation.parse_wire(observation)
    )
    violations = agent_execution_limit_violations(parsed_limits, parsed)
    if violations:
        raise ContractError(
            [
                ContractIssue(json_pointer(v.path), "execution_limit_exceeded", v.message)
                for v in violations
            ],
            subject="AgentExecutionLimitObservation",
        )


def _parse_limits(limits: ExecutionLimits | Mapping[str, Any]) -> ExecutionLimits:
    from agent_interface.candidate.task_terms import AgentCandidateExecutionLimits

    if isinstance(limits, AgentCandidateExecutionLimits):
        return limits
    if isinstance(limits, Mapping):
        return AgentCandidateExecutionLimits.parse_wire(limits)
    return AgentCandidateExecutionLimits.parse_wire(
        {
            key: value
            for key, value in {
                "timeoutMs": limits.timeout_ms,
                "maxSteps": limits.max_steps,
                "maxModelCalls": limits.max_model_calls,
                "maxInputTokens": limits.max_input_tokens,
                "maxOutputTokens": limits.max_output_tokens,
                "maxTotalTokens": limits.max_total_tokens,
                "maxCostUsd": limits.max_cost_usd,
            }.items()
            if value is not None
        }
    )


register_wire_models(AgentExecutionLimitObservation=AgentExecutionLimitObservation)
