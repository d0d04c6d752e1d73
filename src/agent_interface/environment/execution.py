"""Execution inputs and results shared by adapters (``execution-types.ts``).

The reference declares these as TypeScript types; the models here validate the same
shapes strictly. Runtime-only members (``abortSignal``) have no wire form and are
left out. :class:`AgentExecutionInput` carries the turn's
:data:`~agent_interface.runtime.interaction_fields.RequestedInteractions` posture and its
:class:`~agent_interface.runtime.interaction_requests.InteractionExecutionBinding`.
"""

from __future__ import annotations

from pydantic import Field

from agent_interface.core.contract_limits import FiniteNumber
from agent_interface.core.model import (
    JsonObject,
    JsonValue,
    WireList,
    WireMap,
    WireModel,
)
from agent_interface.core.registry import register_wire_models
from agent_interface.profile.provider_config import ProviderModelConfig
from agent_interface.runtime.interaction_fields import RequestedInteractions
from agent_interface.runtime.interaction_requests import InteractionExecutionBinding
from agent_interface.runtime.parts import InputPart
from agent_interface.runtime.plan import (
    AgentExecutionOutcome,
    PlanContinuation,
)
from agent_interface.runtime.usage import TokenUsage

__all__ = [
    "AgentExecutionInput",
    "AgentExecutionResult",
    "ExecutionTiming",
    "TokenUsage",
    "ToolInvocation",
]


class ToolInvocation(WireModel):
    """One tool call made during an execution: the tool, its input, its result and whether it
    failed."""

    tool_name: str
    input: JsonValue
    result: JsonValue | None = None
    is_error: bool | None = None


class ExecutionTiming(WireModel):
    """When an execution started and completed, and how long it took in milliseconds."""

    started_at: FiniteNumber
    completed_at: FiniteNumber
    duration_ms: FiniteNumber


class AgentExecutionInput(WireModel):
    """One adapter invocation. ``interactions`` omitted = provider defaults;
    ``{}`` = no interaction kind enabled for this turn. ``headers`` are hidden from
    ``repr`` (they may carry credentials)."""

    message: str | None = None
    parts: WireList[InputPart] | None = None
    system_prompt: str
    user_id: str | None = None
    trace_id: str | None = None
    session_id: str | None = None
    interaction_binding: InteractionExecutionBinding | None = None
    interactions: RequestedInteractions | None = None
    workspace_root: str | None = None
    headers: WireMap[str] | None = Field(default=None, repr=False)
    model: ProviderModelConfig | None = None
    turn_id: str | None = None
    plan_continuation: PlanContinuation | None = None


class AgentExecutionResult(WireModel):
    """The result of one execution: its outcome, text, tool calls, reasoning, session, token usage
    and timing."""

    outcome: AgentExecutionOutcome
    text: str
    tool_invocations: WireList[ToolInvocation]
    reasoning: WireList[str] | None = None
    session_id: str | None = None
    metadata: JsonObject | None = None
    token_usage: TokenUsage | None = None
    timing: ExecutionTiming | None = None


register_wire_models(
    ToolInvocation=ToolInvocation,
    TokenUsage=TokenUsage,
    ExecutionTiming=ExecutionTiming,
    AgentExecutionInput=AgentExecutionInput,
    AgentExecutionResult=AgentExecutionResult,
)
