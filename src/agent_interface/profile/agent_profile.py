"""The provider-neutral agent profile (``agent-profile.ts``, ``profile-schema.ts``).

:class:`AgentProfile` is the exact wire contract of ``agentProfileSchema``: every object is
strict (unknown keys refused), record keys must be well-formed Unicode, MCP and hook
configuration carries only tagged public values or opaque secret references, and the three
token ceilings obey "no single ceiling above the total". The optional ``seats`` chain (see
:mod:`agent_interface.profile.seats`) is validated here because its rules are part of the profile.

Identity lives in :mod:`agent_interface.profile.canonical`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, ClassVar, Final, Literal

from pydantic import (
    Field,
    GetCoreSchemaHandler,
    ValidationInfo,
    model_validator,
)
from pydantic_core import core_schema

from agent_interface.core.canonical import (
    canonical_json,
    is_well_formed_unicode,
)
from agent_interface.core.contract_limits import (
    BoundedIdentifier,
)
from agent_interface.core.errors import ContractError, ContractIssue, json_pointer
from agent_interface.core.model import (
    JsonObject,
    WireList,
    WireMap,
    WireModel,
    from_json_text,
    thaw,
)
from agent_interface.core.registry import register_wire_models
from agent_interface.core.surrogate_text import marker_transparent
from agent_interface.profile.confidential import AgentProfileConfidential  # public here too
from agent_interface.profile.config import AgentProfileEnvironment
from agent_interface.profile.harness import (
    HarnessType,
    ReasoningEffort,
    harness_honors_effort,
    harness_reasoning_efforts,
    harness_system_prompt_intents,
)
from agent_interface.profile.mcp_servers import AgentProfileMcpServer
from agent_interface.profile.resources import (
    AgentProfilePrompt,
    AgentProfileResources,
)
from agent_interface.profile.scalars import (
    AgentProfilePermission,
    JsNumber,
    Loc,
    NonEmptyString,
    PositiveInt,
    PositiveNumber,
    ProfileJsonRecord,
    ProfileRecord,
    _refuse,
)

__all__ = [
    "SANDBOX_SIZE_PRESET_NAMES",
    "AgentProfile",
    "AgentProfileConfidential",
    "AgentProfileConnection",
    "AgentProfileHookCommand",
    "AgentProfileMode",
    "AgentProfileModelHints",
    "AgentProfileModelHintsBase",
    "AgentProfileSeatAccountSelector",
    "AgentProfileSeatAllEligible",
    "AgentProfileSeatNamedAccount",
    "AgentProfileSeatStage",
    "AgentSubagentProfile",
    "Capability",
    "SandboxSizePreset",
    "enforce_model_token_bounds",
    "seat_chain_issues",
]


class AgentProfileModelHintsBase(WireModel):
    """Model selection hints without the cross-field ceiling rule
    (``agentProfileModelHintsBaseSchema``), for derivations that reuse the shape."""

    default: str | None = None
    small: str | None = None
    provider: str | None = None
    reasoning_effort: ReasoningEffort | None = None
    max_visible_output_tokens: PositiveInt | None = None
    max_reasoning_tokens: PositiveInt | None = None
    max_total_output_tokens: PositiveInt | None = None
    metadata: ProfileJsonRecord | None = None


def _token_bound_issues(
    visible: int | None, reasoning: int | None, total: int | None
) -> list[tuple[Loc, str, str]]:
    if total is None:
        return []
    return [
        (
            (name,),
            "token_ceiling_exceeds_total",
            f"{name} must not exceed maxTotalOutputTokens",
        )
        for name, ceiling in (
            ("maxVisibleOutputTokens", visible),
            ("maxReasoningTokens", reasoning),
        )
        if ceiling is not None and ceiling > total
    ]


def enforce_model_token_bounds(hints: AgentProfileModelHintsBase | Mapping[str, Any]) -> None:
    """Refuse model hints whose single token ceiling exceeds ``maxTotalOutputTokens``
    (``enforceModelTokenBounds``). Nothing is clamped; ``reasoningEffort`` is not a bound.
    A mapping is read by wire names. Raises :class:`ContractError` with one issue per
    offending ceiling (code ``token_ceiling_exceeds_total``)."""
    if isinstance(hints, AgentProfileModelHintsBase):
        values = (
            hints.max_visible_output_tokens,
            hints.max_reasoning_tokens,
            hints.max_total_output_tokens,
        )
    else:
        values = (
            hints.get("maxVisibleOutputTokens"),
            hints.get("maxReasoningTokens"),
            hints.get("maxTotalOutputTokens"),
        )
    issues = _token_bound_issues(*values)
    if issues:
        raise ContractError(
            [ContractIssue(json_pointer(loc), code, message) for loc, code, message in issues],
            subject="AgentProfileModelHints",
        )


class AgentProfileModelHints(AgentProfileModelHintsBase):
    """Model selection hints. Each single token ceiling must not exceed
    ``maxTotalOutputTokens`` when both are set; nothing is clamped."""

    @model_validator(mode="after")
    def _ceilings_within_total(self) -> AgentProfileModelHints:
        issues = _token_bound_issues(
            self.max_visible_output_tokens,
            self.max_reasoning_tokens,
            self.max_total_output_tokens,
        )
        if issues:
            _refuse("AgentProfileModelHints", issues)
        return self


# -- subagents, hooks, modes, confidential, connections ---------------------------------------


class AgentSubagentProfile(WireModel):
    """A subagent a profile declares: its description, prompt, model, tools, permissions and step
    limit."""

    description: str | None = None
    prompt: str | None = None
    model: str | None = None
    tools: ProfileRecord[bool] | None = None
    permissions: ProfileRecord[AgentProfilePermission] | None = None
    max_steps: JsNumber | None = None
    metadata: ProfileJsonRecord | None = None


class AgentProfileHookCommand(WireModel):
    """A command a harness runs on a hook event: the command, timeout, whether it blocks, a matcher
    and its environment."""

    repr_argv: ClassVar[frozenset[str]] = frozenset({"command"})

    command: str
    timeout_ms: PositiveNumber | None = None
    blocking: bool | None = None
    matcher: str | None = None
    env: AgentProfileEnvironment | None = None


class AgentProfileMode(WireModel):
    """A named mode of a profile: the model, prompt, tools and permissions it switches to."""

    description: str | None = None
    model: str | None = None
    prompt: str | None = None
    tools: ProfileRecord[bool] | None = None
    permissions: ProfileRecord[AgentProfilePermission] | None = None
    metadata: ProfileJsonRecord | None = None


class AgentProfileConnection(WireModel):
    """Hub-managed integration grant: one connection and the capabilities granted on it."""

    connection_id: NonEmptyString
    capabilities: Annotated[WireList[NonEmptyString], Field(min_length=1)]
    alias: NonEmptyString | None = None


# -- seats -------------------------------------------------------------------------------------


class AgentProfileSeatAllEligible(WireModel):
    """Let the account manager try every eligible seat, in its own order."""

    kind: Literal["all-eligible"]


class AgentProfileSeatNamedAccount(WireModel):
    """Run this stage on exactly one named account."""

    kind: Literal["seat"]
    account_id: BoundedIdentifier


AgentProfileSeatAccountSelector = Annotated[
    AgentProfileSeatAllEligible | AgentProfileSeatNamedAccount, Field(discriminator="kind")
]


class AgentProfileSeatStage(WireModel):
    """One stage of a seat chain: harness, provider, model and account selector, with
    optional replacement ``tools`` / ``permissions`` maps (``{}`` removes the profile's
    map for this stage; an omitted map inherits it)."""

    harness: HarnessType
    provider: BoundedIdentifier
    model: BoundedIdentifier
    account: AgentProfileSeatAccountSelector
    tools: WireMap[bool] | None = None
    permissions: WireMap[AgentProfilePermission] | None = None


# -- the profile -------------------------------------------------------------------------------


def _ill_formed_keys(value: Any, path: Loc) -> list[Loc]:
    """Locations of record keys that are not well-formed Unicode, depth first."""
    found: list[Loc] = []
    _collect_ill_formed_keys(value, path, set(), found)
    return found


def _collect_ill_formed_keys(value: Any, path: Loc, ancestors: set[int], found: list[Loc]) -> None:
    # Cycles and excessive depth are left to the JSON validators, which refuse them.
    if id(value) in ancestors or len(path) > 300:
        return
    if isinstance(value, Mapping):
        try:
            # One encode for all keys; only a failure reads them one by one.
            "".join(value).encode("utf-8")
        except (TypeError, UnicodeEncodeError):
            keys_clean = False
        else:
            keys_clean = True
        ancestors.add(id(value))
        for key, item in value.items():
            if not keys_clean and isinstance(key, str) and not is_well_formed_unicode(key):
                found.append((*path, key))
            if type(item) is not str and isinstance(item, (Mapping, list, tuple)):
                _collect_ill_formed_keys(item, (*path, key), ancestors, found)
        ancestors.discard(id(value))
    elif isinstance(value, (list, tuple)):
        ancestors.add(id(value))
        for index, item in enumerate(value):
            if type(item) is not str and isinstance(item, (Mapping, list, tuple)):
                _collect_ill_formed_keys(item, (*path, index), ancestors, found)
        ancestors.discard(id(value))


def _python_input_only(schema: Any, cls: type) -> None:
    """Put the ``before`` validators of ``cls``'s model schema on a Python-only branch."""
    node = schema
    while isinstance(node, dict) and node.get("type") != "model":
        node = node.get("schema")
    if not isinstance(node, dict) or node.get("cls") is not cls:
        return
    inner = node["schema"]
    if inner.get("type") == "function-before":
        node["schema"] = core_schema.json_or_python_schema(
            json_schema=inner["schema"], python_schema=inner
        )


def _same_map(left: Mapping[str, Any] | None, right: Mapping[str, Any] | None) -> bool:
    if left is None or right is None:
        return left is right
    return canonical_json(thaw(left)) == canonical_json(thaw(right))


class AgentProfile(WireModel):
    """The complete provider-neutral agent profile (``agentProfileSchema``)."""

    name: str | None = None
    description: str | None = None
    version: str | None = None
    tags: WireList[str] | None = None
    prompt: AgentProfilePrompt | None = None
    model: AgentProfileModelHints | None = None
    harness: HarnessType | None = None
    """Authored harness preference; part of identity. An executor may override it per run."""
    permissions: WireMap[AgentProfilePermission] | None = None
    tools: WireMap[bool] | None = None
    mcp: WireMap[AgentProfileMcpServer] | None = None
    connections: WireList[AgentProfileConnection] | None = None
    subagents: WireMap[AgentSubagentProfile] | None = None
    resources: AgentProfileResources | None = None
    hooks: WireMap[WireList[AgentProfileHookCommand]] | None = None
    modes: WireMap[AgentProfileMode] | None = None
    confidential: AgentProfileConfidential | None = None
    metadata: JsonObject | None = None
    extensions: WireMap[JsonObject] | None = None
    """Backend namespaces for non-portable settings."""
    seats: Annotated[WireList[AgentProfileSeatStage], Field(min_length=1)] | None = None
    """Ordered chain continuing one logical agent across subscriptions; omitted keeps the
    single-provider policy."""

    @model_validator(mode="before")
    @classmethod
    def _record_keys_are_unicode(cls, data: Any, info: ValidationInfo) -> Any:
        if from_json_text(info):
            return data  # the JSON parser already refused lone surrogates
        bad = _ill_formed_keys(data, ())
        if bad:
            _refuse(
                "AgentProfile",
                [
                    (loc, "ill_formed_unicode", "record keys must contain valid Unicode")
                    for loc in bad
                ],
            )
        return data

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        # The record-key walk needs the raw input, so it is a "before" validator; for JSON
        # text it has nothing to find (the parser refuses lone surrogates) and would only
        # make pydantic-core convert the document to Python objects first. Keep it on the
        # Python-input branch.
        schema = handler(source)
        _python_input_only(schema, cls)
        return schema

    @model_validator(mode="after")
    def _seat_chain_rules(self) -> AgentProfile:
        if self.seats is not None:
            issues = seat_chain_issues(self)
            if issues:
                _refuse("AgentProfile", issues)
        return self


# The key walk runs on the precise route only, where a text reaches the marked route
# only without a lone surrogate in any key (``core.surrogate_text``): nothing to find.
marker_transparent(AgentProfile._record_keys_are_unicode)


def seat_chain_issues(profile: AgentProfile) -> list[tuple[Loc, str, str]]:
    """Every broken seat-chain rule of a profile, as ``(location, code, message)``."""
    seats = profile.seats
    if not seats:
        return []
    issues: list[tuple[Loc, str, str]] = []
    first = seats[0]
    model = profile.model
    for field, authored, label in (
        ("harness", profile.harness, "harness"),
        ("provider", model.provider if model else None, "model.provider"),
        ("model", model.default if model else None, "model.default"),
    ):
        if getattr(first, field) != authored:
            issues.append(
                (
                    ("seats", 0, field),
                    "seat_first_stage_mismatch",
                    f"the first seat stage's {field} must equal the profile's {label}",
                )
            )
    for field in ("tools", "permissions"):
        named = getattr(first, field)
        if named is not None and not _same_map(named, getattr(profile, field)):
            issues.append(
                (
                    ("seats", 0, field),
                    "seat_first_stage_map_mismatch",
                    f"a first-stage {field} map must equal the profile's {field} map",
                )
            )
    effort = model.reasoning_effort if model else None
    prompt = profile.prompt
    for index, stage in enumerate(seats):
        if effort is not None and (
            effort not in harness_reasoning_efforts(stage.harness)
            or not harness_honors_effort(stage.harness)
        ):
            issues.append(
                (
                    ("seats", index, "harness"),
                    "seat_reasoning_effort_unsupported",
                    "the stage's harness cannot honor the profile's reasoning effort",
                )
            )
        intents = harness_system_prompt_intents(stage.harness)
        if prompt is not None and prompt.system_prompt is not None and not intents.replace:
            issues.append(
                (
                    ("seats", index, "harness"),
                    "seat_system_prompt_replace_unsupported",
                    "the stage's harness cannot replace its system prompt, and the profile sets systemPrompt",
                )
            )
        if prompt is not None and prompt.append_system_prompt is not None and not intents.append:
            issues.append(
                (
                    ("seats", index, "harness"),
                    "seat_system_prompt_append_unsupported",
                    "the stage's harness cannot add to its system prompt, and the profile sets appendSystemPrompt",
                )
            )
    return issues


# -- sandbox sizes and registered capabilities ---------------------------------------------------

SandboxSizePreset = Literal["nano", "small", "medium", "large"]
SANDBOX_SIZE_PRESET_NAMES: Final[tuple[SandboxSizePreset, ...]] = (
    "nano",
    "small",
    "medium",
    "large",
)


class Capability(WireModel):
    """A registered capability: a stable id and its full profile."""

    id: NonEmptyString
    definition: AgentProfile
    recommended_size: SandboxSizePreset | None = None


register_wire_models(
    AgentProfile=AgentProfile,
    AgentProfileModelHints=AgentProfileModelHints,
    AgentProfileModelHintsBase=AgentProfileModelHintsBase,
    AgentSubagentProfile=AgentSubagentProfile,
    AgentProfileHookCommand=AgentProfileHookCommand,
    AgentProfileMode=AgentProfileMode,
    AgentProfileConnection=AgentProfileConnection,
    AgentProfileSeatStage=AgentProfileSeatStage,
    AgentProfileSeatAccountSelector=AgentProfileSeatAccountSelector,
    Capability=Capability,
)
