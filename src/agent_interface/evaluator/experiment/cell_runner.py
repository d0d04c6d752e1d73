"""Run one attempt of one cell on an exact-process provider: the default :class:`CellRunner`.

:class:`ExactProcessCellRunner` runs an attempt the way ``candidate run`` runs one
(:mod:`agent_interface.evaluator.run.attempt`): plan with the public builders (run cell,
profile plan and activation, execution plan; the plan's execution id is the attempt's
idempotency key), mint the materialization receipt from the bundle's verification
(done once per experiment by the engine), stage the snapshots and profile files in a fresh
environment, run the launch with the evaluator's model gateway (one per worker process,
each attempt its own gateway run: :mod:`agent_interface.evaluator.run.model_access`), then
capture:

* an **output** task is graded by the output-checks grader (:mod:`.run.grader`);
* a **workspace** task's files are read back (:mod:`.workspace_outcome`), the paths the
  profile targeted are restored, the binary diff against the snapshot is the outcome, and
  the task's own commands grade it in a fresh environment (:mod:`.task_grader`), on the
  task's files with only the changes the task allows (:mod:`.submission_policy`).

Anything incomplete is an invalid capture; an attempt that cannot run at all is a
``failed`` outcome with a typed error. Nothing escapes :meth:`ExactProcessCellRunner.run`.

The provider is a parameter: ``provider`` is an async factory taking a
:class:`ProviderRequest` (a root directory, the executables the image must hold, the
capture bound, the private-root paths) and returning an object with the host provider's
surface (``exact_process``, ``image``, ``name``, ``private_root``, ``close()``).
:func:`host_provider` (the default) builds the host's
:class:`~agent_interface.evaluator.process.local_process.LocalExactProcessProvider`.
With ``containers`` (:class:`~.container_cells.ContainerCells`), a cell whose bundle pins
a container or whose task selects one runs in an OCI container instead, its workspace
capture in that container and its grader in the task's container (see
:mod:`.container_cells`).
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from agent_interface.candidate.context_builder import (
    CandidateRunPlacement,
    build_materialization_context,
)
from agent_interface.candidate.execution_plan import TANGLE_CANDIDATE_TASK_FILE
from agent_interface.candidate.experiment import (
    AgentCandidateExperiment,
    CandidateExecutionEvidence,
)
from agent_interface.candidate.invalid_capture import CandidateInvalidCapture
from agent_interface.candidate.materialization import materialization_receipt
from agent_interface.candidate.verification_result import CandidateVerification
from agent_interface.core.errors import ContractError
from agent_interface.evaluator.experiment.cells import CellOutcome, CellRequest, failed_outcome
from agent_interface.evaluator.experiment.container_cells import ContainerCells
from agent_interface.evaluator.experiment.submission_policy import graded_files
from agent_interface.evaluator.experiment.task_grader import (
    DEFAULT_TASK_ROOT,
    GraderGap,
    grade_workspace,
    parse_workspace_grader,
    submission_policy,
)
from agent_interface.evaluator.experiment.workspace_outcome import (
    WorkspaceGap,
    WorkspaceLimits,
    files_of_directory,
    read_workspace,
    restore_profile_paths,
    workspace_outcome,
)
from agent_interface.evaluator.gateway import Upstream, upstream_from_spec
from agent_interface.evaluator.images.host_image import program_python
from agent_interface.evaluator.images.tree_removal import remove_tree
from agent_interface.evaluator.process.local_process import LocalExactProcessProvider
from agent_interface.evaluator.run.attempt import (
    artifact_bytes,
    execute_launch,
    host_executable,
    launch_request,
    local_container,
    stage_workspaces,
    system_prompt,
)
from agent_interface.evaluator.run.candidate_run import local_artifact_resolver
from agent_interface.evaluator.run.evidence import GradedOutcome, assemble_run, capture_gaps
from agent_interface.evaluator.run.grader import parse_output_checks
from agent_interface.evaluator.run.harness_attempt import HARNESS_TASK_ROOT, open_harness_attempt
from agent_interface.evaluator.run.model_access import (
    HOST_PROXY_PORT,
    GatewayHost,
    HostModelRoute,
    gateway_isolation,
    model_grant_digest,
)
from agent_interface.evaluator.verify.artifact_store import LocalArtifactStore

__all__ = ["ExactProcessCellRunner", "ProviderFactory", "ProviderRequest", "check_experiment_inputs", "host_provider"]

_LIFETIME_GRACE_MS: Final = 120_000
_INPUT_DIRECTORY: Final = TANGLE_CANDIDATE_TASK_FILE.rsplit("/", 1)[0]
_MIB: Final = 1024 * 1024


@dataclass(frozen=True, slots=True)
class ProviderRequest:
    """What a cell asks of its provider: a root, the image's executables, the capture bound
    of each output stream, (with ``private_root``) read-only and host-bound paths, and the
    network namespace its processes join (the one holding the model gateway's proxy)."""

    root: Path
    executables: tuple[str, ...]
    max_output_bytes: int
    private_root: bool = True
    read_only_paths: tuple[str, ...] = ()
    host_directories: Mapping[str, Path] = field(default_factory=dict)
    network_namespace: Path | None = None


ProviderFactory = Callable[[ProviderRequest], Awaitable[Any]]
"""Builds the exact-process provider one attempt (or its grader) runs on."""

_ISOLATION: list[Any] = []


async def host_provider(request: ProviderRequest) -> LocalExactProcessProvider:
    """The host exact-process provider for ``request`` (isolation detected once per process)."""
    if not _ISOLATION:
        from agent_interface.evaluator.process.isolation import detect_local_isolation

        _ISOLATION.append(await detect_local_isolation())
    isolation = _ISOLATION[0]
    if request.network_namespace is not None:
        isolation = gateway_isolation(isolation, request.network_namespace)
    return LocalExactProcessProvider(
        request.root, executables=request.executables, isolation=isolation,
        max_output_bytes=request.max_output_bytes, private_root=request.private_root,
        read_only_paths=request.read_only_paths, host_directories=request.host_directories)


def _resources(resources: Mapping[str, Any] | None) -> dict[str, Any]:
    return {"cpu": 1, "memoryMb": 1024, "diskMb": 256, **(resources or {})}


class ExactProcessCellRunner:
    """The default :class:`~.cells.CellRunner` (see the module docstring).

    ``verifications`` holds each arm's ``CandidateVerification``; ``artifacts`` a directory
    of external artifacts (files named by CID or sha256 hex); ``upstream`` is the model
    behind this process's gateway (the offline ``echo`` script by default); ``python`` is the interpreter the workspace capture program runs on;
    ``containers`` runs the cells that want a container in one
    (:mod:`.container_cells`; ``None``: every cell on ``provider``).
    """

    def __init__(self, experiment: AgentCandidateExperiment, verifications: Mapping[str, CandidateVerification], *,
                 artifacts: Path | None = None, provider: ProviderFactory = host_provider,
                 upstream: Upstream | None = None, resources: Mapping[str, Any] | None = None,
                 workspace_limits: WorkspaceLimits | None = None, python: str | None = None,
                 scratch: Path | None = None, containers: ContainerCells | None = None) -> None:
        self.experiment = experiment
        self.verifications = dict(verifications)
        self.artifacts = artifacts
        self.provider = provider
        self.gateway = GatewayHost(upstream if upstream is not None else upstream_from_spec("echo", None))
        self.resources = _resources(resources)
        self.workspace_limits = workspace_limits or WorkspaceLimits()
        self.python = python or program_python()
        self.scratch = scratch
        self.containers = containers

    async def run(self, request: CellRequest) -> CellOutcome:
        """Run one attempt; every failure becomes a ``failed`` outcome with a typed error."""
        started = time.monotonic()
        calls: list[int] = [0]
        try:
            outcome = await self._run(request, calls)
        except ContractError as error:
            issue = error.issues[0]
            outcome = failed_outcome(request, issue.path, issue.code, issue.message, model_calls=calls[0])
        except Exception as error:  # the guard: a cell never takes the engine down
            outcome = failed_outcome(request, "", "cell_infrastructure_error",
                                     f"the attempt could not run ({type(error).__name__})", model_calls=calls[0])
        outcome.evaluator_ms = int((time.monotonic() - started) * 1000)
        return outcome

    async def _run(self, request: CellRequest, calls: list[int]) -> CellOutcome:
        cell, experiment = request.cell, self.experiment
        bundle = experiment.baseline if cell.arm == "baseline" else experiment.candidate
        task = experiment.benchmark.tasks[cell.task_index]
        suite = experiment.benchmark.suite
        scratch = Path(tempfile.mkdtemp(prefix="agent-interface-cell-", dir=self.scratch))
        providers: list[Any] = []
        route: HostModelRoute | None = None
        try:
            store = LocalArtifactStore(scratch / "artifacts")
            resolver = local_artifact_resolver(self.artifacts, store)
            grader_bytes = artifact_bytes(task.grader.artifact.to_wire(), resolver, "/grader/artifact")
            workspace = task.outcome.kind == "workspace"
            grader = parse_workspace_grader(task.grader.name, task.grader.version, grader_bytes) if workspace else None
            checks = [] if workspace else parse_output_checks(task.grader.name, task.grader.version, grader_bytes)
            bound = max(16 * _MIB, self.workspace_limits.max_bytes + 1)
            containers = self.containers
            in_container = containers is not None and containers.wanted(bundle, task)
            calls_allowed = task.limits.max_model_calls > 0
            if calls_allowed:
                await self.gateway.start()
            gateway = self.gateway.address if calls_allowed else None
            if containers is not None and in_container:
                provider = await containers.open_attempt(cell.arm, cell.task_index, bundle, task, bound, gateway)
                python, proxy_port = containers.capture_python, provider.proxy_port
            else:
                executables = (host_executable(bundle), *((self.python,) if workspace else ()))
                python, proxy_port = self.python, HOST_PROXY_PORT
                if calls_allowed:
                    route = HostModelRoute(self.gateway, scratch)
                    await route.open()
                provider = await self.provider(ProviderRequest(
                    scratch / "provider", tuple(dict.fromkeys(executables)), bound,
                    read_only_paths=(_INPUT_DIRECTORY,),
                    network_namespace=None if route is None else route.namespace))
            providers.append(provider)
            exact = provider.exact_process
            if exact is None:
                raise ContractError.single("/", "exact_process_unavailable",
                                           "this host cannot block a process's network", subject="experiment cell")
            if bundle.execution.instruction_delivery.kind == "utf8-file" and not provider.private_root:
                raise ContractError.single("/execution/instructionDelivery", "instruction_delivery_unsupported",
                                           "no private mount namespace here for the fixed task file path",
                                           subject="experiment cell")
            model, harness = await open_harness_attempt(
                bundle, self.gateway if calls_allowed else None, run_id=request.execution_id, task=task,
                system_prompt=system_prompt(bundle), proxy_port=proxy_port, task_root=HARNESS_TASK_ROOT)
            grant = model_grant_digest(request.execution_id, task)
            placement = CandidateRunPlacement(
                experiment_digest=experiment.digest, execution_id=request.execution_id,
                container=provider.plan_container if in_container else local_container(provider.image),
                grant_digest=grant, arm=cell.arm,
                task_index=cell.task_index, repetition=cell.repetition, attempt=request.attempt,
                evaluator_env=model.env)
            context, plan = build_materialization_context(bundle, suite, task, placement,
                                                          native=None if harness is None else harness.native)
            receipt = materialization_receipt(self.verifications[cell.arm], context)
            gaps: list[dict[str, str]] = []
            result_files, skipped = None, list[str]()
            environment = None
            try:
                environment = await exact.create({
                    "image": provider.image, "egress": model.egress if in_container else {"mode": "blocked"},
                    "maxLifetimeMs": task.limits.timeout_ms + self.workspace_limits.timeout_ms + _LIFETIME_GRACE_MS,
                    "resources": self.resources, "metadata": {"executionId": request.execution_id},
                    "idempotencyKey": request.execution_id})
                activation = [f.to_wire() for f in context.profile_activation.files]
                await stage_workspaces(environment, plan, task, resolver, scratch, activation)
                if plan.material.instruction_delivery.kind == "utf8-file" and not in_container:  # else a bind
                    await environment.write_file(TANGLE_CANDIDATE_TASK_FILE, task.instruction.encode(), mode=0o444)
                launch = launch_request(plan, task.instruction)
                if harness is not None:
                    await harness.stage(environment)
                    launch = harness.launch_request(launch)
                capture = await execute_launch(environment, launch, model, task.limits.timeout_ms, None, None, harness)
                calls[0] = len(capture.calls)
                capture.provider, capture.environment_id = provider.name, environment.id
                if in_container:
                    capture.executor.update(provider.executor_record())
                if workspace and not capture_gaps(capture, task):  # an invalid run is neither captured nor graded
                    (scratch / "result").mkdir()
                    try:
                        result_files = await read_workspace(
                            environment, python=python, task_root=plan.material.workspaces.task_root,
                            limits=self.workspace_limits, scratch=scratch / "result", skipped=skipped)
                    except WorkspaceGap as gap:
                        gaps.append(gap.gap())
            finally:
                if environment is not None:
                    await asyncio.shield(environment.destroy())
            graded = None
            if workspace and result_files is not None and grader is not None:
                base = files_of_directory(scratch / "snapshot-0")
                if plan.material.profile.target_workspace == "task":
                    result_files = restore_profile_paths(result_files, base, plan.material.profile.mount_paths)
                graded = await self._grade(request, bundle, task, grader, base, result_files, store, scratch,
                                           providers, plan.material.workspaces.task_root, gaps, skipped)
            outcome = assemble_run(capture, plan=plan, receipt=receipt, task=task, checks=checks, store=store,
                                   graded=graded, gaps=gaps)
            artifacts = {path.name: path.read_bytes() for path in (scratch / "artifacts").iterdir()
                         if not path.name.startswith(".")}
            common: dict[str, Any] = {"materialization_receipt": receipt.to_wire(), "model_calls": len(capture.calls),
                      "artifacts": artifacts, "program_ms": capture.ended_at_ms - capture.started_at_ms}
            if isinstance(outcome, CandidateInvalidCapture):
                return CellOutcome(cell, request.attempt, request.execution_id, "invalid",
                                   invalid_capture=outcome.to_wire(), **common)
            evidence = CandidateExecutionEvidence.seal({"kind": "agent-candidate-execution-evidence",
                                                        "materializationReceipt": receipt.to_wire(),
                                                        "receipt": outcome.to_wire()})
            return CellOutcome(cell, request.attempt, request.execution_id, "done", evidence=evidence.to_wire(),
                               **common)
        finally:
            for opened in providers:
                opened.close()
            if route is not None:
                await route.close()
            remove_tree(scratch, ignore_errors=True)

    async def _grade(self, request: CellRequest, bundle: Any, task: Any, grader: Any,
                     base: dict[str, tuple[int, bytes]],
                     result: dict[str, tuple[int, bytes]], store: LocalArtifactStore, scratch: Path,
                     providers: list[Any], task_root: str, gaps: list[dict[str, str]],
                     skipped: list[str]) -> GradedOutcome | None:
        try:
            outcome = workspace_outcome(task, base, result, store, limits=self.workspace_limits)
        except WorkspaceGap as gap:
            gaps.append(gap.gap())
            return None
        if self.containers is not None and self.containers.grader_wanted(task):  # the task's own image
            provider = await self.containers.open_grader(request.cell.task_index, bundle, task,
                                                         grader.max_output_bytes)
        else:
            provider = await self.provider(ProviderRequest(scratch / "grader", tuple(grader.executables),
                                                           grader.max_output_bytes))
        providers.append(provider)
        if provider.exact_process is None:
            gaps.append(GraderGap("grader_failed", "no exact process for the grader here").gap())
            return None
        lifetime = sum(command.timeout_ms for command in grader.commands) + _LIFETIME_GRACE_MS
        create = {"image": provider.image, "egress": {"mode": "blocked"}, "maxLifetimeMs": lifetime,
                  "resources": self.resources, "metadata": {"executionId": request.execution_id, "role": "grader"},
                  "idempotencyKey": request.execution_id + "-grader"}
        files, actions = graded_files(base, result, submission_policy(grader, task_root, base), skipped)
        try:
            grade, started, ended = await grade_workspace(grader, provider.exact_process, create, task_root,
                                                          files, actions=actions, store=store)
        except GraderGap as gap:
            gaps.append(gap.gap())
            return None
        return GradedOutcome(outcome=outcome, grade=grade, started_at_ms=started, ended_at_ms=ended)


def check_experiment_inputs(experiment: AgentCandidateExperiment, artifacts: Path | None,
                            containers: ContainerCells | None = None) -> None:
    """Refuse, before any cell runs, what no cell of ``experiment`` could run here: without
    ``containers`` (or with the ``host`` executor), a bundle that pins a container or a task
    that selects one (the host provider runs host executables); with them, any image a
    cell or grader needs that the store cannot give (:meth:`.ContainerCells.check`); an
    entrypoint without interpreter, a host cell's launch executable not on this host, a
    grader this evaluator does not run or whose artifact is unavailable, and a workspace
    task whose snapshot is not its repository's base tree."""
    resolver = local_artifact_resolver(artifacts)
    tasks = experiment.benchmark.tasks
    for arm in ("baseline", "candidate"):
        bundle = getattr(experiment, arm)
        pointer = f"/{arm}/execution"
        in_container = [containers is not None and containers.wanted(bundle, task) for task in tasks]
        if all(in_container):  # the image's side of the launch: ContainerCells.check
            continue
        if bundle.execution.environment.kind == "pinned-container":
            raise ContractError.single(pointer + "/environment", "container_unavailable",
                                       "the host provider runs host executables, not the container the bundle pins",
                                       subject="experiment")
        if bundle.execution.launch.kind == "candidate-entrypoint" and bundle.execution.launch.interpreter is None:
            raise ContractError.single(pointer + "/launch/interpreter", "executable_unavailable",
                                       "entrypoints run through a host interpreter only", subject="experiment")
        host_executable(bundle)
    for index, task in enumerate(tasks):
        pointer = f"/benchmark/tasks/{index}"
        if task.evaluator_task_container is not None and (containers is None or not containers.runs_task_containers()):
            raise ContractError.single(pointer + "/evaluatorTaskContainer", "container_unavailable",
                                       "the host provider runs host executables, not the task's container",
                                       subject="experiment")
        data = artifact_bytes(task.grader.artifact.to_wire(), resolver, pointer + "/grader/artifact")
        if task.outcome.kind == "output":
            parse_output_checks(task.grader.name, task.grader.version, data)
            continue
        submission_policy(parse_workspace_grader(task.grader.name, task.grader.version, data), DEFAULT_TASK_ROOT, {})
        _check_base_tree(task, resolver, pointer)
    if containers is not None:
        containers.check(experiment)


def _check_base_tree(task: Any, resolver: Any, pointer: str) -> None:
    from agent_interface.evaluator.git.tree_hash import git_tree_id_of_directory
    from agent_interface.evaluator.run.snapshot import unpack_snapshot

    repository = task.repository
    evidence = task.workspace.to_wire()
    scratch = Path(tempfile.mkdtemp(prefix="agent-interface-base-"))
    try:
        archive = artifact_bytes(evidence["archive"], resolver, pointer + "/workspace/archive")
        unpack_snapshot(evidence["material"], archive, scratch, pointer=pointer + "/workspace")
        object_format = "sha1" if len(repository.base_commit) == 40 else "sha256"
        if git_tree_id_of_directory(scratch, object_format) != repository.base_tree:
            raise ContractError.single(pointer + "/workspace", "workspace_base_mismatch",
                                       "the task workspace snapshot is not its repository's base tree",
                                       subject="experiment")
    finally:
        remove_tree(scratch, ignore_errors=True)
