"""The candidate bundle (``agent-candidate.ts``, ``agent-candidate-schema.ts``).

A bundle is the portable, immutable output of an improvement run: a strict profile, an
explicit code result, a shell-free execution, optional knowledge, the memory policy, and
``digest``, the RFC 8785 SHA-256 of the bundle without its own ``digest`` field
(``digestAlgorithm: "rfc8785-sha256"``). Every field, provenance included, is inside it.

Parsing proves structure only. A verifier recomputes :func:`agent_candidate_bundle_digest`,
checks every artifact (:func:`~agent_interface.candidate.artifacts.validate_embedded_artifact`)
and applies any patch to the declared base tree before materializing; a carried digest
and artifact hashes are untrusted until then.

Structural rules beyond the parts: the profile's harness, when set, is the execution
harness. Disabled code runs a container command in the task workspace and carries no
candidate workspace. Active code (no-op or git-patch) launches its candidate entrypoint
from a non-empty pinned workspace that contains the entrypoint, executable (mode 0755)
unless an interpreter runs it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal, Self

from pydantic import model_validator

from agent_interface.candidate.code import AgentCandidateCode, AgentCandidateCodeDisabled
from agent_interface.candidate.common import AgentCandidateDigestAlgorithm
from agent_interface.candidate.launch import (
    AgentCandidateContainerLaunch,
    AgentCandidateEntrypointLaunch,
    AgentCandidateExecution,
)
from agent_interface.candidate.lineage import AgentCandidateKnowledge, AgentCandidateMemoryPolicy
from agent_interface.candidate.profile import AgentCandidateProfile
from agent_interface.core.canonical import (
    Sha256Digest,
    canonical_digest,
    is_canonical_json_value,
    omit_top_level_digest,
)
from agent_interface.core.errors import Refinement
from agent_interface.core.model import WireModel, thaw
from agent_interface.core.registry import register_wire_models

__all__ = [
    "AgentCandidateBundle",
    "agent_candidate_bundle_digest",
    "define_agent_candidate_bundle",
    "seal_agent_candidate_bundle",
]

_EXECUTABLE_MODE: Final = 0o755
_PLACEHOLDER_DIGEST: Final = "sha256:" + "0" * 64


class AgentCandidateBundle(WireModel):
    """A frozen candidate, identified by the RFC 8785 digest of everything but ``digest``."""

    kind: Literal["agent-candidate-bundle"]
    digest_algorithm: AgentCandidateDigestAlgorithm
    profile: AgentCandidateProfile
    code: AgentCandidateCode
    execution: AgentCandidateExecution
    knowledge: AgentCandidateKnowledge | None = None
    memory: AgentCandidateMemoryPolicy
    digest: Sha256Digest

    @model_validator(mode="after")
    def _coherent(self) -> Self:
        refinement = Refinement("AgentCandidateBundle")
        if not is_canonical_json_value(self.model_dump(mode="python", by_alias=True)):
            refinement.add(
                (), "non_canonical_json",
                "candidate bundle must contain only finite, acyclic RFC 8785 JSON values",
            )
        execution = self.execution
        if self.profile.harness is not None and self.profile.harness != execution.harness:
            refinement.add(
                ("execution", "harness"), "harness_mismatch",
                "execution harness must match the candidate profile preference",
            )
        if isinstance(self.code, AgentCandidateCodeDisabled):
            _disabled_code_rules(refinement, execution)
        else:
            _active_code_rules(refinement, execution)
        refinement.check()
        return self

    @classmethod
    def seal(cls, material: Mapping[str, Any] | AgentCandidateBundle) -> Self:
        """The bundle with ``digestAlgorithm`` set and ``digest`` computed (any given
        ``digest`` is replaced)."""
        plain = material.to_wire() if isinstance(material, WireModel) else thaw(dict(material))
        plain["digestAlgorithm"] = "rfc8785-sha256"
        plain["digest"] = _PLACEHOLDER_DIGEST
        # Validate first so the digest covers the normalized wire form.
        normalized = cls.parse_wire(plain)
        return normalized.model_copy(update={"digest": agent_candidate_bundle_digest(normalized)})


def _disabled_code_rules(refinement: Refinement, execution: AgentCandidateExecution) -> None:
    if execution.cwd.workspace != "task":
        refinement.add(
            ("execution", "cwd", "workspace"), "disabled_code_workspace",
            "disabled code controls must execute in the task workspace",
        )
    if not isinstance(execution.launch, AgentCandidateContainerLaunch):
        refinement.add(
            ("execution", "launch"), "disabled_code_launch",
            "disabled code controls must use a container command",
        )
    if execution.workspace is not None:
        refinement.add(
            ("execution", "workspace"), "disabled_code_candidate_workspace",
            "disabled code cannot carry a candidate workspace",
        )


def _active_code_rules(refinement: Refinement, execution: AgentCandidateExecution) -> None:
    launch = execution.launch
    entrypoint = launch if isinstance(launch, AgentCandidateEntrypointLaunch) else None
    if entrypoint is None:
        refinement.add(
            ("execution", "launch"), "active_code_launch",
            "an active code surface must launch its candidate entrypoint",
        )
    workspace = execution.workspace
    if workspace is None:
        refinement.add(
            ("execution", "workspace"), "active_code_workspace_missing",
            "active code requires a complete candidate workspace",
        )
        return
    files = workspace.material.files
    if not files:
        refinement.add(
            ("execution", "workspace", "material", "files"), "active_code_workspace_empty",
            "active candidate workspaces cannot be empty",
        )
        return
    if entrypoint is None:
        return
    entry = next((file for file in files if file.path == entrypoint.entrypoint), None)
    if entry is None:
        refinement.add(
            ("execution", "launch", "entrypoint"), "entrypoint_not_in_workspace",
            "candidate entrypoint must exist in the pinned workspace manifest",
        )
    elif entrypoint.interpreter is None and entry.mode != _EXECUTABLE_MODE:
        refinement.add(
            ("execution", "launch", "entrypoint"), "entrypoint_not_executable",
            "a directly launched candidate entrypoint must be executable",
        )


def agent_candidate_bundle_digest(bundle: AgentCandidateBundle | Mapping[str, Any]) -> str:
    """The identity a verifier recomputes: RFC 8785 SHA-256 of the wire form without the
    top-level ``digest``. A mapping is digested as given (parse it first to normalize)."""
    plain = bundle.to_wire() if isinstance(bundle, WireModel) else thaw(dict(bundle))
    return canonical_digest(omit_top_level_digest(plain))


def seal_agent_candidate_bundle(
    material: Mapping[str, Any] | AgentCandidateBundle,
) -> AgentCandidateBundle:
    """Validate ``material`` (wire names; ``digest`` and ``digestAlgorithm`` may be absent)
    and return it with ``digestAlgorithm: "rfc8785-sha256"`` and its computed ``digest``."""
    return AgentCandidateBundle.seal(material)


def define_agent_candidate_bundle(
    bundle: Mapping[str, Any] | AgentCandidateBundle,
) -> AgentCandidateBundle:
    """Validate a bundle document and return the model (``defineAgentCandidateBundle``).

    The carried digest is not recomputed; use :func:`seal_agent_candidate_bundle` to set
    it, or compare with :func:`agent_candidate_bundle_digest` to verify it."""
    if isinstance(bundle, AgentCandidateBundle):
        return bundle
    return AgentCandidateBundle.parse_wire(bundle)


register_wire_models(AgentCandidateBundle=AgentCandidateBundle)
