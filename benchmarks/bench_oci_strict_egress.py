"""What strict egress costs a program in an OCI container: latency per CONNECT.

Run as root: ``PYTHONPATH=src .venv/bin/python benchmarks/bench_oci_strict_egress.py``
(needs runc, gcc and busybox-static, as the container tests do). A proxy-side namespace
(``P``) is joined to a test host's namespace (``H``, an echo server on 192.0.2.2:443) by a
veth pair. One static C client (compiled here) measures, ``ROUNDS`` times per run:
connect, ``CONNECT allowed.test:443`` (when through a proxy), a 1-byte echo, close. Three
paths to the same echo server:

* ``direct``: the client in ``P`` connects to 192.0.2.2:443 (the baseline);
* ``proxy alone``: the client in ``P`` (``ip netns exec``) through an ``EgressProxy`` on
  ``127.0.0.1`` in ``P``, on a loop thread of this process;
* ``container``: the client in a strict environment's container of
  ``OciExactProcessProvider`` (runc, user namespace, seccomp), through its proxy at
  ``127.0.0.1:800`` inside the environment's namespace (the provider's proxy thread has
  joined ``P`` for its upstream connections).

Each run prints the median and the min-max of its rounds (microseconds, timed by the
client itself); ``RUNS`` runs per path, interleaved. Nothing leaves the machine.
"""

from __future__ import annotations

import errno
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.evaluator.egress_fixtures import (
    HOST_V4,
    PUBLIC_FOR_TESTS,
    EchoHost,
    LoopThread,
    delete_netns,
    link_proxy_and_host,
    netns_unavailable,
    new_netns,
)
from tests.evaluator.oci_runtime_fixtures import (
    ID_BASE,
    DictImageSource,
    build_image,
    cleanup_root,
    create_input,
    launch,
    run,
    scratch_directory,
)

ROUNDS = 300
RUNS = 3

CLIENT_SOURCE = r"""
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static long now_us(void) {
    struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000L + t.tv_nsec / 1000;
}

int main(int argc, char **argv) {  /* client connect|direct IP PORT N [HOST] */
    int proxy = !strcmp(argv[1], "connect");
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(atoi(argv[3]))};
    inet_pton(AF_INET, argv[2], &a.sin_addr);
    int n = atoi(argv[4]);
    char req[256];
    int rl = proxy ? snprintf(req, sizeof req, "CONNECT %s:443 HTTP/1.1\r\nHost: %s:443\r\n\r\n", argv[5], argv[5]) : 0;
    for (int i = 0; i < n; i++) {
        long t0 = now_us();
        int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        if (connect(fd, (struct sockaddr *)&a, sizeof a)) { printf("error connect %d\n", errno); return 1; }
        if (proxy) {
            char buf[512]; int got = 0;
            if (write(fd, req, rl) != rl) { puts("error write"); return 1; }
            while (got < 4 || memcmp(buf + got - 4, "\r\n\r\n", 4)) {
                if (read(fd, buf + got, 1) != 1 || ++got >= 511) { puts("error head"); return 1; }
            }
            if (strncmp(buf, "HTTP/1.1 200", 12)) { puts("error status"); return 1; }
        }
        char c;
        if (write(fd, "x", 1) != 1 || read(fd, &c, 1) != 1) { puts("error echo"); return 1; }
        close(fd);
        printf("%ld\n", now_us() - t0);
    }
    return 0;
}
"""


async def _dns(host: str, port: int) -> list[str]:
    if host.endswith(".test"):
        return [HOST_V4]
    raise OSError(errno.ENOENT, "no such name")


def _figures(output: str) -> list[float]:
    lines = output.split()
    if not lines or any(not line.isdigit() for line in lines):
        raise RuntimeError(f"the client failed: {output[:200]!r}")
    return [int(line) / 1000 for line in lines]


def _row(name: str, values: list[float]) -> str:
    return f"{name:<12} median {statistics.median(values):6.2f} ms  range {min(values):6.2f}-{max(values):6.2f} ms"


def main() -> int:
    reason = netns_unavailable()
    if reason is not None or shutil.which("runc") is None or shutil.which("gcc") is None:
        print("skipped:", reason or "needs runc and gcc")
        return 0
    from agent_interface.evaluator.container.oci_provider import OciExactProcessProvider
    from agent_interface.evaluator.egress.proxy import EgressProxy
    from agent_interface.evaluator.egress.settings import EgressSettings

    scratch = scratch_directory()
    made: list[str] = []
    loops: list[LoopThread] = []
    provider = None
    try:
        image = build_image(scratch / "image")
        client = image.rootfs / "bin" / "client"
        with tempfile.TemporaryDirectory() as build:
            source = Path(build) / "client.c"
            source.write_text(CLIENT_SOURCE)
            subprocess.run(["gcc", "-static", "-O2", "-o", str(client), str(source)], check=True)
        os.lchown(client, ID_BASE, ID_BASE)
        proxy_ns, host_ns = new_netns("bproxy"), new_netns("bhost")
        made += [proxy_ns, host_ns]
        link_proxy_and_host(proxy_ns, host_ns)
        host_loop, proxy_loop = LoopThread(host_ns), LoopThread(proxy_ns)
        loops += [host_loop, proxy_loop]
        host = EchoHost()
        host_loop.run(host.start((HOST_V4,)))
        settings = {"extra_public_networks": PUBLIC_FOR_TESTS}
        alone = EgressProxy(EgressSettings(allow_domains=("allowed.test",), **settings), resolver=_dns)  # type: ignore[arg-type]
        proxy_loop.run(alone.start(tcp_port=0))
        provider = run(OciExactProcessProvider.open(
            scratch / "root", images=DictImageSource(image), egress_settings=settings,
            egress_resolver=_dns, egress_network_namespace=f"/run/netns/{proxy_ns}",
        ))
        assert provider.exact_process is not None, provider.reasons
        assert provider.strict_egress_reasons == (), provider.strict_egress_reasons
        environment = run(provider.exact_process.create(create_input(
            image, "bench", egress={"mode": "strict", "allowDomains": ["allowed.test"]},
            resources={"cpu": 1, "memoryMb": 64, "diskMb": 8},
        )))

        def on_host(*args: str) -> list[float]:
            done = subprocess.run(["ip", "netns", "exec", proxy_ns, str(client), *args],
                                  capture_output=True, check=False, timeout=120)
            return _figures(done.stdout.decode())

        def in_container() -> list[float]:
            async def body() -> str:
                process = await environment.process.spawn(launch(
                    "/bin/client", "connect", "127.0.0.1", "800", str(ROUNDS), "allowed.test",
                    timeout_ms=120_000,
                ))
                await process.wait()
                return (await process.output_bytes("stdout")).decode()

            return _figures(run(body()))

        print(f"{ROUNDS} rounds per run: connect, CONNECT (through a proxy), 1-byte echo, close")
        results: dict[str, list[float]] = {"direct": [], "proxy alone": [], "container": []}
        for number in range(RUNS):
            for name, measure in (
                ("direct", lambda: on_host("direct", HOST_V4, "443", str(ROUNDS))),
                ("proxy alone", lambda: on_host("connect", "127.0.0.1", str(alone.tcp_port), str(ROUNDS), "allowed.test")),
                ("container", in_container),
            ):
                values = measure()
                results[name].append(statistics.median(values))
                print(f"run {number + 1}: " + _row(name, values))
        direct, alone_ms, contained = (results[name] for name in ("direct", "proxy alone", "container"))
        print()
        print("medians over runs:", ", ".join(
            f"{name} {min(values):.2f}-{max(values):.2f} ms" for name, values in results.items()
        ))
        print(f"added by the proxy (alone - direct): {min(alone_ms) - max(direct):+.2f} to "
              f"{max(alone_ms) - min(direct):+.2f} ms")
        print(f"added by the container path (container - proxy alone): "
              f"{min(contained) - max(alone_ms):+.2f} to {max(contained) - min(alone_ms):+.2f} ms")
        summary = run(environment.egress_summary()).to_json()
        print("environment log:", {key: summary[key] for key in ("allowed", "refused", "bytesUp", "bytesDown")})
        run(environment.destroy())
        proxy_loop.run(alone.close())
        host_loop.run(host.stop())
    finally:
        if provider is not None:
            provider.close()
        for loop in loops:
            loop.stop()
        for name in made:
            delete_netns(name)
        cleanup_root(scratch)
    return 0


if __name__ == "__main__":
    sys.exit(main())
