"""MCP configuration and backend list shapes (``mcp.ts``)."""

from __future__ import annotations

from typing import Any

import pytest

from agent_interface.core.errors import ContractError
from agent_interface.core.model import wire_adapter
from agent_interface.profile.mcp import (
    BackendArtifact,
    BackendListOptions,
    BackendListResult,
    LocalMcpConfig,
    McpConfig,
    McpServerStatus,
    McpStatusResponse,
    RemoteMcpConfig,
)


def refusal(data: Any, tp: Any = McpConfig) -> list[tuple[str, str]]:
    with pytest.raises(ContractError) as caught:
        wire_adapter(tp).parse(data)
    return [(issue.path, issue.code) for issue in caught.value.issues]


@pytest.mark.parametrize(
    "doc",
    [
        {"type": "local", "command": "npx server"},
        {"type": "stdio", "command": ["npx", "-y", "server"], "args": ["--port", "1"]},
        {"type": "local", "command": "srv", "env": {"TOKEN": "x"}, "enabled": True, "timeout": 5000},
        {"type": "remote", "url": "https://mcp.example.com"},
        {"type": "http", "url": "http://localhost:3000/mcp", "headers": {"Authorization": "Bearer x"}},
    ],
)
def test_accepts_each_config_form(doc: dict[str, Any]) -> None:
    parsed = wire_adapter(McpConfig).parse(doc)
    assert isinstance(parsed, LocalMcpConfig if doc["type"] in ("local", "stdio") else RemoteMcpConfig)
    assert wire_adapter(McpConfig).to_wire(parsed) == doc


def test_refusals() -> None:
    assert refusal({"type": "ws", "url": "wss://x"})[0][1] == "union_tag_invalid"
    assert refusal({"type": "local"}) == [("/command", "missing")]
    assert ("/command", "too_short") in refusal({"type": "local", "command": []})
    assert refusal({"type": "remote", "url": "file:///etc/passwd"}) == [("/url", "mcp_url_scheme")]
    assert refusal({"type": "local", "command": "x", "url": "y"}) == [("/url", "extra_forbidden")]
    assert refusal({"type": "remote", "url": "https://x", "timeout": 0}) == [("/timeout", "greater_than")]
    assert refusal({"type": "local", "command": "x", "env": {"A": 1}}) == [("/env/A", "string_type")]
    assert refusal({"type": "local", "command": "x", "enabled": "yes"}) == [("/enabled", "bool_type")]


def test_secrets_stay_out_of_repr() -> None:
    local = wire_adapter(McpConfig).parse({"type": "local", "command": "x", "env": {"K": "sekrit-value"}})
    remote = wire_adapter(McpConfig).parse(
        {"type": "http", "url": "https://x", "headers": {"Authorization": "Bearer sekrit-value"}}
    )
    assert "sekrit" not in repr(local)
    assert "sekrit" not in repr(remote)


def test_status_and_lists() -> None:
    status = McpStatusResponse.parse_wire(
        {"servers": {"a": {"name": "a", "status": "connected", "type": "stdio"}}}
    )
    assert status.servers["a"].status == "connected"
    assert refusal({"name": "a", "status": "up"}, McpServerStatus)[0][0] == "/status"
    assert BackendListOptions.parse_wire({"limit": 10, "cursor": "c"}).limit == 10
    assert refusal({"limit": 0}, BackendListOptions) == [("/limit", "greater_than")]
    page = BackendListResult[BackendArtifact].parse_wire(
        {"items": [{"path": "out.txt", "sizeBytes": 3}], "nextCursor": "n"}
    )
    assert page.items[0].size_bytes == 3
    assert refusal({"path": "x", "sizeBytes": -1}, BackendArtifact) == [("/sizeBytes", "greater_than_equal")]
