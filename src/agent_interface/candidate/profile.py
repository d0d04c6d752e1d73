"""The recursively strict profile inside a candidate (``agent-candidate-profile-schema.ts``).

It is the provider-neutral agent profile with every mutable or secret-capable channel
removed: no ``metadata``, no ``connections``, no backend ``extensions`` (an unregistered
extension is an untyped behaviour or credential channel, so it is refused), no remote MCP
servers, resources pinned by content, and hooks and MCP servers launched shell-free with
public configuration only. Every value must be RFC 8785 JSON (no lone surrogates), and a
sealed candidate routes every model choice (``model.small``, subagents, modes) to the
exact primary model.

Records the reference reads with a plain ``z.record`` lose an own ``__proto__`` key, as
they do there.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal, Self

from pydantic import AfterValidator, Discriminator, Tag, model_validator

from agent_interface.candidate.common import (
    AgentCandidateConfigValue,
    CandidateEnvironmentConfig,
    SafeExecutable,
    WellFormedText,
    drop_proto_key,
    relative_path,
)
from agent_interface.candidate.resources import AgentCandidateResources
from agent_interface.core.canonical import is_canonical_json_value
from agent_interface.core.contract_limits import Utf16Length
from agent_interface.core.errors import Refinement
from agent_interface.core.model import WireList, WireMap, WireModel
from agent_interface.core.registry import register_wire_models
from agent_interface.core.surrogate_text import marker_transparent
from agent_interface.profile.confidential import AgentProfileConfidential
from agent_interface.profile.harness import HarnessType, ReasoningEffort
from agent_interface.profile.resources import AgentProfilePrompt
from agent_interface.profile.scalars import (
    AgentProfilePermission,
    FalseOnly,
    PositiveInt,
    PositiveNumber,
    TrueOnly,
)

__all__ = [
    "AgentCandidateDisabledMcpServer",
    "AgentCandidateHookCommand",
    "AgentCandidateLocalMcpServer",
    "AgentCandidateMcpServer",
    "AgentCandidateMode",
    "AgentCandidateModelHints",
    "AgentCandidateProfile",
    "AgentCandidateSubagentProfile",
]

_NonEmpty = Annotated[str, Utf16Length(min=1)]


# -- MCP servers and hooks ---------------------------------------------------------------------


class AgentCandidateLocalMcpServer(WireModel):
    """A stdio server started shell-free with public arguments and environment."""

    transport: Literal["stdio"] | None = None
    command: SafeExecutable
    args: WireList[AgentCandidateConfigValue] | None = None
    env: CandidateEnvironmentConfig | None = None
    cwd: Annotated[
        str,
        relative_path(
            allow_dot=True, code="unsafe_cwd",
            message="MCP cwd must be a canonical workspace-relative path",
        ),
    ] | None = None
    enabled: TrueOnly | None = None


class AgentCandidateDisabledMcpServer(WireModel):
    """A declared but disabled server: exactly ``{enabled: false}``."""

    enabled: FalseOnly


@marker_transparent  # a discriminator reading types and keys (core.surrogate_text)
def _mcp_variant(value: Any) -> str | None:
    # The two strict shapes are disjoint on ``enabled``; choosing by it accepts what the
    # reference's plain union accepts, with the error path of the intended shape.
    if isinstance(value, Mapping):
        return "disabled" if value.get("enabled") is False else "local"
    if isinstance(value, AgentCandidateDisabledMcpServer):
        return "disabled"
    if isinstance(value, AgentCandidateLocalMcpServer):
        return "local"
    return None


AgentCandidateMcpServer = Annotated[
    Annotated[AgentCandidateLocalMcpServer, Tag("local")]
    | Annotated[AgentCandidateDisabledMcpServer, Tag("disabled")],
    Discriminator(
        _mcp_variant,
        custom_error_type="mcp_server_invalid",
        custom_error_message="MCP server must be a JSON object",
    ),
]


class AgentCandidateHookCommand(WireModel):
    """A lifecycle hook run shell-free: an executable with public argv and environment."""

    executable: SafeExecutable
    args: WireList[AgentCandidateConfigValue] | None = None
    timeout_ms: PositiveNumber | None = None
    blocking: bool | None = None
    matcher: WellFormedText | None = None
    env: CandidateEnvironmentConfig | None = None


# -- model routes ------------------------------------------------------------------------------


class AgentCandidateModelHints(WireModel):
    """Model hints without free metadata; no single token ceiling above the total."""

    default: _NonEmpty | None = None
    small: _NonEmpty | None = None
    provider: _NonEmpty | None = None
    reasoning_effort: ReasoningEffort | None = None
    max_visible_output_tokens: PositiveInt | None = None
    max_reasoning_tokens: PositiveInt | None = None
    max_total_output_tokens: PositiveInt | None = None

    @model_validator(mode="after")
    def _ceilings_within_total(self) -> Self:
        total = self.max_total_output_tokens
        if total is None:
            return self
        refinement = Refinement("AgentCandidateModelHints")
        for wire, value in (
            ("maxVisibleOutputTokens", self.max_visible_output_tokens),
            ("maxReasoningTokens", self.max_reasoning_tokens),
        ):
            if value is not None and value > total:
                refinement.add(
                    (wire,), "token_ceiling_exceeds_total",
                    "{field} must not exceed maxTotalOutputTokens", {"field": wire},
                )
        refinement.check()
        return self


class AgentCandidateSubagentProfile(WireModel):
    """A subagent in a candidate's profile: its description, prompt, model, tools, permissions and
    step limit."""

    description: str | None = None
    prompt: str | None = None
    model: _NonEmpty | None = None
    tools: WireMap[bool] | None = None
    permissions: WireMap[AgentProfilePermission] | None = None
    max_steps: PositiveInt | None = None


class AgentCandidateMode(WireModel):
    """A named mode in a candidate's profile: the model, prompt, tools and permissions it switches
    to."""

    description: str | None = None
    model: _NonEmpty | None = None
    prompt: str | None = None
    tools: WireMap[bool] | None = None
    permissions: WireMap[AgentProfilePermission] | None = None


# -- the profile -------------------------------------------------------------------------------


_DropProto = AfterValidator(drop_proto_key)
_PermissionRecord = Annotated[WireMap[AgentProfilePermission], _DropProto]
_ToolRecord = Annotated[WireMap[bool], _DropProto]
_McpRecord = Annotated[WireMap[AgentCandidateMcpServer], _DropProto]
_SubagentRecord = Annotated[WireMap[AgentCandidateSubagentProfile], _DropProto]
_HookRecord = Annotated[WireMap[WireList[AgentCandidateHookCommand]], _DropProto]
_ModeRecord = Annotated[WireMap[AgentCandidateMode], _DropProto]


class AgentCandidateProfile(WireModel):
    """The immutable profile of a candidate: recursively strict, public configuration only."""

    name: WellFormedText | None = None
    description: WellFormedText | None = None
    version: WellFormedText | None = None
    tags: WireList[WellFormedText] | None = None
    prompt: AgentProfilePrompt | None = None
    model: AgentCandidateModelHints | None = None
    harness: HarnessType | None = None
    permissions: _PermissionRecord | None = None
    tools: _ToolRecord | None = None
    mcp: _McpRecord | None = None
    subagents: _SubagentRecord | None = None
    resources: AgentCandidateResources | None = None
    hooks: _HookRecord | None = None
    modes: _ModeRecord | None = None
    confidential: AgentProfileConfidential | None = None

    @model_validator(mode="after")
    def _sealed(self) -> Self:
        refinement = Refinement("AgentCandidateProfile")
        if not is_canonical_json_value(self.model_dump(mode="python", by_alias=True)):
            refinement.add(
                (), "non_canonical_json", "candidate profile must contain only RFC 8785 JSON values"
            )
        primary = self.model.default if self.model is not None else None
        routes: list[tuple[tuple[str, ...], str]] = []
        if self.model is not None and self.model.small is not None:
            routes.append((("model", "small"), self.model.small))
        for name, subagent in (self.subagents or {}).items():
            if subagent.model is not None:
                routes.append((("subagents", name, "model"), subagent.model))
        for name, mode in (self.modes or {}).items():
            if mode.model is not None:
                routes.append((("modes", name, "model"), mode.model))
        for path, route in routes:
            if primary is None or route != primary:
                refinement.add(
                    path, "model_route_not_primary",
                    "sealed candidates require every model route to use the exact primary model",
                )
        refinement.check()
        return self


register_wire_models(
    AgentCandidateMcpServer=AgentCandidateMcpServer,
    AgentCandidateHookCommand=AgentCandidateHookCommand,
    AgentCandidateProfile=AgentCandidateProfile,
)
