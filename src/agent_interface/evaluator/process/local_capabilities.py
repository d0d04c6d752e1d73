"""The capability document of the local exact-process provider.

Everything is off but ``exactProcess``, and that is present only when the provider
enforces every promise on this host (:attr:`.LocalExactProcessProvider.exact_process`).
Imported when ``capabilities()`` is first asked: it pulls in most of the contract.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agent_interface.environment.capabilities import AgentEnvironmentCapabilities

__all__ = ["local_capability_document"]


def local_capability_document(egress: Sequence[str] | None) -> AgentEnvironmentCapabilities:
    """The document: ``exactProcess`` with ``egress`` modes, or omitted when ``None``."""
    document: dict[str, Any] = {
        "profile": {
            "namedProfiles": False,
            "systemPrompt": {"replace": False, "append": False},
            "instructions": False,
            "tools": False,
            "permissions": False,
            "mcp": False,
            "subagents": False,
            "resources": {"files": False, "instructions": False},
            "hooks": False,
            "modes": False,
            "runtimeUpdate": False,
            "validation": False,
        },
        "streaming": {"live": False, "replay": False, "detach": False, "turnIdempotency": False},
        "sessions": {"continue": False, "list": False, "messages": False},
        "workspace": {
            "read": False, "write": False, "exec": False,
            "git": False, "upload": False, "download": False,
        },
        "branching": {"checkpoint": False, "fork": False},
        "placement": False,
        "usage": False,
        "confidential": False,
    }
    if egress is not None:
        document["exactProcess"] = {"egress": list(egress)}
    return AgentEnvironmentCapabilities.parse_wire(document)
