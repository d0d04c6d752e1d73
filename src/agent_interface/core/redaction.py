"""What a wire model's ``repr`` and ``str`` show of URLs and launch arguments.

Fields that hold secrets are hidden from ``repr`` outright (``Field(repr=False)``). But a
URL or a command line in an ordinary field can carry a credential too, so every string a
wire model shows is masked as follows; the value itself, ``to_wire()`` and every digest
stay exact:

* **URL userinfo** (``https://user:password@host``): replaced by ``***``.
* **URL query values and fragments** (``?token=…``, ``#access_token=…``): every value is
  replaced by ``***``, parameter names are kept. Every value, not only those whose name
  looks like a credential: signed URLs carry their secret under names such as
  ``X-Amz-Signature``, ``sig`` or ``t``, and no list of names is complete.
* **Launch arguments** (the fields a model lists in ``repr_argv``, an argv or a command
  line, and in ``repr_arguments``, arguments of a program named elsewhere): the program
  and flag names are kept; every other argument, and the value of ``--flag=value`` or
  ``-pVALUE``, is replaced by ``***``. A positional secret (``server sk-…``) cannot be
  told from a path, so no positional argument is shown.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

__all__ = ["MASK", "masked_argv", "masked_text"]

MASK: Final = "***"

_URL: Final = re.compile(
    r"(?P<scheme>[A-Za-z][A-Za-z0-9+.\-]*://)(?P<authority>[^/?#\s]*)(?P<path>[^?#\s]*)"
    r"(?:\?(?P<query>[^#\s]*))?(?:#(?P<fragment>\S*))?"
)


def _masked_url(match: re.Match[str]) -> str:
    authority = match["authority"]
    if "@" in authority:
        authority = MASK + "@" + authority.rsplit("@", 1)[1]
    url = match["scheme"] + authority + match["path"]
    query = match["query"]
    if query is not None:
        parameters = []
        for parameter in query.split("&"):
            name, equals, _value = parameter.partition("=")
            parameters.append(f"{name}={MASK}" if equals else (MASK if parameter else ""))
        url += "?" + "&".join(parameters)
    if match["fragment"] is not None:
        url += "#" + (MASK if match["fragment"] else "")
    return url


def masked_text(text: str) -> str:
    """``text`` with the userinfo, query values and fragment of every URL in it masked."""
    if "://" not in text:
        return text
    return _URL.sub(_masked_url, text)


def _masked_argument(argument: str) -> str:
    if argument.startswith("--"):
        name, equals, _value = argument.partition("=")
        return name + ("=" + MASK if equals else "")
    if argument.startswith("-") and len(argument) > 1:
        # "-y" is a flag; "-pSECRET" is a flag with its value attached.
        return argument[:2] + (MASK if len(argument) > 2 else "")
    return MASK


def masked_argv(value: Any, *, program: bool = True) -> Any:
    """A launch command as ``repr`` shows it: an argv (list or tuple of strings) or a
    command line (a string) keeps its program and flag names, nothing else. With
    ``program=False`` the value holds arguments only (the program is another field)."""
    if isinstance(value, str):
        words = value.split()
        if not words:
            return value
        head = [masked_text(words.pop(0))] if program else []
        return " ".join([*head, *(_masked_argument(word) for word in words)])
    if isinstance(value, (list, tuple)) and value and all(isinstance(item, str) for item in value):
        items = list(value)
        head = [masked_text(items.pop(0))] if program else []
        return (*head, *(_masked_argument(item) for item in items))
    return masked(value)


def masked(value: Any) -> Any:
    """``value`` as ``repr`` shows it: :func:`masked_text` applied to every string in it
    (inside tuples, lists and mappings too). Anything else is returned as it is."""
    if isinstance(value, str):
        return masked_text(value)
    if isinstance(value, tuple):
        return tuple(masked(item) for item in value)
    if isinstance(value, list):
        return [masked(item) for item in value]
    if isinstance(value, Mapping):
        shown = {key: masked(item) for key, item in value.items()}
        if type(value) is dict:
            return shown
        try:
            return type(value)(shown)  # type: ignore[call-arg]  # a FrozenDict stays one
        except Exception:
            return shown
    return value
