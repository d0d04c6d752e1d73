"""Command turns (``environment-command-turn.ts``): exec-only environments that answer a turn
by running a command, and the events and capability document such an environment reports.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import (
    TYPE_CHECKING,
    Any,
    TypeVar,
)

from agent_interface.core.canonical import (
    MAX_SAFE_INTEGER,
)
from agent_interface.core.errors import (
    ContractError,
)
from agent_interface.core.model import (
    WireModel,
    thaw,
)
from agent_interface.environment.capabilities import (
    AgentEnvironmentCapabilities,
    WorkspaceCapabilities,
)
from agent_interface.environment.events import (
    AgentEnvironmentEvent,
)
from agent_interface.environment.workspace import (
    ExecRequest,
    ExecResult,
)

if TYPE_CHECKING:
    pass
from agent_interface.provider.turn import AgentTurnInput

__all__ = [
    "command_turn_events",
    "exec_only_environment_capabilities",
    "exec_result_from_unknown",
]


# ---------------------------------------------------------------------------
# Command turns (``environment-command-turn.ts``)
# ---------------------------------------------------------------------------


M = TypeVar("M", bound=WireModel)


def _present_only(model: type[M], **fields: Any) -> M:
    """Build ``model`` from the fields that have a value (``None`` means absent)."""
    return model(**{name: value for name, value in fields.items() if value is not None})


def _string_option(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _finite_number(value: Any) -> int | float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return None
    return value


def exec_result_from_unknown(value: Any, source: str) -> ExecResult:
    """Read a sandbox SDK's command answer as :class:`ExecResult`.

    The exit status comes from ``exitCode`` or ``code``, output from ``stdout`` or
    ``output``, errors from ``stderr`` or ``error``. An answer with no finite exit
    status is refused (``exec_exit_status_missing``): reading it as 0 would report a
    command nobody watched as one that succeeded.
    """
    record: Mapping[str, Any] = value if isinstance(value, Mapping) else {}
    exit_code = _finite_number(record.get("exitCode"))
    if exit_code is None:
        exit_code = _finite_number(record.get("code"))
    if exit_code is None:
        raise ContractError.single(
            "/exitCode",
            "exec_exit_status_missing",
            f"{source} returned no exit status: a command result must carry a finite exitCode or code",
        )
    if isinstance(exit_code, float):
        if not exit_code.is_integer():
            raise ContractError.single("/exitCode", "exec_exit_status_integer", f"{source} returned a fractional exit status")
        exit_code = int(exit_code)
    if not -MAX_SAFE_INTEGER <= exit_code <= MAX_SAFE_INTEGER:
        raise ContractError.single(
            "/exitCode", "exec_exit_status_integer", f"{source} returned an exit status beyond the safe integer range"
        )

    def text(primary: str, secondary: str) -> str:
        for key in (primary, secondary):
            found = record.get(key)
            if isinstance(found, str):
                return found
        return ""

    return ExecResult(exit_code=exit_code, stdout=text("stdout", "output"), stderr=text("stderr", "error"))


TurnCommand = Callable[[AgentTurnInput, Any], "str | Awaitable[str | None] | None"]


async def command_turn_events(
    input: AgentTurnInput,
    environment: Any,
    provider_label: str,
    turn_command: TurnCommand | None = None,
) -> AsyncIterator[AgentEnvironmentEvent]:
    """Run one turn as a single ``exec`` command and yield its two events.

    The command is the caller's ``turn_command``, then ``providerOptions.command``,
    then ``providerOptions.agentCommand``, then the prompt; with none of them the turn
    is refused (``command_turn_missing``) before anything runs. A string answered by
    ``turn_command`` is final, even an empty one (refused); only ``None`` falls through.
    """
    command: str | None = None
    if turn_command is not None:
        chosen = turn_command(input, environment)
        command = chosen if chosen is None or isinstance(chosen, str) else await chosen
    options: Mapping[str, Any] = input.provider_options or {}
    if command is None:
        # A caller's command, even an empty one, is final; only None falls through.
        command = (
            _string_option(options.get("command"))
            or _string_option(options.get("agentCommand"))
            or input.prompt
        )
    if not command:
        raise ContractError.single(
            "",
            "command_turn_missing",
            f"{provider_label} provider requires turnCommand, providerOptions.command, or prompt",
        )
    exec_ = getattr(environment, "exec", None)
    result: ExecResult | None = None
    if exec_ is not None:
        result = await exec_(
            command,
            _present_only(ExecRequest, cwd=_string_option(options.get("cwd")), timeout_ms=input.timeout_ms),
        )
    text = result.stdout if result is not None else ""
    yield AgentEnvironmentEvent(type="message.part.updated", data={"delta": text})
    yield AgentEnvironmentEvent(
        type="result",
        data={
            "finalText": text,
            "status": "completed" if result is not None and result.exit_code == 0 else "failed",
            "exitCode": result.exit_code if result is not None else 1,
            "stderr": result.stderr if result is not None else "",
        },
    )


def exec_only_environment_capabilities(
    workspace: WorkspaceCapabilities | Mapping[str, Any],
) -> AgentEnvironmentCapabilities:
    """The capability document of a provider whose only surface is a workspace.

    No profile, stream, session or branching surface is claimed; ``placement`` is
    true and the caller states its own workspace facts.
    """
    workspace_wire = workspace.to_wire() if isinstance(workspace, WireModel) else thaw(dict(workspace))
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
                "resources": {
                    "files": True,
                    "instructions": False,
                    "tools": False,
                    "skills": False,
                    "agents": False,
                    "commands": False,
                },
                "hooks": False,
                "modes": False,
                "runtimeUpdate": False,
                "validation": False,
            },
            "streaming": {"live": False, "replay": False, "detach": False, "turnIdempotency": False},
            "sessions": {"continue": False, "list": False, "messages": False},
            "workspace": workspace_wire,
            "branching": {"checkpoint": False, "fork": False},
            "placement": True,
            "usage": False,
            "confidential": False,
        }
    )
