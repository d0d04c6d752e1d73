"""The capability document of the local exact-process provider.

Everything is off but ``exactProcess``, and that is present only when the provider
enforces every promise on this host (:attr:`.LocalExactProcessProvider.exact_process`).
Imported when ``capabilities()`` is first asked: it pulls in most of the contract.
"""

from __future__ import annotations

from collections.abc import Sequence

from agent_interface.environment.capabilities import AgentEnvironmentCapabilities
from agent_interface.provider.capability_builder import exact_process_only_capabilities

__all__ = ["local_capability_document"]


def local_capability_document(egress: Sequence[str] | None) -> AgentEnvironmentCapabilities:
    """The document: ``exactProcess`` with ``egress`` modes, or omitted when ``None``."""
    return exact_process_only_capabilities(egress)
