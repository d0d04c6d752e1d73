"""The provider, environment and session protocols (``environment-provider.ts``,
``provider-adapter.ts``) and the checks that an object's optional methods match its declared
capabilities.

What crosses the protocol is the wire *model*: callers, and the conformance kit, call
``create`` with a :class:`CreateAgentEnvironmentInput` and ``stream``, ``dispatch`` and
``prompt`` with an :class:`AgentTurnInput`. A provider that also wants to accept the wire
mapping (camelCase JSON data) normalizes its argument with :func:`as_create_input` or
:func:`as_turn_input`, which return a model unchanged and parse a mapping strictly.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import (
    TYPE_CHECKING,
    Any,
    Final,
    Literal,
    Protocol,
    runtime_checkable,
)

from agent_interface.environment.capabilities import (
    AgentEnvironmentCapabilities,
    declares_durable_branching,
)
from agent_interface.environment.events import (
    AgentEnvironmentEvent,
    AgentEnvironmentStatus,
)
from agent_interface.environment.workspace import (
    AgentSessionStatus,
)

if TYPE_CHECKING:
    from agent_interface.environment.execution import (
        AgentExecutionInput,
        AgentExecutionResult,
    )
    from agent_interface.profile.provider_config import (
        BackendCapabilities,
        ProviderConfig,
    )
    from agent_interface.runtime.interaction_responses import (
        InteractionAcknowledgement,
        InteractionResponse,
        InteractionResponseCommand,
    )
from agent_interface.provider.turn import (
    AgentEnvironmentCreation,
    AgentTurnInput,
    AgentTurnResult,
    CreateAgentEnvironmentInput,
)

__all__ = [
    "AgentEnvironment",
    "AgentEnvironmentProvider",
    "AgentSession",
    "CapabilitySurfaceIssue",
    "SdkProviderAdapter",
    "as_create_input",
    "as_turn_input",
    "capability_surface_members",
    "check_adapter_surface",
    "check_capability_surface",
    "may_destroy_environment",
]


# ---------------------------------------------------------------------------
# What the protocols carry
# ---------------------------------------------------------------------------


def as_create_input(value: CreateAgentEnvironmentInput | Mapping[str, Any]) -> CreateAgentEnvironmentInput:
    """The create input as its model: a model is returned as it is, a wire mapping is
    parsed strictly (``ContractError`` naming the pointer on bad input)."""
    if isinstance(value, CreateAgentEnvironmentInput):
        return value
    return CreateAgentEnvironmentInput.parse_wire(value)


def as_turn_input(value: AgentTurnInput | Mapping[str, Any]) -> AgentTurnInput:
    """The turn input as its model: a model is returned as it is, a wire mapping is
    parsed strictly (``ContractError`` naming the pointer on bad input)."""
    if isinstance(value, AgentTurnInput):
        return value
    return AgentTurnInput.parse_wire(value)


# ---------------------------------------------------------------------------
# Protocols
# ---------------------------------------------------------------------------


@runtime_checkable
class AgentSession(Protocol):
    """A provider session, as ``AgentEnvironment.session(id)`` returns it. Optional
    methods: ``context_boundary`` and ``continue_native`` (exactly with
    nativeContinuation), ``cancel_run`` (exactly with retainedControl),
    ``respond_to_interaction`` (only with interactions). ``prompt`` receives an
    :class:`AgentTurnInput`."""

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

    ``stream`` (and ``dispatch``) receive an :class:`AgentTurnInput`. Optional members,
    each present exactly when its capability is true (:func:`check_capability_surface`):
    ``dispatch``, ``session``, ``respond_to_interaction``, ``read``, ``write``, ``exec``,
    ``checkpoint``, ``fork``, ``workspace_branching``, ``placement``, ``observe``,
    ``attach_terminal``, ``terminal``, ``start_interactive``, ``interactive``;
    ``refresh`` and ``destroy`` are free. An environment whose capabilities differ from
    its provider's document publishes its own as ``capabilities``.
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
    """A provider. ``create`` receives a :class:`CreateAgentEnvironmentInput` and carries
    the idempotency contract; optional members: ``exact_process`` (exactProcess),
    ``context_transfer`` (contextTransfer), ``validate_profile`` (profile.validation),
    ``get``, ``list``."""

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
    ("dispatch", "/streaming/detach", lambda c: c.streaming.detach, True),
    (
        "session",
        "/streaming/detach|/streaming/replay|/sessions/continue",
        lambda c: c.streaming.detach or c.streaming.replay or c.sessions.continue_,
        True,
    ),
    ("respond_to_interaction", "/interactions", lambda c: c.interactions is not None, True),
    ("read", "/workspace/read", lambda c: c.workspace.read, True),
    ("write", "/workspace/write", lambda c: c.workspace.write, True),
    ("exec", "/workspace/exec", lambda c: c.workspace.exec, True),
    ("checkpoint", "/branching/checkpoint", lambda c: c.branching.checkpoint, True),
    ("fork", "/branching/fork", lambda c: c.branching.fork, True),
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
    # a session may leave answering to its environment's respond_to_interaction
    ("respond_to_interaction", "/interactions", lambda c: c.interactions is not None, False),
    ("context_boundary", "/nativeContinuation", lambda c: c.native_continuation is not None, True),
    ("continue_native", "/nativeContinuation", lambda c: c.native_continuation is not None, True),
    ("cancel_run", "/retainedControl", lambda c: c.retained_control is not None, True),
)

_PROVIDER_RULES: Final[tuple[Rule, ...]] = (
    ("exact_process", "/exactProcess", lambda c: c.exact_process is not None, True),
    ("context_transfer", "/contextTransfer", lambda c: c.context_transfer is not None, True),
    ("validate_profile", "/profile/validation", lambda c: c.profile.validation, False),
)


_RULES: Final[dict[str, tuple[Rule, ...]]] = {
    "provider": _PROVIDER_RULES,
    "environment": _ENVIRONMENT_RULES,
    "session": _SESSION_RULES,
}


def capability_surface_members(kind: Literal["provider", "environment", "session"]) -> tuple[str, ...]:
    """The optional members :func:`check_capability_surface` judges on a ``kind`` object,
    in the order it reports them."""
    return tuple(rule[0] for rule in _RULES[kind])


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

    The environment rules are the reference testkit's: ``dispatch`` exactly with
    ``streaming.detach``; ``session`` exactly with ``streaming.detach``,
    ``streaming.replay`` or ``sessions.continue``; ``read``/``write``/``exec``,
    ``checkpoint``/``fork``, ``placement`` and ``respond_to_interaction`` exactly with
    theirs; ``workspace_branching`` exactly with durable branching. A session has
    ``cancel_run`` exactly with ``retainedControl``, ``context_boundary`` and
    ``continue_native`` exactly with ``nativeContinuation``, and no
    ``respond_to_interaction`` without ``interactions``.
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
    rules = _RULES[kind]
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
    from agent_interface.profile.provider_config import BackendCapabilities

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
