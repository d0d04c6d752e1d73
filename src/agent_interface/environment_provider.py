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
  :func:`create_agent_environment_with_idempotency`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import (
    TYPE_CHECKING,
    Annotated,
    Any,
    Final,
    Generic,
    Literal,
    Protocol,
    TypeVar,
    runtime_checkable,
)

from pydantic import Discriminator, Field, Tag

from ._model import FrozenDict, JsonValue, WireList, WireMap, WireModel, thaw, wire_adapter
from .canonical import MAX_SAFE_INTEGER, canonical_digest
from .capabilities import (
    AgentEnvironmentCapabilities,
    WorkspaceCapabilities,
    declares_durable_branching,
)
from .context_transfer import ContextTransferReceipt, ContextTransferRequest
from .contract_limits import (
    CONTRACT_MAX_ARRAY_LENGTH,
    BoundedIdentifier,
    BoundedJsonRecord,
    BoundedString,
    GreaterThanZeroSafeInt,
)
from .environment_events import AgentEnvironmentEvent, AgentEnvironmentStatus
from .errors import ContractError, ContractIssue
from .interactions import RequestedInteractions
from .native_continuation import NativeContextContinuationRequest
from .parts import InputPart
from .profile import AgentProfile
from .registry import register_wire_models
from .runtime_control import AgentRunControlRef
from .usage import TokenUsage
from .workspace import (
    AgentSessionStatus,
    ExecRequest,
    ExecResult,
    ResourceRequest,
    WorkspaceRequest,
)

if TYPE_CHECKING:
    from .execution import AgentExecutionInput, AgentExecutionResult
    from .interactions import (
        InteractionAcknowledgement,
        InteractionResponse,
        InteractionResponseCommand,
    )
    from .provider_config import BackendCapabilities, ProviderConfig

__all__ = [
    "AGENT_ENVIRONMENT_CREATE_DIGEST_KIND",
    "AgentEnvironment",
    "AgentEnvironmentCreateIdempotencyRecord",
    "AgentEnvironmentCreation",
    "AgentEnvironmentProvider",
    "AgentProfileRef",
    "AgentSession",
    "AgentSessionRef",
    "AgentTurnInput",
    "AgentTurnResult",
    "CapabilitySurfaceIssue",
    "CreateAgentEnvironmentInput",
    "SdkProviderAdapter",
    "agent_environment_create_input_digest",
    "check_adapter_surface",
    "check_capability_surface",
    "command_turn_events",
    "create_agent_environment_with_idempotency",
    "detached_metadata",
    "exec_only_environment_capabilities",
    "exec_result_from_unknown",
    "may_destroy_environment",
    "replayed_agent_environment_view",
    "require_turn_profile_supported",
    "turn_profile_refusals",
]

AGENT_ENVIRONMENT_CREATE_DIGEST_KIND: Final = "agent-environment-create.v1"

AgentEnvironmentCreation = Literal["created", "replayed"]
"""What one create call did: provisioned (``created``) or matched a key (``replayed``).

Absent when the provider cannot prove either; a consumer never destroys an
environment whose creation it cannot prove, because another caller can hold it.
"""


# ---------------------------------------------------------------------------
# Wire models
# ---------------------------------------------------------------------------

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


class AgentTurnInput(WireModel):
    """One turn sent to an environment or session (``AgentTurnInputSchema``).

    ``profile`` is the exact :class:`~agent_interface.profile.AgentProfile` for the
    turn, validated by its canonical schema and kept apart from the bounded
    ``providerOptions``; a provider honors it or refuses before dispatch
    (:func:`require_turn_profile_supported`). ``interactions`` is the per-turn
    posture: omitted leaves provider defaults, ``{}`` enables no kind.
    """

    prompt: BoundedString | None = None
    parts: Annotated[WireList[InputPart], Field(max_length=CONTRACT_MAX_ARRAY_LENGTH)] | None = None
    session_id: BoundedIdentifier | None = None
    model: BoundedIdentifier | None = None
    timeout_ms: GreaterThanZeroSafeInt | None = None
    execution_id: BoundedIdentifier | None = None
    last_event_id: BoundedIdentifier | None = None
    turn_id: BoundedIdentifier | None = None
    detach: bool | None = None
    control_ref: AgentRunControlRef | None = None
    context_transfer: ContextTransferRequest | None = None
    native_continuation: NativeContextContinuationRequest | None = None
    context: BoundedJsonRecord | None = None
    interactions: RequestedInteractions | None = None
    signal: JsonValue = Field(default=None, repr=False)
    """Wire parity only: the reference accepts any value here (its abort signal is
    unchecked, and ``JSON.stringify`` writes one as ``{}``). It cancels nothing; a
    Python caller cancels the awaiting task."""
    profile: AgentProfile | None = None
    provider_options: BoundedJsonRecord | None = None


class AgentTurnResult(WireModel):
    """The result of one turn (``AgentTurnResultSchema``)."""

    text: BoundedString
    success: bool
    error: BoundedString | None = None
    session_id: BoundedIdentifier | None = None
    usage: TokenUsage | None = None
    metadata: BoundedJsonRecord | None = None
    events: (
        Annotated[WireList[AgentEnvironmentEvent], Field(max_length=CONTRACT_MAX_ARRAY_LENGTH)]
        | None
    ) = None
    context_transfer_receipt: ContextTransferReceipt | None = None


class AgentSessionRef(WireModel):
    id: BoundedIdentifier
    provider: BoundedIdentifier | None = None
    control_ref: AgentRunControlRef | None = None
    context_transfer_receipt: ContextTransferReceipt | None = None
    metadata: BoundedJsonRecord | None = None


# ---------------------------------------------------------------------------
# Metadata snapshots
# ---------------------------------------------------------------------------


def detached_metadata(value: Mapping[str, Any] | None) -> FrozenDict[str, Any] | None:
    """A detached, deeply immutable copy of environment metadata.

    Mutating the mapping the caller passed, or trying to mutate the returned one,
    changes nothing stored. The value must be bounded JSON; metadata may hold
    caller-authored annotations and proves neither authorization nor authorship.
    """
    if value is None:
        return None
    frozen: FrozenDict[str, Any] = wire_adapter(BoundedJsonRecord, "metadata").parse(
        thaw(value)
    )
    return frozen


# ---------------------------------------------------------------------------
# Idempotent creation
# ---------------------------------------------------------------------------


def agent_environment_create_input_digest(
    value: CreateAgentEnvironmentInput | Mapping[str, Any],
) -> str:
    """Canonical identity of a create: every field except ``idempotencyKey`` and ``signal``.

    RFC 8785 over ``{"kind": "agent-environment-create.v1", "input": <fields>}``. A
    mapping is hashed as given (byte-identical to the reference for the same JSON); a
    model is hashed in its validated wire form.
    """
    if isinstance(value, WireModel):
        wire: dict[str, Any] = value.to_wire()
    else:
        wire = thaw(dict(value))
    material = {k: v for k, v in wire.items() if k not in ("idempotencyKey", "signal")}
    return canonical_digest({"kind": AGENT_ENVIRONMENT_CREATE_DIGEST_KIND, "input": material})


E = TypeVar("E")


@dataclass
class AgentEnvironmentCreateIdempotencyRecord(Generic[E]):
    """What one provider adapter holds per idempotency key."""

    digest: str
    pending: asyncio.Future[E]
    environment: E | None = field(default=None)


class _ReplayedView:
    """A per-call view of one environment that a same-key create replayed.

    Every attribute and method is the environment's own (operations act on the one
    environment); only ``creation`` reads ``"replayed"``.
    """

    __slots__ = ("_environment",)

    def __init__(self, environment: object) -> None:
        object.__setattr__(self, "_environment", environment)

    @property
    def creation(self) -> AgentEnvironmentCreation:
        return "replayed"

    def __getattr__(self, name: str) -> Any:
        return getattr(object.__getattribute__(self, "_environment"), name)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("a replayed environment view is read-only")

    def __repr__(self) -> str:
        inner = object.__getattribute__(self, "_environment")
        return f"<replayed view of {getattr(inner, 'id', '?')!r}>"


def replayed_agent_environment_view(environment: E) -> E:
    """The environment as seen by a same-key create that provisioned nothing."""
    if isinstance(environment, _ReplayedView):
        return environment
    view: Any = _ReplayedView(environment)
    return view  # type: ignore[no-any-return]


_NO_KEY: Final = object()


def _key_of(value: CreateAgentEnvironmentInput | Mapping[str, Any]) -> Any:
    """The idempotency key, or ``_NO_KEY``. A mapping's key is whatever it holds,
    as in the reference (only an absent key means unkeyed)."""
    if isinstance(value, CreateAgentEnvironmentInput):
        return _NO_KEY if value.idempotency_key is None else value.idempotency_key
    if "idempotencyKey" not in value:
        return _NO_KEY
    key = value["idempotencyKey"]
    try:
        hash(key)
    except TypeError:
        raise ContractError.single(
            "/idempotencyKey", "idempotency_key_invalid", "an idempotency key must be a string"
        ) from None
    return key


async def create_agent_environment_with_idempotency(
    records: MutableMapping[str, AgentEnvironmentCreateIdempotencyRecord[E]],
    value: CreateAgentEnvironmentInput | Mapping[str, Any],
    create: Callable[[], Awaitable[E]],
) -> E:
    """Apply the keyed create contract inside one provider adapter.

    * No key: ``create()`` runs and its result is returned as the provider stated it.
    * New key: ``create()`` runs once; concurrent same-key callers wait for that one
      effect and each receive a replayed view.
    * Known key, same digest: a replayed view of the same environment, no effect.
    * Known key, another digest: :class:`ContractError` (``idempotency_conflict``)
      before any create effect.

    A failed create forgets the key so a retry can provision again. A waiter that is
    cancelled does not cancel the shared create.
    """
    key = _key_of(value)
    if key is _NO_KEY:
        return await create()
    digest = agent_environment_create_input_digest(value)
    existing = records.get(key)
    if existing is not None:
        if existing.digest != digest:
            raise ContractError.single(
                "/idempotencyKey",
                "idempotency_conflict",
                "agent environment create idempotency key conflicts with a different create input",
            )
        environment = existing.environment
        if environment is None:
            environment = await asyncio.shield(existing.pending)
        return replayed_agent_environment_view(environment)

    async def run() -> E:
        return await create()

    task: asyncio.Future[E] = asyncio.ensure_future(run())
    record = AgentEnvironmentCreateIdempotencyRecord(digest=digest, pending=task)
    records[key] = record

    def settle(done: asyncio.Future[E]) -> None:
        failed = done.cancelled() or done.exception() is not None
        if records.get(key) is record:
            if failed:
                del records[key]
            else:
                record.environment = done.result()

    task.add_done_callback(settle)
    return await asyncio.shield(task)


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


# ---------------------------------------------------------------------------
# Command turns (``environment-command-turn.ts``)
# ---------------------------------------------------------------------------


M = TypeVar("M", bound=WireModel)


def _present_only(model: type[M], **fields: Any) -> M:
    """Build ``model`` from the fields that have a value (``None`` means absent)."""
    return model(**{name: value for name, value in fields.items() if value is not None})


def _string_option(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _finite_number(value: Any) -> int | float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return None
    return value


def exec_result_from_unknown(value: Any, source: str) -> ExecResult:
    """Read a sandbox SDK's command answer as :class:`ExecResult`.

    The exit status comes from ``exitCode`` or ``code``, output from ``stdout`` or
    ``output``, errors from ``stderr`` or ``error``. An answer with no finite exit
    status is refused (``exec_exit_status_missing``): reading it as 0 would report a
    command nobody watched as one that succeeded.
    """
    record: Mapping[str, Any] = value if isinstance(value, Mapping) else {}
    exit_code = _finite_number(record.get("exitCode"))
    if exit_code is None:
        exit_code = _finite_number(record.get("code"))
    if exit_code is None:
        raise ContractError.single(
            "/exitCode",
            "exec_exit_status_missing",
            f"{source} returned no exit status: a command result must carry a finite exitCode or code",
        )
    if isinstance(exit_code, float):
        if not exit_code.is_integer():
            raise ContractError.single("/exitCode", "exec_exit_status_integer", f"{source} returned a fractional exit status")
        exit_code = int(exit_code)
    if not -MAX_SAFE_INTEGER <= exit_code <= MAX_SAFE_INTEGER:
        raise ContractError.single(
            "/exitCode", "exec_exit_status_integer", f"{source} returned an exit status beyond the safe integer range"
        )

    def text(primary: str, secondary: str) -> str:
        for key in (primary, secondary):
            found = record.get(key)
            if isinstance(found, str):
                return found
        return ""

    return ExecResult(exit_code=exit_code, stdout=text("stdout", "output"), stderr=text("stderr", "error"))


TurnCommand = Callable[[AgentTurnInput, Any], "str | Awaitable[str | None] | None"]


async def command_turn_events(
    input: AgentTurnInput,
    environment: Any,
    provider_label: str,
    turn_command: TurnCommand | None = None,
) -> AsyncIterator[AgentEnvironmentEvent]:
    """Run one turn as a single ``exec`` command and yield its two events.

    The command is the caller's ``turn_command``, then ``providerOptions.command``,
    then ``providerOptions.agentCommand``, then the prompt; with none of them the turn
    is refused (``command_turn_missing``) before anything runs. A string answered by
    ``turn_command`` is final, even an empty one (refused); only ``None`` falls through.
    """
    command: str | None = None
    if turn_command is not None:
        chosen = turn_command(input, environment)
        command = chosen if chosen is None or isinstance(chosen, str) else await chosen
    options: Mapping[str, Any] = input.provider_options or {}
    if command is None:
        # A caller's command, even an empty one, is final; only None falls through.
        command = (
            _string_option(options.get("command"))
            or _string_option(options.get("agentCommand"))
            or input.prompt
        )
    if not command:
        raise ContractError.single(
            "",
            "command_turn_missing",
            f"{provider_label} provider requires turnCommand, providerOptions.command, or prompt",
        )
    exec_ = getattr(environment, "exec", None)
    result: ExecResult | None = None
    if exec_ is not None:
        result = await exec_(
            command,
            _present_only(ExecRequest, cwd=_string_option(options.get("cwd")), timeout_ms=input.timeout_ms),
        )
    text = result.stdout if result is not None else ""
    yield AgentEnvironmentEvent(type="message.part.updated", data={"delta": text})
    yield AgentEnvironmentEvent(
        type="result",
        data={
            "finalText": text,
            "status": "completed" if result is not None and result.exit_code == 0 else "failed",
            "exitCode": result.exit_code if result is not None else 1,
            "stderr": result.stderr if result is not None else "",
        },
    )


def exec_only_environment_capabilities(
    workspace: WorkspaceCapabilities | Mapping[str, Any],
) -> AgentEnvironmentCapabilities:
    """The capability document of a provider whose only surface is a workspace.

    No profile, stream, session or branching surface is claimed; ``placement`` is
    true and the caller states its own workspace facts.
    """
    workspace_wire = workspace.to_wire() if isinstance(workspace, WireModel) else thaw(dict(workspace))
    return AgentEnvironmentCapabilities.parse_wire(
        {
            "profile": {
                "namedProfiles": False,
                "systemPrompt": {"replace": False, "append": False},
                "instructions": False,
                "tools": False,
                "permissions": False,
                "mcp": False,
                "subagents": False,
                "resources": {
                    "files": True,
                    "instructions": False,
                    "tools": False,
                    "skills": False,
                    "agents": False,
                    "commands": False,
                },
                "hooks": False,
                "modes": False,
                "runtimeUpdate": False,
                "validation": False,
            },
            "streaming": {"live": False, "replay": False, "detach": False, "turnIdempotency": False},
            "sessions": {"continue": False, "list": False, "messages": False},
            "workspace": workspace_wire,
            "branching": {"checkpoint": False, "fork": False},
            "placement": True,
            "usage": False,
            "confidential": False,
        }
    )


# ---------------------------------------------------------------------------
# Protocols
# ---------------------------------------------------------------------------


@runtime_checkable
class AgentSession(Protocol):
    """A provider session. Optional methods (present only when declared):
    ``respond_to_interaction`` (interactions), ``context_boundary`` and
    ``continue_native`` (nativeContinuation), ``cancel_run`` (retainedControl)."""

    @property
    def id(self) -> str: ...

    async def status(self) -> AgentSessionStatus | None: ...

    def events(
        self, *, since: str | None = None, execution_id: str | None = None
    ) -> AsyncIterator[AgentEnvironmentEvent]: ...

    async def result(self) -> AgentTurnResult: ...

    async def prompt(self, input: AgentTurnInput) -> AgentTurnResult: ...

    async def cancel(self) -> None: ...


@runtime_checkable
class AgentEnvironment(Protocol):
    """One environment. ``metadata`` is a detached, deeply immutable snapshot;
    ``creation`` is the verdict of the create call that returned this object.

    Optional members, each present only when its capability is true: ``dispatch``,
    ``session``, ``respond_to_interaction``, ``read``, ``write``, ``exec``,
    ``checkpoint``, ``fork``, ``workspace_branching``, ``placement``, ``observe``,
    ``attach_terminal``, ``terminal``, ``start_interactive``, ``interactive``;
    ``refresh`` and ``destroy`` are free.
    """

    @property
    def id(self) -> str: ...

    @property
    def provider(self) -> str: ...

    @property
    def creation(self) -> AgentEnvironmentCreation | None: ...

    @property
    def metadata(self) -> Mapping[str, Any] | None: ...

    async def status(self) -> AgentEnvironmentStatus: ...

    def stream(self, input: AgentTurnInput) -> AsyncIterator[AgentEnvironmentEvent]: ...


@runtime_checkable
class AgentEnvironmentProvider(Protocol):
    """A provider. ``create`` carries the idempotency contract; optional members:
    ``exact_process`` (exactProcess), ``context_transfer`` (contextTransfer),
    ``validate_profile`` (profile.validation), ``get``, ``list``."""

    @property
    def name(self) -> str: ...

    async def capabilities(self) -> AgentEnvironmentCapabilities: ...

    async def create(self, input: CreateAgentEnvironmentInput) -> AgentEnvironment: ...


@runtime_checkable
class SdkProviderAdapter(Protocol):
    """The legacy adapter surface. ``respond_to_interaction(response)`` stays
    source-compatible; new adapters add ``respond_to_interaction_command(command)``
    for exact binding and a durable acknowledgement."""

    @property
    def provider(self) -> str: ...

    def get_capabilities(self) -> BackendCapabilities: ...

    async def initialize(self, config: ProviderConfig) -> None: ...

    async def execute(
        self,
        input: AgentExecutionInput,
        services: Any,
        on_event: Callable[[Any], None] | None = None,
    ) -> AgentExecutionResult: ...

    async def shutdown(self) -> None: ...

    async def health_check(self) -> bool: ...


class _LegacyInteractionMethods(Protocol):  # documentation of the optional pair
    async def respond_to_interaction(self, response: InteractionResponse) -> None: ...

    async def respond_to_interaction_command(
        self, command: InteractionResponseCommand
    ) -> InteractionAcknowledgement: ...


# ---------------------------------------------------------------------------
# Capability surface check
# ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CapabilitySurfaceIssue:
    """One optional member whose presence disagrees with the capability document."""

    member: str
    capability: str
    code: Literal["exposed_without_capability", "missing_declared_capability"]
    message: str

    def __str__(self) -> str:
        return f"{self.member}: {self.message} [{self.code}]"


Rule = tuple[str, str, Callable[[AgentEnvironmentCapabilities], bool], bool]
"""(member, capability pointer, is-declared predicate, missing-is-an-error)."""

_ENVIRONMENT_RULES: Final[tuple[Rule, ...]] = (
    ("dispatch", "/streaming/detach", lambda c: c.streaming.detach, False),
    ("session", "/sessions/continue", lambda c: c.sessions.continue_, False),
    ("respond_to_interaction", "/interactions", lambda c: c.interactions is not None, True),
    ("read", "/workspace/read", lambda c: c.workspace.read, True),
    ("write", "/workspace/write", lambda c: c.workspace.write, True),
    ("exec", "/workspace/exec", lambda c: c.workspace.exec, True),
    ("checkpoint", "/branching/checkpoint", lambda c: c.branching.checkpoint, False),
    ("fork", "/branching/fork", lambda c: c.branching.fork, False),
    ("workspace_branching", "/branching", declares_durable_branching, True),
    ("placement", "/placement", lambda c: c.placement, True),
    ("observe", "/observation", lambda c: c.observation is not None, True),
    (
        "attach_terminal",
        "/interactiveTerminal/attach",
        lambda c: c.interactive_terminal is not None and c.interactive_terminal.attach,
        True,
    ),
    (
        "terminal",
        "/interactiveTerminal/attach",
        lambda c: c.interactive_terminal is not None and c.interactive_terminal.attach,
        True,
    ),
    (
        "start_interactive",
        "/interactiveAgent/start",
        lambda c: c.interactive_agent is not None and c.interactive_agent.start,
        True,
    ),
    (
        "interactive",
        "/interactiveAgent/start",
        lambda c: c.interactive_agent is not None and c.interactive_agent.start,
        True,
    ),
)

_SESSION_RULES: Final[tuple[Rule, ...]] = (
    ("respond_to_interaction", "/interactions", lambda c: c.interactions is not None, True),
    ("context_boundary", "/nativeContinuation", lambda c: c.native_continuation is not None, True),
    ("continue_native", "/nativeContinuation", lambda c: c.native_continuation is not None, True),
    ("cancel_run", "/retainedControl", lambda c: c.retained_control is not None, True),
)

_PROVIDER_RULES: Final[tuple[Rule, ...]] = (
    ("exact_process", "/exactProcess", lambda c: c.exact_process is not None, True),
    ("context_transfer", "/contextTransfer", lambda c: c.context_transfer is not None, True),
    ("validate_profile", "/profile/validation", lambda c: c.profile.validation, False),
)


def _has_member(obj: object, name: str) -> bool:
    try:
        return getattr(obj, name, None) is not None
    except Exception:  # a property that raises is not a usable member
        return False


def check_capability_surface(
    obj: object,
    capabilities: AgentEnvironmentCapabilities | Mapping[str, Any],
    *,
    kind: Literal["provider", "environment", "session"] | None = None,
) -> tuple[CapabilitySurfaceIssue, ...]:
    """Every optional member of ``obj`` that disagrees with ``capabilities``.

    Reports each member present while its capability is false
    (``exposed_without_capability``), and each member missing while a capability that
    names exactly that member is true (``missing_declared_capability``). ``kind`` is
    inferred: ``create`` means a provider, ``stream`` an environment, ``prompt`` a session.
    """
    if not isinstance(capabilities, AgentEnvironmentCapabilities):
        capabilities = AgentEnvironmentCapabilities.parse_wire(capabilities)
    if kind is None:
        if _has_member(obj, "create"):
            kind = "provider"
        elif _has_member(obj, "stream"):
            kind = "environment"
        else:
            kind = "session"
    rules = {
        "provider": _PROVIDER_RULES,
        "environment": _ENVIRONMENT_RULES,
        "session": _SESSION_RULES,
    }[kind]
    issues: list[CapabilitySurfaceIssue] = []
    for member, pointer, declared, strict in rules:
        present = _has_member(obj, member)
        allowed = declared(capabilities)
        if present and not allowed:
            issues.append(
                CapabilitySurfaceIssue(
                    member, pointer, "exposed_without_capability",
                    f"{kind} exposes {member} while {pointer} is not declared",
                )
            )
        elif strict and allowed and not present:
            issues.append(
                CapabilitySurfaceIssue(
                    member, pointer, "missing_declared_capability",
                    f"{kind} declares {pointer} but has no {member}",
                )
            )
    return tuple(issues)


def check_adapter_surface(
    adapter: object, capabilities: BackendCapabilities | Mapping[str, Any]
) -> tuple[CapabilitySurfaceIssue, ...]:
    """The legacy adapter rule: interaction answers only when ``interactions`` is non-empty.

    ``respond_to_interaction`` (legacy) and ``respond_to_interaction_command`` (exact
    binding) are both reported when present while the adapter declares no interaction
    kind; declaring kinds with neither method is ``missing_declared_capability``.
    """
    from .provider_config import BackendCapabilities

    if not isinstance(capabilities, BackendCapabilities):
        capabilities = BackendCapabilities.parse_wire(capabilities)
    declared = bool(capabilities.interactions)
    members = ("respond_to_interaction", "respond_to_interaction_command")
    present = [member for member in members if _has_member(adapter, member)]
    if not declared:
        return tuple(
            CapabilitySurfaceIssue(
                member, "/interactions", "exposed_without_capability",
                f"adapter exposes {member} while /interactions declares no kind",
            )
            for member in present
        )
    if not present:
        return (
            CapabilitySurfaceIssue(
                "respond_to_interaction_command", "/interactions", "missing_declared_capability",
                "adapter declares interaction kinds but cannot answer them",
            ),
        )
    return ()


def may_destroy_environment(environment: object) -> bool:
    """Whether a consumer may destroy ``environment`` as its own: only when this call's
    create verdict is ``created``. An absent or ``replayed`` verdict means another
    caller can hold it, so the consumer fails closed."""
    return getattr(environment, "creation", None) == "created"


register_wire_models(
    AgentEnvironmentCreation=AgentEnvironmentCreation,
    CreateAgentEnvironmentInput=CreateAgentEnvironmentInput,
    AgentTurnInput=AgentTurnInput,
    AgentTurnResult=AgentTurnResult,
    AgentSessionRef=AgentSessionRef,
)
