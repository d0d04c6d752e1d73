"""A small, well-behaved provider whose capability document is chosen per test.

It exposes exactly the optional members its document declares, so one document can
claim usage, interactions, retained control, native continuation, exact process, context
transfer and the rest, which the in-memory provider does not. ``broken_providers`` breaks
one promise of it at a time.
"""

from __future__ import annotations

import asyncio
import copy
import itertools
from collections.abc import AsyncIterator, Mapping
from typing import Any

from agent_interface.core.errors import ContractError
from agent_interface.core.model import FrozenDict
from agent_interface.environment.capabilities import (
    AgentEnvironmentCapabilities,
    accepts_cwd_base,
    declares_durable_branching,
)
from agent_interface.environment.events import AgentEnvironmentEvent
from agent_interface.environment.workspace import (
    AgentEnvironmentSummary,
    CheckpointRef,
    ExecResult,
    PlacementInfo,
)
from agent_interface.provider.create import (
    AgentEnvironmentCreateIdempotencyRecord,
    create_agent_environment_with_idempotency,
    detached_metadata,
)
from agent_interface.provider.protocols import as_create_input, as_turn_input
from agent_interface.provider.turn import (
    AgentSessionRef,
    AgentTurnInput,
    AgentTurnResult,
    CreateAgentEnvironmentInput,
    require_turn_profile_supported,
    turn_profile_refusals,
)
from agent_interface.testing import InMemoryWorkspaceBranching

DISABLED: dict[str, Any] = {
    "profile": {
        "namedProfiles": False,
        "systemPrompt": {"replace": False, "append": False},
        "instructions": False,
        "tools": False,
        "permissions": False,
        "mcp": False,
        "subagents": False,
        "resources": {"files": False, "instructions": False},
        "runtimeUpdate": False,
        "validation": False,
    },
    "streaming": {"live": True, "replay": False, "detach": False, "turnIdempotency": False},
    "sessions": {"continue": False, "list": False, "messages": False},
    "workspace": {"read": False, "write": False, "exec": False, "git": False, "upload": False, "download": False},
    "branching": {"checkpoint": False, "fork": False},
    "placement": False,
    "usage": False,
    "confidential": False,
}
"""Every capability off (the reference testkit's ``disabledCapabilities``)."""

RETAINED = {"exactRunIdentity": True, "resultIdentity": True, "eventIdentity": True, "cancellationIdempotency": True}
NATIVE = {"atomicBoundary": True, "requestIdempotency": True}
INTERACTIONS = {
    "kinds": ["permission"],
    "answerFieldTypes": ["boolean"],
    "responseScopes": ["interaction"],
    "secretAnswers": False,
    "concurrentRequests": False,
    "replay": False,
    "responseIdempotency": True,
}
DURABLE = {"checkpoint": True, "fork": True, "retrySafe": True, "lookup": True, "cleanup": True}


def document(**changes: Any) -> dict[str, Any]:
    """:data:`DISABLED` with top-level blocks replaced or (for dicts) merged."""
    doc = copy.deepcopy(DISABLED)
    for key, value in changes.items():
        if isinstance(value, dict) and isinstance(doc.get(key), dict):
            doc[key] = {**doc[key], **value}
        else:
            doc[key] = value
    return doc


COMPLETE = document(
    profile={"systemPrompt": {"replace": False, "append": True}, "runtimeUpdate": False},
    streaming={"live": True, "replay": True, "detach": True, "turnIdempotency": True},
    sessions={"continue": True, "list": False, "messages": False},
    workspace={"read": True, "write": True, "exec": True, "cwdBases": {"repository": True, "host": False}},
    branching=DURABLE,
    placement=True,
    usage=True,
    retainedControl=RETAINED,
    nativeContinuation=NATIVE,
    interactions=INTERACTIONS,
    exactProcess={"egress": ["blocked"]},
    contextTransfer={"freshSession": True, "requestIdempotency": True, "lookup": True},
    observation=dict.fromkeys(
        ("identity", "lifecycle", "endpoint", "placement", "resources", "resourceUse", "modelUsage", "computeBilling", "accountUsage"),
        True,
    ),
    interactiveTerminal={"attach": True, "input": True, "resize": True, "reattach": True},
    interactiveAgent=dict.fromkeys(
        ("start", "control", "status", "attach", "reattach", "sendPrompt", "input", "resize", "stop"), True
    ),
)
"""A document that declares nearly everything the surface rules judge."""


async def stub(*_args: Any, **_kwargs: Any) -> Any:
    raise NotImplementedError("present for the surface; not exercised by the provider kit")


def stub_sync(*_args: Any, **_kwargs: Any) -> Any:
    raise NotImplementedError("present for the surface; not exercised by the provider kit")


class FakeSession:
    """A session handle: its members follow the document."""

    def __init__(self, environment: FakeEnvironment, session_id: str) -> None:
        self.id = session_id
        self._environment = environment
        caps = environment.capabilities_model
        if caps.retained_control is not None:
            self.cancel_run = stub
        if caps.native_continuation is not None:
            self.context_boundary = stub
            self.continue_native = stub

    async def status(self) -> str | None:
        return "completed" if self.id in self._environment.sessions else None

    async def events(self, *, since: str | None = None, execution_id: str | None = None) -> AsyncIterator[AgentEnvironmentEvent]:
        for event in self._environment.sessions.get(self.id, []):
            yield event

    async def result(self) -> AgentTurnResult:
        return AgentTurnResult(text="ok", success=True, session_id=self.id)

    async def prompt(self, input: AgentTurnInput) -> AgentTurnResult:
        return AgentTurnResult(text="ok", success=True, session_id=self.id)

    async def cancel(self) -> None:
        return None


class FakeEnvironment:
    """One environment of :class:`FakeProvider`."""

    def __init__(self, provider: FakeProvider, env_id: str, metadata: Mapping[str, Any] | None) -> None:
        self._provider = provider
        self.id = env_id
        self.provider = provider.name
        self.creation: str | None = "created"
        self._metadata = detached_metadata(metadata)
        self.state = "running"
        self.files: dict[str, str] = {}
        self.sessions: dict[str, list[AgentEnvironmentEvent]] = {}
        caps = self.capabilities_model = provider.capabilities_model
        if caps.streaming.detach:
            self.dispatch = self._dispatch
        if caps.streaming.detach or caps.streaming.replay or caps.sessions.continue_:
            self.session = self._session
        if caps.interactions is not None:
            self.respond_to_interaction = stub
        if caps.workspace.read:
            self.read = self._read
        if caps.workspace.write:
            self.write = self._write
        if caps.workspace.exec:
            self.exec = self._exec
        if caps.branching.checkpoint:
            self.checkpoint = self._checkpoint
        if caps.branching.fork:
            self.fork = stub
        if declares_durable_branching(caps):
            self.workspace_branching = provider.branching
        if caps.placement:
            self.placement = self._placement
        if caps.observation is not None:
            self.observe = stub
        if caps.interactive_terminal is not None and caps.interactive_terminal.attach:
            self.attach_terminal = stub
            self.terminal = stub_sync
        if caps.interactive_agent is not None and caps.interactive_agent.start:
            self.start_interactive = stub
            self.interactive = stub_sync

    @property
    def metadata(self) -> FrozenDict[str, Any] | None:
        return self._metadata

    async def status(self) -> str:
        return self.state

    def events_for(self, turn: AgentTurnInput) -> list[AgentEnvironmentEvent]:
        usage = {"inputTokens": 3, "outputTokens": 1} if self.capabilities_model.usage else None
        return [
            AgentEnvironmentEvent(type="message.part.updated", data={"delta": "ok"}),
            AgentEnvironmentEvent.parse_wire(
                {"type": "result", "data": {"finalText": "ok"}, **({"usage": usage} if usage else {})}
            ),
        ]

    def stream(self, input: AgentTurnInput | Mapping[str, Any]) -> AsyncIterator[AgentEnvironmentEvent]:
        turn = as_turn_input(input)
        require_turn_profile_supported(self.capabilities_model, turn)
        events = self.events_for(turn)
        if turn.session_id is not None:
            self.sessions[turn.session_id] = events

        async def emit() -> AsyncIterator[AgentEnvironmentEvent]:
            for event in events:
                yield event

        return emit()

    async def _dispatch(self, input: AgentTurnInput) -> AgentSessionRef:
        turn = as_turn_input(input)
        session_id = turn.session_id or f"{self.id}-session"
        self.sessions[session_id] = self.events_for(turn)
        return AgentSessionRef(id=session_id, provider=self.provider)

    def _session(self, session_id: str) -> FakeSession:
        return FakeSession(self, session_id)

    async def _read(self, path: str) -> str:
        return self.files[path]

    async def _write(self, path: str, content: str) -> None:
        self.files[path] = content

    async def _exec(self, command: str, options: Any = None) -> ExecResult:
        return ExecResult(exit_code={"true": 0, "false": 1}.get(command, 127), stdout="", stderr="")

    async def _checkpoint(self, options: Any = None) -> CheckpointRef:
        return CheckpointRef(id=f"{self.id}-checkpoint")

    async def _placement(self) -> PlacementInfo:
        return PlacementInfo(kind="local")

    async def destroy(self) -> None:
        self.state = "stopped"
        self._provider.live.pop(self.id, None)
        self._provider.destroyed.append(self.id)


class FakeProvider:
    """A provider that keeps every promise its ``doc`` makes (the kit's positive case)."""

    environment_class: type[FakeEnvironment] = FakeEnvironment

    def __init__(self, doc: Mapping[str, Any] | None = None, *, name: str = "fake") -> None:
        self.name = name
        self.doc = copy.deepcopy(dict(doc if doc is not None else COMPLETE))
        self.capabilities_model = AgentEnvironmentCapabilities.parse_wire(self.doc)
        self.records: dict[str, AgentEnvironmentCreateIdempotencyRecord[FakeEnvironment]] = {}
        self.live: dict[str, FakeEnvironment] = {}
        self.destroyed: list[str] = []
        self.effects = 0
        self.ids = itertools.count(1)
        self.branching = InMemoryWorkspaceBranching(provider=name)
        caps = self.capabilities_model
        if caps.exact_process is not None:
            self.exact_process = object()
        if caps.context_transfer is not None:
            self.context_transfer = object()
        if caps.profile.validation:
            self.validate_profile = stub

    async def capabilities(self) -> Any:
        return self.doc

    def refusals(self, input: CreateAgentEnvironmentInput) -> list[Any]:
        issues: list[Any] = []
        if not isinstance(input.profile, str):
            issues.extend(turn_profile_refusals(self.capabilities_model, input.profile, per_turn=False))
        cwd = input.workspace.cwd if input.workspace is not None else None
        if cwd is not None and not accepts_cwd_base(self.capabilities_model, cwd.base):
            issues.append(ContractError.single("/workspace/cwd/base", "cwd_base_unsupported", "no").issues[0])
        return issues

    def new_environment(self, input: CreateAgentEnvironmentInput) -> FakeEnvironment:
        self.effects += 1
        environment = self.environment_class(self, f"{self.name}-{next(self.ids)}", input.metadata)
        self.live[environment.id] = environment
        return environment

    def admit(self, input: CreateAgentEnvironmentInput) -> CreateAgentEnvironmentInput:
        """The parsed input, or the refusal of what the document denies."""
        parsed = as_create_input(input)
        issues = self.refusals(parsed)
        if issues:
            raise ContractError(issues, subject="CreateAgentEnvironmentInput")
        return parsed

    async def create(self, input: CreateAgentEnvironmentInput) -> FakeEnvironment:
        parsed = self.admit(input)

        async def provision() -> FakeEnvironment:
            await asyncio.sleep(0)
            return self.new_environment(parsed)

        return await create_agent_environment_with_idempotency(self.records, parsed, provision)

    async def get(self, env_id: str) -> FakeEnvironment | None:
        return self.live.get(env_id)

    async def list(self, query: Any = None) -> list[AgentEnvironmentSummary]:
        return [AgentEnvironmentSummary(id=env.id, provider=self.name, status="running") for env in self.live.values()]
