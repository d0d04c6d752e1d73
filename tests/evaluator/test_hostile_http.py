"""Hostile HTTP servers on 127.0.0.1: slow at every stage, flooding, badly framed.

Each server is a raw socket speaking whatever bytes the test chooses. The fetcher may
reach 127.0.0.1 only through the injected address policy (``_allow_loopback``), as in
``test_http_resolver``; everything else keeps the real SSRF rules. Timings are never
asserted except as a generous watchdog that turns a hang into a failure.
"""

from __future__ import annotations

import contextlib
import hashlib
import ipaddress
import os
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_interface.candidate.verification_result import CandidateVerificationRefused
from agent_interface.evaluator.verify.address_policy import (
    AddressClass,
    IpAddress,
    classify_address,
)
from agent_interface.evaluator.verify.http_resolver import HttpArtifactResolver, SafeHttpFetcher
from agent_interface.evaluator.verify.integrity import verify_candidate_bundle
from agent_interface.evaluator.verify.resolver import (
    ArtifactRequest,
    DirectoryArtifactResolver,
    InMemoryArtifactResolver,
    ResolutionRefused,
)
from tests.candidate.bundle_fixtures import (
    EXTERNAL_BYTES,
    SEED_BYTES,
    disabled_bundle,
    with_external_artifacts,
)

Behaviour = Callable[[socket.socket, int], None]
TICK = 0.1
WATCHDOG = 15.0  # seconds: a fetch with a 1 s deadline that takes this long has hung


def _drip(conn: socket.socket, data: bytes, forever: bytes = b"") -> None:
    """Send ``data`` one byte per tick, then ``forever`` repeated one byte per tick."""
    stream = iter(data)
    try:
        while True:
            byte = next(stream, None)
            if byte is None:
                if not forever:
                    time.sleep(3600)
                stream = iter(forever)
                continue
            conn.sendall(bytes([byte]))
            time.sleep(TICK)
    except OSError:
        pass


HEAD = b"HTTP/1.1 200 OK\r\n"


def _respond(raw: bytes) -> Behaviour:
    def behave(conn: socket.socket, port: int) -> None:
        conn.sendall(raw)

    return behave


def _stream(head: bytes, chunk: bytes) -> Behaviour:
    def behave(conn: socket.socket, port: int) -> None:
        conn.sendall(head)
        try:
            while True:
                conn.sendall(chunk)
        except OSError:
            pass

    return behave


ROUTES: dict[str, Behaviour] = {
    "/silent": lambda conn, port: time.sleep(3600),
    "/status-drip": lambda conn, port: _drip(conn, b"", HEAD),
    "/header-drip": lambda conn, port: _drip(conn, HEAD, b"X-Slow: y\r\n"),
    "/length-drip": lambda conn, port: _drip(conn, HEAD + b"Content-Length: 1000\r\n\r\n", b"x"),
    "/chunk-drip": lambda conn, port: _drip(
        conn, HEAD + b"Transfer-Encoding: chunked\r\n\r\n", b"1\r\nx\r\n"
    ),
    "/trailer-drip": lambda conn, port: _drip(
        conn, HEAD + b"Transfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n", b"X-Trailer: y\r\n"
    ),
    "/close-drip": lambda conn, port: _drip(conn, HEAD + b"\r\n", b"x"),
    "/redirect-then-drip": lambda conn, port: conn.sendall(
        b"HTTP/1.1 302 Found\r\nLocation: /length-drip\r\nContent-Length: 0\r\n\r\n"
    ),
    "/ok": _respond(HEAD + b"Content-Length: 5\r\n\r\nhello"),
    "/ok-chunked": _respond(
        HEAD + b"Transfer-Encoding: Chunked\r\n\r\n"
        b"3;name=value;other\r\nhel\r\n2 ; ext=\"quoted\"\r\nlo\r\n0\r\nX-Trailer: t\r\n\r\n"
    ),
    "/ok-close": _respond(HEAD + b"Connection: close\r\n\r\nhello"),
    "/ok-interim": _respond(
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n"
        + HEAD + b"Content-Length: 5\r\n\r\nhello"
    ),
    "/infinite": _stream(HEAD + b"\r\n", b"z" * 65536),
    "/infinite-chunked": _stream(
        HEAD + b"Transfer-Encoding: chunked\r\n\r\n", b"10000\r\n" + b"z" * 65536 + b"\r\n"
    ),
    "/tiny-chunks": _stream(HEAD + b"Transfer-Encoding: chunked\r\n\r\n", b"1\r\nz\r\n" * 4096),
    "/header-flood": _stream(HEAD, b"X-Flood: 1\r\n" * 1000),
    "/long-header": _stream(HEAD + b"X-Long: ", b"a" * 65536),
    "/long-status": _stream(b"HTTP/1.1 200 ", b"a" * 65536),
    "/interim-flood": _stream(b"", b"HTTP/1.1 100 Continue\r\n\r\n"),
    "/trailer-flood": _stream(
        HEAD + b"Transfer-Encoding: chunked\r\n\r\n0\r\n", b"X-Trailer: 1\r\n" * 1000
    ),
}

MALFORMED = {
    "superscript-length": HEAD + "Content-Length: ²\r\n\r\nx".encode(),
    "huge-length": HEAD + b"Content-Length: " + b"9" * 5001 + b"\r\n\r\nx",
    "negative-length": HEAD + b"Content-Length: -5\r\n\r\nx",
    "signed-length": HEAD + b"Content-Length: +5\r\n\r\nhello",
    "listed-length": HEAD + b"Content-Length: 5, 5\r\n\r\nhello",
    "duplicate-length": HEAD + b"Content-Length: 5\r\nContent-Length: 5\r\n\r\nhello",
    "conflicting-length": HEAD + b"Content-Length: 5\r\nContent-Length: 6\r\n\r\nhello!",
    "hex-length": HEAD + b"Content-Length: 0x5\r\n\r\nhello",
    "negative-chunk": HEAD + b"Transfer-Encoding: chunked\r\n\r\n-5\r\nhello\r\n0\r\n\r\n",
    "prefixed-chunk": HEAD + b"Transfer-Encoding: chunked\r\n\r\n0x5\r\nhello\r\n0\r\n\r\n",
    "spaced-chunk": HEAD + b"Transfer-Encoding: chunked\r\n\r\n 5\r\nhello\r\n0\r\n\r\n",
    "long-chunk-size": HEAD + b"Transfer-Encoding: chunked\r\n\r\n" + b"0" * 17 + b"5\r\nhello\r\n0\r\n\r\n",
    "unicode-chunk": HEAD + "Transfer-Encoding: chunked\r\n\r\n٥\r\nhello\r\n0\r\n\r\n".encode(),
    "control-in-extension": HEAD + b"Transfer-Encoding: chunked\r\n\r\n5;a\x01b\r\nhello\r\n0\r\n\r\n",
    "chunk-overrun": HEAD + b"Transfer-Encoding: chunked\r\n\r\n2\r\nhello\r\n0\r\n\r\n",
    "both-framings": HEAD + b"Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
    "gzip-coding": HEAD + b"Transfer-Encoding: gzip\r\n\r\nhello",
    "double-chunked": HEAD + b"Transfer-Encoding: chunked, chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
    "content-encoded": HEAD + b"Content-Encoding: gzip\r\nContent-Length: 5\r\n\r\nhello",
    "bad-status": b"HTTP/1.1 2000 OK\r\nContent-Length: 5\r\n\r\nhello",
    "http2-status": b"HTTP/2 200\r\nContent-Length: 5\r\n\r\nhello",
    "not-http": b"ICY 200 OK\r\n\r\nhello",
    "folded-header": HEAD + b"X-A: 1\r\n  folded\r\nContent-Length: 5\r\n\r\nhello",
    "no-colon": HEAD + b"Content-Length 5\r\n\r\nhello",
    "spaced-name": HEAD + b"Content Length: 5\r\n\r\nhello",
    "nul-in-value": HEAD + b"X-A: a\x00b\r\nContent-Length: 5\r\n\r\nhello",
    "switching": b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n",
    "two-locations": b"HTTP/1.1 302 Found\r\nLocation: /ok\r\nLocation: /ok\r\n\r\n",
}
for name, raw in MALFORMED.items():
    ROUTES["/malformed/" + name] = _respond(raw)
ROUTES["/truncated"] = _respond(HEAD + b"Content-Length: 10\r\n\r\nhello")
ROUTES["/truncated-chunk"] = _respond(HEAD + b"Transfer-Encoding: chunked\r\n\r\n5\r\nhel")
ROUTES["/too-large-length"] = _respond(HEAD + b"Content-Length: 99999999999\r\n\r\nx")
ROUTES["/too-large-chunk"] = _respond(
    HEAD + b"Transfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFF\r\nx"
)


class _RawServer:
    """Accepts connections and runs the route named by each request's path."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.listener.getsockname()[1])
        self.requests: list[bytes] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(10)
            request = b""
            try:
                while b"\r\n\r\n" not in request:
                    data = conn.recv(4096)
                    if not data:
                        return
                    request += data
            except OSError:
                return
            self.requests.append(request)
            path = request.split(b" ", 2)[1].decode().split("?", 1)[0]
            behave = ROUTES.get(path, _respond(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"))
            conn.settimeout(None)
            with contextlib.suppress(OSError):
                behave(conn, self.port)

    def close(self) -> None:
        self.listener.close()


@pytest.fixture(scope="module")
def server() -> Iterator[_RawServer]:
    raw = _RawServer()
    try:
        yield raw
    finally:
        raw.close()


def _allow_loopback(address: IpAddress) -> AddressClass | None:
    if address == ipaddress.ip_address("127.0.0.1"):
        return None
    return classify_address(address)


def _dns(host: str, port: int) -> list[str]:
    answers = {"public.test": ["127.0.0.1"], "private.test": ["10.1.2.3"],
               "mixed.test": ["127.0.0.1", "192.168.0.1"]}
    if host not in answers:
        raise OSError("unknown name")
    return answers[host]


def _fetcher(**options: Any) -> SafeHttpFetcher:
    options.setdefault("timeout_seconds", 1.0)
    return SafeHttpFetcher(resolve_host=_dns, address_policy=_allow_loopback, **options)


def _refusal(server: _RawServer, path: str, max_bytes: int = 1024, **options: Any) -> str:
    fetcher = _fetcher(**options)
    started = time.monotonic()
    with pytest.raises(ResolutionRefused) as caught:
        fetcher.fetch(f"http://public.test:{server.port}{path}", max_bytes=max_bytes)
    assert time.monotonic() - started < WATCHDOG
    assert type(caught.value) is ResolutionRefused
    assert caught.value.__cause__ is None
    assert caught.value.__context__ is None or caught.value.__suppress_context__
    return caught.value.code


# -- slow servers: one deadline over every stage ----------------------------------------


@pytest.mark.parametrize(
    "path",
    ["/silent", "/status-drip", "/header-drip", "/length-drip", "/chunk-drip", "/trailer-drip",
     "/close-drip", "/redirect-then-drip"],
)
def test_a_slow_server_is_cut_off_at_the_deadline(server: _RawServer, path: str) -> None:
    assert _refusal(server, path, max_bytes=1 << 20) == "timeout"


def test_a_slow_tls_handshake_is_cut_off_at_the_deadline(server: _RawServer) -> None:
    fetcher = _fetcher(tls_context=ssl.create_default_context())
    started = time.monotonic()
    with pytest.raises(ResolutionRefused) as caught:
        fetcher.fetch(f"https://public.test:{server.port}/silent", max_bytes=10)
    assert caught.value.code == "timeout"
    assert time.monotonic() - started < WATCHDOG


def test_a_slow_dns_answer_is_cut_off_at_the_deadline(server: _RawServer) -> None:
    def slow(host: str, port: int) -> list[str]:
        time.sleep(30)
        return ["127.0.0.1"]

    fetcher = SafeHttpFetcher(resolve_host=slow, address_policy=_allow_loopback, timeout_seconds=1.0)
    started = time.monotonic()
    with pytest.raises(ResolutionRefused) as caught:
        fetcher.fetch(f"http://public.test:{server.port}/ok", max_bytes=10)
    assert caught.value.code == "timeout"
    assert time.monotonic() - started < WATCHDOG


def test_a_connect_that_never_completes_is_cut_off(tmp_path: Path) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    fillers = []
    try:
        for _ in range(8):  # fill the accept queue so further handshakes stall
            filler = socket.socket()
            filler.setblocking(False)
            filler.connect_ex(("127.0.0.1", port))
            fillers.append(filler)
        time.sleep(0.2)
        started = time.monotonic()
        with pytest.raises(ResolutionRefused) as caught:
            _fetcher().fetch(f"http://public.test:{port}/ok", max_bytes=10)
        assert caught.value.code in ("timeout", "connection_failed")
        assert time.monotonic() - started < WATCHDOG
    finally:
        for filler in fillers:
            filler.close()
        listener.close()


# -- floods and sizes ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "path", ["/header-flood", "/long-header", "/long-status", "/trailer-flood"]
)
def test_response_heads_are_bounded(server: _RawServer, path: str) -> None:
    assert _refusal(server, path, timeout_seconds=10.0) == "headers_too_large"


def test_interim_responses_are_bounded(server: _RawServer) -> None:
    assert _refusal(server, "/interim-flood", timeout_seconds=10.0) == "http_malformed"


@pytest.mark.parametrize("path", ["/infinite", "/infinite-chunked", "/tiny-chunks"])
def test_bodies_stop_at_the_declared_size(server: _RawServer, path: str) -> None:
    assert _refusal(server, path, max_bytes=100_000, timeout_seconds=10.0) == "too_large"


@pytest.mark.parametrize("path", ["/infinite", "/infinite-chunked", "/too-large-length",
                                  "/too-large-chunk"])
def test_the_absolute_cap_holds_whatever_byte_length_is_declared(
    server: _RawServer, path: str
) -> None:
    code = _refusal(server, path, max_bytes=1 << 20, max_body_bytes=1 << 20, timeout_seconds=10.0)
    assert code == "too_large"


def test_a_declared_size_above_the_cap_is_refused_without_connecting(server: _RawServer) -> None:
    server.requests.clear()
    assert _refusal(server, "/infinite", max_bytes=2**53 - 1) == "too_large"
    assert server.requests == []


# -- framing --------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_malformed_framing_is_refused(server: _RawServer, name: str) -> None:
    assert _refusal(server, "/malformed/" + name) == "http_malformed"


@pytest.mark.parametrize("path", ["/truncated", "/truncated-chunk"])
def test_a_body_cut_short_is_refused(server: _RawServer, path: str) -> None:
    assert _refusal(server, path) == "truncated"


@pytest.mark.parametrize("path", ["/ok", "/ok-chunked", "/ok-close", "/ok-interim"])
def test_well_formed_responses_are_read(server: _RawServer, path: str) -> None:
    body = _fetcher().fetch(f"http://public.test:{server.port}{path}", max_bytes=5)
    assert body == b"hello"


def test_the_request_is_one_plain_get(server: _RawServer) -> None:
    server.requests.clear()
    _fetcher().fetch(f"http://public.test:{server.port}/ok?a=%20b", max_bytes=5)
    request = server.requests[-1]
    expected = f"GET /ok?a=%20b HTTP/1.1\r\nHost: public.test:{server.port}\r\n".encode()
    assert request.startswith(expected)
    assert b"Connection: close\r\n" in request and b"Accept-Encoding: identity\r\n" in request


# -- the address rules still hold on every hop ----------------------------------------------


@pytest.mark.parametrize(
    ("location", "code"),
    [
        ("http://[::ffff:127.0.0.2]/x", "loopback"),
        ("http://0x7f.2:{port}/x", "loopback"),  # 127.0.0.2 in hex shorthand
        ("http://169.254.169.254/latest/meta-data/", "cloud_metadata"),
        ("http://localhost./x", "loopback"),
        ("http://private.test/x", "private"),
        ("http://mixed.test/x", "private"),
        ("http://[fe80::1]/x", "link_local"),
        ("http://user:pw@public.test/x", "url_userinfo"),
        ("file:///etc/passwd", "scheme_not_allowed"),
    ],
)
def test_redirects_are_checked_again(server: _RawServer, location: str, code: str) -> None:
    path = "/redirect-to-" + hashlib.sha256(location.encode()).hexdigest()[:12]
    target = location.format(port=server.port).encode()
    ROUTES[path] = _respond(b"HTTP/1.1 302 Found\r\nLocation: " + target + b"\r\n\r\n")
    assert _refusal(server, path) == code


# -- nothing untyped escapes, through the resolver and the verifier -------------------------


def _request(content: bytes = SEED_BYTES) -> ArtifactRequest:
    digest = "sha256:" + hashlib.sha256(content).hexdigest()
    return ArtifactRequest("/x", "ipfs", {"cid": "bafy" + "a" * 20}, digest, len(content))


@pytest.mark.parametrize("name", ["superscript-length", "huge-length", "negative-chunk"])
def test_the_artifact_resolver_refuses_with_a_type(server: _RawServer, name: str) -> None:
    resolver = HttpArtifactResolver(
        fetcher=_fetcher(), ipfs_gateway=f"http://public.test:{server.port}/malformed/{name}#"
    )
    with pytest.raises(ResolutionRefused) as caught:
        resolver.fetch(_request())
    assert caught.value.code == "http_malformed"


def test_a_request_missing_locator_fields_is_refused_with_a_type() -> None:
    broken = ArtifactRequest("/x", "s3", {}, "sha256:" + "a" * 64, 3)
    with pytest.raises(ResolutionRefused) as caught:
        HttpArtifactResolver(fetcher=_fetcher()).fetch(broken)
    assert caught.value.code == "invalid_locator"


@pytest.mark.parametrize("name", ["superscript-length", "huge-length", "negative-chunk"])
def test_the_verifier_refuses_with_a_type(server: _RawServer, name: str) -> None:
    bundle = with_external_artifacts(disabled_bundle())
    resolver = HttpArtifactResolver(
        fetcher=_fetcher(),
        ipfs_gateway=f"http://public.test:{server.port}/malformed/{name}#",
        github_raw=f"http://public.test:{server.port}/malformed/{name}#",
        s3_endpoint=f"http://public.test:{server.port}/malformed/{name}#",
    )
    with pytest.raises(CandidateVerificationRefused) as caught:
        verify_candidate_bundle(bundle, repository=None, resolver=resolver)
    assert (caught.value.check, caught.value.code) == ("external_artifact", "http_malformed")


def test_a_resolver_that_raises_anything_is_a_typed_refusal() -> None:
    class Broken:
        def fetch(self, request: ArtifactRequest) -> bytes:
            raise ValueError("invalid literal for int() with base 10: 'secret-token'")

    bundle = with_external_artifacts(disabled_bundle())
    with pytest.raises(CandidateVerificationRefused) as caught:
        verify_candidate_bundle(bundle, repository=None, resolver=Broken())
    assert caught.value.code == "resolver_failed"
    assert "secret-token" not in str(caught.value)
    assert caught.value.__cause__ is None and caught.value.__suppress_context__
    assert verify_candidate_bundle(
        bundle, repository=None, resolver=InMemoryArtifactResolver(EXTERNAL_BYTES)
    ).bundle_digest == bundle["digest"]


# -- the directory resolver -------------------------------------------------------------------


def test_the_directory_resolver_never_blocks_on_a_fifo(tmp_path: Path) -> None:
    request = _request()
    os.mkfifo(tmp_path / request.digest_hex)
    with pytest.raises(ResolutionRefused) as caught:
        DirectoryArtifactResolver(tmp_path).fetch(request)
    assert caught.value.code == "artifact_unreadable"


def test_the_directory_resolver_has_an_absolute_cap(tmp_path: Path) -> None:
    request = _request()
    (tmp_path / request.digest_hex).write_bytes(SEED_BYTES)
    assert DirectoryArtifactResolver(tmp_path).fetch(request) == SEED_BYTES
    huge = ArtifactRequest("/x", "s3", {}, request.sha256, 2**53 - 1)
    with pytest.raises(ResolutionRefused) as caught:
        DirectoryArtifactResolver(tmp_path).fetch(huge)
    assert caught.value.code == "too_large"
    with pytest.raises(ResolutionRefused):
        DirectoryArtifactResolver(tmp_path, max_bytes=4).fetch(request)
