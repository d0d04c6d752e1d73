"""Reviewing and activating a measured improvement (``agent-candidate-promotion-schema.ts``).

* :class:`AgentImprovementReview` is a reviewer's decision on one proposal digest.
* :class:`AgentImprovementActivation` authorizes applying (or restoring) the measured state on
  named targets, each with the base digest it expects, until an expiry; an ``agent-profile``
  target also names the runner that measured it.
* :class:`AgentImprovementActivationResult` records what an activation attempt did.

A module of its own: these records name a proposal by digest and need none of the
measured comparisons a proposal carries (:mod:`agent_interface.candidate.promotion`,
where every name is public too).
"""

from __future__ import annotations

import re
from typing import Annotated, Final, Literal, Self

from pydantic import Field, model_validator

from agent_interface.candidate.execution_ref import AgentProfileImprovementExecutionRef
from agent_interface.candidate.sealed import SealedRecord, refine_canonical
from agent_interface.candidate.surfaces import AgentImprovementSurface
from agent_interface.core.canonical import Sha256Digest
from agent_interface.core.contract_limits import IsoDatetime, Utf16Length
from agent_interface.core.errors import Refinement
from agent_interface.core.model import WireList, WireModel
from agent_interface.core.registry import register_wire_models

__all__ = [
    "AgentImprovementActivation",
    "AgentImprovementActivationIntent",
    "AgentImprovementActivationOutcome",
    "AgentImprovementActivationResult",
    "AgentImprovementActivationTarget",
    "AgentImprovementActivationTargetState",
    "AgentImprovementActivationTargetTransition",
    "AgentImprovementReview",
    "AgentImprovementReviewDecision",
]

NonEmpty = Annotated[str, Utf16Length(min=1)]
TargetIdentity = Annotated[str, Utf16Length(min=1, max=500)]
OutcomeCode = Annotated[str, Utf16Length(min=1, max=100)]
OutcomeMessage = Annotated[str, Utf16Length(min=1, max=2_000)]


AgentImprovementReviewDecision = Literal["approve", "reject", "request-changes"]


class AgentImprovementReview(SealedRecord):
    """A reviewer's decision on one proposal."""

    kind: Literal["agent-improvement-review"]
    proposal_digest: Sha256Digest
    decision: AgentImprovementReviewDecision
    reviewed_by: NonEmpty
    reviewed_at: IsoDatetime
    reason: NonEmpty
    feedback: str | None = None
    digest: Sha256Digest

    @model_validator(mode="after")
    def _canonical(self) -> Self:
        issues = Refinement("AgentImprovementReview")
        refine_canonical(self, issues, "review")
        issues.check()
        return self


_DATETIME_RE: Final = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2})(?::([0-9]{2})(?:\.([0-9]+))?)?Z"
)


def _epoch_ms(text: str) -> int:
    """Milliseconds since the epoch of a checked ``IsoDatetime`` (fraction truncated, as
    JavaScript's ``Date.parse`` reads it)."""
    match = _DATETIME_RE.fullmatch(text)
    if match is None:  # pragma: no cover - the field type has already checked the form
        raise ValueError("not an ISO datetime")
    year, month, day, hour, minute = (int(part) for part in match.groups()[:5])
    second = int(match.group(6) or 0)
    millis = int((match.group(7) or "0")[:3].ljust(3, "0"))
    # Days from 1970-01-01 in the proleptic Gregorian calendar (Howard Hinnant's algorithm).
    y = year - (month <= 2)
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    days = era * 146097 + doe - 719468
    return ((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + millis


class AgentImprovementActivationTarget(WireModel):
    """One surface instance to change, and the digest it must still have."""

    surface: AgentImprovementSurface
    identity: TargetIdentity
    expected_base_digest: Sha256Digest


AgentImprovementActivationIntent = Literal["activate-candidate", "restore-baseline"]


def _target_key(surface: str, identity: str) -> str:
    return f"{surface}\u0000{identity}"


class AgentImprovementActivation(SealedRecord):
    """Authorization to apply a reviewed measured change on named targets until it expires."""

    kind: Literal["agent-improvement-activation"]
    proposal_digest: Sha256Digest
    review_digest: Sha256Digest
    experiment_digest: Sha256Digest
    candidate_digest: Sha256Digest
    execution_ref: AgentProfileImprovementExecutionRef | None = None
    intent: AgentImprovementActivationIntent
    targets: Annotated[WireList[AgentImprovementActivationTarget], Field(min_length=1)]
    funding_owner: TargetIdentity
    authorized_by: TargetIdentity
    authorized_at: IsoDatetime
    expires_at: IsoDatetime
    digest: Sha256Digest

    @model_validator(mode="after")
    def _authorized(self) -> Self:
        issues = Refinement("AgentImprovementActivation")
        profile_target = any(target.surface == "agent-profile" for target in self.targets)
        if profile_target and self.execution_ref is None:
            issues.add(
                ("executionRef",),
                "activation_runner_missing",
                "agent-profile activation requires the measured runner reference",
            )
        if not profile_target and self.execution_ref is not None:
            issues.add(
                ("executionRef",),
                "activation_runner_unexpected",
                "executionRef is valid only for agent-profile activation",
            )
        keys = [_target_key(target.surface, target.identity) for target in self.targets]
        if len(set(keys)) != len(keys):
            issues.add(
                ("targets",),
                "activation_target_duplicate",
                "activation targets must be unique by surface and identity",
            )
        if _epoch_ms(self.expires_at) <= _epoch_ms(self.authorized_at):
            issues.add(
                ("expiresAt",),
                "activation_expiry",
                "activation expiry must follow its authorization time",
            )
        refine_canonical(self, issues, "activation")
        issues.check()
        return self


class AgentImprovementActivationTargetTransition(WireModel):
    """One surface an activation changed: its identity and the digests before and after."""

    surface: AgentImprovementSurface
    identity: TargetIdentity
    before_digest: Sha256Digest
    after_digest: Sha256Digest


class AgentImprovementActivationTargetState(WireModel):
    """One surface an activation found as it is: its identity and current digest (no change made)."""

    surface: AgentImprovementSurface
    identity: TargetIdentity
    current_digest: Sha256Digest


class _Applied(WireModel):
    status: Literal["applied"]
    transaction_id: TargetIdentity
    targets: Annotated[WireList[AgentImprovementActivationTargetTransition], Field(min_length=1)]


class _AlreadyApplied(WireModel):
    status: Literal["already-applied"]
    targets: Annotated[WireList[AgentImprovementActivationTargetState], Field(min_length=1)]


class _Conflict(WireModel):
    status: Literal["conflict"]
    targets: Annotated[WireList[AgentImprovementActivationTargetState], Field(min_length=1)]


class _Expired(WireModel):
    status: Literal["expired"]


class _Unsupported(WireModel):
    status: Literal["unsupported"]
    code: OutcomeCode
    message: OutcomeMessage


class _Failed(WireModel):
    status: Literal["failed"]
    code: OutcomeCode
    message: OutcomeMessage


class _Indeterminate(WireModel):
    status: Literal["indeterminate"]
    code: OutcomeCode
    message: OutcomeMessage


AgentImprovementActivationOutcome = Annotated[
    _Applied | _AlreadyApplied | _Conflict | _Expired | _Unsupported | _Failed | _Indeterminate,
    Field(discriminator="status"),
]
"""What an activation attempt did: applied, already applied, conflicted, expired,
unsupported, failed, or left the targets in an unknown state."""


class AgentImprovementActivationResult(SealedRecord):
    """The recorded result of one idempotent activation attempt."""

    kind: Literal["agent-improvement-activation-result"]
    idempotency_key: Sha256Digest
    attempted_at: IsoDatetime
    completed_at: IsoDatetime
    outcome: AgentImprovementActivationOutcome
    digest: Sha256Digest

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        issues = Refinement("AgentImprovementActivationResult")
        if _epoch_ms(self.completed_at) < _epoch_ms(self.attempted_at):
            issues.add(
                ("completedAt",),
                "activation_completed_before_attempt",
                "activation completion cannot predate its attempt",
            )
        targets = getattr(self.outcome, "targets", ())
        keys = [_target_key(target.surface, target.identity) for target in targets]
        if len(set(keys)) != len(keys):
            issues.add(
                ("outcome", "targets"),
                "activation_target_duplicate",
                "activation outcome targets must be unique by surface and identity",
            )
        refine_canonical(self, issues, "activation result")
        issues.check()
        return self


register_wire_models(
    AgentImprovementActivation=AgentImprovementActivation,
    AgentImprovementActivationResult=AgentImprovementActivationResult,
    AgentImprovementReview=AgentImprovementReview,
)
