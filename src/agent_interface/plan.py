"""Durable plans: submission, the human decision, and the typed continuation (``plan.ts``).

A planning turn commits its plan before it may end; the next turn starts from a
typed :class:`PlanContinuation` carrying the exact plan, the decision and the
provider state committed with the submission. Trimmed strings are stored trimmed,
as zod's ``.trim()`` outputs them.
"""

from __future__ import annotations

import re
from typing import Annotated, Final, Literal

from pydantic import AfterValidator, Field
from pydantic_core import PydanticCustomError

from ._model import WireModel
from .contract_limits import Utf16Length, js_trim
from .registry import register_wire_models
from .usage import PositiveSafeInt, VersionOne

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

NonEmptyString = Annotated[str, Utf16Length(min=1)]
"""zod ``z.string().min(1)``."""


def _trim_non_empty(value: str) -> str:
    trimmed = js_trim(value)
    if not trimmed:
        raise PydanticCustomError("string_too_short", "string must not be empty or blank")
    return trimmed


TrimmedNonEmptyString = Annotated[str, AfterValidator(_trim_non_empty)]
"""zod ``z.string().trim().min(1)``: stored trimmed, blank refused."""

_DATE = (
    r"(?:(?:[0-9]{2}[2468][048]|[0-9]{2}[13579][26]|[0-9]{2}0[48]|[02468][048]00|[13579][26]00)-02-29"
    r"|[0-9]{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)"
    r"|(?:02)-(?:0[1-9]|1[0-9]|2[0-8])))"
)
_OFFSET_DATETIME_RE: Final = re.compile(
    _DATE
    + r"T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.[0-9]+)?(?:Z|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])"
)


def _check_offset_datetime(value: str) -> str:
    if _OFFSET_DATETIME_RE.fullmatch(value) is None:
        raise PydanticCustomError(
            "iso_datetime",
            "must be an ISO 8601 datetime with Z or an offset, like 2026-01-31T12:00:00+02:00",
        )
    return value


OffsetDatetime = Annotated[str, AfterValidator(_check_offset_datetime)]
"""zod ``z.string().datetime({ offset: true })``."""


class PlanProviderStateClaudeCode(WireModel):
    kind: Literal["claude-code"]
    version: VersionOne
    native_session_id: NonEmptyString


class PlanProviderStateCodex(WireModel):
    kind: Literal["codex"]
    version: VersionOne
    thread_id: NonEmptyString


class PlanProviderStateOpencode(WireModel):
    kind: Literal["opencode"]
    version: VersionOne


PlanProviderState = Annotated[
    PlanProviderStateClaudeCode | PlanProviderStateCodex | PlanProviderStateOpencode,
    Field(discriminator="kind"),
]
"""Credential-free provider correlation committed with a plan (closed union)."""


class DurablePlan(WireModel):
    """A plan committed by the runtime before the planning turn may end."""

    id: NonEmptyString
    revision: PositiveSafeInt
    title: TrimmedNonEmptyString | None = None
    body: TrimmedNonEmptyString
    submitted_at: OffsetDatetime


class PlanSubmission(WireModel):
    """Provider-originated data needed to commit a plan exactly once."""

    title: TrimmedNonEmptyString | None = None
    body: TrimmedNonEmptyString
    source_tool_call_id: NonEmptyString
    provider_state: PlanProviderState


class PlanDecisionApproved(WireModel):
    outcome: Literal["approved"]


class PlanDecisionRejected(WireModel):
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
    type: Literal["completed"]


class AgentExecutionOutcomeAwaitingPlanDecision(WireModel):
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
    DurablePlan=DurablePlan,
    PlanSubmission=PlanSubmission,
    PlanDecision=PlanDecision,
    PlanContinuation=PlanContinuation,
    AgentExecutionOutcome=AgentExecutionOutcome,
)
