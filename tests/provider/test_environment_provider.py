"""Environment provider protocols, create input and idempotency, turn inputs, metadata
snapshots and the capability surface (spec: "CreateAgentEnvironmentInput.idempotencyKey
makes generic environment creation one retry-safe operation." and around it)."""

from __future__ import annotations

import asyncio
import copy
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_interface.core.errors import ContractError
from agent_interface.core.model import (
    FrozenDict,
    wire_adapter,
)
from agent_interface.core.registry import wire_schema
from agent_interface.environment.capabilities import AgentEnvironmentCapabilities
from agent_interface.provider.create import (
    AgentEnvironmentCreateIdempotencyRecord,
    agent_environment_create_input_digest,
    create_agent_environment_with_idempotency,
    detached_metadata,
    replayed_agent_environment_view,
)
from agent_interface.provider.protocols import check_capability_surface
from agent_interface.provider.turn import (
    AgentEnvironmentCreation,
    AgentTurnInput,
    AgentTurnResult,
    CreateAgentEnvironmentInput,
    require_turn_profile_supported,
    turn_profile_refusals,
)
from tests.environment.test_capabilities import FULL, SPEC_EXAMPLE

# ---------------------------------------------------------------------------
# Create input and its digest
# ---------------------------------------------------------------------------

REFERENCE_INPUT = {"profile": {"name": "worker"}, "metadata": {"z": 1, "a": 2}, "idempotencyKey": "create-1"}
# RFC 8785 of {"input":{"metadata":{"a":2,"z":1},"profile":{"name":"worker"}},"kind":"agent-environment-create.v1"}
REFERENCE_DIGEST = "sha256:07d78bfed947ad178c2c7ae954fdd69a9035c560bd7fb92902ddf5e3be2115f1"


def test_digest_is_pinned_and_ignores_key_signal_and_order() -> None:
    assert agent_environment_create_input_digest(REFERENCE_INPUT) == REFERENCE_DIGEST
    reordered = {"signal": "attempt-2", "idempotencyKey": "other", "metadata": {"a": 2, "z": 1}, "profile": {"name": "worker"}}
    assert agent_environment_create_input_digest(reordered) == REFERENCE_DIGEST
    model = CreateAgentEnvironmentInput.parse_wire(REFERENCE_INPUT)
    assert agent_environment_create_input_digest(model) == REFERENCE_DIGEST


@pytest.mark.parametrize(
    "change",
    [
        {"metadata": {"a": 3, "z": 1}},
        {"name": "worker-env"},
        {"requestedId": "env-7"},
        {"backend": "codex"},
        {"env": {"A": "1"}},
        {"secrets": ["TOKEN"]},
        {"providerOptions": {"region": "eu"}},
        {"workspace": {"cwd": {"base": "repository", "path": "."}}},
        {"resources": {"cpu": 1}},
        {"profile": {"name": "worker", "description": "x"}},
    ],
)
def test_every_other_create_field_changes_the_digest(change: dict[str, Any]) -> None:
    assert agent_environment_create_input_digest({**REFERENCE_INPUT, **change}) != REFERENCE_DIGEST


def test_create_input_shape() -> None:
    full = {
        "profile": {"name": "worker"},
        "requestedId": "env-7",
        "backend": "opencode",
        "workspace": {"repoUrl": "https://x/y.git", "gitRef": "main", "cwd": {"base": "repository", "path": "src"}},
        "resources": {"cpu": 2, "memoryMb": 4096},
        "env": {"MODE": "ci"},
        "secrets": {"TOKEN": "vault:token"},
        "metadata": {"owner": "me"},
        "name": "worker-env",
        "idempotencyKey": "create-1",
        "providerOptions": {"region": "eu"},
    }
    parsed = CreateAgentEnvironmentInput.parse_wire(full)
    assert parsed.to_wire() == full
    assert "vault:token" not in repr(parsed) and "MODE" not in repr(parsed)
    assert CreateAgentEnvironmentInput.parse_wire({"profile": "catalog-profile"}).profile == "catalog-profile"
    assert CreateAgentEnvironmentInput.parse_wire({"profile": {}, "secrets": ["A", "B"]}).secrets == ("A", "B")


@pytest.mark.parametrize(
    ("doc", "path", "code"),
    [
        ({}, "/profile", "missing"),
        ({"profile": {"name": "w"}, "signal": "x"}, "/signal", "extra_forbidden"),
        ({"profile": {"name": "w"}, "idempotencyKey": " k"}, "/idempotencyKey", "identifier_whitespace"),
        ({"profile": {"name": "w"}, "idempotencyKey": ""}, "/idempotencyKey", "string_too_short"),
        ({"profile": {"name": "w"}, "requestedId": "a" * 513}, "/requestedId", "string_too_long"),
        ({"profile": {"name": "w"}, "metadata": []}, "/metadata", "json_object"),
        ({"profile": {"name": "w"}, "workspace": {"cwd": {"base": "repository", "path": "../x"}}}, "/workspace/cwd/path", "path_parent_traversal"),
        ({"profile": {"name": "w"}, "env": {"A": 1}}, "/env/A", "string_type"),
        ({"profile": {"harness": "unsupported-harness"}}, "/profile/harness", "literal_error"),
        ({"profile": " catalog"}, "/profile", "identifier_whitespace"),
        ({"profile": 5}, "/profile", "model_type"),
    ],
)
def test_create_input_refusals(doc: dict[str, Any], path: str, code: str) -> None:
    with pytest.raises(ContractError) as caught:
        CreateAgentEnvironmentInput.parse_wire(doc)
    assert (path, code) in [(i.path, i.code) for i in caught.value.issues]


def test_creation_verdicts() -> None:
    schema = wire_schema("AgentEnvironmentCreation")
    assert schema.parse('"created"') == "created"
    assert schema.parse('"replayed"') == "replayed"
    for bad in ['"unknown"', '""', '"CREATED"', "null", "true", None, True]:
        with pytest.raises(ContractError):
            schema.parse(bad)


# ---------------------------------------------------------------------------
# Keyed create helper
# ---------------------------------------------------------------------------


@dataclass
class FakeEnvironment:
    id: str
    creation: AgentEnvironmentCreation | None = None

    async def status(self) -> str:
        return "running"


def test_same_key_replays_and_changed_input_refuses_before_effect() -> None:
    async def scenario() -> None:
        records: dict[str, AgentEnvironmentCreateIdempotencyRecord[FakeEnvironment]] = {}
        effects: list[int] = []

        async def create() -> FakeEnvironment:
            effects.append(1)
            return FakeEnvironment("environment-1", "created")

        first = await create_agent_environment_with_idempotency(records, REFERENCE_INPUT, create)
        replay = await create_agent_environment_with_idempotency(
            records, {"profile": {"name": "worker"}, "metadata": {"a": 2, "z": 1}, "idempotencyKey": "create-1"}, create
        )
        assert first.creation == "created"
        assert replay is not first
        assert replay.creation == "replayed"
        assert replay.id == "environment-1"
        assert replay.status == first.status  # the same environment's operations
        assert first.creation == "created"  # the per-call verdict of the first call is unchanged
        assert effects == [1]
        with pytest.raises(ContractError) as caught:
            await create_agent_environment_with_idempotency(
                records, {**REFERENCE_INPUT, "metadata": {"a": 3, "z": 1}}, create
            )
        assert caught.value.issues[0].code == "idempotency_conflict"
        assert caught.value.issues[0].path == "/idempotencyKey"
        assert effects == [1]

    asyncio.run(scenario())


def test_concurrent_same_key_calls_make_exactly_one_create_effect() -> None:
    async def scenario() -> None:
        records: dict[str, AgentEnvironmentCreateIdempotencyRecord[FakeEnvironment]] = {}
        effects: list[int] = []
        release = asyncio.Event()

        async def create() -> FakeEnvironment:
            effects.append(1)
            await release.wait()
            return FakeEnvironment("environment-1")

        calls = [
            asyncio.ensure_future(create_agent_environment_with_idempotency(records, copy.deepcopy(REFERENCE_INPUT), create))
            for _ in range(10)
        ]
        await asyncio.sleep(0)
        release.set()
        results = await asyncio.gather(*calls)
        assert effects == [1]
        assert {r.id for r in results} == {"environment-1"}
        assert results[0].creation is None  # the provider could not prove the verdict
        assert all(r.creation == "replayed" for r in results[1:])

    asyncio.run(scenario())


def test_any_present_key_is_a_key_and_an_unhashable_one_is_refused() -> None:
    async def scenario() -> None:
        records: dict[Any, AgentEnvironmentCreateIdempotencyRecord[FakeEnvironment]] = {}
        effects: list[int] = []

        async def create() -> FakeEnvironment:
            effects.append(1)
            return FakeEnvironment(f"environment-{len(effects)}", "created")

        # As the reference's ``key === undefined``: "", 5 and null are keys; 5 is not "5".
        for key in ("", 5, None):
            first = await create_agent_environment_with_idempotency(records, {"profile": "p", "idempotencyKey": key}, create)
            again = await create_agent_environment_with_idempotency(records, {"profile": "p", "idempotencyKey": key}, create)
            assert (first.creation, again.creation, again.id) == ("created", "replayed", first.id)
        other = await create_agent_environment_with_idempotency(records, {"profile": "p", "idempotencyKey": "5"}, create)
        assert other.creation == "created"
        assert len(effects) == 4
        with pytest.raises(ContractError) as refused:
            await create_agent_environment_with_idempotency(records, {"profile": "p", "idempotencyKey": ["k"]}, create)
        assert (refused.value.issues[0].path, refused.value.issues[0].code) == ("/idempotencyKey", "idempotency_key_invalid")
        assert len(effects) == 4

    asyncio.run(scenario())


def test_concurrent_changed_input_is_refused_while_pending() -> None:
    async def scenario() -> None:
        records: dict[str, AgentEnvironmentCreateIdempotencyRecord[FakeEnvironment]] = {}
        effects: list[int] = []
        release = asyncio.Event()

        async def create() -> FakeEnvironment:
            effects.append(1)
            await release.wait()
            return FakeEnvironment("environment-1", "created")

        first = asyncio.ensure_future(create_agent_environment_with_idempotency(records, REFERENCE_INPUT, create))
        await asyncio.sleep(0)
        with pytest.raises(ContractError):
            await create_agent_environment_with_idempotency(records, {**REFERENCE_INPUT, "name": "changed"}, create)
        release.set()
        assert (await first).creation == "created"
        assert effects == [1]

    asyncio.run(scenario())


def test_unkeyed_create_keeps_the_provider_verdict() -> None:
    async def scenario() -> None:
        records: dict[str, AgentEnvironmentCreateIdempotencyRecord[FakeEnvironment]] = {}
        unkeyed = {k: v for k, v in REFERENCE_INPUT.items() if k != "idempotencyKey"}

        async def create() -> FakeEnvironment:
            return FakeEnvironment("environment-2")

        environment = await create_agent_environment_with_idempotency(records, unkeyed, create)
        assert environment.creation is None
        assert records == {}

    asyncio.run(scenario())


def test_failed_create_forgets_the_key_and_cancelled_waiter_does_not_cancel_it() -> None:
    async def scenario() -> None:
        records: dict[str, AgentEnvironmentCreateIdempotencyRecord[FakeEnvironment]] = {}

        async def broken() -> FakeEnvironment:
            raise RuntimeError("provider down")

        with pytest.raises(RuntimeError):
            await create_agent_environment_with_idempotency(records, REFERENCE_INPUT, broken)
        assert records == {}

        release = asyncio.Event()

        async def slow() -> FakeEnvironment:
            await release.wait()
            return FakeEnvironment("environment-3", "created")

        waiter = asyncio.ensure_future(create_agent_environment_with_idempotency(records, REFERENCE_INPUT, slow))
        await asyncio.sleep(0)
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        release.set()
        replay = await create_agent_environment_with_idempotency(records, REFERENCE_INPUT, slow)
        assert replay.id == "environment-3" and replay.creation == "replayed"

    asyncio.run(scenario())


def test_replayed_view_of_a_class_instance() -> None:
    environment = FakeEnvironment("environment-1", "created")
    view = replayed_agent_environment_view(environment)
    assert view.creation == "replayed"
    assert view.id == "environment-1"
    assert environment.creation == "created"
    with pytest.raises(AttributeError):
        view.id = "other"
    assert replayed_agent_environment_view(view) is view
    assert isinstance(view, FakeEnvironment)  # a replay passes the caller's isinstance check


# ---------------------------------------------------------------------------
# Metadata snapshots
# ---------------------------------------------------------------------------


def test_metadata_snapshot_is_detached_and_deeply_immutable() -> None:
    source: dict[str, Any] = {"owner": "me", "tags": ["a"], "nested": {"k": [1, {"x": 2}]}}
    snapshot = detached_metadata(source)
    assert isinstance(snapshot, FrozenDict)
    source["owner"] = "you"
    source["tags"].append("b")
    source["nested"]["k"][1]["x"] = 99
    assert snapshot == {"owner": "me", "tags": ("a",), "nested": {"k": (1, {"x": 2})}}
    with pytest.raises(TypeError):
        snapshot["owner"] = "x"
    with pytest.raises(TypeError):
        snapshot["nested"]["k"] = ()
    with pytest.raises(AttributeError):
        snapshot["tags"].append("c")
    assert detached_metadata(None) is None
    with pytest.raises(ContractError):
        detached_metadata({"bad": float("nan")})


# ---------------------------------------------------------------------------
# Turn inputs and results
# ---------------------------------------------------------------------------

PROFILE = {
    "name": "large-mounted-research",
    "harness": "claude-code",
    "model": {"provider": "anthropic", "default": "fixture-model"},
    "resources": {
        "files": [
            {"path": f"inputs/source-{i}.txt", "resource": {"kind": "inline", "name": f"source-{i}", "content": "evidence" * 2600}}
            for i in range(110)
        ]
    },
}


def test_turn_profile_is_kept_outside_bounded_provider_options() -> None:
    turn = AgentTurnInput.parse_wire({"prompt": "Continue the research", "profile": PROFILE})
    assert turn.profile is not None
    assert turn.to_wire()["profile"] == PROFILE
    with pytest.raises(ContractError) as caught:
        AgentTurnInput.parse_wire({"prompt": "Continue", "providerOptions": {"backend": {"profile": PROFILE}}})
    assert caught.value.issues[0].path == "/providerOptions"
    with pytest.raises(ContractError):
        AgentTurnInput.parse_wire({"prompt": "Continue", "profile": PROFILE, "providerOptions": {"huge": "x" * 16385}})


def test_turn_profile_uses_the_canonical_profile_schema() -> None:
    with pytest.raises(ContractError) as caught:
        AgentTurnInput.parse_wire({"prompt": "Continue", "profile": {**PROFILE, "harness": "unsupported-harness"}})
    assert all(issue.path.startswith("/profile") for issue in caught.value.issues)


def test_turn_interaction_posture() -> None:
    assert AgentTurnInput.parse_wire({"prompt": "x"}).interactions is None
    assert AgentTurnInput.parse_wire({"prompt": "x", "interactions": {}}).to_wire() == {"prompt": "x", "interactions": {}}
    posture = {"permission": True, "question": False, "acme.review": True}
    assert AgentTurnInput.parse_wire({"interactions": posture}).to_wire()["interactions"] == posture
    with pytest.raises(ContractError) as caught:
        AgentTurnInput.parse_wire({"interactions": {"permission": "yes"}})
    assert caught.value.issues[0].path.startswith("/interactions")


@pytest.mark.parametrize(
    ("doc", "path"),
    [
        ({"timeoutMs": 0}, "/timeoutMs"),
        ({"timeoutMs": 1.5}, "/timeoutMs"),
        ({"sessionId": " s"}, "/sessionId"),
        ({"parts": [{"type": "video"}]}, "/parts/0"),
        ({"detach": "true"}, "/detach"),
    ],
)
def test_turn_input_refusals(doc: dict[str, Any], path: str) -> None:
    with pytest.raises(ContractError) as caught:
        AgentTurnInput.parse_wire(doc)
    assert caught.value.issues[0].path.startswith(path)


@pytest.mark.parametrize("signal", [{}, None, "aborted", [1, {"a": True}]])
def test_turn_input_signal_is_carried_like_the_reference(signal: Any) -> None:
    # zod's unchecked ``z.custom<AbortSignal>()`` accepts any value, and JSON.stringify
    # writes an AbortSignal as {}: the key is accepted, carried, and cancels nothing.
    turn = AgentTurnInput.parse_wire({"prompt": "x", "signal": signal})
    assert turn.to_wire() == {"prompt": "x", "signal": signal}
    assert "signal" not in AgentTurnInput.parse_wire({"prompt": "x"}).to_wire()


def test_turn_result() -> None:
    doc = {
        "text": "done",
        "success": True,
        "sessionId": "s",
        "usage": {"inputTokens": 1, "outputTokens": 2},
        "events": [{"type": "result", "data": {"status": "completed"}, "id": "e1"}],
    }
    assert AgentTurnResult.parse_wire(doc).to_wire() == doc
    with pytest.raises(ContractError) as caught:
        AgentTurnResult.parse_wire({"text": "x"})
    assert caught.value.issues[0].path == "/success"


# ---------------------------------------------------------------------------
# Per-turn profile support
# ---------------------------------------------------------------------------

APPEND_ONLY = AgentEnvironmentCapabilities.parse_wire({**SPEC_EXAMPLE, "profile": {**SPEC_EXAMPLE["profile"], "runtimeUpdate": True}})


def test_append_only_provider_refuses_a_replacement_system_prompt() -> None:
    issues = turn_profile_refusals(APPEND_ONLY, {"prompt": {"systemPrompt": "Replace."}})
    assert [(i.path, i.code) for i in issues] == [("/profile/prompt/systemPrompt", "system_prompt_replace_unsupported")]
    assert turn_profile_refusals(APPEND_ONLY, {"prompt": {"appendSystemPrompt": "Add."}}) == ()


def test_profile_refusals_follow_each_flag() -> None:
    caps = AgentEnvironmentCapabilities.parse_wire(SPEC_EXAMPLE)
    profile = {
        "prompt": {"appendSystemPrompt": "x", "instructions": ["i"]},
        "tools": {"bash": True},
        "subagents": {"r": {"prompt": {"instructions": ["x"]}}},
        "hooks": {"pre": []},
        "modes": {"plan": {}},
        "resources": {"skills": [{"kind": "inline", "name": "s", "content": "c"}]},
        "extensions": {"acme": {}},
    }
    codes = {(i.path, i.code) for i in turn_profile_refusals(caps, profile)}
    assert codes == {
        ("/profile", "turn_profile_unsupported"),
        ("/profile/subagents", "profile_subagents_unsupported"),
        ("/profile/hooks", "profile_hooks_unsupported"),
        ("/profile/modes", "profile_modes_unsupported"),
        ("/profile/resources/skills", "profile_resources_skills_unsupported"),
        ("/profile/extensions/acme", "profile_extension_unsupported"),
    }
    assert turn_profile_refusals(caps, profile, per_turn=False) != ()
    assert turn_profile_refusals(caps, None) == ()


def test_full_provider_accepts_the_turn_profile() -> None:
    caps = AgentEnvironmentCapabilities.parse_wire(FULL)
    turn = AgentTurnInput.parse_wire({"prompt": "x", "profile": {"prompt": {"systemPrompt": "Replace."}, "tools": {"bash": True}}})
    require_turn_profile_supported(caps, turn)
    with pytest.raises(ContractError) as caught:
        require_turn_profile_supported(AgentEnvironmentCapabilities.parse_wire(SPEC_EXAMPLE), turn)
    assert caught.value.issues[0].code == "turn_profile_unsupported"


# ---------------------------------------------------------------------------
# Capability surface
# ---------------------------------------------------------------------------


class ReadOnlyEnvironment:
    id = "e"
    provider = "p"
    creation = None
    metadata = None

    async def status(self) -> str:
        return "running"

    def stream(self, input: Any) -> Any:
        raise NotImplementedError

    async def read(self, path: str) -> str:
        return ""

    async def write(self, path: str, content: str) -> None:
        return None

    async def exec(self, command: str) -> Any:
        return None


def test_surface_reports_members_exposed_without_their_capability() -> None:
    doc = copy.deepcopy(SPEC_EXAMPLE)
    doc["workspace"]["exec"] = False
    found = check_capability_surface(ReadOnlyEnvironment(), doc)
    assert [(i.member, i.code) for i in found] == [("exec", "exposed_without_capability")]
    assert check_capability_surface(ReadOnlyEnvironment(), SPEC_EXAMPLE) == ()


def test_surface_reports_declared_members_that_are_missing() -> None:
    doc = copy.deepcopy(SPEC_EXAMPLE)
    doc["placement"] = True
    found = check_capability_surface(ReadOnlyEnvironment(), doc)
    assert [(i.member, i.capability, i.code) for i in found] == [("placement", "/placement", "missing_declared_capability")]


def test_surface_of_sessions_and_providers() -> None:
    class Session:
        id = "s"

        async def prompt(self, input: Any) -> Any: ...

        async def cancel_run(self, request: Any) -> Any: ...

    found = check_capability_surface(Session(), SPEC_EXAMPLE)
    assert [(i.member, i.code) for i in found] == [("cancel_run", "exposed_without_capability")]

    class Provider:
        name = "p"
        exact_process = object()

        async def capabilities(self) -> Any: ...

        async def create(self, input: Any) -> Any: ...

    found = check_capability_surface(Provider(), SPEC_EXAMPLE)
    assert [(i.member, i.code) for i in found] == [("exact_process", "exposed_without_capability")]
    with_exact = {**SPEC_EXAMPLE, "exactProcess": {"egress": ["blocked"]}}
    assert check_capability_surface(Provider(), with_exact) == ()


def test_create_input_is_registered() -> None:
    for name in ("CreateAgentEnvironmentInput", "AgentTurnInput", "AgentTurnResult", "AgentSessionRef", "WorkspaceRequest", "AgentEnvironmentCapabilities"):
        assert wire_schema(name) is not None
    assert wire_adapter(CreateAgentEnvironmentInput).parse(REFERENCE_INPUT).idempotency_key == "create-1"


# ---------------------------------------------------------------------------
# Legacy adapter and destruction rule
# ---------------------------------------------------------------------------

BACKEND = {"streaming": True, "toolUse": True, "reasoning": False, "multimodal": False, "contextWindow": 1000}


class LegacyAdapter:
    provider = "legacy"

    def get_capabilities(self) -> Any:
        return BACKEND

    async def initialize(self, config: Any) -> None: ...

    async def execute(self, input: Any, services: Any, on_event: Any = None) -> Any: ...

    async def shutdown(self) -> None: ...

    async def health_check(self) -> bool:
        return True

    async def respond_to_interaction(self, response: Any) -> None: ...


class BindingAdapter(LegacyAdapter):
    async def respond_to_interaction_command(self, command: Any) -> Any: ...


def test_legacy_and_binding_adapters() -> None:
    from agent_interface.provider.protocols import (
        SdkProviderAdapter,
        check_adapter_surface,
    )

    assert isinstance(LegacyAdapter(), SdkProviderAdapter)
    assert isinstance(BindingAdapter(), SdkProviderAdapter)
    with_kinds = {**BACKEND, "interactions": ["permission"]}
    assert check_adapter_surface(LegacyAdapter(), with_kinds) == ()
    assert check_adapter_surface(BindingAdapter(), with_kinds) == ()
    found = check_adapter_surface(BindingAdapter(), BACKEND)
    assert [(i.member, i.code) for i in found] == [
        ("respond_to_interaction", "exposed_without_capability"),
        ("respond_to_interaction_command", "exposed_without_capability"),
    ]

    class Silent:
        provider = "silent"

    assert [i.code for i in check_adapter_surface(Silent(), with_kinds)] == ["missing_declared_capability"]


def test_only_a_proven_creation_may_be_destroyed() -> None:
    from agent_interface.provider.protocols import may_destroy_environment

    assert may_destroy_environment(FakeEnvironment("e", "created"))
    assert not may_destroy_environment(FakeEnvironment("e", "replayed"))
    assert not may_destroy_environment(FakeEnvironment("e", None))
    assert not may_destroy_environment(replayed_agent_environment_view(FakeEnvironment("e", "created")))


def test_interactions_are_advertised_only_with_an_answer_method() -> None:
    interactions = {
        "kinds": ["permission"],
        "answerFieldTypes": ["boolean"],
        "responseScopes": ["interaction"],
        "secretAnswers": False,
        "concurrentRequests": False,
        "replay": False,
        "responseIdempotency": True,
    }
    doc = {**SPEC_EXAMPLE, "interactions": interactions}
    found = check_capability_surface(ReadOnlyEnvironment(), doc)
    assert [(i.member, i.code) for i in found] == [("respond_to_interaction", "missing_declared_capability")]

    class Answering(ReadOnlyEnvironment):
        async def respond_to_interaction(self, command: Any) -> Any: ...

    assert check_capability_surface(Answering(), doc) == ()
    assert [(i.member, i.code) for i in check_capability_surface(Answering(), SPEC_EXAMPLE)] == [
        ("respond_to_interaction", "exposed_without_capability")
    ]


def test_context_transfer_is_exposed_only_when_durable() -> None:
    class Provider:
        name = "p"
        context_transfer = object()

        async def capabilities(self) -> Any: ...

        async def create(self, input: Any) -> Any: ...

    assert [(i.member, i.code) for i in check_capability_surface(Provider(), SPEC_EXAMPLE)] == [
        ("context_transfer", "exposed_without_capability")
    ]
    durable = {**SPEC_EXAMPLE, "contextTransfer": {"freshSession": True, "requestIdempotency": True, "lookup": True}}
    assert check_capability_surface(Provider(), durable) == ()


def test_in_memory_objects_satisfy_the_protocols() -> None:
    from agent_interface.provider.protocols import (
        AgentEnvironment,
        AgentEnvironmentProvider,
        AgentSession,
    )
    from agent_interface.testing.provider import InMemoryAgentEnvironmentProvider

    async def scenario() -> None:
        provider = InMemoryAgentEnvironmentProvider()
        assert isinstance(provider, AgentEnvironmentProvider)
        environment = await provider.create({"profile": {"name": "w"}, "idempotencyKey": "k"})
        assert isinstance(environment, AgentEnvironment)
        replay = await provider.create({"profile": {"name": "w"}, "idempotencyKey": "k"})
        assert isinstance(replay, AgentEnvironment)
        assert isinstance(environment.session("s"), AgentSession)

    asyncio.run(scenario())


_json_leaf = st.one_of(st.none(), st.booleans(), st.integers(-(2**53) + 1, 2**53 - 1), st.text(max_size=8))
_json = st.recursive(_json_leaf, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=10)


@given(metadata=st.dictionaries(st.text(max_size=6), _json, max_size=5), key=st.text(min_size=1, max_size=10), signal=_json)
def test_digest_ignores_key_signal_and_key_order(metadata: dict[str, Any], key: str, signal: Any) -> None:
    base = {"profile": {"name": "w"}, "metadata": metadata}
    reversed_metadata = dict(reversed(list(metadata.items())))
    other = {"signal": signal, "idempotencyKey": key, "metadata": reversed_metadata, "profile": {"name": "w"}}
    assert agent_environment_create_input_digest(base) == agent_environment_create_input_digest(other)
