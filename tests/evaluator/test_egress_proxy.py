"""The strict-egress proxy end to end, in network namespaces these tests create.

The sandbox namespace has loopback only; its one way out is the standalone forwarder
(127.0.0.1 inside the sandbox) relaying to the proxy's Unix socket. The proxy runs in
its own namespace, joined to the test host's by a veth pair; the test host's addresses
(192.0.2.0/24, 2001:db8::/64) are declared public for these proxies only, and DNS is a
resolver the tests control. Nothing leaves the machine.
"""

from __future__ import annotations

import errno
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from agent_interface.evaluator.egress.decisions import EgressLog
from agent_interface.evaluator.egress.forwarder import proxy_environment
from agent_interface.evaluator.egress.proxy import EgressProxy
from agent_interface.evaluator.egress.settings import EgressSettings
from tests.evaluator.egress_fixtures import (
    HOST_PRIVATE_V4,
    HOST_V4,
    HOST_V6,
    PUBLIC_FOR_TESTS,
    EchoHost,
    LoopThread,
    connect_errno,
    delete_netns,
    exchange,
    in_netns,
    link_proxy_and_host,
    netns_unavailable,
    new_netns,
    start_forwarder,
    stop_process,
)

_REASON = netns_unavailable()
pytestmark = pytest.mark.skipif(_REASON is not None, reason=_REASON or "")


@dataclass
class Dns:
    """The tests' DNS: fixed answers, or a sequence consumed one lookup at a time."""

    answers: dict[str, list[list[str]]] = field(default_factory=dict)
    calls: list[str] = field(default_factory=list)

    async def __call__(self, host: str, port: int) -> list[str]:
        self.calls.append(host)
        sequence = self.answers.get(host)
        if not sequence:
            raise OSError(errno.ENOENT, "no such name")
        return sequence.pop(0) if len(sequence) > 1 else sequence[0]


@dataclass
class World:
    proxy_ns: str
    sandbox_a: str
    sandbox_b: str
    proxy_loop: LoopThread
    host: EchoHost
    dns: Dns
    proxy_a: EgressProxy
    proxy_b: EgressProxy
    port_a: int
    port_b: int
    loopback_seen: list[int]


async def _loopback_trap(seen: list[int]) -> None:
    import asyncio

    async def note(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen.append(writer.get_extra_info("sockname")[1])
        writer.close()

    for port in (80, 443):
        await asyncio.start_server(note, "127.0.0.1", port)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    made: list[str] = []
    loops: list[LoopThread] = []
    processes: list[subprocess.Popen[bytes]] = []
    try:
        proxy_ns, host_ns = new_netns("proxy"), new_netns("host")
        sandbox_a, sandbox_b = new_netns("sbxa"), new_netns("sbxb")
        made += [proxy_ns, host_ns, sandbox_a, sandbox_b]
        link_proxy_and_host(proxy_ns, host_ns)
        host_loop, proxy_loop = LoopThread(host_ns), LoopThread(proxy_ns)
        loops += [host_loop, proxy_loop]
        host = EchoHost()
        host_loop.run(host.start((HOST_V4, HOST_PRIVATE_V4, HOST_V6)))
        loopback_seen: list[int] = []
        proxy_loop.run(_loopback_trap(loopback_seen))
        dns = Dns()
        root = tmp_path_factory.mktemp("egress")
        sock_a, sock_b = str(root / "a.sock"), str(root / "b.sock")
        common = {"extra_public_networks": PUBLIC_FOR_TESTS, "connect_timeout": 2.0}
        proxy_a = EgressProxy(
            EgressSettings(allow_domains=("allowed.test",), **common),  # type: ignore[arg-type]
            resolver=dns,
            log=EgressLog(jsonl_path=root / "a.jsonl"),
        )
        proxy_b = EgressProxy(
            EgressSettings(allow_domains=("other.test",), **common),  # type: ignore[arg-type]
            resolver=dns,
        )
        proxy_loop.run(proxy_a.start(unix_path=sock_a, tcp_port=0))
        proxy_loop.run(proxy_b.start(unix_path=sock_b))
        fwd_a, port_a = start_forwarder(sandbox_a, sock_a, 3128)
        fwd_b, port_b = start_forwarder(sandbox_b, sock_b, 3129)
        processes += [fwd_a, fwd_b]
        yield World(proxy_ns, sandbox_a, sandbox_b, proxy_loop, host, dns, proxy_a, proxy_b,
                    port_a, port_b, loopback_seen)
        proxy_loop.run(proxy_a.close())
        proxy_loop.run(proxy_b.close())
        host_loop.run(host.stop())
    finally:
        for process in processes:
            stop_process(process)
        for loop in loops:
            loop.stop()
        for name in made:
            delete_netns(name)


def _settled(proxy: EgressProxy, count: int) -> None:
    """Wait (bounded) until ``proxy`` has recorded ``count`` decisions."""
    deadline = time.monotonic() + 5
    while proxy.log.allowed + sum(proxy.log.refused.values()) < count:
        assert time.monotonic() < deadline, "the decision was not recorded"
        time.sleep(0.01)


def _decided(proxy: EgressProxy) -> int:
    return proxy.log.allowed + sum(proxy.log.refused.values())


def _from_sandbox(world: World, request: bytes, payload: bytes = b"") -> tuple[str, bytes]:
    before = _decided(world.proxy_a)
    result = in_netns(world.sandbox_a, lambda: exchange(world.port_a, request, payload))
    _settled(world.proxy_a, before + 1)
    return result


def _last(proxy: EgressProxy) -> dict[str, object]:
    return proxy.log.records()[-1].to_json()


def _refused(world: World, request: bytes, rule: str) -> dict[str, object]:
    before = len(world.proxy_a.log.records())
    status, body = _from_sandbox(world, request)
    assert f"X-Egress-Refused: {rule}".encode() in status.encode() + b"" or body.endswith(
        rule.encode() + b"\n"
    ), (status, body)
    assert len(world.proxy_a.log.records()) == before + 1
    last = _last(world.proxy_a)
    assert last["allowed"] is False and last["rule"] == rule, last
    return last


def test_allowed_domain_over_connect_is_relayed_and_counted(world: World) -> None:
    world.dns.answers["allowed.test"] = [[HOST_V4]]
    status, echo = _from_sandbox(world, b"CONNECT allowed.test:443 HTTP/1.1\r\nHost: allowed.test:443\r\n\r\n",
                                 b"ping-through-the-tunnel")
    assert status == "HTTP/1.1 200 Connection established"
    assert echo == b"ping-through-the-tunnel"
    decision = _last(world.proxy_a)
    assert decision["allowed"] is True and decision["address"] == HOST_V4
    assert decision["bytes_up"] == decision["bytes_down"] == len(b"ping-through-the-tunnel")
    assert (HOST_V4, 443) in world.host.seen


def test_names_are_matched_without_case_or_root_dot(world: World) -> None:
    world.dns.answers["allowed.test"] = [[HOST_V4]]
    status, echo = _from_sandbox(world, b"CONNECT ALLOWED.Test.:443 HTTP/1.1\r\n\r\n", b"case")
    assert (status, echo) == ("HTTP/1.1 200 Connection established", b"case")
    assert _last(world.proxy_a)["host"] == "allowed.test"


def test_allowed_subdomain_and_plain_http(world: World) -> None:
    world.dns.answers["api.allowed.test"] = [[HOST_V4]]
    status, body = _from_sandbox(world, b"GET http://api.allowed.test/hello?x=1 HTTP/1.1\r\n"
                                        b"Host: api.allowed.test\r\nProxy-Authorization: secret\r\n\r\n")
    assert status == "HTTP/1.1 200 OK"
    assert body == b"GET /hello?x=1 HTTP/1.1|host=api.allowed.test"
    decision = _last(world.proxy_a)
    assert decision["allowed"] is True and decision["host"] == "api.allowed.test"
    assert decision["bytes_up"] == len(b"GET /hello?x=1 HTTP/1.1\r\nHost: api.allowed.test\r\n"
                                       b"Connection: close\r\n\r\n")
    assert "secret" not in str(decision) and "hello" not in str(decision)


def test_a_program_uses_the_proxy_environment(world: World) -> None:
    world.dns.answers["allowed.test"] = [[HOST_V4]]
    code = ("import urllib.request;"
            "print(urllib.request.urlopen('http://allowed.test/env', timeout=5).read().decode())")
    done = subprocess.run(
        ["ip", "netns", "exec", world.sandbox_a, "env", "-i", *(
            f"{k}={v}" for k, v in proxy_environment(world.port_a).items()
        ), sys.executable, "-I", "-c", code],
        capture_output=True, timeout=30,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode().strip() == "GET /env HTTP/1.1|host=allowed.test"


@pytest.mark.parametrize("target", [
    f"{HOST_V4}:443", f"[{HOST_V6}]:443", "3221225986:443", "0xc0000202:443", "0300.0.2.2:443",
    "192.0.2.2.:443", "192.0.514:443", f"[::ffff:{HOST_V4}]:443", "::ffff:c000:202:443",
    "[fe80::1%25eth0]:443", "127.1:443",
])
def test_ip_literals_are_refused(world: World, target: str) -> None:
    calls = len(world.dns.calls)
    _refused(world, f"CONNECT {target} HTTP/1.1\r\n\r\n".encode(), "ip_literal")
    assert len(world.dns.calls) == calls


@pytest.mark.parametrize("url", [f"http://{HOST_V4}/", f"http://[{HOST_V6}]/", "http://2130706433/"])
def test_ip_literals_in_plain_http_are_refused(world: World, url: str) -> None:
    _refused(world, f"GET {url} HTTP/1.1\r\n\r\n".encode(), "ip_literal")


@pytest.mark.parametrize("host", [
    "evil.test", "evil-allowed.test", "allowed.test.evil.test", "xallowed.test", "allowed.tes",
    "other.test",
])
def test_domains_outside_the_allow_list_are_refused(world: World, host: str) -> None:
    world.dns.answers[host] = [[HOST_V4]]
    calls = len(world.dns.calls)
    decision = _refused(world, f"CONNECT {host}:443 HTTP/1.1\r\n\r\n".encode(), "domain_not_allowed")
    assert decision["target"] == host
    assert len(world.dns.calls) == calls


@pytest.mark.parametrize(("request_line", "rule"), [
    (b"CONNECT allowed.test:8443 HTTP/1.1", "port_not_allowed"),
    (b"CONNECT allowed.test:80 HTTP/1.1", "port_not_allowed"),
    (b"GET http://allowed.test:443/ HTTP/1.1", "port_not_allowed"),
    (b"GET https://allowed.test/ HTTP/1.1", "scheme_not_allowed"),
    (b"GET ftp://allowed.test/ HTTP/1.1", "scheme_not_allowed"),
    (b"TRACE http://allowed.test/ HTTP/1.1", "method_not_allowed"),
    (b"GET /relative HTTP/1.1", "not_a_proxy_request"),
    (b"GET http://user@allowed.test/ HTTP/1.1", "invalid_host"),
    (b"CONNECT localhost:443 HTTP/1.1", "blocked_name"),
])
def test_other_ports_methods_and_schemes_are_refused(world: World, request_line: bytes, rule: str) -> None:
    _refused(world, request_line + b"\r\n\r\n", rule)
    assert not [seen for seen in world.host.seen if seen[1] == 8443]


@pytest.mark.parametrize(("headers", "rule"), [
    (b"Host: allowed.test\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n", "upgrade_refused"),
    (b"Host: allowed.test\r\nHTTP2-Settings: AAMAAABkAAQAAP__\r\n", "upgrade_refused"),
    (b"Host: other.test\r\n", "host_mismatch"),
    (b"Host: 192.0.2.2\r\n", "host_mismatch"),
    (b"Host: allowed.test\r\nHost: other.test\r\n", "malformed_request"),
    (b"Host: allowed.test\r\nX-Big: " + b"a" * 20_000 + b"\r\n", "header_too_large"),
    (b"Host: allowed.test\r\n" + b"X-Many: 1\r\n" * 150, "header_too_large"),
])
def test_tricks_in_headers_are_refused(world: World, headers: bytes, rule: str) -> None:
    _refused(world, b"GET http://allowed.test/ HTTP/1.1\r\n" + headers + b"\r\n", rule)


@pytest.mark.parametrize(("answer", "detail"), [
    (["127.0.0.1"], "loopback"), ([HOST_PRIVATE_V4], "private"), (["169.254.169.254"], "cloud_metadata"),
    (["fe80::1"], "link_local"), (["::ffff:127.0.0.1"], "loopback"), ([HOST_V4, "127.0.0.1"], "loopback"),
    (["0.0.0.0"], "unspecified"), (["224.0.0.1"], "multicast"), (["64:ff9b::7f00:1"], "loopback"),
    (["2002:7f00:1::"], "loopback"), (["::ffff:10.77.0.2"], "private"), (["fd00:ec2::254"], "cloud_metadata"),
    (["not-an-address"], None),
])
def test_non_public_dns_answers_are_refused(world: World, answer: list[str], detail: str | None) -> None:
    world.dns.answers["bad.allowed.test"] = [answer]
    seen = len(world.host.seen)
    rule = "address_refused" if detail else "resolution_failed"
    decision = _refused(world, b"CONNECT bad.allowed.test:443 HTTP/1.1\r\n\r\n", rule)
    assert decision.get("address_class") == detail
    assert len(world.host.seen) == seen and world.loopback_seen == []


def test_a_rebinding_answer_reaches_only_the_checked_address(world: World) -> None:
    world.dns.answers["rebind.allowed.test"] = [[HOST_V4], ["127.0.0.1"]]
    calls = len(world.dns.calls)
    status, echo = _from_sandbox(world, b"CONNECT rebind.allowed.test:443 HTTP/1.1\r\n\r\n", b"once")
    assert (status, echo) == ("HTTP/1.1 200 Connection established", b"once")
    assert world.dns.calls[calls:] == ["rebind.allowed.test"]
    assert _last(world.proxy_a)["address"] == HOST_V4
    _refused(world, b"CONNECT rebind.allowed.test:443 HTTP/1.1\r\n\r\n", "address_refused")
    assert world.loopback_seen == []


def test_ipv6_answers_in_the_public_networks_are_pinned(world: World) -> None:
    world.dns.answers["six.allowed.test"] = [[HOST_V6]]
    status, echo = _from_sandbox(world, b"CONNECT six.allowed.test:443 HTTP/1.1\r\n\r\n", b"v6")
    assert (status, echo) == ("HTTP/1.1 200 Connection established", b"v6")
    assert _last(world.proxy_a)["address"] == HOST_V6


def test_the_sandbox_has_no_route_udp_or_dns(world: World) -> None:
    def probe() -> dict[str, object]:
        results: dict[str, object] = {
            "tcp4": connect_errno(socket.AF_INET, (HOST_V4, 443)),
            "tcp6": connect_errno(socket.AF_INET6, (HOST_V6, 443)),
            "udp": connect_errno(socket.AF_INET, (HOST_V4, 53), socket.SOCK_DGRAM),
            "udp6": connect_errno(socket.AF_INET6, (HOST_V6, 53), socket.SOCK_DGRAM),
            "dns_server": connect_errno(socket.AF_INET, ("8.8.8.8", 53), socket.SOCK_DGRAM),
        }
        try:
            socket.getaddrinfo("allowed.test", 443)
            results["resolve"] = "resolved"
        except OSError:
            results["resolve"] = "failed"
        return results

    results = in_netns(world.sandbox_a, probe)
    assert results == {
        "tcp4": errno.ENETUNREACH, "tcp6": errno.ENETUNREACH, "udp": errno.ENETUNREACH,
        "udp6": errno.ENETUNREACH, "dns_server": errno.ENETUNREACH, "resolve": "failed",
    }


def test_another_environments_endpoint_is_not_reachable(world: World) -> None:
    world.dns.answers["other.test"] = [[HOST_V4]]
    before_b = len(world.proxy_b.log.records())
    # Through its own endpoint, the other environment's domain is refused by its own policy.
    _refused(world, b"CONNECT other.test:443 HTTP/1.1\r\n\r\n", "domain_not_allowed")
    # The other environment's forwarder port and the proxy's loopback port are not its own.
    assert world.proxy_a.tcp_port is not None
    errors = in_netns(world.sandbox_a, lambda: (
        connect_errno(socket.AF_INET, ("127.0.0.1", world.port_b)),
        connect_errno(socket.AF_INET, ("127.0.0.1", world.proxy_a.tcp_port or 0)),
    ))
    assert errors == (errno.ECONNREFUSED, errno.ECONNREFUSED)
    assert len(world.proxy_b.log.records()) == before_b
    # The other environment, through its own endpoint, gets its own policy.
    status, _ = in_netns(world.sandbox_b, lambda: exchange(
        world.port_b, b"CONNECT other.test:443 HTTP/1.1\r\n\r\n", b"b"))
    _settled(world.proxy_b, before_b + 1)
    assert status == "HTTP/1.1 200 Connection established"
    assert world.proxy_b.log.records()[-1].allowed


def test_every_decision_is_in_the_jsonl_file_and_the_summary(world: World) -> None:
    summary = world.proxy_a.summary().to_json()
    assert summary["policy"]["allowDomains"] == ["allowed.test"]
    assert summary["policy"]["extraPublicNetworks"] == list(PUBLIC_FOR_TESTS)
    assert summary["allowed"] == world.proxy_a.log.allowed
    path = Path(str(world.proxy_a.unix_path)).with_name("a.jsonl")
    text = path.read_text()
    assert "secret" not in text and "/hello" not in text and "x=1" not in text
    lines = text.splitlines()
    assert len(lines) == len(world.proxy_a.log.records())
    assert summary["allowed"] + sum(summary["refused"].values()) == len(lines)


def test_the_loopback_tcp_endpoint_enforces_the_same_policy(world: World) -> None:
    world.dns.answers["allowed.test"] = [[HOST_V4]]
    port = world.proxy_a.tcp_port or 0
    before = _decided(world.proxy_a)
    allowed = in_netns(world.proxy_ns, lambda: exchange(port, b"CONNECT allowed.test:443 HTTP/1.1\r\n\r\n", b"t"))
    refused = in_netns(world.proxy_ns, lambda: exchange(port, b"CONNECT evil.test:443 HTTP/1.1\r\n\r\n"))
    _settled(world.proxy_a, before + 2)
    assert allowed == ("HTTP/1.1 200 Connection established", b"t")
    assert refused[0].startswith("HTTP/1.1 403")
    assert [d.endpoint for d in world.proxy_a.log.records()[-2:]] == ["tcp", "tcp"]
