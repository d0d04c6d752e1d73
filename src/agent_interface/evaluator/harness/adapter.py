"""The interface every harness adapter implements, and the values it returns.

An adapter turns a bundle's :class:`~agent_interface.profile.agent_profile.AgentProfile` into
a :class:`HarnessLaunch`: the harness's native files (workspace- or home-rooted, with bytes
and mode), a shell-free argv, only the environment the harness needs, every setting it made
and every profile field it accepted without a native effect. A field the harness cannot
honour is refused with a :class:`~agent_interface.core.errors.ContractError` naming its
JSON Pointer and the harness (see :mod:`.profile_fields`). It also parses the harness's
own output into a :class:`HarnessOutcome` (self-reported usage, final text, error status:
the exit code alone is never trusted) and declares how the harness reacts to a refused
model call (:class:`RefusalBehaviour`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final, Literal, Protocol

from agent_interface.candidate.profile import AgentCandidateProfile
from agent_interface.core.errors import ContractError, ContractIssue
from agent_interface.profile.agent_profile import AgentProfile
from agent_interface.profile.harness import HarnessType

__all__ = [
    "ANTHROPIC_BASE_URL",
    "OPENAI_BASE_URL",
    "GatewayAccess",
    "HarnessAdapter",
    "HarnessApi",
    "HarnessLaunch",
    "HarnessOutcome",
    "HarnessSetting",
    "HarnessUsage",
    "NativeFile",
    "NativeRoot",
    "RefusalBehaviour",
    "ReportedField",
]

ANTHROPIC_BASE_URL: Final = "ANTHROPIC_BASE_URL"
OPENAI_BASE_URL: Final = "OPENAI_BASE_URL"

NativeRoot = Literal["workspace", "home"]
"""Where a native file is written: the profile's target workspace, or the harness's ``$HOME``."""

HarnessApi = Literal["messages", "responses", "chat.completions"]
"""The model API a harness speaks to the gateway."""


@dataclass(frozen=True)
class GatewayAccess:
    """How the harness reaches the model gateway: its ``origin`` (``http://host:port``), the
    run's token (sent as the API key, and as the ``/r/<token>`` path prefix where the URL is
    passed in the environment) and the model to request. Native files only ever hold
    :attr:`public_openai_base_url`, which carries no token. ``repr`` masks the token."""

    origin: str
    token: str = field(repr=False)
    model: str

    @property
    def anthropic_base_url(self) -> str:
        """``<origin>/r/<token>``: the Anthropic base URL (for the environment only)."""
        return f"{self.origin}/r/{self.token}"

    @property
    def openai_base_url(self) -> str:
        """``<origin>/r/<token>/v1``: the OpenAI base URL (for the environment only)."""
        return f"{self.origin}/r/{self.token}/v1"

    @property
    def public_openai_base_url(self) -> str:
        """``<origin>/v1``: the OpenAI base URL without the token, for native files (the
        gateway then attributes a call by its key header)."""
        return f"{self.origin}/v1"

    @classmethod
    def from_launch_env(cls, env: Mapping[str, str], *, model: str) -> GatewayAccess:
        """Read a ``GatewayRun.launch_env(origin)`` mapping (``ANTHROPIC_BASE_URL`` ending in
        ``/r/<token>`` and ``ANTHROPIC_API_KEY``); refused when either is missing or they
        disagree."""
        base = env.get(ANTHROPIC_BASE_URL, "")
        token = env.get("ANTHROPIC_API_KEY", "")
        suffix = f"/r/{token}"
        if not token or not base.endswith(suffix) or len(base) == len(suffix):
            raise ContractError(
                [ContractIssue(f"/env/{ANTHROPIC_BASE_URL}", "gateway_env_invalid",
                               "the gateway's launch env must hold a base URL ending in the run's token")],
                subject="gateway access",
            )
        return cls(base[: -len(suffix)], token, model)


@dataclass(frozen=True)
class NativeFile:
    """One native file: relative ``path`` under ``root``, its exact bytes and POSIX mode, and
    the JSON Pointer of the profile field it comes from (``""`` for the adapter's own)."""

    root: NativeRoot
    path: str
    content: bytes = field(repr=False)
    mode: int = 0o644
    source: str = ""


@dataclass(frozen=True)
class HarnessSetting:
    """One setting the adapter made: the profile pointer it honours (``""`` for the adapter's
    own default), where it lives (``argv``, ``env``, or a native file and key) and its public
    value (a token is shown as ``<run token>``)."""

    pointer: str
    target: str
    value: str


@dataclass(frozen=True)
class ReportedField:
    """A profile field accepted without a native effect (identity only), and why."""

    pointer: str
    reason: str


@dataclass(frozen=True)
class HarnessLaunch:
    """What runs: the harness, the shell-free ``argv`` (the instruction is its last element),
    the replacement environment, the native files to write first, and the record of every
    setting and every field reported without effect. ``repr`` masks argv and env."""

    harness: HarnessType
    argv: tuple[str, ...] = field(repr=False)
    env: Mapping[str, str] = field(repr=False)
    files: tuple[NativeFile, ...]
    settings: tuple[HarnessSetting, ...]
    reported: tuple[ReportedField, ...] = ()

    def workspace_paths(self) -> tuple[str, ...]:
        """The task-targeted paths (workspace-rooted files), to restore or exclude before the
        solution patch is captured."""
        return tuple(file.path for file in self.files if file.root == "workspace")


@dataclass(frozen=True)
class HarnessUsage:
    """Usage the harness reports about itself: a cross-check of the gateway's count, never
    the source of truth."""

    input_tokens: int
    output_tokens: int
    cached_input_tokens: int = 0
    reasoning_tokens: int = 0


@dataclass(frozen=True)
class HarnessOutcome:
    """The harness's own account of a run. ``status`` is ``error`` when the exit code, the
    output or an error event says so (any one is enough); ``error`` is a stable short code
    (``exit_nonzero``, ``api_error``, ``turn_failed``, ``no_result``, ...) and
    ``api_error_status`` the HTTP status the harness saw, when it reports one."""

    status: Literal["completed", "error"]
    exit_code: int
    final_text: str | None = field(default=None, repr=False)
    usage: HarnessUsage | None = None
    error: str | None = None
    api_error_status: int | None = None


@dataclass(frozen=True)
class RefusalBehaviour:
    """How a harness reacts to a refused model call, and the status the gateway must use so
    the run ends promptly: ``refusal_status`` is a non-retryable 4xx the harness gives up on;
    ``exits_on_refusal`` says it then exits non-zero; ``retries_429_forever`` warns that a
    429 would keep it calling until its time limit; ``requests_per_refusal`` is the most
    requests one refused turn was seen to make (retries and fallbacks included)."""

    refusal_status: int
    exits_on_refusal: bool
    retries_429_forever: bool
    requests_per_refusal: int
    note: str


class HarnessAdapter(Protocol):
    """One harness: its name, the API it speaks, its refusal behaviour, the lowering of a
    profile into a launch and the parser of its output."""

    @property
    def harness(self) -> HarnessType:
        """The harness name (``claude-code``, ``codex``, ``opencode``)."""
        ...

    @property
    def api(self) -> HarnessApi:
        """The model API the harness speaks."""
        ...

    @property
    def refusal(self) -> RefusalBehaviour:
        """How the harness reacts to a refused model call."""
        ...

    def plan(
        self,
        profile: AgentProfile | AgentCandidateProfile,
        *,
        binary: str,
        access: GatewayAccess,
        instruction: str,
        workspace: str,
        home: str,
    ) -> HarnessLaunch:
        """The launch of ``binary`` on ``instruction`` in ``workspace`` (absolute, as the
        harness sees it) with ``home`` as ``$HOME``; refused when the profile holds a field the
        harness cannot honour."""
        ...

    def parse_output(self, exit_code: int, stdout: bytes, stderr: bytes) -> HarnessOutcome:
        """The harness's own account of the run from its exit code and output."""
        ...
