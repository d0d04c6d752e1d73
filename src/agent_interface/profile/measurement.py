"""Content-free measurements of one AgentProfile declaration (``agent-profile-measurements.ts``).

:func:`measure_agent_profile` reports the canonical profile digest and canonical JSON byte
size, the UTF-8 bytes and logical lines of every prompt field and inline resource (each
row addressed by a JSON Pointer), enabled/disabled tool and MCP declaration counts, and the
number of declared subagents. GitHub resources report ``bytes: null, lines: null`` until
their content is independently resolved. The result holds no prompt text, resource text,
server configuration, permission value or secret reference. It is pure: it loads nothing,
resolves nothing and estimates no tokens, and its ``coverage`` block says so. Measure the
authored and the effective profile separately and cache by ``profileDigest``.

Logical lines: the empty string has 0 lines; otherwise each ``\\r\\n``, lone ``\\r`` or lone
``\\n`` ends a line, and text not ending in a terminator has one more (unterminated) line.
So ``"a"`` is 1, ``"a\\n"`` is 1, ``"a\\nb"`` is 2, ``"a\\r\\n\\r\\n"`` is 2, ``"\\n"`` is 1.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, ClassVar, Literal

from pydantic import ConfigDict

from agent_interface.core.canonical import (
    Sha256Digest,
    canonical_bytes,
    canonical_digest,
)
from agent_interface.core.contract_limits import utf8_bytes
from agent_interface.core.errors import json_pointer
from agent_interface.core.model import (
    WireList,
    WireModel,
    wire_names,
)
from agent_interface.core.numbers import SafeInt as WireInt
from agent_interface.core.registry import register_wire_models
from agent_interface.profile.agent_profile import AgentProfile
from agent_interface.profile.canonical import (
    canonical_agent_profile_value,
    coerce_agent_profile,
)
from agent_interface.profile.resources import (
    AgentProfileGitHubResource,
    AgentProfileInlineResource,
)

__all__ = [
    "AgentProfileCapabilityCounts",
    "AgentProfileMeasurementCoverage",
    "AgentProfileMeasurements",
    "AgentProfileResourceMeasurement",
    "AgentProfileSubagentCounts",
    "AgentProfileTextMeasurement",
    "logical_lines",
    "measure_agent_profile",
    "utf8_bytes",
]


class AgentProfileTextMeasurement(WireModel):
    """UTF-8 bytes and logical lines of one prompt string, without normalizing it."""

    path: str
    bytes: WireInt
    lines: WireInt


class AgentProfileResourceMeasurement(WireModel):
    """One resource declaration; external content is unmeasured (``null``) until resolved."""

    wire_nullable: ClassVar[frozenset[str]] = frozenset({"bytes", "lines"})

    path: str
    kind: Literal["inline", "github"]
    name: str | None = None
    bytes: WireInt | None
    lines: WireInt | None


class AgentProfileCapabilityCounts(WireModel):
    """Explicit declarations, independent of what a harness actually serves."""

    declared: WireInt
    enabled: WireInt
    disabled: WireInt


class AgentProfileSubagentCounts(WireModel):
    """How many subagents a profile declares."""

    declared: WireInt


class AgentProfileMeasurementCoverage(WireModel):
    """What the measurement does not assess."""

    tokens: Literal["not-measured"] = "not-measured"
    materialization: Literal["not-assessed"] = "not-assessed"
    usage: Literal["not-assessed"] = "not-assessed"


class AgentProfileMeasurements(WireModel):
    """``measureAgentProfile``'s result for one exact profile value."""

    version: Literal[1] = 1
    basis: Literal["profile-declaration"] = "profile-declaration"
    profile_digest: Sha256Digest
    model_config = ConfigDict(alias_generator=wire_names(canonical_byte_count="canonicalBytes"))

    canonical_byte_count: WireInt
    """Bytes of canonical profile JSON: not mounted context, not billed input tokens."""
    prompt: WireList[AgentProfileTextMeasurement]
    tools: AgentProfileCapabilityCounts
    mcp: AgentProfileCapabilityCounts
    subagents: AgentProfileSubagentCounts
    resources: WireList[AgentProfileResourceMeasurement]
    coverage: AgentProfileMeasurementCoverage = AgentProfileMeasurementCoverage()


_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def logical_lines(text: str) -> int:
    """Logical lines of ``text`` (see the module docstring)."""
    if text == "":
        return 0
    breaks = len(_LINE_BREAK.findall(text))
    return breaks + (0 if text[-1] in "\r\n" else 1)


def _text(path: str, text: str) -> AgentProfileTextMeasurement:
    return AgentProfileTextMeasurement(path=path, bytes=utf8_bytes(text), lines=logical_lines(text))


def _resource(
    path: str, resource: AgentProfileInlineResource | AgentProfileGitHubResource
) -> AgentProfileResourceMeasurement:
    named: dict[str, Any] = {} if resource.name is None else {"name": resource.name}
    if isinstance(resource, AgentProfileInlineResource):
        text = resource.content
        return AgentProfileResourceMeasurement(
            path=path, kind="inline", bytes=utf8_bytes(text), lines=logical_lines(text), **named
        )
    return AgentProfileResourceMeasurement(
        path=path, kind="github", bytes=None, lines=None, **named
    )


def _counts(flags: list[bool]) -> AgentProfileCapabilityCounts:
    enabled = sum(1 for flag in flags if flag)
    return AgentProfileCapabilityCounts(
        declared=len(flags), enabled=enabled, disabled=len(flags) - enabled
    )


def measure_agent_profile(
    profile: AgentProfile | Mapping[str, Any] | str | bytes,
) -> AgentProfileMeasurements:
    """Measure one profile declaration, in declaration order (see the module docstring)."""
    value = coerce_agent_profile(profile)
    material = canonical_agent_profile_value(value)
    prompt: list[AgentProfileTextMeasurement] = []
    if value.prompt is not None:
        if value.prompt.system_prompt is not None:
            prompt.append(_text("/prompt/systemPrompt", value.prompt.system_prompt))
        if value.prompt.append_system_prompt is not None:
            prompt.append(_text("/prompt/appendSystemPrompt", value.prompt.append_system_prompt))
        for index, line in enumerate(value.prompt.instructions or ()):
            prompt.append(_text(f"/prompt/instructions/{index}", line))

    resources: list[AgentProfileResourceMeasurement] = []
    declared = value.resources
    if declared is not None:
        for index, mount in enumerate(declared.files or ()):
            resources.append(_resource(f"/resources/files/{index}/resource", mount.resource))
        for group in ("tools", "skills", "agents", "commands"):
            for index, ref in enumerate(getattr(declared, group) or ()):
                resources.append(_resource(json_pointer(("resources", group, index)), ref))
        instructions = declared.instructions
        if isinstance(instructions, str):
            resources.append(
                AgentProfileResourceMeasurement(
                    path="/resources/instructions",
                    kind="inline",
                    bytes=utf8_bytes(instructions),
                    lines=logical_lines(instructions),
                )
            )
        elif instructions is not None:
            resources.append(_resource("/resources/instructions", instructions))

    return AgentProfileMeasurements(
        profile_digest=canonical_digest(material),
        canonical_byte_count=len(canonical_bytes(material)),
        prompt=tuple(prompt),
        tools=_counts(list((value.tools or {}).values())),
        mcp=_counts([server.enabled is not False for server in (value.mcp or {}).values()]),
        subagents=AgentProfileSubagentCounts(declared=len(value.subagents or {})),
        resources=tuple(resources),
    )


register_wire_models(
    AgentProfileMeasurements=AgentProfileMeasurements,
    AgentProfileTextMeasurement=AgentProfileTextMeasurement,
    AgentProfileResourceMeasurement=AgentProfileResourceMeasurement,
    AgentProfileCapabilityCounts=AgentProfileCapabilityCounts,
)
