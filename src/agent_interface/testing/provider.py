"""A small but real in-memory environment provider.

:class:`InMemoryAgentEnvironmentProvider` keeps environments, their workspace files and
their sessions in memory, and honors every capability it declares:

* **create** applies the keyed create contract: the same ``idempotencyKey`` with the
  same canonical input returns the same environment (``creation: "replayed"``), a
  changed input is refused before a second create effect, and concurrent same-key calls
  produce exactly one create effect (:attr:`create_effects` counts them);
* **metadata** is a detached, deeply immutable snapshot;
* **profiles**: only inline ``resources.files`` are supported; they are mounted into the
  workspace at create. Anything else a profile asks for (a system prompt, tools, MCP,
  a per-turn profile, a catalog id) is refused before any effect;
* **workspace**: ``read``, ``write`` and ``exec`` on repository-relative paths; ``cwd``
  accepts the ``repository`` base only. ``exec`` runs a tiny shell-free command set
  (``echo``, ``cat``, ``ls``, ``pwd``, ``true``, ``false``, ``exit N``);
* **turns and sessions** (retained, on
  :class:`~agent_interface.testing.retained_runs.RetainedSessions`): a turn runs one
  command; ``stream`` follows it live, ``dispatch`` detaches it and answers the run's
  exact :class:`~agent_interface.runtime.control.AgentRunControlRef` (provider,
  environment, session, run, execution, admission digest); ``session(id,
  control_ref=...)`` replays events after a cursor, waits for the result, continues with
  ``prompt`` and cancels, and refuses a reference to any run but the session's current
  one; ``provider.get(id)`` rebuilds all of it from the id alone. A ``turnId`` is
  idempotent: the same turn answers its original run, a changed one is refused;
* **durable branching** (when ``durable_branching=True``): ``workspace_branching`` is an
  :class:`~agent_interface.testing.branching.InMemoryWorkspaceBranching` whose forks are
  real environments holding their own copy of the checkpointed files.

It declares no ``interactions``, ``contextTransfer``, ``nativeContinuation`` or
``retainedControl``: a command turn asks no questions and has no conversation to carry or
continue natively. Those surfaces have their own in-memory implementations
(:class:`~agent_interface.testing.InMemoryRetainedSessionProvider` with
:class:`~agent_interface.testing.InMemoryInteractions`,
:class:`~agent_interface.testing.InMemoryPortableContext`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agent_interface.core.errors import ContractError, ContractIssue
from agent_interface.durable.checkpoint import WorkspaceCheckpointRequest
from agent_interface.durable.fork import ForkedEnvironmentRef
from agent_interface.durable.portable_context import plain_wire
from agent_interface.environment.capabilities import (
    AgentEnvironmentCapabilities,
    accepts_cwd_base,
)
from agent_interface.environment.workspace import (
    AgentEnvironmentQuery,
    AgentEnvironmentSummary,
    RepositoryWorkspaceCwd,
)
from agent_interface.profile.agent_profile import AgentProfile
from agent_interface.provider.create import (
    AgentEnvironmentCreateIdempotencyRecord,
    create_agent_environment_with_idempotency,
    detached_metadata,
)
from agent_interface.provider.protocols import as_create_input
from agent_interface.provider.turn import (
    CreateAgentEnvironmentInput,
    turn_profile_refusals,
)
from agent_interface.testing.branching import InMemoryWorkspaceBranching
from agent_interface.testing.environment import InMemoryAgentEnvironment
from agent_interface.testing.provider_state import (
    InMemoryProviderState,
    workspace_path,
)

__all__ = [
    "InMemoryAgentEnvironmentProvider",
    "in_memory_capabilities",
]


def in_memory_capabilities(*, durable_branching: bool = True) -> AgentEnvironmentCapabilities:
    """The capability document of :class:`InMemoryAgentEnvironmentProvider`."""
    branching: dict[str, bool] = (
        {"checkpoint": True, "fork": True, "retrySafe": True, "lookup": True, "cleanup": True}
        if durable_branching
        else {"checkpoint": False, "fork": False}
    )
    return AgentEnvironmentCapabilities.parse_wire(
        {
            "profile": {
                "namedProfiles": False,
                "systemPrompt": {"replace": False, "append": False},
                "instructions": False,
                "tools": False,
                "permissions": False,
                "mcp": False,
                "subagents": False,
                "resources": {"files": True, "instructions": False},
                "hooks": False,
                "modes": False,
                "runtimeUpdate": False,
                "validation": False,
            },
            "streaming": {"live": True, "replay": True, "detach": True, "turnIdempotency": True},
            "sessions": {"continue": True, "list": False, "messages": False},
            "workspace": {
                "read": True,
                "write": True,
                "exec": True,
                "git": False,
                "upload": False,
                "download": False,
                "cwdBases": {"repository": True, "host": False},
            },
            "branching": branching,
            "placement": True,
            "usage": False,
            "confidential": False,
        }
    )



# ---------------------------------------------------------------------------
# Provider
# ---------------------------------------------------------------------------


class InMemoryAgentEnvironmentProvider:
    """An environment provider held entirely in memory (see the module docstring).

    ``create`` takes a :class:`CreateAgentEnvironmentInput` (or its wire mapping);
    ``state`` is what the provider holds, for tests that look inside.
    """

    def __init__(self, *, name: str = "in-memory", durable_branching: bool = True) -> None:
        self.state = InMemoryProviderState(name=name, capabilities=in_memory_capabilities(durable_branching=durable_branching))
        self._records: dict[str, AgentEnvironmentCreateIdempotencyRecord[InMemoryAgentEnvironment]] = {}
        self.create_effects = 0
        """How many times create provisioned an environment (replays add nothing)."""
        if durable_branching:
            engine = InMemoryWorkspaceBranching(
                provider=name,
                forks_own_copy=True,
                new_environment_id=lambda: f"env-{self.state.next_id()}",
                on_fork_created=self._fork_created,
                on_fork_destroyed=self._fork_destroyed,
            )
            self.state.branching = _SnapshottingBranching(self, engine)

    @property
    def name(self) -> str:
        return self.state.name

    async def capabilities(self) -> AgentEnvironmentCapabilities:
        return self.state.capabilities

    # create ------------------------------------------------------------------------------

    def _admit_create(self, input: CreateAgentEnvironmentInput | Mapping[str, Any]) -> CreateAgentEnvironmentInput:
        parsed = as_create_input(input)
        capabilities = self.state.capabilities
        issues: list[ContractIssue] = []
        if isinstance(parsed.profile, str):
            issues.append(ContractIssue("/profile", "named_profile_unsupported", "this provider has no profile catalog"))
        else:
            issues.extend(turn_profile_refusals(capabilities, parsed.profile, per_turn=False))
            issues.extend(_unmountable_resources(parsed.profile))
        if parsed.backend is not None:
            issues.append(ContractIssue("/backend", "backend_unsupported", "this provider runs commands only"))
        if parsed.secrets is not None:
            issues.append(ContractIssue("/secrets", "secrets_unsupported", "this provider holds no secrets"))
        workspace = parsed.workspace
        if workspace is not None:
            for key, value in (("environment", workspace.environment), ("image", workspace.image), ("repoUrl", workspace.repo_url)):
                if value is not None:
                    issues.append(ContractIssue(f"/workspace/{key}", "workspace_source_unsupported", "this provider starts from an empty workspace"))
            if workspace.cwd is not None and not accepts_cwd_base(capabilities, workspace.cwd.base):
                issues.append(ContractIssue("/workspace/cwd/base", "cwd_base_unsupported", "this provider accepts repository-based cwd only"))
        if issues:
            raise ContractError(issues, subject="CreateAgentEnvironmentInput")
        return parsed

    async def create(self, input: CreateAgentEnvironmentInput | Mapping[str, Any]) -> InMemoryAgentEnvironment:
        """Create, or replay by ``idempotencyKey``; every refusal precedes any effect."""
        parsed = self._admit_create(input)

        async def provision() -> InMemoryAgentEnvironment:
            if parsed.requested_id is not None and parsed.requested_id in self.state.environments:
                raise ContractError.single("/requestedId", "requested_id_taken", "an environment with this id already exists")
            env_id = parsed.requested_id or f"env-{self.state.next_id()}"
            cwd = parsed.workspace.cwd if parsed.workspace is not None else None
            record = self.state.add_environment(
                env_id,
                name=parsed.name,
                metadata=detached_metadata(parsed.metadata),
                cwd=cwd.path if isinstance(cwd, RepositoryWorkspaceCwd) else ".",
                env=dict(parsed.env or {}),
                files=_mounted_files(parsed.profile),
            )
            self.create_effects += 1
            return InMemoryAgentEnvironment(self.state, record, "created")

        return await create_agent_environment_with_idempotency(self._records, parsed, provision)

    async def get(self, id: str) -> InMemoryAgentEnvironment | None:
        record = self.state.environments.get(id)
        return None if record is None else InMemoryAgentEnvironment(self.state, record, None)

    async def list(self, query: AgentEnvironmentQuery | Mapping[str, Any] | None = None) -> list[AgentEnvironmentSummary]:
        if query is not None and not isinstance(query, AgentEnvironmentQuery):
            query = AgentEnvironmentQuery.parse_wire(query)
        found: list[AgentEnvironmentSummary] = []
        for record in self.state.environments.values():
            if query is not None and query.name is not None and record.name != query.name:
                continue
            if query is not None and query.metadata is not None:
                held: Mapping[str, Any] = record.metadata or {}
                if any(key not in held or held[key] != value for key, value in query.metadata.items()):
                    continue
            found.append(
                AgentEnvironmentSummary(
                    id=record.id, provider=self.state.name, name=record.name, status=record.status,
                    metadata=record.metadata,
                )
            )
        return found

    # forks ----------------------------------------------------------------------------------

    async def _fork_created(self, ref: ForkedEnvironmentRef) -> None:
        files = self.state.snapshots.get(ref.source_checkpoint_id, {})
        self.state.add_environment(ref.environment_id, metadata=detached_metadata(ref.metadata), files=files)

    async def _fork_destroyed(self, ref: ForkedEnvironmentRef) -> None:
        record = self.state.environments.pop(ref.environment_id, None)
        if record is not None:
            record.status = "stopped"
            await record.sessions.close()


class _SnapshottingBranching:
    """The durable engine, plus a file snapshot taken when a checkpoint is created."""

    def __init__(self, provider: InMemoryAgentEnvironmentProvider, engine: InMemoryWorkspaceBranching) -> None:
        self._provider = provider
        self.engine = engine

    @property
    def provider(self) -> str:
        return self.engine.provider

    @property
    def forks_own_copy(self) -> bool:
        return self.engine.forks_own_copy

    @property
    def capabilities(self) -> dict[str, bool]:
        return self.engine.capabilities

    async def checkpoint(self, request: Any) -> Any:
        exact = request if isinstance(request, WorkspaceCheckpointRequest) else WorkspaceCheckpointRequest.parse_wire(plain_wire(request))
        source = self._provider.state.environments.get(exact.source.environment_id)
        files = dict(source.files) if source is not None else None
        result = await self.engine.checkpoint(exact)
        if getattr(result, "status", None) == "created":
            self._provider.state.snapshots[result.checkpoint.checkpoint_id] = files or {}
        return result

    async def lookup_checkpoint(self, request: Any) -> Any:
        return await self.engine.lookup_checkpoint(request)

    async def delete_checkpoint(self, request: Any) -> Any:
        result = await self.engine.delete_checkpoint(request)
        if getattr(result, "status", None) == "deleted":
            self._provider.state.snapshots.pop(result.target_id, None)
        return result

    async def fork(self, request: Any) -> Any:
        return await self.engine.fork(request)

    async def lookup_fork(self, request: Any) -> Any:
        return await self.engine.lookup_fork(request)

    async def destroy_fork(self, request: Any) -> Any:
        return await self.engine.destroy_fork(request)


def _mounted_files(profile: AgentProfile | str) -> dict[str, str]:
    if isinstance(profile, str) or profile.resources is None or profile.resources.files is None:
        return {}
    files: dict[str, str] = {}
    for mount in profile.resources.files:
        resource = mount.resource
        if getattr(resource, "kind", None) == "inline":
            files[workspace_path(".", mount.path)] = resource.content  # type: ignore[union-attr]
    return files


def _unmountable_resources(profile: AgentProfile) -> list[ContractIssue]:
    issues: list[ContractIssue] = []
    if profile.resources is None or profile.resources.files is None:
        return issues
    for index, mount in enumerate(profile.resources.files):
        if getattr(mount.resource, "kind", None) != "inline":
            issues.append(
                ContractIssue(
                    f"/profile/resources/files/{index}/resource",
                    "resource_unresolvable",
                    "this provider mounts inline resources only",
                )
            )
        try:
            if workspace_path(".", mount.path) == ".":
                raise ContractError.single("/path", "path_is_root", "a file cannot be mounted at the root")
        except ContractError as error:
            issues.append(ContractIssue(f"/profile/resources/files/{index}/path", error.issues[0].code, "mount path must stay inside the workspace"))
    return issues
