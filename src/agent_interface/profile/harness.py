"""Harness names and what each harness can do (``harness.ts``, ``harness-capabilities.ts``).

A harness is the runtime that materializes and runs an :class:`~agent_interface.profile.agent_profile.AgentProfile`
(``claude-code``, ``codex``, ``opencode``, ...). The tables here answer three questions for a
harness: which models it can run (provider lock), which reasoning efforts it can express and
which native control token it sends for one, and which system-prompt intents (replace, append)
its own controls execute when the profile is forwarded as a workspace plan.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from typing import Final, Literal, get_args

from agent_interface.core.model import WireModel
from agent_interface.core.registry import register_wire_models

__all__ = [
    "HARNESS_TYPES",
    "REASONING_EFFORTS",
    "REASONING_LADDER",
    "AgentProfileSystemPromptCapability",
    "HarnessType",
    "ModelReasoningCapability",
    "ReasoningEffort",
    "harness_honors_effort",
    "harness_honors_model",
    "harness_honors_selectors",
    "harness_providers",
    "harness_reasoning_efforts",
    "harness_supports_model",
    "harness_system_prompt_intents",
    "is_harness_type",
    "model_provider",
    "native_reasoning_control",
    "preferred_harness_for_model",
    "reasoning_efforts_for",
    "snap_harness_to_model",
    "snap_model_to_harness",
]

HarnessType = Literal[
    "claude-code",
    "nanoclaw",
    "codex",
    "opencode",
    "kimi-code",
    "pi",
    "prime",
    "gemini",
    "hermes",
    "openclaw",
    "amp",
    "factory-droids",
    "forge",
    "cursor",
    "acp",
    "cli-base",
]
"""The canonical harness names (``harnessTypeSchema``), in the reference's order."""

HARNESS_TYPES: Final[tuple[HarnessType, ...]] = get_args(HarnessType)

ReasoningEffort = Literal["none", "minimal", "low", "medium", "high", "xhigh", "ultracode"]
"""Portable reasoning effort, ordered low to high (``none`` = thinking off)."""

REASONING_EFFORTS: Final[tuple[ReasoningEffort, ...]] = get_args(ReasoningEffort)
REASONING_LADDER: Final = REASONING_EFFORTS
"""Alias of :data:`REASONING_EFFORTS` (``reasoningLadder``)."""


def is_harness_type(value: object) -> bool:
    """True when ``value`` is one of the known harness names."""
    return isinstance(value, str) and value in HARNESS_TYPES


class AgentProfileSystemPromptCapability(WireModel):
    """Two independent bits: ``replace`` deletes the harness prompt and installs
    ``prompt.systemPrompt``; ``append`` keeps it and adds ``prompt.appendSystemPrompt``.
    Both are required so an omitted bit is never read as support."""

    replace: bool
    append: bool


# -- harness <-> model compatibility -------------------------------------------------------

_PROVIDER_LOCK: Final[dict[HarnessType, tuple[str, ...]]] = {
    "claude-code": ("anthropic",),
    "codex": ("openai",),
    "kimi-code": ("moonshot",),
}


def model_provider(model_id: str) -> str | None:
    """Provider prefix of a canonical model id (``anthropic/claude-x`` -> ``anthropic``)."""
    slash = model_id.find("/")
    return model_id[:slash] if slash > 0 else None


def harness_providers(harness: HarnessType) -> tuple[str, ...] | None:
    """Providers a harness is locked to, or ``None`` for a router-backed harness."""
    return _PROVIDER_LOCK.get(harness)


def harness_supports_model(harness: HarnessType, model_id: str) -> bool:
    """Router-backed harnesses and provider-less ids are always compatible."""
    providers = harness_providers(harness)
    if providers is None:
        return True
    provider = model_provider(model_id)
    return provider is None or provider in providers


def preferred_harness_for_model(model_id: str) -> HarnessType | None:
    """The vendor-locked harness for a model's provider, or ``None``."""
    provider = model_provider(model_id)
    if provider is None:
        return None
    for harness, providers in _PROVIDER_LOCK.items():
        if provider in providers:
            return harness
    return None


# (pattern, anchored at both ends?) best first; unanchored patterns match a prefix.
_PREFERRED_MODEL_PATTERNS: Final[dict[HarnessType, tuple[tuple[re.Pattern[str], bool], ...]]] = {
    "claude-code": (
        (re.compile(r"anthropic/claude-opus-[0-9.-]+"), True),
        (re.compile(r"anthropic/claude-sonnet-[0-9.-]+"), True),
        (re.compile(r"anthropic/"), False),
    ),
    "codex": (
        (re.compile(r"openai/gpt-[0-9]+(?:\.[0-9]+)?"), True),
        (re.compile(r"openai/gpt"), False),
        (re.compile(r"openai/"), False),
    ),
    "kimi-code": ((re.compile(r"moonshot/"), False),),
}

_DIGITS = re.compile(r"([0-9]+)")

# Primary collation order of printable ASCII in the root locale (what
# ``Intl.Collator(undefined, {numeric: true, sensitivity: "base"})`` uses): whitespace,
# punctuation, symbols, then digit runs (compared by value), then letters without case.
# Other C0 controls and DEL are ignorable.
_ASCII_ORDER: Final = "\t\n\x0b\x0c\r _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$"
_DIGIT_RANK: Final = len(_ASCII_ORDER)
_ASCII_RANK: Final[dict[str, int]] = {
    **{char: rank for rank, char in enumerate(_ASCII_ORDER)},
    **{
        char: _DIGIT_RANK + 1 + index
        for index, letter in enumerate("abcdefghijklmnopqrstuvwxyz")
        for char in (letter, letter.upper())
    },
}
_IGNORABLE: Final = frozenset(chr(code) for code in (*range(9), *range(14, 32), 127))


def _numeric_key(model_id: str) -> tuple[tuple[int, int], ...]:
    """Sort key matching that collator on ASCII ids: digit runs compare by value (leading
    zeros ignored), letters without case. Other text is approximated (accents and case
    folded away, then ordered by code point after the Latin letters)."""
    text = unicodedata.normalize("NFKD", model_id)
    text = "".join(char for char in text if not unicodedata.combining(char)).casefold()
    key: list[tuple[int, int]] = []
    for index, chunk in enumerate(_DIGITS.split(text)):
        if index % 2:
            key.append((_DIGIT_RANK, int(chunk)))
            continue
        for char in chunk:
            if char in _IGNORABLE:
                continue
            rank = _ASCII_RANK.get(char)
            key.append((rank, 0) if rank is not None else (_DIGIT_RANK + 100 + ord(char), 0))
    return tuple(key)


def snap_model_to_harness(harness: HarnessType, model_id: str, candidate_ids: Sequence[str]) -> str:
    """Keep ``model_id`` when the harness runs it; else the best compatible catalog id,
    or ``model_id`` unchanged when nothing in the catalog fits."""
    if harness_supports_model(harness, model_id):
        return model_id
    for pattern, anchored in _PREFERRED_MODEL_PATTERNS.get(harness, ()):
        test = pattern.fullmatch if anchored else pattern.match
        matches = [cid for cid in candidate_ids if test(cid)]
        if matches:
            return max(matches, key=_numeric_key)
    for cid in candidate_ids:
        if harness_supports_model(harness, cid):
            return cid
    return model_id


def snap_harness_to_model(harness: HarnessType, model_id: str) -> HarnessType:
    """Keep the harness when it runs the model; else the model's native harness or ``opencode``."""
    if harness_supports_model(harness, model_id):
        return harness
    return preferred_harness_for_model(model_id) or "opencode"


# -- reasoning effort ----------------------------------------------------------------------

_FULL: Final[tuple[ReasoningEffort, ...]] = REASONING_EFFORTS

_EFFORT_OVERRIDE: Final[dict[HarnessType, tuple[ReasoningEffort, ...]]] = {
    "codex": _FULL,
    "claude-code": ("low", "medium", "high", "xhigh", "ultracode"),
    "pi": _FULL,
    "prime": _FULL,
    "openclaw": _FULL,
    "kimi-code": ("none", "high"),
}

_EFFORT_CEILING: Final[dict[HarnessType, ReasoningEffort]] = {
    "cli-base": "none",
    "nanoclaw": "none",
}


def harness_reasoning_efforts(harness: HarnessType) -> tuple[ReasoningEffort, ...]:
    """The efforts a harness can express: its explicit set, or ``none`` up to its ceiling
    (``ultracode`` for router and model-driven harnesses)."""
    override = _EFFORT_OVERRIDE.get(harness)
    if override is not None:
        return override
    ceiling = _EFFORT_CEILING.get(harness, "ultracode")
    return REASONING_EFFORTS[: REASONING_EFFORTS.index(ceiling) + 1]


class ModelReasoningCapability(WireModel):
    """What a model catalog says about one model's own reasoning."""

    supports_reasoning: bool | None = None
    max_effort: ReasoningEffort | None = None


def reasoning_efforts_for(
    harness: HarnessType, model: ModelReasoningCapability | None = None
) -> tuple[ReasoningEffort, ...]:
    """The harness's efforts narrowed by the model: a non-reasoning model offers only
    ``none``; a model ceiling drops the rungs above it."""
    if model is not None and model.supports_reasoning is False:
        return ("none",)
    efforts = harness_reasoning_efforts(harness)
    if model is not None and model.max_effort is not None:
        cap = REASONING_EFFORTS.index(model.max_effort)
        efforts = tuple(e for e in efforts if REASONING_EFFORTS.index(e) <= cap)
    return efforts


def _claude_code(effort: ReasoningEffort) -> str | None:
    if effort in ("none", "minimal"):
        return "low"
    return "max" if effort == "ultracode" else effort


def _codex(effort: ReasoningEffort) -> str | None:
    return "ultra" if effort == "ultracode" else effort


def _pi(effort: ReasoningEffort) -> str | None:
    if effort == "none":
        return "off"
    return "xhigh" if effort == "ultracode" else effort


def _prime(effort: ReasoningEffort) -> str | None:
    if effort == "none":
        return "off"
    return "max" if effort == "ultracode" else effort


def _kimi(effort: ReasoningEffort) -> str | None:
    if effort == "medium":
        return None
    return "--no-thinking" if effort in ("none", "minimal", "low") else "--thinking"


def _opencode(effort: ReasoningEffort) -> str | None:
    return effort


_NATIVE_CONTROL: Final[dict[HarnessType, Callable[[ReasoningEffort], str | None]]] = {
    "claude-code": _claude_code,
    "codex": _codex,
    "pi": _pi,
    "prime": _prime,
    "kimi-code": _kimi,
    "opencode": _opencode,
}


def native_reasoning_control(harness: HarnessType, effort: ReasoningEffort | None) -> str | None:
    """The harness's own control token for a canonical effort, or ``None`` when the harness
    applies no native control (or nothing was requested)."""
    if effort is None:
        return None
    control = _NATIVE_CONTROL.get(harness)
    return control(effort) if control is not None else None


_IGNORES_MODEL: Final[frozenset[HarnessType]] = frozenset({"amp", "openclaw", "nanoclaw"})
_IGNORES_EFFORT: Final[frozenset[HarnessType]] = frozenset(
    {"amp", "factory-droids", "hermes", "nanoclaw", "acp"}
)


def harness_honors_model(harness: HarnessType) -> bool:
    """Whether the harness's runner applies a per-turn model override."""
    return harness not in _IGNORES_MODEL


def harness_honors_effort(harness: HarnessType) -> bool:
    """Whether the harness's runner applies a reasoning-effort override."""
    return harness not in _IGNORES_EFFORT


def harness_honors_selectors(harness: HarnessType) -> bool:
    """True when ``harness`` honors both a profile's model and reasoning-effort selectors."""
    return harness_honors_model(harness) and harness_honors_effort(harness)


# -- system-prompt intents -----------------------------------------------------------------

_PROMPT_CONTROLS: Final[dict[HarnessType, tuple[bool, bool]]] = {
    "claude-code": (True, True),
    "pi": (True, True),
    "prime": (True, True),
    "codex": (True, False),
    "gemini": (True, False),
    "opencode": (False, True),
}


def harness_system_prompt_intents(
    harness: HarnessType | None,
) -> AgentProfileSystemPromptCapability:
    """Which system-prompt intents a harness honors through a forwarded workspace plan.
    A harness without its own control, or ``None`` (unknown), refuses both."""
    replace, append = _PROMPT_CONTROLS.get(harness, (False, False)) if harness else (False, False)
    return AgentProfileSystemPromptCapability(replace=replace, append=append)


register_wire_models(
    HarnessType=HarnessType,
    ReasoningEffort=ReasoningEffort,
    AgentProfileSystemPromptCapability=AgentProfileSystemPromptCapability,
)
