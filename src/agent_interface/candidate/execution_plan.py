"""The per-task execution plan the protected runtime seals before running one candidate on
one task (``agent-candidate-execution-plan-schema.ts``).

The plan material is the digest-free identity of one attempt: the run cell, fixed disjoint
task and candidate workspace roots, the code state and candidate workspace, the profile
plan with its target workspace and every mounted path, harness, instruction delivery,
limits, the exact container (OCI index, manifest, platform), the one evaluator-mediated
model with its routes and gateway network, the shell-free launch, effective memory and a
disabled network. Its RFC 8785 bytes are the evidence artifact and their SHA-256 is the plan
digest.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Any, ClassVar, Final, Literal, Self

from pydantic import AfterValidator, Field, model_validator
from pydantic_core import PydanticCustomError

from agent_interface.candidate.artifacts import (
    AgentCandidateCapturedArtifact,
    AgentCandidateWorkspaceSnapshotEvidence,
)
from agent_interface.candidate.common import (
    AgentCandidateConfigValue,
    CandidateEnvironmentConfig,
    SafeExecutable,
    duplicate_value_issues,
    is_obviously_private_hostname,
)
from agent_interface.candidate.digests import is_digestible, seal_evidence, verify_evidence_digest
from agent_interface.candidate.evidence import AgentCandidateEvidence
from agent_interface.candidate.launch import (
    AgentCandidateContainer,
    AgentCandidateInstructionDelivery,
    AgentCandidateWorkingDirectory,
)
from agent_interface.candidate.run_cell import AgentCandidateRunCell
from agent_interface.candidate.task_terms import (
    AgentCandidateExecutionLimits,
    AgentCandidateResolvedModel,
)
from agent_interface.core.canonical import (
    Sha256Digest,
    canonical_digest,
    utf16_sort_key,
)
from agent_interface.core.contract_limits import is_safe_relative_path, js_trim
from agent_interface.core.errors import Refinement
from agent_interface.core.model import WireList, WireModel
from agent_interface.core.registry import register_wire_models
from agent_interface.profile.harness import HarnessType
from agent_interface.profile.scalars import NonEmptyString

__all__ = [
    "TANGLE_CANDIDATE_TASK_FILE",
    "AgentCandidateDisabledMemory",
    "AgentCandidateDisabledModelNetwork",
    "AgentCandidateEffectiveMemory",
    "AgentCandidateExecutionPlanEvidence",
    "AgentCandidateExecutionPlanMaterial",
    "AgentCandidateGatewayModelNetwork",
    "AgentCandidateIsolatedMemory",
    "AgentCandidateMemoryReset",
    "AgentCandidateModelAccessNetwork",
    "AgentCandidateModelRoute",
    "AgentCandidatePlanContainer",
    "AgentCandidatePlanModel",
    "AgentCandidatePlanPlatform",
    "AgentCandidatePlanWorkspaces",
    "AgentCandidateProfileApplication",
    "execution_plan_digest",
    "is_canonical_absolute_path",
    "is_exact_public_gateway_domain",
    "paths_overlap",
]

TANGLE_CANDIDATE_TASK_FILE: Final = "/tangle/input/task.txt"
"""The evaluator-owned path of a task delivered as a UTF-8 file."""

_GATEWAY_LABEL_RE: Final = re.compile(r"[a-z0-9](?:[a-z0-9-]*[a-z0-9])?")


# -- model access ------------------------------------------------------------------------------


def is_exact_public_gateway_domain(value: str) -> bool:
    """An exact lowercase public DNS name: at least two labels of ``[a-z0-9-]`` (no edge
    hyphen, 1..63 each), a letter in the last label, at most 253 characters, no trailing dot,
    port, wildcard or private host."""
    if (
        len(value) > 253
        or value != value.lower()
        or value.endswith(".")
        or ":" in value
        or is_obviously_private_hostname(value)
    ):
        return False
    labels = value.split(".")
    return (
        len(labels) >= 2
        and all(len(label) <= 63 and _GATEWAY_LABEL_RE.fullmatch(label) for label in labels)
        and any("a" <= char <= "z" for char in labels[-1])
    )


def _gateway_domain(value: str) -> str:
    if not is_exact_public_gateway_domain(value):
        raise PydanticCustomError(
            "gateway_domain", "model gateway must be an exact lowercase public DNS name"
        )
    return value


class AgentCandidateDisabledModelNetwork(WireModel):
    """The agent may reach no model gateway: model network access is off for the run."""

    mode: Literal["disabled"]


class AgentCandidateGatewayModelNetwork(WireModel):
    """The agent may reach only these model gateways (exact names, sorted, unique)."""

    mode: Literal["gateway-only"]
    domains: Annotated[
        WireList[Annotated[str, AfterValidator(_gateway_domain)]], Field(min_length=1)
    ]


AgentCandidateModelAccessNetwork = Annotated[
    AgentCandidateDisabledModelNetwork | AgentCandidateGatewayModelNetwork,
    Field(discriminator="mode"),
]


class _ModelAccess(WireModel):
    kind: Literal["evaluator-mediated"]
    grant_digest: Sha256Digest
    network: AgentCandidateModelAccessNetwork


class _PrimaryRoute(WireModel):
    kind: Literal["primary"]
    requested: NonEmptyString | None = None


class _SmallRoute(WireModel):
    kind: Literal["small"]
    requested: NonEmptyString


class _ModeRoute(WireModel):
    kind: Literal["mode"]
    name: NonEmptyString
    requested: NonEmptyString


class _SubagentRoute(WireModel):
    kind: Literal["subagent"]
    name: NonEmptyString
    requested: NonEmptyString


AgentCandidateModelRoute = Annotated[
    _PrimaryRoute | _SmallRoute | _ModeRoute | _SubagentRoute, Field(discriminator="kind")
]
"""A harness model slot (primary, small, a named mode or subagent) and the literal it requests."""


class AgentCandidatePlanModel(WireModel):
    """One resolved model behind evaluator-mediated access; every route requests it."""

    policy: Literal["single"]
    resolved: AgentCandidateResolvedModel
    access: _ModelAccess
    routes: Annotated[WireList[AgentCandidateModelRoute], Field(min_length=1)]


# -- memory ------------------------------------------------------------------------------------


class AgentCandidateDisabledMemory(WireModel):
    """The run gets no task memory at all."""

    mode: Literal["disabled"]


class AgentCandidateMemoryReset(WireModel):
    """A fresh reset of task memory: its evidence and the empty state's digest."""

    kind: Literal["fresh"]
    evidence: AgentCandidateCapturedArtifact
    empty_state_digest: Sha256Digest


class AgentCandidateIsolatedMemory(WireModel):
    """Task-scoped memory under its own namespace, reset fresh (with non-empty evidence)
    and snapshotted before the run."""

    mode: Literal["isolated"]
    scope: Literal["task"]
    effective_namespace: NonEmptyString
    reset: AgentCandidateMemoryReset
    before_state: AgentCandidateWorkspaceSnapshotEvidence
    seed_digest: Sha256Digest | None = None

    @model_validator(mode="after")
    def _reset_has_evidence(self) -> Self:
        if self.reset.evidence.byte_length == 0:
            issues = Refinement("AgentCandidateIsolatedMemory")
            issues.add(
                ("reset", "evidence", "byteLength"),
                "empty_reset_evidence",
                "task-scoped memory requires non-empty fresh-reset evidence",
            )
            issues.check()
        return self


AgentCandidateEffectiveMemory = Annotated[
    AgentCandidateDisabledMemory | AgentCandidateIsolatedMemory, Field(discriminator="mode")
]


# -- workspaces, profile, container, launch -----------------------------------------------------


def is_canonical_absolute_path(value: str) -> bool:
    """``/`` followed by a canonical relative path (no ``//``, ``.``, ``..``, backslash)."""
    return (
        value.startswith("/")
        and value != "/"
        and "//" not in value
        and is_safe_relative_path(value[1:], False)
    )


def _absolute_root(label: str) -> Any:
    def check(value: str) -> str:
        if not is_canonical_absolute_path(value):
            raise PydanticCustomError(
                "non_canonical_root",
                "{label} root must be a canonical absolute path",
                {"label": label},
            )
        return value

    return AfterValidator(check)


def paths_overlap(left: str, right: str) -> bool:
    """True when one path equals the other or lies beneath it."""
    return left == right or left.startswith(right + "/") or right.startswith(left + "/")


class AgentCandidatePlanWorkspaces(WireModel):
    """Fixed roots: the task workspace, and the candidate workspace when code is active."""

    task_root: Annotated[str, _absolute_root("task")]
    candidate_root: Annotated[str, _absolute_root("candidate")] | None = None


def _mount_path(value: str) -> str:
    if not is_safe_relative_path(value, False):
        raise PydanticCustomError(
            "unsafe_relative_path", "profile mount paths must be canonical and relative"
        )
    return value


class AgentCandidateProfileApplication(WireModel):
    """The profile plan applied, the workspace its files target and every mounted path."""

    plan_digest: Sha256Digest
    target_workspace: Literal["task", "candidate"]
    mount_paths: WireList[Annotated[str, AfterValidator(_mount_path)]]


class AgentCandidatePlanPlatform(WireModel):
    """The OCI platform of the image a plan runs."""

    os: NonEmptyString
    architecture: NonEmptyString
    variant: NonEmptyString | None = None


class AgentCandidatePlanContainer(AgentCandidateContainer):
    """The exact image run: who chose it, OCI index, selected manifest and platform."""

    source: Literal["pinned-container", "evaluator-task-container"]
    manifest_digest: Sha256Digest
    platform: AgentCandidatePlanPlatform


class _PlanLaunch(WireModel):
    executable: SafeExecutable
    args: WireList[AgentCandidateConfigValue]
    env: CandidateEnvironmentConfig
    cwd: AgentCandidateWorkingDirectory


class _DisabledNetwork(WireModel):
    mode: Literal["disabled"]


# -- the plan ----------------------------------------------------------------------------------


def _sorted_issues(
    issues: Refinement, values: tuple[str, ...], path: tuple[str | int, ...], message: str
) -> None:
    duplicate_value_issues(issues, values, path)
    for index in range(1, len(values)):
        if utf16_sort_key(values[index - 1]) >= utf16_sort_key(values[index]):
            issues.add((*path, index), "unsorted", message)


class AgentCandidateExecutionPlanMaterial(WireModel):
    """The digest-free identity of one attempt of one candidate on one task."""

    kind: Literal["agent-candidate-execution-plan-material"]
    run_cell: AgentCandidateRunCell
    execution_id: NonEmptyString
    workspaces: AgentCandidatePlanWorkspaces
    code_kind: Literal["disabled", "no-op", "git-patch"]
    candidate_workspace: AgentCandidateWorkspaceSnapshotEvidence | None = None
    profile: AgentCandidateProfileApplication
    harness: HarnessType
    harness_version: NonEmptyString
    instruction_delivery: AgentCandidateInstructionDelivery
    limits: AgentCandidateExecutionLimits
    container: AgentCandidatePlanContainer
    model: AgentCandidatePlanModel
    launch: _PlanLaunch
    knowledge_manifest_digest: Sha256Digest | None = None
    memory: AgentCandidateEffectiveMemory
    network: _DisabledNetwork

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        issues = Refinement("AgentCandidateExecutionPlanMaterial")
        self._launch_issues(issues)
        self._model_issues(issues)
        self._workspace_issues(issues)
        if not issues and not is_digestible(self):
            issues.add(
                (), "non_canonical_json",
                "execution-plan material must contain only RFC 8785 JSON values",
            )
        issues.check()
        return self

    def _launch_issues(self, issues: Refinement) -> None:
        launch = self.launch
        path_value = launch.env.get("PATH")
        if not launch.executable.startswith("/") and (
            path_value is None or not js_trim(path_value.value)
        ):
            issues.add(
                ("launch", "env", "PATH"), "path_required",
                "relative execution-plan executables require an explicit public PATH",
            )
        task_path = launch.env.get("TANGLE_CANDIDATE_TASK_PATH")
        if task_path is None:
            return
        where = ("launch", "env", "TANGLE_CANDIDATE_TASK_PATH")
        if task_path.value != TANGLE_CANDIDATE_TASK_FILE:
            issues.add(
                where, "task_path_fixed",
                "task file delivery must use the fixed evaluator-owned path",
            )
        roots = [self.workspaces.task_root, self.workspaces.candidate_root]
        if any(root is not None and paths_overlap(task_path.value, root) for root in roots):
            issues.add(
                where, "task_path_in_workspace",
                "task file delivery must be outside both workspaces",
            )

    def _model_issues(self, issues: Refinement) -> None:
        model = self.model
        route_ids = tuple(
            f"{route.kind}:{route.name}" if isinstance(route, (_ModeRoute, _SubagentRoute))
            else route.kind
            for route in model.routes
        )
        duplicate_value_issues(issues, route_ids, ("model", "routes"))
        if not any(route.kind == "primary" for route in model.routes):
            issues.add(
                ("model", "routes"), "primary_route_required",
                "single-model plans must include the primary route",
            )
        for index, route in enumerate(model.routes):
            if route.requested is not None and route.requested != model.resolved.requested:
                issues.add(
                    ("model", "routes", index, "requested"), "route_model_mismatch",
                    "every route must request the one resolved model literal",
                )
        network = model.access.network
        if isinstance(network, AgentCandidateGatewayModelNetwork):
            _sorted_issues(
                issues, network.domains, ("model", "access", "network", "domains"),
                "model gateway domains must be lexicographically sorted",
            )

    def _workspace_issues(self, issues: Refinement) -> None:
        active = self.code_kind != "disabled"
        candidate_root = self.workspaces.candidate_root
        if active != (self.candidate_workspace is not None):
            issues.add(
                ("candidateWorkspace",), "candidate_workspace_required",
                "active code requires a complete candidate-workspace snapshot",
            )
        if active != (candidate_root is not None):
            issues.add(
                ("workspaces", "candidateRoot"), "candidate_root_required",
                "active code requires a fixed candidate workspace root",
            )
        if candidate_root is not None and paths_overlap(self.workspaces.task_root, candidate_root):
            issues.add(
                ("workspaces",), "workspace_roots_overlap",
                "task and candidate workspace roots must be disjoint",
            )
        if self.launch.cwd.workspace == "candidate" and candidate_root is None:
            issues.add(
                ("launch", "cwd", "workspace"), "candidate_root_required",
                "candidate cwd requires a pinned candidate workspace root",
            )
        _sorted_issues(
            issues, self.profile.mount_paths, ("profile", "mountPaths"),
            "profile mount paths must be lexicographically sorted",
        )
        if self.profile.target_workspace == "candidate" and candidate_root is None:
            issues.add(
                ("profile", "targetWorkspace"), "candidate_root_required",
                "candidate-targeted profile files require a candidate workspace root",
            )
        if (
            active
            and self.candidate_workspace is not None
            and not self.candidate_workspace.material.files
        ):
            issues.add(
                ("candidateWorkspace", "material", "files"), "empty_candidate_workspace",
                "active candidate workspaces cannot be empty",
            )


def execution_plan_digest(material: AgentCandidateExecutionPlanMaterial | Mapping[str, Any]) -> str:
    """The plan digest: SHA-256 of the material's RFC 8785 bytes (validated first)."""
    parsed = (
        material
        if isinstance(material, AgentCandidateExecutionPlanMaterial)
        else AgentCandidateExecutionPlanMaterial.parse_wire(material)
    )
    return canonical_digest(parsed.to_wire())


class AgentCandidateExecutionPlanEvidence(AgentCandidateEvidence):
    """A plan with its digest and the captured RFC 8785 bytes of the material."""

    evidence_label: ClassVar[str] = "plan"

    kind: Literal["agent-candidate-execution-plan"]
    material: AgentCandidateExecutionPlanMaterial

    @classmethod
    def seal(cls, material: AgentCandidateExecutionPlanMaterial | Mapping[str, Any]) -> Self:
        """Evidence embedding the material's RFC 8785 bytes, digest their SHA-256."""
        return seal_evidence(cls, "agent-candidate-execution-plan", material)

    def verify_digest(self) -> Self:
        """Return ``self`` when ``digest`` (and embedded bytes) match the material."""
        return verify_evidence_digest(self)


register_wire_models(
    AgentCandidateEffectiveMemory=AgentCandidateEffectiveMemory,
    AgentCandidateExecutionPlanEvidence=AgentCandidateExecutionPlanEvidence,
    AgentCandidateExecutionPlanMaterial=AgentCandidateExecutionPlanMaterial,
    AgentCandidateModelAccessNetwork=AgentCandidateModelAccessNetwork,
)
