"""What a provider can do with an :class:`~agent_interface.profile.agent_profile.AgentProfile`
(``environment-profile-capabilities.ts``), and the check that refuses what it cannot.

A capability declaration is a promise about materialization, not evidence that a value was
delivered, opened or applied. :func:`check_profile_support` lists every profile request a
provider declares it cannot honor; a provider must honor the profile or refuse it before
dispatch. In particular a provider with ``systemPrompt.replace: false`` refuses a profile
carrying ``prompt.systemPrompt``: quietly appending a requested replacement would leave in
force the instructions the caller asked to delete.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from agent_interface.core.contract_limits import (
    CONTRACT_MAX_ARRAY_LENGTH,
    BoundedIdentifier,
)
from agent_interface.core.errors import (
    ContractError,
    ContractIssue,
    json_pointer,
)
from agent_interface.core.model import (
    WireList,
    WireModel,
)
from agent_interface.core.registry import register_wire_models
from agent_interface.profile.harness import AgentProfileSystemPromptCapability

if TYPE_CHECKING:
    from agent_interface.profile.agent_profile import AgentProfile

__all__ = [
    "AgentProfileCapabilities",
    "AgentProfileResourceCapabilities",
    "AgentProfileSystemPromptCapability",
    "check_profile_support",
    "ensure_profile_supported",
]


class AgentProfileResourceCapabilities(WireModel):
    """Which resource kinds an environment can materialize for a profile: files, instructions,
    tools, skills, agents and commands."""

    files: bool
    instructions: bool
    tools: bool | None = None
    skills: bool | None = None
    agents: bool | None = None
    commands: bool | None = None


class AgentProfileCapabilities(WireModel):
    """``AgentProfileCapabilitiesSchema``: how a provider interprets an AgentProfile.
    Both ``systemPrompt`` bits are required so an omitted bit is never read as support;
    an omitted optional flag (``hooks``, ``modes``, ``resources.skills``, ...) means no."""

    named_profiles: bool
    system_prompt: AgentProfileSystemPromptCapability
    instructions: bool
    tools: bool
    permissions: bool
    mcp: bool
    subagents: bool
    resources: AgentProfileResourceCapabilities
    hooks: bool | None = None
    modes: bool | None = None
    runtime_update: bool
    validation: bool
    extensions: (
        Annotated[WireList[BoundedIdentifier], Field(max_length=CONTRACT_MAX_ARRAY_LENGTH)] | None
    ) = None
    """Backend extension namespaces this provider understands."""


def _issue(path: tuple[str, ...], code: str, message: str) -> ContractIssue:
    return ContractIssue(json_pointer(path), code, message)


def check_profile_support(
    profile: AgentProfile | Mapping[str, Any] | str | bytes,
    capabilities: AgentProfileCapabilities | Mapping[str, Any],
) -> list[ContractIssue]:
    """Every profile request the capabilities cannot honor, in profile order; empty when
    the provider can take the profile. Any explicit value is a request, including ``""``,
    ``[]`` and ``{}``. A profile still carrying ``seats`` is refused: providers receive the
    per-stage projection (:func:`agent_interface.profile.seats.project_profile_for_stage`)."""
    # Imported here: the capability document alone (embedded by the environment's) should
    # not build the whole profile model at import.
    from agent_interface.profile.canonical import coerce_agent_profile

    value = coerce_agent_profile(profile)
    caps = (
        capabilities
        if isinstance(capabilities, AgentProfileCapabilities)
        else AgentProfileCapabilities.parse_wire(capabilities)
    )
    issues: list[ContractIssue] = []
    prompt = value.prompt
    if prompt is not None:
        if prompt.system_prompt is not None and not caps.system_prompt.replace:
            issues.append(
                _issue(
                    ("prompt", "systemPrompt"),
                    "system_prompt_replace_unsupported",
                    "the provider cannot replace the harness system prompt; refusing instead of appending",
                )
            )
        if prompt.append_system_prompt is not None and not caps.system_prompt.append:
            issues.append(
                _issue(
                    ("prompt", "appendSystemPrompt"),
                    "system_prompt_append_unsupported",
                    "the provider cannot add to the harness system prompt",
                )
            )
        if prompt.instructions is not None and not caps.instructions:
            issues.append(
                _issue(
                    ("prompt", "instructions"),
                    "instructions_unsupported",
                    "the provider does not materialize prompt instructions",
                )
            )
    for field, supported in (
        ("permissions", caps.permissions),
        ("tools", caps.tools),
        ("mcp", caps.mcp),
        ("subagents", caps.subagents),
    ):
        if getattr(value, field) is not None and not supported:
            issues.append(
                _issue(
                    (field,), f"{field}_unsupported", f"the provider does not honor profile {field}"
                )
            )
    resources = value.resources
    if resources is not None:
        resource_caps = caps.resources
        resource_axes: tuple[tuple[str, str, bool | None], ...] = (
            ("files", "files", resource_caps.files),
            ("tools", "tool", resource_caps.tools),
            ("skills", "skill", resource_caps.skills),
            ("agents", "agent", resource_caps.agents),
            ("commands", "command", resource_caps.commands),
            ("instructions", "instruction", resource_caps.instructions),
        )
        for field, label, granted in resource_axes:
            if getattr(resources, field) is not None and granted is not True:
                issues.append(
                    _issue(
                        ("resources", field),
                        f"resource_{field}_unsupported",
                        f"the provider does not materialize {label} resources",
                    )
                )
    for field, flag in (("hooks", caps.hooks), ("modes", caps.modes)):
        if getattr(value, field) is not None and flag is not True:
            issues.append(
                _issue(
                    (field,), f"{field}_unsupported", f"the provider does not honor profile {field}"
                )
            )
    if value.extensions is not None:
        known = set(caps.extensions or ())
        for namespace in value.extensions:
            if namespace not in known:
                issues.append(
                    _issue(
                        ("extensions", namespace),
                        "extension_unsupported",
                        "the provider does not understand this extension namespace",
                    )
                )
    if value.seats is not None:
        issues.append(
            _issue(
                ("seats",),
                "seats_not_projected",
                "a provider takes one stage's projection, not the seat chain",
            )
        )
    return issues


def ensure_profile_supported(
    profile: AgentProfile | Mapping[str, Any] | str | bytes,
    capabilities: AgentProfileCapabilities | Mapping[str, Any],
) -> AgentProfile:
    """The validated profile, or :class:`ContractError` listing every unsupported request."""
    from agent_interface.profile.canonical import coerce_agent_profile

    value = coerce_agent_profile(profile)
    issues = check_profile_support(value, capabilities)
    if issues:
        raise ContractError(issues, subject="AgentProfile")
    return value


register_wire_models(AgentProfileCapabilities=AgentProfileCapabilities)
