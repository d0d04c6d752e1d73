"""A strict-egress proxy's fixed routes: the evaluator's own name goes to the evaluator's own
address (its model gateway on the host's loopback), unresolved and unchecked; every other
name is resolved and checked as before, and the decision names host and port only."""

from __future__ import annotations

import asyncio
import json

import pytest

from agent_interface.core.errors import ContractError
from agent_interface.evaluator.egress.proxy import EgressProxy
from agent_interface.evaluator.egress.settings import EgressSettings

GATEWAY = "model-gateway.internal"


async def _backend() -> tuple[asyncio.AbstractServer, int, list[bytes]]:
    heads: list[bytes] = []

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        heads.append(await reader.readuntil(b"\r\n\r\n"))
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\nConnection: close\r\n\r\npong")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1], heads


async def _ask(port: int, request: bytes) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(request)
    await writer.drain()
    data = await reader.read()
    writer.close()
    return data


async def _loopback(host: str, port: int) -> list[str]:
    return ["127.0.0.1"]


def test_the_fixed_route_reaches_the_evaluators_loopback_address_and_nothing_else_does() -> None:
    async def scenario() -> None:
        server, port, heads = await _backend()
        settings = EgressSettings(allow_domains=(GATEWAY, "other.example.com"), include_subdomains=False,
                                  fixed_routes={GATEWAY: ("127.0.0.1", port)})
        proxy = EgressProxy(settings, resolver=_loopback)
        await proxy.start(tcp_port=0)
        assert proxy.tcp_port is not None
        try:
            answer = await _ask(proxy.tcp_port, f"POST http://{GATEWAY}/r/secret-path/v1 HTTP/1.1\r\n"
                                                f"Host: {GATEWAY}\r\nContent-Length: 0\r\n\r\n".encode())
            assert answer.endswith(b"pong")
            assert heads[0].startswith(b"POST /r/secret-path/v1 HTTP/1.1\r\n")
            # An allowed name without a route is resolved and checked: loopback is refused.
            refused = await _ask(proxy.tcp_port, b"GET http://other.example.com/ HTTP/1.1\r\n"
                                                 b"Host: other.example.com\r\n\r\n")
            assert b"address_refused" in refused
            # A subdomain of the routed name is not allowed, nor is the gateway's own address.
            for target in (f"a.{GATEWAY}", f"127.0.0.1:{port}"):
                refused = await _ask(proxy.tcp_port, f"GET http://{target}/ HTTP/1.1\r\nHost: {target}\r\n\r\n"
                                     .encode())
                assert b"403" in refused.split(b"\r\n")[0]
        finally:
            await proxy.close()
            server.close()
        decisions = [json.loads(json.dumps(d.to_json())) for d in proxy.log.records()]
        allowed = [d for d in decisions if d["allowed"]]
        assert len(allowed) == 1
        assert allowed[0]["host"] == GATEWAY and allowed[0]["port"] == 80
        assert allowed[0]["address_class"] == "fixed_route" and "address" not in allowed[0]
        assert "secret-path" not in json.dumps(allowed)
        assert proxy.summary().policy["fixedRoutes"] == [GATEWAY]
        assert str(port) not in json.dumps(proxy.summary().policy)

    asyncio.run(scenario())


def test_a_fixed_route_name_outside_the_allow_list_is_refused() -> None:
    async def scenario() -> None:
        server, port, heads = await _backend()
        settings = EgressSettings(allow_domains=("example.com",), fixed_routes={GATEWAY: ("127.0.0.1", port)})
        proxy = EgressProxy(settings, resolver=_loopback)
        await proxy.start(tcp_port=0)
        assert proxy.tcp_port is not None
        try:
            refused = await _ask(proxy.tcp_port, f"GET http://{GATEWAY}/ HTTP/1.1\r\nHost: {GATEWAY}\r\n\r\n".encode())
        finally:
            await proxy.close()
            server.close()
        assert b"domain_not_allowed" in refused and not heads

    asyncio.run(scenario())


@pytest.mark.parametrize("routes", [
    {"127.0.0.1": ("127.0.0.1", 80)},          # a name must be a DNS name
    {GATEWAY: ("model-gateway", 80)},          # the target must be an address
    {GATEWAY: ("127.0.0.1", 0)},               # and a port 1-65535
    {GATEWAY: ("127.0.0.1", True)},
])
def test_a_fixed_route_must_name_a_dns_name_an_address_and_a_port(routes: dict[str, tuple[str, int]]) -> None:
    with pytest.raises(ContractError) as refused:
        EgressSettings(allow_domains=(GATEWAY,), fixed_routes=routes)
    assert refused.value.issues[0].code == "egress_fixed_route"
