"""Guidance blocks: marked, replaceable sections of a profile's prompt.

A composer writes each block as::

    <profile-guidance source="model" id="claude-opus-5-5">
    ...text...
    </profile-guidance>

in front of the profile's own prompt text. Blocks are found again by their marker, so
a later composition replaces the blocks of the sources it owns and leaves every other
block, and all caller text, where it was. Any marker-shaped block counts, including one
a person typed by hand: the marker is reserved for composers.

Where markers nest, the extent of a block is ambiguous; such text is kept whole rather
than risk cutting caller text short.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Annotated, Any, Final, Literal, overload

from pydantic import AfterValidator
from pydantic_core import PydanticCustomError

from agent_interface.core.errors import (
    ContractError,
    ContractIssue,
)
from agent_interface.core.model import (
    WireList,
    WireModel,
    thaw,
    wire_adapter,
)
from agent_interface.profile.agent_profile import AgentProfile

__all__ = [
    "GUIDANCE_CLOSE_MARKER",
    "GUIDANCE_OPEN_MARKER",
    "AgentProfileGuidanceBlock",
    "AgentProfileGuidanceChannel",
    "GuidanceBlockError",
    "compose_agent_profile_guidance",
    "compose_guidance_prompt",
    "is_owned_guidance_line",
    "render_guidance_block",
    "strip_guidance_text",
]

GUIDANCE_OPEN_MARKER: Final = "<profile-guidance "
GUIDANCE_CLOSE_MARKER: Final = "</profile-guidance>"

# One block: opener with attributes on one line, then the shortest text up to a closer
# that starts a line, then an optional blank-line separator.
_BLOCK: Final = re.compile(
    r'<profile-guidance source="([^"]*)" id="[^"]*">\n[\s\S]*?\n</profile-guidance>(\n\n)?'
)
# A whole instruction line that is exactly one complete block (no closer inside).
_LINE: Final = re.compile(
    r'<profile-guidance source="([^"]*)" id="[^"]*">\n'
    r"(?:(?!</profile-guidance>)[\s\S])*\n</profile-guidance>"
)

AgentProfileGuidanceChannel = Literal["appendSystemPrompt", "instructions"]
"""Where composed blocks land: the additive system prompt, or the instruction lines."""

SourceFilter = Callable[[str], bool]


class GuidanceBlockError(ContractError, TypeError):
    """A guidance block that would forge or break the block marker.

    Both a :class:`ContractError` (``ValueError``) and a ``TypeError``, as the
    reference throws a ``TypeError`` here.
    """


def _check_attribute(value: str) -> str:
    if '"' in value or "\n" in value:
        raise PydanticCustomError(
            "guidance_attribute", "guidance source and id must not contain quotes or newlines"
        )
    return value


def _check_text(value: str) -> str:
    if GUIDANCE_CLOSE_MARKER in value:
        raise PydanticCustomError(
            "guidance_close_marker", "guidance text must not contain a closing block marker"
        )
    return value


GuidanceAttribute = Annotated[str, AfterValidator(_check_attribute)]
GuidanceText = Annotated[str, AfterValidator(_check_text)]


class AgentProfileGuidanceBlock(WireModel):
    """One block of standing guidance: the layer it came from, its subject, its text.

    ``source`` names the layer (``harness``, ``model``, ``learning``, or a caller's own
    layer such as ``team``) and ``id`` the subject, so the block can be found and
    replaced later. The text may hold an opening marker but never a closing one.
    """

    source: GuidanceAttribute
    id: GuidanceAttribute
    text: GuidanceText


_BLOCKS = wire_adapter(WireList[AgentProfileGuidanceBlock], "AgentProfileGuidanceBlock[]")


def _as_blocks(
    blocks: Iterable[AgentProfileGuidanceBlock | Mapping[str, Any]],
) -> tuple[AgentProfileGuidanceBlock, ...]:
    items = list(blocks)
    if all(isinstance(item, AgentProfileGuidanceBlock) for item in items):
        return tuple(items)  # type: ignore[arg-type]
    raw = [item.to_wire() if isinstance(item, WireModel) else item for item in items]
    try:
        parsed: tuple[AgentProfileGuidanceBlock, ...] = _BLOCKS.parse(raw)
    except ContractError as exc:
        raise GuidanceBlockError(exc.issues, subject="profile guidance") from None
    return parsed


def render_guidance_block(block: AgentProfileGuidanceBlock | Mapping[str, Any]) -> str:
    """The marked text of one block. Refuses forged attributes or a closing marker."""
    (checked,) = _as_blocks([block])
    return (
        f'<profile-guidance source="{checked.source}" id="{checked.id}">\n'
        f"{checked.text}\n{GUIDANCE_CLOSE_MARKER}"
    )


def _source_filter(replace_sources: Iterable[str] | None) -> SourceFilter:
    if replace_sources is None:
        return lambda _source: True
    owned = frozenset(replace_sources)
    return owned.__contains__


def _may_be_cut_short(text: str, block: str, offset: int) -> bool:
    # A match holding a second opener may be an outer block ended early by an inner
    # closer, when another closer follows before the next opener.
    if block.find(GUIDANCE_OPEN_MARKER, 1) == -1:
        return False
    rest = text[offset + len(block) :]
    next_close = rest.find(GUIDANCE_CLOSE_MARKER)
    if next_close == -1:
        return False
    next_open = rest.find(GUIDANCE_OPEN_MARKER)
    return next_open == -1 or next_close < next_open


def _balanced_end(text: str, offset: int) -> int:
    """End of the block opening at ``offset`` with nested markers counted; -1 if unbalanced."""
    closer = "\n" + GUIDANCE_CLOSE_MARKER
    depth = 0
    at = offset
    while True:
        opener = text.find(GUIDANCE_OPEN_MARKER, at)
        close = text.find(closer, at)
        if close == -1:
            return -1
        if opener != -1 and opener < close:
            depth += 1
            line_end = text.find("\n", opener)
            if line_end == -1:
                return -1
            at = line_end  # skip the opener's attributes
        else:
            depth -= 1
            at = close + len(closer)
            if depth == 0:
                return at


def strip_guidance_text(
    text: str | None, replace_sources: Iterable[str] | None = None
) -> str | None:
    """``text`` without the blocks of the owned sources (every source when ``None``).

    ``None`` and ``""`` come back unchanged; text left empty becomes ``None``.
    """
    if text is None or text == "":
        return text
    owned = _source_filter(replace_sources)
    pieces: list[str] = []
    position = 0
    kept_until = 0
    stripped_last = False
    for match in _BLOCK.finditer(text):
        block = match.group(0)
        offset = match.start()
        if (
            offset < kept_until
            or not owned(match.group(1))
            or _may_be_cut_short(text, block, offset)
        ):
            if block.find(GUIDANCE_OPEN_MARKER, 1) != -1:
                kept_until = max(kept_until, _balanced_end(text, offset))
            continue
        if match.group(2) is None and match.end() == len(text):
            stripped_last = True
        pieces.append(text[position:offset])
        position = match.end()
    pieces.append(text[position:])
    stripped = "".join(pieces)
    if stripped_last and stripped.endswith("\n\n"):
        stripped = stripped[:-2]  # the separator written before the removed last block
    return None if stripped == "" else stripped


def is_owned_guidance_line(line: str, replace_sources: Iterable[str] | None = None) -> bool:
    """True only for a line that is one whole block from an owned source."""
    match = _LINE.fullmatch(line)
    return match is not None and _source_filter(replace_sources)(match.group(1))


def _checked_prompt(prompt: Mapping[str, Any] | None, pointer: str) -> dict[str, Any]:
    # An unvalidated mapping is checked only as far as composition reads it.
    if prompt is None:
        return {}
    if not isinstance(prompt, Mapping):
        raise ContractError.single(pointer, "object_type", "prompt must be a JSON object")
    current = dict(prompt)
    append = current.get("appendSystemPrompt")
    if append is not None and not isinstance(append, str):
        raise ContractError.single(
            f"{pointer}/appendSystemPrompt", "string_type", "appendSystemPrompt must be a string"
        )
    lines = current.get("instructions")
    if lines is not None:
        if not isinstance(lines, (list, tuple)):
            raise ContractError.single(
                f"{pointer}/instructions", "list_type", "instructions must be an array of strings"
            )
        for index, line in enumerate(lines):
            if not isinstance(line, str):
                raise ContractError.single(
                    f"{pointer}/instructions/{index}",
                    "string_type",
                    "instructions must be an array of strings",
                )
    return current


def compose_guidance_prompt(
    prompt: Mapping[str, Any] | None,
    blocks: Sequence[AgentProfileGuidanceBlock | Mapping[str, Any]],
    channel: AgentProfileGuidanceChannel,
    *,
    replace_sources: Iterable[str] | None = None,
    pointer: str = "",
) -> dict[str, Any]:
    """The prompt object (wire form) with ``blocks`` composed in front of its own text.

    Earlier blocks of the owned sources are removed from both channels first. The
    result keeps every other prompt key; ``appendSystemPrompt`` and ``instructions``
    are written last, only when they carry something (an explicitly empty
    ``appendSystemPrompt`` or ``instructions`` stays).
    """
    if channel not in ("appendSystemPrompt", "instructions"):
        raise ContractError.single(
            "", "guidance_channel", "channel must be appendSystemPrompt or instructions"
        )
    sources = None if replace_sources is None else tuple(replace_sources)
    current = _checked_prompt(prompt, pointer)
    own_append = strip_guidance_text(current.get("appendSystemPrompt"), sources)
    raw_lines = current.get("instructions")
    own_lines = (
        None
        if raw_lines is None
        else [line for line in raw_lines if not is_owned_guidance_line(line, sources)]
    )
    rendered = [render_guidance_block(block) for block in _as_blocks(blocks)]

    result = {
        key: value
        for key, value in current.items()
        if key not in ("appendSystemPrompt", "instructions")
    }
    if channel == "appendSystemPrompt":
        parts = [*rendered, *([own_append] if own_append else [])]
        if parts:
            result["appendSystemPrompt"] = "\n\n".join(parts)
        elif own_append is not None:
            result["appendSystemPrompt"] = own_append
        if own_lines is not None:
            result["instructions"] = own_lines
    else:
        if own_append is not None:
            result["appendSystemPrompt"] = own_append
        lines = [*rendered, *(own_lines or [])]
        if lines or raw_lines is not None:
            result["instructions"] = lines
    return result


def _profile_wire(profile: Any) -> tuple[dict[str, Any], bool]:
    if isinstance(profile, AgentProfile):
        return profile.to_wire(), True
    if isinstance(profile, Mapping):
        return thaw(dict(profile)), False
    raise ContractError(
        [ContractIssue("", "profile_type", "profile must be an AgentProfile or a JSON object")]
    )


@overload
def compose_agent_profile_guidance(
    profile: AgentProfile,
    blocks: Sequence[AgentProfileGuidanceBlock | Mapping[str, Any]],
    channel: AgentProfileGuidanceChannel = ...,
    *,
    replace_sources: Iterable[str] | None = ...,
) -> AgentProfile: ...
@overload
def compose_agent_profile_guidance(
    profile: Mapping[str, Any],
    blocks: Sequence[AgentProfileGuidanceBlock | Mapping[str, Any]],
    channel: AgentProfileGuidanceChannel = ...,
    *,
    replace_sources: Iterable[str] | None = ...,
) -> dict[str, Any]: ...
def compose_agent_profile_guidance(
    profile: AgentProfile | Mapping[str, Any],
    blocks: Sequence[AgentProfileGuidanceBlock | Mapping[str, Any]],
    channel: AgentProfileGuidanceChannel = "appendSystemPrompt",
    *,
    replace_sources: Iterable[str] | None = None,
) -> Any:
    """Compose guidance blocks, in order, in front of the profile's own prompt text.

    ``profile`` is an ``AgentProfile`` (a new, re-validated one is returned) or its wire
    form as a mapping (a plain ``dict`` is returned, not validated). Without
    ``replace_sources`` every earlier block is replaced; with it only blocks of those
    sources are, and other layers' blocks stay where they are. Composing the same
    blocks again returns an equal profile, so its canonical digest is stable.
    """
    wire, typed = _profile_wire(profile)
    prompt = wire.get("prompt")
    composed = compose_guidance_prompt(
        prompt, blocks, channel, replace_sources=replace_sources, pointer="/prompt"
    )
    if composed or prompt is not None:
        wire["prompt"] = composed
    return AgentProfile.parse_wire(wire) if typed else wire
