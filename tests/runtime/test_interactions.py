"""Interactions (interaction*.ts): fields, data, posture, requests, responses,
commands, acknowledgements, capabilities, and secret hygiene."""

from __future__ import annotations

import hashlib
import logging
from typing import Any

import pytest
import rfc8785

from agent_interface.core.errors import ContractError
from agent_interface.core.model import wire_adapter
from agent_interface.runtime.interaction_answers import validate_interaction_answer
from agent_interface.runtime.interaction_fields import (
    InteractionAnswerSpec,
    InteractionCapabilities,
    InteractionData,
    InteractionField,
    InteractionKind,
    RequestedInteractions,
    SelectInteractionField,
    permission_answer_spec,
)
from agent_interface.runtime.interaction_requests import (
    InteractionBinding,
    InteractionExecutionBinding,
    InteractionRequest,
    interaction_request_digest,
)
from agent_interface.runtime.interaction_responses import (
    InteractionAcknowledgement,
    InteractionResponse,
    InteractionResponseCommand,
    interaction_acknowledgement_matches_command,
    interaction_response_command_digest,
    interaction_response_is_valid,
    require_valid_interaction_response,
    validate_interaction_response,
    validate_interaction_response_command,
)

EXECUTION = {
    "runId": "run-1",
    "provider": "test-provider",
    "environmentId": "environment-1",
    "sessionId": "session-1",
    "executionId": "execution-1",
}
DIGEST_C = "sha256:" + "c" * 64


def jcs_digest(value: Any) -> str:
    return "sha256:" + hashlib.sha256(rfc8785.dumps(value)).hexdigest()


def refusal(tp: Any, data: Any) -> list[tuple[str, str]]:
    with pytest.raises(ContractError) as caught:
        wire_adapter(tp).parse(data)
    return [(issue.path, issue.code) for issue in caught.value.issues]


def make_request(**material: Any) -> InteractionRequest:
    body = {"binding": {**EXECUTION, "interactionId": material["id"]}, **material}
    return InteractionRequest.create(body)


def select_spec(**overrides: Any) -> dict[str, Any]:
    field = {
        "type": "select", "name": "choice", "label": "Pick one", "required": True,
        "options": [{"value": "a", "label": "A"}, {"value": "b", "label": "B"}],
    }
    field.update(overrides)
    return {"fields": [field]}


# --- bindings ---------------------------------------------------------------


def test_execution_binding_is_exact() -> None:
    assert InteractionExecutionBinding.parse_wire(EXECUTION).to_wire() == EXECUTION
    incomplete = {k: v for k, v in EXECUTION.items() if k != "executionId"}
    assert ("/executionId", "missing") in refusal(InteractionExecutionBinding, incomplete)
    assert ("/interactionId", "extra_forbidden") in refusal(
        InteractionExecutionBinding, {**EXECUTION, "interactionId": "i"}
    )


# --- fields -----------------------------------------------------------------


def test_select_field_rules() -> None:
    parsed = wire_adapter(InteractionField).parse(
        {"type": "select", "name": "c", "label": "C", "allowCustom": True, "options": [{"value": "a", "label": "A"}]}
    )
    assert parsed.allow_custom is True
    base = {"type": "select", "name": "c", "label": "C", "options": [{"value": "a", "label": "A"}]}
    assert ("/options/0/x", "extra_forbidden") in refusal(
        InteractionField, {**base, "options": [{"value": "a", "label": "A", "x": 1}]}
    )
    assert ("/options", "duplicate_option") in refusal(
        InteractionField, {**base, "options": [{"value": "a", "label": "A"}, {"value": "a", "label": "B"}]}
    )
    assert ("/default", "unknown_default_option") in refusal(InteractionField, {**base, "default": ["missing"]})
    assert ("/default", "duplicate_default") in refusal(InteractionField, {**base, "multi": True, "default": ["a", "a"]})
    assert ("/default", "single_select_default") in refusal(
        InteractionField, {**base, "options": [{"value": "a", "label": "A"}, {"value": "b", "label": "B"}], "default": ["a", "b"]}
    )
    assert ("/default", "required_select_default") in refusal(InteractionField, {**base, "required": True, "default": []})
    assert ("/options", "too_short") in refusal(InteractionField, {**base, "options": []})
    custom = wire_adapter(InteractionField).parse({**base, "allowCustom": True, "default": ["write-in"]})
    assert custom.default == ("write-in",)


@pytest.mark.parametrize("kind", ["text", "secret"])
def test_free_text_max_length(kind: str) -> None:
    field = {"type": kind, "name": "answer", "label": "Answer", "maxLength": 4096}
    assert wire_adapter(InteractionField).parse(field).max_length == 4096
    for bad in (0, -1, 1.5, 16_385):
        assert refusal(InteractionField, {**field, "maxLength": bad})[0][0] == "/maxLength"


def test_text_default_bounded_by_max_length() -> None:
    assert ("/default", "default_too_long") in refusal(
        InteractionField, {"type": "text", "name": "a", "label": "A", "maxLength": 3, "default": "four"}
    )
    # UTF-16: an emoji counts two code units.
    assert ("/default", "default_too_long") in refusal(
        InteractionField, {"type": "text", "name": "a", "label": "A", "maxLength": 1, "default": "😀"}
    )


def test_number_field_bounds() -> None:
    base = {"type": "number", "name": "n", "label": "N"}
    assert wire_adapter(InteractionField).parse({**base, "min": 1, "max": 10, "default": 5}).default == 5
    assert ("/max", "max_below_min") in refusal(InteractionField, {**base, "min": 10, "max": 1})
    assert ("/default", "default_below_min") in refusal(InteractionField, {**base, "min": 10, "default": 9})
    assert ("/default", "default_above_max") in refusal(InteractionField, {**base, "max": 10, "default": 11})


@pytest.mark.parametrize("name", ["__proto__", "constructor", "prototype", "", " padded"])
def test_reserved_or_invalid_field_names(name: str) -> None:
    codes = refusal(InteractionField, {"type": "boolean", "name": name, "label": "X"})
    assert codes[0][0] == "/name"


def test_answer_spec_unique_names() -> None:
    field = {"type": "boolean", "name": "x", "label": "X"}
    assert len(InteractionAnswerSpec.parse_wire({"fields": [field]}).fields) == 1
    assert ("/fields", "duplicate_field_name") in refusal(InteractionAnswerSpec, {"fields": [field, field]})


# --- data -------------------------------------------------------------------


def test_interaction_data_values_and_reserved_keys() -> None:
    data = wire_adapter(InteractionData).parse(
        b'{"a":"x","b":1.5,"c":true,"d":["x"],"e":{"kind":"secret_handle","handleId":"h","oneUse":true}}'
    )
    assert set(data) == {"a", "b", "c", "d", "e"}
    assert refusal(InteractionData, b'{"__proto__":"x"}') == [("", "reserved_field_name")]
    assert refusal(InteractionData, {"constructor": "x"}) == [("", "reserved_field_name")]
    assert wire_adapter(InteractionData).parse({"note": "ok"})["note"] == "ok"
    assert refusal(InteractionData, {f"k{i}": 1 for i in range(257)}) == [("", "too_many_fields")]
    assert refusal(InteractionData, {"x": None})[0][0] == "/x"
    for one_use in (False, 1, 1.0):
        assert refusal(InteractionData, {"x": {"kind": "secret_handle", "handleId": "h", "oneUse": one_use}})[0][0].startswith("/x")


# --- requested posture --------------------------------------------------------


def test_requested_interactions_posture() -> None:
    adapter = wire_adapter(RequestedInteractions)
    assert adapter.parse({}) == {}
    posture = {InteractionKind.PERMISSION: True, InteractionKind.QUESTION: False, InteractionKind.PLAN: True}
    assert adapter.parse(posture) == posture
    custom = {"review.patch": True, "pi.extension.deploy": False}
    assert adapter.parse(custom) == custom
    assert "permission" not in adapter.parse({})


@pytest.mark.parametrize(
    "posture",
    [{" approval ": True}, {"approval": True}, {".x": True}, {"x.": True}, {"a..b": True}, {"question": "enabled"}, {"permission": 1}],
)
def test_requested_interactions_refused(posture: dict[str, Any]) -> None:
    assert refusal(RequestedInteractions, posture)


def test_requested_interactions_bounded() -> None:
    oversized = {f"custom.{i}": True for i in range(257)}
    assert refusal(RequestedInteractions, oversized) == [("", "too_many_kinds")]
    assert len(wire_adapter(RequestedInteractions).parse(dict(list(oversized.items())[:256]))) == 256


# --- answer validation ---------------------------------------------------------


def test_validate_answer_select() -> None:
    result = validate_interaction_answer(select_spec(), {"choice": ["write-in"]})
    assert [(i.path, i.code) for i in result.issues] == [("/choice", "invalid_option")]
    assert validate_interaction_answer(select_spec(), {"choice": ["a"]}).ok
    assert validate_interaction_answer(select_spec(allowCustom=True), {"choice": ["my own"]}).ok
    assert validate_interaction_answer(select_spec(allowCustom=True, multi=True), {"choice": ["a", "else"]}).ok
    assert validate_interaction_answer(select_spec(allowCustom=True), {"choice": ["   "]}).issues[0].code == "blank_write_in"
    assert validate_interaction_answer(select_spec(allowCustom=True), {"choice": ["x", "y"]}).issues[0].code == "single_value"
    assert validate_interaction_answer(select_spec(), {"choice": []}).issues[0].code == "selection_required"
    assert validate_interaction_answer(select_spec(), {"choice": "a"}).issues[0].code == "not_an_array"
    undeclared = validate_interaction_answer(select_spec(), {"choice": ["a"], "adminOverride": True})
    assert [(i.path, i.code) for i in undeclared.issues] == [("/adminOverride", "unknown_field")]
    assert validate_interaction_answer(select_spec(), {}).issues[0].code == "missing_required_field"


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf"), "1", True])
def test_validate_answer_number_refuses(value: Any) -> None:
    spec = {"fields": [{"type": "number", "name": "count", "label": "Count"}]}
    assert validate_interaction_answer(spec, {"count": value}).issues[0].code == "not_a_number"


def test_validate_answer_number_bounds_and_boolean() -> None:
    spec = {"fields": [{"type": "number", "name": "n", "label": "N", "min": 1, "max": 3}, {"type": "boolean", "name": "b", "label": "B"}]}
    assert validate_interaction_answer(spec, {"n": 2, "b": False}).ok
    assert validate_interaction_answer(spec, {"n": 0}).issues[0].code == "below_min"
    assert validate_interaction_answer(spec, {"n": 4}).issues[0].code == "above_max"
    assert validate_interaction_answer(spec, {"b": "yes"}).issues[0].code == "not_a_boolean"


@pytest.mark.parametrize("kind", ["text", "secret"])
def test_validate_answer_free_text_max_length(kind: str) -> None:
    spec = {"fields": [{"type": kind, "name": "answer", "label": "Answer", "maxLength": 3}]}
    assert validate_interaction_answer(spec, {"answer": "yes"}).ok
    result = validate_interaction_answer(spec, {"answer": "four"})
    assert [(i.path, i.code) for i in result.issues] == [("/answer", "exceeds_max_length")]


def test_validate_answer_secret_handle() -> None:
    spec = {"fields": [{"type": "secret", "name": "token", "label": "Token"}]}
    handle = {"kind": "secret_handle", "handleId": "h-1", "oneUse": True}
    assert validate_interaction_answer(spec, {"token": handle}).ok
    assert validate_interaction_answer(spec, {"token": {**handle, "oneUse": False}}).issues[0].code == "not_a_secret"
    assert validate_interaction_answer(spec, {"token": 5}).issues[0].code == "not_a_secret"


def test_validate_answer_refuses_invalid_spec_and_non_object() -> None:
    assert not validate_interaction_answer({"fields": [{"type": "nope"}]}, {}).ok
    assert validate_interaction_answer(select_spec(), ["a"]).issues[0].code == "data_not_object"


# --- requests -------------------------------------------------------------------


def test_request_digest_is_canonical_over_material() -> None:
    material = {
        "id": "interaction-1", "kind": "question", "title": "Continue?",
        "answerSpec": {"fields": []},
        "binding": {**EXECUTION, "provider": "cli-bridge", "interactionId": "interaction-1"},
    }
    digest = interaction_request_digest(material)
    assert digest == jcs_digest(material)
    # Hand-written RFC 8785 bytes: keys sorted, no whitespace, absent optionals omitted.
    by_hand = (
        b'{"answerSpec":{"fields":[]},"binding":{"environmentId":"environment-1","executionId":"execution-1",'
        b'"interactionId":"interaction-1","provider":"cli-bridge","runId":"run-1","sessionId":"session-1"},'
        b'"id":"interaction-1","kind":"question","title":"Continue?"}'
    )
    assert digest == "sha256:" + hashlib.sha256(by_hand).hexdigest()
    assert digest == "sha256:15ed5a7486b8067545d58b76f2ae33777c1a32e02d53c651d01e7b8f052c7854"
    request = InteractionRequest.parse_wire({**material, "requestDigest": digest})
    assert request.request_digest == digest
    assert ("/requestDigest", "digest_mismatch") in refusal(
        InteractionRequest, {**material, "title": "Changed", "requestDigest": digest}
    )


def test_request_binding_and_uniqueness_rules() -> None:
    request = make_request(id="i-1", kind="question", title="Q", answerSpec={"fields": []})
    wire = request.to_wire()
    bad_binding = {**wire, "binding": {**wire["binding"], "interactionId": "other"}}
    assert ("/binding/interactionId", "binding_interaction_mismatch") in refusal(InteractionRequest, bad_binding)
    assert ("/responseScopes", "duplicate_value") in refusal(
        InteractionRequest, {**wire, "responseScopes": ["session", "session"]}
    )
    assert ("/allowedOutcomes", "duplicate_value") in refusal(
        InteractionRequest, {**wire, "allowedOutcomes": ["accepted", "accepted"]}
    )
    # The refinement names /default, but the key is absent, so the foundation's pointer
    # mapping stops at the document root (reported to the lead).
    assert ("", "timeout_default_missing") in refusal(InteractionRequest, {**wire, "onTimeout": "default"})
    assert ("/subject/unexpected", "extra_forbidden") in refusal(
        InteractionRequest, {**wire, "subject": {"type": "command", "command": "echo", "unexpected": True}}
    )
    assert ("/default/outcome", "default_outcome_not_allowed") in refusal(
        InteractionRequest, {**wire, "allowedOutcomes": ["accepted"], "default": {"outcome": "declined"}}
    )
    for subject in (
        {"type": "tool", "toolName": "shell", "input": {"cmd": "ls"}},
        {"type": "command", "command": "ls"},
        {"type": "file", "path": "a.txt", "preview": "x"},
        {"type": "resource", "uri": "mcp://x"},
    ):
        assert make_request(id="s", kind="question", title="Q", answerSpec={"fields": []}, subject=subject).subject is not None


def test_request_refuses_invalid_default_grant() -> None:
    with pytest.raises(ContractError) as caught:
        make_request(
            id="p-1", kind="permission", title="Run?",
            answerSpec=permission_answer_spec(response_scopes=["interaction", "session", "persistent"]).to_wire(),
            responseScopes=["interaction"], onTimeout="default",
            default={"outcome": "accepted", "data": {"grant": ["allow_always"]}},
        )
    assert "exceeds" in str(caught.value)


@pytest.mark.parametrize("outcome", ["accepted", "declined", "cancelled"])
def test_request_refuses_secret_default(outcome: str) -> None:
    material = {
        "id": "secret-1", "kind": "question", "title": "Token",
        "answerSpec": {"fields": [{"type": "secret", "name": "token", "label": "Token", "required": True}]},
        "default": {"outcome": outcome, "data": {"token": "must-not-be-persisted"}},
        "binding": {**EXECUTION, "interactionId": "secret-1"},
    }
    with pytest.raises(ContractError) as caught:
        interaction_request_digest(material)
    assert "must-not-be-persisted" not in str(caught.value)
    issues = refusal(InteractionRequest, {**material, "requestDigest": DIGEST_C})
    assert ("/default/data/token", "secret_default") in issues


# --- responses and permission scopes ----------------------------------------------


PERMISSION = make_request(
    id="permission-1", kind="permission", title="Run command?",
    answerSpec=permission_answer_spec(response_scopes=["interaction", "session", "persistent"]).to_wire(),
    responseScopes=["interaction"],
)


def test_permission_spec_offers_only_enabled_grants() -> None:
    spec = permission_answer_spec(response_scopes=["interaction"])
    grant = spec.fields[0]
    assert isinstance(grant, SelectInteractionField)
    values = [option.value for option in grant.options]
    assert values == ["allow_once", "deny"]
    assert [f.name for f in permission_answer_spec().fields] == ["grant", "feedback"]
    assert [f.name for f in permission_answer_spec(allow_feedback=False).fields] == ["grant"]


def test_permission_scope_enforced() -> None:
    result = validate_interaction_response(PERMISSION, {"id": "permission-1", "outcome": "accepted", "data": {"grant": ["allow_always"]}})
    assert [(i.path, i.code) for i in result.issues] == [("/data/grant", "permission_scope_exceeded")]
    session = validate_interaction_response(PERMISSION, {"id": "permission-1", "outcome": "accepted", "data": {"grant": ["allow_session"]}})
    assert session.issues[0].code == "permission_scope_exceeded"
    assert validate_interaction_response(PERMISSION, {"id": "permission-1", "outcome": "accepted", "data": {"grant": ["allow_once"]}}).ok


def test_omitted_scope_is_one_time_only() -> None:
    request = make_request(
        id="p-2", kind="permission", title="Run?",
        answerSpec=permission_answer_spec(response_scopes=["interaction", "session"]).to_wire(),
    )
    assert validate_interaction_response(request, {"id": "p-2", "outcome": "accepted", "data": {"grant": ["allow_once"]}}).ok
    refused = validate_interaction_response(request, {"id": "p-2", "outcome": "accepted", "data": {"grant": ["allow_session"]}})
    assert refused.issues[0].code == "permission_scope_exceeded"
    explicit = make_request(
        id="p-3", kind="permission", title="Run?",
        answerSpec=permission_answer_spec(response_scopes=["interaction", "session"]).to_wire(),
        responseScopes=["interaction", "session"],
    )
    assert validate_interaction_response(explicit, {"id": "p-3", "outcome": "accepted", "data": {"grant": ["allow_session"]}}).ok


def test_denial_always_permitted() -> None:
    request = make_request(
        id="p-s", kind="permission", title="Run?",
        answerSpec=permission_answer_spec(response_scopes=["session"]).to_wire(), responseScopes=["session"],
    )
    assert validate_interaction_response(request, {"id": "p-s", "outcome": "accepted", "data": {"grant": ["deny"]}}).ok


def test_permission_needs_exactly_one_grant() -> None:
    spec = {"fields": [{"type": "select", "name": "grant", "label": "G", "multi": True, "allowCustom": True, "options": [{"value": "allow_once", "label": "x"}]}]}
    request = make_request(id="p-4", kind="permission", title="Run?", answerSpec=spec)
    none = validate_interaction_response(request, {"id": "p-4", "outcome": "accepted", "data": {}})
    assert none.issues[0].code == "permission_grant_missing"
    invalid = validate_interaction_response(request, {"id": "p-4", "outcome": "accepted", "data": {"grant": ["root"]}})
    assert invalid.issues[0].code == "permission_grant_invalid"


def test_response_must_match_exact_request() -> None:
    question = make_request(id="q-1", kind="question", title="Q", answerSpec={"fields": [{"type": "text", "name": "answer", "label": "A"}]}, allowedOutcomes=["accepted"])
    ok = validate_interaction_response(question, {"id": "q-1", "outcome": "accepted", "data": {"answer": "yes"}})
    assert ok.ok and ok.response is not None and ok.response.data == {"answer": "yes"}
    assert validate_interaction_response(question, {"id": "q-2", "outcome": "accepted"}).issues[0].code == "response_id_mismatch"
    assert validate_interaction_response(question, {"id": "q-1", "outcome": "declined"}).issues[0].code == "outcome_not_allowed"
    undeclared = validate_interaction_response(question, {"id": "q-1", "outcome": "accepted", "data": {"answer": "y", "extra": "z"}})
    assert [(i.path, i.code) for i in undeclared.issues] == [("/data/extra", "unknown_field")]
    polluted = validate_interaction_response(question, {"id": "q-1", "outcome": "accepted", "data": {"answer": "y", "__proto__": "p", "constructor": "p", "prototype": "p"}})
    assert {i.path for i in polluted.issues} == {"/data/__proto__", "/data/constructor", "/data/prototype"}
    assert validate_interaction_response(question, {"id": "q-1", "outcome": "maybe"}).issues
    tampered = {**question.to_wire(), "title": "changed"}
    assert validate_interaction_response(tampered, {"id": "q-1", "outcome": "accepted"}).issues[0].code == "digest_mismatch"
    with pytest.raises(ContractError):
        require_valid_interaction_response(question, {"id": "q-2", "outcome": "accepted"})
    assert not interaction_response_is_valid(question, {"id": "q-2", "outcome": "accepted"}).ok


@pytest.mark.parametrize("outcome", ["declined", "cancelled"])
def test_non_accepted_resolution_carries_no_answers(outcome: str) -> None:
    request = make_request(id="sr", kind="question", title="Token", answerSpec={"fields": [{"type": "secret", "name": "token", "label": "T"}, {"type": "text", "name": "note", "label": "N"}]})
    secret = validate_interaction_response(request, {"id": "sr", "outcome": outcome, "data": {"token": "must-not-leak"}})
    assert ("/data/token", "secret_on_non_accepted") in [(i.path, i.code) for i in secret.issues]
    assert "must-not-leak" not in repr(secret)
    plain = validate_interaction_response(request, {"id": "sr", "outcome": outcome, "data": {"note": "x"}})
    assert [i.code for i in plain.issues] == ["data_on_non_accepted"]
    assert validate_interaction_response(request, {"id": "sr", "outcome": outcome}).ok
    # The bare response schema keeps legacy declined/cancelled data for wire compatibility.
    legacy = wire_adapter(InteractionResponse).parse({"id": "i", "outcome": outcome, "data": {"reason": "legacy"}})
    assert legacy.data == {"reason": "legacy"}


# --- commands -------------------------------------------------------------------------


BINDING = {**EXECUTION, "interactionId": "interaction-1", "requestDigest": DIGEST_C}
RESPONSE: dict[str, Any] = {"id": "interaction-1", "outcome": "accepted", "data": {"choice": ["a"]}}
COMMAND_DIGEST = "sha256:" + hashlib.sha256(rfc8785.dumps({"binding": BINDING, "response": RESPONSE})).hexdigest()
COMMAND = {"operationId": "operation-1", "binding": BINDING, "commandDigest": COMMAND_DIGEST, "response": RESPONSE}


def test_command_digest_pinned() -> None:
    assert interaction_response_command_digest(BINDING, RESPONSE) == COMMAND_DIGEST
    assert "sha256:" + hashlib.sha256(
        b'{"binding":{"environmentId":"environment-1","executionId":"execution-1","interactionId":"interaction-1",'
        b'"provider":"test-provider","requestDigest":"' + DIGEST_C.encode() + b'","runId":"run-1","sessionId":"session-1"},'
        b'"response":{"data":{"choice":["a"]},"id":"interaction-1","outcome":"accepted"}}'
    ).hexdigest() == COMMAND_DIGEST


def test_command_binds_response() -> None:
    command = InteractionResponseCommand.parse_wire(COMMAND)
    assert command.to_wire() == COMMAND
    assert InteractionResponseCommand.create("operation-1", BINDING, RESPONSE) == command
    assert ("/response/id", "response_id_mismatch") in refusal(
        InteractionResponseCommand, {**COMMAND, "response": {**RESPONSE, "id": "interaction-2"}}
    )
    assert ("/commandDigest", "digest_mismatch") in refusal(
        InteractionResponseCommand, {**COMMAND, "response": {**RESPONSE, "data": {"choice": ["b"]}}}
    )
    without_session = {k: v for k, v in BINDING.items() if k != "sessionId"}
    assert ("/binding/sessionId", "missing") in refusal(InteractionResponseCommand, {**COMMAND, "binding": without_session})


def test_validate_command_against_request() -> None:
    request = make_request(id="c-1", kind="question", title="Q", answerSpec={"fields": [{"type": "text", "name": "answer", "label": "A"}]})
    binding = {**request.binding.to_wire(), "requestDigest": request.request_digest}
    command = InteractionResponseCommand.create("op-1", binding, {"id": "c-1", "outcome": "accepted", "data": {"answer": "y"}})
    assert validate_interaction_response_command(request, command).ok
    stale = InteractionResponseCommand.create("op-1", {**binding, "runId": "run-2"}, {"id": "c-1", "outcome": "accepted"})
    assert validate_interaction_response_command(request, stale).issues[0].code == "binding_stale"
    stale_digest = InteractionResponseCommand.create("op-1", {**binding, "requestDigest": DIGEST_C}, {"id": "c-1", "outcome": "accepted"})
    assert validate_interaction_response_command(request, stale_digest).issues[0].code == "binding_stale"
    extra = InteractionResponseCommand.create("op-1", binding, {"id": "c-1", "outcome": "accepted", "data": {"x": "y"}})
    assert [(i.path, i.code) for i in validate_interaction_response_command(request, extra).issues] == [("/response/data/x", "unknown_field")]
    bad = validate_interaction_response_command(request, {**command.to_wire(), "commandDigest": DIGEST_C})
    assert bad.issues[0].code == "digest_mismatch"


# --- acknowledgements -------------------------------------------------------------------

STATUSES = [
    "accepted", "already_resolved_same", "already_resolved_different", "expired", "cancelled",
    "unknown_interaction", "unknown_run", "binding_mismatch", "invalid_response", "transport_failure",
]
ACK_BASE = {"operationId": "operation-1", "binding": BINDING, "commandDigest": COMMAND_DIGEST}


@pytest.mark.parametrize("status", STATUSES)
def test_acknowledgement_status_accepted(status: str) -> None:
    ack: dict[str, Any] = {**ACK_BASE, "status": status}
    if status in ("invalid_response", "transport_failure"):
        ack.update(message="connection closed", retryable=True)
    parsed = InteractionAcknowledgement.parse_wire(ack)
    assert parsed.to_wire() == ack
    assert interaction_acknowledgement_matches_command(InteractionResponseCommand.parse_wire(COMMAND), parsed)


@pytest.mark.parametrize("status", STATUSES)
def test_acknowledgement_status_refused(status: str) -> None:
    """Every status refuses an answer value or answer hash riding the acknowledgement."""
    ack: dict[str, Any] = {**ACK_BASE, "status": status, "message": "m", "retryable": False}
    assert ("/data", "extra_forbidden") in refusal(InteractionAcknowledgement, {**ack, "data": {"choice": ["a"]}})
    assert ("/answerDigest", "extra_forbidden") in refusal(InteractionAcknowledgement, {**ack, "answerDigest": DIGEST_C})
    assert ("/response", "extra_forbidden") in refusal(InteractionAcknowledgement, {**ack, "response": RESPONSE})
    assert ("/status", "literal_error") in refusal(InteractionAcknowledgement, {**ack, "status": status.upper()})
    assert ("/message", "string_too_short") in refusal(InteractionAcknowledgement, {**ack, "message": ""})


def test_acknowledgement_detail_rules() -> None:
    assert ("/message", "message_required") in refusal(InteractionAcknowledgement, {**ACK_BASE, "status": "transport_failure", "retryable": True})
    assert ("/message", "message_required") in refusal(InteractionAcknowledgement, {**ACK_BASE, "status": "invalid_response"})
    assert ("/retryable", "retryable_required") in refusal(InteractionAcknowledgement, {**ACK_BASE, "status": "transport_failure", "message": "closed"})


def test_acknowledgement_for_other_command_does_not_match() -> None:
    command = InteractionResponseCommand.parse_wire(COMMAND)
    ack = InteractionAcknowledgement.parse_wire({**ACK_BASE, "operationId": "operation-2", "status": "accepted"})
    assert not interaction_acknowledgement_matches_command(command, ack)


# --- capabilities -----------------------------------------------------------------------

CAPS = {
    "kinds": ["question", "permission", "plan"], "answerFieldTypes": ["text", "select", "secret"],
    "responseScopes": ["interaction", "session", "persistent"], "secretAnswers": True,
    "concurrentRequests": True, "replay": True, "responseIdempotency": True,
}


def test_capabilities() -> None:
    assert InteractionCapabilities.parse_wire(CAPS).to_wire() == CAPS
    issues = refusal(InteractionCapabilities, {**CAPS, "kinds": ["question", "question"], "secretAnswers": False})
    assert ("/secretAnswers", "secret_answers_mismatch") in issues
    assert ("/kinds", "duplicate_value") in issues
    assert ("/secretAnswers", "secret_answers_mismatch") in refusal(InteractionCapabilities, {**CAPS, "answerFieldTypes": ["text"]})
    assert ("/responseScopes", "too_short") in refusal(InteractionCapabilities, {**CAPS, "responseScopes": []})
    assert ("/answerFieldTypes", "duplicate_value") in refusal(InteractionCapabilities, {**CAPS, "answerFieldTypes": ["secret", "secret"]})
    assert ("/replay", "missing") in refusal(InteractionCapabilities, {k: v for k, v in CAPS.items() if k != "replay"})


# --- secret hygiene ---------------------------------------------------------------------

SECRET = "hunter2-correct-horse"


def test_secret_answer_never_leaks(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    request = make_request(id="sec", kind="question", title="Token", answerSpec={"fields": [{"type": "secret", "name": "token", "label": "Token", "maxLength": 5}]})
    accepted = validate_interaction_response(request, {"id": "sec", "outcome": "accepted", "data": {"token": SECRET[:5]}})
    assert accepted.ok and accepted.response is not None
    assert SECRET[:5] not in repr(accepted) and SECRET[:5] not in repr(accepted.response) and SECRET[:5] not in str(accepted.response)
    too_long = validate_interaction_response(request, {"id": "sec", "outcome": "accepted", "data": {"token": SECRET}})
    assert not too_long.ok and SECRET not in repr(too_long)
    with pytest.raises(ContractError) as caught:
        require_valid_interaction_response(request, {"id": "sec", "outcome": "accepted", "data": {"token": SECRET}})
    assert SECRET not in str(caught.value)
    with pytest.raises(ContractError) as bad_type:
        wire_adapter(InteractionResponse).parse({"id": "sec", "outcome": "accepted", "data": {"token": SECRET, "x": None}})
    assert SECRET not in str(bad_type.value)
    binding = {**request.binding.to_wire(), "requestDigest": request.request_digest}
    command = InteractionResponseCommand.create("op", binding, {"id": "sec", "outcome": "accepted", "data": {"token": SECRET}})
    assert SECRET not in repr(command)
    with pytest.raises(ContractError) as tampered:
        InteractionResponseCommand.parse_wire({**command.to_wire(), "commandDigest": DIGEST_C})
    assert SECRET not in str(tampered.value)
    ack = InteractionAcknowledgement.parse_wire({"operationId": "op", "binding": binding, "commandDigest": command.command_digest, "status": "accepted"})
    assert SECRET not in ack.to_wire_json().decode() and SECRET not in repr(ack)
    assert hashlib.sha256(SECRET.encode()).hexdigest() not in ack.to_wire_json().decode()
    assert all(SECRET not in record.getMessage() for record in caplog.records)


def test_binding_model_round_trip() -> None:
    assert InteractionBinding.parse_wire(BINDING).to_wire() == BINDING
    assert ("/requestDigest", "string_pattern_mismatch") in refusal(InteractionBinding, {**BINDING, "requestDigest": "sha256:XYZ"})


def test_tool_subject_input_null_is_bounded_json() -> None:
    with_null = make_request(id="n", kind="question", title="Q", answerSpec={"fields": []}, subject={"type": "tool", "toolName": "shell", "input": None})
    assert with_null.to_wire()["subject"] == {"type": "tool", "toolName": "shell", "input": None}
    without = make_request(id="n", kind="question", title="Q", answerSpec={"fields": []}, subject={"type": "tool", "toolName": "shell"})
    assert "input" not in without.to_wire()["subject"]
    assert with_null.request_digest != without.request_digest
    assert with_null.request_digest == jcs_digest({k: v for k, v in with_null.to_wire().items() if k != "requestDigest"})


# --- parity fixes (see docs/parity/events.md) ---


@pytest.mark.parametrize("material", [None, "s", 1, True, []])
def test_interaction_request_digest_refuses_a_non_object(material: Any) -> None:
    from agent_interface.runtime.interaction_requests import interaction_request_digest

    with pytest.raises(ContractError) as caught:
        interaction_request_digest(material)
    assert [(issue.path, issue.code) for issue in caught.value.issues] == [("", "invalid_type")]


@pytest.mark.parametrize("field_type", ["text", "secret"])
def test_field_max_length_accepts_an_integral_float_like_zod(field_type: str) -> None:
    from agent_interface.runtime.interaction_fields import InteractionField

    adapter = wire_adapter(InteractionField)
    field = adapter.parse(f'{{"name": "a", "label": "A", "type": "{field_type}", "maxLength": 20.0}}')
    assert adapter.to_wire(field)["maxLength"] == 20
    with pytest.raises(ContractError) as caught:
        adapter.parse(f'{{"name": "a", "label": "A", "type": "{field_type}", "maxLength": 20.5}}')
    assert caught.value.issues[0].path == "/maxLength"
