"""The runner that measured a profile change (``agentProfileImprovementExecutionRefSchema``
of ``agent-profile-improvement*.ts``) and the trimmed evidence strings it shares with the
improvement records.

A module of its own, importing only the core: an activation names its runner without
importing the experiment records of :mod:`agent_interface.candidate.improvement` (where
the name is public too).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field

from agent_interface.core.canonical import Sha256Digest
from agent_interface.core.contract_limits import Utf16Length, js_trim
from agent_interface.core.model import WireModel
from agent_interface.core.registry import register_wire_models
from agent_interface.core.surrogate_text import marker_transparent

__all__ = ["AgentProfileImprovementExecutionRef"]


@marker_transparent  # outer whitespace only (core.surrogate_text)
def _trimmed(value: Any) -> Any:
    return js_trim(value) if isinstance(value, str) else value


EvidenceKind = Annotated[
    str,
    BeforeValidator(_trimmed),
    Utf16Length(min=1, max=100),
    Field(pattern=r"^[a-z][a-z0-9-]*$"),
]
EvidenceIdentity = Annotated[str, BeforeValidator(_trimmed), Utf16Length(min=1, max=500)]


class AgentProfileImprovementExecutionRef(WireModel):
    """Non-secret identity of the runner that measured, and can activate, a profile change."""

    kind: Literal["agent-profile-improvement-execution-ref"]
    identity: EvidenceIdentity
    digest: Sha256Digest


register_wire_models(AgentProfileImprovementExecutionRef=AgentProfileImprovementExecutionRef)
