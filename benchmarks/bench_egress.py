"""What the strict-egress proxy costs: added latency per connection and throughput.

Run as root: ``PYTHONPATH=src .venv/bin/python benchmarks/bench_egress.py``. The proxy
runs as its own process in a namespace made here (``P``), joined to a test host
namespace (``H``, an echo server on 192.0.2.2:443) by a veth pair; a sandbox namespace
(``S``, loopback only) runs the standalone forwarder. Three paths to the same echo
server are measured from client threads that entered the namespace:

* ``direct``: a TCP connection from ``P`` to 192.0.2.2:443 (the baseline);
* ``proxy socket``: ``CONNECT`` over the proxy's Unix socket from ``P``;
* ``sandbox forwarder``: ``CONNECT`` to 127.0.0.1:3128 inside ``S``, relayed by the
  forwarder to the proxy's socket (what a sandboxed program does).

Latency: connect, tunnel set-up and a 1-byte echo, ``ROUNDS`` times (median, min-max).
Throughput: ``MIB`` MiB echoed through one connection, sent and read concurrently,
``REPEATS`` times (median, min-max, counting one direction). Nothing leaves the machine.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.evaluator.egress_fixtures import (
    HOST_V4,
    EchoHost,
    LoopThread,
    delete_netns,
    in_netns,
    link_proxy_and_host,
    netns_unavailable,
    new_netns,
    start_forwarder,
    stop_process,
)

ROUNDS = 300
MIB = 64
REPEATS = 5
_CONNECT = b"CONNECT allowed.test:443 HTTP/1.1\r\nHost: allowed.test:443\r\n\r\n"


async def _serve(path: str) -> None:
    from agent_interface.evaluator.egress.proxy import EgressProxy
    from agent_interface.evaluator.egress.settings import EgressSettings

    async def resolver(host: str, _port: int) -> list[str]:
        return [HOST_V4]

    proxy = EgressProxy(
        EgressSettings(allow_domains=("allowed.test",), extra_public_networks=("192.0.2.0/24",)),
        resolver=resolver,
    )
    await proxy.start(unix_path=path)
    print("ready", flush=True)
    await asyncio.Event().wait()


Opener = Callable[[], socket.socket]


def _direct() -> socket.socket:
    return socket.create_connection((HOST_V4, 443), timeout=10)


def _tunnel(sock: socket.socket) -> socket.socket:
    sock.sendall(_CONNECT)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk:
            raise RuntimeError("the proxy closed the connection")
        data += chunk
    if not data.startswith(b"HTTP/1.1 200"):
        raise RuntimeError("the proxy refused: " + data.split(b"\r\n")[0].decode())
    return sock


def _via_unix(path: str) -> Opener:
    def open_() -> socket.socket:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(10)
        sock.connect(path)
        return _tunnel(sock)

    return open_


def _via_port(port: int) -> Opener:
    return lambda: _tunnel(socket.create_connection(("127.0.0.1", port), timeout=10))


def _latency(open_: Opener) -> list[float]:
    times = []
    for _ in range(ROUNDS):
        started = time.perf_counter()
        with open_() as sock:
            sock.sendall(b"x")
            sock.recv(1)
        times.append((time.perf_counter() - started) * 1000)
    return times


def _throughput(open_: Opener) -> list[float]:
    block = b"\x5a" * 65536
    total = MIB * 1024 * 1024
    rates = []
    for _ in range(REPEATS):
        with open_() as sock:
            def send(s: socket.socket = sock) -> None:
                for _ in range(total // len(block)):
                    s.sendall(block)

            started = time.perf_counter()
            sender = threading.Thread(target=send)
            sender.start()
            received = 0
            while received < total:
                chunk = sock.recv(1 << 20)
                if not chunk:
                    break
                received += len(chunk)
            sender.join()
            rates.append(received / (1024 * 1024) / (time.perf_counter() - started))
    return rates


def _row(name: str, values: list[float], unit: str) -> str:
    return f"{name:<22} {statistics.median(values):9.2f} {unit}  ({min(values):.2f}-{max(values):.2f})"


def main() -> int:
    reason = netns_unavailable()
    if reason:
        print("skipped:", reason)
        return 0
    proxy_ns, host_ns, sandbox_ns = new_netns("benchp"), new_netns("benchh"), new_netns("benchs")
    root = Path(tempfile.mkdtemp(prefix="egress-bench-"))
    path = str(root / "egress.sock")
    host_loop: LoopThread | None = None
    processes: list[subprocess.Popen[bytes]] = []
    try:
        link_proxy_and_host(proxy_ns, host_ns)
        host_loop = LoopThread(host_ns)
        host_loop.run(EchoHost().start((HOST_V4,)))
        proxy = subprocess.Popen(
            ["ip", "netns", "exec", proxy_ns, sys.executable, __file__, "--serve", path],
            stdout=subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent / "src")},
        )
        processes.append(proxy)
        assert proxy.stdout is not None and proxy.stdout.readline().strip() == b"ready"
        forwarder, port = start_forwarder(sandbox_ns, path, 3128)
        processes.append(forwarder)
        paths = {
            "direct": (proxy_ns, _direct),
            "proxy socket": (proxy_ns, _via_unix(path)),
            "sandbox forwarder": (sandbox_ns, _via_port(port)),
        }
        print(f"latency: connect + tunnel + 1-byte echo, {ROUNDS} rounds, ms median (min-max)")
        base = None
        for name, (ns, open_) in paths.items():
            times = in_netns(ns, lambda o=open_: _latency(o), timeout=300)
            base = statistics.median(times) if base is None else base
            added = statistics.median(times) - base
            print(_row(name, times, "ms") + ("" if name == "direct" else f"  added {added:.2f} ms"))
        print(f"throughput: {MIB} MiB echoed through one connection, {REPEATS} runs, MiB/s median (min-max)")
        for name, (ns, open_) in paths.items():
            print(_row(name, in_netns(ns, lambda o=open_: _throughput(o), timeout=600), "MiB/s"))
    finally:
        for process in processes:
            stop_process(process)
        if host_loop is not None:
            host_loop.stop()
        for name in (proxy_ns, host_ns, sandbox_ns):
            delete_netns(name)
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--serve":
        asyncio.run(_serve(sys.argv[2]))
    else:
        sys.exit(main())
