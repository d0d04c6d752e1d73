"""Provider-native child tasks: the ``child-task`` stream event and its replay-safe tracker.

One :class:`ChildTaskEvent` reports one update of a subagent, worker or delegated
task. Identity comes only from ``childId``, ``parentChildId`` and ``sourceEventId``;
``raw`` is an opaque bounded copy of provider fields and never identifies anything.
A provider that cannot report a stable ``childId`` emits no ``child-task`` event, so
the schema requires it. ``cancelled`` (caller cancellation) is distinct from
``failed``.

:class:`ChildTaskTracker` rebuilds the child tree from a live or replayed stream: it
applies the first event with a given ``sourceEventId`` and ignores every later copy.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal, Self

from pydantic import model_validator

from agent_interface.core.contract_limits import (
    BoundedIdentifier,
    BoundedJsonRecord,
    BoundedString,
    NonNegativeNumber,
)
from agent_interface.core.errors import Refinement
from agent_interface.core.model import WireModel
from agent_interface.core.registry import register_wire_models
from agent_interface.runtime.usage import TokenUsage

__all__ = [
    "TERMINAL_CHILD_TASK_STATUSES",
    "ChildTaskEvent",
    "ChildTaskStatus",
    "ChildTaskTime",
    "ChildTaskTracker",
]

ChildTaskStatus = Literal["started", "running", "completed", "failed", "cancelled"]
TERMINAL_CHILD_TASK_STATUSES: Final = frozenset({"completed", "failed", "cancelled"})


class ChildTaskTime(WireModel):
    """Epoch milliseconds reported by the provider."""

    started: NonNegativeNumber
    updated: NonNegativeNumber
    ended: NonNegativeNumber | None = None


class ChildTaskEvent(WireModel):
    """One observed update of a provider-native child task.

    ``time.ended`` and ``terminalReason`` only accompany a terminal status; update
    and end times never precede the start; a child is never its own parent.
    """

    type: Literal["child-task"]
    child_id: BoundedIdentifier
    parent_child_id: BoundedIdentifier | None = None
    status: ChildTaskStatus
    title: BoundedString | None = None
    time: ChildTaskTime
    runner: BoundedIdentifier | None = None
    model: BoundedIdentifier | None = None
    usage: TokenUsage | None = None
    terminal_reason: BoundedString | None = None
    source_event_id: BoundedIdentifier
    raw: BoundedJsonRecord | None = None

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL_CHILD_TASK_STATUSES

    @model_validator(mode="after")
    def _refine(self) -> Self:
        issues = Refinement("ChildTaskEvent")
        terminal = self.status in TERMINAL_CHILD_TASK_STATUSES
        if not terminal and self.time.ended is not None:
            issues.add(
                ("time", "ended"), "end_time_not_terminal",
                "only a terminal child task status may carry an end time",
            )
        if not terminal and self.terminal_reason is not None:
            issues.add(
                ("terminalReason",), "terminal_reason_not_terminal",
                "only a terminal child task status may carry a terminal reason",
            )
        if self.time.updated < self.time.started:
            issues.add(
                ("time", "updated"), "updated_before_started",
                "a child task update time cannot precede its start time",
            )
        if self.time.ended is not None and self.time.ended < self.time.started:
            issues.add(
                ("time", "ended"), "ended_before_started",
                "a child task end time cannot precede its start time",
            )
        if self.parent_child_id is not None and self.parent_child_id == self.child_id:
            issues.add(
                ("parentChildId",), "own_parent", "a child task cannot be its own parent"
            )
        issues.check()
        return self


def _child_task_of(item: Any) -> ChildTaskEvent | None:
    """The child-task event inside ``item`` (an event, an envelope, or an environment
    event's ``normalized``), else ``None``."""
    if isinstance(item, ChildTaskEvent):
        return item
    for attribute in ("event", "normalized"):
        inner = getattr(item, attribute, None)
        if isinstance(inner, ChildTaskEvent):
            return inner
    return None


@dataclass(slots=True)
class ChildTaskTracker:
    """Replay-safe view of every child task seen in one run.

    :meth:`apply` takes a :class:`ChildTaskEvent` (or a ``RuntimeEventEnvelope`` /
    ``AgentEnvironmentEvent`` wrapping one; anything else is ignored) and returns
    ``True`` when it applied it. A ``sourceEventId`` already applied is ignored, so
    live, replayed and reconnected streams produce the same tree. The latest
    applied update of a child is its current state.
    """

    _applied: set[str] = field(default_factory=set)
    _children: dict[str, ChildTaskEvent] = field(default_factory=dict)
    _order: list[str] = field(default_factory=list)

    def apply(self, item: Any) -> bool:
        event = _child_task_of(item)
        if event is None or event.source_event_id in self._applied:
            return False
        self._applied.add(event.source_event_id)
        if event.child_id not in self._children:
            self._order.append(event.child_id)
        self._children[event.child_id] = event
        return True

    def apply_all(self, items: Iterable[Any]) -> int:
        """Apply every item in order; return how many were applied."""
        return sum(1 for item in items if self.apply(item))

    def has_applied(self, source_event_id: str) -> bool:
        return source_event_id in self._applied

    @property
    def children(self) -> Mapping[str, ChildTaskEvent]:
        """Current state of each child, by ``childId``, in first-seen order."""
        return {child_id: self._children[child_id] for child_id in self._order}

    def get(self, child_id: str) -> ChildTaskEvent | None:
        return self._children.get(child_id)

    def children_of(self, parent_child_id: str | None) -> tuple[ChildTaskEvent, ...]:
        """Direct children of ``parent_child_id`` (``None``: children of the run)."""
        return tuple(
            self._children[child_id]
            for child_id in self._order
            if self._children[child_id].parent_child_id == parent_child_id
        )

    def __len__(self) -> int:
        return len(self._children)

    def __iter__(self) -> Iterator[ChildTaskEvent]:
        return (self._children[child_id] for child_id in self._order)


register_wire_models(ChildTaskEvent=ChildTaskEvent)
