"""Profile resources and prompt (``profile-schema.ts``): inline and pinned GitHub resources,
file mounts, and the system-prompt / append-system-prompt pair.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import (
    Field,
)

from agent_interface.core.model import (
    WireList,
    WireModel,
)
from agent_interface.core.registry import register_wire_models

__all__ = [
    "AgentProfileFileMount",
    "AgentProfileGitHubResource",
    "AgentProfileInlineResource",
    "AgentProfilePrompt",
    "AgentProfileResourceRef",
    "AgentProfileResources",
    "define_github_resource",
    "define_inline_resource",
]


class AgentProfileInlineResource(WireModel):
    kind: Literal["inline"]
    name: str
    content: str


class AgentProfileGitHubResource(WireModel):
    kind: Literal["github"]
    repository: str | None = None
    """``owner/repo``; when omitted the provider resolves ``path`` in its ambient repository."""
    path: str
    ref: str | None = None
    name: str | None = None


AgentProfileResourceRef = Annotated[
    AgentProfileInlineResource | AgentProfileGitHubResource, Field(discriminator="kind")
]


def define_inline_resource(name: str, content: str) -> AgentProfileInlineResource:
    return AgentProfileInlineResource(kind="inline", name=name, content=content)


def define_github_resource(
    path: str, *, repository: str | None = None, ref: str | None = None, name: str | None = None
) -> AgentProfileGitHubResource:
    given = {"repository": repository, "ref": ref, "name": name}
    return AgentProfileGitHubResource(
        kind="github",
        path=path,
        **{key: value for key, value in given.items() if value is not None},
    )


class AgentProfileFileMount(WireModel):
    path: str
    resource: AgentProfileResourceRef
    executable: bool | None = None


class AgentProfileResources(WireModel):
    files: WireList[AgentProfileFileMount] | None = None
    tools: WireList[AgentProfileResourceRef] | None = None
    skills: WireList[AgentProfileResourceRef] | None = None
    agents: WireList[AgentProfileResourceRef] | None = None
    commands: WireList[AgentProfileResourceRef] | None = None
    instructions: str | AgentProfileResourceRef | None = None
    fail_on_error: bool | None = None


class AgentProfilePrompt(WireModel):
    """``systemPrompt`` replaces the harness's own prompt; ``appendSystemPrompt`` adds to it;
    ``instructions`` go to the lower-privilege project-instruction surface. Setting both
    prompt fields is legal: the replacement is installed, then the addition."""

    system_prompt: str | None = None
    append_system_prompt: str | None = None
    instructions: WireList[str] | None = None


register_wire_models(
    AgentProfileResourceRef=AgentProfileResourceRef,
    AgentProfileFileMount=AgentProfileFileMount,
    AgentProfileResources=AgentProfileResources,
    AgentProfilePrompt=AgentProfilePrompt,
)
