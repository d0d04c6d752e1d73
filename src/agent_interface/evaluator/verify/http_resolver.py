"""Fetch external artifact bytes over HTTP(S) without reaching internal networks.

Every hop, the first request and each redirect, is parsed as a WHATWG URL (``ada-url``),
its host classified by :mod:`agent_interface.evaluator.verify.address_policy`, and, for a DNS
name, every address the lookup returns is checked; one refused address refuses the hop.
The connection then goes to the checked address itself (no second lookup, no proxy),
with the original name kept for ``Host`` and TLS verification.

One deadline (``timeout_seconds``) covers the whole fetch: every DNS lookup (run on a
helper thread and abandoned at the deadline), connect, TLS handshake, request and every
read of every redirect hop. The body is capped by the declared ``byteLength`` and by
``max_body_bytes`` whichever is smaller, and the response is read with strict framing
(:mod:`agent_interface.evaluator.verify.http_wire`). Every failure is a
:class:`~agent_interface.evaluator.verify.resolver.ResolutionRefused`; refusals name the reason,
never the URL.
"""

from __future__ import annotations

import ipaddress
import socket
import ssl
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from urllib.parse import quote

import ada_url

from agent_interface.evaluator.verify.address_policy import (
    AddressClass,
    IpAddress,
    classify_address,
    classify_hostname,
)
from agent_interface.evaluator.verify.http_wire import HttpLimits, HttpResponseHead, ResponseReader
from agent_interface.evaluator.verify.resolver import (
    DEFAULT_MAX_ARTIFACT_BYTES,
    ArtifactRequest,
    ResolutionRefused,
)

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


def _timeout() -> ResolutionRefused:
    return ResolutionRefused("timeout", "the fetch exceeded its time limit")


def _remaining(deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise _timeout()
    return left


@dataclass(frozen=True, slots=True)
class _Hop:
    scheme: str
    host: str  # without IPv6 brackets
    port: int
    target: str  # path and query
    address: str  # the checked address the connection is pinned to

    @property
    def host_header(self) -> str:
        name = f"[{self.host}]" if ":" in self.host else self.host
        return name if self.port == _DEFAULT_PORTS[self.scheme] else f"{name}:{self.port}"


def _lookup(resolve: HostResolver, host: str, port: int, deadline: float) -> list[str]:
    """``resolve(host, port)`` on a daemon thread, abandoned when the deadline passes."""
    outcome: list[object] = []

    def work() -> None:
        try:
            outcome.append(list(resolve(host, port)))
        except BaseException as exc:  # handed back to the caller's thread
            outcome.append(exc)

    worker = threading.Thread(target=work, name="agent-interface-dns", daemon=True)
    worker.start()
    worker.join(_remaining(deadline))
    if not outcome:
        raise _timeout()
    result = outcome[0]
    if isinstance(result, BaseException):
        if isinstance(result, OSError | UnicodeError | ValueError):
            raise ResolutionRefused("dns_failure", "the host name did not resolve")
        raise result
    assert isinstance(result, list)
    return [str(answer) for answer in result]


@dataclass
class SafeHttpFetcher:
    """GET a URL under the address policy, following at most ``max_redirects`` redirects.

    ``timeout_seconds`` bounds the whole fetch (DNS, connect, TLS, headers and body of
    every hop); ``max_body_bytes`` caps any body whatever size the caller allows;
    ``max_header_bytes`` and ``max_headers`` bound each response head. ``resolve_host``
    and ``address_policy`` are injectable for tests; production code keeps the defaults.
    """

    resolve_host: HostResolver = system_host_resolver
    address_policy: AddressPolicy = classify_address
    timeout_seconds: float = 30.0
    max_redirects: int = 5
    max_body_bytes: int = DEFAULT_MAX_ARTIFACT_BYTES
    max_header_bytes: int = 64 * 1024
    max_headers: int = 100
    user_agent: str = "tangle-agent-interface-verifier"
    tls_context: ssl.SSLContext = field(default_factory=ssl.create_default_context)

    def fetch(self, url: str, *, max_bytes: int) -> bytes:
        """The body of a ``200`` answer, at most ``max_bytes`` (and ``max_body_bytes``) long.

        Every failure, whatever its cause, is a :class:`ResolutionRefused`.
        """
        try:
            return self._fetch(url, max_bytes)
        except ResolutionRefused:
            raise
        except TimeoutError:
            raise _timeout() from None
        except (OSError, ssl.SSLError) as exc:
            raise ResolutionRefused(
                "connection_failed", f"the fetch failed ({type(exc).__name__})"
            ) from None
        except Exception as exc:  # never let an untyped error out of a fetch
            raise ResolutionRefused(
                "fetch_failed", f"the fetch failed ({type(exc).__name__})"
            ) from None

    def _fetch(self, url: str, max_bytes: int) -> bytes:
        if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 0:
            raise ResolutionRefused("too_large", "the requested size is not a byte count")
        if max_bytes > self.max_body_bytes:
            raise ResolutionRefused(
                "too_large", f"the declared size exceeds the {self.max_body_bytes}-byte limit"
            )
        deadline = time.monotonic() + self.timeout_seconds
        current = url
        for _ in range(self.max_redirects + 1):
            hop = self._check(current, deadline)
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
        return self._check(url, time.monotonic() + self.timeout_seconds)

    def _check(self, url: str, deadline: float) -> _Hop:
        try:
            parsed = ada_url.URL(url)
        except (ValueError, TypeError):
            raise ResolutionRefused("invalid_url", "the URL is not a valid WHATWG URL") from None
        scheme = parsed.protocol
        if scheme not in _DEFAULT_PORTS:
            raise ResolutionRefused("scheme_not_allowed", "only http and https URLs are fetched")
        port = int(parsed.port) if parsed.port else _DEFAULT_PORTS[scheme]
        host = parsed.hostname
        if parsed.host_type == ada_url.HostType.DEFAULT:
            address = self._resolve_name(host, port, deadline)
        else:
            literal = ipaddress.ip_address(host.strip("[]"))
            refused = self.address_policy(literal)
            if refused is not None:
                raise _refuse_class(refused)
            address = str(literal)
            host = host.strip("[]")
        if parsed.username or parsed.password:
            raise ResolutionRefused("url_userinfo", "URLs with credentials are not fetched")
        target = (parsed.pathname or "/") + parsed.search
        if any(ord(char) <= 0x20 or ord(char) >= 0x7F for char in target):
            raise ResolutionRefused("invalid_url", "the request target is not plain ASCII")
        return _Hop(scheme, host, port, target, address)

    def _resolve_name(self, host: str, port: int, deadline: float) -> str:
        refused_name = classify_hostname(host)
        if refused_name is not None:
            raise _refuse_class(refused_name)
        answers = _lookup(self.resolve_host, host, port, deadline)
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

    def _connect(self, hop: _Hop, deadline: float) -> socket.socket:
        raw = socket.create_connection((hop.address, hop.port), _remaining(deadline))
        if hop.scheme != "https:":
            return raw
        try:
            tls = self.tls_context.wrap_socket(
                raw, server_hostname=hop.host, do_handshake_on_connect=False
            )
            tls.settimeout(_remaining(deadline))
            tls.do_handshake()
        except BaseException:
            raw.close()
            raise
        return tls

    def _request(self, hop: _Hop, deadline: float, max_bytes: int) -> tuple[int, str | None, bytes]:
        sock = self._connect(hop, deadline)
        try:
            request = (
                f"GET {hop.target} HTTP/1.1\r\nHost: {hop.host_header}\r\n"
                f"User-Agent: {self.user_agent}\r\nAccept-Encoding: identity\r\n"
                "Connection: close\r\n\r\n"
            ).encode("ascii")
            sock.settimeout(_remaining(deadline))
            sock.sendall(request)
            reader = ResponseReader(
                sock, deadline, HttpLimits(self.max_header_bytes, self.max_headers)
            )
            head = reader.head()
            if head.status != 200:
                return head.status, _location(head), b""
            return 200, None, reader.body(head, max_bytes)
        finally:
            sock.close()


def _location(head: HttpResponseHead) -> str | None:
    locations = head.values("location")
    if len(locations) > 1:
        raise ResolutionRefused("http_malformed", "a redirect carried more than one Location")
    return locations[0] if locations else None


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
    """An :class:`~agent_interface.evaluator.verify.resolver.ArtifactResolver` over HTTP(S).

    Every failure, a malformed request included, is a :class:`ResolutionRefused`.
    """

    fetcher: SafeHttpFetcher = field(default_factory=SafeHttpFetcher)
    ipfs_gateway: str = "https://ipfs.io"
    github_raw: str = "https://raw.githubusercontent.com"
    s3_endpoint: str | None = None

    def fetch(self, request: ArtifactRequest) -> bytes:
        try:
            url = artifact_url(
                request,
                ipfs_gateway=self.ipfs_gateway,
                github_raw=self.github_raw,
                s3_endpoint=self.s3_endpoint,
            )
        except (KeyError, TypeError, ValueError, AttributeError):
            raise ResolutionRefused(
                "invalid_locator", "the artifact locator lacks a field its source needs"
            ) from None
        return self.fetcher.fetch(url, max_bytes=request.byte_length)
