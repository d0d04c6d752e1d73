"""MCP servers in a profile: local (shell-free command, public env), remote (URL, public
headers) and disabled entries.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    Discriminator,
    Tag,
)
from pydantic_core import PydanticCustomError

from agent_interface.core.contract_limits import (
    is_safe_relative_path,
    js_trim,
)
from agent_interface.core.model import (
    WireList,
    WireModel,
)
from agent_interface.core.registry import register_wire_models
from agent_interface.core.surrogate_text import marker_transparent
from agent_interface.profile.config import (
    AgentProfileConfigValue,
    AgentProfileEnvironment,
    AgentProfileHeaders,
    is_safe_executable,
    looks_like_credential,
)
from agent_interface.profile.scalars import (
    FalseOnly,
    ProfileJsonRecord,
    TrueOnly,
)
from agent_interface.profile.urls import parse_url

__all__ = [
    "AgentProfileDisabledMcpServer",
    "AgentProfileLocalMcpServer",
    "AgentProfileMcpServer",
    "AgentProfileRemoteMcpServer",
]


# -- MCP servers --------------------------------------------------------------------------------


def _check_command(value: str) -> str:
    if js_trim(value) == "":
        raise PydanticCustomError("blank_value", "value cannot be blank")
    if not is_safe_executable(value):
        raise PydanticCustomError(
            "unsafe_executable", "local MCP command must be a canonical public executable"
        )
    return value


def _check_cwd(value: str) -> str:
    if not is_safe_relative_path(value, True):
        raise PydanticCustomError(
            "unsafe_relative_path", "local MCP cwd must be a canonical workspace-relative path"
        )
    return value


def _check_remote_url(value: str) -> str:
    if js_trim(value) == "":
        raise PydanticCustomError("blank_value", "value cannot be blank")
    parsed = parse_url(value)
    if parsed is None or parsed.scheme not in ("http", "https"):
        raise PydanticCustomError("invalid_url", "remote MCP url must be an absolute HTTP(S) URL")
    if looks_like_credential(value):
        raise PydanticCustomError(
            "credential_in_url",
            "remote MCP url cannot contain credentials or credential-named query parameters",
        )
    return value


class AgentProfileLocalMcpServer(WireModel):
    """A spawned local (stdio) server. ``url`` and ``headers`` are refused."""

    transport: Literal["stdio"] | None = None
    command: Annotated[str, AfterValidator(_check_command)]
    args: WireList[AgentProfileConfigValue] | None = None
    env: AgentProfileEnvironment | None = None
    cwd: Annotated[str, AfterValidator(_check_cwd)] | None = None
    enabled: TrueOnly | None = None
    metadata: ProfileJsonRecord | None = None


class AgentProfileRemoteMcpServer(WireModel):
    """A remote (``sse``/``http``) server. ``command``, ``args``, ``env``, ``cwd`` are refused."""

    transport: Literal["sse", "http"] | None = None
    url: Annotated[str, AfterValidator(_check_remote_url)]
    headers: AgentProfileHeaders | None = None
    enabled: TrueOnly | None = None
    metadata: ProfileJsonRecord | None = None


class AgentProfileDisabledMcpServer(WireModel):
    """A declared but disabled server: only ``enabled: false`` and ``metadata``."""

    enabled: FalseOnly
    metadata: ProfileJsonRecord | None = None


@marker_transparent  # a discriminator reading types and keys (core.surrogate_text)
def _mcp_variant(value: Any) -> str | None:
    # The three strict shapes are mutually exclusive, so choosing one by its marker field
    # accepts exactly what the reference's plain union accepts, with precise error paths.
    if isinstance(value, Mapping):
        if value.get("enabled") is False:
            return "mcp[disabled]"
        return "mcp[remote]" if "url" in value else "mcp[local]"
    if isinstance(value, AgentProfileDisabledMcpServer):
        return "mcp[disabled]"
    if isinstance(value, AgentProfileRemoteMcpServer):
        return "mcp[remote]"
    if isinstance(value, AgentProfileLocalMcpServer):
        return "mcp[local]"
    return None


AgentProfileMcpServer = Annotated[
    Annotated[AgentProfileLocalMcpServer, Tag("mcp[local]")]
    | Annotated[AgentProfileRemoteMcpServer, Tag("mcp[remote]")]
    | Annotated[AgentProfileDisabledMcpServer, Tag("mcp[disabled]")],
    Discriminator(
        _mcp_variant,
        custom_error_type="mcp_server_invalid",
        custom_error_message="MCP server must be a JSON object",
    ),
]


register_wire_models(
    AgentProfileMcpServer=AgentProfileMcpServer,
)
