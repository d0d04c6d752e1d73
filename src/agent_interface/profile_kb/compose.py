"""Look up knowledge-base records and compose their guidance into a profile's prompt.

Composition is pure and deterministic: the records are immutable, so the same profile
and selection always give the same composed profile and the same canonical digest.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final, TypeVar, cast, overload

from agent_interface.core.contract_limits import (
    BoundedIdentifier,
    js_trim,
)
from agent_interface.core.model import (
    WireModel,
    thaw,
)
from agent_interface.profile.agent_profile import AgentProfile
from agent_interface.profile.harness import (
    HarnessType,
    harness_system_prompt_intents,
)
from agent_interface.profile_kb.guidance import (
    AgentProfileGuidanceBlock,
    AgentProfileGuidanceChannel,
    compose_agent_profile_guidance,
)
from agent_interface.profile_kb.harnesses import profile_kb_harnesses
from agent_interface.profile_kb.models import profile_kb_models
from agent_interface.profile_kb.records import profile_kb_learnings
from agent_interface.profile_kb.types import (
    ProfileKbHarness,
    ProfileKbLearning,
    ProfileKbModel,
)

__all__ = [
    "PROFILE_KB_CHECKED_AT",
    "PROFILE_KB_SOURCES",
    "ProfileKbSelection",
    "find_profile_kb_harness",
    "find_profile_kb_model",
    "profile_kb_channel",
    "profile_kb_guidance",
    "with_profile_kb",
]

PROFILE_KB_SOURCES: Final = ("harness", "model", "learning")
"""The block sources the knowledge base owns; recomposition replaces only these."""

PROFILE_KB_CHECKED_AT: Final = "2026-10-04"
"""The latest date on which the knowledge base was checked against its sources."""

_HARNESSES: Final[dict[str, ProfileKbHarness]] = {entry.id: entry for entry in profile_kb_harnesses}


def _model_index() -> dict[str, ProfileKbModel]:
    index: dict[str, ProfileKbModel] = {}
    for model in profile_kb_models:
        for name in (model.id, *model.aliases):
            key = name.lower()
            if key in index:
                raise RuntimeError(f"profile-kb: model name {name} is declared twice")
            index[key] = model
    return index


_MODELS: Final = _model_index()

T = TypeVar("T")


def _match_model_name(model: str | None, lookup: Callable[[str], T | None]) -> T | None:
    # Try the name as given (without a trailing ``:suffix``), then without each
    # leading ``provider/`` or route segment in turn.
    if not model:
        return None
    colon = model.rfind(":")
    candidate = js_trim(model[:colon] if colon > 0 else model).lower()
    while True:
        found = lookup(candidate)
        if found is not None:
            return found
        slash = candidate.find("/")
        if slash < 0:
            return None
        candidate = candidate[slash + 1 :]


def find_profile_kb_harness(harness: str | None) -> ProfileKbHarness | None:
    """The harness record with exactly this id, if any."""
    if not harness:
        return None
    return _HARNESSES.get(harness)


def find_profile_kb_model(model: str | None) -> ProfileKbModel | None:
    """The model record for an id or alias, case-insensitively.

    Accepts provider and route prefixes (``anthropic/claude-opus-5-5``,
    ``pi/tangle-router/deepseek/deepseek-v4.1-flash``) and a trailing ``:suffix`` such
    as a thinking level or ``:batch``. A different version never matches.
    """
    return _match_model_name(model, _MODELS.get)


def _learnings_for(
    harness: ProfileKbHarness | None, model: ProfileKbModel | None
) -> list[ProfileKbLearning]:
    selected = []
    for learning in profile_kb_learnings:
        scope = learning.applies_to
        if scope.harness is not None and scope.harness != (harness.id if harness else None):
            continue
        if scope.model is not None and scope.model != (model.id if model else None):
            continue
        if scope.harness is None and scope.model is None:
            continue
        selected.append(learning)
    return selected


def _bullets(lines: tuple[str, ...] | list[str]) -> str:
    return "\n".join(f"- {line}" for line in lines)


class ProfileKbSelection(WireModel):
    """Which harness and model to compose guidance for (an executor's override)."""

    harness: BoundedIdentifier | None = None
    model: BoundedIdentifier | None = None


def profile_kb_guidance(
    harness: str | None = None, model: str | None = None
) -> tuple[AgentProfileGuidanceBlock, ...]:
    """Guidance blocks for one harness and model: harness, then model, then learnings.

    Only agent-audience claims that are not hypotheses contribute. Unknown names and
    records with no agent guidance contribute nothing: empty guidance is legitimate.
    """
    harness_entry = find_profile_kb_harness(harness)
    model_entry = find_profile_kb_model(model)
    blocks: list[AgentProfileGuidanceBlock] = []
    if harness_entry is not None and harness_entry.prompt:
        blocks.append(
            AgentProfileGuidanceBlock(
                source="harness",
                id=harness_entry.id,
                text=f"Harness guidance: {harness_entry.name}.\n{_bullets(harness_entry.prompt)}",
            )
        )
    if model_entry is not None and model_entry.prompt:
        blocks.append(
            AgentProfileGuidanceBlock(
                source="model",
                id=model_entry.id,
                text=f"Model guidance: {model_entry.name}.\n{_bullets(model_entry.prompt)}",
            )
        )
    learnings = _learnings_for(harness_entry, model_entry)
    if learnings:
        blocks.append(
            AgentProfileGuidanceBlock(
                source="learning",
                id=",".join(learning.id for learning in learnings),
                text=_bullets([learning.text for learning in learnings]),
            )
        )
    return tuple(blocks)


def profile_kb_channel(harness: str | None) -> AgentProfileGuidanceChannel:
    """``appendSystemPrompt`` where the harness owns an additive system-prompt control,
    ``instructions`` otherwise (and for an unknown or absent harness)."""
    intents = harness_system_prompt_intents(cast("HarnessType | None", harness))
    return "appendSystemPrompt" if intents.append else "instructions"


def _profile_selection(profile: Any) -> tuple[str | None, str | None]:
    if isinstance(profile, AgentProfile):
        wire = profile.to_wire()
    elif isinstance(profile, Mapping):
        wire = thaw(dict(profile))
    else:
        return None, None
    harness = wire.get("harness")
    hints = wire.get("model")
    default = hints.get("default") if isinstance(hints, Mapping) else None
    return (
        harness if isinstance(harness, str) else None,
        default if isinstance(default, str) else None,
    )


@overload
def with_profile_kb(
    profile: AgentProfile,
    selection: ProfileKbSelection | Mapping[str, Any] | None = ...,
    *,
    harness: str | None = ...,
    model: str | None = ...,
) -> AgentProfile: ...
@overload
def with_profile_kb(
    profile: Mapping[str, Any],
    selection: ProfileKbSelection | Mapping[str, Any] | None = ...,
    *,
    harness: str | None = ...,
    model: str | None = ...,
) -> dict[str, Any]: ...
def with_profile_kb(
    profile: AgentProfile | Mapping[str, Any],
    selection: ProfileKbSelection | Mapping[str, Any] | None = None,
    *,
    harness: str | None = None,
    model: str | None = None,
) -> Any:
    """Compose harness guidance, then model guidance, then the profile's own text.

    The harness and model default to the profile's ``harness`` and ``model.default``;
    a selection (or the ``harness``/``model`` keywords) composes for an executor's
    override instead. Guidance lands in ``appendSystemPrompt`` where the harness owns
    an additive system-prompt control and in ``instructions`` otherwise. Blocks this
    function wrote earlier are replaced and other layers' blocks kept, so
    ``with_profile_kb(with_profile_kb(p)) == with_profile_kb(p)``.

    An ``AgentProfile`` gives a re-validated ``AgentProfile``; a mapping gives a plain
    ``dict`` in wire form.
    """
    if isinstance(selection, ProfileKbSelection):
        chosen = selection
    else:
        chosen = ProfileKbSelection.parse_wire(dict(selection or {}))
    own_harness, own_model = _profile_selection(profile)
    selected_harness = next(
        (value for value in (harness, chosen.harness, own_harness) if value is not None), None
    )
    selected_model = next(
        (value for value in (model, chosen.model, own_model) if value is not None), None
    )
    blocks = profile_kb_guidance(selected_harness, selected_model)
    return compose_agent_profile_guidance(
        profile,
        blocks,
        profile_kb_channel(selected_harness),
        replace_sources=PROFILE_KB_SOURCES,
    )
