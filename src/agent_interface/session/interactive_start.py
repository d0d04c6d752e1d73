"""Starting one native coding-agent TUI from exact caller-owned material
(``environment-interactive-start.ts``).

The run reference of an interactive start is derived from the request: its
``requestDigest`` covers the run coordinates, the requested profile digest, the initial
prompt, cwd and geometry (:func:`agent_interactive_session_request_digest`), and its
``runId`` is ``interactive-run-<hex of that digest>``
(:func:`agent_interactive_session_run_ref`). Replaying the same start therefore names
the same run, even after the process exited, and changed material cannot reuse it.
:func:`exact_agent_interactive_session_start` proves a start before any provider work;
:func:`agent_interactive_session_ref_matches_start` proves the provider answered it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import Field

from agent_interface.core.canonical import Sha256Digest, canonical_digest
from agent_interface.core.contract_limits import BoundedIdentifier, BoundedString, Utf16Length
from agent_interface.core.errors import ContractError
from agent_interface.core.model import WireModel
from agent_interface.core.registry import register_wire_models
from agent_interface.profile.agent_profile import AgentProfile
from agent_interface.profile.canonical import canonical_agent_profile_digest
from agent_interface.runtime.control_ref import AgentExactRunControlRef
from agent_interface.session.interactive_control import AgentInteractiveSessionRef
from agent_interface.session.interactive_shared import (
    AgentInteractiveDimension,
    same_agent_exact_run,
    wire_of,
)

__all__ = [
    "AgentInteractiveSessionRunCoordinates",
    "AgentInteractiveSessionStart",
    "AgentInteractiveSessionStartInput",
    "agent_interactive_session_ref_matches_start",
    "agent_interactive_session_request_digest",
    "agent_interactive_session_run_ref",
    "exact_agent_interactive_session_start",
]

NonEmptyBoundedString = Annotated[BoundedString, Utf16Length(min=1)]


class AgentInteractiveSessionRunCoordinates(WireModel):
    """Where the TUI runs: the run reference without its derived id and digest."""

    provider: BoundedIdentifier
    environment_id: BoundedIdentifier
    session_id: BoundedIdentifier
    execution_id: BoundedIdentifier


class AgentInteractiveSessionStartInput(WireModel):
    """A start request without its run reference."""

    profile: AgentProfile
    requested_profile_digest: Sha256Digest
    initial_prompt: BoundedString | None = Field(default=None, repr=False)
    cwd: NonEmptyBoundedString | None = None
    cols: AgentInteractiveDimension | None = None
    rows: AgentInteractiveDimension | None = None


class AgentInteractiveSessionStart(AgentInteractiveSessionStartInput):
    """Start one TUI for an exact run from an exact profile. The provider materializes the
    profile and returns its preparation receipt in the resulting reference."""

    run: AgentExactRunControlRef


def _coordinates(value: Any) -> AgentInteractiveSessionRunCoordinates:
    if isinstance(value, AgentInteractiveSessionRunCoordinates):
        return value
    return AgentInteractiveSessionRunCoordinates.parse_wire(wire_of(value))


def _input(value: Any) -> AgentInteractiveSessionStartInput:
    if type(value) is AgentInteractiveSessionStartInput:
        return value
    wire = wire_of(value)
    if isinstance(value, AgentInteractiveSessionStart) and isinstance(wire, Mapping):
        wire = {key: item for key, item in wire.items() if key != "run"}
    return AgentInteractiveSessionStartInput.parse_wire(wire)


def agent_interactive_session_request_digest(coordinates: Any, input: Any) -> str:
    """Digest of the exact process-start request, independent of its derived run id. The
    profile enters through ``requestedProfileDigest``. Refuses invalid material."""
    where = _coordinates(coordinates)
    exact = _input(input)
    material: dict[str, Any] = {
        "kind": "agent-interactive-session-start.v1",
        "run": where.to_wire(),
        "requestedProfileDigest": exact.requested_profile_digest,
    }
    for key in ("initialPrompt", "cwd", "cols", "rows"):
        value = getattr(exact, {"initialPrompt": "initial_prompt"}.get(key, key))
        if value is not None:
            material[key] = value
    return canonical_digest(material)


def agent_interactive_session_run_ref(coordinates: Any, input: Any) -> AgentExactRunControlRef:
    """The one exact run reference a provider must acknowledge for this start."""
    where = _coordinates(coordinates)
    digest = agent_interactive_session_request_digest(where, input)
    return AgentExactRunControlRef.parse_wire(
        {**where.to_wire(), "runId": "interactive-run-" + digest.removeprefix("sha256:"), "requestDigest": digest}
    )


def _start(value: Any) -> AgentInteractiveSessionStart:
    if isinstance(value, AgentInteractiveSessionStart):
        return value
    return AgentInteractiveSessionStart.parse_wire(wire_of(value))


def exact_agent_interactive_session_start(value: Any) -> AgentInteractiveSessionStart:
    """Validate a start and prove its identity before any provider work: the profile names
    a harness, ``requestedProfileDigest`` is the profile's canonical digest, and the run is
    the one derived from the request. Refuses with ``ContractError`` otherwise."""
    start = _start(value)
    if start.profile.harness is None:
        raise ContractError.single(
            "/profile/harness", "interactive_profile_harness_missing", "interactive agent sessions require AgentProfile.harness"
        )
    if canonical_agent_profile_digest(start.profile) != start.requested_profile_digest:
        raise ContractError.single(
            "/requestedProfileDigest",
            "interactive_profile_digest_mismatch",
            "interactive agent session requested profile digest does not match its profile",
        )
    expected = agent_interactive_session_run_ref(
        {
            "provider": start.run.provider,
            "environmentId": start.run.environment_id,
            "sessionId": start.run.session_id,
            "executionId": start.run.execution_id,
        },
        start,
    )
    if not same_agent_exact_run(start.run, expected):
        raise ContractError.single(
            "/run",
            "interactive_run_identity_mismatch",
            "interactive agent session run identity does not match its start request",
        )
    return start


def agent_interactive_session_ref_matches_start(request: Any, ref: Any) -> bool:
    """Whether a provider's ref answers this start: the receipt's authored profile digest
    and harness are the requested ones and the run is the requested run."""
    try:
        start = _start(request)
        answer = ref if isinstance(ref, AgentInteractiveSessionRef) else AgentInteractiveSessionRef.parse_wire(wire_of(ref))
    except (ContractError, TypeError):
        return False
    harness = start.profile.harness
    if harness is None:
        return False
    receipt = answer.preparation_receipt
    return (
        receipt.authored_profile_digest == start.requested_profile_digest
        and receipt.harness == harness
        and same_agent_exact_run(answer.run, start.run)
    )


register_wire_models(AgentInteractiveSessionStart=AgentInteractiveSessionStart)
