"""Fetch external artifact bytes over HTTP(S) without reaching internal networks.

Every hop, the first request and each redirect, is parsed as a WHATWG URL (``ada-url``),
its host classified by :mod:`agent_interface.candidate.address_policy`, and, for a DNS
name, every address the lookup returns is checked; one refused address refuses the hop.
The connection then goes to the checked address itself (no second lookup, no proxy),
with the original name kept for ``Host`` and TLS verification. Body size and total time
are capped. Refusals name the reason, never the URL.
"""

from __future__ import annotations

import http.client
import ipaddress
import socket
import ssl
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from urllib.parse import quote

import ada_url

from agent_interface.candidate.address_policy import (
    AddressClass,
    IpAddress,
    classify_address,
    classify_hostname,
)
from agent_interface.candidate.resolver import ArtifactRequest, ResolutionRefused

__all__ = [
    "HostResolver",
    "HttpArtifactResolver",
    "SafeHttpFetcher",
    "artifact_url",
    "system_host_resolver",
]

HostResolver = Callable[[str, int], Sequence[str]]
"""Resolves a DNS name and port to address strings (``socket.getaddrinfo`` by default)."""

AddressPolicy = Callable[[IpAddress], AddressClass | None]

_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_DEFAULT_PORTS = {"http:": 80, "https:": 443}
_CHUNK = 64 * 1024
_ADDRESS_MESSAGES: dict[str, str] = {
    "unspecified": "the host is an unspecified address",
    "cloud_metadata": "the host is a cloud metadata endpoint",
    "loopback": "the host reaches a loopback address",
    "link_local": "the host reaches a link-local address",
    "multicast": "the host reaches a multicast address",
    "carrier_grade_nat": "the host reaches a carrier-grade NAT address",
    "unique_local": "the host reaches a unique-local address",
    "private": "the host reaches a private address",
    "reserved": "the host reaches an address that is not globally routable",
}


def system_host_resolver(host: str, port: int) -> list[str]:
    """Every address the system resolver returns for ``host``."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


def _refuse_class(refused: AddressClass) -> ResolutionRefused:
    return ResolutionRefused(refused, _ADDRESS_MESSAGES[refused])


class _PinnedHTTPConnection(http.client.HTTPConnection):
    def __init__(self, host: str, port: int, address: str, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout)
        self._address = address

    def connect(self) -> None:
        self.sock = socket.create_connection((self._address, self.port), self.timeout)


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    def __init__(
        self, host: str, port: int, address: str, timeout: float, context: ssl.SSLContext
    ) -> None:
        super().__init__(host, port, timeout=timeout, context=context)
        self._address = address
        self._tls = context

    def connect(self) -> None:
        raw = socket.create_connection((self._address, self.port), self.timeout)
        self.sock = self._tls.wrap_socket(raw, server_hostname=self.host)


@dataclass(frozen=True, slots=True)
class _Hop:
    scheme: str
    host: str  # without IPv6 brackets
    port: int
    target: str  # path and query
    address: str  # the checked address the connection is pinned to


@dataclass
class SafeHttpFetcher:
    """GET a URL under the address policy, following at most ``max_redirects`` redirects.

    ``resolve_host`` and ``address_policy`` are injectable for tests; production code
    keeps the defaults.
    """

    resolve_host: HostResolver = system_host_resolver
    address_policy: AddressPolicy = classify_address
    timeout_seconds: float = 30.0
    max_redirects: int = 5
    user_agent: str = "tangle-agent-interface-verifier"
    tls_context: ssl.SSLContext = field(default_factory=ssl.create_default_context)

    def fetch(self, url: str, *, max_bytes: int) -> bytes:
        """The body of a ``200`` answer, at most ``max_bytes`` long."""
        deadline = time.monotonic() + self.timeout_seconds
        current = url
        for _ in range(self.max_redirects + 1):
            hop = self.check_url(current)
            status, location, body = self._request(hop, deadline, max_bytes)
            if status == 200:
                return body
            if status not in _REDIRECTS:
                raise ResolutionRefused("http_status", f"the server answered HTTP {status}")
            if location is None:
                raise ResolutionRefused("http_status", "a redirect carried no Location")
            try:
                current = ada_url.join_url(current, location)
            except ValueError:
                raise ResolutionRefused("invalid_url", "a redirect Location is not a URL") from None
        raise ResolutionRefused("too_many_redirects", f"more than {self.max_redirects} redirects")

    def check_url(self, url: str) -> _Hop:
        """Parse one hop and choose its checked address, or refuse it."""
        try:
            parsed = ada_url.URL(url)
        except ValueError:
            raise ResolutionRefused("invalid_url", "the URL is not a valid WHATWG URL") from None
        scheme = parsed.protocol
        if scheme not in _DEFAULT_PORTS:
            raise ResolutionRefused("scheme_not_allowed", "only http and https URLs are fetched")
        port = int(parsed.port) if parsed.port else _DEFAULT_PORTS[scheme]
        host = parsed.hostname
        if parsed.host_type == ada_url.HostType.DEFAULT:
            address = self._resolve_name(host, port)
        else:
            literal = ipaddress.ip_address(host.strip("[]"))
            refused = self.address_policy(literal)
            if refused is not None:
                raise _refuse_class(refused)
            address = str(literal)
            host = host.strip("[]")
        if parsed.username or parsed.password:
            raise ResolutionRefused("url_userinfo", "URLs with credentials are not fetched")
        return _Hop(scheme, host, port, (parsed.pathname or "/") + parsed.search, address)

    def _resolve_name(self, host: str, port: int) -> str:
        refused_name = classify_hostname(host)
        if refused_name is not None:
            raise _refuse_class(refused_name)
        try:
            answers = list(self.resolve_host(host, port))
        except OSError:
            raise ResolutionRefused("dns_failure", "the host name did not resolve") from None
        if not answers:
            raise ResolutionRefused("dns_no_address", "the host name has no address")
        checked: list[IpAddress] = []
        for answer in answers:
            try:
                address = ipaddress.ip_address(answer)
            except ValueError:
                raise ResolutionRefused("dns_failure", "DNS returned a malformed address") from None
            refused = self.address_policy(address)
            if refused is not None:
                raise _refuse_class(refused)
            checked.append(address)
        return str(checked[0])

    def _request(self, hop: _Hop, deadline: float, max_bytes: int) -> tuple[int, str | None, bytes]:
        connection: http.client.HTTPConnection
        timeout = _remaining(deadline)
        if hop.scheme == "https:":
            connection = _PinnedHTTPSConnection(
                hop.host, hop.port, hop.address, timeout, self.tls_context
            )
        else:
            connection = _PinnedHTTPConnection(hop.host, hop.port, hop.address, timeout)
        try:
            connection.request(
                "GET",
                hop.target,
                headers={
                    "User-Agent": self.user_agent,
                    "Accept-Encoding": "identity",
                    "Connection": "close",
                },
            )
            response = connection.getresponse()
            if response.status != 200:
                return response.status, response.getheader("Location"), b""
            declared = response.getheader("Content-Length")
            if declared is not None and declared.isdigit() and int(declared) > max_bytes:
                raise ResolutionRefused("too_large", "the response is larger than declared")
            return 200, None, _read_capped(response, connection, deadline, max_bytes)
        except TimeoutError:
            raise ResolutionRefused("timeout", "the fetch exceeded its time limit") from None
        except (OSError, http.client.HTTPException) as exc:
            raise ResolutionRefused(
                "connection_failed", f"the fetch failed ({type(exc).__name__})"
            ) from None
        finally:
            connection.close()


def _remaining(deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise ResolutionRefused("timeout", "the fetch exceeded its time limit")
    return left


def _read_capped(
    response: http.client.HTTPResponse,
    connection: http.client.HTTPConnection,
    deadline: float,
    max_bytes: int,
) -> bytes:
    chunks: list[bytes] = []
    total = 0
    while True:
        if connection.sock is not None:
            connection.sock.settimeout(_remaining(deadline))
        chunk = response.read(min(_CHUNK, max_bytes + 1 - total))
        if not chunk:
            return b"".join(chunks)
        total += len(chunk)
        if total > max_bytes:
            raise ResolutionRefused("too_large", "the response is larger than declared")
        chunks.append(chunk)


def artifact_url(
    request: ArtifactRequest,
    *,
    ipfs_gateway: str = "https://ipfs.io",
    github_raw: str = "https://raw.githubusercontent.com",
    s3_endpoint: str | None = None,
) -> str:
    """The HTTP(S) URL of an external artifact (S3 virtual-hosted unless ``s3_endpoint``)."""
    loc = request.locator
    if request.kind == "github":
        return (
            f"{github_raw}/{loc['owner']}/{loc['repo']}/{loc['commit']}/{quote(loc['path'])}"
        )
    if request.kind == "ipfs":
        tail = f"/{quote(loc['path'])}" if loc.get("path") else ""
        return f"{ipfs_gateway}/ipfs/{loc['cid']}{tail}"
    bucket, key, region = loc["bucket"], quote(loc["key"]), loc.get("region")
    if s3_endpoint is not None:
        return f"{s3_endpoint}/{bucket}/{key}"
    regional = f"s3.{region}.amazonaws.com" if region else "s3.amazonaws.com"
    if "." in bucket:  # a dotted bucket breaks the TLS wildcard: use path style
        return f"https://{regional}/{bucket}/{key}"
    return f"https://{bucket}.{regional}/{key}"


@dataclass
class HttpArtifactResolver:
    """An :class:`~agent_interface.candidate.resolver.ArtifactResolver` over HTTP(S)."""

    fetcher: SafeHttpFetcher = field(default_factory=SafeHttpFetcher)
    ipfs_gateway: str = "https://ipfs.io"
    github_raw: str = "https://raw.githubusercontent.com"
    s3_endpoint: str | None = None

    def fetch(self, request: ArtifactRequest) -> bytes:
        url = artifact_url(
            request,
            ipfs_gateway=self.ipfs_gateway,
            github_raw=self.github_raw,
            s3_endpoint=self.s3_endpoint,
        )
        return self.fetcher.fetch(url, max_bytes=request.byte_length)
