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
    """A resource whose content is written in the profile itself."""

    kind: Literal["inline"]
    name: str
    content: str


class AgentProfileGitHubResource(WireModel):
    """A resource read from a GitHub repository path, at an optional ref."""

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
    """An inline resource named ``name`` with ``content``."""
    return AgentProfileInlineResource(kind="inline", name=name, content=content)


def define_github_resource(
    path: str, *, repository: str | None = None, ref: str | None = None, name: str | None = None
) -> AgentProfileGitHubResource:
    """A GitHub resource at ``path`` (of ``repository``, at ``ref``), optionally renamed."""
    given = {"repository": repository, "ref": ref, "name": name}
    return AgentProfileGitHubResource(
        kind="github",
        path=path,
        **{key: value for key, value in given.items() if value is not None},
    )


class AgentProfileFileMount(WireModel):
    """A resource mounted as a file in the workspace, at a relative path, optionally executable."""

    path: str
    resource: AgentProfileResourceRef
    executable: bool | None = None


class AgentProfileResources(WireModel):
    """The resources a profile brings: files, tools, skills, agents, commands and instructions, and
    whether a failure to load one fails the run."""

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
