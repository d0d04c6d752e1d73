"""An in-memory provider whose sessions are retained: detach, replay, reconstruction and
typed interactions.

:class:`InMemoryRetainedSessionProvider` is a small provider for the session-replay and
interaction kits (and for tests of code that drives retained sessions). Its sessions run
on :class:`~agent_interface.testing.retained_runs.RetainedSessions`, the engine the
command-turn :class:`~agent_interface.testing.InMemoryAgentEnvironmentProvider` uses too:

* ``dispatch`` starts a turn detached and answers its session reference with the run's
  :class:`~agent_interface.runtime.control.AgentRunControlRef` (run, environment,
  session, execution and the admission digest of the turn);
* ``session(id, control_ref=...)`` rebuilds a session client from those coordinates
  alone; a reference to any run but the session's current one is refused;
* ``events(since=..., execution_id=...)`` replays the session's events after a stable,
  unique event id, then follows the live run until it ends; an unknown cursor or
  another run's execution id is refused;
* ``provider.get(id)`` reconstructs the environment, so a fresh client sees exactly the
  same events;
* a turn with a ``turnId`` is idempotent: the same turn answers the same session and
  run without a second run (concurrent calls included), a changed turn under a used
  ``turnId`` is refused before any effect;
* ``respond_to_interaction`` on the environment and on each session answers through
  :class:`~agent_interface.testing.interactions.InMemoryInteractions`
  (:attr:`InMemoryRetainedSessionProvider.interactions`); tests originate requests with
  :meth:`InMemoryRetainedSessionProvider.open_interaction`. A cancelled run's pending
  interactions are cancelled with it.

It supports no profile feature, no workspace and no create option beyond a name and
metadata: each is refused before any effect. A turn is scripted: it reports
``running``, one assistant message and its result.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from agent_interface.core.errors import ContractError, ContractIssue
from agent_interface.core.model import FrozenDict
from agent_interface.environment.capabilities import AgentEnvironmentCapabilities
from agent_interface.environment.events import AgentEnvironmentEvent, AgentEnvironmentStatus
from agent_interface.provider.capability_builder import CapabilityBuilder
from agent_interface.provider.create import (
    AgentEnvironmentCreateIdempotencyRecord,
    create_agent_environment_with_idempotency,
    detached_metadata,
)
from agent_interface.provider.protocols import as_create_input, as_turn_input
from agent_interface.provider.turn import (
    AgentEnvironmentCreation,
    AgentSessionRef,
    AgentTurnInput,
    AgentTurnResult,
    CreateAgentEnvironmentInput,
    require_turn_profile_supported,
    turn_profile_refusals,
)
from agent_interface.runtime.control import AgentRunControlRef
from agent_interface.runtime.interaction_requests import (
    InteractionRequest,
    InteractionRequestMaterial,
)
from agent_interface.runtime.interaction_responses import (
    InteractionAcknowledgement,
    InteractionResponseCommand,
)
from agent_interface.testing.interactions import InMemoryInteractions
from agent_interface.testing.retained_runs import (
    InMemoryAgentSession,
    RetainedRun,
    RetainedSessions,
    TurnEmit,
)

__all__ = [
    "InMemoryRetainedEnvironment",
    "InMemoryRetainedSession",
    "InMemoryRetainedSessionProvider",
    "retained_session_capabilities",
]


def retained_session_capabilities() -> AgentEnvironmentCapabilities:
    """The capability document of :class:`InMemoryRetainedSessionProvider`."""
    # ``profile()`` writes ``hooks`` and ``modes`` as false, as the document always has.
    return (
        CapabilityBuilder()
        .profile()
        .streaming(live=True, replay=True, detach=True, turn_idempotency=True)
        .sessions(continue_=True)
        .interactions(
            kinds=("question", "permission"),
            answer_field_types=("text", "number", "boolean", "select", "secret"),
            response_scopes=("interaction", "session", "persistent"),
            secret_answers=True,
            concurrent_requests=True,
            replay=True,
            response_idempotency=True,
        )
        .build()
    )


@dataclass(eq=False)
class _Environment:
    id: str
    name: str | None
    metadata: FrozenDict[str, Any] | None
    sessions: RetainedSessions
    status: AgentEnvironmentStatus = "running"


class InMemoryRetainedSession(InMemoryAgentSession):
    """A client of one retained session that also answers its runs' interactions; any
    number of clients see the same session."""

    def __init__(
        self,
        sessions: RetainedSessions,
        session_id: str,
        *,
        control_ref: AgentRunControlRef | None,
        start: Callable[[AgentTurnInput], RetainedRun],
        interactions: InMemoryInteractions,
    ) -> None:
        super().__init__(sessions, session_id, control_ref=control_ref, start=start)
        self._interactions = interactions

    async def respond_to_interaction(self, command: InteractionResponseCommand | Mapping[str, Any]) -> InteractionAcknowledgement:
        """Answer an interaction of this session's runs (another session's is a mismatch)."""
        return await self._interactions.respond(
            command, environment_id=self._sessions.environment_id, session_id=self.id
        )


class InMemoryRetainedEnvironment:
    """A client of one environment; ``provider.get(id)`` builds another over the same state."""

    def __init__(
        self, provider: InMemoryRetainedSessionProvider, state: _Environment, creation: AgentEnvironmentCreation | None
    ) -> None:
        self._provider = provider
        self._state = state
        self._creation = creation

    @property
    def id(self) -> str:
        return self._state.id

    @property
    def provider(self) -> str:
        return self._provider.name

    @property
    def name(self) -> str | None:
        return self._state.name

    @property
    def creation(self) -> AgentEnvironmentCreation | None:
        return self._creation

    @property
    def metadata(self) -> FrozenDict[str, Any] | None:
        return self._state.metadata

    @property
    def capabilities(self) -> None:
        return None  # the provider document describes every environment

    async def status(self) -> AgentEnvironmentStatus:
        return self._state.status

    def _start(self, input: AgentTurnInput | Mapping[str, Any]) -> RetainedRun:
        """Admit one turn and start it (or answer the run its ``turnId`` started)."""
        turn = as_turn_input(input)
        if self._state.status != "running":
            raise ContractError.single("", "environment_not_running", "the environment is not running")
        require_turn_profile_supported(self._provider._capabilities, turn)
        for path, value in (("/controlRef", turn.control_ref), ("/contextTransfer", turn.context_transfer),
                            ("/nativeContinuation", turn.native_continuation)):
            if value is not None:
                raise ContractError.single(path, "turn_field_unsupported", "this provider does not declare this turn capability")
        return self._state.sessions.start(turn, self._play)

    async def _play(self, turn: AgentTurnInput, control: AgentRunControlRef, emit: TurnEmit) -> AgentTurnResult:
        emit(AgentEnvironmentEvent(type="status", data={"status": "running", "runId": control.run_id}))
        await asyncio.sleep(0)
        text = f"done: {turn.prompt or ''}"[:200]
        emit(AgentEnvironmentEvent(type="message", data={"role": "assistant", "text": text}))
        await asyncio.sleep(0)
        emit(AgentEnvironmentEvent(type="result", data={"finalText": text, "status": "completed"}))
        return AgentTurnResult(text=text, success=True, session_id=control.session_id)

    async def dispatch(self, input: AgentTurnInput | Mapping[str, Any]) -> AgentSessionRef:
        """Start a turn detached; the answer carries the run's control reference."""
        run = self._start(input)
        return AgentSessionRef(id=run.session_id, provider=self.provider, control_ref=run.control)

    def stream(self, input: AgentTurnInput | Mapping[str, Any]) -> AsyncIterator[AgentEnvironmentEvent]:
        """Start a turn and follow its events live (a known ``turnId`` follows its run).
        Refusals raise here, before dispatch."""
        return self._state.sessions.run_events(self._start(input))

    def session(self, id: str, *, control_ref: AgentRunControlRef | Mapping[str, Any] | None = None) -> InMemoryRetainedSession:
        """A client of session ``id``; ``control_ref`` must name its current run."""
        sessions = self._state.sessions
        return InMemoryRetainedSession(
            sessions, id, control_ref=sessions.bind(id, control_ref), start=self._start, interactions=self._provider.interactions
        )

    async def respond_to_interaction(self, command: InteractionResponseCommand | Mapping[str, Any]) -> InteractionAcknowledgement:
        """Answer an interaction of this environment's runs."""
        return await self._provider.interactions.respond(command, environment_id=self.id)

    async def destroy(self) -> None:
        """Stop the environment: its running turns are cancelled and it is forgotten."""
        self._state.status = "stopped"
        self._provider._environments.pop(self._state.id, None)
        await self._state.sessions.close()


class InMemoryRetainedSessionProvider:
    """A provider of retained sessions held in memory (see the module docstring)."""

    def __init__(self, *, name: str = "in-memory-retained", interactions: InMemoryInteractions | None = None) -> None:
        self._name = name
        self._capabilities = retained_session_capabilities()
        self._environments: dict[str, _Environment] = {}
        self._records: dict[str, AgentEnvironmentCreateIdempotencyRecord[InMemoryRetainedEnvironment]] = {}
        self._ids = itertools.count(1)
        self.interactions = interactions or InMemoryInteractions()
        """The interactions of every run of this provider."""

    @property
    def name(self) -> str:
        return self._name

    async def capabilities(self) -> AgentEnvironmentCapabilities:
        return self._capabilities

    def _register_run(self, control: AgentRunControlRef) -> None:
        self.interactions.register_run(
            {
                "runId": control.run_id,
                "provider": control.provider,
                "environmentId": control.environment_id,
                "sessionId": control.session_id,
                "executionId": control.execution_id,
            }
        )

    def _cancel_run(self, control: AgentRunControlRef) -> None:
        self.interactions.cancel(control.run_id)

    async def create(self, input: CreateAgentEnvironmentInput | Mapping[str, Any]) -> InMemoryRetainedEnvironment:
        """Create, or replay by ``idempotencyKey``. A profile asking for anything (a
        catalog id, a prompt, tools, resources...), a backend, secrets or a workspace is
        refused before any effect."""
        parsed = as_create_input(input)
        issues: list[ContractIssue] = []
        if isinstance(parsed.profile, str):
            issues.append(ContractIssue("/profile", "named_profile_unsupported", "this provider has no profile catalog"))
        else:
            issues.extend(turn_profile_refusals(self._capabilities, parsed.profile, per_turn=False))
        for key, value in (("/backend", parsed.backend), ("/secrets", parsed.secrets), ("/workspace", parsed.workspace)):
            if value is not None:
                issues.append(ContractIssue(key, "create_field_unsupported", "this provider does not support this create field"))
        if issues:
            raise ContractError(issues, subject="CreateAgentEnvironmentInput")

        async def provision() -> InMemoryRetainedEnvironment:
            environment_id = parsed.requested_id or f"env-{next(self._ids)}"
            if environment_id in self._environments:
                raise ContractError.single("/requestedId", "requested_id_taken", "an environment with this id already exists")
            sessions = RetainedSessions(
                provider=self._name,
                environment_id=environment_id,
                new_number=lambda: next(self._ids),
                on_run=self._register_run,
                on_cancelled=self._cancel_run,
            )
            state = _Environment(environment_id, parsed.name, detached_metadata(parsed.metadata), sessions)
            self._environments[environment_id] = state
            return InMemoryRetainedEnvironment(self, state, "created")

        return await create_agent_environment_with_idempotency(self._records, parsed, provision)

    async def get(self, id: str) -> InMemoryRetainedEnvironment | None:
        """A fresh client of environment ``id`` (``None`` when there is none)."""
        state = self._environments.get(id)
        return None if state is None else InMemoryRetainedEnvironment(self, state, None)

    def open_interaction(self, material: InteractionRequestMaterial | Mapping[str, Any]) -> InteractionRequest:
        """Originate a pending interaction on one of this provider's runs (the binding
        names the run); see :meth:`InMemoryInteractions.open`."""
        return self.interactions.open(material)
