"""JSON text read the way JavaScript's ``JSON.parse`` reads it, where pydantic's parser differs.

pydantic-core refuses a ``\\uD800``-style escape of a lone surrogate as invalid JSON;
``JSON.parse`` accepts it, and zod then accepts the string. So that a document's verdict
does not depend on whether it arrived as JSON text or as a parsed value, such text is
parsed again with Python's ``json`` (which keeps lone surrogates) and validated as a
value. Nothing else changes: ``NaN`` and ``Infinity`` stay invalid, as in JavaScript.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__: list[str] = []  # used by core.model only

NOT_JSON: Any = object()
"""Returned by :func:`reparse_lone_surrogates` when the text gets no second reading."""

_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def reparse_lone_surrogates(data: bytes | bytearray | str) -> Any:
    """The value of JSON ``data`` that pydantic refused only for a surrogate escape, or
    :data:`NOT_JSON` when that is not the reason (the original refusal then stands)."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
    if not _SURROGATE_ESCAPE.search(raw) or raw.startswith(b"\xef\xbb\xbf"):
        return NOT_JSON
    try:
        return json.loads(raw.decode("utf-8"), parse_constant=_refuse_constant)
    except (ValueError, RecursionError):
        return NOT_JSON
