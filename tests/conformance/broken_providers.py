"""Deliberately broken providers: each breaks one promise the provider kit claims to
check, and must fail the check that names it (``test_broken_providers.py``).

:data:`BROKEN` maps every name of :data:`PROVIDER_CHECKS` to the providers that break it;
``also`` lists the checks a broken provider may fail besides its own because they depend
on the same broken behaviour (everything else must not fail).
"""

from __future__ import annotations

import asyncio
import copy
import hashlib
import json
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from agent_interface.core.errors import ContractError
from agent_interface.environment.events import AgentEnvironmentEvent
from agent_interface.environment.workspace import ExecResult
from agent_interface.provider.create import (
    agent_environment_create_input_digest,
    replayed_agent_environment_view,
)
from agent_interface.provider.protocols import (
    as_create_input,
    as_turn_input,
    capability_surface_members,
)
from agent_interface.provider.turn import (
    AgentTurnInput,
    CreateAgentEnvironmentInput,
    require_turn_profile_supported,
)
from agent_interface.testing import InMemoryWorkspaceBranching
from tests.conformance.fake_provider import (
    COMPLETE,
    DISABLED,
    DURABLE,
    INTERACTIONS,
    FakeEnvironment,
    FakeProvider,
    FakeSession,
    document,
    stub,
)


@dataclass(frozen=True)
class Broken:
    """One broken provider: how to build it, what it breaks and what else may fail."""

    why: str
    build: Callable[[], Any]
    also: frozenset[str] = frozenset()
    options: Mapping[str, Any] = field(default_factory=dict)
    leaves_environments: bool = False
    """It provisions environments the kit never sees (an effect before a refusal)."""


def fake_with(environment: type[FakeEnvironment] | None = None, doc: Mapping[str, Any] | None = None, **attributes: Any) -> Callable[[], FakeProvider]:
    """A :class:`FakeProvider` factory using ``environment`` and extra provider attributes."""

    def build() -> FakeProvider:
        provider = FakeProvider(doc)
        if environment is not None:
            provider.environment_class = environment
        for key, value in attributes.items():
            setattr(provider, key, value)
        return provider

    return build


# --- provider and document --------------------------------------------------------------------


def _malformed_document(**changes: Any) -> Callable[[], FakeProvider]:
    def build() -> FakeProvider:
        provider = FakeProvider(DISABLED)
        provider.doc = document(**changes)
        return provider

    return build


# --- environment surface ------------------------------------------------------------------------

_EXPOSED_DOC = document(workspace={"read": False, "write": False, "exec": False})


def _exposing(member: str) -> Callable[[], FakeProvider]:
    """An environment that offers ``member`` while its capability is not declared."""

    class Exposing(FakeEnvironment):
        def __init__(self, *args: Any) -> None:
            super().__init__(*args)
            setattr(self, member, self._session if member == "session" else stub)

    return fake_with(Exposing, DISABLED)


def _session_exposing(member: str) -> Callable[[], FakeProvider]:
    class Session(FakeSession):
        def __init__(self, *args: Any) -> None:
            super().__init__(*args)
            setattr(self, member, stub)

    class Environment(FakeEnvironment):
        def _session(self, session_id: str) -> FakeSession:
            return Session(self, session_id)

    return fake_with(Environment, document(sessions={"continue": True, "list": False, "messages": False}))


def _session_missing(member: str, doc: Mapping[str, Any]) -> Callable[[], FakeProvider]:
    class Session(FakeSession):
        def __init__(self, *args: Any) -> None:
            super().__init__(*args)
            if member in vars(self):
                delattr(self, member)

    class Environment(FakeEnvironment):
        def _session(self, session_id: str) -> FakeSession:
            return Session(self, session_id)

    return fake_with(Environment, doc)


def _missing(member: str, doc: Mapping[str, Any]) -> Callable[[], FakeProvider]:
    """An environment that declares ``member``'s capability but lacks it."""

    class Missing(FakeEnvironment):
        def __init__(self, *args: Any) -> None:
            super().__init__(*args)
            if member in vars(self):
                delattr(self, member)

    return fake_with(Missing, doc)


_SURFACE_DECLARED: dict[str, dict[str, Any]] = {
    "dispatch": document(streaming={"live": True, "replay": False, "detach": True, "turnIdempotency": False}),
    "session": document(sessions={"continue": True, "list": False, "messages": False}),
    "respond_to_interaction": document(interactions=INTERACTIONS),
    "read": document(workspace={"read": True}),
    "write": document(workspace={"write": True}),
    "exec": document(workspace={"exec": True}),
    "checkpoint": document(branching={"checkpoint": True, "fork": False}),
    "fork": document(branching={"checkpoint": False, "fork": True}),
    "workspace_branching": document(branching=DURABLE),
    "placement": document(placement=True),
    "observe": document(observation=COMPLETE["observation"]),
    "attach_terminal": document(interactiveTerminal=COMPLETE["interactiveTerminal"]),
    "terminal": document(interactiveTerminal=COMPLETE["interactiveTerminal"]),
    "start_interactive": document(interactiveAgent=COMPLETE["interactiveAgent"]),
    "interactive": document(interactiveAgent=COMPLETE["interactiveAgent"]),
}
"""Per strict environment member, a document that declares its capability."""



# --- identity -----------------------------------------------------------------------------------


class _ClaimsReplayed(FakeEnvironment):
    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.creation = "replayed"


class _EmptyId(FakeProvider):
    def new_environment(self, input: CreateAgentEnvironmentInput) -> FakeEnvironment:
        environment = super().new_environment(input)
        environment.id = ""
        return environment


class _NoProviderName(FakeEnvironment):
    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.provider = ""


class _InvalidOwnDocument(FakeEnvironment):
    @property
    def capabilities(self) -> Any:
        return {"streaming": "yes"}


class _AnswersNone(FakeProvider):
    async def create(self, input: CreateAgentEnvironmentInput) -> Any:
        return None


# --- metadata -----------------------------------------------------------------------------------


class _ExtraMetadata(FakeEnvironment):
    @property
    def metadata(self) -> Any:
        return {**(self._metadata or {}), "added": "by the provider"}


class _MutableMetadata(FakeEnvironment):
    def __init__(self, provider: FakeProvider, env_id: str, metadata: Mapping[str, Any] | None) -> None:
        super().__init__(provider, env_id, metadata)
        self.plain = json.loads(json.dumps(dict(metadata or {})))

    @property
    def metadata(self) -> Any:
        return self.plain  # the stored dict itself


class _SharedMetadata(FakeEnvironment):
    """Every environment reads one provider-wide metadata dict, refreshed by each create."""

    def __init__(self, provider: FakeProvider, env_id: str, metadata: Mapping[str, Any] | None) -> None:
        super().__init__(provider, env_id, metadata)
        shared = provider.__dict__.setdefault("shared_metadata", {})
        shared.clear()
        shared.update(json.loads(json.dumps(dict(metadata or {}))))

    @property
    def metadata(self) -> Any:
        return copy.deepcopy(self._provider.__dict__["shared_metadata"])


# --- idempotency --------------------------------------------------------------------------------


class _KeyOrderDigest(FakeProvider):
    """Hashes the wire form as it comes, so a reordered replay looks like another input."""

    async def create(self, input: CreateAgentEnvironmentInput) -> FakeEnvironment:
        parsed = self.admit(input)
        wire = {k: v for k, v in parsed.to_wire().items() if k != "idempotencyKey"}
        digest = hashlib.sha256(json.dumps(wire).encode()).hexdigest()
        known = self.__dict__.setdefault("known", {})
        if parsed.idempotency_key in known:
            if known[parsed.idempotency_key][0] != digest:
                raise ContractError.single("/idempotencyKey", "idempotency_conflict", "changed input")
            return replayed_agent_environment_view(known[parsed.idempotency_key][1])
        environment = self.new_environment(parsed)
        known[parsed.idempotency_key] = (digest, environment)
        return environment


class _ReplayClaimsCreated(FakeProvider):
    """The reference testkit's case: a replay that says it created the environment."""

    async def create(self, input: CreateAgentEnvironmentInput) -> FakeEnvironment:
        environment = await super().create(input)
        if environment.creation == "created":
            return environment
        claim = copy.copy(object.__getattribute__(environment, "_environment"))
        claim.creation = "created"
        return claim


def _known(provider: FakeProvider, parsed: CreateAgentEnvironmentInput) -> FakeEnvironment | None:
    """The environment ``parsed``'s key already names, refusing a changed input."""
    known = provider.__dict__.setdefault("known", {})
    if parsed.idempotency_key not in known:
        return None
    digest, environment = known[parsed.idempotency_key]
    if digest != agent_environment_create_input_digest(parsed):
        raise ContractError.single("/idempotencyKey", "idempotency_conflict", "changed input")
    return environment  # type: ignore[no-any-return]


def _remember(provider: FakeProvider, parsed: CreateAgentEnvironmentInput, environment: FakeEnvironment) -> FakeEnvironment:
    provider.__dict__.setdefault("known", {})[parsed.idempotency_key] = (agent_environment_create_input_digest(parsed), environment)
    return environment


class _ReplayRewritesFirstVerdict(FakeProvider):
    """Answers the one environment object, rewriting its verdict on a replay."""

    async def create(self, input: CreateAgentEnvironmentInput) -> FakeEnvironment:
        parsed = self.admit(input)
        environment = _known(self, parsed)
        if environment is not None:
            environment.creation = "replayed"
            return environment
        return _remember(self, parsed, self.new_environment(parsed))


class _IgnoresChangedInput(FakeProvider):
    """Replays by key alone: a changed input gets the old environment."""

    async def create(self, input: CreateAgentEnvironmentInput) -> FakeEnvironment:
        parsed = self.admit(input)
        known = self.__dict__.setdefault("known", {})
        if parsed.idempotency_key in known:
            return replayed_agent_environment_view(known[parsed.idempotency_key])
        known[parsed.idempotency_key] = self.new_environment(parsed)
        return known[parsed.idempotency_key]  # type: ignore[no-any-return]


class _ConflictAfterEffect(FakeProvider):
    """Provisions first, then notices the conflict."""

    async def create(self, input: CreateAgentEnvironmentInput) -> FakeEnvironment:
        parsed = as_create_input(input)
        record = self.records.get(str(parsed.idempotency_key))
        if record is not None and record.digest != agent_environment_create_input_digest(parsed):
            self.new_environment(parsed)  # the effect comes before the check
        return await super().create(parsed)


class _ConflictRebindsKey(FakeProvider):
    """Refuses a changed input, but binds the key to it while doing so."""

    async def create(self, input: CreateAgentEnvironmentInput) -> FakeEnvironment:
        parsed = as_create_input(input)
        try:
            return await super().create(parsed)
        except ContractError as error:
            if error.issues[0].code == "idempotency_conflict":
                self.records[str(parsed.idempotency_key)].digest = agent_environment_create_input_digest(parsed)
            raise


class _Racy(FakeProvider):
    """Checks its records, yields, then provisions: concurrent calls each provision."""

    async def create(self, input: CreateAgentEnvironmentInput) -> FakeEnvironment:
        parsed = self.admit(input)
        environment = _known(self, parsed)
        if environment is not None:
            return replayed_agent_environment_view(environment)
        await asyncio.sleep(0)
        return _remember(self, parsed, self.new_environment(parsed))


# --- turns --------------------------------------------------------------------------------------


def _stream_of(*events: Any, then: BaseException | None = None, hang: bool = False) -> type[FakeEnvironment]:
    class Streaming(FakeEnvironment):
        def stream(self, input: Any) -> AsyncIterator[Any]:
            require_turn_profile_supported(self.capabilities_model, as_turn_input(input))

            async def emit() -> AsyncIterator[Any]:
                for event in events:
                    yield event
                if then is not None:
                    raise then
                if hang:
                    await asyncio.Event().wait()

            return emit()

    return Streaming


_RESULT = AgentEnvironmentEvent(type="result", data={"finalText": "ok"})


class _StreamRaises(FakeEnvironment):
    def stream(self, input: Any) -> AsyncIterator[AgentEnvironmentEvent]:
        raise RuntimeError("stream is broken")


class _StreamIsACoroutine(FakeEnvironment):
    async def stream(self, input: Any) -> list[AgentEnvironmentEvent]:  # type: ignore[override]
        return [_RESULT]


class _DispatchAnswersNone(FakeEnvironment):
    async def _dispatch(self, input: AgentTurnInput) -> Any:
        return None


class _SessionAnswersNone(FakeEnvironment):
    def _session(self, session_id: str) -> Any:
        return None


class _TurnProfileHonoured(FakeEnvironment):
    def stream(self, input: Any) -> AsyncIterator[AgentEnvironmentEvent]:
        turn = as_turn_input(input)

        async def emit() -> AsyncIterator[AgentEnvironmentEvent]:
            yield AgentEnvironmentEvent(type="result", data={"profile": turn.profile is not None})

        return emit()


class _TurnProfileRefusedLate(FakeEnvironment):
    def stream(self, input: Any) -> AsyncIterator[AgentEnvironmentEvent]:
        turn = as_turn_input(input)
        events = self.events_for(turn)

        async def emit() -> AsyncIterator[AgentEnvironmentEvent]:
            yield events[0]
            require_turn_profile_supported(self.capabilities_model, turn)
            yield events[1]

        return emit()


# --- workspace ----------------------------------------------------------------------------------


class _WriteNotImplemented(FakeEnvironment):
    async def _write(self, path: str, content: str) -> None:
        raise NotImplementedError


class _ReadNotImplemented(FakeEnvironment):
    async def _read(self, path: str) -> str:
        raise NotImplementedError


class _ReadStrips(FakeEnvironment):
    async def _read(self, path: str) -> str:
        return self.files[path].strip()


class _ExecAlwaysZero(FakeEnvironment):
    async def _exec(self, command: str, options: Any = None) -> ExecResult:
        return ExecResult(exit_code=0, stdout="", stderr="")


_WORKSPACE = document(workspace={"read": True, "write": True, "exec": True})


# --- refusals -----------------------------------------------------------------------------------


class _AcceptsEverything(FakeProvider):
    def refusals(self, input: CreateAgentEnvironmentInput) -> list[Any]:
        return []


class _RefusesAfterEffect(FakeProvider):
    def refusals(self, input: CreateAgentEnvironmentInput) -> list[Any]:
        issues = super().refusals(input)
        if issues:
            self.new_environment(input)
        return issues


# --- durable branching and cleanup ----------------------------------------------------------------


class _ForgetfulBranching:
    """Every checkpoint lands in a fresh engine, so a retry creates it again."""

    def __init__(self, provider: str) -> None:
        self.engine = InMemoryWorkspaceBranching(provider=provider)
        self.provider = provider

    async def checkpoint(self, request: Any) -> Any:
        return await InMemoryWorkspaceBranching(provider=self.provider).checkpoint(request)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.engine, name)


class _PartialBranching:
    async def checkpoint(self, request: Any) -> Any:
        raise AssertionError("must not be called")


class _DestroyRaises(FakeEnvironment):
    async def destroy(self) -> None:
        raise RuntimeError("injected destroy failure")


class _DestroyDoesNothing(FakeEnvironment):
    async def destroy(self) -> None:
        return None


def _with_branching(engine: Callable[[str], Any]) -> Callable[[], FakeProvider]:
    def build() -> FakeProvider:
        provider = FakeProvider(document(branching=DURABLE))
        provider.branching = engine(provider.name)
        return provider

    return build


# --- the table ----------------------------------------------------------------------------------

_SURFACE: dict[str, list[Broken]] = {}
for _member in capability_surface_members("provider"):
    _SURFACE[f"surface.provider.{_member}"] = [
        Broken(f"the provider offers {_member} without its capability", fake_with(doc=DISABLED, **{_member: object()}))
    ]


def _provider_lacking(member: str, doc: dict[str, Any]) -> Callable[[], FakeProvider]:
    def build() -> FakeProvider:
        provider = FakeProvider(doc)
        delattr(provider, member)
        return provider

    return build


_SURFACE["surface.provider.exact_process"].append(
    Broken("the provider declares exactProcess but lacks it", _provider_lacking("exact_process", document(exactProcess={"egress": ["blocked"]})))
)
_SURFACE["surface.provider.context_transfer"].append(
    Broken("the provider declares contextTransfer but lacks it", _provider_lacking("context_transfer", document(contextTransfer=COMPLETE["contextTransfer"])))
)
for _member in capability_surface_members("environment"):
    _SURFACE[f"surface.environment.{_member}"] = [
        Broken(f"the environment offers {_member} without its capability", _exposing(_member)),
        Broken(
            f"the environment declares {_member} but lacks it",
            _missing(_member, _SURFACE_DECLARED[_member]),
        ),
    ]
_SURFACE["surface.session.respond_to_interaction"] = [
    Broken("the session answers interactions that are not declared", _session_exposing("respond_to_interaction"))
]
for _member in ("cancel_run", "context_boundary", "continue_native"):
    _SURFACE[f"surface.session.{_member}"] = [
        Broken(f"the session lacks the declared {_member}", _session_missing(_member, COMPLETE)),
        Broken(f"the session offers {_member} without its capability", _session_exposing(_member)),
    ]

_FIELDS = frozenset({"idempotency.conflict_fields"})  # the one-field probes meet the same broken rule

BROKEN: dict[str, list[Broken]] = {
    "provider.name": [Broken("the provider has an empty name", fake_with(doc=DISABLED, name=""), also=frozenset({"environment.provider"}))],
    "capabilities.valid": [
        Broken("durable branching flags are partial (not all-or-nothing)", _malformed_document(branching={"checkpoint": True, "fork": True, "retrySafe": True})),
        Broken("a capability is not a boolean", _malformed_document(workspace={"read": "yes"})),
    ],
    **{name: entries for name, entries in _SURFACE.items() if name.startswith("surface.provider.")},
    "create.basic": [
        Broken("create() answers None", lambda: _AnswersNone(DISABLED)),
        Broken(
            "a first create claims it replayed",
            fake_with(_ClaimsReplayed, DISABLED),
            # the refusal checks read the verdict to see whether a refused key stayed free
            also=frozenset({"refusal.system_prompt_replace", "refusal.cwd_base_repository", "refusal.cwd_base_host"}),
        ),
    ],
    "environment.id": [Broken("the environment id is empty", lambda: _EmptyId(DISABLED))],
    "environment.provider": [Broken("the environment names no provider", fake_with(_NoProviderName, DISABLED))],
    "capabilities.environment": [Broken("the environment publishes an invalid own document", fake_with(_InvalidOwnDocument, DISABLED))],
    **{name: entries for name, entries in _SURFACE.items() if name.startswith("surface.environment.")},
    "branching.operations": [
        Broken("workspace_branching has only checkpoint", _with_branching(lambda name: _PartialBranching()))
    ],
    "metadata.snapshot": [Broken("metadata gains a key the caller never sent", fake_with(_ExtraMetadata, DISABLED))],
    "metadata.immutable": [Broken("metadata is the stored mutable dict", fake_with(_MutableMetadata, DISABLED))],
    "metadata.detached": [Broken("every environment reads one shared metadata dict", fake_with(_SharedMetadata, DISABLED))],
    "idempotency.replay": [Broken("the create digest depends on key order", lambda: _KeyOrderDigest(DISABLED))],
    "idempotency.replay_verdict": [
        Broken(
            "a replay claims it created the environment",
            lambda: _ReplayClaimsCreated(DISABLED),
            also=frozenset({"idempotency.concurrent"}),  # its concurrent replays claim it too
        )
    ],
    "idempotency.per_call": [Broken("a replay rewrites the first call's verdict", lambda: _ReplayRewritesFirstVerdict(DISABLED))],
    "idempotency.conflict": [
        Broken("a changed input under a used key is accepted", lambda: _IgnoresChangedInput(DISABLED), also=_FIELDS),
        Broken("a conflict is refused only after a create effect", lambda: _ConflictAfterEffect(DISABLED), leaves_environments=True, also=_FIELDS),
    ],
    "idempotency.key_kept": [Broken("a refused conflict rebinds the key", lambda: _ConflictRebindsKey(DISABLED))],
    "idempotency.concurrent": [Broken("concurrent same-key creates each provision", lambda: _Racy(DISABLED))],
    "stream.events": [
        Broken("stream() raises on every prompt", fake_with(_StreamRaises, DISABLED), also=frozenset({"refusal.turn_profile"})),
        Broken("stream() ends without an event", fake_with(_stream_of(), DISABLED)),
        Broken("stream() emits an invalid event", fake_with(_stream_of({"type": "", "data": {}}), DISABLED)),
        Broken("stream() is a coroutine, not an async iterator", fake_with(_StreamIsACoroutine, DISABLED), also=frozenset({"refusal.turn_profile"})),
    ],
    "stream.terminal": [Broken("the turn never emits a terminal event", fake_with(_stream_of(AgentEnvironmentEvent(type="status", data={"status": "processing"})), DISABLED))],
    "stream.result": [
        Broken("stream() raises after its result", fake_with(_stream_of(_RESULT, then=RuntimeError("late")), DISABLED)),
        Broken("the stream never ends after its result", fake_with(_stream_of(_RESULT, hang=True), DISABLED), options={"timeout": 0.5}),
    ],
    "stream.usage": [Broken("usage is declared but never reported", fake_with(_stream_of(_RESULT), document(usage=True)))],
    "dispatch.session_id": [
        Broken("dispatch() answers None", fake_with(_DispatchAnswersNone, document(streaming={"live": True, "replay": False, "detach": True, "turnIdempotency": False})))
    ],
    "session.handle": [Broken("session(id) answers None", fake_with(_SessionAnswersNone, document(sessions={"continue": True, "list": False, "messages": False})))],
    **{name: entries for name, entries in _SURFACE.items() if name.startswith("surface.session.")},
    "workspace.write": [Broken("write() raises NotImplementedError", fake_with(_WriteNotImplemented, _WORKSPACE))],
    "workspace.read": [
        Broken("read() raises NotImplementedError", fake_with(_ReadNotImplemented, _WORKSPACE)),
        Broken("read() strips what was written", fake_with(_ReadStrips, _WORKSPACE)),
    ],
    "workspace.exec": [Broken("exec() answers exit code 0 for everything", fake_with(_ExecAlwaysZero, _WORKSPACE))],
    "refusal.system_prompt_replace": [
        Broken("a systemPrompt is accepted while replace is false", lambda: _AcceptsEverything(DISABLED), also=frozenset({"refusal.cwd_base_repository", "refusal.cwd_base_host"})),
        Broken(
            "a systemPrompt is refused only after a create effect",
            lambda: _RefusesAfterEffect(DISABLED),
            also=frozenset({"refusal.cwd_base_repository", "refusal.cwd_base_host"}),
            leaves_environments=True,
        ),
    ],
    "refusal.cwd_base_repository": [Broken("a repository cwd is accepted while cwdBases denies it", lambda: _AcceptsEverything(document(profile={"systemPrompt": {"replace": True, "append": True}}, workspace={"cwdBases": {"repository": False, "host": True}})))],
    "refusal.cwd_base_host": [Broken("a host cwd is accepted while cwdBases denies it", lambda: _AcceptsEverything(document(profile={"systemPrompt": {"replace": True, "append": True}}, workspace={"cwdBases": {"repository": True, "host": False}})))],
    "refusal.turn_profile": [
        Broken("a turn carrying a profile is dispatched without runtimeUpdate", fake_with(_TurnProfileHonoured, DISABLED)),
        Broken("a per-turn profile is refused only after an event", fake_with(_TurnProfileRefusedLate, DISABLED)),
    ],
    "branching.durable": [
        Broken("the durable engine forgets its checkpoints", _with_branching(_ForgetfulBranching), also=frozenset({"branching.*"}))
    ],
    "destroy": [
        Broken("destroy() raises", fake_with(_DestroyRaises, DISABLED)),
        Broken("destroy() leaves the environment running", fake_with(_DestroyDoesNothing, DISABLED)),
    ],
}
"""Every provider kit check, with the broken providers that must fail it."""


ISSUE_PROVIDER_DOC = document(
    streaming={"live": True, "replay": True, "detach": True, "turnIdempotency": False},
    sessions={"continue": True, "list": False, "messages": False},
    workspace={"read": True, "write": True, "exec": False},
)


class IssueEnvironment(FakeEnvironment):
    """The provider of issue 23: every broken promise at once."""

    def stream(self, input: Any) -> AsyncIterator[AgentEnvironmentEvent]:
        raise RuntimeError("stream is broken")

    async def _read(self, path: str) -> str:
        raise NotImplementedError

    async def _write(self, path: str, content: str) -> None:
        raise NotImplementedError

    async def _dispatch(self, input: Any) -> Any:
        return None

    def _session(self, session_id: str) -> Any:
        return None

    async def destroy(self) -> None:
        raise RuntimeError("destroy is broken")


