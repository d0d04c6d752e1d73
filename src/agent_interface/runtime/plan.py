"""Durable plans: submission, the human decision, and the typed continuation (``plan.ts``).

A planning turn commits its plan before it may end; the next turn starts from a
typed :class:`PlanContinuation` carrying the exact plan, the decision and the
provider state committed with the submission. Trimmed strings are stored trimmed,
as zod's ``.trim()`` outputs them.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from agent_interface.core.model import WireModel
from agent_interface.core.registry import register_wire_models
from agent_interface.runtime.plan_record import (  # public here too
    DurablePlan,
    NonEmptyString,
    OffsetDatetime,
    TrimmedNonEmptyString,
)
from agent_interface.runtime.usage import VersionOne

__all__ = [
    "AgentExecutionOutcome",
    "AgentExecutionOutcomeAwaitingPlanDecision",
    "AgentExecutionOutcomeCompleted",
    "DurablePlan",
    "NonEmptyString",
    "OffsetDatetime",
    "PlanContinuation",
    "PlanDecision",
    "PlanDecisionApproved",
    "PlanDecisionRejected",
    "PlanProviderKind",
    "PlanProviderState",
    "PlanProviderStateClaudeCode",
    "PlanProviderStateCodex",
    "PlanProviderStateOpencode",
    "PlanSubmission",
    "TrimmedNonEmptyString",
]

PlanProviderKind = Literal["claude-code", "codex", "opencode"]
"""Harnesses with an enforceable durable-plan continuation contract."""

class PlanProviderStateClaudeCode(WireModel):
    """Claude Code's state for resuming a plan: its native session id."""

    kind: Literal["claude-code"]
    version: VersionOne
    native_session_id: NonEmptyString


class PlanProviderStateCodex(WireModel):
    """Codex's state for resuming a plan: its thread id."""

    kind: Literal["codex"]
    version: VersionOne
    thread_id: NonEmptyString


class PlanProviderStateOpencode(WireModel):
    """OpenCode's state for resuming a plan (a version only)."""

    kind: Literal["opencode"]
    version: VersionOne


PlanProviderState = Annotated[
    PlanProviderStateClaudeCode | PlanProviderStateCodex | PlanProviderStateOpencode,
    Field(discriminator="kind"),
]
"""Credential-free provider correlation committed with a plan (closed union)."""


class PlanSubmission(WireModel):
    """Provider-originated data needed to commit a plan exactly once."""

    title: TrimmedNonEmptyString | None = None
    body: TrimmedNonEmptyString
    source_tool_call_id: NonEmptyString
    provider_state: PlanProviderState


class PlanDecisionApproved(WireModel):
    """The user approved the plan."""

    outcome: Literal["approved"]


class PlanDecisionRejected(WireModel):
    """The user rejected the plan, with optional feedback."""

    outcome: Literal["rejected"]
    feedback: TrimmedNonEmptyString


PlanDecision = Annotated[
    PlanDecisionApproved | PlanDecisionRejected, Field(discriminator="outcome")
]
"""The human verdict that starts the next turn."""


class PlanContinuation(WireModel):
    """Typed server-originated continuation after a plan decision."""

    version: VersionOne
    plan: DurablePlan
    source_tool_call_id: NonEmptyString
    decision: PlanDecision
    provider_state: PlanProviderState


class AgentExecutionOutcomeCompleted(WireModel):
    """The execution ran to completion."""

    type: Literal["completed"]


class AgentExecutionOutcomeAwaitingPlanDecision(WireModel):
    """The execution stopped to wait for a decision on the plan it submitted."""

    type: Literal["awaiting_plan_decision"]
    plan: DurablePlan


AgentExecutionOutcome = Annotated[
    AgentExecutionOutcomeCompleted | AgentExecutionOutcomeAwaitingPlanDecision,
    Field(discriminator="type"),
]
"""Terminal meaning of a successfully completed adapter invocation."""


register_wire_models(
    PlanProviderKind=PlanProviderKind,
    PlanProviderState=PlanProviderState,
    PlanSubmission=PlanSubmission,
    PlanDecision=PlanDecision,
    PlanContinuation=PlanContinuation,
    AgentExecutionOutcome=AgentExecutionOutcome,
)
