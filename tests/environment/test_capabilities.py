"""AgentEnvironmentCapabilities (spec: "AgentEnvironmentCapabilitiesSchema strictly validates
the complete capability document at runtime, including all-or-nothing durable branching
declarations." and the sentences around it)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from agent_interface.core.errors import ContractError
from agent_interface.core.registry import wire_schema
from agent_interface.environment.capabilities import (
    AgentEnvironmentCapabilities,
    BackendCapabilities,
    ProviderCapabilities,
    accepts_cwd_base,
    declares_durable_branching,
)

# The spec's example provider, translated: `capabilities: () => ({...})`.
SPEC_EXAMPLE: dict[str, Any] = {
    "profile": {
        "namedProfiles": False,
        "systemPrompt": {"replace": False, "append": True},
        "instructions": True,
        "tools": True,
        "permissions": True,
        "mcp": True,
        "subagents": False,
        "resources": {"files": True, "instructions": True, "tools": True},
        "hooks": False,
        "modes": False,
        "runtimeUpdate": False,
        "validation": True,
    },
    "streaming": {"live": True, "replay": False, "detach": False, "turnIdempotency": False},
    "sessions": {"continue": False, "list": False, "messages": False},
    "workspace": {"read": True, "write": True, "exec": True, "git": False, "upload": False, "download": False},
    "branching": {"checkpoint": False, "fork": False},
    "placement": False,
    "usage": True,
    "confidential": False,
}

# The spec's `const caps: ProviderCapabilities = {...}`.
SPEC_PROVIDER_CAPS = {
    "supportsVision": True,
    "supportsLogprobs": False,
    "supportsToolCalls": True,
    "supportsComputerUse": False,
}

# A complete document (the reference test's fixture plus every newer block).
FULL: dict[str, Any] = {
    "profile": {
        "namedProfiles": True,
        "systemPrompt": {"replace": True, "append": True},
        "instructions": True,
        "tools": True,
        "permissions": True,
        "mcp": True,
        "subagents": True,
        "resources": {"files": True, "instructions": True},
        "runtimeUpdate": True,
        "validation": True,
    },
    "streaming": {"live": True, "replay": True, "detach": True, "turnIdempotency": True},
    "sessions": {"continue": True, "list": True, "messages": True},
    "retainedControl": {
        "exactRunIdentity": True,
        "resultIdentity": True,
        "eventIdentity": True,
        "cancellationIdempotency": True,
    },
    "nativeContinuation": {"atomicBoundary": True, "requestIdempotency": True, "admissionControl": True},
    "contextTransfer": {"freshSession": True, "requestIdempotency": True, "lookup": True},
    "interactions": {
        "kinds": ["permission", "question", "plan"],
        "answerFieldTypes": ["text", "boolean", "secret"],
        "responseScopes": ["interaction", "session"],
        "secretAnswers": True,
        "concurrentRequests": False,
        "replay": True,
        "responseIdempotency": True,
    },
    "workspace": {
        "read": True,
        "write": True,
        "exec": True,
        "git": True,
        "upload": True,
        "download": True,
        "cwdBases": {"repository": True, "host": False},
    },
    "branching": {"checkpoint": True, "fork": True, "retrySafe": True, "lookup": True, "cleanup": True},
    "placement": True,
    "usage": True,
    "confidential": False,
    "exactProcess": {"egress": ["blocked", "strict"]},
    "observation": {
        "identity": True,
        "lifecycle": True,
        "endpoint": True,
        "placement": True,
        "resources": True,
        "resourceUse": True,
        "modelUsage": True,
        "computeBilling": True,
        "accountUsage": True,
    },
    "interactiveTerminal": {"attach": True, "input": True, "resize": True, "reattach": True},
    "interactiveAgent": {
        "start": True,
        "control": True,
        "status": True,
        "attach": True,
        "reattach": True,
        "sendPrompt": True,
        "input": True,
        "resize": True,
        "stop": True,
    },
}


def with_(base: dict[str, Any], **changes: Any) -> dict[str, Any]:
    doc = copy.deepcopy(base)
    doc.update(changes)
    return doc


def issues(doc: Any) -> list[tuple[str, str]]:
    with pytest.raises(ContractError) as caught:
        AgentEnvironmentCapabilities.parse_wire(doc)
    return [(issue.path, issue.code) for issue in caught.value.issues]


def test_spec_example_provider_validates() -> None:
    parsed = AgentEnvironmentCapabilities.parse_wire(SPEC_EXAMPLE)
    assert parsed.to_wire() == SPEC_EXAMPLE
    assert not declares_durable_branching(parsed)
    assert ProviderCapabilities.parse_wire(SPEC_PROVIDER_CAPS).to_wire() == SPEC_PROVIDER_CAPS


def test_legacy_backend_capabilities() -> None:
    doc = {"streaming": True, "toolUse": True, "reasoning": False, "multimodal": False, "contextWindow": 200_000}
    assert BackendCapabilities.parse_wire(doc).to_wire() == doc
    with pytest.raises(ContractError):
        BackendCapabilities.parse_wire({**doc, "toolUse": "yes"})
    with pytest.raises(ContractError):
        ProviderCapabilities.parse_wire({**SPEC_PROVIDER_CAPS, "supportsVision": 1})


def test_complete_document_round_trips() -> None:
    assert AgentEnvironmentCapabilities.parse_wire(FULL).to_wire() == FULL
    assert wire_schema("AgentEnvironmentCapabilities").parse(FULL).to_wire() == FULL


def test_existing_provider_declaration_stays_valid() -> None:
    legacy = with_(FULL, branching={"checkpoint": True, "fork": True})
    for optional in ("interactions", "nativeContinuation", "retainedControl", "contextTransfer"):
        legacy.pop(optional)
    assert AgentEnvironmentCapabilities.parse_wire(legacy).to_wire() == legacy
    flags_false = with_(legacy, branching={"checkpoint": False, "fork": False, "retrySafe": False, "lookup": False, "cleanup": False})
    assert AgentEnvironmentCapabilities.parse_wire(flags_false).branching.retry_safe is False


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"workspace": {**FULL["workspace"], "read": "yes"}}, ("/workspace/read", "bool_type")),
        ({"providerNativeBypass": True}, ("/providerNativeBypass", "extra_forbidden")),
        ({"usage": 1}, ("/usage", "bool_type")),
        ({"placement": None}, ("/placement", "bool_type")),
        ({"streaming": {"live": True, "replay": True, "detach": True}}, ("/streaming/turnIdempotency", "missing")),
        ({"workspace": {**FULL["workspace"], "cwdBases": {"repository": True}}}, ("/workspace/cwdBases/host", "missing")),
        ({"workspace": {**FULL["workspace"], "cwdBases": {"repository": True, "host": False, "container": True}}}, ("/workspace/cwdBases/container", "extra_forbidden")),
        ({"exactProcess": {"egress": []}}, ("/exactProcess/egress", "too_short")),
        ({"exactProcess": {"egress": ["open"]}}, ("/exactProcess/egress/0", "literal_error")),
        ({"observation": {**FULL["observation"], "extra": True}}, ("/observation/extra", "extra_forbidden")),
    ],
)
def test_strict_shape_refusals(change: dict[str, Any], expected: tuple[str, str]) -> None:
    assert expected in issues(with_(FULL, **change))


def test_every_required_block_is_required() -> None:
    for name in ("profile", "streaming", "sessions", "workspace", "branching", "placement", "usage", "confidential"):
        doc = copy.deepcopy(FULL)
        doc.pop(name)
        assert issues(doc) == [(f"/{name}", "missing")]


@pytest.mark.parametrize(
    "system_prompt", [True, False, {"replace": True}, {"append": True}, {"replace": True, "append": True, "prepend": True}]
)
def test_system_prompt_intents_are_two_declared_bits(system_prompt: Any) -> None:
    doc = with_(FULL, profile={**FULL["profile"], "systemPrompt": system_prompt})
    assert issues(doc)[0][0].startswith("/profile/systemPrompt")


@pytest.mark.parametrize(
    "system_prompt",
    [{"replace": False, "append": False}, {"replace": False, "append": True}, {"replace": True, "append": False}, {"replace": True, "append": True}],
)
def test_system_prompt_bits_are_independent(system_prompt: dict[str, bool]) -> None:
    doc = with_(FULL, profile={**FULL["profile"], "systemPrompt": system_prompt})
    assert AgentEnvironmentCapabilities.parse_wire(doc).to_wire() == doc


@pytest.mark.parametrize(
    "branching",
    [
        {"checkpoint": True, "fork": True, "retrySafe": True, "lookup": True, "cleanup": False},
        {"checkpoint": True, "fork": True, "retrySafe": True},
        {"checkpoint": True, "fork": True, "lookup": True},
        {"checkpoint": True, "fork": True, "cleanup": True, "retrySafe": False, "lookup": True},
        {"checkpoint": False, "fork": True, "retrySafe": True, "lookup": True, "cleanup": True},
        {"checkpoint": True, "fork": False, "retrySafe": True, "lookup": True, "cleanup": True},
    ],
)
def test_durable_branching_is_all_or_nothing(branching: dict[str, bool]) -> None:
    assert issues(with_(FULL, branching=branching)) == [("/branching", "capabilities_durable_branching")]


def test_durable_branching_declared_fully() -> None:
    parsed = AgentEnvironmentCapabilities.parse_wire(FULL)
    assert declares_durable_branching(parsed)


def test_native_continuation_rules() -> None:
    assert ("/nativeContinuation", "capabilities_native_continuation") in issues(
        with_(FULL, nativeContinuation={"atomicBoundary": True, "requestIdempotency": False})
    )
    assert ("/nativeContinuation", "capabilities_native_continuation") in issues(
        with_(FULL, sessions={**FULL["sessions"], "continue": False}, retainedControl=None)
        | {"retainedControl": FULL["retainedControl"]}
    )
    no_retained = with_(FULL)
    no_retained.pop("retainedControl")
    assert issues(no_retained) == [("/nativeContinuation/admissionControl", "capabilities_admission_control")]
    without_admission = with_(no_retained, nativeContinuation={"atomicBoundary": True, "requestIdempotency": True})
    assert AgentEnvironmentCapabilities.parse_wire(without_admission).native_continuation is not None


def test_retained_control_needs_every_guarantee() -> None:
    retained = FULL["retainedControl"]
    assert issues(with_(FULL, retainedControl={**retained, "resultIdentity": False})) == [
        ("/retainedControl", "capabilities_retained_control")
    ]
    assert issues(with_(FULL, streaming={**FULL["streaming"], "detach": False})) == [
        ("/retainedControl", "capabilities_retained_control")
    ]


def test_context_transfer_needs_every_guarantee() -> None:
    for flag in ("freshSession", "requestIdempotency", "lookup"):
        block = {**FULL["contextTransfer"], flag: False}
        assert issues(with_(FULL, contextTransfer=block)) == [("/contextTransfer", "capabilities_context_transfer")]


def test_interactions_capability_is_validated_by_its_owner() -> None:
    bad = {**FULL["interactions"], "secretAnswers": False}
    assert issues(with_(FULL, interactions=bad))[0][0] == "/interactions/secretAnswers"
    assert issues(with_(FULL, interactions={**FULL["interactions"], "kinds": []}))[0] == ("/interactions/kinds", "too_short")


def test_observation_surfaces_are_independent() -> None:
    observation = {key: key == "endpoint" for key in FULL["observation"]}
    doc = with_(FULL, observation=observation)
    assert AgentEnvironmentCapabilities.parse_wire(doc).to_wire() == doc


@pytest.mark.parametrize(
    "terminal",
    [
        {"attach": False, "input": True, "resize": False, "reattach": False},
        {"attach": False, "input": False, "resize": True, "reattach": False},
        {"attach": False, "input": False, "resize": False, "reattach": True},
    ],
)
def test_terminal_controls_require_attach(terminal: dict[str, bool]) -> None:
    assert issues(with_(FULL, interactiveTerminal=terminal)) == [("/interactiveTerminal", "capabilities_terminal_attach")]


def test_interactive_agent_dependencies() -> None:
    complete = FULL["interactiveAgent"]
    assert ("/interactiveAgent", "capabilities_interactive_start") in issues(with_(FULL, interactiveAgent={**complete, "start": False}))
    assert ("/interactiveAgent", "capabilities_interactive_attach") in issues(with_(FULL, interactiveAgent={**complete, "attach": False}))
    assert ("/interactiveAgent/control", "capabilities_interactive_control") in issues(with_(FULL, interactiveAgent={**complete, "control": False}))
    assert ("/interactiveAgent/input", "bool_type") in issues(with_(FULL, interactiveAgent={**complete, "input": "yes"}))
    only_start = {key: key == "start" for key in complete}
    assert AgentEnvironmentCapabilities.parse_wire(with_(FULL, interactiveAgent=only_start)).interactive_agent is not None


def test_duplicate_open_values_are_refused() -> None:
    assert ("/profile/extensions", "capabilities_duplicate_extensions") in issues(
        with_(FULL, profile={**FULL["profile"], "extensions": ["vendor", "vendor"]})
    )
    assert issues(with_(FULL, exactProcess={"egress": ["blocked", "blocked"]})) == [
        ("/exactProcess/egress", "capabilities_duplicate_egress")
    ]


def test_cwd_bases() -> None:
    parsed = AgentEnvironmentCapabilities.parse_wire(FULL)
    assert accepts_cwd_base(parsed, "repository")
    assert not accepts_cwd_base(parsed, "host")
    undeclared = AgentEnvironmentCapabilities.parse_wire(SPEC_EXAMPLE)
    assert not accepts_cwd_base(undeclared, "repository")


def test_document_is_immutable() -> None:
    parsed = AgentEnvironmentCapabilities.parse_wire(FULL)
    with pytest.raises(Exception):  # noqa: B017 - pydantic frozen instance
        parsed.workspace.read = False  # type: ignore[misc]
    assert parsed.workspace.read is True


class SpecExampleProvider:
    """The spec's `const provider: AgentEnvironmentProvider = {...}`, in Python."""

    name = "example"

    async def capabilities(self) -> AgentEnvironmentCapabilities:
        return AgentEnvironmentCapabilities.parse_wire(SPEC_EXAMPLE)

    async def create(self, input: Any) -> Any:
        raise NotImplementedError("implement provider create()")


def test_spec_example_provider_object() -> None:
    import asyncio

    from agent_interface.provider.protocols import (
        AgentEnvironmentProvider,
        check_capability_surface,
    )

    provider = SpecExampleProvider()
    assert isinstance(provider, AgentEnvironmentProvider)
    capabilities = asyncio.run(provider.capabilities())
    assert check_capability_surface(provider, capabilities) == ()
    with pytest.raises(NotImplementedError, match="implement provider create"):
        asyncio.run(provider.create({"profile": {"name": "w"}}))
