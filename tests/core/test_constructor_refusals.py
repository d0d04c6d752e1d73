"""A refused construction is a ContractError (WireValidationError), like a refused parse.

``Model(**kwargs)``, ``Model.model_validate(...)`` and ``Model.model_validate_json(...)``
raise :class:`WireValidationError` with JSON Pointers into what was given; no value of the
input appears in the message, the issues or the exception chain.
"""

from __future__ import annotations

import traceback
from typing import Any

import pytest
from pydantic import ValidationError

from agent_interface import (
    AgentTurnInput,
    ContractError,
    RuntimeEventEnvelope,
    StatusEvent,
    TextPart,
    WireValidationError,
)

SECRET = "sk-live-0123456789abcdef"


def _refusal(call: Any, *args: Any, **kwargs: Any) -> WireValidationError:
    with pytest.raises(ContractError) as caught:
        call(*args, **kwargs)
    error = caught.value
    assert isinstance(error, WireValidationError)
    assert not isinstance(error, ValidationError)
    return error


def _assert_nothing_leaks(error: BaseException) -> None:
    assert error.__cause__ is None
    assert error.__context__ is None
    text = "".join(traceback.format_exception(error))
    assert SECRET not in text
    assert SECRET not in repr(error)
    for issue in getattr(error, "issues", ()):
        assert SECRET not in f"{issue.path} {issue.code} {issue.message}"


def test_constructor_refusal_is_a_contract_error_with_pointers() -> None:
    error = _refusal(TextPart, id="p", session_id="", message_id="m", text="t")
    assert [(issue.path, issue.code) for issue in error.issues] == [
        ("/session_id", "string_too_short")
    ]
    assert error.subject == "TextPart"
    _assert_nothing_leaks(error)


def test_constructor_accepts_the_snake_case_names() -> None:
    part = TextPart(id="p", session_id="s", message_id="m", text="t")
    assert part.to_wire()["sessionID"] == "s"


def test_missing_and_unknown_fields_are_named() -> None:
    error = _refusal(TextPart, id="p", message_id="m", text="t", token=SECRET)
    assert {(issue.path, issue.code) for issue in error.issues} == {
        ("/sessionID", "missing"),
        ("/token", "extra_forbidden"),
    }
    _assert_nothing_leaks(error)


def test_a_refused_value_is_never_quoted() -> None:
    # A secret where a number is expected, and where a literal is expected.
    error = _refusal(AgentTurnInput, prompt="p", timeout_ms=SECRET)
    assert [issue.path for issue in error.issues] == ["/timeout_ms"]
    _assert_nothing_leaks(error)
    error = _refusal(StatusEvent, type="status", status=SECRET)
    assert [issue.path for issue in error.issues] == ["/status"]
    _assert_nothing_leaks(error)


def test_a_nested_refusal_names_the_full_pointer() -> None:
    error = _refusal(
        RuntimeEventEnvelope,
        run_id="r",
        event_id="e",
        sequence=0,
        received_at="2026-11-30T09:15:00Z",
        event={"type": "status", "status": SECRET},
    )
    assert [issue.path for issue in error.issues] == ["/event/status"]
    _assert_nothing_leaks(error)


def test_model_validate_refuses_with_a_contract_error() -> None:
    error = _refusal(TextPart.model_validate, {"id": "p", "sessionID": "s", "text": [SECRET]})
    assert {issue.path for issue in error.issues} == {"/messageID", "/text"}
    _assert_nothing_leaks(error)
    accepted = TextPart.model_validate({"id": "p", "sessionID": "s", "messageID": "m", "text": "t"})
    assert accepted.message_id == "m"


def test_model_validate_json_refuses_with_a_contract_error() -> None:
    error = _refusal(
        TextPart.model_validate_json,
        f'{{"id":"p","sessionID":"s","messageID":"m","text":"t","key":"{SECRET}"}}',
    )
    assert [(issue.path, issue.code) for issue in error.issues] == [("/key", "extra_forbidden")]
    _assert_nothing_leaks(error)
    error = _refusal(TextPart.model_validate_json, f'{{"id": "{SECRET}"')
    assert [(issue.path, issue.code) for issue in error.issues] == [("", "json_invalid")]
    _assert_nothing_leaks(error)


def test_a_refusal_inside_a_callers_handler_keeps_only_the_callers_context() -> None:
    try:
        raise KeyError("caller")
    except KeyError:
        with pytest.raises(WireValidationError) as caught:
            TextPart(id="p", session_id="s", message_id="m", text=SECRET, extra=1)
    assert isinstance(caught.value.__context__, KeyError)


def test_nested_models_are_still_built_without_calling_init() -> None:
    # The override only changes the error type: pydantic keeps its fast construction.
    assert TextPart.__pydantic_custom_init__ is False
    envelope = RuntimeEventEnvelope.parse_wire(
        {
            "runId": "r",
            "eventId": "e",
            "sequence": 0,
            "receivedAt": "2026-11-30T09:15:00Z",
            "event": {"type": "status", "status": "completed"},
        }
    )
    assert envelope.event == StatusEvent(type="status", status="completed")
