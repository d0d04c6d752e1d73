"""A rejected execution that keeps what it observed (``execution-failure.ts``).

An adapter rejects with :class:`AgentExecutionError` and attaches an immutable
:class:`AgentExecutionFailureReceipt` of the usage and timing it actually observed.

* An absent field is unknown, never zero: ``{}`` is the honest receipt of a failure
  before inference.
* The receipt is a lower bound: the failed execution may have used more than it
  reports, and the receipt never claims an outcome or success.
* Hosts publishing a failed or cancelled execution keep it unchanged
  (:func:`publish_failed_execution`, :func:`execution_failure_receipt`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import Field

from agent_interface.core.contract_limits import (
    BoundedString,
    NonNegativeSafeInt,
)
from agent_interface.core.errors import ContractError
from agent_interface.core.model import WireModel
from agent_interface.core.registry import register_wire_models

__all__ = [
    "AgentExecutionError",
    "AgentExecutionFailureReceipt",
    "AgentExecutionFailureRecord",
    "ExecutionFailureTiming",
    "ObservedTokenUsage",
    "execution_failure_receipt",
    "publish_failed_execution",
]

_Count = NonNegativeSafeInt
_Number = Annotated[float, Field(ge=0, allow_inf_nan=False)]


class ObservedTokenUsage(WireModel):
    """``TokenUsage`` with every field optional (zod ``TokenUsageSchema.partial()``).

    A field is present only when the adapter observed it.
    """

    input_tokens: _Count | None = None
    output_tokens: _Count | None = None
    total_tokens: _Count | None = None
    cache_read_input_tokens: _Count | None = None
    cache_creation_input_tokens: _Count | None = None
    reasoning_tokens: _Count | None = None
    cost: _Number | None = None


class ExecutionFailureTiming(WireModel):
    """When a failed execution started and stopped, and how long it ran in milliseconds."""

    started_at: _Number
    completed_at: _Number
    duration_ms: _Number


class AgentExecutionFailureReceipt(WireModel):
    """Observed accounting of a failed execution: a floor, not a total or a success."""

    token_usage: ObservedTokenUsage | None = None
    timing: ExecutionFailureTiming | None = None


class AgentExecutionError(Exception):
    """An adapter's rejection that retains the usage and timing it observed.

    ``receipt`` is validated and immutable: changing the mapping passed in does not
    change it. Raise it ``from`` the underlying cause to keep the chain.
    """

    receipt: AgentExecutionFailureReceipt

    def __init__(
        self,
        message: str,
        receipt: AgentExecutionFailureReceipt | Mapping[str, Any] | None = None,
        *,
        cause: BaseException | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        if cause is not None:
            self.__cause__ = cause
        if receipt is None:
            receipt = {}
        if isinstance(receipt, AgentExecutionFailureReceipt):
            self.receipt = receipt
        else:
            self.receipt = AgentExecutionFailureReceipt.parse_wire(dict(receipt))

    def __repr__(self) -> str:
        return f"AgentExecutionError({self.message!r}, receipt={self.receipt.to_wire()!r})"


class AgentExecutionFailureRecord(WireModel):
    """What a host publishes for a failed or cancelled execution, receipt kept."""

    status: Literal["failed", "cancelled"]
    error: BoundedString
    accounting: Literal["lower-bound"] = "lower-bound"
    receipt: AgentExecutionFailureReceipt


def execution_failure_receipt(error: BaseException) -> AgentExecutionFailureReceipt | None:
    """The receipt of the first :class:`AgentExecutionError` in ``error``'s chain.

    Follows ``__cause__`` and ``__context__`` (and exception groups), so a host that
    wraps the adapter's rejection still finds it. ``None`` means no usage was
    observed or reported, which is unknown, not zero.
    """
    seen: set[int] = set()
    pending: list[BaseException] = [error]
    while pending:
        current = pending.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, AgentExecutionError):
            return current.receipt
        if isinstance(current, BaseExceptionGroup):
            pending.extend(current.exceptions)
        for linked in (current.__cause__, current.__context__):
            if linked is not None:
                pending.append(linked)
    return None


def publish_failed_execution(
    error: BaseException, *, status: Literal["failed", "cancelled"] = "failed"
) -> AgentExecutionFailureRecord:
    """Build the failure record a host stores or emits, keeping the adapter's receipt.

    Cancellation (``asyncio.CancelledError``, or ``status="cancelled"``) stays distinct
    from failure. The receipt is the one the adapter attached, unchanged; an error
    without one publishes an empty receipt (unknown usage), never zeros.
    """
    import asyncio

    if status not in ("failed", "cancelled"):
        raise ContractError.single("/status", "failure_status", "status must be failed or cancelled")
    if isinstance(error, asyncio.CancelledError):
        status = "cancelled"
    receipt = execution_failure_receipt(error) or AgentExecutionFailureReceipt()
    message = str(error) or type(error).__name__
    if len(message) > 4_096:
        message = message[:4_096]
    return AgentExecutionFailureRecord(status=status, error=message, receipt=receipt)


register_wire_models(
    AgentExecutionFailureReceipt=AgentExecutionFailureReceipt,
    AgentExecutionFailureRecord=AgentExecutionFailureRecord,
)
