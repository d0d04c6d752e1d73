"""What one environment create call did (``agentEnvironmentCreationSchema``).

A module of its own, importing only the registry: validating this two-value literal
should not import the turn models and everything they embed.
"""

from __future__ import annotations

from typing import Literal

from agent_interface.core.registry import register_wire_models

__all__ = ["AgentEnvironmentCreation"]

AgentEnvironmentCreation = Literal["created", "replayed"]
"""What one create call did: provisioned (``created``) or matched a key (``replayed``).

Absent when the provider cannot prove either; a consumer never destroys an
environment whose creation it cannot prove, because another caller can hold it.
"""

register_wire_models(AgentEnvironmentCreation=AgentEnvironmentCreation)
