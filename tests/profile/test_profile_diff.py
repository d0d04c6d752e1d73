"""Profile diffs: schema rules, exact replacement steps, removal semantics, axes, pruning."""

from __future__ import annotations

from functools import reduce
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_interface.core.errors import ContractError
from agent_interface.profile.agent_profile import AgentProfile, AgentProfileModelHintsBase
from agent_interface.profile.canonical import canonical_agent_profile_json
from agent_interface.profile.diff import (
    AGENT_PROFILE_DIFF_AXES,
    apply_agent_profile_diff,
    changed_agent_profile_axes,
    define_agent_profile_diff,
    diff_agent_profiles,
    prune_agent_profile_diff,
)
from agent_interface.profile.diff_schema import (
    AgentProfileDiff,
    AgentProfileDiffRemoval,
    AgentProfilePromptRemoval,
    AgentProfileResourceRemoval,
)


def inline(name: str, content: str) -> dict[str, Any]:
    return {"kind": "inline", "name": name, "content": content}


BASE: dict[str, Any] = {
    "name": "baseline",
    "harness": "claude-code",
    "prompt": {"systemPrompt": "Solve directly.", "instructions": ["Keep answers short."]},
    "model": {"default": "zai/glm-4.7", "reasoningEffort": "low"},
    "tools": {"browser": True, "shell": False},
    "mcp": {"records": {"transport": "http", "url": "https://mcp.example.test"}},
    "resources": {
        "files": [{"path": ".agent-profile/old.md", "resource": inline("old", "old")}],
        "skills": [inline("read-state", "Read state first.")],
    },
    "hooks": {"postFinish": [{"command": "pnpm test", "blocking": True}]},
}

RESOURCE_FIELD_CASES: dict[str, dict[str, Any]] = {
    "files": {"files": [{"path": "protocol.md", "resource": inline("protocol", "Follow.")}]},
    "tools": {"tools": [inline("search", "Search primary sources.")]},
    "skills": {"skills": [inline("verify", "Verify before reporting.")]},
    "agents": {"agents": [inline("critic", "Try to refute the result.")]},
    "commands": {"commands": [inline("measure", "Measure the real path.")]},
    "instructions": {"instructions": "Keep exact evidence."},
    "failOnError": {"failOnError": True},
}

PROFILE_FIELD_CASES: dict[str, tuple[dict[str, Any], str]] = {
    "name": ({"name": "candidate"}, "identity"),
    "description": ({"description": "A complete candidate profile."}, "identity"),
    "version": ({"version": "2"}, "identity"),
    "tags": ({"tags": []}, "identity"),
    "prompt": ({"prompt": {"systemPrompt": "Measure, then answer."}}, "prompt"),
    "model": ({"model": {"reasoningEffort": "high"}}, "model"),
    "harness": ({"harness": "codex"}, "harness"),
    "permissions": ({"permissions": {"shell": "allow"}}, "permissions"),
    "tools": ({"tools": {"shell": True}}, "tools"),
    "mcp": (
        {
            "mcp": {
                "local": {
                    "command": "node",
                    "args": [{"kind": "public", "value": "server.js"}],
                    "env": {"MODE": {"kind": "public", "value": "audit"}},
                },
                "remote": {
                    "transport": "http",
                    "url": "https://mcp.example.test",
                    "headers": {
                        "Authorization": {
                            "kind": "secret-ref",
                            "key": "papers-service-auth",
                            "format": "bearer",
                        }
                    },
                },
            }
        },
        "mcp",
    ),
    "connections": ({"connections": [{"connectionId": "papers", "capabilities": ["search"]}]}, "connections"),
    "subagents": ({"subagents": {"critic": {"prompt": "Find a counterexample."}}}, "subagents"),
    "resources": ({"resources": RESOURCE_FIELD_CASES["skills"]}, "resources"),
    "hooks": (
        {
            "hooks": {
                "afterRun": [
                    {
                        "command": "record-result",
                        "env": {"AUDIT_TOKEN": {"kind": "secret-ref", "key": "audit-sink-auth"}},
                    }
                ]
            }
        },
        "hooks",
    ),
    "modes": ({"modes": {"adversarial": {"prompt": "Attempt a refutation."}}}, "modes"),
    "confidential": ({"confidential": {"sealed": True}}, "confidential"),
    "metadata": ({"metadata": {"role": "research-leader"}}, "metadata"),
    "extensions": ({"extensions": {"codex": {"sandbox": "danger-full-access"}}}, "extensions"),
}

SEATED: dict[str, Any] = {
    "harness": "claude-code",
    "model": {"provider": "anthropic", "default": "anthropic/claude-opus-4-6"},
    "tools": {"shell": True},
    "seats": [
        {
            "harness": "claude-code",
            "provider": "anthropic",
            "model": "anthropic/claude-opus-4-6",
            "account": {"kind": "all-eligible"},
        },
        {
            "harness": "codex",
            "provider": "openai",
            "model": "openai/gpt-5",
            "account": {"kind": "seat", "accountId": "team-b"},
            "tools": {},
        },
    ],
}


def canonical(profile: AgentProfile | dict[str, Any]) -> str:
    return canonical_agent_profile_json(profile)


def apply_all(baseline: Any, steps: list[AgentProfileDiff]) -> AgentProfile:
    return reduce(apply_agent_profile_diff, steps, AgentProfile.parse_wire(baseline))


def wire(steps: list[AgentProfileDiff]) -> list[dict[str, Any]]:
    return [step.to_wire() for step in steps]


# -- schema --------------------------------------------------------------------------------------


def test_schema_accepts_a_full_diff_and_refuses_unknown_markers() -> None:
    parsed = AgentProfileDiff.parse_wire(
        {
            "kind": "agent-profile-diff",
            "source": {"kind": "frontier-author", "artifacts": ["traces://session/example"]},
            "set": {"subagents": {"verifier": {"prompt": "Verify.", "maxSteps": 2}}},
            "remove": {"model": ["small"]},
        }
    )
    assert parsed.source is not None and parsed.source.kind == "frontier-author"
    assert changed_agent_profile_axes(parsed) == ["model", "subagents"]
    with pytest.raises(ContractError):
        AgentProfileDiff.parse_wire({"schemaVersion": 1, "kind": "agent-profile-diff"})


@pytest.mark.parametrize(
    "document",
    [
        {"kind": "agent-profile-diff", "remove": {"harness": False}},
        {"kind": "agent-profile-diff", "remove": {"tags": [""]}},
        {"kind": "agent-profile-diff", "remove": {"prompt": {"systemPrompt": True, "x": True}}},
        {"kind": "agent-profile-diff", "remove": {"resources": {"instructions": ["a"]}}},
        {"kind": "agent-profile-diff", "id": ""},
        {"kind": "agent-profile-diff", "title": ""},
        {"kind": "agent-profile-diff", "source": {"kind": "robot"}},
        {"kind": "agent-profile-diff", "source": {"kind": "human", "artifacts": [""]}},
        {"kind": "agent-profile-diff", "metadata": {"a\ud800": 1}},
        {"kind": "agent-profile-diff", "set": {"harness": None}},
        {"kind": "agent-profile-diff", "metadata": []},
    ],
)
def test_schema_refusals(document: dict[str, Any]) -> None:
    with pytest.raises(ContractError):
        AgentProfileDiff.parse_wire(document)


def test_removal_schemas_accept_true_or_names() -> None:
    assert AgentProfilePromptRemoval.parse_wire({"instructions": ["a"], "systemPrompt": True})
    assert AgentProfileResourceRemoval.parse_wire({"files": True, "failOnError": True})
    assert AgentProfileDiffRemoval.parse_wire({"prompt": True, "resources": {"tools": ["x"]}})
    with pytest.raises(ContractError):
        AgentProfileResourceRemoval.parse_wire({"failOnError": False})


def test_model_hints_base_has_no_ceiling_rule() -> None:
    document = {"maxTotalOutputTokens": 2, "maxReasoningTokens": 3}
    assert AgentProfileModelHintsBase.parse_wire(document).max_reasoning_tokens == 3
    with pytest.raises(ContractError):
        AgentProfile.parse_wire({"model": document})


# -- diffing -------------------------------------------------------------------------------------


def test_empty_diff_does_not_materialize_absent_resource_arrays() -> None:
    profile = {"name": "minimal", "prompt": {"systemPrompt": "b"}, "resources": {"failOnError": True}}
    result = apply_agent_profile_diff(profile, {"kind": "agent-profile-diff"})
    assert result.to_wire() == profile


@pytest.mark.parametrize("field", PROFILE_FIELD_CASES)
def test_exact_replacement_steps_for_every_profile_field(field: str) -> None:
    document, axis = PROFILE_FIELD_CASES[field]
    steps = diff_agent_profiles({}, document)
    assert len(steps) == 2
    assert {a for step in steps for a in changed_agent_profile_axes(step)} == {axis}
    assert canonical(apply_all({}, steps)) == canonical(document)


@pytest.mark.parametrize("field", RESOURCE_FIELD_CASES)
def test_resource_replacements_are_precise(field: str) -> None:
    resources = RESOURCE_FIELD_CASES[field]
    steps = diff_agent_profiles({}, {"resources": resources})
    assert wire(steps) == [
        {"kind": "agent-profile-diff", "remove": {"resources": {field: True}}},
        {"kind": "agent-profile-diff", "set": {"resources": resources}},
    ]
    assert apply_all({}, steps).to_wire() == {"resources": resources}


def test_one_reset_step_removes_every_field() -> None:
    baseline: dict[str, Any] = {}
    for document, _ in PROFILE_FIELD_CASES.values():
        baseline.update(document)
    baseline["resources"] = {k: v for case in RESOURCE_FIELD_CASES.values() for k, v in case.items()}
    steps = diff_agent_profiles(baseline, {})
    assert wire(steps) == [
        {
            "kind": "agent-profile-diff",
            "remove": {
                "identity": True,
                "tags": True,
                "prompt": True,
                "model": True,
                "harness": True,
                "permissions": True,
                "tools": True,
                "mcp": True,
                "connections": True,
                "subagents": True,
                "resources": {field: True for field in RESOURCE_FIELD_CASES},
                "hooks": True,
                "modes": True,
                "confidential": True,
                "metadata": True,
                "extensions": True,
            },
        }
    ]
    assert apply_all(baseline, steps).to_wire() == {}


def test_canonically_equal_profiles_give_no_steps() -> None:
    baseline = {
        "name": "same",
        "tags": ["a", "b"],
        "metadata": {"alpha": 1, "beta": 2},
        "mcp": {"alpha": {"url": "https://alpha.example.test"}, "beta": {"url": "https://b.test"}},
    }
    reordered = {
        "mcp": {"beta": {"url": "https://b.test"}, "alpha": {"url": "https://alpha.example.test"}},
        "metadata": {"beta": 2, "alpha": 1},
        "tags": ["a", "b"],
        "name": "same",
    }
    assert diff_agent_profiles(baseline, baseline) == []
    assert diff_agent_profiles(baseline, reordered) == []
    assert diff_agent_profiles(baseline, {**reordered, "tags": ["b", "a"]}) != []


def test_replacements_are_deterministic_across_key_order() -> None:
    baseline = {"model": {"reasoningEffort": "low"}, "metadata": {"retained": True}}
    first = {
        "model": {"reasoningEffort": "high", "default": "openai/gpt-5"},
        "metadata": {"zeta": 2, "alpha": 1},
        "subagents": {"zeta": {"prompt": "Last."}, "alpha": {"prompt": "First."}},
    }
    second = {
        "subagents": {"alpha": {"prompt": "First."}, "zeta": {"prompt": "Last."}},
        "metadata": {"alpha": 1, "zeta": 2},
        "model": {"default": "openai/gpt-5", "reasoningEffort": "high"},
    }
    steps = diff_agent_profiles(baseline, first)
    assert [s.canonical_digest() for s in steps] == [
        s.canonical_digest() for s in diff_agent_profiles(baseline, second)
    ]
    first["metadata"]["alpha"] = 99  # the steps hold their own copies
    assert canonical(apply_all(baseline, steps)) == canonical(second)


def test_absent_and_explicitly_empty_resources_differ() -> None:
    addition = diff_agent_profiles({}, {"resources": {}})
    removal = diff_agent_profiles({"resources": {}}, {})
    assert wire(addition) == [
        {"kind": "agent-profile-diff", "remove": {"resources": True}},
        {"kind": "agent-profile-diff", "set": {"resources": {}}},
    ]
    assert wire(removal) == [{"kind": "agent-profile-diff", "remove": {"resources": True}}]
    assert apply_all({}, addition).to_wire() == {"resources": {}}
    assert apply_all({"resources": {}}, removal).to_wire() == {}


@pytest.mark.parametrize("field", RESOURCE_FIELD_CASES)
def test_clearing_a_resource_field_keeps_an_empty_resource_object(field: str) -> None:
    baseline = {"resources": RESOURCE_FIELD_CASES[field]}
    steps = diff_agent_profiles(baseline, {"resources": {}})
    assert wire(steps) == [
        {"kind": "agent-profile-diff", "remove": {"resources": {field: True}}},
        {"kind": "agent-profile-diff", "set": {"resources": {}}},
    ]
    assert apply_all(baseline, steps).to_wire() == {"resources": {}}


def test_empty_open_records_are_values() -> None:
    steps = diff_agent_profiles({}, {"metadata": {}, "extensions": {}})
    assert wire(steps) == [
        {"kind": "agent-profile-diff", "remove": {"metadata": True, "extensions": True}},
        {"kind": "agent-profile-diff", "set": {"metadata": {}, "extensions": {}}},
    ]


# -- applying ------------------------------------------------------------------------------------


def test_overlay_then_named_removals() -> None:
    diff = define_agent_profile_diff(
        {
            "kind": "agent-profile-diff",
            "id": "stateful-small-model-pack",
            "set": {
                "prompt": {"instructions": ["Verify state before DONE."]},
                "model": {"small": "moonshot/kimi-k2", "reasoningEffort": "high"},
                "tools": {"shell": True},
                "resources": {
                    "files": [{"path": ".agent-profile/policy.md", "resource": inline("policy", "x")}],
                    "skills": [inline("verify-state", "Check state after writes.")],
                },
                "hooks": {"preFinish": [{"command": "node verify.mjs", "blocking": True}]},
            },
            "remove": {"resources": {"files": [".agent-profile/old.md"], "skills": ["read-state"]}},
        }
    )
    profile = apply_agent_profile_diff(BASE, diff).to_wire()
    assert profile["prompt"] == {
        "systemPrompt": "Solve directly.",
        "instructions": ["Keep answers short.", "Verify state before DONE."],
    }
    assert profile["model"] == {"small": "moonshot/kimi-k2", "reasoningEffort": "high"}
    assert profile["harness"] == "claude-code"
    assert profile["tools"] == {"browser": True, "shell": True}
    assert [f["path"] for f in profile["resources"]["files"]] == [".agent-profile/policy.md"]
    assert [s["name"] for s in profile["resources"]["skills"]] == ["verify-state"]
    assert set(profile["hooks"]) == {"postFinish", "preFinish"}


def test_named_removals_match_names_paths_ids_and_aliases() -> None:
    base = {
        "tags": ["a", "b"],
        "prompt": {"instructions": ["x", "y"], "appendSystemPrompt": "tail"},
        "model": {"default": "m", "small": "s"},
        "connections": [
            {"connectionId": "c1", "capabilities": ["read"]},
            {"connectionId": "c2", "capabilities": ["read"], "alias": "docs"},
        ],
        "resources": {
            "tools": [{"kind": "github", "path": "tools/a.md"}, inline("keep", "k")],
            "files": [{"path": "p.md", "resource": inline("named", "n")}],
        },
    }
    diff = {
        "kind": "agent-profile-diff",
        "remove": {
            "tags": ["a"],
            "prompt": {"instructions": ["x"], "appendSystemPrompt": True},
            "model": ["small"],
            "connections": ["c1", "docs"],
            "resources": {"tools": ["tools/a.md"], "files": ["named"]},
        },
    }
    assert apply_agent_profile_diff(base, diff).to_wire() == {
        "tags": ["b"],
        "prompt": {"instructions": ["y"]},
        "model": {"default": "m"},
        "resources": {"tools": [inline("keep", "k")]},
    }


def test_structural_removals_drop_emptied_and_empty_values() -> None:
    # An emptied container disappears, and an object removal also drops empty resource lists.
    base = {"prompt": {}, "model": {}, "tags": [], "resources": {"files": [], "failOnError": True}}
    diff = {
        "kind": "agent-profile-diff",
        "remove": {"prompt": {}, "model": [], "tags": [], "resources": {"failOnError": True}},
    }
    assert apply_agent_profile_diff(base, diff).to_wire() == {}


def test_harness_set_remove_and_prune() -> None:
    only_set = {"kind": "agent-profile-diff", "set": {"harness": "codex"}}
    control = apply_agent_profile_diff(BASE, {"kind": "agent-profile-diff"}).to_wire()
    assert changed_agent_profile_axes(only_set) == ["harness"]
    assert apply_agent_profile_diff(BASE, only_set).to_wire() == {**control, "harness": "codex"}
    removal = {"kind": "agent-profile-diff", "remove": {"harness": True}}
    assert changed_agent_profile_axes(removal) == ["harness"]
    assert "harness" not in apply_agent_profile_diff(BASE, removal).to_wire()
    both = {"kind": "agent-profile-diff", "set": {"harness": "codex"}, "remove": {"harness": True}}
    assert "harness" not in apply_agent_profile_diff(BASE, both).to_wire()

    mixed = {
        "kind": "agent-profile-diff",
        "set": {"harness": "codex", "tools": {"shell": True}},
        "remove": {"harness": True},
    }
    pruned = prune_agent_profile_diff(mixed, ["harness"])
    assert pruned.remove is None and pruned.set is not None and pruned.set.harness is None
    assert changed_agent_profile_axes(pruned) == ["tools"]
    tools_only = {"kind": "agent-profile-diff", "set": {"tools": {"shell": True}}}
    assert apply_agent_profile_diff(BASE, pruned) == apply_agent_profile_diff(BASE, tools_only)


def test_apply_refuses_a_result_that_breaks_a_profile_rule() -> None:
    with pytest.raises(ContractError):
        apply_agent_profile_diff(SEATED, {"kind": "agent-profile-diff", "remove": {"harness": True}})


# -- axes and pruning ----------------------------------------------------------------------------


def test_changed_axes_and_ablation() -> None:
    diff = {
        "kind": "agent-profile-diff",
        "set": {
            "prompt": {"instructions": ["Use evidence first."]},
            "model": {"reasoningEffort": "medium"},
            "resources": {"skills": [inline("evidence-first", "Use evidence.")]},
        },
    }
    assert changed_agent_profile_axes(diff) == ["model", "prompt", "resources"]
    pruned = prune_agent_profile_diff(diff, ["resources"])
    assert changed_agent_profile_axes(pruned) == ["model", "prompt"]
    skills = apply_agent_profile_diff(BASE, pruned).to_wire()["resources"]["skills"]
    assert [s["name"] for s in skills] == ["read-state"]


@pytest.mark.parametrize("overlay", [{"name": ""}, {"description": ""}, {"version": ""}, {"tags": []}])
def test_explicit_empty_identity_values_are_changes(overlay: dict[str, Any]) -> None:
    assert changed_agent_profile_axes({"kind": "agent-profile-diff", "set": overlay}) == ["identity"]


@pytest.mark.parametrize(
    "remove",
    [
        {"tags": []},
        {"prompt": {}},
        {"model": []},
        {"connections": []},
        {"resources": {}},
        {"resources": {"tools": []}},
    ],
)
def test_structurally_empty_removals_are_not_changes(remove: dict[str, Any]) -> None:
    assert changed_agent_profile_axes({"kind": "agent-profile-diff", "remove": remove}) == []


def test_prune_identity_drops_identity_fields_and_tags() -> None:
    diff = {
        "kind": "agent-profile-diff",
        "id": "keep-me",
        "set": {"name": "n", "tags": ["t"], "harness": "codex"},
        "remove": {"identity": True, "tags": ["x"]},
    }
    pruned = prune_agent_profile_diff(diff, ["identity"])
    assert pruned.to_wire() == {"kind": "agent-profile-diff", "id": "keep-me", "set": {"harness": "codex"}}


def test_seat_chains_travel_with_the_axes_they_match() -> None:
    moved = {
        **SEATED,
        "harness": "codex",
        "model": {"provider": "openai", "default": "openai/gpt-5"},
        "seats": [
            {**SEATED["seats"][1], "tools": {"shell": True}},
            SEATED["seats"][0],
        ],
    }
    steps = diff_agent_profiles(SEATED, moved)
    assert canonical(apply_all(SEATED, steps)) == canonical(moved)
    assert "seats" in changed_agent_profile_axes(steps[0])
    unseated = {k: v for k, v in SEATED.items() if k != "seats"}
    assert canonical(apply_all(SEATED, diff_agent_profiles(SEATED, unseated))) == canonical(unseated)
    assert canonical(apply_all(unseated, diff_agent_profiles(unseated, SEATED))) == canonical(SEATED)
    assert "seats" in AGENT_PROFILE_DIFF_AXES


# -- properties ----------------------------------------------------------------------------------

_names = st.sampled_from(["a", "b", "c", "é", "x/y"])
_text = st.sampled_from(["", "one", "two", "ünï"])
_resource = st.one_of(
    st.builds(inline, _names, _text),
    st.fixed_dictionaries(
        {"kind": st.just("github"), "path": st.sampled_from(["p.md", "q.md"])},
        optional={"name": _names, "repository": st.just("o/r"), "ref": st.just("main")},
    ),
)
_resource_lists = st.lists(_resource, max_size=2)
_profiles = st.fixed_dictionaries(
    {},
    optional={
        "name": _text,
        "description": _text,
        "version": _text,
        "tags": st.lists(_names, max_size=3),
        "prompt": st.fixed_dictionaries(
            {},
            optional={
                "systemPrompt": _text,
                "appendSystemPrompt": _text,
                "instructions": st.lists(_text, max_size=2),
            },
        ),
        "model": st.fixed_dictionaries(
            {},
            optional={
                "default": _text,
                "small": _text,
                "reasoningEffort": st.sampled_from(["low", "high"]),
                "maxTotalOutputTokens": st.integers(1, 5),
                "metadata": st.dictionaries(_names, st.integers(0, 2), max_size=2),
            },
        ),
        "harness": st.sampled_from(["claude-code", "codex", "opencode"]),
        "permissions": st.dictionaries(_names, st.sampled_from(["allow", "deny", "ask"]), max_size=2),
        "tools": st.dictionaries(_names, st.booleans(), max_size=3),
        "connections": st.lists(
            st.fixed_dictionaries(
                {"connectionId": _names, "capabilities": st.lists(_names, min_size=1, max_size=2)},
                optional={"alias": _names},
            ),
            max_size=2,
        ),
        "subagents": st.dictionaries(_names, st.fixed_dictionaries({}, optional={"prompt": _text}), max_size=2),
        "resources": st.fixed_dictionaries(
            {},
            optional={
                "files": st.lists(
                    st.fixed_dictionaries({"path": _names, "resource": _resource}), max_size=2
                ),
                "tools": _resource_lists,
                "skills": _resource_lists,
                "agents": _resource_lists,
                "commands": _resource_lists,
                "instructions": st.one_of(_text, _resource),
                "failOnError": st.booleans(),
            },
        ),
        "hooks": st.dictionaries(_names, st.lists(st.fixed_dictionaries({"command": _text}), max_size=1), max_size=2),
        "modes": st.dictionaries(_names, st.fixed_dictionaries({}, optional={"model": _text}), max_size=1),
        "confidential": st.fixed_dictionaries({}, optional={"sealed": st.booleans()}),
        "metadata": st.dictionaries(_names, st.one_of(st.none(), st.integers(0, 3), _text), max_size=2),
        "extensions": st.dictionaries(_names, st.dictionaries(_names, st.booleans(), max_size=1), max_size=2),
    },
)
_diffs = st.fixed_dictionaries(
    {"kind": st.just("agent-profile-diff")},
    optional={
        "set": _profiles,
        "remove": st.fixed_dictionaries(
            {},
            optional={
                axis: st.one_of(st.just(True), st.lists(_names, max_size=2))
                for axis in ("tags", "model", "permissions", "tools", "connections", "metadata")
            }
            | {"harness": st.just(True), "identity": st.just(True), "prompt": st.just(True)},
        ),
    },
)


@settings(max_examples=150, deadline=None)
@given(_profiles, _profiles)
def test_applying_the_diff_reproduces_the_candidate(baseline: Any, candidate: Any) -> None:
    steps = diff_agent_profiles(baseline, candidate)
    assert canonical(apply_all(baseline, steps)) == canonical(candidate)
    assert (steps == []) == (canonical(baseline) == canonical(candidate))


@settings(max_examples=40, deadline=None)
@given(_profiles)
def test_seat_chain_diffs_reproduce_the_candidate(other: Any) -> None:
    for baseline, candidate in ((SEATED, other), (other, SEATED)):
        steps = diff_agent_profiles(baseline, candidate)
        assert canonical(apply_all(baseline, steps)) == canonical(candidate)


@settings(max_examples=150, deadline=None)
@given(_diffs, st.lists(st.sampled_from(AGENT_PROFILE_DIFF_AXES), max_size=4))
def test_prune_is_idempotent(diff: Any, axes: list[str]) -> None:
    once = prune_agent_profile_diff(diff, axes)
    assert prune_agent_profile_diff(once, axes) == once
    assert not set(changed_agent_profile_axes(once)) & set(axes)
