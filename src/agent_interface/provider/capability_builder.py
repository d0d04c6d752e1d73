"""Build a provider's capability document by declaring only what it implements.

:class:`CapabilityBuilder` starts from the document of a provider that can do nothing
(every flag false, every optional group absent). Each method declares one group of what
the provider really implements; :meth:`CapabilityBuilder.build` returns the validated
:class:`~agent_interface.environment.capabilities.AgentEnvironmentCapabilities`::

    capabilities = (
        CapabilityBuilder()
        .streaming(live=True)
        .workspace(read=True, write=True, cwd_bases=("repository",))
        .usage()
        .build()
    )

The rules that couple flags are not restated here: ``build()`` validates through the
capability document itself, so an incoherent declaration is refused with that
document's :class:`~agent_interface.core.errors.ContractError` (its JSON Pointer and
stable code, such as ``capabilities_retained_control``). Which optional methods the
document then requires of the provider, its environments and their sessions is read
from :func:`~agent_interface.provider.protocols.check_capability_surface`, the owner of
those rules: :func:`required_members` and :func:`forbidden_members`.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any, Literal, cast

from agent_interface.environment.capabilities import AgentEnvironmentCapabilities
from agent_interface.environment.workspace import WorkspaceCwdBase
from agent_interface.provider.protocols import (
    capability_surface_members,
    check_capability_surface,
)

__all__ = [
    "CapabilityBuilder",
    "SurfaceKind",
    "exact_process_only_capabilities",
    "forbidden_members",
    "required_members",
]

SurfaceKind = Literal["provider", "environment", "session"]
"""Which object a surface rule judges: the provider, an environment or a session."""

EgressMode = Literal["blocked", "strict"]
InteractionFieldKind = Literal["text", "number", "boolean", "select", "secret"]
InteractionScope = Literal["interaction", "session", "persistent"]


def _nothing() -> dict[str, Any]:
    """The document of a provider that implements nothing."""
    return {
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
        "streaming": {"live": False, "replay": False, "detach": False, "turnIdempotency": False},
        "sessions": {"continue": False, "list": False, "messages": False},
        "workspace": {
            "read": False,
            "write": False,
            "exec": False,
            "git": False,
            "upload": False,
            "download": False,
        },
        "branching": {"checkpoint": False, "fork": False},
        "placement": False,
        "usage": False,
        "confidential": False,
    }


class CapabilityBuilder:
    """A capability document under construction; every flag starts false.

    Each method declares one group and returns the builder, so calls chain; calling a
    method again replaces that group. Nothing is checked until :meth:`build`, which
    refuses an incoherent document with the document's own ``ContractError``.
    """

    __slots__ = ("_document",)

    def __init__(self) -> None:
        self._document: dict[str, Any] = _nothing()

    def __repr__(self) -> str:
        return f"CapabilityBuilder({self._document!r})"

    # --- the profile --------------------------------------------------------------------

    def profile(
        self,
        *,
        named_profiles: bool = False,
        system_prompt_replace: bool = False,
        system_prompt_append: bool = False,
        instructions: bool = False,
        tools: bool = False,
        permissions: bool = False,
        mcp: bool = False,
        subagents: bool = False,
        hooks: bool = False,
        modes: bool = False,
        runtime_update: bool = False,
        validation: bool = False,
        extensions: Iterable[str] | None = None,
    ) -> CapabilityBuilder:
        """Which parts of an ``AgentProfile`` the provider honours (``profile``).

        ``system_prompt_replace`` means the harness's own system prompt is deleted and
        ``prompt.systemPrompt`` installed; a provider that can only add to it declares
        ``system_prompt_append`` alone and must refuse a ``systemPrompt``.
        ``runtime_update`` means a turn may carry its own profile; ``named_profiles``
        that ``create`` accepts a catalog id; ``validation`` that the provider has a
        ``validate_profile`` method. ``extensions`` are the backend extension
        namespaces it understands (unique).
        """
        resources = self._document["profile"]["resources"]
        group: dict[str, Any] = {
            "namedProfiles": named_profiles,
            "systemPrompt": {"replace": system_prompt_replace, "append": system_prompt_append},
            "instructions": instructions,
            "tools": tools,
            "permissions": permissions,
            "mcp": mcp,
            "subagents": subagents,
            "resources": resources,
            "hooks": hooks,
            "modes": modes,
            "runtimeUpdate": runtime_update,
            "validation": validation,
        }
        if extensions is not None:
            group["extensions"] = list(extensions)
        self._document["profile"] = group
        return self

    def resources(
        self,
        *,
        files: bool = False,
        instructions: bool = False,
        tools: bool = False,
        skills: bool = False,
        agents: bool = False,
        commands: bool = False,
    ) -> CapabilityBuilder:
        """Which ``profile.resources`` the provider mounts (``profile.resources``)."""
        self._document["profile"]["resources"] = {
            "files": files,
            "instructions": instructions,
            "tools": tools,
            "skills": skills,
            "agents": agents,
            "commands": commands,
        }
        return self

    # --- turns and sessions -------------------------------------------------------------

    def streaming(
        self,
        *,
        live: bool = False,
        replay: bool = False,
        detach: bool = False,
        turn_idempotency: bool = False,
    ) -> CapabilityBuilder:
        """How turns stream (``streaming``). ``live``: ``stream()`` yields events as they
        happen; ``detach``: ``dispatch()`` starts a turn and answers its session;
        ``replay``: a session's ``events(since=...)`` serves the events after an id;
        ``turn_idempotency``: a repeated ``turnId`` does not run the turn twice.
        ``detach`` or ``replay`` requires ``environment.session(id)``."""
        self._document["streaming"] = {
            "live": live,
            "replay": replay,
            "detach": detach,
            "turnIdempotency": turn_idempotency,
        }
        return self

    def sessions(
        self, *, continue_: bool = False, list: bool = False, messages: bool = False
    ) -> CapabilityBuilder:
        """What sessions offer (``sessions``). ``continue_`` (wire ``continue``): a turn
        naming an existing ``sessionId`` continues that conversation, and
        ``environment.session(id)`` exists."""
        self._document["sessions"] = {"continue": continue_, "list": list, "messages": messages}
        return self

    def retained_control(
        self,
        *,
        exact_run_identity: bool = True,
        result_identity: bool = True,
        event_identity: bool = True,
        cancellation_idempotency: bool = True,
    ) -> CapabilityBuilder:
        """Declare retained run control (``retainedControl``): sessions have
        ``cancel_run``, and runs keep their identity across reconnects.

        Valid only with all four guarantees and with ``streaming(replay=True,
        detach=True, turn_idempotency=True)`` and ``sessions(continue_=True)``; anything
        less is refused by :meth:`build` (``capabilities_retained_control``).
        """
        self._document["retainedControl"] = {
            "exactRunIdentity": exact_run_identity,
            "resultIdentity": result_identity,
            "eventIdentity": event_identity,
            "cancellationIdempotency": cancellation_idempotency,
        }
        return self

    def native_continuation(
        self,
        *,
        atomic_boundary: bool = True,
        request_idempotency: bool = True,
        admission_control: bool | None = None,
    ) -> CapabilityBuilder:
        """Declare native continuation (``nativeContinuation``): sessions have
        ``context_boundary`` and ``continue_native``.

        Valid only with both guarantees and ``sessions(continue_=True)``
        (``capabilities_native_continuation``); ``admission_control=True`` also needs
        :meth:`retained_control` (``capabilities_admission_control``).
        """
        group: dict[str, Any] = {
            "atomicBoundary": atomic_boundary,
            "requestIdempotency": request_idempotency,
        }
        if admission_control is not None:
            group["admissionControl"] = admission_control
        self._document["nativeContinuation"] = group
        return self

    def context_transfer(
        self,
        *,
        fresh_session: bool = True,
        request_idempotency: bool = True,
        lookup: bool = True,
    ) -> CapabilityBuilder:
        """Declare context transfer (``contextTransfer``): the provider has a
        ``context_transfer`` member. Valid only with all three guarantees durable
        (``capabilities_context_transfer``)."""
        self._document["contextTransfer"] = {
            "freshSession": fresh_session,
            "requestIdempotency": request_idempotency,
            "lookup": lookup,
        }
        return self

    def interactions(
        self,
        *,
        kinds: Iterable[str],
        answer_field_types: Iterable[InteractionFieldKind],
        response_scopes: Iterable[InteractionScope],
        secret_answers: bool = False,
        concurrent_requests: bool = False,
        replay: bool = False,
        response_idempotency: bool = False,
    ) -> CapabilityBuilder:
        """Declare typed interactions (``interactions``): environments have
        ``respond_to_interaction``. Every list is non-empty and unique, and
        ``secret_answers`` must agree with a ``"secret"`` answer field type."""
        self._document["interactions"] = {
            "kinds": list(kinds),
            "answerFieldTypes": list(answer_field_types),
            "responseScopes": list(response_scopes),
            "secretAnswers": secret_answers,
            "concurrentRequests": concurrent_requests,
            "replay": replay,
            "responseIdempotency": response_idempotency,
        }
        return self

    # --- the workspace ------------------------------------------------------------------

    def workspace(
        self,
        *,
        read: bool = False,
        write: bool = False,
        exec: bool = False,
        git: bool = False,
        upload: bool = False,
        download: bool = False,
        cwd_bases: Iterable[WorkspaceCwdBase] | None = None,
    ) -> CapabilityBuilder:
        """The workspace surface (``workspace``): ``read``, ``write`` and ``exec`` are
        environment methods of those names. ``cwd_bases`` lists the
        ``WorkspaceRequest.cwd`` bases ``create`` accepts (``"repository"``,
        ``"host"``); leaving it out accepts none."""
        group: dict[str, Any] = {
            "read": read,
            "write": write,
            "exec": exec,
            "git": git,
            "upload": upload,
            "download": download,
        }
        if cwd_bases is not None:
            bases = set(cwd_bases)
            group["cwdBases"] = {"repository": "repository" in bases, "host": "host" in bases}
        self._document["workspace"] = group
        return self

    def branching(
        self,
        *,
        checkpoint: bool = False,
        fork: bool = False,
        retry_safe: bool = False,
        lookup: bool = False,
        cleanup: bool = False,
    ) -> CapabilityBuilder:
        """Workspace branching (``branching``). ``checkpoint`` and ``fork`` are the
        source-compatible environment methods. ``retry_safe``, ``lookup`` and
        ``cleanup`` declare durable branching and are all-or-nothing with both others
        (``capabilities_durable_branching``); see :meth:`durable_branching`."""
        group: dict[str, Any] = {"checkpoint": checkpoint, "fork": fork}
        for key, value in (("retrySafe", retry_safe), ("lookup", lookup), ("cleanup", cleanup)):
            if value:
                group[key] = value
        self._document["branching"] = group
        return self

    def durable_branching(self) -> CapabilityBuilder:
        """Declare durable workspace branching, all five flags together: environments
        have ``checkpoint``, ``fork`` and a complete ``workspace_branching`` engine."""
        return self.branching(checkpoint=True, fork=True, retry_safe=True, lookup=True, cleanup=True)

    def exact_process(self, *, egress: Iterable[EgressMode]) -> CapabilityBuilder:
        """Declare exact process execution (``exactProcess``) with the network egress
        modes it enforces (non-empty, unique): the provider has ``exact_process``.
        Declare it only when every exact-process property holds on the real path."""
        self._document["exactProcess"] = {"egress": list(egress)}
        return self

    # --- single flags -------------------------------------------------------------------

    def placement(self, enabled: bool = True) -> CapabilityBuilder:
        """Environments have ``placement()`` (``placement``)."""
        self._document["placement"] = enabled
        return self

    def usage(self, enabled: bool = True) -> CapabilityBuilder:
        """Turns report token usage on their events (``usage``)."""
        self._document["usage"] = enabled
        return self

    def confidential(self, enabled: bool = True) -> CapabilityBuilder:
        """The provider runs confidential workspaces (``confidential``)."""
        self._document["confidential"] = enabled
        return self

    # --- observation and interactive surfaces --------------------------------------------

    def observation(
        self,
        *,
        identity: bool = False,
        lifecycle: bool = False,
        endpoint: bool = False,
        placement: bool = False,
        resources: bool = False,
        resource_use: bool = False,
        model_usage: bool = False,
        compute_billing: bool = False,
        account_usage: bool = False,
    ) -> CapabilityBuilder:
        """Declare observation (``observation``): environments have ``observe()``;
        each flag names a field the observation reports."""
        self._document["observation"] = {
            "identity": identity,
            "lifecycle": lifecycle,
            "endpoint": endpoint,
            "placement": placement,
            "resources": resources,
            "resourceUse": resource_use,
            "modelUsage": model_usage,
            "computeBilling": compute_billing,
            "accountUsage": account_usage,
        }
        return self

    def interactive_terminal(
        self, *, attach: bool = False, input: bool = False, resize: bool = False, reattach: bool = False
    ) -> CapabilityBuilder:
        """Declare interactive terminals (``interactiveTerminal``); ``attach`` gives
        environments ``attach_terminal`` and ``terminal``; ``input``, ``resize`` and
        ``reattach`` each need ``attach`` (``capabilities_terminal_attach``)."""
        self._document["interactiveTerminal"] = {
            "attach": attach,
            "input": input,
            "resize": resize,
            "reattach": reattach,
        }
        return self

    def interactive_agent(
        self,
        *,
        start: bool = False,
        control: bool = False,
        status: bool = False,
        attach: bool = False,
        reattach: bool = False,
        send_prompt: bool = False,
        input: bool = False,
        resize: bool = False,
        stop: bool = False,
    ) -> CapabilityBuilder:
        """Declare interactive agents (``interactiveAgent``); ``start`` gives
        environments ``start_interactive`` and ``interactive``. Every other flag needs
        ``start``; the mutating ones need ``control``; ``reattach``, ``input`` and
        ``resize`` need ``attach``."""
        self._document["interactiveAgent"] = {
            "start": start,
            "control": control,
            "status": status,
            "attach": attach,
            "reattach": reattach,
            "sendPrompt": send_prompt,
            "input": input,
            "resize": resize,
            "stop": stop,
        }
        return self

    # --- the result ---------------------------------------------------------------------

    def to_wire(self) -> dict[str, Any]:
        """The document as declared so far, unvalidated (a copy)."""
        return copy.deepcopy(self._document)

    def build(self) -> AgentEnvironmentCapabilities:
        """The validated document; an incoherent declaration raises the document's
        ``ContractError`` (every broken rule, each with its pointer and code)."""
        return AgentEnvironmentCapabilities.parse_wire(self._document)


def exact_process_only_capabilities(egress: Iterable[str] | None) -> AgentEnvironmentCapabilities:
    """The document of a provider that runs exact processes and nothing else: every
    flag false, and ``exactProcess`` with the ``egress`` modes it enforces, or omitted
    when ``egress`` is ``None``. Unknown, repeated or no modes are refused by the
    document's own ``ContractError``."""
    # ``profile()`` writes ``hooks`` and ``modes`` as false, which the bare document omits.
    builder = CapabilityBuilder().profile()
    if egress is not None:
        builder.exact_process(egress=cast("Iterable[EgressMode]", egress))
    return builder.build()


# --- what the document asks of the objects --------------------------------------------------


class _Bare:
    """An object with no optional member."""


class _Complete:
    """An object that has every optional member of every kind."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return _present


def _present(*args: Any, **kwargs: Any) -> None:
    """A member that is there."""


def required_members(
    capabilities: AgentEnvironmentCapabilities, kind: SurfaceKind
) -> tuple[str, ...]:
    """The optional members a ``kind`` object must have under ``capabilities``, in the
    order :func:`~agent_interface.provider.protocols.check_capability_surface` reports
    them (for example ``("dispatch", "session")`` for an environment declaring detach)."""
    issues = check_capability_surface(_Bare(), capabilities, kind=kind)
    return tuple(issue.member for issue in issues if issue.code == "missing_declared_capability")


def forbidden_members(
    capabilities: AgentEnvironmentCapabilities, kind: SurfaceKind
) -> tuple[str, ...]:
    """The optional members a ``kind`` object must *not* have under ``capabilities``:
    offering one would let a client try an action the provider did not declare."""
    issues = check_capability_surface(_Complete(), capabilities, kind=kind)
    forbidden = {issue.member for issue in issues if issue.code == "exposed_without_capability"}
    return tuple(member for member in capability_surface_members(kind) if member in forbidden)
