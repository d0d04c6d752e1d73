"""Network namespaces for the strict-egress tests: a proxy side, a test host, sandboxes.

Every address used here lives inside namespaces these helpers create (or is loopback);
nothing is routed off the machine. The proxy's namespace ``P`` and the test host's
namespace ``H`` are joined by a veth pair (192.0.2.0/24, 10.77.0.0/24, 2001:db8::/64);
a sandbox namespace has loopback only. Code runs inside a namespace on a thread that
called ``setns`` (only that thread moves), so the proxy and the servers live in this
process and the tests can inspect them.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import ctypes
import itertools
import os
import shutil
import socket
import subprocess
import threading
from collections.abc import Callable, Coroutine, Iterator
from typing import Any, TypeVar

T = TypeVar("T")

CLONE_NEWNET = 0x40000000
HOST_V4 = "192.0.2.2"
HOST_PRIVATE_V4 = "10.77.0.2"
HOST_V6 = "2001:db8::2"
PUBLIC_FOR_TESTS = ("192.0.2.0/24", "2001:db8::/64")

_libc = ctypes.CDLL(None, use_errno=True)
_counter = itertools.count()


def netns_unavailable() -> str | None:
    """Why these tests cannot run here, or ``None``."""
    if os.geteuid() != 0:
        return "network namespace tests need root"
    if shutil.which("ip") is None:
        return "iproute2 (ip) is not installed"
    name = f"aieg-probe-{os.getpid()}"
    made = subprocess.run(["ip", "netns", "add", name], capture_output=True)
    if made.returncode != 0:
        return "ip netns add failed: " + made.stderr.decode(errors="replace").strip()
    try:
        veth = subprocess.run(
            ["ip", "-n", name, "link", "add", "aiegprobe0", "type", "veth", "peer", "name", "aiegprobe1"],
            capture_output=True,
        )
    finally:
        subprocess.run(["ip", "netns", "del", name], capture_output=True)
    if veth.returncode != 0:
        return "veth pairs are unavailable: " + veth.stderr.decode(errors="replace").strip()
    return None


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True)


def new_netns(role: str) -> str:
    """A fresh namespace with loopback up, named after ``role`` and this process."""
    name = f"aieg-{role}-{os.getpid()}-{next(_counter)}"
    _ip("netns", "add", name)
    _ip("-n", name, "link", "set", "lo", "up")
    return name


def delete_netns(name: str) -> None:
    """Remove ``name`` (its veth ends go with it)."""
    subprocess.run(["ip", "netns", "del", name], capture_output=True)


def link_proxy_and_host(proxy_ns: str, host_ns: str) -> None:
    """The veth pair between the proxy side and the test host, with the test addresses."""
    n = next(_counter)
    a, b = f"aiegp{os.getpid() % 100000}x{n}"[:15], f"aiegh{os.getpid() % 100000}x{n}"[:15]
    _ip("link", "add", a, "netns", proxy_ns, "type", "veth", "peer", "name", b, "netns", host_ns)
    for ns, dev, v4, priv, v6 in (
        (proxy_ns, a, "192.0.2.1/24", "10.77.0.1/24", "2001:db8::1/64"),
        (host_ns, b, HOST_V4 + "/24", HOST_PRIVATE_V4 + "/24", HOST_V6 + "/64"),
    ):
        _ip("-n", ns, "addr", "add", v4, "dev", dev)
        _ip("-n", ns, "addr", "add", priv, "dev", dev)
        _ip("-n", ns, "-6", "addr", "add", v6, "dev", dev, "nodad")
        _ip("-n", ns, "link", "set", dev, "up")


def enter_netns(name: str) -> None:
    """Move the calling thread into namespace ``name``."""
    fd = os.open(f"/run/netns/{name}", os.O_RDONLY)
    try:
        if _libc.setns(fd, CLONE_NEWNET) != 0:
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err))
    finally:
        os.close(fd)


def in_netns(name: str, fn: Callable[[], T], timeout: float = 30.0) -> T:
    """``fn()`` run on a fresh thread inside namespace ``name``."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        def run() -> T:
            enter_netns(name)
            return fn()

        return pool.submit(run).result(timeout)


class LoopThread:
    """An asyncio loop running on its own thread inside a namespace."""

    def __init__(self, netns: str) -> None:
        self.loop = asyncio.new_event_loop()
        ready = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            try:
                enter_netns(netns)
            except BaseException as exc:  # reported to the constructor
                failure.append(exc)
                ready.set()
                return
            asyncio.set_event_loop(self.loop)
            ready.set()
            self.loop.run_forever()

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()
        ready.wait(10)
        if failure:
            raise failure[0]

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = 30.0) -> T:
        """Run ``coro`` on the loop and return its result."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def stop(self) -> None:
        """Cancel what is left and stop the loop."""
        async def cancel_all() -> None:
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        try:
            self.run(cancel_all(), 10)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(10)
            self.loop.close()


class EchoHost:
    """The servers of the "public" test host: echo on 443 and 8443, HTTP on 80.

    ``seen`` lists ``(local address, local port)`` of every accepted connection.
    """

    def __init__(self) -> None:
        self.seen: list[tuple[str, int]] = []
        self.servers: list[asyncio.AbstractServer] = []

    async def start(self, addresses: tuple[str, ...]) -> None:
        for address in addresses:
            for port, handler in ((443, self._echo), (8443, self._echo), (80, self._http)):
                self.servers.append(await asyncio.start_server(handler, address, port))

    async def stop(self) -> None:
        for server in self.servers:
            server.close()
            await server.wait_closed()

    def _note(self, writer: asyncio.StreamWriter) -> None:
        local = writer.get_extra_info("sockname")
        self.seen.append((local[0], local[1]))

    async def _echo(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._note(writer)
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        except OSError:
            pass
        finally:
            writer.close()

    async def _http(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._note(writer)
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            host = next((line.split(":", 1)[1].strip() for line in lines if line.lower().startswith("host:")), "")
            body = f"{lines[0]}|host={host}".encode()
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: " + str(len(body)).encode()
                         + b"\r\nConnection: close\r\n\r\n" + body)
            await writer.drain()
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        finally:
            writer.close()


def exchange(port: int, request: bytes, payload: bytes = b"", *, host: str = "127.0.0.1",
             unix: str | None = None, timeout: float = 5.0) -> tuple[str, bytes]:
    """Send ``request`` to the proxy (or forwarder); return the status line and the rest.

    After a ``200`` to ``CONNECT`` the ``payload`` is sent and as many bytes read back
    (the echo); otherwise the response is read to its end.
    """
    if unix is not None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        sock.connect(unix)
    else:
        sock = socket.create_connection((host, port), timeout=timeout)
    with sock:
        sock.sendall(request)
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
        head, _, rest = data.partition(b"\r\n\r\n")
        status = head.split(b"\r\n", 1)[0].decode("latin-1")
        if request.startswith(b"CONNECT") and " 200 " in status + " ":
            sock.sendall(payload)
            while len(rest) < len(payload):
                chunk = sock.recv(65536)
                if not chunk:
                    break
                rest += chunk
            return status, rest
        while chunk := sock.recv(65536):
            rest += chunk
        return status, rest


def start_forwarder(netns: str, socket_path: str, port: int) -> tuple[subprocess.Popen[bytes], int]:
    """The standalone forwarder running inside ``netns``, and the port it listens on."""
    from agent_interface.evaluator.egress.forwarder import forwarder_command

    process = subprocess.Popen(
        ["ip", "netns", "exec", netns, *forwarder_command(socket_path, port)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
    )
    assert process.stdout is not None
    line = process.stdout.readline().decode()
    if not line.startswith("ready "):
        process.kill()
        raise RuntimeError("the forwarder did not start")
    return process, int(line.split()[1])


def stop_process(process: subprocess.Popen[bytes]) -> None:
    """Kill ``process`` (started by these helpers) and reap it."""
    process.kill()
    process.wait(10)


def connect_errno(family: int, address: tuple[Any, ...], kind: int = socket.SOCK_STREAM) -> int:
    """The errno of connecting (TCP) or sending one datagram (UDP) to ``address``; 0 if it worked."""
    sock = socket.socket(family, kind)
    sock.settimeout(2)
    try:
        if kind == socket.SOCK_DGRAM:
            sock.sendto(b"\x00" * 12, address)
        else:
            sock.connect(address)
    except OSError as exc:
        return exc.errno or -1
    finally:
        sock.close()
    return 0


@contextlib.contextmanager
def proxy_side_and_host() -> Iterator[tuple[LoopThread, EchoHost, str]]:
    """A proxy-side loop thread joined to a running test host; yields (loop, host, proxy ns)."""
    made: list[str] = []
    loops: list[LoopThread] = []
    try:
        proxy_ns, host_ns = new_netns("proxy"), new_netns("host")
        made += [proxy_ns, host_ns]
        link_proxy_and_host(proxy_ns, host_ns)
        host_loop, proxy_loop = LoopThread(host_ns), LoopThread(proxy_ns)
        loops += [host_loop, proxy_loop]
        host = EchoHost()
        host_loop.run(host.start((HOST_V4, HOST_V6)))
        yield proxy_loop, host, proxy_ns
        host_loop.run(host.stop())
    finally:
        for loop in loops:
            loop.stop()
        for name in made:
            delete_netns(name)


async def fixed_dns(host: str, port: int) -> list[str]:
    """Every name in ``*.test`` resolves to the test host's public-for-tests address."""
    if host.endswith(".test"):
        return [HOST_V4]
    raise OSError("no such name")
