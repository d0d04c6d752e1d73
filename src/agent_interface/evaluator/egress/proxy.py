"""The strict-egress proxy: one allowed request per connection, pinned to a checked address.

:class:`EgressProxy` listens on a Unix socket (the endpoint bound into a sandbox) and/or
a loopback TCP port. For each connection it reads one request head
(:mod:`~agent_interface.evaluator.egress.request_head`), matches its host against the
allow list, resolves the name itself through its resolver (the sandbox has none),
refuses the answer when any address is non-public
(:func:`~agent_interface.evaluator.egress.rules.check_addresses`), then connects to an
address of that same answer, by number: nothing is resolved twice, so a DNS answer that
changes between the check and the connection (rebinding) reaches nothing. A name with a
fixed route of the settings (the evaluator's model gateway) is not resolved: it goes to
the route's address and port, and its decision records the host and port the client
named with ``address_class`` ``fixed_route`` (never the gateway's address nor any path). It then relays
bytes both ways, counting them, until both sides close, the connection is idle for
``idle_timeout`` or ``total_timeout`` ends it.

Bounds: at most ``max_connections`` connections at once (more are refused at once with
``connection_limit``, never queued), a request head of at most ``max_head_bytes``, reads
of at most 64 KiB with back-pressure, and every wait under a timeout. Every decision goes
to the :class:`~agent_interface.evaluator.egress.decisions.EgressLog`.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import os
import socket
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, Final

from agent_interface.core.errors import ContractError
from agent_interface.evaluator.egress.decisions import EgressDecision, EgressLog, EgressSummary
from agent_interface.evaluator.egress.request_head import ProxyRequest, parse_request_head
from agent_interface.evaluator.egress.rules import (
    EgressRefused,
    EgressRule,
    check_addresses,
)
from agent_interface.evaluator.egress.settings import EgressSettings
from agent_interface.evaluator.verify.address_policy import IpAddress

__all__ = ["EgressProxy", "EgressResolver", "system_egress_resolver"]

EgressResolver = Callable[[str, int], Awaitable[Sequence[str]]]
"""Resolves a DNS name and port to address strings; the proxy's only name lookup."""

_CHUNK: Final = 65_536
_MAX_ADDRESSES: Final = 32
_STATUS: Final[dict[str, bytes]] = {
    "malformed_request": b"400 Bad Request",
    "not_a_proxy_request": b"400 Bad Request",
    "header_too_large": b"431 Request Header Fields Too Large",
    "method_not_allowed": b"405 Method Not Allowed",
    "resolution_failed": b"502 Bad Gateway",
    "connect_failed": b"502 Bad Gateway",
    "connection_limit": b"503 Service Unavailable",
    "head_timeout": b"408 Request Timeout",
    "total_timeout": b"408 Request Timeout",
    "client_error": b"400 Bad Request",
    "proxy_closed": b"503 Service Unavailable",
}


async def system_egress_resolver(host: str, port: int) -> list[str]:
    """Every TCP address the system resolver returns for ``host`` (the default resolver)."""
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    return [str(info[4][0]) for info in infos]


def _refusal_response(rule: EgressRule) -> bytes:
    status = _STATUS.get(rule, b"403 Forbidden")
    body = rule.encode("ascii") + b"\n"
    return (
        b"HTTP/1.1 " + status + b"\r\nContent-Type: text/plain\r\nX-Egress-Refused: "
        + rule.encode("ascii") + b"\r\nConnection: close\r\nContent-Length: "
        + str(len(body)).encode("ascii") + b"\r\n\r\n" + body
    )


class _Connection:
    """What one client connection has done so far (for its decision record)."""

    __slots__ = ("address", "address_class", "bytes_down", "bytes_up", "end", "host",
                 "last_activity", "method", "port", "started", "target")

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.last_activity = self.started
        self.method: str | None = None
        self.host: str | None = None
        self.port: int | None = None
        self.target: str | None = None
        self.address: str | None = None
        self.address_class: str | None = None
        self.bytes_up = 0
        self.bytes_down = 0
        self.end: str | None = None


class EgressProxy:
    """A strict-egress proxy enforcing one :class:`EgressSettings`; use ``async with``.

    ``resolver`` replaces the system resolver (tests control DNS with it); ``log`` keeps
    the decisions (a fresh :class:`EgressLog` by default). :meth:`start` binds the
    endpoints; :meth:`close` stops listening and ends every open connection.
    """

    def __init__(
        self,
        settings: EgressSettings,
        *,
        resolver: EgressResolver | None = None,
        log: EgressLog | None = None,
    ) -> None:
        self.settings = settings
        self.log = log if log is not None else EgressLog()
        self._resolve = resolver if resolver is not None else system_egress_resolver
        self._servers: list[asyncio.AbstractServer] = []
        self._tasks: set[asyncio.Task[Any]] = set()
        self._active = 0
        self.peak_connections = 0
        """The most client connections that were open at once."""
        self.unix_path: Path | None = None
        self.tcp_port: int | None = None

    @property
    def active_connections(self) -> int:
        """How many client connections are open now."""
        return self._active

    async def start(self, *, unix_path: str | os.PathLike[str] | None = None,
                    tcp_port: int | None = None, sock: socket.socket | None = None) -> None:
        """Listen on ``unix_path`` (created mode 0600) and/or ``127.0.0.1:tcp_port`` (0: any)
        and/or accept on ``sock``, a listening TCP socket made elsewhere (in a sandbox's
        network namespace: see :mod:`agent_interface.evaluator.container.network_namespace`)."""
        if unix_path is None and tcp_port is None and sock is None:
            raise ContractError.single(
                "/endpoint", "egress_endpoint_missing", "the proxy needs a Unix socket or a TCP port"
            )
        limit = self.settings.max_head_bytes
        if unix_path is not None:
            path = Path(unix_path)
            server = await asyncio.start_unix_server(
                self._accept("unix"), path=str(path), limit=limit, backlog=1024
            )
            os.chmod(path, 0o600)
            self._servers.append(server)
            self.unix_path = path
        if tcp_port is not None:
            server = await asyncio.start_server(
                self._accept("tcp"), host="127.0.0.1", port=tcp_port, limit=limit, backlog=1024
            )
            self._servers.append(server)
            self.tcp_port = server.sockets[0].getsockname()[1]
        if sock is not None:
            server = await asyncio.start_server(self._accept("tcp"), sock=sock, limit=limit)
            self._servers.append(server)

    async def close(self) -> None:
        """Stop listening, end every open connection and remove the Unix socket."""
        for server in self._servers:
            server.close()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        for server in self._servers:
            await server.wait_closed()
        self._servers.clear()
        if self.unix_path is not None:
            with contextlib.suppress(FileNotFoundError):
                self.unix_path.unlink()

    async def __aenter__(self) -> EgressProxy:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def summary(self) -> EgressSummary:
        """The enforced policy and the decision counts, for a run's evidence."""
        return self.log.summary(self.settings.policy_json())

    def _accept(
        self, endpoint: str
    ) -> Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]:
        async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            task = asyncio.current_task()
            if self._active >= self.settings.max_connections:
                self._record(endpoint, _Connection(), "connection_limit")
                await _refuse(writer, "connection_limit")
                return
            self._active += 1
            self.peak_connections = max(self.peak_connections, self._active)
            if task is not None:
                self._tasks.add(task)
            try:
                await self._serve(endpoint, reader, writer)
            except asyncio.CancelledError:
                # close() ended this connection (recorded as proxy_closed); the stream
                # callback of asyncio 3.11 reads task.exception() and would log a
                # cancelled task as an error.
                pass
            finally:
                self._active -= 1
                if task is not None:
                    self._tasks.discard(task)

        return accept

    def _record(self, endpoint: str, conn: _Connection, rule: EgressRule) -> None:
        self.log.record(
            EgressDecision(
                time=time.time(),
                allowed=rule == "allowed",
                rule=rule,
                endpoint=endpoint,
                method=conn.method,
                host=conn.host,
                port=conn.port,
                target=conn.target if conn.host is None else None,
                address=conn.address,
                address_class=conn.address_class,
                bytes_up=conn.bytes_up,
                bytes_down=conn.bytes_down,
                end=conn.end,
                duration_ms=int((time.monotonic() - conn.started) * 1000),
            )
        )

    async def _serve(
        self, endpoint: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        conn = _Connection()
        rule: EgressRule | None = None  # "allowed" once connected to the checked address
        upstream: asyncio.StreamWriter | None = None
        try:
            async with asyncio.timeout(self.settings.total_timeout):
                request = await self._read_request(reader, conn)
                route = self.settings.fixed_route(request.host)
                if route is None:
                    addresses = await self._checked_addresses(request, conn)
                    up_reader, upstream = await self._connect(addresses, request.port, conn)
                else:
                    up_reader, upstream = await self._connect([ipaddress.ip_address(route[0])], route[1], conn)
                    conn.address, conn.address_class = None, "fixed_route"
                rule = "allowed"
                if request.tunnel:
                    writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
                else:
                    upstream.write(request.upstream_head)
                    conn.bytes_up += len(request.upstream_head)
                await self._relay(reader, writer, up_reader, upstream, conn)
        except EgressRefused as refused:
            rule = refused.rule
            conn.address_class = refused.detail
            await _refuse(writer, rule)
        except TimeoutError:
            if rule is None:
                rule = "total_timeout"
                await _refuse(writer, rule)
            else:
                conn.end = "total_timeout"
        except asyncio.CancelledError:
            conn.end = "proxy_closed" if rule is not None else None
            rule = rule or "proxy_closed"
            raise
        except Exception:  # a client that vanished, a resolver that raised: never a crash
            if rule is None:
                rule = "client_error"
                await _refuse(writer, rule)
            else:
                conn.end = "error"
        finally:
            for stream in (upstream, writer):
                if stream is not None:
                    stream.close()
            self._record(endpoint, conn, rule or "client_error")

    async def _read_request(self, reader: asyncio.StreamReader, conn: _Connection) -> ProxyRequest:
        settings = self.settings
        try:
            async with asyncio.timeout(settings.head_timeout):
                head = await reader.readuntil(b"\r\n\r\n")
        except TimeoutError:
            raise EgressRefused("head_timeout") from None
        except asyncio.LimitOverrunError:
            raise EgressRefused("header_too_large") from None
        except asyncio.IncompleteReadError:
            raise EgressRefused("malformed_request") from None
        if len(head) > settings.max_head_bytes:
            raise EgressRefused("header_too_large")
        line = head.split(b"\r\n", 1)[0].decode("latin-1")
        parts = line.split(" ")
        conn.method = parts[0][:16] if parts[0].isascii() else None
        if len(parts) > 1:
            conn.target = parts[1][:255]
        request = parse_request_head(
            head,
            connect_ports=settings.connect_ports,
            http_ports=settings.http_ports,
            http_methods=settings.http_methods,
            max_headers=settings.max_headers,
        )
        conn.method, conn.port = request.method, request.port
        if not settings.allow_list.allows(request.host):
            conn.target = request.host
            raise EgressRefused("domain_not_allowed")
        conn.host = request.host
        return request

    async def _checked_addresses(self, request: ProxyRequest, conn: _Connection) -> list[IpAddress]:
        try:
            async with asyncio.timeout(self.settings.resolve_timeout):
                answer = await self._resolve(request.host, request.port)
        except Exception:  # the resolver's failure, whatever it is, refuses the name
            raise EgressRefused("resolution_failed") from None
        addresses: list[IpAddress] = []
        for text in list(answer)[:_MAX_ADDRESSES]:
            try:
                addresses.append(ipaddress.ip_address(text))
            except (TypeError, ValueError):
                raise EgressRefused("resolution_failed") from None
        try:
            check_addresses(
                addresses, self.settings.extra_public_networks, self.settings.refused_networks
            )
        except EgressRefused as refused:
            conn.address = refused.address
            raise
        return addresses

    async def _connect(
        self, addresses: list[IpAddress], port: int, conn: _Connection
    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        loop = asyncio.get_running_loop()
        for address in addresses:
            family = socket.AF_INET6 if address.version == 6 else socket.AF_INET
            sock = socket.socket(family, socket.SOCK_STREAM)
            sock.setblocking(False)
            try:
                async with asyncio.timeout(self.settings.connect_timeout):
                    await loop.sock_connect(sock, (str(address), port))
            except (OSError, TimeoutError):
                sock.close()
                continue
            conn.address = str(address)
            return await asyncio.open_connection(sock=sock, limit=_CHUNK)
        raise EgressRefused("connect_failed")

    async def _relay(
        self,
        client_reader: asyncio.StreamReader,
        client_writer: asyncio.StreamWriter,
        up_reader: asyncio.StreamReader,
        up_writer: asyncio.StreamWriter,
        conn: _Connection,
    ) -> None:
        async def pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter, up: bool) -> None:
            idle = self.settings.idle_timeout
            while True:
                try:
                    async with asyncio.timeout(idle):
                        chunk = await source.read(_CHUNK)
                except TimeoutError:
                    if time.monotonic() - conn.last_activity < idle:
                        continue
                    break
                if not chunk:
                    if sink.can_write_eof():
                        with contextlib.suppress(OSError):
                            sink.write_eof()
                    return
                conn.last_activity = time.monotonic()
                if up:
                    conn.bytes_up += len(chunk)
                else:
                    conn.bytes_down += len(chunk)
                sink.write(chunk)
                await sink.drain()
            # idle: end both directions
            raise _Idle

        tasks = [
            asyncio.ensure_future(pipe(client_reader, up_writer, True)),
            asyncio.ensure_future(pipe(up_reader, client_writer, False)),
        ]
        try:
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
            failures = [task.exception() for task in done if not task.cancelled()]
            if any(isinstance(failure, _Idle) for failure in failures):
                conn.end = "idle_timeout"
            else:
                conn.end = "error" if any(failures) else "closed"
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)


class _Idle(Exception):
    """A relay direction saw no byte either way for the idle timeout."""


async def _refuse(writer: asyncio.StreamWriter, rule: EgressRule) -> None:
    """Answer with the refusal and close; the transport flushes the short answer itself,
    so a client that never reads holds no task."""
    with contextlib.suppress(OSError, RuntimeError):
        writer.write(_refusal_response(rule))
    writer.close()
