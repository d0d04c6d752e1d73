"""The strict-egress proxy's bounds, each tried: connections, head size, timeouts, bytes.

Clients talk to the proxy's Unix socket from this thread; the proxy and the test host
run in namespaces this module creates (see ``egress_fixtures``).
"""

from __future__ import annotations

import contextlib
import gc
import socket
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_interface.evaluator.egress.proxy import EgressProxy
from agent_interface.evaluator.egress.settings import EgressSettings
from tests.evaluator.egress_fixtures import (
    PUBLIC_FOR_TESTS,
    EchoHost,
    LoopThread,
    exchange,
    fixed_dns,
    netns_unavailable,
    proxy_side_and_host,
)

_REASON = netns_unavailable()
pytestmark = pytest.mark.skipif(_REASON is not None, reason=_REASON or "")


@pytest.fixture(scope="module")
def side() -> Iterator[tuple[LoopThread, EchoHost, str]]:
    with proxy_side_and_host() as value:
        yield value


def _proxy(side: tuple[LoopThread, EchoHost, str], path: Path, **options: object) -> EgressProxy:
    settings = EgressSettings(
        allow_domains=("allowed.test",), extra_public_networks=PUBLIC_FOR_TESTS, **options  # type: ignore[arg-type]
    )
    proxy = EgressProxy(settings, resolver=fixed_dns)
    side[0].run(proxy.start(unix_path=path))
    return proxy


def _decided(proxy: EgressProxy) -> int:
    return proxy.log.allowed + sum(proxy.log.refused.values())


def _wait(predicate: object, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():  # type: ignore[operator]
        assert time.monotonic() < deadline, "the proxy did not get there in time"
        time.sleep(0.01)


def _rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def test_a_thousand_concurrent_connections_stay_bounded(side, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    limit = 64
    proxy = _proxy(side, tmp_path / "p.sock", max_connections=limit, head_timeout=30.0)
    request = b"CONNECT allowed.test:443 HTTP/1.1\r\n\r\n"
    gc.collect()
    tracemalloc.start()
    rss_before = _rss_kib()
    base, _ = tracemalloc.get_traced_memory()
    clients = []
    try:
        for _ in range(1000):
            client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            client.settimeout(10)
            client.connect(str(tmp_path / "p.sock"))
            clients.append(client)
            # Over the limit the proxy answers and closes at once, so under load the client
            # can find its side closed before it writes; the log below still counts it.
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                client.sendall(request)
        _wait(lambda: proxy.log.refused["connection_limit"] == 1000 - limit
              and proxy.active_connections == limit)
        held, peak = tracemalloc.get_traced_memory()
        rss_held = _rss_kib()
        # Every held connection is a live tunnel.
        assert clients[0].recv(100).startswith(b"HTTP/1.1 200")
    finally:
        for client in clients:
            client.close()
        tracemalloc.stop()
    _wait(lambda: _decided(proxy) == 1000)
    side[0].run(proxy.close())
    assert proxy.peak_connections == limit
    assert proxy.log.allowed == limit
    # The bound is the connection limit: what 1,000 clients cost is what 64 tunnels
    # and 936 immediate refusals cost, well under 16 MiB of Python objects.
    growth = peak - base
    print(f"traced growth {growth / 1024:.0f} KiB (held {(held - base) / 1024:.0f} KiB), "
          f"RSS {rss_before} -> {rss_held} KiB")
    assert growth < 16 * 1024 * 1024
    assert rss_held - rss_before < 64 * 1024


def test_a_slow_head_is_refused_at_the_head_timeout(side, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    proxy = _proxy(side, tmp_path / "p.sock", head_timeout=0.3)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.settimeout(5)
        client.connect(str(tmp_path / "p.sock"))
        client.sendall(b"CONNECT allowed.test:443 HTTP/1.1\r\n")
        started = time.monotonic()
        answer = client.recv(1000)
        waited = time.monotonic() - started
    assert answer.startswith(b"HTTP/1.1 408") and b"head_timeout" in answer
    assert waited < 3
    _wait(lambda: proxy.log.refused["head_timeout"] == 1)
    side[0].run(proxy.close())


def test_an_idle_tunnel_is_closed_and_recorded(side, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    proxy = _proxy(side, tmp_path / "p.sock", idle_timeout=0.3)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.settimeout(5)
        client.connect(str(tmp_path / "p.sock"))
        client.sendall(b"CONNECT allowed.test:443 HTTP/1.1\r\n\r\nhello")
        received = b""
        while chunk := client.recv(1000):
            received += chunk
    assert received == b"HTTP/1.1 200 Connection established\r\n\r\nhello"
    _wait(lambda: proxy.log.allowed == 1)
    decision = proxy.log.records()[-1]
    assert (decision.end, decision.bytes_up, decision.bytes_down) == ("idle_timeout", 5, 5)
    side[0].run(proxy.close())


def test_a_busy_tunnel_ends_at_the_total_timeout(side, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    proxy = _proxy(side, tmp_path / "p.sock", total_timeout=0.6, idle_timeout=5.0)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.settimeout(5)
        client.connect(str(tmp_path / "p.sock"))
        client.sendall(b"CONNECT allowed.test:443 HTTP/1.1\r\n\r\n")
        started = time.monotonic()
        client.recv(1000)
        try:
            while time.monotonic() - started < 5:
                client.sendall(b"x")
                if not client.recv(10):
                    break
                time.sleep(0.05)
        except OSError:
            pass
    assert time.monotonic() - started < 3
    _wait(lambda: proxy.log.allowed == 1)
    assert proxy.log.records()[-1].end == "total_timeout"
    side[0].run(proxy.close())


def test_bytes_are_counted_exactly_both_ways(side, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    proxy = _proxy(side, tmp_path / "p.sock")
    payload = bytes(range(256)) * 4096  # 1 MiB
    status, echo = exchange(0, b"CONNECT allowed.test:443 HTTP/1.1\r\n\r\n", payload,
                            unix=str(tmp_path / "p.sock"))
    assert status.startswith("HTTP/1.1 200") and echo == payload
    _wait(lambda: proxy.log.allowed == 1)
    decision = proxy.log.records()[-1]
    assert decision.bytes_up == decision.bytes_down == len(payload)
    assert proxy.summary().to_json()["bytesUp"] == len(payload)
    side[0].run(proxy.close())


def test_closing_the_proxy_ends_open_tunnels(side, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    proxy = _proxy(side, tmp_path / "p.sock")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.settimeout(5)
        client.connect(str(tmp_path / "p.sock"))
        client.sendall(b"CONNECT allowed.test:443 HTTP/1.1\r\n\r\n")
        assert client.recv(1000).startswith(b"HTTP/1.1 200")
        side[0].run(proxy.close())
        assert client.recv(1000) == b""
    assert proxy.log.records()[-1].end == "proxy_closed"
    assert not (tmp_path / "p.sock").exists()


def test_a_failing_resolver_or_a_vanishing_client_is_a_recorded_refusal(side, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    async def broken(host: str, port: int) -> list[str]:
        raise RuntimeError("resolver bug")

    settings = EgressSettings(allow_domains=("allowed.test",), extra_public_networks=PUBLIC_FOR_TESTS)
    proxy = EgressProxy(settings, resolver=broken)
    side[0].run(proxy.start(unix_path=tmp_path / "p.sock"))
    status, _ = exchange(0, b"CONNECT allowed.test:443 HTTP/1.1\r\n\r\n", unix=str(tmp_path / "p.sock"))
    assert status.startswith("HTTP/1.1 502")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.connect(str(tmp_path / "p.sock"))
        client.sendall(b"CONNECT allowed.te")
    _wait(lambda: _decided(proxy) == 2)
    assert dict(proxy.log.refused) == {"resolution_failed": 1, "malformed_request": 1}
    assert proxy.log.allowed == 0
    side[0].run(proxy.close())
