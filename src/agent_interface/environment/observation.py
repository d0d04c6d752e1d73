"""Environment observations (``environment-observation.ts``): freshness-tagged values
(``observation_of``), account usage, the observation document itself, and the checks that
keep credentials out of it.

Separate from :mod:`agent_interface.environment.events` so that validating an
observation does not import the runtime event stream.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated, Any, Final, Generic, Literal, TypeVar

from pydantic import Field

from agent_interface.core.contract_limits import (
    BoundedIdentifier,
    NonNegativeNumber,
    Utf16Length,
)
from agent_interface.core.errors import ContractError
from agent_interface.core.model import WireModel
from agent_interface.core.registry import register_wire_models
from agent_interface.environment.descriptors import (
    ComputeBilling,
    Datetime64,
    EnvironmentLifecycle,
    PlacementDescriptor,
    ProviderIdentity,
    ResourceProfile,
    ResourceUseSample,
    SafeEndpoint,
)
from agent_interface.runtime.usage import TokenUsage

__all__ = [
    "AccountUsage",
    "AgentEnvironmentObservation",
    "Observation",
    "ObservationKnown",
    "ObservationProvenance",
    "ObservationRedacted",
    "ObservationStale",
    "ObservationState",
    "ObservationUnavailable",
    "ObservationUnknown",
    "agent_environment_observation_identity_matches",
    "assert_observation_credential_free",
    "observation_contains_credential",
    "observation_of",
]

ObservationState = Literal["known", "stale", "unavailable", "redacted", "unknown"]

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


register_wire_models(
    ObservationState=ObservationState,
    ObservationProvenance=ObservationProvenance,
    AccountUsage=AccountUsage,
    AgentEnvironmentObservation=AgentEnvironmentObservation,
)
