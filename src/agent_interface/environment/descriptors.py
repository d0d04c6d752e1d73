"""What an environment observation is about (``environment-observation.ts``): the
provider identity, status and lifecycle, a credential-free endpoint, resources, placement
and billing.

A module of its own, importing only the core: validating one of these small records
should not import the runtime event stream that :mod:`agent_interface.environment.events`
embeds, nor complete the observation generics.
"""

from __future__ import annotations

import re
from typing import Annotated, Final, Literal, Self

from pydantic import Field, model_validator

from agent_interface.core.contract_limits import (
    BoundedIdentifier,
    IsoDatetime,
    NonNegativeNumber,
    PositiveSafeInt,
    Utf16Length,
)
from agent_interface.core.errors import Refinement
from agent_interface.core.model import WireModel
from agent_interface.core.numbers import PositiveNumber
from agent_interface.core.registry import register_wire_models

__all__ = [
    "AgentEnvironmentStatus",
    "ComputeBilling",
    "EnvironmentLifecycle",
    "PlacementDescriptor",
    "ProviderIdentity",
    "ResourceProfile",
    "ResourceUseSample",
    "SafeEndpoint",
]

Datetime64 = Annotated[IsoDatetime, Utf16Length(max=64)]


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



register_wire_models(
    ProviderIdentity=ProviderIdentity,
    AgentEnvironmentStatus=AgentEnvironmentStatus,
    EnvironmentLifecycle=EnvironmentLifecycle,
    SafeEndpoint=SafeEndpoint,
    ResourceProfile=ResourceProfile,
    ResourceUseSample=ResourceUseSample,
    PlacementDescriptor=PlacementDescriptor,
    ComputeBilling=ComputeBilling,
)
