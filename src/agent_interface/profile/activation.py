"""Evidence that a profile was activated exactly: the native files written before the agent
process started, bound to the producer's profile plan (``agent-profile-activation.ts``).

The plan type belongs to the producer (ordinary runs and sealed benchmark runs plan
differently); the file evidence and the activation digest are shared, so producers cannot
invent competing activation records. :func:`create_agent_profile_activation_evidence_schema`
composes the two for one plan type.
"""

from __future__ import annotations

from functools import cache
from typing import Annotated, Any, Generic, TypeVar

from pydantic import AfterValidator, Field
from pydantic_core import PydanticCustomError

from agent_interface.core.canonical import Sha256Digest, is_well_formed_unicode
from agent_interface.core.contract_limits import is_safe_relative_path
from agent_interface.core.model import WireInt, WireList, WireModel
from agent_interface.core.registry import register_wire_models

__all__ = [
    "AgentProfileActivationEvidence",
    "AgentProfileActivationFileEvidence",
    "PosixFileMode",
    "create_agent_profile_activation_evidence_schema",
]

PlanT = TypeVar("PlanT")


def _activation_path(value: str) -> str:
    if not is_safe_relative_path(value, False):
        raise PydanticCustomError(
            "unsafe_relative_path", "profile activation file must use a canonical relative path"
        )
    return value


def _activation_content(value: str) -> str:
    if not is_well_formed_unicode(value):
        raise PydanticCustomError(
            "ill_formed_unicode", "profile activation content must be valid Unicode"
        )
    return value


PosixFileMode = Annotated[WireInt, Field(ge=0, le=0o777)]
"""A POSIX permission mode, ``0`` to ``0o777``."""


class AgentProfileActivationFileEvidence(WireModel):
    """One exact native file (canonical relative path, mode, UTF-8 text) applied before launch."""

    path: Annotated[str, AfterValidator(_activation_path)]
    mode: PosixFileMode
    content: Annotated[str, AfterValidator(_activation_content)]


class AgentProfileActivationEvidence(WireModel, Generic[PlanT]):
    """The producer's ``profilePlan``, the files applied for it and the activation ``digest``.

    Parametrize with the plan type (or call
    :func:`create_agent_profile_activation_evidence_schema`).
    """

    profile_plan: PlanT
    files: WireList[AgentProfileActivationFileEvidence]
    digest: Sha256Digest


@cache
def create_agent_profile_activation_evidence_schema(
    profile_plan_type: Any,
) -> type[AgentProfileActivationEvidence[Any]]:
    """``createAgentProfileActivationEvidenceSchema``: the strict activation model whose
    ``profilePlan`` is validated as ``profile_plan_type`` (a model class or any type pydantic
    validates). One class per plan type; subclass it to add plan/file consistency rules."""
    return AgentProfileActivationEvidence[profile_plan_type]


register_wire_models(AgentProfileActivationFileEvidence=AgentProfileActivationFileEvidence)
