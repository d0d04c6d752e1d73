"""Terminal references, attach, output frames and detach: one accepted and one refused
example per rule, plus the cases of the reference's ``environment-terminal.test.ts``."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from agent_interface.core.errors import ContractError
from agent_interface.core.model import wire_adapter
from agent_interface.session.terminal import (
    TerminalAttached,
    TerminalAttachRequest,
    TerminalAttachResult,
    TerminalDetachAck,
    TerminalInput,
    TerminalOutputEvent,
    TerminalReplayWindow,
    TerminalResize,
    TerminalSessionRef,
    terminal_attach_result_matches_request,
    terminal_session_usable,
)
from agent_interface.session.timestamps import iso_epoch_ms

RESULT = wire_adapter(TerminalAttachResult)
OUTPUT = wire_adapter(TerminalOutputEvent)
DETACH = wire_adapter(TerminalDetachAck)


def make_ref(**change: Any) -> dict[str, Any]:
    return {
        "terminalSessionId": "term-1",
        "parentExecutionId": "execution-1",
        "name": "shell",
        "shell": "/bin/bash",
        "command": "top",
        "cwd": "/workspace",
        "cols": 120,
        "rows": 40,
        "connectionId": "connection-1",
        "createdAt": "2026-08-12T10:00:00.000Z",
        "lastActivityAt": "2026-08-12T10:05:00.000Z",
        "expiresAt": "2026-08-12T12:00:00.000Z",
        "isRunning": True,
        "attachCount": 1,
        **change,
    }


def without(value: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in value.items() if k != key}


def test_ref_round_trips() -> None:
    ref = make_ref()
    assert TerminalSessionRef.parse_wire(ref).to_wire() == ref


@pytest.mark.parametrize(
    "value",
    [
        make_ref(pid=1234),
        make_ref(env={"SECRET": "x"}),
        without(make_ref(), "parentExecutionId"),
        without(make_ref(), "expiresAt"),
        make_ref(cols=0),
        make_ref(rows=-1),
        make_ref(cols=10_001),
        make_ref(shell=""),
        make_ref(cwd=""),
        make_ref(name=" shell"),
        make_ref(expiresAt="2026-08-12T12:00:00+02:00"),
        make_ref(createdAt="2026-02-30T10:00:00Z"),
        make_ref(attachCount=-1),
        make_ref(exitCode=1.5),
        make_ref(isRunning="true"),
    ],
)
def test_ref_refusals(value: dict[str, Any]) -> None:
    with pytest.raises(ContractError):
        TerminalSessionRef.parse_wire(value)


def test_ref_optional_members() -> None:
    TerminalSessionRef.parse_wire(make_ref(cols=10_000, exitCode=-1, exitSignal="SIGTERM", isRunning=False))
    TerminalSessionRef.parse_wire(without(without(make_ref(), "command"), "connectionId"))


def test_input_and_resize_bounds() -> None:
    assert TerminalInput.parse_wire({"data": "ls -la\n"}).data == "ls -la\n"
    assert TerminalInput.parse_wire({"data": ""}).data == ""
    assert TerminalResize.parse_wire({"cols": 80, "rows": 24}).to_wire() == {"cols": 80, "rows": 24}
    for bad in ({"cols": 0, "rows": 24}, {"cols": 80, "rows": 100_000}, {"cols": 80}):
        with pytest.raises(ContractError):
            TerminalResize.parse_wire(bad)
    with pytest.raises(ContractError):
        TerminalInput.parse_wire({"data": "x" * 16_385})


def test_output_frames() -> None:
    assert OUTPUT.parse_value({"type": "ready", "cols": 120, "rows": 40}).type == "ready"
    frame = OUTPUT.parse_value({"type": "output", "seq": 7, "data": "hello"})
    assert frame.to_wire() == {"type": "output", "seq": 7, "data": "hello"}
    assert OUTPUT.parse_value({"type": "exit", "exitCode": 0}).type == "exit"
    assert OUTPUT.parse_value({"type": "error", "message": "pty closed"}).type == "error"
    assert OUTPUT.parse_value({"type": "resize", "cols": 1, "rows": 1}).type == "resize"
    for bad in (
        {"type": "output", "data": "x"},
        {"type": "output", "seq": -1, "data": "x"},
        {"type": "error", "message": ""},
        {"type": "resize", "cols": 1},
        {"type": "bell"},
    ):
        with pytest.raises(ContractError):
            OUTPUT.parse_value(bad)


REQUEST = {"parentExecutionId": "execution-1", "terminalSessionId": "term-1", "mode": "attach", "cols": 120, "rows": 40}
ATTACHED = {"status": "reattached", "mode": "attach", "ref": make_ref(), "attachCount": 2}


def test_attach_outcomes() -> None:
    assert TerminalAttachRequest.parse_wire(REQUEST).to_wire() == REQUEST
    assert isinstance(RESULT.parse_value(ATTACHED), TerminalAttached)
    assert RESULT.parse_value({"status": "unavailable", "reason": "terminal expired"}).status == "unavailable"
    assert RESULT.parse_value({"status": "unknown", "message": "transport failed", "retryable": True}).status == "unknown"
    for bad in (
        {"status": "unavailable", "reason": ""},
        {"status": "unknown", "message": "lost"},
        {**ATTACHED, "status": "opened"},
        {**ATTACHED, "attachCount": -1},
    ):
        with pytest.raises(ContractError):
            RESULT.parse_value(bad)
    with pytest.raises(ContractError):
        TerminalAttachRequest.parse_wire({**REQUEST, "mode": "spawn"})


def test_attach_result_binds_parent_mode_and_terminal() -> None:
    assert terminal_attach_result_matches_request(REQUEST, ATTACHED)
    assert terminal_attach_result_matches_request(
        TerminalAttachRequest.parse_wire(REQUEST), RESULT.parse_value(ATTACHED)
    )
    assert not terminal_attach_result_matches_request(
        REQUEST, {**ATTACHED, "ref": make_ref(parentExecutionId="execution-9")}
    )
    assert not terminal_attach_result_matches_request(REQUEST, {**ATTACHED, "mode": "logical"})
    assert not terminal_attach_result_matches_request(REQUEST, {**ATTACHED, "ref": make_ref(terminalSessionId="term-2")})
    assert not terminal_attach_result_matches_request(REQUEST, {"status": "unavailable", "reason": "gone"})
    # a new terminal (no id requested) may carry any id
    assert terminal_attach_result_matches_request(without(REQUEST, "terminalSessionId"), {**ATTACHED, "status": "attached"})
    # an invalid side is never a match
    assert not terminal_attach_result_matches_request({**REQUEST, "mode": "x"}, ATTACHED)
    assert not terminal_attach_result_matches_request(REQUEST, {**ATTACHED, "attachCount": "2"})


def test_detach_acknowledgements() -> None:
    assert DETACH.parse_value({"status": "detached", "terminalSessionId": "term-1", "connectionId": "connection-1"}).status == "detached"
    assert DETACH.parse_value({"status": "closed", "terminalSessionId": "term-1", "exitCode": 0}).status == "closed"
    assert DETACH.parse_value({"status": "unknown", "terminalSessionId": "t", "message": "m", "retryable": False}).status == "unknown"
    for bad in (
        {"status": "detached"},
        {"status": "closed", "terminalSessionId": "term-1", "exitSignal": ""},
        {"status": "unknown", "terminalSessionId": "t", "message": "m"},
    ):
        with pytest.raises(ContractError):
            DETACH.parse_value(bad)


def test_replay_window() -> None:
    assert TerminalReplayWindow.parse_wire({"earliest": 0, "latest": 5}).latest == 5
    with pytest.raises(ContractError):
        TerminalReplayWindow.parse_wire({"earliest": -1, "latest": 5})


def test_usable_fails_closed() -> None:
    ref = make_ref()
    assert terminal_session_usable(ref, "2026-08-12T11:00:00.000Z")
    assert terminal_session_usable(TerminalSessionRef.parse_wire(ref), "2026-08-12T11:59:59.999Z")
    assert not terminal_session_usable(ref, "2026-08-12T12:00:00.000Z")
    assert not terminal_session_usable(ref, "2026-08-12T13:00:00.000Z")
    assert not terminal_session_usable({**ref, "isRunning": False}, "2026-08-12T11:00:00.000Z")
    assert not terminal_session_usable({**ref, "expiresAt": "not-a-date"}, "2026-08-12T11:00:00.000Z")
    assert not terminal_session_usable(ref, "not-a-date")
    assert not terminal_session_usable(ref, "2026-08-12T11:00:00")  # no zone: no instant
    # offsets and aware datetimes name the same instants
    assert not terminal_session_usable(ref, "2026-08-12T14:00:00+02:00")
    assert terminal_session_usable(ref, "2026-08-12T13:00:00+02:00")
    assert terminal_session_usable(ref, datetime(2026, 8, 12, 11, tzinfo=UTC))
    assert not terminal_session_usable(ref, datetime(2026, 8, 12, 14, tzinfo=timezone(timedelta(hours=1))))
    assert not terminal_session_usable(ref, datetime(2026, 8, 12, 11))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1970-01-01T00:00:00Z", 0),
        ("1970-01-01", 0),
        ("1970-01-01T00:00:00.0019Z", 1),
        ("1970-01-01T01:00+01:00", 0),
        ("2026-02-29T00:00:00Z", None),
        ("2026-13-01T00:00:00Z", None),
        ("1970-01-01T00:00:00", None),
        ("", None),
    ],
)
def test_iso_epoch_ms(text: str, expected: int | None) -> None:
    assert iso_epoch_ms(text) == expected
