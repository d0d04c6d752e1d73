"""Public identity of the rules a provider used to capture a workspace's source
(``agent-workspace-source-snapshot.ts``).

The policy names provider-declared capture rules and binds them with a digest of the
canonical policy document the provider keeps; it does not claim that two providers
capture the same fields. Its text fields are public identity: a value that looks like
a credential is refused.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator
from pydantic_core import PydanticCustomError

from agent_interface.core.canonical import Sha256Digest, is_well_formed_unicode
from agent_interface.core.contract_limits import (
    CONTROL_CHARACTER_RE,
    PositiveSafeInt,
    Utf16Length,
    js_trim,
)
from agent_interface.core.model import WireModel
from agent_interface.core.registry import register_wire_models
from agent_interface.profile.config import looks_like_credential

__all__ = [
    "AgentWorkspacePublicIdentifier",
    "AgentWorkspaceSourceSnapshotPolicy",
    "is_public_workspace_text",
]


def is_public_workspace_text(value: str) -> bool:
    """Non-blank, well-formed text without control characters or credential-like material."""
    return (
        js_trim(value) != ""
        and is_well_formed_unicode(value)
        and CONTROL_CHARACTER_RE.search(value) is None
        and not looks_like_credential(value)
    )


def _check_public_identifier(value: str) -> str:
    if not is_public_workspace_text(value):
        raise PydanticCustomError(
            "workspace_identifier_not_public",
            "public workspace identity cannot carry credential-like material",
        )
    return value


AgentWorkspacePublicIdentifier = Annotated[
    str, Utf16Length(max=500, min=1), AfterValidator(_check_public_identifier)
]
"""1..500 UTF-16 code units of public, non-credential text (``agentWorkspacePublicIdentifierSchema``)."""


class AgentWorkspaceSourceSnapshotPolicy(WireModel):
    """Provider-declared capture rules, by name, version and policy-document digest."""

    kind: Literal["provider-declared"]
    name: AgentWorkspacePublicIdentifier
    version: PositiveSafeInt
    digest: Sha256Digest


register_wire_models(AgentWorkspaceSourceSnapshotPolicy=AgentWorkspaceSourceSnapshotPolicy)
