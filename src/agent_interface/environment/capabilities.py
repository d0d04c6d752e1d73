"""The environment capability document (``AgentEnvironmentCapabilitiesSchema``).

A provider states what it can do before an environment exists; an environment may
publish its own measured document. The document is validated strictly and
completely: unknown keys and non-boolean flags are refused, and the cross-field
rules below hold (each refusal names its JSON Pointer and a stable code):

* ``retainedControl`` only with every identity guarantee plus replay, detach, turn
  idempotency and session continuation (``capabilities_retained_control``);
* ``nativeContinuation`` only with atomic boundary, request idempotency and session
  continuation (``capabilities_native_continuation``); ``admissionControl`` also
  needs ``retainedControl`` (``capabilities_admission_control``);
* ``contextTransfer`` only when fresh-session admission, request idempotency and
  lookup are all true (``capabilities_context_transfer``);
* the durable branching flags ``retrySafe``, ``lookup`` and ``cleanup`` are
  all-or-nothing and need ``checkpoint`` and ``fork`` (``capabilities_durable_branching``);
* ``exactProcess.egress`` and ``profile.extensions`` hold unique values;
* interactive terminal and agent controls name the operations they depend on.

Omitting ``interactions`` and ``nativeContinuation``, or leaving the durable
branching flags false, is the compatible declaration of an existing provider.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Field, model_validator

from agent_interface.core.contract_limits import CONTRACT_MAX_ARRAY_LENGTH
from agent_interface.core.errors import Refinement
from agent_interface.core.model import (
    WireList,
    WireModel,
    wire_names,
)
from agent_interface.core.registry import register_wire_models
from agent_interface.environment.cwd import WorkspaceCwdBase
from agent_interface.profile.capabilities import AgentProfileCapabilities
from agent_interface.profile.provider_config import (
    BackendCapabilities,
    ProviderCapabilities,
)
from agent_interface.runtime.control import RetainedControlCapabilities
from agent_interface.runtime.interaction_fields import InteractionCapabilities

__all__ = [
    "AgentEnvironmentCapabilities",
    "BackendCapabilities",
    "BranchingCapabilities",
    "ContextTransferCapabilities",
    "CwdBasesCapabilities",
    "ExactProcessCapabilities",
    "InteractiveAgentCapabilities",
    "InteractiveTerminalCapabilities",
    "NativeContinuationCapabilities",
    "ObservationCapabilities",
    "ProviderCapabilities",
    "RetainedControlCapabilities",
    "SessionCapabilities",
    "StreamingCapabilities",
    "WorkspaceCapabilities",
    "accepts_cwd_base",
    "declares_durable_branching",
]


class StreamingCapabilities(WireModel):
    """How an environment streams a turn: live events, replay, detached turns and idempotent turn
    ids."""

    live: bool
    replay: bool
    detach: bool
    turn_idempotency: bool


class SessionCapabilities(WireModel):
    """Session features an environment offers: continuing a session, listing sessions and reading
    their messages."""

    model_config = ConfigDict(alias_generator=wire_names(continue_="continue"))

    continue_: bool
    list: bool
    messages: bool


class NativeContinuationCapabilities(WireModel):
    """Native session continuation guarantees: an atomic boundary, idempotent requests and,
    optionally, admission control."""

    atomic_boundary: bool
    request_idempotency: bool
    admission_control: bool | None = None


class ContextTransferCapabilities(WireModel):
    """Context transfer guarantees: into a fresh session, with idempotent requests and a lookup of
    earlier transfers."""

    fresh_session: bool
    request_idempotency: bool
    lookup: bool


class CwdBasesCapabilities(WireModel):
    """Which explicitly based cwd forms the provider's create accepts."""

    repository: bool
    host: bool


class WorkspaceCapabilities(WireModel):
    """Workspace operations an environment offers (read, write, exec, git, upload, download) and the
    cwd bases it accepts."""

    read: bool
    write: bool
    exec: bool
    git: bool
    upload: bool
    download: bool
    cwd_bases: CwdBasesCapabilities | None = None


class BranchingCapabilities(WireModel):
    """Durable workspace branching an environment offers: checkpoints, forks, retry safety, lookup
    and cleanup."""

    checkpoint: bool
    fork: bool
    retry_safe: bool | None = None
    lookup: bool | None = None
    cleanup: bool | None = None


class ExactProcessCapabilities(WireModel):
    """Exact-process support: the egress policies a launched process may ask for."""

    egress: Annotated[
        WireList[Literal["blocked", "strict"]],
        Field(min_length=1, max_length=CONTRACT_MAX_ARRAY_LENGTH),
    ]


class ObservationCapabilities(WireModel):
    """Which observations an environment reports (identity, lifecycle, endpoint, placement,
    resources, usage, billing)."""

    identity: bool
    lifecycle: bool
    endpoint: bool
    placement: bool
    resources: bool
    resource_use: bool
    model_usage: bool
    compute_billing: bool
    account_usage: bool


class InteractiveTerminalCapabilities(WireModel):
    """Interactive terminal features: attach, input, resize and reattach."""

    attach: bool
    input: bool
    resize: bool
    reattach: bool


class InteractiveAgentCapabilities(WireModel):
    """Interactive agent session features: start, control claims, status, attach and reattach,
    prompts, input, resize and stop."""

    start: bool
    control: bool
    status: bool
    attach: bool
    reattach: bool
    send_prompt: bool
    input: bool
    resize: bool
    stop: bool


class AgentEnvironmentCapabilities(WireModel):
    """What a provider (or one environment) can do; see the module docstring."""

    profile: AgentProfileCapabilities
    streaming: StreamingCapabilities
    sessions: SessionCapabilities
    retained_control: RetainedControlCapabilities | None = None
    native_continuation: NativeContinuationCapabilities | None = None
    context_transfer: ContextTransferCapabilities | None = None
    interactions: InteractionCapabilities | None = None
    workspace: WorkspaceCapabilities
    branching: BranchingCapabilities
    placement: bool
    usage: bool
    confidential: bool
    exact_process: ExactProcessCapabilities | None = None
    observation: ObservationCapabilities | None = None
    interactive_terminal: InteractiveTerminalCapabilities | None = None
    interactive_agent: InteractiveAgentCapabilities | None = None

    @model_validator(mode="after")
    def _coherent(self) -> AgentEnvironmentCapabilities:
        issues = Refinement("AgentEnvironmentCapabilities")
        retained = self.retained_control
        if retained is not None and not (
            retained.exact_run_identity
            and retained.result_identity
            and retained.event_identity
            and retained.cancellation_idempotency
            and self.streaming.replay
            and self.streaming.detach
            and self.streaming.turn_idempotency
            and self.sessions.continue_
        ):
            issues.add(
                ("retainedControl",),
                "capabilities_retained_control",
                "retained control requires exact run, result, event, cancellation, replay, "
                "detach, turn, and session identity together",
            )
        native = self.native_continuation
        if native is not None and not (
            native.atomic_boundary and native.request_idempotency and self.sessions.continue_
        ):
            issues.add(
                ("nativeContinuation",),
                "capabilities_native_continuation",
                "native continuation requires session continuation, atomic boundary "
                "admission, and request idempotency together",
            )
        if native is not None and native.admission_control is True and retained is None:
            issues.add(
                ("nativeContinuation", "admissionControl"),
                "capabilities_admission_control",
                "native continuation requires retained control for early admission",
            )
        transfer = self.context_transfer
        if transfer is not None and not (
            transfer.fresh_session and transfer.request_idempotency and transfer.lookup
        ):
            issues.add(
                ("contextTransfer",),
                "capabilities_context_transfer",
                "context transfer requires fresh-session admission, request idempotency, "
                "and lookup together",
            )
        branching = self.branching
        durable = [bool(branching.retry_safe), bool(branching.lookup), bool(branching.cleanup)]
        if any(durable) and not (all(durable) and branching.checkpoint and branching.fork):
            issues.add(
                ("branching",),
                "capabilities_durable_branching",
                "retry-safe branching requires checkpoint, fork, lookup, and cleanup together",
            )
        if self.exact_process is not None:
            egress = self.exact_process.egress
            if len(set(egress)) != len(egress):
                issues.add(
                    ("exactProcess", "egress"),
                    "capabilities_duplicate_egress",
                    "exact process egress modes must be unique",
                )
        terminal = self.interactive_terminal
        if terminal is not None and (terminal.input or terminal.resize or terminal.reattach) and not terminal.attach:
            issues.add(
                ("interactiveTerminal",),
                "capabilities_terminal_attach",
                "interactive terminal input, resize, and reattach each require attach",
            )
        agent = self.interactive_agent
        if agent is not None:
            if (
                agent.status or agent.attach or agent.reattach or agent.send_prompt
                or agent.input or agent.resize or agent.stop
            ) and not agent.start:
                issues.add(
                    ("interactiveAgent",),
                    "capabilities_interactive_start",
                    "interactive agent status, attach, reattach, sendPrompt, input, resize, "
                    "and stop each require start",
                )
            if (
                agent.attach or agent.send_prompt or agent.input or agent.resize or agent.stop
            ) and not agent.control:
                issues.add(
                    ("interactiveAgent", "control"),
                    "capabilities_interactive_control",
                    "interactive agent mutation requires provider-issued control claims",
                )
            if (agent.reattach or agent.input or agent.resize) and not agent.attach:
                issues.add(
                    ("interactiveAgent",),
                    "capabilities_interactive_attach",
                    "interactive agent reattach, input, and resize each require attach",
                )
        extensions = self.profile.extensions
        if extensions is not None and len(set(extensions)) != len(extensions):
            issues.add(
                ("profile", "extensions"),
                "capabilities_duplicate_extensions",
                "profile extension namespaces must be unique",
            )
        issues.check()
        return self


def declares_durable_branching(capabilities: AgentEnvironmentCapabilities) -> bool:
    """Whether the document declares recoverable (durable) workspace branching."""
    b = capabilities.branching
    return bool(b.retry_safe and b.lookup and b.cleanup and b.checkpoint and b.fork)


def accepts_cwd_base(capabilities: AgentEnvironmentCapabilities, base: WorkspaceCwdBase) -> bool:
    """Whether ``workspace.cwdBases`` accepts ``base``; an undeclared list accepts none."""
    bases = capabilities.workspace.cwd_bases
    if bases is None:
        return False
    return bases.repository if base == "repository" else bases.host


register_wire_models(AgentEnvironmentCapabilities=AgentEnvironmentCapabilities)
