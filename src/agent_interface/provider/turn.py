"""Environment providers, environments and sessions (``environment-runtime.ts``,
``environment-provider.ts``, ``provider-adapter.ts``).

Three layers:

* **Protocols** (:class:`AgentEnvironmentProvider`, :class:`AgentEnvironment`,
  :class:`AgentSession`, legacy :class:`SdkProviderAdapter`): async Python methods in
  snake_case. Optional methods are *absent* when their capability is false, so a client
  never offers an action the provider denied; :func:`check_capability_surface` checks it.
* **Wire models** exchanged through those methods, camelCase on the wire:
  :class:`CreateAgentEnvironmentInput`, :class:`AgentTurnInput`, :class:`AgentTurnResult`,
  :class:`AgentEnvironmentEvent`, :class:`AgentSessionRef`.
* **Idempotent creation**: :func:`agent_environment_create_input_digest` (byte-identical
  to the reference's ``agentEnvironmentCreateInputDigest``) and
  :func:`create_agent_environment_with_idempotency`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import (
    TYPE_CHECKING,
    Annotated,
    Any,
    Final,
)

from pydantic import Discriminator, Field, Tag

from agent_interface.core.contract_limits import (
    CONTRACT_MAX_ARRAY_LENGTH,
    BoundedIdentifier,
    BoundedJsonRecord,
    BoundedString,
)
from agent_interface.core.errors import (
    ContractError,
    ContractIssue,
)
from agent_interface.core.model import (
    WireList,
    WireMap,
    WireModel,
)
from agent_interface.core.registry import register_wire_models
from agent_interface.core.surrogate_text import marker_transparent
from agent_interface.durable.context_transfer import ContextTransferReceipt
from agent_interface.environment.workspace import (
    ResourceRequest,
    WorkspaceRequest,
)
from agent_interface.profile.agent_profile import AgentProfile
from agent_interface.provider.creation import AgentEnvironmentCreation  # public here too
from agent_interface.provider.turn_input import AgentTurnInput  # public here too
from agent_interface.provider.turn_result import AgentTurnResult  # public here too
from agent_interface.runtime.control_ref import AgentRunControlRef

if TYPE_CHECKING:
    from agent_interface.environment.capabilities import AgentEnvironmentCapabilities

__all__ = [
    "AGENT_ENVIRONMENT_CREATE_DIGEST_KIND",
    "AgentEnvironmentCreation",
    "AgentProfileRef",
    "AgentSessionRef",
    "AgentTurnInput",
    "AgentTurnResult",
    "CreateAgentEnvironmentInput",
    "require_turn_profile_supported",
    "turn_profile_refusals",
]


AGENT_ENVIRONMENT_CREATE_DIGEST_KIND: Final = "agent-environment-create.v1"

# ---------------------------------------------------------------------------
# Wire models
# ---------------------------------------------------------------------------

@marker_transparent  # a discriminator reading types and keys (core.surrogate_text)
def _profile_ref_tag(value: Any) -> str:
    return "CatalogId" if isinstance(value, str) else "AgentProfile"


AgentProfileRef = Annotated[
    Annotated[AgentProfile, Tag("AgentProfile")] | Annotated[BoundedIdentifier, Tag("CatalogId")],
    Discriminator(_profile_ref_tag),
]
"""An inline profile or a provider catalog id (a string)."""


class CreateAgentEnvironmentInput(WireModel):
    """One environment create. ``idempotencyKey`` makes it one retry-safe operation.

    With a key, the same canonical input (every field except the key) returns or
    reconstructs the same environment; any changed field is refused before a second
    create effect. ``requestedId`` binds the create to a caller-owned exact id, such
    as an accepted context-transfer destination.
    """

    profile: AgentProfileRef
    requested_id: BoundedIdentifier | None = None
    backend: BoundedIdentifier | None = None
    workspace: WorkspaceRequest | None = None
    resources: ResourceRequest | None = None
    env: WireMap[BoundedString] | None = Field(default=None, repr=False)
    secrets: (
        Annotated[WireList[BoundedIdentifier], Field(max_length=CONTRACT_MAX_ARRAY_LENGTH)]
        | WireMap[BoundedString]
        | None
    ) = Field(default=None, repr=False)
    metadata: BoundedJsonRecord | None = None
    name: BoundedString | None = None
    idempotency_key: BoundedIdentifier | None = None
    provider_options: BoundedJsonRecord | None = None


class AgentSessionRef(WireModel):
    """A session as ``dispatch`` answers it: its ``id`` (for ``environment.session(id)``),
    the provider, and the run's ``controlRef`` when the provider retains the run."""

    id: BoundedIdentifier
    provider: BoundedIdentifier | None = None
    control_ref: AgentRunControlRef | None = None
    context_transfer_receipt: ContextTransferReceipt | None = None
    metadata: BoundedJsonRecord | None = None


# ---------------------------------------------------------------------------
# Per-turn profile support
# ---------------------------------------------------------------------------


def _present(mapping: Mapping[str, Any], key: str) -> bool:
    value = mapping.get(key)
    if value is None:
        return False
    if isinstance(value, (dict, list, tuple, str)):
        return len(value) > 0
    return True


def turn_profile_refusals(
    capabilities: AgentEnvironmentCapabilities,
    profile: AgentProfile | Mapping[str, Any] | None,
    *,
    per_turn: bool = True,
    base_path: str = "/profile",
) -> tuple[ContractIssue, ...]:
    """Every reason the provider cannot honor ``profile``, decided from its capabilities.

    ``per_turn`` adds the rule that changing the profile for one turn needs
    ``profile.runtimeUpdate``. An empty tuple means the profile may be dispatched.
    """
    if profile is None:
        return ()
    doc: Mapping[str, Any] = profile.to_wire() if isinstance(profile, WireModel) else profile
    caps = capabilities.profile
    issues: list[ContractIssue] = []

    def refuse(path: str, code: str, message: str) -> None:
        issues.append(ContractIssue(base_path + path, code, message))

    if per_turn and not caps.runtime_update:
        refuse("", "turn_profile_unsupported", "this provider cannot apply a profile per turn")
    prompt = doc.get("prompt")
    if isinstance(prompt, Mapping):
        if _present(prompt, "systemPrompt") and not caps.system_prompt.replace:
            refuse(
                "/prompt/systemPrompt",
                "system_prompt_replace_unsupported",
                "the provider cannot replace the harness system prompt; appending instead "
                "would leave the instructions the caller asked to delete in force",
            )
        if _present(prompt, "appendSystemPrompt") and not caps.system_prompt.append:
            refuse(
                "/prompt/appendSystemPrompt",
                "system_prompt_append_unsupported",
                "the provider cannot append to the harness system prompt",
            )
        if _present(prompt, "instructions") and not caps.instructions:
            refuse("/prompt/instructions", "instructions_unsupported", "the provider cannot apply instructions")
    for key, flag in (
        ("tools", caps.tools),
        ("permissions", caps.permissions),
        ("mcp", caps.mcp),
        ("subagents", caps.subagents),
        ("hooks", bool(caps.hooks)),
        ("modes", bool(caps.modes)),
    ):
        if _present(doc, key) and not flag:
            refuse(f"/{key}", f"profile_{key}_unsupported", f"the provider cannot honor profile {key}")
    resources = doc.get("resources")
    if isinstance(resources, Mapping):
        res = caps.resources
        for key, flag in (
            ("files", res.files),
            ("instructions", res.instructions),
            ("tools", bool(res.tools)),
            ("skills", bool(res.skills)),
            ("agents", bool(res.agents)),
            ("commands", bool(res.commands)),
        ):
            if _present(resources, key) and not flag:
                refuse(
                    f"/resources/{key}",
                    f"profile_resources_{key}_unsupported",
                    f"the provider cannot mount {key} resources",
                )
    extensions = doc.get("extensions")
    if isinstance(extensions, Mapping):
        known = set(caps.extensions or ())
        for namespace in extensions:
            if namespace not in known:
                refuse(
                    "/extensions/" + namespace.replace("~", "~0").replace("/", "~1"),
                    "profile_extension_unsupported",
                    "the provider does not understand this extension namespace",
                )
    return tuple(issues)


def require_turn_profile_supported(
    capabilities: AgentEnvironmentCapabilities, turn: AgentTurnInput
) -> None:
    """Refuse a turn whose profile the provider cannot honor, before dispatch."""
    issues = turn_profile_refusals(capabilities, turn.profile)
    if issues:
        raise ContractError(issues, subject="AgentTurnInput")


register_wire_models(
    CreateAgentEnvironmentInput=CreateAgentEnvironmentInput,
    AgentSessionRef=AgentSessionRef,
)
