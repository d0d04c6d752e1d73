"""Environment events and native-session identity (``AgentEnvironmentEvent`` of
``environment-runtime.ts``). The observation records of ``environment-observation.ts``
live in :mod:`agent_interface.environment.descriptors` and
:mod:`agent_interface.environment.observation` and are public here too.

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

import importlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Final, Self

from pydantic import model_validator

from agent_interface.core.contract_limits import (
    BoundedIdentifier,
    BoundedJson,
    BoundedJsonRecord,
)
from agent_interface.core.errors import (
    ContractError,
    Refinement,
)
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

if TYPE_CHECKING:
    from agent_interface.environment.descriptors import (
        AgentEnvironmentStatus,
        ComputeBilling,
        EnvironmentLifecycle,
        PlacementDescriptor,
        ProviderIdentity,
        ResourceProfile,
        ResourceUseSample,
        SafeEndpoint,
    )
    from agent_interface.environment.observation import (
        AccountUsage,
        AgentEnvironmentObservation,
        Observation,
        ObservationKnown,
        ObservationProvenance,
        ObservationRedacted,
        ObservationStale,
        ObservationState,
        ObservationUnavailable,
        ObservationUnknown,
        agent_environment_observation_identity_matches,
        assert_observation_credential_free,
        observation_contains_credential,
        observation_of,
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


__all__ += ["turn_usage"]

register_wire_models(AgentEnvironmentEvent=AgentEnvironmentEvent)


# The observation records live in their own light modules (a turn result's events need
# none of them); public here too, imported on first use.
_MOVED: Final = {
    "AgentEnvironmentStatus": "agent_interface.environment.descriptors",
    "ComputeBilling": "agent_interface.environment.descriptors",
    "EnvironmentLifecycle": "agent_interface.environment.descriptors",
    "PlacementDescriptor": "agent_interface.environment.descriptors",
    "ProviderIdentity": "agent_interface.environment.descriptors",
    "ResourceProfile": "agent_interface.environment.descriptors",
    "ResourceUseSample": "agent_interface.environment.descriptors",
    "SafeEndpoint": "agent_interface.environment.descriptors",
    "AccountUsage": "agent_interface.environment.observation",
    "AgentEnvironmentObservation": "agent_interface.environment.observation",
    "Observation": "agent_interface.environment.observation",
    "ObservationKnown": "agent_interface.environment.observation",
    "ObservationProvenance": "agent_interface.environment.observation",
    "ObservationRedacted": "agent_interface.environment.observation",
    "ObservationStale": "agent_interface.environment.observation",
    "ObservationState": "agent_interface.environment.observation",
    "ObservationUnavailable": "agent_interface.environment.observation",
    "ObservationUnknown": "agent_interface.environment.observation",
    "agent_environment_observation_identity_matches": "agent_interface.environment.observation",
    "assert_observation_credential_free": "agent_interface.environment.observation",
    "observation_contains_credential": "agent_interface.environment.observation",
    "observation_of": "agent_interface.environment.observation",
}


def __getattr__(name: str) -> Any:
    module = _MOVED.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
