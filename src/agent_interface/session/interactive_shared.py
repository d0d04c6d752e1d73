"""Pieces shared by interactive-session start and control (``environment-interactive-shared.ts``)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from agent_interface.core.contract_limits import GreaterThanZeroSafeInt
from agent_interface.core.model import WireModel

__all__ = [
    "INTERACTIVE_MAX_DIMENSION",
    "AgentInteractiveDimension",
    "same_agent_exact_run",
    "wire_of",
]

INTERACTIVE_MAX_DIMENSION = 10_000

AgentInteractiveDimension = Annotated[GreaterThanZeroSafeInt, Field(le=INTERACTIVE_MAX_DIMENSION)]
"""Columns or rows of an interactive terminal: a positive integer up to 10,000."""

_RUN_COORDINATES = ("run_id", "provider", "environment_id", "session_id", "execution_id", "request_digest")


def same_agent_exact_run(left: Any, right: Any) -> bool:
    """Whether two exact run references agree on every coordinate."""
    return all(getattr(left, name) == getattr(right, name) for name in _RUN_COORDINATES)


def wire_of(value: Any) -> Any:
    """The wire form of a model; anything else as given."""
    return value.to_wire() if isinstance(value, WireModel) else value
