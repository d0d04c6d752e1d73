"""The state an :class:`~agent_interface.testing.provider.InMemoryAgentEnvironmentProvider`
keeps, shared by the provider and the environment handles it returns.

A test may read it (``provider.state.environments``) to see what the provider holds;
nothing here checks a rule, the provider and its environments do.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from agent_interface.core.errors import ContractError
from agent_interface.core.model import FrozenDict
from agent_interface.environment.capabilities import AgentEnvironmentCapabilities
from agent_interface.environment.events import AgentEnvironmentEvent, AgentEnvironmentStatus
from agent_interface.environment.workspace import AgentSessionStatus, canonical_workspace_cwd
from agent_interface.provider.turn import AgentTurnResult

__all__ = [
    "InMemoryEnvironmentRecord",
    "InMemoryProviderState",
    "InMemorySessionRecord",
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
class InMemorySessionRecord:
    """One session of an environment: its events so far, its last result and the task
    of a detached turn. ``changed`` wakes readers waiting for events."""

    id: str
    status: AgentSessionStatus = "pending"
    events: list[AgentEnvironmentEvent] = field(default_factory=list)
    result: AgentTurnResult | None = None
    task: asyncio.Future[AgentTurnResult] | None = None
    changed: asyncio.Condition = field(default_factory=asyncio.Condition)
    counter: Iterator[int] = field(default_factory=lambda: itertools.count(1))


@dataclass
class InMemoryEnvironmentRecord:
    """One environment: its metadata snapshot, working directory, files and sessions."""

    id: str
    name: str | None
    metadata: FrozenDict[str, Any] | None
    cwd: str
    env: dict[str, str]
    files: dict[str, str]
    status: AgentEnvironmentStatus = "running"
    sessions: dict[str, InMemorySessionRecord] = field(default_factory=dict)


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
        """A number no environment or session of this provider has used."""
        return next(self.ids)
