"""AgentProfile.seats: chain rules, per-stage projection and stage support."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_interface.core.errors import ContractError
from agent_interface.profile.agent_profile import AgentProfile
from agent_interface.profile.canonical import canonical_agent_profile_digest
from agent_interface.profile.harness import (
    HARNESS_TYPES,
    REASONING_EFFORTS,
    HarnessType,
    ReasoningEffort,
    harness_honors_effort,
    harness_reasoning_efforts,
    harness_system_prompt_intents,
)
from agent_interface.profile.seats import (
    check_stage_support,
    project_profile_for_stage,
    require_stage,
    stage_count,
)

FIRST = {
    "harness": "claude-code",
    "provider": "anthropic",
    "model": "anthropic/claude-opus-4-6",
    "account": {"kind": "all-eligible"},
}
CHAINED: dict[str, Any] = {
    "name": "long-runner",
    "harness": "claude-code",
    "model": {
        "provider": "anthropic",
        "default": "anthropic/claude-opus-4-6",
        "small": "anthropic/claude-haiku-4-5",
        "reasoningEffort": "high",
        "maxTotalOutputTokens": 4096,
    },
    "prompt": {"appendSystemPrompt": "Cite the file you read."},
    "tools": {"bash": True, "web": False},
    "permissions": {"shell": "ask"},
    "seats": [
        FIRST,
        {
            "harness": "pi",
            "provider": "openrouter",
            "model": "openai/gpt-5",
            "account": {"kind": "seat", "accountId": "team-b"},
            "permissions": {"shell": "deny"},
        },
        {
            "harness": "opencode",
            "provider": "zai",
            "model": "zai/glm-4.7",
            "account": {"kind": "all-eligible"},
            "tools": {},
        },
    ],
}
CAPS: dict[str, Any] = {
    "namedProfiles": False,
    "systemPrompt": {"replace": False, "append": True},
    "instructions": True,
    "tools": True,
    "permissions": True,
    "mcp": True,
    "subagents": False,
    "resources": {"files": True, "instructions": True},
    "runtimeUpdate": False,
    "validation": True,
}


def chained(**changes: Any) -> dict[str, Any]:
    doc = copy.deepcopy(CHAINED)
    for key, value in changes.items():
        if value is None:
            doc.pop(key, None)
        else:
            doc[key] = value
    return doc


def with_stage(index: int, **changes: Any) -> dict[str, Any]:
    doc = copy.deepcopy(CHAINED)
    doc["seats"][index].update(changes)
    for key in [key for key, value in changes.items() if value is None]:
        doc["seats"][index].pop(key)
    return doc


def refusals(doc: dict[str, Any]) -> set[tuple[str, str]]:
    with pytest.raises(ContractError) as caught:
        AgentProfile.parse_wire(doc)
    return {(issue.path, issue.code) for issue in caught.value.issues}


def test_a_valid_chain_round_trips() -> None:
    profile = AgentProfile.parse_wire(CHAINED)
    assert profile.to_wire() == CHAINED
    assert stage_count(profile) == 3


def test_omitted_seats_is_the_legacy_policy_with_an_unchanged_digest() -> None:
    legacy = chained(seats=None)
    profile = AgentProfile.parse_wire(legacy)
    assert profile.seats is None and stage_count(profile) == 0
    assert "seats" not in profile.to_wire()
    assert canonical_agent_profile_digest(legacy) == canonical_agent_profile_digest(
        AgentProfile.parse_wire(legacy).to_wire()
    )
    assert canonical_agent_profile_digest(legacy) != canonical_agent_profile_digest(CHAINED)


def test_an_empty_chain_is_refused() -> None:
    assert refusals(chained(seats=[])) == {("/seats", "too_short")}


@pytest.mark.parametrize(
    ("field", "value"),
    [("harness", "pi"), ("provider", "anthropic-eu"), ("model", "anthropic/claude-sonnet-4-6")],
)
def test_first_stage_must_equal_the_authored_selection(field: str, value: str) -> None:
    assert refusals(with_stage(0, **{field: value})) == {
        (f"/seats/0/{field}", "seat_first_stage_mismatch")
    }


def test_first_stage_cannot_stand_in_for_a_missing_top_level_selection() -> None:
    assert ("/seats/0/harness", "seat_first_stage_mismatch") in refusals(chained(harness=None))
    no_model = chained(model=None)
    assert {
        ("/seats/0/provider", "seat_first_stage_mismatch"),
        ("/seats/0/model", "seat_first_stage_mismatch"),
    } <= refusals(no_model)


def test_reasoning_effort_must_be_supported_by_every_stage() -> None:
    # cli-base expresses only "none"; amp drops any effort it is given.
    for harness in ("cli-base", "amp"):
        doc = with_stage(2, harness=harness)
        doc.pop("prompt")
        assert refusals(doc) == {("/seats/2/harness", "seat_reasoning_effort_unsupported")}
    # Without a requested effort the same chain is accepted.
    doc = with_stage(2, harness="cli-base")
    doc.pop("prompt")
    doc["model"].pop("reasoningEffort")
    assert AgentProfile.parse_wire(doc).seats is not None
    # claude-code cannot express "none".
    doc = chained()
    doc["model"]["reasoningEffort"] = "none"
    assert ("/seats/0/harness", "seat_reasoning_effort_unsupported") in refusals(doc)


def test_append_intent_must_be_supported_by_every_stage() -> None:
    # codex owns replacement only.
    assert refusals(with_stage(1, harness="codex")) == {
        ("/seats/1/harness", "seat_system_prompt_append_unsupported")
    }


def test_replace_intent_must_be_supported_by_every_stage() -> None:
    doc = chained(prompt={"systemPrompt": "Stand-alone prompt."})
    # opencode can only add to its prompt through a plan.
    assert refusals(doc) == {("/seats/2/harness", "seat_system_prompt_replace_unsupported")}
    doc["seats"][2]["harness"] = "gemini"
    assert AgentProfile.parse_wire(doc).seats is not None


def test_first_stage_maps_must_equal_the_top_level_maps() -> None:
    same = with_stage(0, tools={"web": False, "bash": True}, permissions={"shell": "ask"})
    assert AgentProfile.parse_wire(same).seats is not None
    assert refusals(with_stage(0, tools={"bash": False, "web": False})) == {
        ("/seats/0/tools", "seat_first_stage_map_mismatch")
    }
    assert refusals(with_stage(0, permissions={})) == {
        ("/seats/0/permissions", "seat_first_stage_map_mismatch")
    }
    missing_top = with_stage(0, permissions={"shell": "ask"})
    missing_top.pop("permissions")
    assert refusals(missing_top) == {("/seats/0/permissions", "seat_first_stage_map_mismatch")}


@pytest.mark.parametrize(
    ("account", "path"),
    [
        ({"kind": "any"}, "/seats/1/account/kind"),
        ({"kind": "seat"}, "/seats/1/account/accountId"),
        ({"kind": "seat", "accountId": ""}, "/seats/1/account/accountId"),
        ({"kind": "seat", "accountId": " team-b"}, "/seats/1/account/accountId"),
        ({"kind": "all-eligible", "accountId": "x"}, "/seats/1/account/accountId"),
    ],
)
def test_account_selectors_are_strict(account: dict[str, Any], path: str) -> None:
    assert path in {found for found, _ in refusals(with_stage(1, account=account))}


@pytest.mark.parametrize(
    ("changes", "path"),
    [
        ({"harness": "unknown"}, "/seats/1/harness"),
        ({"provider": ""}, "/seats/1/provider"),
        ({"model": "x" * 513}, "/seats/1/model"),
        ({"account": None}, "/seats/1/account"),
        ({"tools": {"bash": "yes"}}, "/seats/1/tools/bash"),
        ({"permissions": {"shell": "never"}}, "/seats/1/permissions/shell"),
        ({"unknown": True}, "/seats/1/unknown"),
    ],
)
def test_stage_fields_are_strict(changes: dict[str, Any], path: str) -> None:
    assert path in {found for found, _ in refusals(with_stage(1, **changes))}


def test_first_stage_projection_is_the_authored_profile_without_seats() -> None:
    projection = project_profile_for_stage(CHAINED, 0)
    expected = chained(seats=None)
    assert projection.to_wire() == expected
    assert projection.seats is None


def test_later_stage_projection_sets_selection_and_replaces_maps() -> None:
    second = project_profile_for_stage(CHAINED, 1).to_wire()
    assert second["harness"] == "pi"
    assert second["model"] == {
        "provider": "openrouter",
        "default": "openai/gpt-5",
        "small": "anthropic/claude-haiku-4-5",
        "reasoningEffort": "high",
        "maxTotalOutputTokens": 4096,
    }
    assert second["tools"] == CHAINED["tools"]  # omitted map inherits
    assert second["permissions"] == {"shell": "deny"}  # named map replaces
    third = project_profile_for_stage(CHAINED, 2).to_wire()
    assert "tools" not in third  # {} removes the profile-level map
    assert third["permissions"] == CHAINED["permissions"]
    assert "seats" not in third


def test_projection_has_its_own_identity_and_the_authored_profile_keeps_its_own() -> None:
    authored = AgentProfile.parse_wire(CHAINED)
    before = canonical_agent_profile_digest(authored)
    digests = {
        canonical_agent_profile_digest(project_profile_for_stage(authored, i)) for i in range(3)
    }
    assert len(digests) == 3 and before not in digests
    assert canonical_agent_profile_digest(authored) == before
    assert authored.to_wire() == CHAINED


def test_projection_refuses_missing_chain_and_bad_index() -> None:
    with pytest.raises(ContractError) as caught:
        project_profile_for_stage(chained(seats=None), 0)
    assert [(i.path, i.code) for i in caught.value.issues] == [("/seats", "seats_absent")]
    for index in (3, -1):
        with pytest.raises(ContractError) as caught:
            project_profile_for_stage(CHAINED, index)
        assert [(i.path, i.code) for i in caught.value.issues] == [
            ("/seats", "seat_stage_out_of_range")
        ]


def test_stage_support_checks_the_projection() -> None:
    no_tools = {**CAPS, "tools": False}
    # Stages 0 and 1 inherit the tools map; stage 2 removes it.
    assert [(i.path, i.code) for i in check_stage_support(CHAINED, 0, no_tools)] == [
        ("/tools", "tools_unsupported")
    ]
    assert check_stage_support(CHAINED, 2, no_tools) == []
    no_permissions = {**CAPS, "permissions": False}
    assert [i.code for i in check_stage_support(CHAINED, 1, no_permissions)] == [
        "permissions_unsupported"
    ]
    assert check_stage_support(CHAINED, 1, CAPS) == []


def test_a_continuation_needs_an_explicit_stage() -> None:
    assert require_stage(CHAINED, harness="pi", provider="openrouter", model="openai/gpt-5") == 1
    assert (
        require_stage(
            CHAINED, harness="claude-code", provider="anthropic", model="anthropic/claude-opus-4-6"
        )
        == 0
    )
    with pytest.raises(ContractError) as caught:
        require_stage(CHAINED, harness="codex", provider="openai", model="openai/gpt-5")
    assert [(i.path, i.code) for i in caught.value.issues] == [
        ("/seats", "seat_stage_not_declared")
    ]
    with pytest.raises(ContractError) as caught:
        require_stage(
            chained(seats=None), harness="pi", provider="openrouter", model="openai/gpt-5"
        )
    assert [(i.path, i.code) for i in caught.value.issues] == [("/seats", "seats_absent")]


@given(
    harness=st.sampled_from(HARNESS_TYPES),
    effort=st.none() | st.sampled_from(REASONING_EFFORTS),
    replace=st.booleans(),
    append=st.booleans(),
)
def test_later_stage_acceptance_follows_the_harness_tables(
    harness: HarnessType,
    effort: ReasoningEffort | None,
    replace: bool,
    append: bool,
) -> None:
    prompt = {
        **({"systemPrompt": "s"} if replace else {}),
        **({"appendSystemPrompt": "a"} if append else {}),
    }
    first = {"harness": "pi", "provider": "p", "model": "m", "account": {"kind": "all-eligible"}}
    model: dict[str, Any] = {"provider": "p", "default": "m"}
    if effort is not None:
        model["reasoningEffort"] = effort
    doc: dict[str, Any] = {
        "harness": "pi",
        "model": model,
        "seats": [first, {**first, "harness": harness, "provider": "q"}],
    }
    if prompt:
        doc["prompt"] = prompt
    intents = harness_system_prompt_intents(harness)
    pi_ok = effort is None or effort in harness_reasoning_efforts("pi")
    stage_ok = (
        (
            effort is None
            or (effort in harness_reasoning_efforts(harness) and harness_honors_effort(harness))
        )
        and (not replace or intents.replace)
        and (not append or intents.append)
    )
    assert pi_ok
    if stage_ok:
        assert AgentProfile.parse_wire(doc).seats is not None
    else:
        with pytest.raises(ContractError) as caught:
            AgentProfile.parse_wire(doc)
        assert {i.path for i in caught.value.issues} == {"/seats/1/harness"}
