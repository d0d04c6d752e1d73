"""The sealed profile plan of a candidate run and the evidence of its exact activation
(``agent-candidate-execution-plan-schema.ts``).

A profile plan lists every native file (path, mode, content digest), the public environment
and flags, and an optional system-prompt replacement or addition, for one harness. A sealed
plan never omits profile behavior: ``unsupported`` must be empty. The activation binds the
files written before launch to that plan, file by file.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, ClassVar, Literal, Self

from pydantic import AfterValidator, Field, model_validator
from pydantic_core import PydanticCustomError

from agent_interface.candidate.common import (
    AgentCandidateConfigValue,
    CandidateEnvironmentConfig,
    duplicate_value_issues,
)
from agent_interface.candidate.digests import seal_evidence, verify_evidence_digest
from agent_interface.candidate.evidence import AgentCandidateEvidence
from agent_interface.core.canonical import Sha256Digest, sha256_utf8, utf16_sort_key
from agent_interface.core.contract_limits import is_safe_relative_path
from agent_interface.core.errors import Refinement
from agent_interface.core.model import WireList, WireModel
from agent_interface.core.registry import register_wire_models
from agent_interface.profile.activation import (
    PosixFileMode,
    create_agent_profile_activation_evidence_schema,
)
from agent_interface.profile.harness import HarnessType
from agent_interface.profile.scalars import NonEmptyString

__all__ = [
    "AgentCandidateProfileActivation",
    "AgentCandidateProfilePlanEvidence",
    "AgentCandidateProfilePlanFile",
    "AgentCandidateProfilePlanMaterial",
    "AgentCandidateUnsupportedProfileDimension",
]


def _plan_path(value: str) -> str:
    if not is_safe_relative_path(value, False):
        raise PydanticCustomError(
            "unsafe_relative_path", "profile-plan file must use a canonical relative path"
        )
    return value


class AgentCandidateProfilePlanFile(WireModel):
    """One native file the plan writes: canonical relative path, mode and content digest."""

    rel_path: Annotated[str, AfterValidator(_plan_path)]
    mode: PosixFileMode
    content_sha256: Sha256Digest


class AgentCandidateUnsupportedProfileDimension(WireModel):
    """A profile dimension a harness could not apply (never allowed in a sealed plan)."""

    dimension: NonEmptyString
    reason: NonEmptyString


class AgentCandidateProfilePlanMaterial(WireModel):
    """The digest-free identity of a profile plan. Files are unique and sorted by UTF-16
    code units; ``systemPrompt`` replaces the harness prompt, ``appendSystemPrompt`` adds to
    it, and the two are distinct identities."""

    source_profile_digest: Sha256Digest
    harness: HarnessType
    files: WireList[AgentCandidateProfilePlanFile]
    env: CandidateEnvironmentConfig
    flags: WireList[AgentCandidateConfigValue]
    system_prompt: AgentCandidateConfigValue | None = None
    append_system_prompt: AgentCandidateConfigValue | None = None
    unsupported: Annotated[
        WireList[AgentCandidateUnsupportedProfileDimension], Field(max_length=0)
    ]
    """Always empty: sealed candidate materialization cannot omit profile behavior."""

    @model_validator(mode="after")
    def _files_sorted(self) -> Self:
        # Every string here is a checked path, digest, name or public value, so the
        # reference's RFC 8785 check of the whole material cannot fail after parsing.
        issues = Refinement("AgentCandidateProfilePlanMaterial")
        paths = [file.rel_path for file in self.files]
        duplicate_value_issues(issues, paths, ("files",))
        for index in range(1, len(paths)):
            if utf16_sort_key(paths[index - 1]) >= utf16_sort_key(paths[index]):
                issues.add(
                    ("files", index, "relPath"),
                    "profile_plan_order",
                    "profile-plan files must be lexicographically sorted",
                )
        issues.check()
        return self


class AgentCandidateProfilePlanEvidence(AgentCandidateEvidence):
    """A profile plan with its digest and the captured canonical bytes of the material."""

    evidence_label: ClassVar[str] = "plan"

    kind: Literal["agent-profile-workspace-plan"]
    material: AgentCandidateProfilePlanMaterial

    @classmethod
    def seal(cls, material: AgentCandidateProfilePlanMaterial | Mapping[str, Any]) -> Self:
        """Evidence embedding the material's RFC 8785 bytes, digest their SHA-256."""
        return seal_evidence(cls, "agent-profile-workspace-plan", material)

    def verify_digest(self) -> Self:
        """Return ``self`` when ``digest`` (and embedded bytes) match the material."""
        return verify_evidence_digest(self)


class AgentCandidateProfileActivation(
    create_agent_profile_activation_evidence_schema(AgentCandidateProfilePlanEvidence)  # type: ignore[misc]
):
    """The native files written for a candidate's profile plan, exactly as planned: same
    count and order, and each file's path, mode and UTF-8 content digest match its plan
    entry."""

    kind: Literal["agent-candidate-profile-activation"]

    @model_validator(mode="after")
    def _matches_plan(self) -> Self:
        issues = Refinement("AgentCandidateProfileActivation")
        planned = self.profile_plan.material.files
        if len(self.files) != len(planned):
            issues.add(
                ("files",),
                "activation_file_count",
                "profile activation must contain every planned native file",
            )
        for index, expected in enumerate(planned):
            actual = self.files[index] if index < len(self.files) else None
            if (
                actual is None
                or actual.path != expected.rel_path
                or actual.mode != expected.mode
                or sha256_utf8(actual.content) != expected.content_sha256
            ):
                issues.add(
                    ("files", index),
                    "activation_file_mismatch",
                    "profile activation file path, mode, and content must match the canonical plan",
                )
        issues.check()
        return self


register_wire_models(
    AgentCandidateProfileActivation=AgentCandidateProfileActivation,
    AgentCandidateProfilePlanEvidence=AgentCandidateProfilePlanEvidence,
    AgentCandidateProfilePlanMaterial=AgentCandidateProfilePlanMaterial,
)
