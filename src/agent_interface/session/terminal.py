"""Interactive terminals under a parent execution, with ordered replayable output
(``environment-terminal.ts``).

A terminal reference carries no process id and no environment map, so it cannot leak host
detail or injected secrets. Every terminal belongs to a parent execution and expires;
:func:`terminal_session_usable` denies an unparsable, stopped or expired reference. A
create-or-reattach answer is bound to its request with
:func:`terminal_attach_result_matches_request`. Output frames carry a monotonic ``seq``;
a consumer resumes from a cursor inside the handle's :class:`TerminalReplayWindow`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from datetime import datetime
from typing import Annotated, Any, Literal, Protocol, runtime_checkable

from pydantic import Field

from agent_interface.core.contract_limits import (
    BoundedIdentifier,
    BoundedString,
    GreaterThanZeroSafeInt,
    IsoDatetime,
    NonNegativeSafeInt,
    SafeInt,
    Utf16Length,
)
from agent_interface.core.errors import ContractError
from agent_interface.core.model import WireModel, wire_adapter
from agent_interface.core.registry import register_wire_models
from agent_interface.session.timestamps import datetime_epoch_ms, iso_epoch_ms

__all__ = [
    "TERMINAL_MAX_DIMENSION",
    "AgentTerminalSession",
    "TerminalAttachMode",
    "TerminalAttachRequest",
    "TerminalAttachResult",
    "TerminalAttachUnavailable",
    "TerminalAttachUnknown",
    "TerminalAttached",
    "TerminalClosed",
    "TerminalDetachAck",
    "TerminalDetachUnknown",
    "TerminalDetached",
    "TerminalErrorEvent",
    "TerminalExitEvent",
    "TerminalInput",
    "TerminalOutputEvent",
    "TerminalOutputFrame",
    "TerminalReadyEvent",
    "TerminalReplayWindow",
    "TerminalResize",
    "TerminalResizeEvent",
    "TerminalSessionRef",
    "terminal_attach_result_matches_request",
    "terminal_session_usable",
]

TERMINAL_MAX_DIMENSION = 10_000

TerminalDimension = Annotated[GreaterThanZeroSafeInt, Field(le=TERMINAL_MAX_DIMENSION)]
"""Columns or rows: a positive integer up to 10,000."""

Datetime64 = Annotated[IsoDatetime, Utf16Length(max=64)]
NonEmptyBoundedString = Annotated[BoundedString, Utf16Length(min=1)]
TerminalAttachMode = Literal["attach", "logical"]


class TerminalSessionRef(WireModel):
    """Provider-neutral handle of one terminal: no raw process id, no environment map."""

    terminal_session_id: BoundedIdentifier
    parent_execution_id: BoundedIdentifier
    name: BoundedIdentifier
    shell: NonEmptyBoundedString
    command: BoundedString | None = Field(default=None, repr=False)
    cwd: NonEmptyBoundedString
    cols: TerminalDimension
    rows: TerminalDimension
    connection_id: BoundedIdentifier | None = None
    created_at: Datetime64
    last_activity_at: Datetime64
    expires_at: Datetime64
    is_running: bool
    exit_code: SafeInt | None = None
    exit_signal: BoundedIdentifier | None = None
    attach_count: NonNegativeSafeInt


class TerminalInput(WireModel):
    """Bytes written to the terminal, as UTF-8 text (kept out of ``repr``: keystrokes may be secrets)."""

    data: BoundedString = Field(repr=False)


class TerminalResize(WireModel):
    """New terminal geometry."""

    cols: TerminalDimension
    rows: TerminalDimension


class TerminalAttachRequest(WireModel):
    """Create or reattach. With ``terminal_session_id`` it reattaches to that terminal;
    without it a new terminal opens under the parent execution. ``attach`` reaches the
    live process, ``logical`` resumes by replaying retained output."""

    parent_execution_id: BoundedIdentifier
    terminal_session_id: BoundedIdentifier | None = None
    connection_id: BoundedIdentifier | None = None
    mode: TerminalAttachMode
    cols: TerminalDimension | None = None
    rows: TerminalDimension | None = None
    command: BoundedString | None = Field(default=None, repr=False)
    cwd: BoundedString | None = None


class TerminalAttached(WireModel):
    """A terminal attach succeeded: the mode, the terminal reference and how many times it has been
    attached."""

    status: Literal["attached", "reattached"]
    mode: TerminalAttachMode
    ref: TerminalSessionRef
    attach_count: NonNegativeSafeInt


class TerminalAttachUnavailable(WireModel):
    """A terminal cannot be attached now; ``reason`` says why."""

    status: Literal["unavailable"]
    reason: NonEmptyBoundedString


class TerminalAttachUnknown(WireModel):
    """The outcome is not known; ``retryable`` says whether the same request may be resent."""

    status: Literal["unknown"]
    message: NonEmptyBoundedString
    retryable: bool


TerminalAttachResult = Annotated[
    TerminalAttached | TerminalAttachUnavailable | TerminalAttachUnknown,
    Field(discriminator="status"),
]


class TerminalReadyEvent(WireModel):
    """The terminal is ready, at this size in columns and rows."""

    type: Literal["ready"]
    cols: TerminalDimension | None = None
    rows: TerminalDimension | None = None


class TerminalOutputFrame(WireModel):
    """Output with its monotonic replay cursor."""

    type: Literal["output"]
    seq: NonNegativeSafeInt
    data: BoundedString = Field(repr=False)


class TerminalResizeEvent(WireModel):
    """The terminal was resized to this many columns and rows."""

    type: Literal["resize"]
    cols: TerminalDimension
    rows: TerminalDimension


class TerminalExitEvent(WireModel):
    """The terminal's process exited, with its exit code or signal."""

    type: Literal["exit"]
    exit_code: SafeInt | None = None
    exit_signal: BoundedIdentifier | None = None


class TerminalErrorEvent(WireModel):
    """The terminal reported an error."""

    type: Literal["error"]
    message: NonEmptyBoundedString


TerminalOutputEvent = Annotated[
    TerminalReadyEvent | TerminalOutputFrame | TerminalResizeEvent | TerminalExitEvent | TerminalErrorEvent,
    Field(discriminator="type"),
]


class TerminalDetached(WireModel):
    """A terminal connection was detached; the session goes on."""

    status: Literal["detached"]
    terminal_session_id: BoundedIdentifier
    connection_id: BoundedIdentifier | None = None


class TerminalClosed(WireModel):
    """The terminal session closed, with the exit code or signal of its process."""

    status: Literal["closed"]
    terminal_session_id: BoundedIdentifier
    exit_code: SafeInt | None = None
    exit_signal: BoundedIdentifier | None = None


class TerminalDetachUnknown(WireModel):
    """A detach whose outcome is not known; ``retryable`` says whether to try again."""

    status: Literal["unknown"]
    terminal_session_id: BoundedIdentifier
    message: NonEmptyBoundedString
    retryable: bool


TerminalDetachAck = Annotated[
    TerminalDetached | TerminalClosed | TerminalDetachUnknown,
    Field(discriminator="status"),
]


class TerminalReplayWindow(WireModel):
    """``earliest`` is the oldest cursor the handle still serves, ``latest`` the newest frame."""

    earliest: NonNegativeSafeInt
    latest: NonNegativeSafeInt


_ATTACH_RESULT = wire_adapter(TerminalAttachResult, "TerminalAttachResult")


def _parsed(model: type[WireModel], value: Any) -> Any:
    if isinstance(value, model):
        return value
    if isinstance(value, WireModel):
        value = value.to_wire()
    if not isinstance(value, Mapping):
        return None
    try:
        return model.parse_wire(value)
    except ContractError:
        return None


def _parsed_result(value: Any) -> Any:
    if isinstance(value, (TerminalAttached, TerminalAttachUnavailable, TerminalAttachUnknown)):
        return value
    try:
        return _ATTACH_RESULT.parse_value(value.to_wire() if isinstance(value, WireModel) else value)
    except ContractError:
        return None


def terminal_session_usable(ref: TerminalSessionRef | Mapping[str, Any], now: str | datetime) -> bool:
    """True only for a valid reference that is running and not yet expired at ``now``.

    ``now`` is ISO 8601 text or an aware ``datetime``; text that names no instant, a naive
    ``datetime``, an invalid reference or a stopped terminal all deny use."""
    parsed = _parsed(TerminalSessionRef, ref)
    if parsed is None:
        return False
    if isinstance(now, datetime):
        now_ms = datetime_epoch_ms(now)
    else:
        now_ms = iso_epoch_ms(now) if isinstance(now, str) else None
    expires_ms = iso_epoch_ms(parsed.expires_at)
    if now_ms is None or expires_ms is None or now_ms >= expires_ms:
        return False
    return bool(parsed.is_running)


def terminal_attach_result_matches_request(
    request: TerminalAttachRequest | Mapping[str, Any],
    result: TerminalAttachResult | Mapping[str, Any],
) -> bool:
    """Whether a successful attach answers this request: same mode, same parent
    execution, and the requested terminal when one was named. Any other answer, or an
    invalid value on either side, is ``False``."""
    parsed_request = _parsed(TerminalAttachRequest, request)
    outcome = _parsed_result(result)
    if parsed_request is None or not isinstance(outcome, TerminalAttached):
        return False
    if outcome.mode != parsed_request.mode:
        return False
    if outcome.ref.parent_execution_id != parsed_request.parent_execution_id:
        return False
    wanted = parsed_request.terminal_session_id
    return wanted is None or outcome.ref.terminal_session_id == wanted


@runtime_checkable
class AgentTerminalSession(Protocol):
    """A live terminal handle. ``events`` replays retained frames from ``since`` and then
    follows the terminal until it exits; ``cursors`` says which cursors still exist."""

    @property
    def ref(self) -> TerminalSessionRef: ...

    @property
    def cursors(self) -> TerminalReplayWindow: ...

    async def input(self, input: TerminalInput) -> None: ...

    async def resize(self, resize: TerminalResize) -> None: ...

    async def detach(self) -> TerminalDetachAck: ...

    async def close(self) -> TerminalDetachAck: ...

    def events(self, *, since: int | None = None) -> AsyncIterator[TerminalOutputEvent]: ...


register_wire_models(
    TerminalSessionRef=TerminalSessionRef,
    TerminalInput=TerminalInput,
    TerminalResize=TerminalResize,
    TerminalAttachRequest=TerminalAttachRequest,
    TerminalAttachResult=TerminalAttachResult,
    TerminalOutputEvent=TerminalOutputEvent,
    TerminalDetachAck=TerminalDetachAck,
    TerminalReplayWindow=TerminalReplayWindow,
)
