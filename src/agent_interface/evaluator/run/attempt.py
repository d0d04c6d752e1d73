"""The steps of one attempt on an exact-process environment, shared by every run path.

:mod:`.candidate_run` (one candidate on one task) and the experiment engine
(:mod:`agent_interface.evaluator.experiment.cells`) both run a planned attempt the same
way: the host executable the plan launches (:func:`host_executable`), the plan's
container on this host (:func:`local_container`), the system prompt the model gateway
prepends (:func:`system_prompt`), the task and candidate snapshots and the profile
files written into the environment (:func:`stage_workspaces`), the launch request
(:func:`launch_request`) and the supervised run with its capture and the settlement of
its model gateway run (:func:`execute_launch`). Artifact bytes are fetched and checked by :func:`artifact_bytes`.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
import platform
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from agent_interface.candidate.bundle import AgentCandidateBundle
from agent_interface.candidate.execution_plan import AgentCandidateExecutionPlanEvidence
from agent_interface.candidate.plan_builders import planned_launch
from agent_interface.candidate.tasks import AgentCandidateBenchmarkTask
from agent_interface.core.canonical import sha256_bytes
from agent_interface.core.errors import ContractError, ContractIssue
from agent_interface.core.model import WireModel
from agent_interface.evaluator.run.evidence import RunCapture
from agent_interface.evaluator.run.model_access import ModelAccess
from agent_interface.evaluator.run.snapshot import unpack_snapshot
from agent_interface.evaluator.verify.resolver import (
    ArtifactRequest,
    ArtifactResolver,
    ResolutionRefused,
)

__all__ = [
    "CandidateRunProgress",
    "CandidateRunRefused",
    "artifact_bytes",
    "execute_launch",
    "host_executable",
    "launch_request",
    "local_container",
    "stage_workspaces",
    "system_prompt",
    "task_artifact",
]

_ARCH: Final = {"x86_64": "amd64", "aarch64": "arm64"}


@dataclass(frozen=True, slots=True)
class CandidateRunProgress:
    """A progress snapshot while the candidate runs."""

    elapsed_ms: int
    model_calls: int
    timeout_ms: int


class CandidateRunRefused(ContractError):
    """A run refused before or while staging: ``document`` names the input at fault
    (``"bundle"``, ``"task"``, ``"out"``), so a caller can blame the right file."""

    def __init__(self, document: str, pointer: str, code: str, message: str) -> None:
        super().__init__([ContractIssue(pointer, code, message)], subject=f"local candidate run ({document})")
        self.document = document


def _refuse(pointer: str, code: str, message: str, document: str = "bundle") -> ContractError:
    return CandidateRunRefused(document, pointer, code, message)


def task_artifact(artifact: Mapping[str, Any], resolver: ArtifactResolver, pointer: str, what: str) -> bytes:
    """The bytes of an artifact the task names; a refusal blames the task and says which."""
    try:
        return artifact_bytes(artifact, resolver, pointer)
    except ContractError as error:
        issue = error.issues[0]
        detail = f"{what} ({artifact.get('sha256')}): {issue.message}"
        raise CandidateRunRefused("task", pointer, issue.code, detail) from None


def artifact_bytes(artifact: Mapping[str, Any], resolver: ArtifactResolver, pointer: str) -> bytes:
    """The bytes of an embedded or located artifact, refused unless they are the declared ones."""
    if artifact.get("encoding") == "base64":
        data = base64.b64decode(artifact["content"])
    else:
        locator = artifact["locator"]
        try:
            data = resolver.fetch(ArtifactRequest(
                pointer=pointer, kind=locator["kind"],
                locator={k: str(v) for k, v in locator.items() if k != "kind"},
                sha256=artifact["sha256"], byte_length=artifact["byteLength"],
            ))
        except ResolutionRefused as error:  # its issue has no pointer: give it the artifact's
            raise _refuse(pointer, error.code, error.reason) from None
    if len(data) != artifact["byteLength"] or sha256_bytes(data) != artifact["sha256"]:
        raise _refuse(pointer, "artifact_mismatch", "the artifact bytes are not the declared ones")
    return data


def host_executable(bundle: AgentCandidateBundle) -> str:
    """The host file the plan's executable names (absolute, or found along the bundle's PATH)."""
    execution = bundle.execution.to_wire()
    executable, _ = planned_launch(execution, "/tangle/candidate")
    if executable.startswith("/"):
        return executable
    path = (execution.get("env") or {}).get("PATH", {}).get("value", "")
    for directory in path.split(":"):
        candidate = f"{directory.rstrip('/')}/{executable}"
        if directory.startswith("/") and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    raise _refuse("/execution/launch", "executable_unavailable",
                  "the launch's executable is not on this host along the bundle's PATH")


def local_container(image: str) -> dict[str, Any]:
    """The plan's container for a host image reference (``local-host@sha256:...``)."""
    digest = image.split("@", 1)[1]
    return {"source": "evaluator-task-container", "image": "local-host", "indexDigest": digest,
            "manifestDigest": digest,
            "platform": {"os": "linux", "architecture": _ARCH.get(platform.machine(), platform.machine())}}


def system_prompt(bundle: AgentCandidateBundle) -> str:
    """The profile's system prompt and appended prompt, joined."""
    prompt = bundle.profile.prompt
    if prompt is None:
        return ""
    return "\n\n".join(text for text in (prompt.system_prompt, prompt.append_system_prompt) if text)


async def stage_workspaces(environment: Any, plan: AgentCandidateExecutionPlanEvidence,
                           task: AgentCandidateBenchmarkTask, resolver: ArtifactResolver, scratch: Path,
                           activation_files: list[dict[str, Any]]) -> None:
    """Write the task and candidate snapshots (each checked against its manifest first) and the
    profile files into ``environment``; ``scratch`` is an empty host directory."""
    material = plan.material
    snapshots = [("/workspace", material.workspaces.task_root, task.workspace.to_wire())]
    if material.candidate_workspace is not None and material.workspaces.candidate_root is not None:
        snapshots.append(("/execution/workspace", material.workspaces.candidate_root,
                          material.candidate_workspace.to_wire()))
    for index, (pointer, root, evidence) in enumerate(snapshots):
        archive = (task_artifact(evidence["archive"], resolver, pointer + "/archive", "the task's workspace archive")
                   if pointer == "/workspace" else artifact_bytes(evidence["archive"], resolver, pointer + "/archive"))
        target = scratch / f"snapshot-{index}"
        target.mkdir()
        for entry in unpack_snapshot(evidence["material"], archive, target, pointer=pointer):
            data = (target / entry.path).read_bytes()
            await environment.write_file(f"{root}/{entry.path}", data, mode=entry.mode)
    target_root = material.workspaces.candidate_root if material.profile.target_workspace == "candidate" \
        else material.workspaces.task_root
    for file in activation_files:
        await environment.write_file(f"{target_root}/{file['path']}", file["content"].encode(), mode=file["mode"])


def launch_request(plan: AgentCandidateExecutionPlanEvidence, instruction: str) -> dict[str, Any]:
    """The exact-process launch of the plan, the instruction delivered as the plan says."""
    material = plan.material
    launch = material.launch
    root = material.workspaces.candidate_root if launch.cwd.workspace == "candidate" else material.workspaces.task_root
    args = [value.value for value in launch.args]
    request: dict[str, Any] = {
        "executable": launch.executable,
        "cwd": root if launch.cwd.path == "." else f"{root}/{launch.cwd.path}",
        "env": {name: value.value for name, value in launch.env.items()},
        "timeoutMs": material.limits.timeout_ms,
    }
    delivery = material.instruction_delivery.kind
    if delivery == "argv-append":
        args.append(instruction)
    elif delivery == "stdin-utf8":
        request["stdin"] = instruction
    request["args"] = args
    return request


def _wire(value: Any) -> dict[str, Any] | None:
    if value is None:
        return None
    if isinstance(value, WireModel):
        return value.to_wire()
    return dict(value)


async def execute_launch(environment: Any, launch: dict[str, Any], model: ModelAccess, timeout_ms: int,
                         progress: Callable[[CandidateRunProgress], None] | None,
                         cancel: asyncio.Event | None) -> RunCapture:
    """Spawn ``launch``, wait for its end (killing it once ``cancel`` is set), settle its
    model gateway run (later calls refused) and capture it. The run's gateway token is added
    to the environment here, at launch only (never in the plan)."""
    started = int(time.time() * 1000)
    process = await environment.process.spawn(model.launch(launch))
    waiter = asyncio.ensure_future(process.wait())
    try:
        while not waiter.done():
            done, _ = await asyncio.wait({waiter}, timeout=0.25)
            if progress is not None:
                progress(CandidateRunProgress(int(time.time() * 1000) - started, model.call_count(), timeout_ms))
            if cancel is not None and cancel.is_set() and not done:
                await process.kill()
        termination = waiter.result()
    except BaseException:
        waiter.cancel()
        with contextlib.suppress(Exception):
            await asyncio.shield(process.kill())
        raise
    settled = await model.settle()
    ended = max([int(time.time() * 1000), *(call.ended_at_ms for call in settled.calls)])
    container_id = getattr(process, "container_id", None)
    executor = {} if container_id is None else {"containerId": container_id, "oomKilled": await process.oom_killed()}
    if hasattr(process, "output_bytes"):
        stdout, stderr = await process.output_bytes("stdout"), await process.output_bytes("stderr")
        dropped = await process.output_dropped()
    else:
        stdout = "".join([chunk async for chunk in process.stdout()]).encode()
        stderr = "".join([chunk async for chunk in process.stderr()]).encode()
        dropped = {}
    return RunCapture(started_at_ms=started, ended_at_ms=ended, termination=_wire(termination), stdout=stdout,
                      stderr=stderr, dropped=dropped, calls=settled.calls,
                      unsettled_calls=settled.unsettled, events=settled.events, executor=executor,
                      usage_within_limits=settled.usage_within_limits)
