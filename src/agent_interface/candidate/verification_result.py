"""What the candidate integrity verifier reports: a result document or a typed refusal.

Neither type exists in the reference, which leaves the verifier to its users. The result
is a wire document (``verify --json`` prints it, ``candidate receipt`` reads it back) and
holds exactly the bundle facts a materialization receipt needs.
"""

from __future__ import annotations

from typing import Annotated, Final, Literal

from pydantic import Field

from agent_interface.core.canonical import Sha256Digest
from agent_interface.core.errors import ContractError, ContractIssue
from agent_interface.core.model import JsonObject, WireInt, WireList, WireModel

__all__ = [
    "VERIFICATION_CHECKS",
    "CandidateArtifactRow",
    "CandidateEntrypointEvidence",
    "CandidateVerification",
    "CandidateVerificationRefused",
    "CandidateVerifiedContainer",
    "CandidateVerifiedLaunch",
    "VerificationCheck",
]

VerificationCheck = Literal[
    "wire_shape",
    "bundle_digest",
    "embedded_artifact",
    "inline_resource",
    "external_artifact",
    "code_state",
    "workspace_snapshot",
    "entrypoint",
]

VERIFICATION_CHECKS: Final[tuple[VerificationCheck, ...]] = (
    "wire_shape",
    "bundle_digest",
    "embedded_artifact",
    "inline_resource",
    "external_artifact",
    "code_state",
    "workspace_snapshot",
    "entrypoint",
)
"""The checks in the order they run; the first failure refuses the bundle."""

GitObjectId = Annotated[str, Field(pattern=r"^(?:[a-f0-9]{40}|[a-f0-9]{64})$")]


class CandidateVerificationRefused(ContractError):
    """The bundle failed ``check`` at JSON Pointer ``pointer``; ``code`` names the rule.

    The first issue is the failure; wire-shape refusals carry every schema issue.
    """

    def __init__(
        self, check: VerificationCheck, issues: list[ContractIssue] | tuple[ContractIssue, ...]
    ) -> None:
        super().__init__(list(issues), subject=f"candidate bundle ({check})")
        self.check: VerificationCheck = check
        self.pointer = self.issues[0].path
        self.code = self.issues[0].code

    @classmethod
    def at(
        cls, check: VerificationCheck, pointer: str, code: str, message: str
    ) -> CandidateVerificationRefused:
        return cls(check, [ContractIssue(pointer, code, message)])

    def to_wire(self) -> dict[str, object]:
        """The refusal as JSON: check, pointer, code, reason and every issue."""
        return {
            "verdict": "refused",
            "check": self.check,
            "pointer": self.pointer,
            "code": self.code,
            "reason": self.issues[0].message,
            "issues": [issue.to_dict() for issue in self.issues],
        }


class CandidateArtifactRow(WireModel):
    """One artifact whose bytes were checked against its declared length and digest."""

    pointer: str
    source: Literal["embedded", "inline", "s3", "ipfs", "github"]
    byte_length: WireInt = Field(ge=0)
    sha256: Sha256Digest
    verified: Literal[True] = True


class CandidateEntrypointEvidence(WireModel):
    """The launched entrypoint as the pinned workspace manifest records it."""

    path: str
    sha256: Sha256Digest
    byte_length: WireInt = Field(ge=0)


class CandidateVerifiedContainer(WireModel):
    """The container the bundle selects: pinned by the candidate, or left to the evaluator."""

    source: Literal["pinned-container", "evaluator-task-container"]
    image: str | None = None
    index_digest: Sha256Digest | None = None


class CandidateVerifiedLaunch(WireModel):
    """How the bundle launches its candidate (its ``execution`` less the snapshot), so a
    receipt can check that the execution plan launches exactly that."""

    launch: JsonObject
    instruction_delivery: JsonObject
    cwd: JsonObject
    env: JsonObject | None = None


class CandidateVerification(WireModel):
    """A bundle that passed every check, with the facts a materialization receipt binds.

    ``materializedTree`` is the tree Git produced from the patch (git-patch) or the
    declared base tree (no-op); ``repositoryChecked`` says whether the base commit was
    resolved in a repository (always for git-patch).
    """

    kind: Literal["agent-candidate-verification"] = "agent-candidate-verification"
    bundle_digest: Sha256Digest
    code_kind: Literal["disabled", "no-op", "git-patch"]
    materialized_tree: GitObjectId | None = None
    repository_checked: bool
    harness: str
    harness_version: str
    container: CandidateVerifiedContainer
    candidate_workspace: JsonObject | None = None
    entrypoint: CandidateEntrypointEvidence | None = None
    knowledge_manifest_digest: Sha256Digest | None = None
    profile_digest: Sha256Digest | None = None
    """RFC 8785 digest of the bundle's ``profile`` (a profile plan's ``sourceProfileDigest``)."""
    execution: CandidateVerifiedLaunch | None = None
    checks: WireList[VerificationCheck]
    artifacts: WireList[CandidateArtifactRow]
