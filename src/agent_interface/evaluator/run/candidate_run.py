"""Run a verified candidate on one task, on this machine, and write its receipts.

:func:`run_candidate` (and :func:`run_candidate_async`) does, in order, stopping at the
first refusal:

1. **verify** the bundle (the integrity verifier, every check);
2. **plan**: the run cell, profile plan and activation, execution plan and
   materialization context, with the public builders of
   :mod:`agent_interface.candidate.plan_builders`; mint the materialization receipt;
3. **stage** an exact-process environment (the local provider by default): the task
   workspace snapshot under the task root, the candidate workspace snapshot under the
   candidate root (each unpacked safely and compared with its manifest first), the
   profile files, and the instruction by the plan's delivery (stdin bytes then EOF, one
   final argv element, or the file ``/tangle/input/task.txt``, read-only, named by
   ``TANGLE_CANDIDATE_TASK_PATH``);
4. **run** the plan's launch (argv only, the plan's ``env`` as the whole environment,
   the task's ``timeoutMs``), with the evaluator's model gateway
   (:class:`~agent_interface.evaluator.gateway.ModelGateway`, one per run, on the
   ``upstream`` the caller chose) as the only way to a model, reached as
   ``model-gateway.internal`` through a strict-egress proxy (:mod:`.model_access`);
5. **capture** and **assemble** (:mod:`.run_evidence`): the run receipt, or an invalid
   capture when usage, trace, termination, executor capture or task outcome is incomplete.

Everything is written into ``out`` (which must not exist yet) through a temporary
directory beside it that is renamed at the end: ``materialization-receipt.json``,
``run-receipt.json`` *or* ``invalid-capture.json``, and ``artifacts/`` (the CID-named
store holding every referenced artifact). A refusal leaves no ``out``, no environment
and no process. The local run's limits: the local provider's image is the host
executable the plan launches (pinned by content); a bundle that pins a container or a task
that selects one runs in an OCI container instead (:mod:`.container_run`, by default when
the bundle or task names one). A workspace outcome or isolated memory is refused up front.
Where a private mount namespace works, the process is rooted at its environment
(:attr:`.LocalExactProcessProvider.private_root`): the plan's paths (``/tangle/task``,
``/tangle/input/task.txt``) are its own; elsewhere file delivery is refused
(``instruction_delivery_unsupported``). A host-provider run whose task allows model calls
needs root and plain namespaces (the process joins a namespace holding the gateway's
proxy); elsewhere it is refused (``model_gateway_unreachable``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from agent_interface.candidate.bundle import AgentCandidateBundle
from agent_interface.candidate.context_builder import (
    CandidateRunPlacement,
    build_materialization_context,
)
from agent_interface.candidate.execution_plan import (
    TANGLE_CANDIDATE_TASK_FILE,
    AgentCandidateExecutionPlanEvidence,
)
from agent_interface.candidate.invalid_capture import CandidateInvalidCapture
from agent_interface.candidate.materialization import materialization_receipt
from agent_interface.candidate.receipts import (
    AgentCandidateMaterializationReceipt,
    AgentCandidateRunReceipt,
)
from agent_interface.candidate.tasks import (
    AgentCandidateBenchmarkSuite,
    AgentCandidateBenchmarkTask,
)
from agent_interface.core.canonical import canonical_digest
from agent_interface.core.errors import ContractError
from agent_interface.evaluator.gateway import Upstream, upstream_from_spec
from agent_interface.evaluator.git.limits import GitLimits
from agent_interface.evaluator.images.oci_store import OciImageStore
from agent_interface.evaluator.images.tree_removal import remove_tree
from agent_interface.evaluator.process.local_process import LocalExactProcessProvider
from agent_interface.evaluator.run.attempt import (
    CandidateRunProgress,
    CandidateRunRefused,
    artifact_bytes,
    execute_launch,
    host_executable,
    launch_request,
    local_container,
    stage_workspaces,
    system_prompt,
    task_artifact,
)
from agent_interface.evaluator.run.container_run import ContainerRun, Executor, container_wanted
from agent_interface.evaluator.run.evidence import assemble_run
from agent_interface.evaluator.run.grader import parse_output_checks
from agent_interface.evaluator.run.harness_attempt import HARNESS_TASK_ROOT, open_harness_attempt
from agent_interface.evaluator.run.model_access import (
    HOST_PROXY_PORT,
    GatewayHost,
    HostModelRoute,
    gateway_isolation,
    model_grant_digest,
)
from agent_interface.evaluator.run.output_directory import (
    claim_output_directory,
    publish_output_directory,
)
from agent_interface.evaluator.run.write_atomic import write_json_atomic
from agent_interface.evaluator.verify.artifact_store import LocalArtifactStore
from agent_interface.evaluator.verify.integrity import verify_candidate_bundle
from agent_interface.evaluator.verify.resolver import (
    ArtifactRequest,
    ArtifactResolver,
    ResolutionRefused,
)

__all__ = [
    "CandidateRunProgress",
    "CandidateRunRefused",
    "CandidateRunResult",
    "fetch_artifact",
    "local_artifact_resolver",
    "run_candidate",
    "run_candidate_async",
]

_LIFETIME_GRACE_MS: Final = 120_000
_INPUT_DIRECTORY: Final = TANGLE_CANDIDATE_TASK_FILE.rsplit("/", 1)[0]


@dataclass(frozen=True, slots=True)
class CandidateRunResult:
    """What a run produced: the plan and materialization receipt, then exactly one of the
    run receipt or the invalid capture; ``out`` is where they were written."""

    out: Path
    plan: AgentCandidateExecutionPlanEvidence
    materialization_receipt: AgentCandidateMaterializationReceipt
    run_receipt: AgentCandidateRunReceipt | None
    invalid_capture: CandidateInvalidCapture | None


def _refuse(pointer: str, code: str, message: str, document: str = "bundle") -> ContractError:
    return CandidateRunRefused(document, pointer, code, message)


class _LocalFiles:
    """Artifacts from a directory of files named by CID or by sha256 hex."""

    def __init__(self, directory: Path | None, store: LocalArtifactStore | None) -> None:
        self.directory = directory
        self.store = store

    def fetch(self, request: ArtifactRequest) -> bytes:
        sources: list[Any] = [] if self.store is None else [self.store]
        if self.directory is not None:
            sources.insert(0, LocalArtifactStore(self.directory))
        for source in sources:
            with contextlib.suppress(ResolutionRefused):
                return bytes(source.fetch(request))
        if self.directory is not None:
            path = self.directory / request.digest_hex
            if path.is_file():
                with path.open("rb") as handle:
                    return handle.read(request.byte_length + 1)
        raise ResolutionRefused("artifact_unavailable", "no local file holds this artifact")


def local_artifact_resolver(directory: Path | None, store: LocalArtifactStore | None = None) -> ArtifactResolver:
    """A resolver over local files named by CID or by sha256 hex (and ``store``)."""
    return _LocalFiles(directory, store)


def fetch_artifact(artifact: Mapping[str, Any], resolver: ArtifactResolver | None, pointer: str) -> bytes:
    """The checked bytes of a captured artifact (embedded, or through ``resolver``)."""
    if resolver is None and artifact.get("encoding") != "base64":
        raise _refuse(pointer, "artifact_unavailable", "no resolver for a located artifact")
    return artifact_bytes(artifact, resolver, pointer)  # type: ignore[arg-type]


def _preflight(bundle: AgentCandidateBundle, task: AgentCandidateBenchmarkTask, in_container: bool = False) -> None:
    if bundle.execution.environment.kind == "pinned-container" and not in_container:
        raise _refuse("/execution/environment", "container_unavailable",
                      "the local evaluator runs host executables, not the container the bundle pins")
    if task.evaluator_task_container is not None and not in_container:
        raise _refuse("/evaluatorTaskContainer", "container_unavailable",
                      "the local evaluator runs host executables, not the container the task selects", "task")
    if task.outcome.kind != "output":
        raise _refuse("/outcome/kind", "outcome_unsupported",
                      "the local evaluator captures output outcomes (standard output) only", "task")
    if (bundle.execution.launch.kind == "candidate-entrypoint" and bundle.execution.launch.interpreter is None
            and not in_container):  # in a container it runs directly (container_run.check_image_launch)
        raise _refuse("/execution/launch/interpreter", "executable_unavailable",
                      "the local evaluator launches entrypoints through a host interpreter only")


async def run_candidate_async(
    bundle: bytes | str | Mapping[str, Any],
    *,
    repository: str | os.PathLike[str] | None,
    task: AgentCandidateBenchmarkTask,
    out: str | os.PathLike[str],
    suite: AgentCandidateBenchmarkSuite | None = None,
    artifacts: str | os.PathLike[str] | None = None,
    upstream: Upstream | None = None,
    experiment_digest: str | None = None,
    progress: Callable[[CandidateRunProgress], None] | None = None,
    cancel: asyncio.Event | None = None,
    resources: Mapping[str, Any] | None = None,
    git_limits: GitLimits | None = None,
    executor: Executor = "auto",
    images: OciImageStore | str | os.PathLike[str] | None = None,
    image: str | None = None,
) -> CandidateRunResult:
    """Verify, plan, stage, run, capture and write receipts (see the module docstring).

    ``suite`` defaults to the one-task suite of ``task`` (one repetition, seed 0);
    ``experiment_digest`` to the digest of ``{kind: "agent-interface.local-run", suite}``;
    ``upstream`` (the model behind the run's gateway, chosen by the evaluator) to the
    offline ``echo`` script (:func:`~agent_interface.evaluator.gateway.upstream_from_spec`); ``cancel``, once set, ends the process as cancelled.
    Refusals raise ``ContractError`` (``CandidateVerificationRefused`` for the bundle).
    ``executor``, ``images`` (an image store) and ``image`` (the evaluator's
    ``name@sha256:<index>``) choose a container run: see :mod:`.container_run`.
    """
    try:
        task.verify_digest()
    except ContractError as error:
        issue = error.issues[0]
        raise CandidateRunRefused("task", issue.path, issue.code, issue.message) from None
    if suite is None:
        suite = AgentCandidateBenchmarkSuite.seal({"kind": "agent-candidate-benchmark-suite",
                                                   "digestAlgorithm": "rfc8785-sha256",
                                                   "taskDigests": [task.digest], "reps": 1, "seeds": [0]})
    work = claim_output_directory(out, pointer="/out", may_exist_empty=False)
    scratch = Path(tempfile.mkdtemp(prefix="agent-interface-run-"))
    provider: LocalExactProcessProvider | ContainerRun | None = None
    gateway = GatewayHost(upstream if upstream is not None else upstream_from_spec("echo", None))
    route: HostModelRoute | None = None
    try:
        store = LocalArtifactStore(work / "artifacts")
        resolver = _LocalFiles(Path(artifacts) if artifacts is not None else None, store)
        # The namespace probe runs while the verifier's git processes do (and ends either way).
        probe = asyncio.ensure_future(_isolation())
        try:
            verification = await asyncio.to_thread(
                verify_candidate_bundle, bundle, repository=None if repository is None else Path(repository),
                resolver=resolver, git_limits=git_limits)
        finally:
            isolation = await probe
        parsed = AgentCandidateBundle.parse_wire(bundle if not isinstance(bundle, str) else bundle.encode())
        in_container = container_wanted(parsed, task, executor, image)
        _preflight(parsed, task, in_container)
        grader = task.grader
        grader_bytes = task_artifact(grader.artifact.to_wire(), resolver, "/grader/artifact",
                                      f"the task's grader {grader.name} {grader.version}")
        try:
            checks = parse_output_checks(grader.name, grader.version, grader_bytes)
        except ContractError as error:
            issue = error.issues[0]
            raise CandidateRunRefused("task", issue.path, issue.code, issue.message) from None
        calls_allowed = task.limits.max_model_calls > 0
        if calls_allowed:
            await gateway.start()
        if in_container:
            provider = await ContainerRun.open(parsed, task, images=images, image=image,
                                               gateway=gateway.address if calls_allowed else None)
            proxy_port = provider.proxy_port
        else:
            executable = host_executable(parsed)
            if calls_allowed:
                route = HostModelRoute(gateway, scratch)
                isolation = gateway_isolation(isolation, route.namespace)
                await route.open()
            proxy_port = HOST_PROXY_PORT
            provider = LocalExactProcessProvider(
                scratch / "provider", executables=[executable], isolation=isolation, private_root=True,
                read_only_paths=[_INPUT_DIRECTORY])
        exact = provider.exact_process
        if exact is None:
            raise _refuse("/", "exact_process_unavailable",
                          "this host cannot confine a process (block its network, run it as a user of "
                          "its own, and keep host sockets out of reach with a private root), so no "
                          "exact process can run here")
        if parsed.execution.instruction_delivery.kind == "utf8-file" and not provider.private_root:
            raise _refuse("/execution/instructionDelivery", "instruction_delivery_unsupported",
                          "this host gives no private mount namespace, so the fixed task file path "
                          "cannot be the process's own path")
        execution_id = "local-" + uuid.uuid4().hex
        model, harness = await open_harness_attempt(
            parsed, gateway, run_id=execution_id, task=task, system_prompt=system_prompt(parsed),
            proxy_port=proxy_port, task_root=HARNESS_TASK_ROOT)
        grant = model_grant_digest(execution_id, task)
        placement = CandidateRunPlacement(
            experiment_digest=experiment_digest or canonical_digest(
                {"kind": "agent-interface.local-run", "suite": suite.digest}),
            execution_id=execution_id, grant_digest=grant,
            container=provider.plan_container if isinstance(provider, ContainerRun) else local_container(provider.image),
            evaluator_env=model.env,
            task_index=list(suite.task_digests).index(task.digest) if task.digest in suite.task_digests else 0,
        )
        context, plan = build_materialization_context(parsed, suite, task, placement,
                                                      native=None if harness is None else harness.native)
        receipt = materialization_receipt(verification, context)
        write_json_atomic(work / "materialization-receipt.json", receipt.to_wire())
        environment = None
        try:
            environment = await exact.create({
                "image": provider.image,
                "egress": model.egress if isinstance(provider, ContainerRun) else {"mode": "blocked"},
                "maxLifetimeMs": task.limits.timeout_ms + _LIFETIME_GRACE_MS,
                "resources": dict(resources or {"cpu": 1, "memoryMb": 1024, "diskMb": 256}),
                "metadata": {"executionId": execution_id}, "idempotencyKey": execution_id,
            })
            activation = [f.to_wire() for f in context.profile_activation.files]
            await stage_workspaces(environment, plan, task, resolver, scratch, activation)
            if plan.material.instruction_delivery.kind == "utf8-file" and not in_container:  # else a bind
                await environment.write_file(TANGLE_CANDIDATE_TASK_FILE, task.instruction.encode(), mode=0o444)
            request = launch_request(plan, task.instruction)
            if harness is not None:
                await harness.stage(environment)
                request = harness.launch_request(request)
            capture = await execute_launch(environment, request, model, task.limits.timeout_ms, progress, cancel,
                                           harness)
            capture.provider, capture.environment_id = provider.name, environment.id
            if isinstance(provider, ContainerRun):
                capture.executor.update(provider.executor_record())
        finally:
            if environment is not None:
                await asyncio.shield(environment.destroy())
        outcome = assemble_run(capture, plan=plan, receipt=receipt, task=task, checks=checks, store=store)
        if isinstance(outcome, CandidateInvalidCapture):
            write_json_atomic(work / "invalid-capture.json", outcome.to_wire())
        else:
            write_json_atomic(work / "run-receipt.json", outcome.to_wire())
        target = publish_output_directory(work, out, pointer="/out")
    except BaseException:
        remove_tree(work, ignore_errors=True)
        raise
    finally:
        if provider is not None:
            provider.close()
        if route is not None:
            await route.close()
        await gateway.close()
        remove_tree(scratch, ignore_errors=True)
    return CandidateRunResult(
        out=target, plan=plan, materialization_receipt=receipt,
        run_receipt=None if isinstance(outcome, CandidateInvalidCapture) else outcome,
        invalid_capture=outcome if isinstance(outcome, CandidateInvalidCapture) else None,
    )


async def _isolation() -> Any:
    from agent_interface.evaluator.process.isolation import detect_local_isolation

    return await detect_local_isolation()


def run_candidate(bundle: bytes | str | Mapping[str, Any], **options: Any) -> CandidateRunResult:
    """Synchronous :func:`run_candidate_async` (same keyword arguments)."""
    return asyncio.run(run_candidate_async(bundle, **options))

