"""The state an :class:`~agent_interface.testing.provider.InMemoryAgentEnvironmentProvider`
keeps, shared by the provider and the environment handles it returns.

A test may read it (``provider.state.environments``) to see what the provider holds;
nothing here checks a rule, the provider and its environments do.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from agent_interface.core.errors import ContractError
from agent_interface.core.model import FrozenDict
from agent_interface.environment.capabilities import AgentEnvironmentCapabilities
from agent_interface.environment.events import AgentEnvironmentStatus
from agent_interface.environment.workspace import canonical_workspace_cwd
from agent_interface.testing.retained_runs import RetainedSessions

__all__ = [
    "InMemoryEnvironmentRecord",
    "InMemoryProviderState",
    "workspace_path",
]


def workspace_path(cwd: str, path: str) -> str:
    """``path`` resolved under the repository-relative ``cwd``, canonical (``.`` is the
    root). A path that escapes the workspace, is absolute or uses backslashes is refused
    (``ContractError`` at ``/path``)."""
    joined = path if cwd == "." else f"{cwd}/{path}"
    try:
        return canonical_workspace_cwd({"base": "repository", "path": joined}).path
    except ContractError as error:
        raise ContractError.single(
            "/path", error.issues[0].code, "workspace path must stay inside the workspace"
        ) from None


@dataclass
class InMemoryEnvironmentRecord:
    """One environment: its metadata snapshot, working directory, files and its retained
    sessions (:class:`~agent_interface.testing.retained_runs.RetainedSessions`)."""

    id: str
    name: str | None
    metadata: FrozenDict[str, Any] | None
    cwd: str
    env: dict[str, str]
    files: dict[str, str]
    sessions: RetainedSessions
    status: AgentEnvironmentStatus = "running"


@dataclass
class InMemoryProviderState:
    """Everything one in-memory provider holds: its name and capability document, its
    live environments by id, the files of every checkpoint by checkpoint id, its durable
    branching engine (or ``None``) and the counter its ids come from."""

    name: str
    capabilities: AgentEnvironmentCapabilities
    environments: dict[str, InMemoryEnvironmentRecord] = field(default_factory=dict)
    snapshots: dict[str, dict[str, str]] = field(default_factory=dict)
    branching: Any = None
    ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    def next_id(self) -> int:
        """A number no environment, session or run of this provider has used."""
        return next(self.ids)

    def add_environment(
        self,
        id: str,
        *,
        name: str | None = None,
        metadata: FrozenDict[str, Any] | None = None,
        cwd: str = ".",
        env: dict[str, str] | None = None,
        files: dict[str, str] | None = None,
    ) -> InMemoryEnvironmentRecord:
        """Record a new running environment ``id`` (with no session yet) and return it."""
        record = InMemoryEnvironmentRecord(
            id=id,
            name=name,
            metadata=metadata,
            cwd=cwd,
            env=dict(env or {}),
            files=dict(files or {}),
            sessions=RetainedSessions(provider=self.name, environment_id=id, new_number=self.next_id),
        )
        self.environments[id] = record
        return record
