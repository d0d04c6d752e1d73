"""MCP server configuration and status shapes, and backend list helpers (``mcp.ts``).

A local server is launched as a process (``type`` ``local`` or ``stdio``); a remote
server is reached over HTTP (``type`` ``remote`` or ``http``). Environment values and
headers may hold credentials: they are never included in a message or ``repr``.
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Generic, Literal, TypeVar

from pydantic import Field, field_validator
from pydantic_core import PydanticCustomError

from agent_interface.core.contract_limits import (
    CONTRACT_MAX_ARRAY_LENGTH,
    BoundedIdentifier,
    BoundedString,
    GreaterThanZeroSafeInt,
    NonNegativeSafeInt,
    Utf16Length,
)
from agent_interface.core.model import (
    WireList,
    WireMap,
    WireModel,
)
from agent_interface.core.registry import register_wire_models

__all__ = [
    "BackendArtifact",
    "BackendListOptions",
    "BackendListResult",
    "LocalMcpConfig",
    "McpConfig",
    "McpServerStatus",
    "McpStatusResponse",
    "RemoteMcpConfig",
]

T = TypeVar("T")

_Command = Annotated[str, Utf16Length(max=16_384, min=1)]
_Argv = Annotated[WireList[BoundedString], Field(min_length=1, max_length=CONTRACT_MAX_ARRAY_LENGTH)]


class LocalMcpConfig(WireModel):
    """A process-launched MCP server: a command string or an argv list."""

    repr_argv: ClassVar[frozenset[str]] = frozenset({"command"})
    repr_arguments: ClassVar[frozenset[str]] = frozenset({"args"})

    type: Literal["local", "stdio"]
    command: _Command | _Argv
    args: Annotated[WireList[BoundedString], Field(max_length=CONTRACT_MAX_ARRAY_LENGTH)] | None = None
    env: WireMap[BoundedString] | None = Field(default=None, repr=False)
    enabled: bool | None = None
    timeout: Annotated[float, Field(gt=0, allow_inf_nan=False)] | None = None


class RemoteMcpConfig(WireModel):
    """An HTTP-reached MCP server."""

    type: Literal["remote", "http"]
    url: Annotated[str, Utf16Length(max=16_384, min=1)]
    headers: WireMap[BoundedString] | None = Field(default=None, repr=False)
    enabled: bool | None = None
    timeout: Annotated[float, Field(gt=0, allow_inf_nan=False)] | None = None

    @field_validator("url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        lowered = value.lower()
        if not (lowered.startswith("http://") or lowered.startswith("https://")):
            raise PydanticCustomError("mcp_url_scheme", "remote MCP url must be http(s)")
        return value


McpConfig = Annotated[LocalMcpConfig | RemoteMcpConfig, Field(discriminator="type")]
"""One MCP server configuration (``McpConfig``)."""


class McpServerStatus(WireModel):
    """The state of one MCP server as a backend reports it: name, status, transport type and error."""

    name: BoundedIdentifier
    status: Literal["connected", "disconnected", "error", "unknown"]
    type: Literal["local", "remote", "stdio", "http"] | None = None
    error: BoundedString | None = None


class McpStatusResponse(WireModel):
    """The MCP servers a backend reports, with their states."""

    servers: WireMap[McpServerStatus]


class BackendListOptions(WireModel):
    """Paging for a backend listing: a limit and a cursor."""

    limit: GreaterThanZeroSafeInt | None = None
    cursor: BoundedString | None = None


class BackendListResult(WireModel, Generic[T]):
    """One page of items and the cursor of the next page."""

    items: WireList[T]
    next_cursor: BoundedString | None = None


class BackendArtifact(WireModel):
    """A file a backend produced: its path, size and last update."""

    path: BoundedString
    size_bytes: NonNegativeSafeInt | None = None
    updated_at: BoundedString | None = None


register_wire_models(
    McpConfig=McpConfig,
    LocalMcpConfig=LocalMcpConfig,
    RemoteMcpConfig=RemoteMcpConfig,
    McpServerStatus=McpServerStatus,
    McpStatusResponse=McpStatusResponse,
    BackendListOptions=BackendListOptions,
    BackendArtifact=BackendArtifact,
)
