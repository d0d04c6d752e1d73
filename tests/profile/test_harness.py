"""Harness names and capability tables (harness.ts, harness-capabilities.ts)."""

from __future__ import annotations

import pytest
from pydantic import TypeAdapter, ValidationError

from agent_interface.profile.harness import (
    HARNESS_TYPES,
    REASONING_EFFORTS,
    HarnessType,
    ModelReasoningCapability,
    harness_honors_effort,
    harness_honors_model,
    harness_honors_selectors,
    harness_providers,
    harness_reasoning_efforts,
    harness_supports_model,
    harness_system_prompt_intents,
    model_provider,
    native_reasoning_control,
    preferred_harness_for_model,
    reasoning_efforts_for,
    snap_harness_to_model,
    snap_model_to_harness,
)

CANONICAL = [
    "claude-code", "nanoclaw", "codex", "opencode", "kimi-code", "pi", "prime", "gemini",
    "hermes", "openclaw", "amp", "factory-droids", "forge", "cursor", "acp", "cli-base",
]  # fmt: skip
CATALOG = [
    "anthropic/claude-opus-4-6",
    "anthropic/claude-sonnet-4-6",
    "openai/gpt-5",
    "openai/gpt-5-mini",
    "moonshot/kimi-k2",
    "zai/glm-4.7",
]
FULL = list(REASONING_EFFORTS)


def test_canonical_harness_set_and_order() -> None:
    assert list(HARNESS_TYPES) == CANONICAL
    assert FULL == ["none", "minimal", "low", "medium", "high", "xhigh", "ultracode"]


def test_harness_type_accepts_known_and_refuses_unknown() -> None:
    adapter = TypeAdapter(HarnessType)
    for harness in CANONICAL:
        assert adapter.validate_python(harness, strict=True) == harness
    for bad in ["not-a-harness", "Claude-Code", "", "claude_code"]:
        with pytest.raises(ValidationError):
            adapter.validate_python(bad, strict=True)


def test_model_provider() -> None:
    assert model_provider("anthropic/claude-opus-4-6") == "anthropic"
    assert model_provider("openrouter/openai/gpt-5") == "openrouter"
    assert model_provider("gemini-2.5-flash-lite") is None
    assert model_provider("") is None
    assert model_provider("/leading") is None


def test_provider_locks() -> None:
    assert harness_supports_model("claude-code", "anthropic/claude-sonnet-4-6")
    assert not harness_supports_model("claude-code", "openai/gpt-5")
    assert harness_supports_model("codex", "openai/gpt-5")
    assert not harness_supports_model("codex", "anthropic/claude-sonnet-4-6")
    assert harness_supports_model("kimi-code", "moonshot/kimi-k2")
    assert harness_supports_model("opencode", "openai/gpt-5")
    for harness in ["nanoclaw", "forge", "cursor", "prime"]:
        assert harness_providers(harness) is None  # type: ignore[arg-type]
        assert harness_supports_model(harness, "zai/glm-5.2")  # type: ignore[arg-type]
    assert harness_supports_model("claude-code", "default")
    assert harness_supports_model("codex", "gemini-2.5-flash-lite")


def test_preferred_harness() -> None:
    assert preferred_harness_for_model("anthropic/claude-opus-4-6") == "claude-code"
    assert preferred_harness_for_model("openai/gpt-5") == "codex"
    assert preferred_harness_for_model("moonshot/kimi-k2") == "kimi-code"
    assert preferred_harness_for_model("zai/glm-4.7") is None
    assert preferred_harness_for_model("default") is None


def test_snap_model_to_harness() -> None:
    assert snap_model_to_harness("claude-code", "openai/gpt-5", CATALOG) == (
        "anthropic/claude-opus-4-6"
    )
    assert snap_model_to_harness("codex", "anthropic/claude-sonnet-4-6", CATALOG) == "openai/gpt-5"
    assert snap_model_to_harness("kimi-code", "openai/gpt-5", CATALOG) == "moonshot/kimi-k2"
    assert (
        snap_model_to_harness("codex", "anthropic/x", ["openai/gpt-5-mini", "openai/gpt-5"])
        == "openai/gpt-5"
    )
    assert snap_model_to_harness("claude-code", "anthropic/claude-sonnet-4-6", CATALOG) == (
        "anthropic/claude-sonnet-4-6"
    )
    assert snap_model_to_harness("nanoclaw", "openai/gpt-5", CATALOG) == "openai/gpt-5"
    assert snap_model_to_harness("claude-code", "openai/gpt-5", ["zai/glm-4.7"]) == "openai/gpt-5"
    # Numeric-aware ordering: 4-10 is newer than 4-9.
    assert (
        snap_model_to_harness(
            "claude-code",
            "openai/gpt-5",
            ["anthropic/claude-opus-4-9", "anthropic/claude-opus-4-10"],
        )
        == "anthropic/claude-opus-4-10"
    )


@pytest.mark.parametrize(
    ("catalog", "expected"),
    [
        # Intl.Collator(numeric, base) order: punctuation < digits < letters, case ignored.
        (["openai/gpt_5", "openai/gpt.5"], "openai/gpt.5"),
        (["openai/a~b", "openai/ab", "openai/a-b"], "openai/ab"),
        (["openai/o5", "openai/o-5"], "openai/o5"),
        (["openai/x1", "openai/x01"], "openai/x1"),
        (["openai/x9", "openai/x10", "openai/X2"], "openai/x10"),
    ],
)
def test_snap_model_ranks_like_the_reference_collator(catalog: list[str], expected: str) -> None:
    assert snap_model_to_harness("codex", "zai/glm-4.7", catalog) == expected


def test_snap_harness_to_model() -> None:
    assert snap_harness_to_model("claude-code", "openai/gpt-5") == "codex"
    assert snap_harness_to_model("codex", "anthropic/claude-opus-4-6") == "claude-code"
    assert snap_harness_to_model("claude-code", "moonshot/kimi-k2") == "kimi-code"
    assert snap_harness_to_model("claude-code", "anthropic/claude-opus-4-6") == "claude-code"
    assert snap_harness_to_model("codex", "zai/glm-4.7") == "opencode"
    for harness in ["forge", "cursor", "prime"]:
        assert snap_harness_to_model(harness, "zai/glm-4.7") == harness  # type: ignore[arg-type]


def test_reasoning_effort_sets() -> None:
    assert harness_reasoning_efforts("cli-base") == ("none",)
    assert harness_reasoning_efforts("nanoclaw") == ("none",)
    for harness in ["codex", "pi", "prime", "openclaw", "opencode", "gemini", "amp"]:
        assert list(harness_reasoning_efforts(harness)) == FULL  # type: ignore[arg-type]
    assert harness_reasoning_efforts("claude-code") == (
        "low",
        "medium",
        "high",
        "xhigh",
        "ultracode",
    )
    assert harness_reasoning_efforts("kimi-code") == ("none", "high")


def test_reasoning_efforts_narrowed_by_model() -> None:
    no_reasoning = ModelReasoningCapability(supports_reasoning=False)
    assert reasoning_efforts_for("claude-code", no_reasoning) == ("none",)
    assert reasoning_efforts_for("claude-code", ModelReasoningCapability(max_effort="medium")) == (
        "low",
        "medium",
    )
    assert reasoning_efforts_for("codex", ModelReasoningCapability.parse_wire({"maxEffort": "high"})) == (
        "none", "minimal", "low", "medium", "high",
    )  # fmt: skip
    assert reasoning_efforts_for("codex") == harness_reasoning_efforts("codex")


def test_selector_support() -> None:
    for harness in ["opencode", "claude-code", "codex", "kimi-code"]:
        assert harness_honors_selectors(harness)  # type: ignore[arg-type]
    for harness in ["amp", "openclaw", "nanoclaw"]:
        assert not harness_honors_model(harness)  # type: ignore[arg-type]
    for harness in ["amp", "factory-droids", "hermes", "nanoclaw", "acp"]:
        assert not harness_honors_effort(harness)  # type: ignore[arg-type]
    assert harness_honors_model("factory-droids") and not harness_honors_selectors("factory-droids")
    assert harness_honors_effort("openclaw") and not harness_honors_selectors("openclaw")


def test_system_prompt_intents() -> None:
    def intents(harness: HarnessType | None) -> tuple[bool, bool]:
        caps = harness_system_prompt_intents(harness)
        return caps.replace, caps.append

    assert intents("claude-code") == (True, True)
    assert intents("pi") == (True, True)
    assert intents("prime") == (True, True)
    assert intents("codex") == (True, False)
    assert intents("gemini") == (True, False)
    assert intents("opencode") == (False, True)
    assert intents(None) == (False, False)
    replacers = sorted(h for h in HARNESS_TYPES if intents(h)[0])
    appenders = sorted(h for h in HARNESS_TYPES if intents(h)[1])
    assert replacers == ["claude-code", "codex", "gemini", "pi", "prime"]
    assert appenders == ["claude-code", "opencode", "pi", "prime"]
    assert harness_system_prompt_intents("cli-base").to_wire() == {
        "replace": False,
        "append": False,
    }


def test_native_reasoning_control() -> None:
    def row(harness: HarnessType) -> list[str | None]:
        return [native_reasoning_control(harness, effort) for effort in REASONING_EFFORTS]

    assert row("claude-code") == ["low", "low", "low", "medium", "high", "xhigh", "max"]
    assert row("codex") == ["none", "minimal", "low", "medium", "high", "xhigh", "ultra"]
    assert row("pi") == ["off", "minimal", "low", "medium", "high", "xhigh", "xhigh"]
    assert row("prime") == ["off", "minimal", "low", "medium", "high", "xhigh", "max"]
    assert row("kimi-code") == [
        "--no-thinking", "--no-thinking", "--no-thinking", None, "--thinking", "--thinking", "--thinking",
    ]  # fmt: skip
    assert row("opencode") == FULL
    controlled = {"claude-code", "codex", "pi", "prime", "kimi-code", "opencode"}
    for harness in HARNESS_TYPES:
        assert native_reasoning_control(harness, None) is None
        if harness not in controlled:
            assert row(harness) == [None] * len(FULL)
        if not harness_honors_effort(harness):
            assert row(harness) == [None] * len(FULL)
