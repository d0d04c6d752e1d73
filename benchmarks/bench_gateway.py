"""Latency the model gateway adds, and its memory under a soak and under idle connections.

Run: ``.venv/bin/python benchmarks/bench_gateway.py [--calls N] [--soak N] [--idle N]``.

A server process serves the scripted upstream twice: directly (a bare aiohttp server
answering from the same :class:`ScriptedUpstream`, no metering) and through a
:class:`ModelGateway` (a run, its token, reservation, rewrite, usage scan, settlement).
This process drives both with an aiohttp client, OpenAI Chat Completions, a 64-word reply
(64 content chunks when streamed), at 1 and 50 concurrent calls, and prints p50/p99 of
the whole call and of the time between streamed tokens (per call: from the first
streamed chunk to the last, divided by the gaps between them), and the gateway's overhead (the
difference of the percentiles), and the server process's CPU time per call (user +
system, from ``/proc``: less sensitive to the machine's load than the latencies). Then the server's RSS over a soak of N calls (runs of
100 calls each, settled as a cell settles them), and with N idle connections opened at
once against the default cap of 1024 connections. Figures on a shared machine are
noisy: read them with the load (``uptime``) printed first.

Driven as fast as the client can, 50 concurrent calls saturate the server's one event
loop, so their latency is mostly queueing: 50 times the CPU time of a call. The paced
rows stream the same reply at a model's pace (``PACE`` between tokens, both directly and
through the gateway), which is how agents use the gateway; there the difference is the
latency the gateway adds to a call and to each token.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

PACE = 0.02
WORDS = " ".join(f"word{i}" for i in range(64))
LIMITS = {"max_model_calls": 10**9, "max_input_tokens": 10**12, "max_output_tokens": 10**12,
          "max_total_tokens": None, "max_cost_usd": 0.0}


# -- server process -------------------------------------------------------------------


async def serve() -> None:
    from aiohttp import web

    from agent_interface.evaluator.gateway import (
        GatewayLimits,
        ModelGateway,
        ScriptedUpstream,
        UpstreamCall,
    )

    script = ScriptedUpstream([{"text": WORDS}], when_exhausted="cycle")

    class Paced(ScriptedUpstream):
        """The scripted upstream at a model's pace: PACE seconds between streamed events."""

        async def send(self, call: UpstreamCall) -> Any:
            response = await super().send(call)
            inner = response.chunks

            async def paced() -> Any:
                first = True
                async for chunk in inner:
                    if not first:
                        await asyncio.sleep(PACE)
                    first = False
                    yield chunk

            response.chunks = paced()
            return response

    async def direct(request: web.BaseRequest) -> web.StreamResponse:
        payload = json.loads(await request.read())
        call = UpstreamCall(api="chat.completions", path=request.path, query="", headers={}, body=b"",
                            payload=payload, stream=payload.get("stream") is True, run_id="direct",
                            max_output_tokens=payload.get("max_tokens") or 8192)
        status, body = script.answer(call)
        if isinstance(body, bytes):
            return web.Response(status=status, body=body, content_type="application/json")
        answer = web.StreamResponse(headers={"content-type": "text/event-stream; charset=utf-8"})
        await answer.prepare(request)
        for index, event in enumerate(body):
            if index and request.path.startswith("/paced"):
                await asyncio.sleep(PACE)
            await answer.write(event)
        await answer.write_eof()
        return answer

    server = web.Server(direct, access_log=None)
    runner = web.ServerRunner(server)
    await runner.setup()
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(1024)
    await web.SockSite(runner, sock).start()
    gateway = ModelGateway(ScriptedUpstream([{"text": WORDS}], when_exhausted="cycle"))
    await gateway.start()
    paced_gateway = ModelGateway(Paced([{"text": WORDS}], when_exhausted="cycle"))
    await paced_gateway.start()
    runs: dict[str, Any] = {}
    direct_origin = f"http://127.0.0.1:{sock.getsockname()[1]}"
    print(json.dumps({"direct": direct_origin, "gateway": gateway.origin, "direct_paced": direct_origin + "/paced",
                      "gateway_paced": paced_gateway.origin}), flush=True)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while line := await reader.readline():
        command = json.loads(line)
        if command["op"] == "open":
            run = (paced_gateway if command.get("paced") else gateway).open_run(run_id=command["id"], requested_model="demo-model",
                                   resolved={"model": "echo", "snapshot": "echo-1"}, limits=GatewayLimits(**LIMITS))
            runs[command["id"]] = run
            reply: dict[str, Any] = {"token": run.token}
        elif command["op"] == "settle":
            settlement = runs.pop(command["id"]).settle()
            reply = {"calls": settlement.model_calls, "unsettled": settlement.unsettled_calls}
        else:
            reply = {"connections": gateway.connections, "refused": gateway.refused_connections}
        print(json.dumps(reply), flush=True)
    await gateway.close()
    await paced_gateway.close()
    await runner.cleanup()


# -- driver ---------------------------------------------------------------------------


class Server:
    def __init__(self) -> None:
        self.process = subprocess.Popen([sys.executable, __file__, "--serve"], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        self.origins = json.loads(self.process.stdout.readline())

    def ask(self, **command: Any) -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(command) + "\n")
        self.process.stdin.flush()
        return dict(json.loads(self.process.stdout.readline()))

    def rss_mib(self) -> float:
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return 0.0

    def cpu_seconds(self) -> float:
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(10)


async def one_call(session: Any, url: str, token: str, stream: bool) -> tuple[float, list[float]]:
    body = {"model": "demo-model", "messages": [{"role": "user", "content": "hello"}], "stream": stream}
    if stream:
        body["stream_options"] = {"include_usage": True}
    gaps: list[float] = []
    start = time.perf_counter()
    async with session.post(url + "/v1/chat/completions", json=body,
                            headers={"authorization": "Bearer " + token}) as response:
        if stream:
            first = last = None
            tokens = 0
            async for line in response.content:
                if line.startswith(b"data: {"):
                    last = time.perf_counter()
                    first = first or last
                    tokens += 1
            if first is not None and last is not None and tokens > 1:
                gaps.append((last - first) / (tokens - 1))  # the call's mean time between streamed tokens
        else:
            await response.read()
        assert response.status == 200, response.status
    return time.perf_counter() - start, gaps


async def worker(session: Any, url: str, token: str, stream: bool, count: int, totals: list[float],
                 gaps: list[float]) -> None:
    for _ in range(count):
        total, between = await one_call(session, url, token, stream)
        totals.append(total)
        gaps.extend(between)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


async def latency(server: Server, calls: int) -> None:
    import aiohttp

    token = server.ask(op="open", id="latency")["token"]
    print(f"{'':32}{'direct p50':>11}{'p99':>9}{'gateway p50':>13}{'p99':>9}{'overhead p50':>14}{'p99':>9}  (ms)"
          f"{'server CPU/call direct':>24}{'gateway':>9} (ms)")
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
        for stream in (False, True):
            for concurrency in (1, 50):
                figures: dict[str, tuple[list[float], list[float]]] = {}
                cpu: dict[str, float] = {}
                for name in ("direct", "gateway"):
                    url = server.origins[name]
                    await asyncio.gather(*(one_call(session, url, token, stream) for _ in range(concurrency)))
                    totals: list[float] = []
                    gaps: list[float] = []
                    cpu_before = server.cpu_seconds()

                    await asyncio.gather(*(worker(session, url, token, stream, calls // concurrency, totals, gaps)
                                           for _ in range(concurrency)))
                    figures[name] = (totals, gaps)
                    cpu[name] = (server.cpu_seconds() - cpu_before) / max(1, len(totals)) * 1000
                label = f"{'stream' if stream else 'plain'} x{concurrency}"
                rows = [("call", 0)] + ([("per token", 1)] if stream else [])
                for what, index in rows:
                    d, g = figures["direct"][index], figures["gateway"][index]
                    print(f"{label + ' ' + what:<32}{pct(d, .5):>11.3f}{pct(d, .99):>9.3f}{pct(g, .5):>13.3f}"
                          f"{pct(g, .99):>9.3f}{pct(g, .5) - pct(d, .5):>14.3f}{pct(g, .99) - pct(d, .99):>9.3f}"
                          + (f"{cpu['direct']:>24.3f}{cpu['gateway']:>9.3f}" if index == 0 else ""))
    server.ask(op="settle", id="latency")


async def paced_latency(server: Server, calls: int) -> None:
    import aiohttp

    token = server.ask(op="open", id="paced", paced=True)["token"]
    print(f"paced upstream ({PACE * 1000:.0f} ms between tokens, 64 tokens, streamed): the gateway not saturated")
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
        for concurrency in (1, 50):
            figures: dict[str, tuple[list[float], list[float]]] = {}
            for name in ("direct_paced", "gateway_paced"):
                totals: list[float] = []
                gaps: list[float] = []
                per_worker = 10 if concurrency == 1 else max(1, calls // concurrency)
                await asyncio.gather(*(worker(session, server.origins[name], token, True, per_worker, totals, gaps)
                                       for _ in range(concurrency)))
                figures[name] = (totals, gaps)
            for what, index in (("call", 0), ("per token", 1)):
                d, g = figures["direct_paced"][index], figures["gateway_paced"][index]
                print(f"{f'paced x{concurrency} {what}':<32}{pct(d, .5):>11.3f}{pct(d, .99):>9.3f}"
                      f"{pct(g, .5):>13.3f}{pct(g, .99):>9.3f}{pct(g, .5) - pct(d, .5):>14.3f}"
                      f"{pct(g, .99) - pct(d, .99):>9.3f}")
    server.ask(op="settle", id="paced")


async def soak(server: Server, calls: int) -> None:
    import aiohttp

    print(f"soak: {calls} calls through the gateway (50 concurrent, runs of 100 calls settled in turn)")
    samples = [server.rss_mib()]
    done = 0
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
        while done < calls:
            run_id = f"soak-{done}"
            token = server.ask(op="open", id=run_id)["token"]
            await asyncio.gather(*(one_call(session, server.origins["gateway"], token, index % 2 == 0)
                                   for index in range(100)))
            settled = server.ask(op="settle", id=run_id)
            assert settled == {"calls": 100, "unsettled": 0}, settled
            done += 100
            if done % (calls // 10 or 100) == 0:
                samples.append(server.rss_mib())
    print("  server RSS MiB: " + " ".join(f"{value:.1f}" for value in samples))


async def idle(server: Server, count: int) -> None:
    host, port = server.origins["gateway"].removeprefix("http://").split(":")
    before = server.rss_mib()
    sockets = []
    for _ in range(count):
        sock = socket.socket()
        sock.setblocking(False)
        sock.connect_ex((host, int(port)))
        sockets.append(sock)
    await asyncio.sleep(3)
    state = server.ask(op="state")
    during = server.rss_mib()
    for sock in sockets:
        sock.close()
    await asyncio.sleep(2)
    after = server.ask(op="state")
    print(f"idle: {count} connections opened at once: server RSS {before:.1f} -> {during:.1f} MiB, "
          f"held {state['connections']}, closed over the cap {state['refused']}; after closing them: "
          f"{after['connections']} held, RSS {server.rss_mib():.1f} MiB; server alive: {server.process.poll() is None}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--serve", action="store_true")
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--paced", type=int, default=200)
    parser.add_argument("--soak", type=int, default=10_000)
    parser.add_argument("--idle", type=int, default=10_000)
    options = parser.parse_args()
    if options.serve:
        asyncio.run(serve())
        return
    print("load:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip(), f"cpus={os.cpu_count()}")
    server = Server()
    try:
        asyncio.run(latency(server, options.calls))
        asyncio.run(paced_latency(server, options.paced))
        asyncio.run(soak(server, options.soak))
        asyncio.run(idle(server, options.idle))
    finally:
        server.stop()
    print("load:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())


if __name__ == "__main__":
    main()
