"""JSON Schema (draft 2020-12) of an authored AgentProfile (``agentProfileJsonSchema``)."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from agent_interface.core.model import wire_adapter
from agent_interface.profile.agent_profile import AgentProfile

__all__ = ["agent_profile_json_schema"]


@cache
def _schema_text() -> str:
    return json.dumps(wire_adapter(AgentProfile).json_schema(), sort_keys=True)


def agent_profile_json_schema() -> dict[str, Any]:
    """A fresh copy of the model-facing JSON Schema of :class:`AgentProfile`, generated from
    the model's input contract (wire names, strict objects, no ``$schema`` key, for embedding
    as a tool-argument subschema). It describes shapes; rules that JSON Schema cannot state
    (seat chains, credential-free config, Unicode record keys, ceilings within the total) are
    checked only by :meth:`AgentProfile.parse_wire`, which remains the admission check."""
    schema: dict[str, Any] = json.loads(_schema_text())
    return schema
