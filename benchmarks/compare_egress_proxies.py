"""Which proxy enforces strict egress: the project's asyncio proxy, tinyproxy, squid.

Run as root: ``PYTHONPATH=src .venv/bin/python benchmarks/compare_egress_proxies.py``
(needs ``ip netns``, ``tinyproxy`` and ``squid``; Debian packages of the same names).
Each proxy runs as its own process in a network namespace made here, joined to a test
host namespace (192.0.2.2, 10.77.0.2, 2001:db8::2) by a veth pair; names resolve from
the namespace's own hosts file (``/etc/netns/NS/hosts``, which ``ip netns exec`` mounts
over ``/etc/hosts``; the asyncio proxy is given the same table as its resolver). Each
proxy is configured the plain way for "allow only ``allowed.test``, CONNECT to 443,
HTTP to 80". For every bypass of the strict-egress issue the table shows whether a
connection reached a destination other than the allowed one (the test host and a
loopback trap in the proxy's namespace count arrivals), then the proxy's RSS and the
median latency of a CONNECT round trip. Nothing leaves the machine.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.evaluator.egress_fixtures import (
    HOST_PRIVATE_V4,
    HOST_V4,
    HOST_V6,
    EchoHost,
    LoopThread,
    delete_netns,
    in_netns,
    link_proxy_and_host,
    netns_unavailable,
    new_netns,
)

HOSTS = {
    "allowed.test": HOST_V4,
    "api.allowed.test": HOST_V4,
    "evil-allowed.test": HOST_V4,
    "allowed.test.evil.test": HOST_V4,
    "loop.allowed.test": "127.0.0.1",
    "priv.allowed.test": HOST_PRIVATE_V4,
}

# (label, request, whether the request is allowed)
PROBES: list[tuple[str, bytes, bool]] = [
    ("CONNECT allowed.test:443", b"CONNECT allowed.test:443 HTTP/1.1\r\nHost: allowed.test:443\r\n\r\n", True),
    ("GET http://allowed.test/", b"GET http://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n", True),
    ("CONNECT IPv4 literal", f"CONNECT {HOST_V4}:443 HTTP/1.1\r\n\r\n".encode(), False),
    ("CONNECT decimal integer", b"CONNECT 3221225986:443 HTTP/1.1\r\n\r\n", False),
    ("CONNECT [IPv6] literal", f"CONNECT [{HOST_V6}]:443 HTTP/1.1\r\n\r\n".encode(), False),
    ("GET http://IPv4/", f"GET http://{HOST_V4}/ HTTP/1.1\r\n\r\n".encode(), False),
    ("CONNECT evil-allowed.test", b"CONNECT evil-allowed.test:443 HTTP/1.1\r\n\r\n", False),
    ("CONNECT allowed.test.evil.test", b"CONNECT allowed.test.evil.test:443 HTTP/1.1\r\n\r\n", False),
    ("CONNECT allowed.test:8443", b"CONNECT allowed.test:8443 HTTP/1.1\r\n\r\n", False),
    ("GET https://allowed.test/", b"GET https://allowed.test/ HTTP/1.1\r\n\r\n", False),
    ("DNS answer 127.0.0.1", b"CONNECT loop.allowed.test:443 HTTP/1.1\r\n\r\n", False),
    ("DNS answer 10.77.0.2", b"CONNECT priv.allowed.test:443 HTTP/1.1\r\n\r\n", False),
]


def _tinyproxy(root: Path, port: int) -> tuple[list[str], Path]:
    (root / "filter").write_text("^allowed\\.test$\n^.*\\.allowed\\.test$\n")
    conf = root / "tinyproxy.conf"
    conf.write_text(
        f"Port {port}\nListen 127.0.0.1\nTimeout 60\nMaxClients 256\nAllow 127.0.0.1\n"
        f"FilterDefaultDeny Yes\nFilterType ere\nFilter \"{root / 'filter'}\"\nConnectPort 443\n"
        f"LogLevel Critical\nPidFile \"{root / 'tinyproxy.pid'}\"\n"
    )
    return ["tinyproxy", "-d", "-c", str(conf)], conf


def _squid(root: Path, port: int, hardened: bool) -> tuple[list[str], Path]:
    conf = root / ("squid-hard.conf" if hardened else "squid.conf")
    extra = (
        "acl private dst 0.0.0.0/8 10.0.0.0/8 100.64.0.0/10 127.0.0.0/8 169.254.0.0/16 "
        "172.16.0.0/12 192.168.0.0/16 ::1 fc00::/7 fe80::/10\nhttp_access deny private\n"
        if hardened else ""
    )
    domain = "dstdomain -n" if hardened else "dstdomain"
    conf.write_text(
        f"http_port 127.0.0.1:{port}\nacl allowed {domain} .allowed.test\n"
        "acl SSL_ports port 443\nacl Safe_ports port 80 443\nacl CONNECT method CONNECT\n"
        "http_access deny !Safe_ports\nhttp_access deny CONNECT !SSL_ports\n" + extra +
        "http_access allow allowed\nhttp_access deny all\ncache deny all\n"
        f"pid_filename {root}/squid-{port}.pid\naccess_log none\ncache_log {root}/cache-{port}.log\n"
        f"coredump_dir {root}\ncache_effective_user proxy\nshutdown_lifetime 0 seconds\n"
        ""
    )
    return ["squid", "-N", "-n", f"egress{port}", "-f", str(conf)], conf


def _ours(root: Path, port: int) -> list[str]:
    return [sys.executable, __file__, "--serve", str(port)]


async def _serve_ours(port: int) -> None:
    from agent_interface.evaluator.egress.proxy import EgressProxy
    from agent_interface.evaluator.egress.settings import EgressSettings

    async def resolver(host: str, _port: int) -> list[str]:
        if host in HOSTS:
            return [HOSTS[host]]
        raise OSError("no such name")

    proxy = EgressProxy(
        EgressSettings(allow_domains=("allowed.test",), extra_public_networks=("192.0.2.0/24",)),
        resolver=resolver,
    )
    await proxy.start(tcp_port=port)
    print("ready", flush=True)
    await asyncio.Event().wait()


def _rss_kib(pid: int) -> int:
    total = 0
    pids = [pid]
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        pids += [int(child) for child in children]
    except OSError:
        pass
    for each in pids:
        try:
            for line in Path(f"/proc/{each}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total


def _ask(port: int, request: bytes) -> str:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(request)
        data = b""
        try:
            while b"\r\n" not in data:
                chunk = sock.recv(4096)
                if not chunk:
                    break
                data += chunk
            if data.startswith(b"HTTP/1.1 200 Connection") or data.startswith(b"HTTP/1.0 200 Connection"):
                sock.sendall(b"x")
                sock.recv(10)
        except OSError:
            pass
    return data.split(b"\r\n", 1)[0].decode("latin-1")[9:12] or "---"


def _wait_port(ns: str, port: int) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            in_netns(ns, lambda: socket.create_connection(("127.0.0.1", port), timeout=1).close())
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"nothing listens on {port}")


def _latency(ns: str, port: int, rounds: int = 200) -> tuple[float, float, float]:
    def run() -> list[float]:
        times = []
        for _ in range(rounds):
            started = time.perf_counter()
            with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
                sock.sendall(b"CONNECT allowed.test:443 HTTP/1.1\r\nHost: allowed.test:443\r\n\r\n")
                data = b""
                while b"\r\n\r\n" not in data:
                    data += sock.recv(4096)
                sock.sendall(b"x")
                sock.recv(10)
            times.append((time.perf_counter() - started) * 1000)
        return times

    times = in_netns(ns, run, timeout=120)
    return statistics.median(times), min(times), max(times)


def main() -> int:
    reason = netns_unavailable()
    if reason:
        print("skipped:", reason)
        return 0
    proxy_ns, host_ns = new_netns("cmpp"), new_netns("cmph")
    etc = Path("/etc/netns") / proxy_ns
    loops: list[LoopThread] = []
    processes: list[subprocess.Popen[bytes]] = []
    root = Path(tempfile.mkdtemp(prefix="egress-compare-"))
    root.chmod(0o777)  # squid writes its log and pid file as the proxy user
    try:
        link_proxy_and_host(proxy_ns, host_ns)
        etc.mkdir(parents=True)
        (etc / "hosts").write_text("".join(f"{a} {n}\n" for n, a in HOSTS.items()))
        (etc / "resolv.conf").write_text("nameserver 127.0.0.53\n")  # unreachable in the namespace
        host_loop, proxy_loop = LoopThread(host_ns), LoopThread(proxy_ns)
        loops += [host_loop, proxy_loop]
        host = EchoHost()
        host_loop.run(host.start((HOST_V4, HOST_PRIVATE_V4, HOST_V6)))
        trap: list[int] = []

        async def start_trap() -> None:
            async def note(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
                trap.append(1)
                writer.close()
            for port in (80, 443):
                await asyncio.start_server(note, "127.0.0.1", port)

        proxy_loop.run(start_trap())
        candidates = {
            "asyncio (this project)": _ours(root, 3130),
            "tinyproxy 1.11 (filter, ConnectPort)": _tinyproxy(root, 3131)[0],
            "squid 5.7 (dstdomain, ports)": _squid(root, 3132, False)[0],
            "squid 5.7 hardened (dst deny, -n)": _squid(root, 3133, True)[0],
        }
        ports = dict(zip(candidates, (3130, 3131, 3132, 3133), strict=True))
        for argv in candidates.values():
            processes.append(subprocess.Popen(
                ["ip", "netns", "exec", proxy_ns, *argv],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent / "src")},
            ))
        for port in ports.values():
            _wait_port(proxy_ns, port)
        time.sleep(1.0)
        results: dict[str, dict[str, str]] = {}
        for name, port in ports.items():
            results[name] = {}
            for label, request, allowed in PROBES:
                seen, trapped = len(host.seen), len(trap)
                status = in_netns(proxy_ns, lambda r=request, p=port: _ask(p, r))
                time.sleep(0.05)
                arrivals = host.seen[seen:]
                escaped = len(trap) > trapped or any(
                    not (a == HOST_V4 and p in (80, 443)) for a, p in arrivals
                )
                reached = bool(arrivals) or len(trap) > trapped
                if allowed:
                    verdict = "passes" if reached else "BROKEN"
                elif escaped:
                    verdict = "BYPASS"
                elif reached:
                    verdict = "reached allowed host"
                else:
                    verdict = "refused"
                results[name][label] = f"{verdict} ({status})"
        print("| probe | " + " | ".join(ports) + " |")
        print("| --- | " + " | ".join("---" for _ in ports) + " |")
        for label, _, _ in PROBES:
            print(f"| {label} | " + " | ".join(results[n][label] for n in ports) + " |")
        rss = [_rss_kib(process.pid) for process in processes]  # ip netns exec execs
        print("| RSS idle (KiB) | " + " | ".join(str(value) for value in rss) + " |")
        lat = [_latency(proxy_ns, port) for port in ports.values()]
        print("| CONNECT round trip, median (min-max) ms | " + " | ".join(
            f"{m:.2f} ({lo:.2f}-{hi:.2f})" for m, lo, hi in lat) + " |")
        print(json.dumps({"hosts": HOSTS}))
    finally:
        for process in processes:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(10)
        for port in (3132, 3133):
            for leftover in Path("/dev/shm").glob(f"egress{port}-*"):
                leftover.unlink()
        for loop in loops:
            loop.stop()
        delete_netns(proxy_ns)
        delete_netns(host_ns)
        shutil.rmtree(etc, ignore_errors=True)
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--serve":
        asyncio.run(_serve_ours(int(sys.argv[2])))
    else:
        sys.exit(main())
