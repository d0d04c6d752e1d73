"""Reading a profile for one harness adapter, and refusing what the harness cannot honour.

:class:`ProfileFields` walks the profile's wire form (camelCase keys, so every pointer is a
real JSON Pointer into the profile). An adapter takes the fields it honours through the
readers here; :meth:`ProfileFields.refuse_rest` refuses every present field it did not take,
so a new or unexpected field can never be dropped silently. Every refusal is one
``harness_cannot_honor`` (or a more precise code) issue naming the pointer and the harness,
and all of them are raised together by :meth:`ProfileFields.check`.

Rules shared by every harness: identity fields (``name``, ``description``, ``version``,
``tags``, ``metadata``, ``model.provider``, ``model.metadata``) are reported, not applied;
``extensions``, ``connections``, ``confidential``, ``seats`` and ``hooks`` are refused (a
seat chain is projected by the executor before lowering); a resource or file that is not
inline is refused (the evaluator fetches nothing); a secret reference is refused (candidate
secrets are disabled in a run); a remote MCP server is refused (the run's only network is
the model gateway); ``model.default`` must name the model the gateway serves.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from agent_interface.candidate.profile import AgentCandidateProfile
from agent_interface.core.contract_limits import is_safe_relative_path
from agent_interface.core.errors import ContractError, ContractIssue, json_pointer
from agent_interface.evaluator.harness.adapter import HarnessSetting, NativeFile, ReportedField
from agent_interface.profile.agent_profile import AgentProfile
from agent_interface.profile.harness import HarnessType

__all__ = ["HARNESS_CANNOT_HONOR", "InlineResource", "LocalMcpServer", "ProfileFields", "with_front_matter"]

HARNESS_CANNOT_HONOR: Final = "harness_cannot_honor"

_IDENTITY: Final = ("name", "description", "version", "tags", "metadata")
_RESOURCE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def _present(value: Any) -> bool:
    """A field with something to honour: not absent, and not an empty map or list."""
    if value is None:
        return False
    return not (isinstance(value, (dict, list, tuple, str)) and len(value) == 0)


def with_front_matter(name: str, content: str, description: str) -> str:
    """``content`` as a skill or agent file: when it opens with a YAML front matter without a
    ``name``, the name is added to it (Claude Code ignores an unnamed agent); without a front
    matter, one naming and describing it is put first."""
    if content.startswith("---\n"):
        end = content.find("\n---", 3)
        block = content[4:end] if end >= 0 else ""
        if end >= 0 and not any(line.startswith("name:") for line in block.splitlines()):
            return f"---\nname: {name}\n{content[4:]}"
        return content
    return f"---\nname: {name}\ndescription: {json.dumps(description)}\n---\n\n{content}"


@dataclass(frozen=True)
class InlineResource:
    """An inline resource of the profile: its path-safe name, its text and its pointer."""

    name: str
    content: str
    pointer: str


@dataclass(frozen=True)
class LocalMcpServer:
    """A local MCP server with public values only: command, args, env and cwd, or a disabled
    entry (``enabled`` false, no command)."""

    name: str
    pointer: str
    enabled: bool
    command: str = ""
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    cwd: str | None = None


class ProfileFields:
    """One profile being lowered for ``harness``: the readers an adapter uses, the record of
    files, settings and reported fields, and the refusals collected so far."""

    def __init__(self, profile: AgentProfile | AgentCandidateProfile, harness: HarnessType) -> None:
        self.wire: dict[str, Any] = profile.to_wire()  # an AgentProfile's or a bundle's AgentCandidateProfile
        self.harness = harness
        self.issues: list[ContractIssue] = []
        self.files: list[NativeFile] = []
        self.settings: list[HarnessSetting] = []
        self.reported: list[ReportedField] = []
        self._taken: set[str] = set()
        if self.wire.get("harness") not in (None, harness):
            self.refuse("/harness", "the profile names another harness", code="profile_harness_mismatch")
        self._taken.add("/harness")
        for key in _IDENTITY:
            if _present(self.wire.get(key)):
                self.report(f"/{key}", "identity only: no behaviour to apply")

    # -- recording -------------------------------------------------------------------------

    def refuse(self, pointer: str, reason: str, *, code: str = HARNESS_CANNOT_HONOR) -> None:
        """Record a refusal of the field at ``pointer`` (the message names the harness)."""
        self._taken.add(pointer)
        self.issues.append(ContractIssue(pointer, code, f"the {self.harness} harness cannot honour this profile field: {reason}"))

    def report(self, pointer: str, reason: str) -> None:
        """Record a field accepted without a native effect."""
        self._taken.add(pointer)
        self.reported.append(ReportedField(pointer, reason))

    def setting(self, pointer: str, target: str, value: str) -> None:
        """Record one setting made for the field at ``pointer`` (``""``: the adapter's own)."""
        if pointer:
            self._taken.add(pointer)
        self.settings.append(HarnessSetting(pointer, target, value))

    def add_file(self, root: Any, path: str, content: str | bytes, *, source: str = "", mode: int = 0o644) -> None:
        """Add a native file (text is written as UTF-8); a second file at the same place is
        refused, so a profile file mount cannot overwrite the harness's own configuration."""
        data = content.encode("utf-8") if isinstance(content, str) else content
        if any(file.root == root and file.path == path for file in self.files):
            self.refuse(source or "/", f"{path} is written twice", code="native_path_conflict")
            return
        self.files.append(NativeFile(root, path, data, mode, source))
        if source:
            self._taken.add(source)

    def take(self, pointer: str) -> Any:
        """The value at ``pointer`` (``None`` when absent), marked as handled."""
        self._taken.add(pointer)
        return self.get(pointer)

    def get(self, pointer: str) -> Any:
        """The value at ``pointer`` without marking it."""
        value: Any = self.wire
        for part in pointer.split("/")[1:]:
            key = part.replace("~1", "/").replace("~0", "~")
            if isinstance(value, Mapping):
                value = value.get(key)
            elif isinstance(value, (list, tuple)) and key.isdigit() and int(key) < len(value):
                value = value[int(key)]
            else:
                return None
        return value

    def refuse_rest(self) -> None:
        """Refuse every present field no reader took (checked two levels deep for the
        objects whose members adapters take one by one)."""
        for key, value in self.wire.items():
            pointer = f"/{key}"
            if not _present(value) or pointer in self._taken:
                continue
            if key in ("prompt", "model", "resources") and isinstance(value, Mapping):
                for inner, inner_value in value.items():
                    inner_pointer = f"{pointer}/{inner}"
                    if _present(inner_value) and inner_pointer not in self._taken and not any(
                        taken.startswith(inner_pointer + "/") for taken in self._taken
                    ):
                        self.refuse(inner_pointer, "no native control for it")
                continue
            if not any(taken.startswith(pointer + "/") for taken in self._taken):
                self.refuse(pointer, "no native control for it")

    def check(self) -> None:
        """Raise every refusal collected, as one ``ContractError``."""
        self.refuse_rest()
        if self.issues:
            issues = sorted(self.issues, key=lambda issue: issue.path)
            raise ContractError(issues, subject=f"{self.harness} harness plan")

    # -- shared readers --------------------------------------------------------------------

    def model(self, served: str) -> None:
        """``model.default`` and ``model.small`` must name ``served`` (the gateway routes every
        request to it); ``model.provider`` and ``model.metadata`` are identity. The effort
        and ceilings are left to the adapter."""
        for key in ("default", "small"):
            value = self.take(f"/model/{key}")
            if value is not None and value != served:
                self.refuse(f"/model/{key}", "it names another model than the run's", code="model_route_mismatch")
        for key in ("provider", "metadata"):
            if _present(self.get(f"/model/{key}")):
                self.report(f"/model/{key}", "identity only: the gateway serves the run's model")

    def instructions(self) -> tuple[str, list[str]]:
        """The project-instruction text (``prompt.instructions`` then ``resources.instructions``,
        separated by blank lines) and the pointers it came from."""
        parts: list[str] = []
        pointers: list[str] = []
        for index, text in enumerate(self.take("/prompt/instructions") or ()):
            parts.append(text)
            pointers.append(f"/prompt/instructions/{index}")
        extra = self.take("/resources/instructions")
        if isinstance(extra, str) and extra:
            parts.append(extra)
            pointers.append("/resources/instructions")
        elif isinstance(extra, Mapping):
            resource = self._inline("/resources/instructions", extra)
            if resource is not None:
                parts.append(resource)
                pointers.append("/resources/instructions")
        return "\n\n".join(parts), pointers

    def _inline(self, pointer: str, resource: Mapping[str, Any]) -> str | None:
        if resource.get("kind") != "inline":
            self.refuse(pointer, "only inline resources are applied (the evaluator fetches nothing)",
                        code="profile_resource_not_inline")
            return None
        content: str = resource["content"]
        return content

    def inline_resources(self, key: str) -> list[InlineResource]:
        """The inline resources of ``resources.<key>`` (skills, agents, commands), each with a
        name usable as one path segment; others refused."""
        found: list[InlineResource] = []
        for index, resource in enumerate(self.take(f"/resources/{key}") or ()):
            pointer = f"/resources/{key}/{index}"
            content = self._inline(pointer, resource)
            if content is None:
                continue
            name = resource.get("name") or ""
            if not _RESOURCE_NAME.fullmatch(name):
                self.refuse(pointer + "/name", "the name must be one path segment of [A-Za-z0-9._-]",
                            code="unsafe_resource_name")
                continue
            found.append(InlineResource(name, content, pointer))
        return found

    def skills(self, directory: str) -> None:
        """Write every inline skill as ``<directory>/<name>/SKILL.md`` in the workspace (a
        front matter naming the skill is added when the text has none)."""
        for skill in self.inline_resources("skills"):
            path = f"{directory}/{skill.name}/SKILL.md"
            self.add_file("workspace", path, with_front_matter(skill.name, skill.content, skill.name),
                          source=skill.pointer)
            self.setting(skill.pointer, path, "skill")

    def file_mounts(self) -> None:
        """Add every inline file mount as a workspace file (mode 0755 when executable)."""
        for index, mount in enumerate(self.take("/resources/files") or ()):
            pointer = f"/resources/files/{index}"
            if not is_safe_relative_path(mount["path"], False):
                self.refuse(pointer + "/path", "the path must be a canonical workspace-relative path",
                            code="unsafe_relative_path")
                continue
            content = self._inline(pointer + "/resource", mount["resource"])
            if content is None:
                continue
            self.add_file("workspace", mount["path"], content, source=pointer,
                          mode=0o755 if mount.get("executable") else 0o644)
        self.take("/resources/failOnError")

    def config_text(self, pointer: str, value: Mapping[str, Any]) -> str | None:
        """A public config value's text; a secret reference is refused."""
        if value.get("kind") != "public":
            self.refuse(pointer, "secret references are not resolved (candidate secrets are disabled)",
                        code="profile_secret_unsupported")
            return None
        text: str = value["value"]
        return text

    def mcp_servers(self) -> list[LocalMcpServer]:
        """The profile's MCP servers: local ones with public values, disabled entries kept;
        remote servers refused (the run's only network is the model gateway)."""
        servers: list[LocalMcpServer] = []
        for name, spec in (self.take("/mcp") or {}).items():
            pointer = json_pointer(("mcp", name))
            if spec.get("enabled") is False:
                servers.append(LocalMcpServer(name, pointer, False))
                continue
            if "url" in spec:
                self.refuse(pointer, "a remote MCP server is unreachable (the run's only network is the gateway)",
                            code="remote_mcp_unsupported")
                continue
            args = [self.config_text(f"{pointer}/args/{i}", value) for i, value in enumerate(spec.get("args") or ())]
            env = [(key, self.config_text(pointer + json_pointer(("env", key)), value))
                   for key, value in (spec.get("env") or {}).items()]
            if any(arg is None for arg in args) or any(value is None for _, value in env):
                continue
            servers.append(LocalMcpServer(
                name, pointer, True, spec["command"], tuple(a for a in args if a is not None),
                tuple((k, v) for k, v in env if v is not None), spec.get("cwd"),
            ))
        return servers
