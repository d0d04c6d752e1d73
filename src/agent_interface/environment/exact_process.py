"""Isolated, reproducible process execution (``environment-exact-process.ts``).

``exactProcess`` is separate from agent-backed ``create()``: it promises a fresh
environment with no provider-managed agent, an immutable image identity, explicit
resources, bounded exact-byte file reads, a shell-free argv, a replacement (never
inherited) process environment, recoverable output and terminal reason, bounded
network access, and collision-safe idempotent recovery. A provider omits the
capability unless its real execution path enforces every one of these.

The reference states these as interfaces; the models here make each promise a
refusal at the boundary:

* a shell (``sh``, ``bash``, ``cmd.exe``, ...) as the executable, or launched through
  ``env``/``busybox``, is refused (``exact_process_shell``);
* a read without a finite positive ``maxBytes`` within
  :data:`EXACT_PROCESS_MAX_READ_BYTES` is refused (``exact_process_unbounded_read``);
* an image without an ``@sha256:`` digest is refused (``exact_process_mutable_image``);
* resources are required and must be positive; egress is ``blocked`` or ``strict``
  with an explicit domain allowlist; lifetime is a positive bound.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Mapping
from typing import Annotated, Any, ClassVar, Final, Literal, Protocol, runtime_checkable

from pydantic import BeforeValidator, Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

from agent_interface.core.canonical import canonical_digest
from agent_interface.core.contract_limits import (
    CONTRACT_MAX_ARRAY_LENGTH,
    CONTROL_CHARACTER_RE,
    BoundedIdentifier,
    BoundedJsonRecord,
    GreaterThanZeroSafeInt,
    NonNegativeSafeInt,
    SafeInt,
    Utf16Length,
    integral_float_to_int,
)
from agent_interface.core.errors import (
    ContractError,
    Refinement,
)
from agent_interface.core.model import (
    WireList,
    WireMap,
    WireModel,
    thaw,
)
from agent_interface.core.registry import register_wire_models

__all__ = [
    "EXACT_PROCESS_MAX_READ_BYTES",
    "EXACT_PROCESS_SHELL_NAMES",
    "AgentExactProcess",
    "AgentExactProcessBlockedEgress",
    "AgentExactProcessEgressMode",
    "AgentExactProcessEgressPolicy",
    "AgentExactProcessEnvironment",
    "AgentExactProcessEnvironmentQuery",
    "AgentExactProcessLaunch",
    "AgentExactProcessManager",
    "AgentExactProcessProvider",
    "AgentExactProcessReadFileRequest",
    "AgentExactProcessResources",
    "AgentExactProcessStatus",
    "AgentExactProcessStrictEgress",
    "AgentExactProcessTermination",
    "AgentExactProcessWriteFileRequest",
    "CreateAgentExactProcessEnvironmentInput",
    "check_exact_process_egress_supported",
    "exact_process_create_input_digest",
    "is_shell_executable",
]

EXACT_PROCESS_MAX_READ_BYTES: Final = 1 << 30
"""Largest ``maxBytes`` an exact-byte read may ask for (1 GiB)."""

EXACT_PROCESS_SHELL_NAMES: Final = frozenset(
    {
        "sh", "bash", "zsh", "fish", "cmd", "cmd.exe", "powershell", "pwsh",
        "dash", "ksh", "csh", "tcsh", "ash", "powershell.exe", "pwsh.exe",
    }
)
"""Executable basenames refused as a process: a shell would re-parse the argv."""

_LAUNCHERS: Final = frozenset({"env", "busybox"})
_ENV_NAME_RE: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DIGEST_PINNED_RE: Final = re.compile(r"[^\s@]+@sha256:[a-f0-9]{64}")
_DOMAIN_RE: Final = re.compile(
    r"(?=.{1,253}\Z)(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)*"
    r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?",
    re.ASCII,
)
_IPV4_RE: Final = re.compile(r"[0-9.]+")

AgentExactProcessEgressMode = Literal["blocked", "strict"]

PositiveInt = GreaterThanZeroSafeInt


def is_shell_executable(executable: str, args: tuple[str, ...] | list[str] = ()) -> bool:
    """Whether this launch runs a shell, directly or through ``env``/``busybox``."""
    name = executable.rsplit("/", 1)[-1].lower()
    if name in EXACT_PROCESS_SHELL_NAMES:
        return True
    if name in _LAUNCHERS:
        for arg in args:
            if arg.startswith("-") or "=" in arg:
                continue
            return arg.rsplit("/", 1)[-1].lower() in EXACT_PROCESS_SHELL_NAMES
    return False


class AgentExactProcessBlockedEgress(WireModel):
    """Every protocol and destination denied."""

    mode: Literal["blocked"] = "blocked"


class AgentExactProcessStrictEgress(WireModel):
    """Only the named DNS domains; address literals and other bypasses must fail."""

    mode: Literal["strict"] = "strict"
    allow_domains: Annotated[WireList[BoundedIdentifier], Field(max_length=CONTRACT_MAX_ARRAY_LENGTH)]

    @field_validator("allow_domains")
    @classmethod
    def _domains(cls, domains: tuple[str, ...]) -> tuple[str, ...]:
        for domain in domains:
            if _DOMAIN_RE.fullmatch(domain) is None or _IPV4_RE.fullmatch(domain):
                raise PydanticCustomError(
                    "exact_process_egress_domain",
                    "allowed egress entries must be DNS host names, not addresses, URLs or wildcards",
                )
        if len(set(domains)) != len(domains):
            raise PydanticCustomError(
                "exact_process_egress_duplicate", "allowed egress domains must be unique"
            )
        return domains


AgentExactProcessEgressPolicy = Annotated[
    AgentExactProcessBlockedEgress | AgentExactProcessStrictEgress, Field(discriminator="mode")
]


class AgentExactProcessResources(WireModel):
    """Explicit limits: exact execution never inherits provider defaults."""

    cpu: Annotated[float, Field(gt=0, allow_inf_nan=False)]
    memory_mb: PositiveInt
    disk_mb: PositiveInt


class _ExitTermination(WireModel):
    kind: Literal["exit"] = "exit"
    exit_code: SafeInt


class _TimeoutTermination(WireModel):
    kind: Literal["timeout"] = "timeout"
    timeout_ms: PositiveInt


_SignalName = Annotated[str, Field(pattern=r"^SIG[A-Z0-9]+$")]
"""A POSIX signal name such as ``SIGTERM``."""


class _SignalTermination(WireModel):
    kind: Literal["signal"] = "signal"
    signal: _SignalName


class _CancelledTermination(WireModel):
    kind: Literal["cancelled"] = "cancelled"


AgentExactProcessTermination = Annotated[
    _ExitTermination | _TimeoutTermination | _SignalTermination | _CancelledTermination,
    Field(discriminator="kind"),
]
"""Why a process ended (the reference's ``AgentCandidateTermination``)."""


class AgentExactProcessStatus(WireModel):
    """Running or terminal state; a terminal state always names its reason."""

    pid: NonNegativeSafeInt
    running: bool
    exit_code: SafeInt
    exit_signal: _SignalName | None = None
    termination: AgentExactProcessTermination | None = None

    @model_validator(mode="after")
    def _state(self) -> AgentExactProcessStatus:
        issues = Refinement("AgentExactProcessStatus")
        if self.running:
            if self.exit_code != -1:
                issues.add(("exitCode",), "exact_process_running_exit", "a running process reports exitCode -1")
            if self.termination is not None:
                issues.add(("termination",), "exact_process_running_terminated", "a running process has no termination")
        elif self.termination is None:
            issues.add(("running",), "exact_process_termination_missing", "a terminated process must report its terminal reason")
        elif isinstance(self.termination, _ExitTermination) and self.termination.exit_code != self.exit_code:
            issues.add(("exitCode",), "exact_process_exit_mismatch", "exitCode must equal the exit termination's code")
        issues.check()
        return self


def _no_control(value: str) -> str:
    if "\x00" in value:
        raise PydanticCustomError("exact_process_nul", "process strings cannot contain NUL")
    return value


_ProcessString = Annotated[str, Utf16Length(max=1_048_576)]
_AbsolutePath = Annotated[str, Utf16Length(max=4_096, min=1)]


def _check_absolute(path: str) -> str:
    if not path.startswith("/") or CONTROL_CHARACTER_RE.search(path):
        raise PydanticCustomError(
            "exact_process_path", "path must be absolute and free of control characters"
        )
    if any(segment == ".." for segment in path.split("/")):
        raise PydanticCustomError("exact_process_path", "path cannot contain '..' segments")
    return path


class AgentExactProcessLaunch(WireModel):
    """Shell-free launch whose environment replaces, rather than extends, ambient variables."""

    repr_arguments: ClassVar[frozenset[str]] = frozenset({"args"})

    executable: Annotated[str, Utf16Length(max=4_096, min=1)]
    args: Annotated[WireList[_ProcessString], Field(max_length=CONTRACT_MAX_ARRAY_LENGTH)]
    cwd: _AbsolutePath
    env: WireMap[_ProcessString] = Field(repr=False)
    stdin: _ProcessString | None = Field(default=None, repr=False)
    timeout_ms: NonNegativeSafeInt

    @model_validator(mode="after")
    def _launch(self) -> AgentExactProcessLaunch:
        issues = Refinement("AgentExactProcessLaunch")
        exe = self.executable
        if CONTROL_CHARACTER_RE.search(exe) or any(c.isspace() for c in exe) or "\\" in exe:
            issues.add(("executable",), "exact_process_executable", "executable cannot contain whitespace, control characters or backslashes")
        elif not exe.startswith("/") and "PATH" not in self.env:
            issues.add(("executable",), "exact_process_executable_path", "executable must be absolute unless env supplies an explicit PATH")
        elif any(segment in ("", ".", "..") for segment in exe.lstrip("/").split("/")):
            issues.add(("executable",), "exact_process_executable", "executable path cannot contain empty, '.' or '..' segments")
        if is_shell_executable(exe, self.args):
            issues.add(("executable",), "exact_process_shell", "a shell cannot be the launched process; pass the program and its argv directly")
        for index, arg in enumerate(self.args):
            if "\x00" in arg:
                issues.add(("args", index), "exact_process_nul", "argv entries cannot contain NUL")
        try:
            _check_absolute(self.cwd)
        except PydanticCustomError as error:
            issues.add(("cwd",), error.type, error.message())
        for name, value in self.env.items():
            if _ENV_NAME_RE.fullmatch(name) is None:
                issues.add(("env", name), "exact_process_env_name", "environment variable names must match [A-Za-z_][A-Za-z0-9_]*")
            elif "\x00" in value:
                issues.add(("env", name), "exact_process_nul", "environment values cannot contain NUL")
        issues.check()
        return self


class AgentExactProcessReadFileRequest(WireModel):
    """Exact-byte read that fails before loading a file larger than ``maxBytes``."""

    path: _AbsolutePath
    max_bytes: Annotated[int, BeforeValidator(integral_float_to_int)]

    @field_validator("path")
    @classmethod
    def _path(cls, path: str) -> str:
        return _check_absolute(path)

    @field_validator("max_bytes")
    @classmethod
    def _bounded(cls, value: int) -> int:
        if value <= 0 or value > EXACT_PROCESS_MAX_READ_BYTES:
            raise PydanticCustomError(
                "exact_process_unbounded_read",
                "maxBytes must be a positive integer no larger than {limit}",
                {"limit": EXACT_PROCESS_MAX_READ_BYTES},
            )
        return value


class AgentExactProcessWriteFileRequest(WireModel):
    """Exact bytes to an absolute path with a POSIX mode from 0 through 0o7777."""

    path: _AbsolutePath
    mode: Annotated[int, BeforeValidator(integral_float_to_int), Field(ge=0, le=0o7777)]

    @field_validator("path")
    @classmethod
    def _path(cls, path: str) -> str:
        return _check_absolute(path)


class CreateAgentExactProcessEnvironmentInput(WireModel):
    """A fresh environment with no provider-managed agent process."""

    image: Annotated[str, Utf16Length(max=4_096, min=1)]
    egress: AgentExactProcessEgressPolicy
    max_lifetime_ms: PositiveInt
    provision_timeout_ms: PositiveInt | None = None
    resources: AgentExactProcessResources
    metadata: BoundedJsonRecord
    idempotency_key: BoundedIdentifier
    provider_options: BoundedJsonRecord | None = None

    @field_validator("image")
    @classmethod
    def _immutable(cls, image: str) -> str:
        if _DIGEST_PINNED_RE.fullmatch(image) is None:
            raise PydanticCustomError(
                "exact_process_mutable_image",
                "image must be pinned by an immutable @sha256:<64 hex> digest",
            )
        return image


class AgentExactProcessEnvironmentQuery(WireModel):
    """Filter for listing exact-process environments: metadata to match and provider options."""

    metadata: BoundedJsonRecord | None = None
    provider_options: BoundedJsonRecord | None = None


def exact_process_create_input_digest(
    value: CreateAgentExactProcessEnvironmentInput | Mapping[str, Any],
) -> str:
    """Identity of an exact-process create: every field except ``idempotencyKey``.

    Same key + same digest recovers the same environment; same key + another digest
    is a collision and must be refused before any effect.
    """
    wire = value.to_wire() if isinstance(value, WireModel) else thaw(dict(value))
    material = {k: v for k, v in wire.items() if k not in ("idempotencyKey", "signal")}
    return canonical_digest({"kind": "agent-exact-process-create.v1", "input": material})


def check_exact_process_egress_supported(
    supported: tuple[str, ...] | list[str] | None, policy: Any
) -> None:
    """Refuse a policy whose mode the provider does not enforce (never weaken it).

    ``supported`` is ``capabilities.exactProcess.egress`` (``None`` when the provider
    does not declare exactProcess at all).
    """
    mode = policy.get("mode") if isinstance(policy, Mapping) else getattr(policy, "mode", None)
    if supported is None:
        raise ContractError.single(
            "/exactProcess", "exact_process_unsupported", "provider does not declare exactProcess"
        )
    if mode not in supported:
        raise ContractError.single(
            "/egress/mode",
            "exact_process_egress_unsupported",
            "the provider does not enforce this egress mode; refusing instead of weakening it",
        )


class AgentExactProcess(Protocol):
    """Recoverable handle for one shell-free process."""

    @property
    def pid(self) -> int: ...

    async def status(self) -> AgentExactProcessStatus: ...

    async def wait(self) -> AgentExactProcessTermination: ...

    async def kill(self) -> None: ...

    def stdout(self) -> AsyncIterator[str]: ...

    def stderr(self) -> AsyncIterator[str]: ...


class AgentExactProcessManager(Protocol):
    """The processes of one exact-process environment: list their statuses, get one by pid, spawn
    one from a launch."""

    async def list(self) -> list[AgentExactProcessStatus]: ...

    async def get(self, pid: int) -> AgentExactProcess | None: ...

    async def spawn(self, launch: AgentExactProcessLaunch) -> AgentExactProcess: ...


@runtime_checkable
class AgentExactProcessEnvironment(Protocol):
    """An environment that runs exact processes: its processes, bounded file writes and reads, and
    destroy."""

    @property
    def id(self) -> str: ...

    @property
    def provider(self) -> str: ...

    @property
    def process(self) -> AgentExactProcessManager: ...

    async def write_file(self, path: str, data: bytes, *, mode: int) -> None: ...

    async def read_file(self, path: str, *, max_bytes: int) -> bytes: ...

    async def destroy(self) -> None: ...


@runtime_checkable
class AgentExactProcessProvider(Protocol):
    """Creates, finds and lists exact-process environments."""

    async def create(
        self, input: CreateAgentExactProcessEnvironmentInput
    ) -> AgentExactProcessEnvironment: ...

    async def get(self, id: str) -> AgentExactProcessEnvironment | None: ...

    async def list(
        self, query: AgentExactProcessEnvironmentQuery | None = None
    ) -> list[AgentExactProcessEnvironment]: ...


register_wire_models(
    AgentExactProcessEgressPolicy=AgentExactProcessEgressPolicy,
    AgentExactProcessResources=AgentExactProcessResources,
    AgentExactProcessTermination=AgentExactProcessTermination,
    AgentExactProcessStatus=AgentExactProcessStatus,
    AgentExactProcessLaunch=AgentExactProcessLaunch,
    AgentExactProcessReadFileRequest=AgentExactProcessReadFileRequest,
    AgentExactProcessWriteFileRequest=AgentExactProcessWriteFileRequest,
    CreateAgentExactProcessEnvironmentInput=CreateAgentExactProcessEnvironmentInput,
    AgentExactProcessEnvironmentQuery=AgentExactProcessEnvironmentQuery,
)
