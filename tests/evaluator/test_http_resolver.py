"""The HTTP resolver against a real server on 127.0.0.1: redirects, pinning, size and time caps.

Loopback is refused by the address policy, so these tests inject a DNS answer for
``public.test`` and allow 127.0.0.1 only where a test says so (for the first hop only
in the redirect tests). No test leaves 127.0.0.1.
"""

from __future__ import annotations

import hashlib
import ipaddress
import shutil
import ssl
import subprocess
import threading
import time
from collections.abc import Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from agent_interface.evaluator.verify.address_policy import (
    AddressClass,
    IpAddress,
    classify_address,
)
from agent_interface.evaluator.verify.http_resolver import (
    HttpArtifactResolver,
    SafeHttpFetcher,
    artifact_url,
)
from agent_interface.evaluator.verify.resolver import ArtifactRequest, ResolutionRefused

BODY = b"artifact bytes\x00\xff"


class _Handler(BaseHTTPRequestHandler):
    seen: list[tuple[str, str | None]] = []  # noqa: RUF012 - shared by the test server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self.seen.append((self.path, self.headers.get("Host")))
        port = self.server.server_address[1]
        routes = {
            "/redirect-loopback": f"http://127.0.0.1:{port}/artifact",
            "/redirect-private-name": f"http://internal.test:{port}/artifact",
            "/redirect-relative": "/artifact",
            "/loop": "/loop",
        }
        if self.path.startswith("/artifact") or self.path.startswith("/ipfs/"):
            self._send(200, BODY)
        elif self.path in routes:
            self.send_response(302)
            self.send_header("Location", routes[self.path])
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif self.path == "/big":
            self._send(200, b"x" * 4096)
        elif self.path == "/big-chunked":
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for _ in range(8):
                self.wfile.write(b"200\r\n" + b"y" * 512 + b"\r\n")
            self.wfile.write(b"0\r\n\r\n")
        elif self.path == "/slow":
            time.sleep(1.5)
            self._send(200, BODY)
        else:
            self._send(404, b"")

    def _send(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that gave up (size or time cap) closes its socket early


@pytest.fixture(scope="module")
def server() -> Iterator[int]:
    httpd = _QuietServer(("127.0.0.1", 0), _Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(httpd.server_address[1])
    finally:
        httpd.shutdown()
        httpd.server_close()


class _Dns:
    def __init__(self, answers: dict[str, list[str]]) -> None:
        self.answers = answers
        self.calls: list[str] = []

    def __call__(self, host: str, port: int) -> Sequence[str]:
        self.calls.append(host)
        try:
            return self.answers[host]
        except KeyError:
            raise OSError("unknown name") from None


class _LoopbackAllowance:
    """Treats 127.0.0.1 as public ``uses`` times (None: always), then applies the real policy."""

    def __init__(self, uses: int | None = 1) -> None:
        self.uses = uses

    def __call__(self, address: IpAddress) -> AddressClass | None:
        if address == ipaddress.ip_address("127.0.0.1") and (self.uses is None or self.uses > 0):
            if self.uses is not None:
                self.uses -= 1
            return None
        return classify_address(address)


def _fetcher(dns: _Dns | None = None, uses: int | None = 1, **kwargs: Any) -> SafeHttpFetcher:
    dns = dns or _Dns({"public.test": ["127.0.0.1"], "internal.test": ["10.0.0.7"]})
    return SafeHttpFetcher(resolve_host=dns, address_policy=_LoopbackAllowance(uses), **kwargs)


def test_fetch_connects_to_the_checked_address_with_the_original_host(server: int) -> None:
    _Handler.seen.clear()
    dns = _Dns({"public.test": ["127.0.0.1"]})
    body = _fetcher(dns).fetch(f"http://public.test:{server}/artifact", max_bytes=1024)
    assert body == BODY
    assert dns.calls == ["public.test"]  # one lookup: the connection is pinned to its answer
    assert _Handler.seen == [("/artifact", f"public.test:{server}")]


def test_redirect_from_public_to_loopback_is_refused_before_connecting(server: int) -> None:
    _Handler.seen.clear()
    with pytest.raises(ResolutionRefused) as caught:
        _fetcher().fetch(f"http://public.test:{server}/redirect-loopback", max_bytes=1024)
    assert caught.value.code == "loopback"
    assert [path for path, _ in _Handler.seen] == ["/redirect-loopback"]


def test_redirect_to_a_name_resolving_privately_is_refused(server: int) -> None:
    _Handler.seen.clear()
    with pytest.raises(ResolutionRefused) as caught:
        _fetcher().fetch(f"http://public.test:{server}/redirect-private-name", max_bytes=1024)
    assert caught.value.code == "private"
    assert [path for path, _ in _Handler.seen] == ["/redirect-private-name"]


def test_every_redirect_hop_is_checked_again(server: int) -> None:
    # a relative redirect back to the same name resolves and is classified again
    with pytest.raises(ResolutionRefused) as caught:
        _fetcher(uses=1).fetch(f"http://public.test:{server}/redirect-relative", max_bytes=1024)
    assert caught.value.code == "loopback"
    body = _fetcher(uses=2).fetch(f"http://public.test:{server}/redirect-relative", max_bytes=1024)
    assert body == BODY


def test_redirects_are_bounded(server: int) -> None:
    with pytest.raises(ResolutionRefused) as caught:
        _fetcher(uses=None, max_redirects=3).fetch(f"http://public.test:{server}/loop", max_bytes=10)
    assert caught.value.code == "too_many_redirects"


@pytest.mark.parametrize("path", ["/big", "/big-chunked"])
def test_size_is_capped(server: int, path: str) -> None:
    with pytest.raises(ResolutionRefused) as caught:
        _fetcher().fetch(f"http://public.test:{server}{path}", max_bytes=100)
    assert caught.value.code == "too_large"


def test_time_is_capped(server: int) -> None:
    with pytest.raises(ResolutionRefused) as caught:
        _fetcher(timeout_seconds=0.3).fetch(f"http://public.test:{server}/slow", max_bytes=100)
    assert caught.value.code == "timeout"


def test_error_status_is_refused(server: int) -> None:
    with pytest.raises(ResolutionRefused) as caught:
        _fetcher().fetch(f"http://public.test:{server}/missing", max_bytes=100)
    assert caught.value.code == "http_status"
    assert "404" in caught.value.reason


def test_loopback_is_refused_without_an_allowance(server: int) -> None:
    fetcher = SafeHttpFetcher(resolve_host=_Dns({"public.test": ["127.0.0.1"]}))
    with pytest.raises(ResolutionRefused) as caught:
        fetcher.fetch(f"http://public.test:{server}/artifact", max_bytes=100)
    assert caught.value.code == "loopback"


def _request(kind: str, locator: dict[str, str], content: bytes = BODY) -> ArtifactRequest:
    digest = "sha256:" + hashlib.sha256(content).hexdigest()
    return ArtifactRequest("/x", kind, locator, digest, len(content))  # type: ignore[arg-type]


def test_artifact_urls() -> None:
    commit = "a" * 40
    github = _request("github", {"owner": "o", "repo": "r", "commit": commit, "path": "dir/a b.md"})
    assert artifact_url(github) == f"https://raw.githubusercontent.com/o/r/{commit}/dir/a%20b.md"
    ipfs = _request("ipfs", {"cid": "bafy" + "a" * 20, "path": "x/y"})
    assert artifact_url(ipfs) == f"https://ipfs.io/ipfs/bafy{'a' * 20}/x/y"
    s3 = _request("s3", {"bucket": "my-bucket", "key": "k/v.tar", "region": "us-east-1"})
    assert artifact_url(s3) == "https://my-bucket.s3.us-east-1.amazonaws.com/k/v.tar"
    dotted = _request("s3", {"bucket": "my.bucket", "key": "k"})
    assert artifact_url(dotted) == "https://s3.amazonaws.com/my.bucket/k"


def test_http_artifact_resolver_fetches_through_the_fetcher(server: int) -> None:
    resolver = HttpArtifactResolver(
        fetcher=_fetcher(), ipfs_gateway=f"http://public.test:{server}"
    )
    request = _request("ipfs", {"cid": "bafy" + "a" * 20})
    assert resolver.fetch(request) == BODY


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, str]]:
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("openssl is not installed")
    directory = tmp_path_factory.mktemp("tls")
    key, cert = directory / "key.pem", directory / "cert.pem"
    subprocess.run(
        [openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key),
         "-out", str(cert), "-days", "2", "-subj", "/CN=public.test",
         "-addext", "subjectAltName=DNS:public.test"],
        check=True, capture_output=True,
    )
    httpd = _QuietServer(("127.0.0.1", 0), _Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(httpd.server_address[1]), str(cert)
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_https_is_pinned_and_verifies_the_original_name(tls_server: tuple[int, str]) -> None:
    port, cert = tls_server
    trust = ssl.create_default_context(cafile=cert)
    dns = _Dns({"public.test": ["127.0.0.1"], "other.test": ["127.0.0.1"]})
    fetcher = _fetcher(dns, uses=None, tls_context=trust)
    assert fetcher.fetch(f"https://public.test:{port}/artifact", max_bytes=1024) == BODY
    # same address, another name: the certificate is checked against the URL's name
    with pytest.raises(ResolutionRefused) as caught:
        fetcher.fetch(f"https://other.test:{port}/artifact", max_bytes=1024)
    assert caught.value.code == "connection_failed"


def test_directory_resolver_serves_by_digest_only(tmp_path: Any) -> None:
    from agent_interface.evaluator.verify.resolver import DirectoryArtifactResolver

    request = _request("s3", {"bucket": "b-1", "key": "k"})
    (tmp_path / request.digest_hex).write_bytes(BODY + b"extra")
    resolver = DirectoryArtifactResolver(tmp_path)
    assert resolver.fetch(request) == BODY + b"e"  # at most byteLength + 1 bytes are read
    escaping = ArtifactRequest("/x", "s3", {}, "sha256:../../etc/passwd", 3)
    with pytest.raises(ResolutionRefused):
        resolver.fetch(escaping)
