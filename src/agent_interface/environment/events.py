"""Environment events, native-session identity, and environment observations
(``AgentEnvironmentEvent`` of ``environment-runtime.ts``; ``environment-observation.ts``).

An :class:`AgentEnvironmentEvent` is one provider event: its native ``type`` and
``data``, optional stable ``id``, the ``normalized`` canonical event, and token
``usage`` with its ``usageMode`` (``delta`` adds, ``cumulative`` replaces the turn
total, absent = unknown semantics; see :mod:`agent_interface.runtime.usage`).

Native identity: only a ``native.session.observed`` event establishes the provider's
conversation identity; a public ``session.updated`` keeps its resume-key meaning and
never does (:func:`native_session_identity`). The execution owner binds the
observation to its execution (:class:`BoundNativeSession`) and keeps it private.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Final, Generic, Literal, Self, TypeVar

from pydantic import Field, model_validator

from agent_interface.core.contract_limits import (
    BoundedIdentifier,
    BoundedJson,
    BoundedJsonRecord,
    IsoDatetime,
    NonNegativeNumber,
    PositiveSafeInt,
    Utf16Length,
)
from agent_interface.core.errors import (
    ContractError,
    Refinement,
)
from agent_interface.core.model import WireModel
from agent_interface.core.numbers import PositiveNumber
from agent_interface.core.registry import register_wire_models
from agent_interface.runtime.events import (
    NativeSessionObservedEvent,
    RuntimeEventEnvelope,
    StreamEvent,
)
from agent_interface.runtime.usage import (
    NullWhenSent,
    TokenUsage,
    TurnUsageTotal,
    UsageModeLiteral,
    aggregate_turn_usage,
)

__all__ = [
    "AccountUsage",
    "AgentEnvironmentEvent",
    "AgentEnvironmentObservation",
    "AgentEnvironmentStatus",
    "BoundNativeSession",
    "ComputeBilling",
    "EnvironmentLifecycle",
    "ModelUsage",
    "Observation",
    "ObservationKnown",
    "ObservationProvenance",
    "ObservationRedacted",
    "ObservationStale",
    "ObservationState",
    "ObservationUnavailable",
    "ObservationUnknown",
    "PlacementDescriptor",
    "ProviderIdentity",
    "ResourceProfile",
    "ResourceUseSample",
    "SafeEndpoint",
    "agent_environment_observation_identity_matches",
    "aggregate_turn_usage",
    "assert_observation_credential_free",
    "bind_native_session",
    "native_session_identity",
    "observation_contains_credential",
    "observation_of",
]

ModelUsage = TokenUsage

# ---------------------------------------------------------------------------
# Environment events
# ---------------------------------------------------------------------------


class AgentEnvironmentEvent(NullWhenSent):
    """One provider event of an environment stream.

    ``usageMode`` describes ``usage`` within one turn and requires it. An explicit
    ``providerEvent: null`` is bounded JSON and is kept.
    """

    wire_nullable: ClassVar[frozenset[str]] = frozenset({"provider_event"})

    type: BoundedIdentifier
    data: BoundedJsonRecord
    id: BoundedIdentifier | None = None
    normalized: StreamEvent | None = None
    usage: TokenUsage | None = None
    usage_mode: UsageModeLiteral | None = None
    provider_event: BoundedJson | None = None

    @model_validator(mode="after")
    def _refine(self) -> Self:
        if self.usage_mode is not None and self.usage is None:
            issues = Refinement("AgentEnvironmentEvent")
            issues.add(("usageMode",), "usage_mode_without_usage", "usageMode requires usage")
            issues.check()
        return self


def turn_usage(events: Iterable[AgentEnvironmentEvent]) -> TurnUsageTotal:
    """The usage total of one turn's events (``None`` usage when unknown)."""
    return aggregate_turn_usage(events)


# ---------------------------------------------------------------------------
# Native session identity
# ---------------------------------------------------------------------------


def _normalized_of(item: Any) -> Any:
    if isinstance(item, AgentEnvironmentEvent):
        return item.normalized
    if isinstance(item, RuntimeEventEnvelope):
        return item.event
    return item


def native_session_identity(events: Iterable[Any]) -> NativeSessionObservedEvent | None:
    """The latest ``native.session.observed`` among ``events`` (stream events, envelopes
    or environment events), else ``None``.

    ``session.updated`` is deliberately ignored: its ``sessionId`` is a resume key, not
    evidence of the provider's conversation identity.
    """
    found: NativeSessionObservedEvent | None = None
    for item in events:
        event = _normalized_of(item)
        if isinstance(event, NativeSessionObservedEvent):
            found = event
    return found


@dataclass(frozen=True, slots=True)
class BoundNativeSession:
    """A native-session observation bound by the execution owner to its execution.

    Private record: it establishes identity only, not that native artifacts were
    captured completely.
    """

    execution_id: str
    session_id: str | None
    provider: str
    native_session_id: str


def bind_native_session(
    observation: NativeSessionObservedEvent,
    *,
    execution_id: str,
    session_id: str | None = None,
    expected_provider: str | None = None,
) -> BoundNativeSession:
    """Bind ``observation`` to the owner's execution; refuse another provider's identity."""
    if expected_provider is not None and observation.provider != expected_provider:
        raise ContractError.single(
            "/provider", "provider_mismatch",
            "native session observation names a different provider than the execution",
        )
    return BoundNativeSession(
        execution_id=execution_id,
        session_id=session_id,
        provider=observation.provider,
        native_session_id=observation.native_session_id,
    )


# ---------------------------------------------------------------------------
# Observations
# ---------------------------------------------------------------------------

ObservationState = Literal["known", "stale", "unavailable", "redacted", "unknown"]

Datetime64 = Annotated[IsoDatetime, Utf16Length(max=64)]
Reason = Annotated[str, Utf16Length(max=16_384, min=1)]

T = TypeVar("T")


class ObservationProvenance(WireModel):
    """Where an observed value came from (measured, reported or estimated), when, and by which
    source."""

    origin: Literal["measured", "reported", "estimated"]
    observed_at: Datetime64
    source: BoundedIdentifier | None = None


class ObservationKnown(WireModel, Generic[T]):
    """An observation with a current value and its provenance."""

    state: Literal["known"]
    value: T
    provenance: ObservationProvenance


class ObservationStale(WireModel, Generic[T]):
    """An observation whose last value is out of date; ``reason`` says why it was not refreshed."""

    state: Literal["stale"]
    value: T
    provenance: ObservationProvenance
    reason: Reason


class ObservationUnavailable(WireModel):
    """An observation the environment cannot make; ``reason`` says why. It never reads as zero."""

    state: Literal["unavailable"]
    reason: Reason


class ObservationRedacted(WireModel):
    """An observation the environment withholds on purpose; ``reason`` says why."""

    state: Literal["redacted"]
    reason: Reason


class ObservationUnknown(WireModel):
    """An observation nobody knows: no value, no reason."""

    state: Literal["unknown"]


def observation_of(value_type: Any) -> Any:
    """``observationOf``: the freshness-tagged union around ``value_type``. A value
    exists only when known or stale, so a missing measurement never reads as zero."""
    return Annotated[
        ObservationKnown[value_type]
        | ObservationStale[value_type]
        | ObservationUnavailable
        | ObservationRedacted
        | ObservationUnknown,
        Field(discriminator="state"),
    ]


Observation = observation_of


class ProviderIdentity(WireModel):
    """Which provider, environment, session and backend an observation is about."""

    provider: BoundedIdentifier
    environment_id: BoundedIdentifier
    session_id: BoundedIdentifier | None = None
    backend: BoundedIdentifier | None = None


AgentEnvironmentStatus = Literal[
    "pending", "provisioning", "running", "stopped", "failed", "expired", "unknown"
]


class _Cleanup(WireModel):
    policy: Literal["manual", "idle", "scheduled", "on-exit"] | None = None
    scheduled_at: Datetime64 | None = None
    confirmed: bool | None = None


class _Continuity(WireModel):
    resumable: bool
    mode: Literal["native", "replayed", "none"] | None = None


class _Persistence(WireModel):
    durable: bool
    scope: Literal["ephemeral", "session", "durable"] | None = None


class EnvironmentLifecycle(WireModel):
    """An environment's status with its cleanup, continuity and persistence, as observed."""

    status: AgentEnvironmentStatus
    cleanup: _Cleanup | None = None
    continuity: _Continuity | None = None
    persistence: _Persistence | None = None


_HOST_FORBIDDEN: Final = re.compile(r"[@/\s]|://", re.ASCII)
_SCHEME_FORBIDDEN: Final = re.compile(r"[@:/\s]", re.ASCII)
# JavaScript's \s also matches these non-ASCII spaces.
_JS_EXTRA_SPACE: Final = re.compile("[\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]")


class SafeEndpoint(WireModel):
    """A credential-free network location: no userinfo, scheme or path in ``host``."""

    scheme: BoundedIdentifier | None = None
    host: BoundedIdentifier
    port: Annotated[PositiveSafeInt, Field(le=65_535)] | None = None
    region: BoundedIdentifier | None = None

    @model_validator(mode="after")
    def _refine(self) -> Self:
        issues = Refinement("SafeEndpoint")
        if _HOST_FORBIDDEN.search(self.host) or _JS_EXTRA_SPACE.search(self.host):
            issues.add(
                ("host",), "endpoint_host",
                "endpoint host must not carry credentials, a scheme, or a path",
            )
        if self.scheme is not None and (
            _SCHEME_FORBIDDEN.search(self.scheme) or _JS_EXTRA_SPACE.search(self.scheme)
        ):
            issues.add(("scheme",), "endpoint_scheme", "endpoint scheme must be a bare protocol name")
        issues.check()
        return self


class _Accelerator(WireModel):
    kind: BoundedIdentifier
    count: PositiveSafeInt
    memory_mb: PositiveSafeInt | None = None


class ResourceProfile(WireModel):
    """The resources an environment was given: CPU, memory and disk in MB, and an optional
    accelerator."""

    cpu: PositiveNumber | None = None
    memory_mb: PositiveSafeInt | None = None
    disk_mb: PositiveSafeInt | None = None
    accelerator: _Accelerator | None = None


class ResourceUseSample(WireModel):
    """One sample of the resources an environment uses: CPU, memory, disk and accelerator memory."""

    cpu: NonNegativeNumber | None = None
    memory_mb: NonNegativeNumber | None = None
    disk_mb: NonNegativeNumber | None = None
    accelerator_memory_mb: NonNegativeNumber | None = None


class PlacementDescriptor(WireModel):
    """Where an environment runs: the kind of placement and its sandbox, fleet, machine and region."""

    kind: Literal["local", "sandbox", "fleet", "provider"]
    sandbox_id: BoundedIdentifier | None = None
    fleet_id: BoundedIdentifier | None = None
    machine_id: BoundedIdentifier | None = None
    region: BoundedIdentifier | None = None


class ComputeBilling(WireModel):
    """What the compute of an environment cost: an amount and its currency."""

    amount: NonNegativeNumber
    currency: BoundedIdentifier


class _Credits(WireModel):
    remaining: NonNegativeNumber
    unit: BoundedIdentifier


class _Quota(WireModel):
    limit: NonNegativeNumber
    used: NonNegativeNumber
    remaining: NonNegativeNumber
    unit: BoundedIdentifier


class _Period(WireModel):
    start: Datetime64
    end: Datetime64


if TYPE_CHECKING:
    _ObservedIdentifier = Any
    _ObservedCredits = Any
    _ObservedQuota = Any
    _ObservedPeriod = Any
    _ObservedPlacement = Any
    _ObservedResourceProfile = Any
    _ObservedResourceUse = Any
    _ObservedProviderIdentity = Any
    _ObservedLifecycle = Any
    _ObservedEndpoint = Any
    _ObservedTokenUsage = Any
    _ObservedBilling = Any
else:
    _ObservedIdentifier = observation_of(BoundedIdentifier)
    _ObservedCredits = observation_of(_Credits)
    _ObservedQuota = observation_of(_Quota)
    _ObservedPeriod = observation_of(_Period)
    _ObservedPlacement = observation_of(PlacementDescriptor)
    _ObservedResourceProfile = observation_of(ResourceProfile)
    _ObservedResourceUse = observation_of(ResourceUseSample)
    _ObservedProviderIdentity = observation_of(ProviderIdentity)
    _ObservedLifecycle = observation_of(EnvironmentLifecycle)
    _ObservedEndpoint = observation_of(SafeEndpoint)
    _ObservedTokenUsage = observation_of(TokenUsage)
    _ObservedBilling = observation_of(ComputeBilling)


class AccountUsage(WireModel):
    """Account-level usage an environment reports: plan, credits, quota and billing period."""

    plan: _ObservedIdentifier | None = None
    credits: _ObservedCredits | None = None
    quota: _ObservedQuota | None = None
    period: _ObservedPeriod | None = None


class _Placement(WireModel):
    requested: PlacementDescriptor | None = None
    verified: _ObservedPlacement | None = None


class _Resources(WireModel):
    requested: ResourceProfile | None = None
    effective: _ObservedResourceProfile | None = None


class _ResourceUse(WireModel):
    current: _ObservedResourceUse | None = None
    peak: _ObservedResourceUse | None = None


class AgentEnvironmentObservation(WireModel):
    """Optional normalized observation of one environment; ``subject`` binds a live
    observation to its replay and every other surface is freshness-tagged."""

    subject: ProviderIdentity
    captured_at: Datetime64
    identity: _ObservedProviderIdentity | None = None
    lifecycle: _ObservedLifecycle | None = None
    endpoint: _ObservedEndpoint | None = None
    placement: _Placement | None = None
    resources: _Resources | None = None
    resource_use: _ResourceUse | None = None
    model_usage: _ObservedTokenUsage | None = None
    compute_billing: _ObservedBilling | None = None
    account_usage: AccountUsage | None = None


def _observed_identity_matches(left: Any, right: Any) -> bool:
    if left is None and right is None:
        return True
    if left is None or right is None or left.state != right.state:
        return False
    left_value = getattr(left, "value", None)
    right_value = getattr(right, "value", None)
    if left_value is None and right_value is None:
        return True
    if left_value is None or right_value is None:
        return False
    left_source = left.provenance.source if hasattr(left, "provenance") else None
    right_source = right.provenance.source if hasattr(right, "provenance") else None
    return bool(left_value == right_value and left_source == right_source)


def agent_environment_observation_identity_matches(live: Any, replay: Any) -> bool:
    """A live observation and its replay name the same subject, observed identity and
    provenance source (times and freshness may differ). Invalid input never matches."""
    try:
        parsed_live = live if isinstance(live, AgentEnvironmentObservation) else AgentEnvironmentObservation.parse_wire(live)
        parsed_replay = replay if isinstance(replay, AgentEnvironmentObservation) else AgentEnvironmentObservation.parse_wire(replay)
    except ContractError:
        return False
    return parsed_live.subject == parsed_replay.subject and _observed_identity_matches(
        parsed_live.identity, parsed_replay.identity
    )


# JavaScript's \s: ASCII whitespace plus the Unicode space separators, line/paragraph
# separators and U+FEFF (Python's own \s differs in both directions).
_JS_WHITESPACE: Final = "\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_USERINFO_URL: Final = re.compile(
    r"[a-z][a-z0-9+.-]*://[^/@" + _JS_WHITESPACE + r"]*@", re.IGNORECASE | re.ASCII
)
_CREDENTIAL_WORDS: Final = frozenset(
    {
        "token", "secret", "secrets", "password", "passwd", "passphrase",
        "credential", "credentials", "authorization", "bearer", "key", "keys",
    }
)


def _key_words(key: str) -> list[str]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", key)
    return [word.lower() for word in re.split(r"[^a-zA-Z0-9]+", spaced) if word]


def observation_contains_credential(value: Any) -> bool:
    """Whether a payload carries a credential: a secret-shaped key (whole words, so
    ``inputTokens`` is fine but ``accessToken`` is not) or a URL with userinfo."""
    if isinstance(value, WireModel):
        value = value.to_wire()
    pending: list[Any] = [value]
    seen: set[int] = set()
    while pending:
        current = pending.pop()
        if isinstance(current, str):
            if _USERINFO_URL.search(current):
                return True
            continue
        if not isinstance(current, (dict, list, tuple)):
            continue
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, (list, tuple)):
            pending.extend(current)
            continue
        for key, entry in current.items():
            if any(word in _CREDENTIAL_WORDS for word in _key_words(str(key))):
                return True
            pending.append(entry)
    return False


def assert_observation_credential_free(value: Any) -> None:
    """Refuse (``ContractError`` ``observation_credential``) an observation payload holding a
    credential-like key or value."""
    if observation_contains_credential(value):
        raise ContractError.single(
            "", "observation_credential", "observation payload must not carry a credential"
        )


__all__ += ["turn_usage"]

register_wire_models(
    AgentEnvironmentEvent=AgentEnvironmentEvent,
    ObservationState=ObservationState,
    ObservationProvenance=ObservationProvenance,
    ProviderIdentity=ProviderIdentity,
    AgentEnvironmentStatus=AgentEnvironmentStatus,
    EnvironmentLifecycle=EnvironmentLifecycle,
    SafeEndpoint=SafeEndpoint,
    ResourceProfile=ResourceProfile,
    ResourceUseSample=ResourceUseSample,
    PlacementDescriptor=PlacementDescriptor,
    ComputeBilling=ComputeBilling,
    AccountUsage=AccountUsage,
    AgentEnvironmentObservation=AgentEnvironmentObservation,
)

