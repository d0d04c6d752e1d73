"""What the egress log keeps of a refused request (host and port only), and a slowloris
against one environment's proxy while another environment's proxy on the same loop serves.

The proxies listen on loopback TCP in the test's own namespace; every request here is
refused before any connection leaves (no resolver answers), so nothing leaves the machine.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

from agent_interface.evaluator.egress.decisions import EgressDecision, EgressLog, target_authority
from agent_interface.evaluator.egress.proxy import EgressProxy
from agent_interface.evaluator.egress.settings import EgressSettings

_SECRETS = ("secret", "token", "hunter2", "s3cr3t", "/path", "?", "frag", "user:pass")


async def _no_dns(host: str, port: int) -> list[str]:
    raise OSError("no resolver in this test")


async def _ask(port: int, request: bytes) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(request)
        await writer.drain()
        async with asyncio.timeout(30):
            return await reader.read()
    finally:
        writer.close()


def test_a_refused_request_is_logged_by_host_and_port_never_path_query_or_credentials(tmp_path: Path) -> None:
    log_path = tmp_path / "egress.jsonl"
    requests = [
        b"GET http://evil.example/secret/path?token=hunter2 HTTP/1.1\r\nHost: evil.example\r\n\r\n",
        b"GET http://user:pass@allowed.test/secret?token=s3cr3t HTTP/1.1\r\n\r\n",
        b"GET /secret/path?token=hunter2 HTTP/1.1\r\n\r\n",
        b"GET https://allowed.test/secret/path?token=hunter2#frag HTTP/1.1\r\n\r\n",
        b"PUT http://allowed.test:8080/secret?token=hunter2 HTTP/1.1\r\n\r\n",
        b"GET http://allowed.test/secret?token=hunter2 HTTP/1.1\r\nHost: other\r\nHost: two\r\n\r\n",
        b"CONNECT evil.example:443/secret?token=hunter2 HTTP/1.1\r\n\r\n",
        b"GET token=hunter2 HTTP/1.1\r\n\r\n",
        b"\x00\x01secret?token=hunter2 \r\n\r\n",
    ]

    async def scenario() -> EgressProxy:
        proxy = EgressProxy(EgressSettings(allow_domains=("allowed.test",)), resolver=_no_dns,
                            log=EgressLog(jsonl_path=log_path))
        await proxy.start(tcp_port=0)
        try:
            for request in requests:
                answer = await _ask(proxy.tcp_port or 0, request)
                assert answer.startswith(b"HTTP/1.1 4") or answer.startswith(b"HTTP/1.1 5"), answer[:80]
        finally:
            await proxy.close()
        return proxy

    proxy = asyncio.run(scenario())
    text = log_path.read_text()
    lines = [json.loads(line) for line in text.splitlines()]
    assert len(lines) == len(requests) and not any(line["allowed"] for line in lines)
    for secret in _SECRETS:
        assert secret not in text, secret
        assert all(secret not in repr(record) for record in proxy.log.records())
    targets = {line.get("target") or line.get("host") for line in lines}
    assert "evil.example" in targets and "evil.example:443" in targets


def test_a_decision_keeps_only_the_authority_of_its_target() -> None:
    decision = EgressDecision(time=0.0, allowed=False, rule="malformed_request", endpoint="tcp",
                              target="http://u:p@h.example:81/a/b?token=1#f")
    assert decision.target == "h.example:81" and "token" not in json.dumps(decision.to_json())
    assert target_authority("/only/a/path?token=1") is None
    assert target_authority("[2001:db8::1]:443") == "[2001:db8::1]:443"


def test_a_slowloris_on_one_proxy_leaves_another_proxy_on_the_same_loop_serving() -> None:
    """200 connections dribble one byte of a head every 100 ms into proxy A (limit 32,
    head timeout 1 s): A refuses past its limit and times each head out; proxy B (another
    environment, same event loop) answers every request meanwhile, and A serves again after."""

    async def scenario() -> tuple[int, list[float], int, bytes]:
        settings_a = EgressSettings(allow_domains=("a.test",), max_connections=32, head_timeout=1.0)
        proxy_a = EgressProxy(settings_a, resolver=_no_dns)
        proxy_b = EgressProxy(EgressSettings(allow_domains=("b.test",)), resolver=_no_dns)
        await proxy_a.start(tcp_port=0)
        await proxy_b.start(tcp_port=0)
        stop = asyncio.Event()

        async def dribble() -> None:
            try:
                _, writer = await asyncio.open_connection("127.0.0.1", proxy_a.tcp_port or 0)
            except OSError:
                return
            try:
                for byte in b"GET http://a.test/ HTTP/1.1\r\nX-Slow: " + b"a" * 10_000:
                    if stop.is_set():
                        break
                    writer.write(bytes([byte]))
                    await writer.drain()
                    await asyncio.sleep(0.1)
            except OSError:
                pass
            finally:
                writer.close()

        attackers = [asyncio.create_task(dribble()) for _ in range(200)]
        await asyncio.sleep(0.5)
        latencies = []
        try:
            for _ in range(20):
                started = time.monotonic()
                answer = await _ask(proxy_b.tcp_port or 0, b"CONNECT elsewhere.test:443 HTTP/1.1\r\n\r\n")
                latencies.append(time.monotonic() - started)
                assert b"domain_not_allowed" in answer, answer[:120]
                await asyncio.sleep(0.1)
            peak = proxy_a.peak_connections
        finally:
            stop.set()
            await asyncio.gather(*attackers, return_exceptions=True)
        after = await _ask(proxy_a.tcp_port or 0, b"CONNECT elsewhere.test:443 HTTP/1.1\r\n\r\n")
        refused = sum(proxy_a.log.refused.values())
        await proxy_a.close()
        await proxy_b.close()
        return peak, latencies, refused, after

    peak, latencies, refused, after = asyncio.run(scenario())
    assert peak <= 32
    assert len(latencies) == 20 and max(latencies) < 10  # a bound for a loaded machine, not a timing claim
    assert refused >= 200  # every dribbling connection refused: over the limit or out of head time
    assert b"domain_not_allowed" in after
