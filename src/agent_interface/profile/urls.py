"""WHATWG URL parsing as Node's ``URL`` does it, for the profile checks that need a host
(remote MCP servers, connections).
"""

from __future__ import annotations

import re
import stringprep
import unicodedata
from dataclasses import dataclass
from typing import Final
from urllib.parse import unquote, unquote_to_bytes

_SPECIAL_SCHEMES: Final = frozenset({"ftp", "file", "http", "https", "ws", "wss"})


__all__ = [
    "ParsedUrl",
    "parse_url",
]


_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
_C0_OR_SPACE: Final = "".join(chr(code) for code in range(0x21))
_FORBIDDEN_HOST: Final = frozenset("\x00\t\n\r #/:<>?@[\\]^|")
_FORBIDDEN_DOMAIN: Final = (
    _FORBIDDEN_HOST | frozenset(chr(code) for code in range(0x20)) | {"%", "\x7f"}
)


@dataclass(frozen=True, slots=True)
class ParsedUrl:
    """The parts of a parsed URL these rules read."""

    scheme: str
    username: str
    password: str
    hostname: str
    query: str

    def query_names(self) -> list[str]:
        """The names ``URLSearchParams`` lists for the query."""
        names: list[str] = []
        for chunk in self.query.split("&"):
            if chunk:
                name = chunk.split("=", 1)[0].replace("+", " ")
                names.append(unquote_to_bytes(name).decode("utf-8", "replace"))
        return names


def _ipv4_number(part: str) -> int | None:
    radix, digits = 10, "0123456789"
    if part[:2] in ("0x", "0X"):
        part, radix, digits = part[2:], 16, "0123456789abcdefABCDEF"
    elif len(part) >= 2 and part[0] == "0":
        part, radix, digits = part[1:], 8, "01234567"
    if part == "":
        return 0
    if any(char not in digits for char in part):
        return None
    return int(part, radix)


def _ends_in_number(host: str) -> bool:
    parts = host.split(".")
    if parts[-1] == "" and len(parts) > 1:
        parts = parts[:-1]
    last = parts[-1]
    if last and all(char in "0123456789" for char in last):
        return True
    return last[:2] in ("0x", "0X") and all(char in "0123456789abcdefABCDEF" for char in last[2:])


def _ipv4(host: str) -> str | None:
    parts = host.split(".")
    if parts[-1] == "" and len(parts) > 1:
        parts = parts[:-1]
    if len(parts) > 4 or any(part == "" for part in parts):
        return None
    values: list[int] = []
    for part in parts:
        number = _ipv4_number(part)
        if number is None:
            return None
        values.append(number)
    if any(value > 255 for value in values[:-1]) or values[-1] >= 256 ** (5 - len(values)):
        return None
    address = values[-1] + sum(
        value * 256 ** (3 - index) for index, value in enumerate(values[:-1])
    )
    return ".".join(str((address >> shift) & 255) for shift in (24, 16, 8, 0))


_HEX_DIGITS: Final = "0123456789abcdefABCDEF"


def _ipv6_pieces(text: str) -> list[int] | None:
    """The eight 16-bit pieces of an IPv6 literal (WHATWG IPv6 parser), or ``None``."""
    pieces = [0] * 8
    index, compress, pointer, end = 0, -1, 0, len(text)

    def at(position: int) -> str:
        return text[position] if position < end else ""

    if at(0) == ":":
        if at(1) != ":":
            return None
        pointer, index, compress = 2, 1, 1
    while pointer < end:
        if index == 8:
            return None
        if text[pointer] == ":":
            if compress != -1:
                return None
            pointer, index = pointer + 1, index + 1
            compress = index
            continue
        value = length = 0
        while length < 4 and at(pointer) != "" and at(pointer) in _HEX_DIGITS:
            value = value * 16 + int(text[pointer], 16)
            pointer, length = pointer + 1, length + 1
        if at(pointer) == ".":
            if length == 0 or index > 6:
                return None
            pointer -= length
            seen = 0
            while pointer < end:
                if seen > 0:
                    if text[pointer] != "." or seen >= 4:
                        return None
                    pointer += 1
                if at(pointer) == "" or at(pointer) not in "0123456789":
                    return None
                number: int | None = None
                while at(pointer) != "" and at(pointer) in "0123456789":
                    if number == 0:
                        return None
                    number = int(text[pointer]) + (number or 0) * 10
                    if number > 255:
                        return None
                    pointer += 1
                assert number is not None
                pieces[index] = pieces[index] * 0x100 + number
                seen += 1
                if seen in (2, 4):
                    index += 1
            if seen != 4:
                return None
            break
        if at(pointer) == ":":
            pointer += 1
            if pointer >= end:
                return None
        elif pointer < end:
            return None
        pieces[index] = value
        index += 1
    if compress != -1:
        swaps, index = index - compress, 7
        while index != 0 and swaps > 0:
            other = compress + swaps - 1
            pieces[index], pieces[other] = pieces[other], pieces[index]
            index, swaps = index - 1, swaps - 1
    elif index != 8:
        return None
    return pieces


def _ipv6_text(pieces: list[int]) -> str:
    # Serialization: the first longest run (two or more) of zero pieces becomes "::".
    best_start, best_length, start = -1, 1, -1
    for position in range(9):
        zero = position < 8 and pieces[position] == 0
        if zero and start == -1:
            start = position
        elif not zero and start != -1:
            if position - start > best_length:
                best_start, best_length = start, position - start
            start = -1
    out, position = "", 0
    while position < 8:
        if position == best_start:
            out += "::" if position == 0 else ":"
            position += best_length
            continue
        out += format(pieces[position], "x") + (":" if position < 7 else "")
        position += 1
    return "[" + out + "]"


def _bracketed(raw: str) -> str | None:
    if not raw.endswith("]"):
        return None
    pieces = _ipv6_pieces(raw[1:-1])
    return None if pieces is None else _ipv6_text(pieces)


_LABEL_DOTS = re.compile("[.\u3002\uff0e\uff61]")
_DEVIATIONS: Final = frozenset("\u00df\u03c2")


def _prohibited(char: str) -> bool:
    return (
        unicodedata.category(char) == "Cn"
        or stringprep.in_table_c12(char)
        or stringprep.in_table_c22(char)
        or stringprep.in_table_c3(char)
        or stringprep.in_table_c4(char)
        or stringprep.in_table_c5(char)
        or stringprep.in_table_c6(char)
        or stringprep.in_table_c7(char)
        or stringprep.in_table_c8(char)
        or stringprep.in_table_c9(char)
    )


def _map_label(label: str) -> str | None:
    """Nameprep-style mapping of one non-ASCII label, keeping the two UTS #46 deviation
    letters (nontransitional processing) and refusing unassigned code points."""
    mapped = "".join(
        char if char in _DEVIATIONS else stringprep.map_table_b2(char)
        for char in label
        if not stringprep.in_table_b1(char)
    )
    mapped = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", mapped).lower())
    if any(_prohibited(char) for char in mapped):
        return None
    if mapped and unicodedata.combining(mapped[0]):
        return None
    right_to_left = [unicodedata.bidirectional(char) in ("R", "AL") for char in mapped]
    if any(right_to_left):
        if any(unicodedata.bidirectional(char) == "L" for char in mapped):
            return None
        if not (right_to_left[0] and right_to_left[-1]):
            return None
    return mapped


def _punycode_label_ok(label: str) -> bool:
    try:
        decoded = label[4:].encode("ascii").decode("punycode")
    except (UnicodeError, ValueError, IndexError):
        return False
    if decoded == "" or decoded.isascii():
        return False
    if decoded.encode("punycode").decode("ascii") != label[4:]:
        return False
    return _map_label(decoded) == decoded


def _domain_to_ascii(domain: str) -> str | None:
    """Approximation of UTS #46 ToASCII as ``new URL`` runs it (nontransitional, no DNS
    length checks): IDNA 2003 nameprep tables with the current Unicode database."""
    labels: list[str] = []
    for label in _LABEL_DOTS.split(domain) if not domain.isascii() else domain.split("."):
        if not label.isascii():
            mapped = _map_label(label)
            if mapped is None:
                return None
            label = (
                mapped if mapped.isascii() else "xn--" + mapped.encode("punycode").decode("ascii")
            )
        label = label.lower()
        if label.startswith("xn--") and not _punycode_label_ok(label):
            return None
        labels.append(label)
    return ".".join(labels)


def _domain(raw: str, scheme: str) -> str | None:
    if raw.startswith("["):
        return _bracketed(raw)
    ascii_domain = _domain_to_ascii(unquote(raw, errors="replace"))
    if ascii_domain is None:
        return None
    domain = ascii_domain
    if any(char in _FORBIDDEN_DOMAIN for char in domain):
        return None
    if domain == "":
        return "" if scheme == "file" else None
    return _ipv4(domain) if _ends_in_number(domain) else domain


def _split_port(hostport: str) -> tuple[str, str] | None:
    in_brackets = False
    for index, char in enumerate(hostport):
        if char == "[":
            in_brackets = True
        elif char == "]":
            in_brackets = False
        elif char == ":" and not in_brackets:
            port = hostport[index + 1 :]
            if port and not (port.isascii() and port.isdigit() and int(port) <= 65535):
                return None
            return hostport[:index], port
    return hostport, ""


def _query_of(text: str) -> str:
    return text.split("?", 1)[1] if "?" in text else ""


def parse_url(value: str) -> ParsedUrl | None:
    """Parse like JavaScript's ``new URL(value)`` (no base); ``None`` where it would throw.
    Approximations: IDNA 2003 instead of UTS #46; IPv6 literals checked by character set."""
    text = value.strip(_C0_OR_SPACE).replace("\t", "").replace("\n", "").replace("\r", "")
    match = _SCHEME.match(text)
    if match is None:
        return None
    scheme = match.group()[:-1].lower()
    rest = text[match.end() :].split("#", 1)[0]
    special = scheme in _SPECIAL_SCHEMES
    if scheme == "file":
        if rest[:2] not in ("//", "\\\\", "/\\", "\\/"):
            return ParsedUrl(scheme, "", "", "", _query_of(rest))
        rest, stops = rest[2:], "/\\?"
    elif special:
        rest, stops = rest.lstrip("/\\"), "/\\?"
    elif rest.startswith("//"):
        rest, stops = rest[2:], "/?"
    else:
        return ParsedUrl(scheme, "", "", "", _query_of(rest))
    end = next((index for index, char in enumerate(rest) if char in stops), len(rest))
    authority, tail = rest[:end], rest[end:]
    username = password = ""
    if "@" in authority:
        userinfo, authority = authority.rsplit("@", 1)
        username, _, password = userinfo.partition(":")
        if authority == "":
            return None
    split = _split_port(authority)
    if split is None:
        return None
    raw_host, port = split
    host: str | None
    if scheme == "file":
        if username or password or port:
            return None
        host = _domain(raw_host, scheme)
    elif special:
        host = _domain(raw_host, scheme)
    elif raw_host.startswith("["):
        host = _bracketed(raw_host)
    elif any(char in _FORBIDDEN_HOST for char in raw_host):
        host = None
    else:
        host = raw_host
        if host == "" and (username or password or port):
            return None
    if host is None:
        return None
    return ParsedUrl(scheme, username, password, host, _query_of(tail))
