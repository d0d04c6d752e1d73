"""Which model served a call, compared with the model the plan resolved.

The rule, per call, on the model name the upstream's answer carries (``model`` of a chat
completion chunk or body, of a Responses ``response`` object, of an Anthropic
``message``):

* ``exact``: it is the resolved ``model`` or the resolved ``snapshot``;
* ``alias``: it is a dated snapshot (``-YYYY-MM-DD``, ``-YYYYMMDD``) or ``-latest`` of the
  resolved model's family, or the resolved name is a dated snapshot of it
  (``gpt-4o`` served as ``gpt-4o-2024-08-06``; ``claude-sonnet-4-5`` as
  ``claude-sonnet-4-5-20250929``); a provider prefix (``openai/gpt-4o`` on OpenRouter)
  is ignored for this comparison;
* ``substituted``: any other name;
* ``unknown``: the answer named no model (a stream cut before its first event, an error).
"""

from __future__ import annotations

import re
from typing import Final, Literal

__all__ = ["ServedMatch", "dated_family", "served_match"]

ServedMatch = Literal["exact", "alias", "substituted", "unknown"]

_DATED: Final = re.compile(r"(.+?)(?:-20[0-9]{2}-?[0-9]{2}-?[0-9]{2}|-latest)", re.ASCII)


def dated_family(name: str) -> str | None:
    """The family of a dated snapshot or ``-latest`` name (``gpt-4o`` of
    ``gpt-4o-2024-08-06``, ``claude-sonnet-4-5`` of ``claude-sonnet-4-5-20250929``), or
    ``None`` when ``name`` is neither."""
    match = _DATED.fullmatch(name)
    return match.group(1) if match is not None else None


def _family(name: str) -> str:
    name = name.rsplit("/", 1)[-1]
    return dated_family(name) or name


def served_match(served: str | None, model: str, snapshot: str | None = None) -> ServedMatch:
    """Compare the served model name with the resolved ``model`` (and ``snapshot``)."""
    if not served:
        return "unknown"
    if served == model or (snapshot is not None and served == snapshot):
        return "exact"
    if _family(served) == _family(model) or (snapshot is not None and _family(served) == _family(snapshot)):
        return "alias"
    return "substituted"
