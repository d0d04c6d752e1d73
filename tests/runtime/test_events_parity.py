"""Replay the recorded reference verdicts of the events / run-control / interaction area.

Every line of ``tests/golden/events_parity.jsonl`` was produced by the reference
TypeScript implementation (version 1.6.0); no Node is needed here. Schema lines hold a
document, the reference verdict and, when accepted, the canonical JSON of the
reference's parsed output. Function lines hold a reference call and its result in the
comparable form documented in ``docs/parity/events.md``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import agent_interface as it
from agent_interface.core.canonical import canonical_json
from agent_interface.core.errors import ContractError
from agent_interface.core.model import wire_adapter
from agent_interface.core.registry import wire_schemas
from agent_interface.environment import events as ee
from agent_interface.profile import provider_config as pc
from agent_interface.runtime import control as rc

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "events_parity.jsonl"
LINES = [json.loads(line) for line in GOLDEN.read_text(encoding="utf-8").split("\n") if line.strip()]
SCHEMA_LINES = [line for line in LINES if "schema" in line]
FUNCTION_LINES = [line for line in LINES if "function" in line]


def _validation(result: it.InteractionValidation, with_response: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {"ok": result.ok}
    if with_response and result.ok:
        assert isinstance(result, it.InteractionResponseValidation)
        out["response"] = canonical_json(wire_adapter(it.InteractionResponse).to_wire(result.response))
    return out


def _answer(spec: Any, data: Any = None) -> dict[str, Any]:
    return _validation(it.validate_interaction_answer(spec, data))


def _permission_spec(opts: dict[str, Any] | None = None) -> dict[str, Any]:
    opts = opts or {}
    kwargs: dict[str, Any] = {}
    if "allowFeedback" in opts:
        kwargs["allow_feedback"] = opts["allowFeedback"]
    if "responseScopes" in opts:
        kwargs["response_scopes"] = opts["responseScopes"]
    return {"value": canonical_json(it.permission_answer_spec(**kwargs).to_wire())}


def _with_defaults(model: Any, defaults: Any = None) -> dict[str, Any]:
    parsed = pc.ProviderModelConfig.parse_wire(model)
    chosen = None if defaults is None else pc.ModelGatewayDefaults.parse_wire(defaults)
    return {"value": canonical_json(pc.with_model_gateway_defaults(parsed, chosen).to_wire())}


def _command_digest(material: Any) -> dict[str, Any]:
    if not isinstance(material, dict):
        material = {}
    return {"value": it.interaction_response_command_digest(material.get("binding"), material.get("response"))}


def _boolean(function: Callable[..., bool]) -> Callable[..., dict[str, Any]]:
    return lambda *args: {"value": bool(function(*args))}


# Reference results are projected as follows: a validator gives {"ok"} (plus the
# canonical response for validate_and_parse); a matcher or predicate gives {"value": bool};
# a digest or helper gives {"value": ...} or {"error": true} when it refuses.
CALLS: dict[str, Callable[..., dict[str, Any]]] = {
    "agent_interface.interactions.validate_interaction_answer": _answer,
    "agent_interface.interactions.validate_interaction_response":
        lambda r, s: _validation(it.validate_interaction_response(r, s)),
    "agent_interface.interactions.validate_and_parse_interaction_response":
        lambda r, s: _validation(it.validate_and_parse_interaction_response(r, s), True),
    "agent_interface.interactions.interaction_response_is_valid":
        lambda r, s: _validation(it.interaction_response_is_valid(r, s)),
    "agent_interface.interactions.validate_interaction_response_command":
        lambda r, c: _validation(it.validate_interaction_response_command(r, c)),
    "agent_interface.interactions.interaction_request_digest": lambda m: {"value": it.interaction_request_digest(m)},
    "agent_interface.interactions.interaction_response_command_digest": _command_digest,
    "agent_interface.runtime_control.agent_run_cancellation_request_digest":
        lambda m: {"value": rc.agent_run_cancellation_request_digest(m)},
    "agent_interface.runtime_control.agent_run_control_request_digest":
        lambda m: {"value": rc.agent_run_control_request_digest(m)},
    "agent_interface.runtime_control.same_agent_run_control_ref": _boolean(rc.same_agent_run_control_ref),
    "agent_interface.runtime_control.agent_run_cancellation_acknowledgement_matches_request":
        _boolean(rc.agent_run_cancellation_acknowledgement_matches_request),
    "agent_interface.runtime_control.agent_run_control_acknowledgement_matches_request":
        _boolean(rc.agent_run_control_acknowledgement_matches_request),
    "agent_interface.environment_events.agent_environment_observation_identity_matches":
        _boolean(ee.agent_environment_observation_identity_matches),
    "agent_interface.environment_events.observation_contains_credential":
        _boolean(ee.observation_contains_credential),
    "agent_interface.interactions.permission_answer_spec": _permission_spec,
    "agent_interface.provider_config.normalize_openai_compatible_base_url":
        lambda u: {"value": pc.normalize_openai_compatible_base_url(u)},
    "agent_interface.provider_config.resolve_tangle_router_defaults":
        lambda env=None: {"value": canonical_json(pc.resolve_tangle_router_defaults(env).to_wire())},
    "agent_interface.provider_config.with_model_gateway_defaults": _with_defaults,
    "agent_interface.provider_config.resolve_native_web_tools":
        lambda tools=None: {"value": canonical_json(pc.resolve_native_web_tools(tools).to_wire())},
}


def test_corpus_is_present_and_covers_the_area() -> None:
    assert len(SCHEMA_LINES) > 1000
    assert len({line["schema"] for line in SCHEMA_LINES}) >= 45
    assert {line["function"] for line in FUNCTION_LINES} == set(CALLS)
    assert any(line["accepted"] for line in SCHEMA_LINES)
    assert any(not line["accepted"] for line in SCHEMA_LINES)


@pytest.mark.parametrize("schema", sorted({line["schema"] for line in SCHEMA_LINES}))
def test_schema_verdicts_and_outputs_match_the_reference(schema: str) -> None:
    adapter = wire_schemas()[schema]
    mismatches: list[str] = []
    for line in SCHEMA_LINES:
        if line["schema"] != schema:
            continue
        text = json.dumps(line["doc"])
        for source in ((text, line["doc"]) if not isinstance(line["doc"], str) else (text,)):
            try:
                value = adapter.parse(source)
            except ContractError as error:
                if line["accepted"]:
                    mismatches.append(f"refused {text[:160]}: {error.issues[0].path} {error.issues[0].code}")
                continue
            if not line["accepted"]:
                mismatches.append(f"accepted {text[:160]}")
            elif canonical_json(adapter.to_wire(value)) != line["canonical"]:
                mismatches.append(f"output differs for {text[:160]}")
    assert not mismatches, "\n".join(mismatches[:20])


@pytest.mark.parametrize("function", sorted(CALLS))
def test_function_results_match_the_reference(function: str) -> None:
    call = CALLS[function]
    mismatches: list[str] = []
    for line in FUNCTION_LINES:
        if line["function"] != function:
            continue
        try:
            result = call(*line["args"])
        except ContractError:
            result = {"error": True}
        if result != line["result"]:
            mismatches.append(f"{json.dumps(line['args'])[:200]}: {result} != {line['result']}")
    assert not mismatches, "\n".join(mismatches[:20])
