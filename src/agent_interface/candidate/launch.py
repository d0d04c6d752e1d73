"""How a candidate is executed (``agent-candidate-code-schema.ts``, execution half).

The launch is shell-free: a container command or a candidate entrypoint, with public
argv values only. A relative executable, or an entrypoint run through an interpreter,
needs an explicit public ``PATH``. The task instruction reaches the process in exactly
one closed way: one final argv element, exact UTF-8 bytes on stdin followed by EOF, or a
fixed file whose path is exposed as ``TANGLE_CANDIDATE_TASK_PATH`` (a name the candidate
cannot set itself). Network, remote integrations and candidate secrets are disabled.

The container is either pinned by the candidate (an OCI reference outside private
networks plus its index digest) or chosen per task by the evaluator.
"""

from __future__ import annotations

import re
from typing import Annotated, Final, Literal, Self

from pydantic import AfterValidator, Field, model_validator
from pydantic_core import PydanticCustomError

from agent_interface.candidate.artifacts import AgentCandidateWorkspaceSnapshotEvidence
from agent_interface.candidate.common import (
    AgentCandidateConfigValue,
    CandidateEnvironmentConfig,
    SafeExecutable,
    is_obviously_private_hostname,
    relative_path,
)
from agent_interface.core.canonical import Sha256Digest
from agent_interface.core.contract_limits import Utf16Length, js_trim
from agent_interface.core.errors import Refinement
from agent_interface.core.model import WireList, WireModel
from agent_interface.core.registry import register_wire_models
from agent_interface.profile.harness import HarnessType

__all__ = [
    "TANGLE_CANDIDATE_TASK_PATH",
    "AgentCandidateArgvAppendDelivery",
    "AgentCandidateContainer",
    "AgentCandidateContainerLaunch",
    "AgentCandidateEntrypointInterpreter",
    "AgentCandidateEntrypointLaunch",
    "AgentCandidateEvaluatorTaskEnvironment",
    "AgentCandidateExecution",
    "AgentCandidateExecutionEnvironment",
    "AgentCandidateExecutionIsolation",
    "AgentCandidateFileDelivery",
    "AgentCandidateInstructionDelivery",
    "AgentCandidateLaunch",
    "AgentCandidatePinnedContainerEnvironment",
    "AgentCandidateStdinDelivery",
    "AgentCandidateWorkingDirectory",
    "is_safe_oci_image",
]

TANGLE_CANDIDATE_TASK_PATH: Final = "TANGLE_CANDIDATE_TASK_PATH"
"""The environment name under which file delivery exposes the instruction path."""

_OCI_IMAGE_RE: Final = re.compile(r"[A-Za-z0-9._:/-]+")


def is_safe_oci_image(value: str) -> bool:
    """An OCI reference without credentials, scheme or embedded digest whose explicit
    registry (if any) is not an obviously private host."""
    if _OCI_IMAGE_RE.fullmatch(value) is None or "@" in value or "://" in value:
        return False
    parts = value.split("/")
    if len(parts) < 2:
        return True
    first = parts[0]
    if not ("." in first or ":" in first or first == "localhost"):
        return True
    hostname = first.split(":", 1)[0]
    return hostname != "" and not is_obviously_private_hostname(hostname)


def _oci_image(value: str) -> str:
    if not is_safe_oci_image(value):
        raise PydanticCustomError(
            "unsafe_oci_image",
            "image must be a non-private OCI reference without credentials or an embedded digest",
        )
    return value


_NonEmpty = Annotated[str, Utf16Length(min=1)]


class AgentCandidateContainer(WireModel):
    """A base image chosen by the candidate, pinned by its OCI index digest."""

    image: Annotated[str, Utf16Length(min=1), AfterValidator(_oci_image)]
    index_digest: Sha256Digest


class AgentCandidatePinnedContainerEnvironment(WireModel):
    """The candidate runs in the container it pins itself (image and index digest), whatever the
    task."""

    kind: Literal["pinned-container"]
    container: AgentCandidateContainer


class AgentCandidateEvaluatorTaskEnvironment(WireModel):
    """The evaluator selects the task container per task and binds it in the plan."""

    kind: Literal["evaluator-task-container"]


AgentCandidateExecutionEnvironment = Annotated[
    AgentCandidatePinnedContainerEnvironment | AgentCandidateEvaluatorTaskEnvironment,
    Field(discriminator="kind"),
]


class AgentCandidateWorkingDirectory(WireModel):
    """The working directory of a launch: a canonical relative path inside the candidate or the task
    workspace."""

    workspace: Literal["candidate", "task"]
    path: Annotated[
        str,
        relative_path(
            allow_dot=True,
            code="unsafe_cwd",
            message="cwd path must be a canonical workspace-relative path",
        ),
    ]


class AgentCandidateContainerLaunch(WireModel):
    """Run a command that exists in the container image."""

    kind: Literal["container-command"]
    executable: SafeExecutable
    args: WireList[AgentCandidateConfigValue] | None = None


AgentCandidateEntrypointInterpreter = Literal["node", "python", "python3", "bun", "deno", "tsx", "uv"]


class AgentCandidateEntrypointLaunch(WireModel):
    """Run a file of the candidate workspace, directly or through an interpreter."""

    kind: Literal["candidate-entrypoint"]
    entrypoint: Annotated[
        str,
        relative_path(
            allow_dot=False,
            code="unsafe_entrypoint",
            message="entrypoint must be a canonical candidate-relative path",
        ),
    ]
    interpreter: AgentCandidateEntrypointInterpreter | None = None
    args: WireList[AgentCandidateConfigValue] | None = None


AgentCandidateLaunch = Annotated[
    AgentCandidateContainerLaunch | AgentCandidateEntrypointLaunch, Field(discriminator="kind")
]


class AgentCandidateArgvAppendDelivery(WireModel):
    """The instruction is one final argv element, after candidate and materializer args."""

    kind: Literal["argv-append"]


class AgentCandidateStdinDelivery(WireModel):
    """The exact instruction bytes are written to stdin, which is then closed."""

    kind: Literal["stdin-utf8"]


class AgentCandidateFileDelivery(WireModel):
    """The exact bytes are written to ``/tangle/input/task.txt``, exposed through the env."""

    kind: Literal["utf8-file"]
    env: Literal["TANGLE_CANDIDATE_TASK_PATH"]
    path: Literal["/tangle/input/task.txt"]


AgentCandidateInstructionDelivery = Annotated[
    AgentCandidateArgvAppendDelivery | AgentCandidateStdinDelivery | AgentCandidateFileDelivery,
    Field(discriminator="kind"),
]


class AgentCandidateExecutionIsolation(WireModel):
    """What a replayed candidate may not use: network, remote integrations and candidate secrets are
    all disabled."""

    network: Literal["disabled"]
    remote_integrations: Literal["disabled"]
    candidate_secrets: Literal["disabled"]


class AgentCandidateExecution(WireModel):
    """The shell-free contract for replaying a candidate."""

    harness: HarnessType
    harness_version: _NonEmpty
    launch: AgentCandidateLaunch
    instruction_delivery: AgentCandidateInstructionDelivery
    cwd: AgentCandidateWorkingDirectory
    env: CandidateEnvironmentConfig | None = None
    environment: AgentCandidateExecutionEnvironment
    workspace: AgentCandidateWorkspaceSnapshotEvidence | None = None
    """The complete executable directory after build, before task execution."""
    isolation: AgentCandidateExecutionIsolation

    @model_validator(mode="after")
    def _launch_rules(self) -> Self:
        refinement = Refinement("AgentCandidateExecution")
        launch = self.launch
        if isinstance(launch, AgentCandidateContainerLaunch):
            needs_path = not launch.executable.startswith("/")
        else:
            needs_path = launch.interpreter is not None
        env = self.env or {}
        path = env.get("PATH")
        if needs_path and (path is None or js_trim(path.value) == ""):
            refinement.add(
                ("env", "PATH"), "candidate_path_required",
                "relative candidate executables require an explicit public PATH",
            )
        if TANGLE_CANDIDATE_TASK_PATH in env:
            refinement.add(
                ("env", TANGLE_CANDIDATE_TASK_PATH), "task_path_reserved",
                "the evaluator exclusively owns task-instruction delivery",
            )
        refinement.check()
        return self


register_wire_models(
    AgentCandidateContainer=AgentCandidateContainer,
    AgentCandidatePinnedContainerEnvironment=AgentCandidatePinnedContainerEnvironment,
    AgentCandidateEvaluatorTaskEnvironment=AgentCandidateEvaluatorTaskEnvironment,
    AgentCandidateExecutionEnvironment=AgentCandidateExecutionEnvironment,
    AgentCandidateWorkingDirectory=AgentCandidateWorkingDirectory,
    AgentCandidateContainerLaunch=AgentCandidateContainerLaunch,
    AgentCandidateEntrypointLaunch=AgentCandidateEntrypointLaunch,
    AgentCandidateLaunch=AgentCandidateLaunch,
    AgentCandidateInstructionDelivery=AgentCandidateInstructionDelivery,
    AgentCandidateExecution=AgentCandidateExecution,
)
