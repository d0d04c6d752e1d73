"""Where an environment runs (``placementInfoSchema`` of ``environment-requests.ts``).

A module of its own, importing only the core: a fork result names its placement
without importing the workspace requests (:mod:`agent_interface.environment.workspace`,
where the name is public too).
"""

from __future__ import annotations

from typing import Literal

from agent_interface.core.contract_limits import BoundedIdentifier, BoundedJsonRecord
from agent_interface.core.model import WireModel
from agent_interface.core.registry import register_wire_models

__all__ = ["PlacementInfo"]


class PlacementInfo(WireModel):
    """Where an environment runs (sandbox, fleet, machine, region) and provider metadata about it."""

    kind: Literal["local", "sandbox", "fleet", "provider"]
    sandbox_id: BoundedIdentifier | None = None
    fleet_id: BoundedIdentifier | None = None
    machine_id: BoundedIdentifier | None = None
    region: BoundedIdentifier | None = None
    provider_metadata: BoundedJsonRecord | None = None


register_wire_models(PlacementInfo=PlacementInfo)
