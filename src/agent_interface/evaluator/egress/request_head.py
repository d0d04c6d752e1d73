"""The one request a client may send a strict-egress proxy, read from its head.

A proxy connection carries exactly one request head: ``CONNECT host:port`` (a tunnel)
or a plain HTTP request in absolute form (``GET http://host/path HTTP/1.1``). The head is
ASCII, its lines end in CRLF, folded headers, duplicate ``Host`` or ``Content-Length``
and ``Transfer-Encoding`` beside ``Content-Length`` are refused, and so is every upgrade
(``Upgrade``, ``Connection: upgrade``, ``HTTP2-Settings``): a tunnel is only ever opened
by ``CONNECT`` to an allowed port. A ``Host`` header that names anything but the target
is refused. A plain request is rewritten to origin form with the proxy's hop-by-hop
headers dropped and ``Connection: close`` set.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import Final

from agent_interface.evaluator.egress.rules import EgressRefused, normalize_host

__all__ = ["ProxyRequest", "parse_request_head"]

_TOKEN_RE: Final = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+", re.ASCII)
_PORT_RE: Final = re.compile(r"[0-9]{1,5}", re.ASCII)
_TARGET_RE: Final = re.compile(r"[\x21-\x7e]+", re.ASCII)
_VERSIONS: Final = frozenset({"HTTP/1.0", "HTTP/1.1"})
_HOP_BY_HOP: Final = frozenset(
    {
        "connection", "proxy-connection", "keep-alive", "proxy-authorization",
        "proxy-authenticate", "te", "trailer", "upgrade",
    }
)


@dataclass(frozen=True, slots=True)
class ProxyRequest:
    """An accepted request head: its method, checked host and port, and what to send on.

    ``tunnel`` is true for ``CONNECT``; otherwise ``upstream_head`` is the rewritten head
    the proxy sends to the destination (empty for a tunnel).
    """

    method: str
    host: str
    port: int
    tunnel: bool
    upstream_head: bytes = b""


def _port(text: str) -> int:
    if not _PORT_RE.fullmatch(text) or not 0 < int(text) < 65536:
        raise EgressRefused("malformed_request")
    return int(text)


def _authority(text: str, default_port: int | None) -> tuple[str, int]:
    """``host[:port]`` read into a checked host name and a port."""
    if "@" in text:
        raise EgressRefused("invalid_host")
    if text.startswith("[") or text.count(":") > 1:
        raise EgressRefused("ip_literal")
    host, sep, port_text = text.partition(":")
    if sep:
        port = _port(port_text)
    elif default_port is None:
        raise EgressRefused("malformed_request")
    else:
        port = default_port
    return normalize_host(host), port


def _headers(lines: list[str], max_headers: int) -> list[tuple[str, str]]:
    if len(lines) > max_headers:
        raise EgressRefused("header_too_large")
    headers: list[tuple[str, str]] = []
    for line in lines:
        name, sep, value = line.partition(":")
        if not sep or not _TOKEN_RE.fullmatch(name):
            raise EgressRefused("malformed_request")
        headers.append((name.lower(), value.strip(" \t")))
    return headers


def _check_framing_and_upgrades(headers: list[tuple[str, str]]) -> None:
    names = [name for name, _ in headers]
    if "upgrade" in names or "http2-settings" in names:
        raise EgressRefused("upgrade_refused")
    for name, value in headers:
        if name in ("connection", "proxy-connection") and "upgrade" in {
            token.strip().lower() for token in value.split(",")
        }:
            raise EgressRefused("upgrade_refused")
    if names.count("host") > 1 or names.count("content-length") > 1 or (
        "transfer-encoding" in names and "content-length" in names
    ):
        raise EgressRefused("malformed_request")


def _check_host_header(headers: list[tuple[str, str]], host: str, port: int, default: int) -> None:
    for name, value in headers:
        if name != "host":
            continue
        named, sep, port_text = value.partition(":")
        try:
            named_host = normalize_host(named)
        except EgressRefused:
            raise EgressRefused("host_mismatch") from None
        named_port = _port(port_text) if sep else default
        if named_host != host or named_port != port:
            raise EgressRefused("host_mismatch")


def _split_absolute(target: str) -> tuple[str, str, str]:
    """``scheme://authority/rest`` into its scheme, authority and origin-form target."""
    scheme, sep, rest = target.partition("://")
    if not sep:
        raise EgressRefused("not_a_proxy_request")
    scheme = scheme.lower()
    if scheme != "http":
        raise EgressRefused("scheme_not_allowed")
    end = len(rest)
    for mark in "/?#":
        found = rest.find(mark)
        if found != -1:
            end = min(end, found)
    authority, path = rest[:end], rest[end:]
    if "#" in path:
        raise EgressRefused("malformed_request")
    if not path.startswith("/"):
        path = "/" + path
    return scheme, authority, path


def parse_request_head(
    head: bytes,
    *,
    connect_ports: Collection[int],
    http_ports: Collection[int],
    http_methods: Collection[str],
    max_headers: int,
) -> ProxyRequest:
    """The request ``head`` (up to and including the blank line) checked and read.

    Raises :class:`~agent_interface.evaluator.egress.rules.EgressRefused` naming the
    first rule the head breaks; the domain allow list and the addresses are checked
    by the proxy afterwards.
    """
    if not head.endswith(b"\r\n\r\n") or not head.isascii():
        raise EgressRefused("malformed_request")
    text = head[:-4].decode("ascii")
    lines = text.split("\r\n")
    if any("\n" in line or "\r" in line or "\x00" in line for line in lines):
        raise EgressRefused("malformed_request")
    parts = lines[0].split(" ")
    if len(parts) != 3 or parts[2] not in _VERSIONS or not _TARGET_RE.fullmatch(parts[1]):
        raise EgressRefused("malformed_request")
    method, target, version = parts
    if not _TOKEN_RE.fullmatch(method):
        raise EgressRefused("malformed_request")
    if any(line[:1] in (" ", "\t") for line in lines[1:]):
        raise EgressRefused("malformed_request")
    headers = _headers(lines[1:], max_headers)
    _check_framing_and_upgrades(headers)
    if method == "CONNECT":
        host, port = _authority(target, None)
        if port not in connect_ports:
            raise EgressRefused("port_not_allowed")
        _check_host_header(headers, host, port, port)
        return ProxyRequest(method, host, port, tunnel=True)
    if target.startswith("/") or target == "*":
        raise EgressRefused("not_a_proxy_request")
    if method not in http_methods:
        raise EgressRefused("method_not_allowed")
    _, authority, path = _split_absolute(target)
    host, port = _authority(authority, 80)
    if port not in http_ports:
        raise EgressRefused("port_not_allowed")
    _check_host_header(headers, host, port, 80)
    host_value = host if port == 80 else f"{host}:{port}"
    kept = [f"{name}: {value}" for name, value in headers if name not in _HOP_BY_HOP and name != "host"]
    upstream = "\r\n".join(
        [f"{method} {path} {version}", f"Host: {host_value}", *kept, "Connection: close", "", ""]
    )
    return ProxyRequest(method, host, port, tunnel=False, upstream_head=upstream.encode("ascii"))
