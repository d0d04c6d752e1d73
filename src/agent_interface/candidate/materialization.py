"""Mint the AgentCandidateMaterializationReceipt from a verified bundle.

The verification result holds what the bundle proves (digest, code kind and tree, harness,
workspace, entrypoint, knowledge manifest, pinned container). The evaluator adds what the
bundle cannot know, as a :class:`CandidateMaterializationContext`: the captured benchmark
input, the profile activation, the execution plan evidence, the selected OCI manifest and
platform (and the image, when the evaluator chose it) and the resolved model. The receipt
is sealed with its own RFC 8785 digest and parsed by the receipt schema, so every binding
to the execution plan is checked before it is returned.
"""

from __future__ import annotations

from typing import Any

from agent_interface.candidate.execution_plan import AgentCandidateExecutionPlanEvidence
from agent_interface.candidate.profile_plan import AgentCandidateProfileActivation
from agent_interface.candidate.receipt_binding import check_plan_binding
from agent_interface.candidate.receipts import (
    AgentCandidateBenchmarkInputEvidence,
    AgentCandidateMaterializationReceipt,
    AgentCandidateOciPlatform,
)
from agent_interface.candidate.task_terms import AgentCandidateResolvedModel
from agent_interface.candidate.verification_result import CandidateVerification
from agent_interface.core.canonical import Sha256Digest
from agent_interface.core.errors import ContractError
from agent_interface.core.model import WireModel
from agent_interface.core.registry import register_wire_models

__all__ = [
    "CandidateContainerSelection",
    "CandidateMaterializationContext",
    "materialization_receipt",
]


class CandidateContainerSelection(WireModel):
    """The OCI manifest and platform selected from the index; ``image`` and ``indexDigest``
    are required when the evaluator chose the container and, when given for a pinned
    container, must equal the bundle's."""

    image: str | None = None
    index_digest: Sha256Digest | None = None
    manifest_digest: Sha256Digest
    platform: AgentCandidateOciPlatform


class CandidateMaterializationContext(WireModel):
    """Evaluator-owned facts a materialization receipt binds and a bundle cannot know."""

    benchmark: AgentCandidateBenchmarkInputEvidence
    profile_activation: AgentCandidateProfileActivation
    execution_plan: AgentCandidateExecutionPlanEvidence
    container: CandidateContainerSelection
    resolved_model: AgentCandidateResolvedModel


def _container(result: CandidateVerification, selected: CandidateContainerSelection) -> dict[str, Any]:
    source = result.container.source
    if source == "pinned-container":
        for field, pinned, given in (
            ("image", result.container.image, selected.image),
            ("indexDigest", result.container.index_digest, selected.index_digest),
        ):
            if given is not None and given != pinned:
                raise ContractError.single(
                    f"/container/{field}",
                    "container_mismatch",
                    "the selected container differs from the one the bundle pins",
                    subject="materialization receipt",
                )
        image, index_digest = result.container.image, result.container.index_digest
    else:
        image, index_digest = selected.image, selected.index_digest
        if image is None or index_digest is None:
            raise ContractError.single(
                "/container/image" if image is None else "/container/indexDigest",
                "container_selection_required",
                "an evaluator-selected container needs its image and index digest",
                subject="materialization receipt",
            )
    return {
        "source": source,
        "image": image,
        "indexDigest": index_digest,
        "manifestDigest": selected.manifest_digest,
        "platform": selected.platform.to_wire(),
    }


def materialization_receipt(
    result: CandidateVerification, context: CandidateMaterializationContext
) -> AgentCandidateMaterializationReceipt:
    """The sealed receipt for ``result``; a ``ContractError`` when the facts do not bind.

    Active code must have been materialized against a repository (a no-op bundle verified
    without one only declares its tree, and a receipt would overstate it). The plan must
    launch exactly what the bundle says and the profile plan must come from the bundle's
    profile (:func:`~agent_interface.candidate.receipt_binding.check_plan_binding`).
    """
    if result.code_kind != "disabled" and not result.repository_checked:
        raise ContractError.single(
            "/materializedTree",
            "code_not_materialized",
            "the code tree was not checked against a repository; verify with one first",
            subject="materialization receipt",
        )
    check_plan_binding(result, context.execution_plan, context.profile_activation)
    material: dict[str, Any] = {
        "kind": "agent-candidate-materialization",
        "digestAlgorithm": "rfc8785-sha256",
        "bundleDigest": result.bundle_digest,
        "benchmark": context.benchmark.to_wire(),
        "profileActivation": context.profile_activation.to_wire(),
        "executionPlan": context.execution_plan.to_wire(),
        "codeKind": result.code_kind,
        "harness": result.harness,
        "harnessVersion": result.harness_version,
        "container": _container(result, context.container),
        "resolvedModel": context.resolved_model.to_wire(),
    }
    wire = result.to_wire()
    for key in ("candidateWorkspace", "materializedTree", "knowledgeManifestDigest", "entrypoint"):
        if key in wire:
            material[key] = wire[key]
    return AgentCandidateMaterializationReceipt.seal(material)


register_wire_models(
    CandidateContainerSelection=CandidateContainerSelection,
    CandidateMaterializationContext=CandidateMaterializationContext,
)
