"""The committed plan itself (``durablePlanSchema`` of ``plan.ts``) and its string and
time types.

A module of its own, importing only the core: a stream event carries a plan without
importing the submissions, decisions and continuations of
:mod:`agent_interface.runtime.plan` (where every name here is public too).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator
from pydantic_core import PydanticCustomError

from agent_interface.core.contract_limits import (
    OffsetIsoDatetime,
    PositiveSafeInt,
    Utf16Length,
    js_trim,
)
from agent_interface.core.model import WireModel
from agent_interface.core.registry import register_wire_models

__all__ = ["DurablePlan"]

NonEmptyString = Annotated[str, Utf16Length(min=1)]
"""zod ``z.string().min(1)``."""


def _trim_non_empty(value: str) -> str:
    trimmed = js_trim(value)
    if not trimmed:
        raise PydanticCustomError("string_too_short", "string must not be empty or blank")
    return trimmed


TrimmedNonEmptyString = Annotated[str, AfterValidator(_trim_non_empty)]
"""zod ``z.string().trim().min(1)``: stored trimmed, blank refused."""

OffsetDatetime = OffsetIsoDatetime


class DurablePlan(WireModel):
    """A plan committed by the runtime before the planning turn may end."""

    id: NonEmptyString
    revision: PositiveSafeInt
    title: TrimmedNonEmptyString | None = None
    body: TrimmedNonEmptyString
    submitted_at: OffsetDatetime


register_wire_models(DurablePlan=DurablePlan)
