"""Environment events, native session identity, and environment observations."""

from __future__ import annotations

from typing import Any

import pytest

from agent_interface.core.errors import ContractError
from agent_interface.core.model import wire_adapter
from agent_interface.environment.events import (
    AgentEnvironmentEvent,
    AgentEnvironmentObservation,
    SafeEndpoint,
    agent_environment_observation_identity_matches,
    assert_observation_credential_free,
    bind_native_session,
    native_session_identity,
    observation_contains_credential,
    observation_of,
)
from agent_interface.runtime.events import (
    RuntimeEventEnvelope,
    StreamEvent,
)

NATIVE = {"type": "native.session.observed", "provider": "claude-code", "nativeSessionId": "provider-conversation"}
UPDATED = {"type": "session.updated", "sessionId": "caller-resume"}


def refusal(model: Any, data: Any) -> list[tuple[str, str]]:
    with pytest.raises(ContractError) as caught:
        wire_adapter(model).parse(data)
    return [(issue.path, issue.code) for issue in caught.value.issues]


def test_environment_event_shape() -> None:
    document = {
        "type": "message.part.updated", "data": {"x": 1}, "id": "e-1",
        "normalized": {"type": "status", "status": "processing"},
        "usage": {"inputTokens": 1, "outputTokens": 2}, "usageMode": "cumulative",
        "providerEvent": None,
    }
    parsed = AgentEnvironmentEvent.parse_wire({k: v for k, v in document.items() if k != "providerEvent"})
    assert parsed.usage_mode == "cumulative"
    assert AgentEnvironmentEvent.parse_wire({"type": "t", "data": {}}).usage_mode is None
    assert ("/data", "json_object") in refusal(AgentEnvironmentEvent, {"type": "t", "data": []})
    assert ("/normalized/type", "union_tag_invalid") in refusal(AgentEnvironmentEvent, {"type": "t", "data": {}, "normalized": {"type": "result"}})
    assert ("/usageMode", "literal_error") in refusal(
        AgentEnvironmentEvent, {"type": "t", "data": {}, "usage": {"inputTokens": 1, "outputTokens": 1}, "usageMode": "sum"}
    )
    assert ("/usageMode", "usage_mode_without_usage") in refusal(AgentEnvironmentEvent, {"type": "t", "data": {}, "usageMode": "delta"})
    assert ("/type", "string_too_short") in refusal(AgentEnvironmentEvent, {"type": "", "data": {}})


def test_session_updated_never_establishes_native_identity() -> None:
    updated = wire_adapter(StreamEvent).parse(UPDATED)
    assert native_session_identity([updated]) is None
    env_event = AgentEnvironmentEvent.parse_wire({"type": "session.updated", "data": {"sessionId": "caller-acp"}, "normalized": UPDATED})
    assert native_session_identity([env_event]) is None
    native = wire_adapter(StreamEvent).parse(NATIVE)
    envelope = RuntimeEventEnvelope.parse_wire({"runId": "r", "eventId": "e", "sequence": 0, "receivedAt": "2026-01-01T00:00:00Z", "event": NATIVE})
    assert native_session_identity([updated, envelope, updated]) == native
    assert native_session_identity([AgentEnvironmentEvent.parse_wire({"type": "x", "data": {}, "normalized": NATIVE})]) == native


def test_binding_native_session_to_execution() -> None:
    native = wire_adapter(StreamEvent).parse(NATIVE)
    bound = bind_native_session(native, execution_id="execution-1", session_id="session-1", expected_provider="claude-code")
    assert (bound.execution_id, bound.native_session_id, bound.provider) == ("execution-1", "provider-conversation", "claude-code")
    with pytest.raises(ContractError) as caught:
        bind_native_session(native, execution_id="execution-1", expected_provider="codex")
    assert caught.value.issues[0].code == "provider_mismatch"


PROVENANCE = {"origin": "measured", "observedAt": "2026-08-12T10:00:00.000Z", "source": "runtime-probe"}


def full_observation() -> dict[str, Any]:
    return {
        "subject": {"provider": "tangle", "environmentId": "env-1", "sessionId": "session-1", "backend": "opencode"},
        "capturedAt": "2026-08-12T10:00:01.000Z",
        "identity": {"state": "known", "value": {"provider": "tangle", "environmentId": "env-1", "sessionId": "session-1"}, "provenance": PROVENANCE},
        "lifecycle": {"state": "known", "value": {"status": "running", "cleanup": {"policy": "idle", "confirmed": False}, "continuity": {"resumable": True, "mode": "native"}, "persistence": {"durable": True, "scope": "durable"}}, "provenance": PROVENANCE},
        "endpoint": {"state": "known", "value": {"scheme": "https", "host": "env-1.sandbox.tangle.tools", "port": 8080, "region": "us-east"}, "provenance": PROVENANCE},
        "placement": {"requested": {"kind": "sandbox", "region": "us-east"}, "verified": {"state": "known", "value": {"kind": "sandbox", "sandboxId": "sb-1", "region": "us-east"}, "provenance": PROVENANCE}},
        "resources": {"requested": {"cpu": 2, "memoryMb": 4096, "diskMb": 20480}, "effective": {"state": "known", "value": {"cpu": 2, "memoryMb": 4096, "diskMb": 20480, "accelerator": {"kind": "nvidia-l4", "count": 1, "memoryMb": 24576}}, "provenance": PROVENANCE}},
        "resourceUse": {"current": {"state": "known", "value": {"cpu": 0.5, "memoryMb": 1024}, "provenance": PROVENANCE}, "peak": {"state": "known", "value": {"cpu": 1.5, "memoryMb": 3072}, "provenance": PROVENANCE}},
        "modelUsage": {"state": "known", "value": {"inputTokens": 100, "outputTokens": 50, "cost": 0.02}, "provenance": PROVENANCE},
        "computeBilling": {"state": "known", "value": {"amount": 0.12, "currency": "usd"}, "provenance": PROVENANCE},
        "accountUsage": {
            "plan": {"state": "known", "value": "pro", "provenance": PROVENANCE},
            "credits": {"state": "known", "value": {"remaining": 1000, "unit": "credit"}, "provenance": PROVENANCE},
            "quota": {"state": "unavailable", "reason": "provider does not expose quota"},
            "period": {"state": "known", "value": {"start": "2026-08-01T00:00:00.000Z", "end": "2026-09-01T00:00:00.000Z"}, "provenance": PROVENANCE},
        },
    }


def test_observation_round_trip() -> None:
    document = full_observation()
    assert AgentEnvironmentObservation.parse_wire(document).to_wire() == document
    minimal = {"subject": {"provider": "p", "environmentId": "e"}, "capturedAt": "2026-08-12T10:00:01Z"}
    assert AgentEnvironmentObservation.parse_wire(minimal).to_wire() == minimal
    assert not observation_contains_credential(document)


def test_observation_refusals() -> None:
    assert ("/subject", "missing") in refusal(AgentEnvironmentObservation, {"capturedAt": "2026-08-12T10:00:01Z"})
    assert ("/capturedAt", "missing") in refusal(AgentEnvironmentObservation, {"subject": {"provider": "p", "environmentId": "e"}})
    assert ("/gpu", "extra_forbidden") in refusal(AgentEnvironmentObservation, {**full_observation(), "gpu": {}})


NUMBER = observation_of(int)


@pytest.mark.parametrize(
    "document",
    [{"state": "known", "value": 5, "provenance": PROVENANCE}, {"state": "stale", "value": 5, "provenance": PROVENANCE, "reason": "old"},
     {"state": "unavailable", "reason": "no probe"}, {"state": "redacted", "reason": "confidential"}, {"state": "unknown"}],
)
def test_observation_states_accepted(document: dict[str, Any]) -> None:
    assert wire_adapter(NUMBER).to_wire(wire_adapter(NUMBER).parse(document)) == document


@pytest.mark.parametrize(
    "document",
    [{"value": 5, "provenance": PROVENANCE}, {"state": "unavailable", "reason": "no probe", "value": 0}, {"state": "unknown", "value": 0},
     {"state": "redacted", "reason": "r", "value": 0}, {"state": "unavailable"}, {"state": "redacted"},
     {"state": "stale", "value": 5, "provenance": PROVENANCE}, {"state": "unavailable", "reason": ""}],
)
def test_observation_states_refused(document: dict[str, Any]) -> None:
    assert refusal(NUMBER, document)


def test_safe_endpoint() -> None:
    assert SafeEndpoint.parse_wire({"host": "example.com", "scheme": "https"}).host == "example.com"
    assert ("/host", "endpoint_host") in refusal(SafeEndpoint, {"host": "user:pass@example.com"})
    assert ("/host", "endpoint_host") in refusal(SafeEndpoint, {"host": "example.com/path"})
    assert ("/host", "endpoint_host") in refusal(SafeEndpoint, {"host": "exa\u00a0mple.com"})
    assert ("/scheme", "endpoint_scheme") in refusal(SafeEndpoint, {"host": "example.com", "scheme": "https://user@"})
    assert ("/token", "extra_forbidden") in refusal(SafeEndpoint, {"host": "example.com", "token": "secret"})
    assert ("/port", "less_than_equal") in refusal(SafeEndpoint, {"host": "example.com", "port": 70000})


def test_credential_scan() -> None:
    for leaky in ({"authorization": "Bearer x"}, {"password": "x"}, {"nested": {"apiKey": "x"}}, {"accessToken": "x"}, {"url": "https://user:pass@host/x"}):
        assert observation_contains_credential(leaky)
        with pytest.raises(ContractError):
            assert_observation_credential_free(leaky)
    for clean in ({"inputTokens": 10, "outputTokens": 5}, {"sessionId": "s", "kind": "sandbox"}):
        assert not observation_contains_credential(clean)
        assert_observation_credential_free(clean)


def test_identity_matching() -> None:
    live = full_observation()
    replay = {**full_observation(), "capturedAt": "2026-08-12T11:00:00.000Z", "lifecycle": {"state": "unknown"}}
    assert agent_environment_observation_identity_matches(live, replay)
    assert not agent_environment_observation_identity_matches(live, {**replay, "subject": {**live["subject"], "environmentId": "env-2"}})
    drift = {**replay, "identity": {**live["identity"], "value": {**live["identity"]["value"], "sessionId": "session-2"}}}
    assert not agent_environment_observation_identity_matches(live, drift)
    source = {**replay, "identity": {**live["identity"], "provenance": {**PROVENANCE, "source": "other"}}}
    assert not agent_environment_observation_identity_matches(live, source)
    assert not agent_environment_observation_identity_matches(live, {"subject": {}})


def test_provider_event_null_is_kept_only_when_sent() -> None:
    documents: list[dict[str, Any]] = [{"type": "t", "data": {}}, {"type": "t", "data": {}, "providerEvent": None}, {"type": "t", "data": {}, "providerEvent": [1]}]
    for document in documents:
        assert AgentEnvironmentEvent.parse_wire(document).to_wire() == document
    assert ("/id", "null_not_allowed") in refusal(AgentEnvironmentEvent, {"type": "t", "data": {}, "id": None})


# --- parity fixes (see docs/parity/events.md) ---


def test_safe_endpoint_port_accepts_an_integral_float_like_zod() -> None:
    from agent_interface.environment.events import SafeEndpoint

    endpoint = SafeEndpoint.parse_wire('{"host": "sandbox.example.com", "port": 443.0}')
    assert endpoint.to_wire() == {"host": "sandbox.example.com", "port": 443}
    with pytest.raises(ContractError) as caught:
        SafeEndpoint.parse_wire('{"host": "sandbox.example.com", "port": 443.5}')
    assert caught.value.issues[0].path == "/port"


@pytest.mark.parametrize("space", ["\u00a0", "\u2028", "\ufeff", "\u3000"])
def test_credential_userinfo_pattern_stops_at_javascript_whitespace(space: str) -> None:
    from agent_interface.environment.events import observation_contains_credential

    # JavaScript's \s covers these characters, so the reference finds no userinfo.
    assert observation_contains_credential(f"https://a{space}b@host") is False
    assert observation_contains_credential("https://ab@host") is True
