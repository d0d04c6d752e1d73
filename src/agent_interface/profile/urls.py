"""WHATWG URL parsing as JavaScript's ``new URL(value)`` does it, for profile rules.

Parsing is done by ada (the ``ada-url`` package), the parser Node's ``URL`` itself uses, so
host serialization (IPv4 shorthands, IPv6 compression, UTS #46 IDNA), refusals and query
percent-encoding are Node's. JavaScript converts a string with a lone surrogate to a
USVString before parsing (U+FFFD in its place); :func:`parse_url` does the same.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import unquote_to_bytes

from ada_url import parse_url as _ada_parse

__all__ = [
    "ParsedUrl",
    "parse_url",
]


@dataclass(frozen=True, slots=True)
class ParsedUrl:
    """The parts of a parsed URL these rules read (``new URL(value)`` fields)."""

    scheme: str
    """``protocol`` without its ``:``, lowercase."""
    username: str
    password: str
    hostname: str
    """Serialized host: ASCII, IPv6 in brackets, ``""`` for hostless URLs."""
    query: str
    """Serialized (percent-encoded) query without its ``?``."""

    def query_names(self) -> list[str]:
        """The names ``URLSearchParams`` lists for the query."""
        names: list[str] = []
        for chunk in self.query.split("&"):
            if chunk:
                name = chunk.split("=", 1)[0].replace("+", " ")
                names.append(unquote_to_bytes(name).decode("utf-8", "replace"))
        return names


def _usv_string(value: str) -> str:
    # WebIDL USVString conversion: each lone surrogate becomes U+FFFD.
    if value.isascii():
        return value
    return value.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


_ATTRIBUTES = ("protocol", "username", "password", "hostname", "search")


def parse_url(value: str) -> ParsedUrl | None:
    """Parse like ``new URL(value)`` (no base); ``None`` where it would throw."""
    if ":" not in value:
        return None  # without a base a URL needs a scheme, and a scheme ends at a colon
    try:
        url = _ada_parse(_usv_string(value), attributes=_ATTRIBUTES)
    except ValueError:
        return None
    return ParsedUrl(
        scheme=url["protocol"][:-1],
        username=url["username"],
        password=url["password"],
        hostname=url["hostname"],
        query=url["search"][1:],
    )
