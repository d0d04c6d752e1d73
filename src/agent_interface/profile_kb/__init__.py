"""Profile knowledge base (``@tangle-network/agent-interface/profile-kb``).

Dated harness and model facts, conditional vendor guidance, and reproduced platform
learnings, each claim citing the source it came from and the day it was checked.
Sources guide investigation; they do not prove that a technique improves this
platform's behaviour.

:func:`with_profile_kb` composes the agent-facing guidance into a profile's prompt as
marked ``<profile-guidance source="..." id="...">`` blocks;
:func:`compose_agent_profile_guidance` is the composer other knowledge layers use with
their own source names.

Scope of a learning: the selector matches harness and model only. Any narrower
condition (versions, settings, task family) must stay in the learning's text, or the
finding stays in its evaluation record. Claim provenance does not revalidate a run or
authorize an experiment.
"""

from __future__ import annotations

from agent_interface.core.registry import register_wire_models
from agent_interface.profile_kb.compose import (
    PROFILE_KB_CHECKED_AT,
    PROFILE_KB_SOURCES,
    ProfileKbSelection,
    find_profile_kb_harness,
    find_profile_kb_model,
    profile_kb_channel,
    profile_kb_guidance,
    with_profile_kb,
)
from agent_interface.profile_kb.guidance import (
    AgentProfileGuidanceBlock,
    AgentProfileGuidanceChannel,
    GuidanceBlockError,
    compose_agent_profile_guidance,
    compose_guidance_prompt,
    is_owned_guidance_line,
    render_guidance_block,
    strip_guidance_text,
)
from agent_interface.profile_kb.harnesses import profile_kb_harnesses
from agent_interface.profile_kb.models import profile_kb_models
from agent_interface.profile_kb.records import (
    PROFILE_KB_SOURCE_AUDIT,
    profile_kb_discrepancies,
    profile_kb_learnings,
)
from agent_interface.profile_kb.types import (
    PROFILE_KB_CLAIM_AUDIENCES,
    PROFILE_KB_CLAIM_BASES,
    PROFILE_KB_SOURCE_AUTHORITIES,
    PROFILE_KB_SURFACES,
    IsoDate,
    ProfileKbClaim,
    ProfileKbClaimAudience,
    ProfileKbClaimBasis,
    ProfileKbDiscrepancy,
    ProfileKbHarness,
    ProfileKbLearning,
    ProfileKbLearningEvidence,
    ProfileKbLearningScope,
    ProfileKbModel,
    ProfileKbSource,
    ProfileKbSourceAuthority,
    ProfileKbSurface,
    is_iso_date,
    project_claims,
)

__all__ = [
    "PROFILE_KB_CHECKED_AT",
    "PROFILE_KB_CLAIM_AUDIENCES",
    "PROFILE_KB_CLAIM_BASES",
    "PROFILE_KB_SOURCES",
    "PROFILE_KB_SOURCE_AUDIT",
    "PROFILE_KB_SOURCE_AUTHORITIES",
    "PROFILE_KB_SURFACES",
    "AgentProfileGuidanceBlock",
    "AgentProfileGuidanceChannel",
    "GuidanceBlockError",
    "IsoDate",
    "ProfileKbClaim",
    "ProfileKbClaimAudience",
    "ProfileKbClaimBasis",
    "ProfileKbDiscrepancy",
    "ProfileKbHarness",
    "ProfileKbLearning",
    "ProfileKbLearningEvidence",
    "ProfileKbLearningScope",
    "ProfileKbModel",
    "ProfileKbSelection",
    "ProfileKbSource",
    "ProfileKbSourceAuthority",
    "ProfileKbSurface",
    "compose_agent_profile_guidance",
    "compose_guidance_prompt",
    "find_profile_kb_harness",
    "find_profile_kb_model",
    "is_iso_date",
    "is_owned_guidance_line",
    "profile_kb_channel",
    "profile_kb_discrepancies",
    "profile_kb_guidance",
    "profile_kb_harnesses",
    "profile_kb_learnings",
    "profile_kb_models",
    "project_claims",
    "render_guidance_block",
    "strip_guidance_text",
    "with_profile_kb",
]

register_wire_models(
    ProfileKbSource=ProfileKbSource,
    ProfileKbClaim=ProfileKbClaim,
    ProfileKbHarness=ProfileKbHarness,
    ProfileKbModel=ProfileKbModel,
    ProfileKbLearning=ProfileKbLearning,
    ProfileKbDiscrepancy=ProfileKbDiscrepancy,
    ProfileKbSurface=ProfileKbSurface,
    ProfileKbSelection=ProfileKbSelection,
    AgentProfileGuidanceBlock=AgentProfileGuidanceBlock,
    AgentProfileGuidanceChannel=AgentProfileGuidanceChannel,
)
