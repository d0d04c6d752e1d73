"""Reading a harness's own output: JSON objects one per line (or one document), bounded,
with anything else skipped, and token counts that are non-negative integers or zero."""

from __future__ import annotations

import json
from typing import Any, Final

__all__ = ["MAX_OUTPUT_BYTES", "json_lines", "mapping", "non_negative"]

MAX_OUTPUT_BYTES: Final = 64 * 1024 * 1024
"""Output beyond this is not read (a harness's output is hostile input)."""


def json_lines(data: bytes) -> list[dict[str, Any]]:
    """The JSON objects of ``data``, one per line; a line that is not a JSON object is skipped.
    A whole document spread over several lines is read as one object when no line parses."""
    data = data[:MAX_OUTPUT_BYTES]
    text = data.decode("utf-8", errors="replace")
    found: list[dict[str, Any]] = []
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            found.append(value)
    if not found and text.strip().startswith("{"):
        try:
            value = json.loads(text)
        except ValueError:
            return []
        if isinstance(value, dict):
            found.append(value)
    return found


def non_negative(value: Any) -> int:
    """``value`` when it is a non-negative integer (not a bool), else 0."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return 0


def mapping(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}
