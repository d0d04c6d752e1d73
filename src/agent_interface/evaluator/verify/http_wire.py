"""Read one HTTP/1.1 response from a socket under one deadline and strict framing.

Every ``recv`` gets the time left before the deadline as its timeout and returns as soon
as any bytes arrive, so a server that trickles one byte a second is cut off when the
deadline passes, in the status line, the headers, a ``Content-Length`` body, a chunked
body or its trailers alike. The head (status line, headers, trailers, and any interim
``1xx`` responses) is bounded in bytes and in header count. Framing is parsed strictly:
``Content-Length`` is 1 to 20 ASCII digits given once; ``Transfer-Encoding`` is exactly
``chunked`` and never beside ``Content-Length``; a chunk size is 1 to 16 hex digits,
optionally followed by extensions of visible characters, on a line of at most 4 KiB;
chunk data ends in an empty line. Anything else is refused with a :class:`ResolutionRefused`; nothing here raises
``ValueError``.
"""

from __future__ import annotations

import re
import socket
import time
from dataclasses import dataclass
from typing import Final

from agent_interface.evaluator.verify.resolver import ResolutionRefused

__all__: list[str] = []  # verifier machinery: not re-exported from the package root

_CHUNK: Final = 64 * 1024
_STATUS: Final = re.compile(rb"HTTP/1\.[01] ([0-9]{3})(?: [\t\x20-\x7e\x80-\xff]*)?")
_TOKEN: Final = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_VALUE: Final = re.compile(rb"[\t\x20-\x7e\x80-\xff]*")
_DIGITS: Final = re.compile(rb"[0-9]{1,20}")
_CHUNK_SIZE: Final = re.compile(rb"([0-9A-Fa-f]{1,16})[ \t]*(?:;[\t\x20-\x7e\x80-\xff]*)?")
_INTERIM_LIMIT: Final = 8
_CHUNK_LINE: Final = 4096  # a chunk-size line with its extensions


@dataclass(frozen=True, slots=True)
class HttpLimits:
    """Bounds of one response: head bytes and header count (per head, trailers included)."""

    max_header_bytes: int = 64 * 1024
    max_headers: int = 100


@dataclass(frozen=True, slots=True)
class HttpResponseHead:
    """A final (non-``1xx``) status and its headers, names lower-cased, in order."""

    status: int
    headers: tuple[tuple[str, str], ...]

    def values(self, name: str) -> list[str]:
        return [value for key, value in self.headers if key == name]


def _malformed(what: str) -> ResolutionRefused:
    return ResolutionRefused("http_malformed", f"the response is not well-formed HTTP ({what})")


def _too_large() -> ResolutionRefused:
    return ResolutionRefused("too_large", "the response is larger than the allowed size")


class ResponseReader:
    """Reads a response from ``sock``; every wait ends at ``deadline`` (``time.monotonic``)."""

    def __init__(self, sock: socket.socket, deadline: float, limits: HttpLimits) -> None:
        self.sock = sock
        self.deadline = deadline
        self.limits = limits
        self.buffer = bytearray()
        self.closed = False

    # -- bytes under the deadline ---------------------------------------------------

    def _fill(self) -> None:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise ResolutionRefused("timeout", "the fetch exceeded its time limit")
        self.sock.settimeout(left)
        data = self.sock.recv(_CHUNK)
        if not data:
            self.closed = True
        self.buffer += data

    def _line(self, budget: int) -> tuple[bytes, int]:
        """One line without its line ending, and the bytes it used of ``budget``."""
        start = 0
        while True:
            end = self.buffer.find(b"\n", start)
            if end >= 0:
                break
            if len(self.buffer) >= budget:
                raise ResolutionRefused(
                    "headers_too_large", "the response head is larger than allowed"
                )
            if self.closed:
                raise ResolutionRefused("truncated", "the connection closed mid-response")
            start = len(self.buffer)
            self._fill()
        if end + 1 > budget:
            raise ResolutionRefused("headers_too_large", "the response head is larger than allowed")
        line = bytes(self.buffer[:end])
        del self.buffer[: end + 1]
        if line.endswith(b"\r"):
            line = line[:-1]
        if b"\r" in line or b"\0" in line:
            raise _malformed("a control character in a line")
        return line, end + 1

    def _fields(self, budget: int) -> tuple[list[tuple[str, str]], int]:
        """Header (or trailer) fields up to the empty line; the budget left."""
        fields: list[tuple[str, str]] = []
        while True:
            line, used = self._line(budget)
            budget -= used
            if not line:
                return fields, budget
            if line[:1] in (b" ", b"\t"):
                raise _malformed("a folded header line")
            name, colon, value = line.partition(b":")
            if not colon or _TOKEN.fullmatch(name) is None:
                raise _malformed("a header line without a field name")
            value = value.strip(b" \t")
            if _VALUE.fullmatch(value) is None:
                raise _malformed("a control character in a header value")
            fields.append((name.decode("ascii").lower(), value.decode("latin-1")))
            if len(fields) > self.limits.max_headers:
                raise ResolutionRefused("headers_too_large", "the response has too many headers")

    # -- the response -----------------------------------------------------------------

    def head(self) -> HttpResponseHead:
        """The final status line and headers, skipping interim ``1xx`` responses."""
        budget = self.limits.max_header_bytes
        for _ in range(_INTERIM_LIMIT + 1):
            line, used = self._line(budget)
            budget -= used
            match = _STATUS.fullmatch(line)
            if match is None:
                raise _malformed("the status line")
            status = int(match.group(1))
            fields, budget = self._fields(budget)
            if status >= 200:
                return HttpResponseHead(status, tuple(fields))
            if status == 101:
                raise _malformed("a protocol switch")
        raise _malformed("too many interim responses")

    def body(self, head: HttpResponseHead, limit: int) -> bytes:
        """The body of ``head``, refused past ``limit`` bytes."""
        encodings = head.values("transfer-encoding")
        lengths = head.values("content-length")
        coding = head.values("content-encoding")
        if any(value.strip().lower() not in ("", "identity") for value in coding):
            raise ResolutionRefused("http_malformed", "the response body is content-encoded")
        if encodings:
            if lengths:
                raise _malformed("both Transfer-Encoding and Content-Length")
            if len(encodings) != 1 or encodings[0].strip().lower() != "chunked":
                raise _malformed("a transfer coding other than chunked")
            return self._chunked(limit)
        if lengths:
            if len(lengths) != 1 or _DIGITS.fullmatch(lengths[0].encode("latin-1")) is None:
                raise _malformed("Content-Length is not one decimal number")
            declared = int(lengths[0])
            if declared > limit:
                raise _too_large()
            body = bytearray()
            self._exactly(declared, body)
            return bytes(body)
        return self._until_close(limit)

    def _exactly(self, size: int, into: bytearray) -> None:
        wanted = size
        while wanted:
            if not self.buffer:
                if self.closed:
                    raise ResolutionRefused("truncated", "the connection closed mid-body")
                self._fill()
                continue
            piece = self.buffer[:wanted]
            del self.buffer[: len(piece)]
            into += piece
            wanted -= len(piece)

    def _until_close(self, limit: int) -> bytes:
        body = bytearray()
        while True:
            body += self.buffer
            self.buffer.clear()
            if len(body) > limit:
                raise _too_large()
            if self.closed:
                return bytes(body)
            self._fill()

    def _chunked(self, limit: int) -> bytes:
        body = bytearray()
        while True:
            try:
                line, _ = self._line(_CHUNK_LINE)
            except ResolutionRefused as refusal:
                if refusal.code != "headers_too_large":
                    raise
                raise _malformed("a chunk size line longer than 4 KiB") from None
            match = _CHUNK_SIZE.fullmatch(line)
            if match is None:
                raise _malformed("a chunk size line")
            size = int(match.group(1), 16)
            if size == 0:
                self._fields(self.limits.max_header_bytes)  # trailers, read and ignored
                return bytes(body)
            if len(body) + size > limit:
                raise _too_large()
            self._exactly(size, body)
            end, _ = self._line(_CHUNK_LINE)
            if end:
                raise _malformed("chunk data longer than its size")
