"""A profile's confidential-computing requirements (``confidential`` of ``agentProfileSchema``).

A module of its own, importing only the core: a candidate's profile embeds these
requirements without the whole profile model (:mod:`agent_interface.profile.agent_profile`,
where the name is public too).
"""

from __future__ import annotations

from agent_interface.core.model import WireModel
from agent_interface.core.registry import register_wire_models

__all__ = ["AgentProfileConfidential"]


class AgentProfileConfidential(WireModel):
    """Confidential-computing requirements: the TEE variant to run in, an attestation nonce, and the
    ``sealed`` and ``attestationRefresh`` switches."""

    tee: str | None = None
    """TEE variant: ``tdx``, ``nitro``, ``phala-dstack``, ``sev-snp``, ``any`` or another name."""
    attestation_nonce: str | None = None
    sealed: bool | None = None
    attestation_refresh: bool | None = None


register_wire_models(AgentProfileConfidential=AgentProfileConfidential)
