"""The sandbox side of a strict-egress endpoint: a loopback port relayed to the proxy socket.

Inside a sandbox's network namespace (no route out) the program's only way out is the
proxy's Unix socket. Many programs only speak to a proxy over TCP, so this standalone
program (standard library only, no package import: run it by path with any Python 3.11)
listens on ``127.0.0.1:PORT`` *inside* the namespace and relays every connection,
byte for byte, to the socket::

    ip netns exec SANDBOX python3 forwarder.py --socket /run/egress/ENV.sock --port 3128

or, for a container, ``nsenter --net=/proc/PID/ns/net`` with the host's Python (the
image needs no Python; the socket needs only to be reachable from the process that
runs the forwarder). It prints ``ready PORT`` on stdout once listening (``--port 0``
picks a free port), holds at most ``--max-connections`` connections, and enforces
nothing itself: the proxy behind the socket decides. :func:`proxy_environment` is what a
launch's replacement environment adds, when its plan says so, to announce the port.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
from pathlib import Path
from typing import Final

__all__ = ["FORWARDER_SCRIPT", "forwarder_command", "main", "proxy_environment", "serve"]

FORWARDER_SCRIPT: Final = str(Path(__file__).resolve())
"""This file's path: run it by path (``python3 FORWARDER_SCRIPT --socket ... --port ...``)."""

_CHUNK = 65_536


def proxy_environment(port: int) -> dict[str, str]:
    """The variables naming the forwarder at ``127.0.0.1:port`` as the HTTP(S) proxy.

    Both spellings are set (programs read one or the other) and ``NO_PROXY`` is empty, so
    no destination is exempted.
    """
    url = f"http://127.0.0.1:{port}"
    return {
        "HTTP_PROXY": url,
        "HTTPS_PROXY": url,
        "http_proxy": url,
        "https_proxy": url,
        "NO_PROXY": "",
        "no_proxy": "",
    }


def forwarder_command(socket_path: str, port: int, *, python: str = sys.executable,
                      max_connections: int = 256) -> list[str]:
    """The argv that runs the forwarder (prefix it with ``ip netns exec NS`` or ``nsenter``)."""
    return [
        python, "-I", "-S", FORWARDER_SCRIPT, "--socket", socket_path, "--port", str(port),
        "--max-connections", str(max_connections),
    ]


async def _pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    try:
        while chunk := await source.read(_CHUNK):
            sink.write(chunk)
            await sink.drain()
        if sink.can_write_eof():
            sink.write_eof()
    except OSError:
        sink.close()


async def serve(socket_path: str, port: int, max_connections: int) -> None:
    """Listen on ``127.0.0.1:port`` and relay each connection to ``socket_path``, forever."""
    active = 0

    async def relay(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal active
        if active >= max_connections:
            writer.close()
            return
        active += 1
        up_writer = None
        try:
            up_reader, up_writer = await asyncio.open_unix_connection(socket_path, limit=_CHUNK)
            await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
        except OSError:
            pass
        finally:
            active -= 1
            writer.close()
            if up_writer is not None:
                up_writer.close()

    server = await asyncio.start_server(relay, host="127.0.0.1", port=port, limit=_CHUNK,
                                        backlog=1024)
    bound = server.sockets[0].getsockname()[1]
    sys.stdout.write(f"ready {bound}\n")
    sys.stdout.flush()
    async with server:
        await server.serve_forever()


def main(argv: list[str] | None = None) -> int:
    """Parse ``--socket``, ``--port`` and ``--max-connections`` and serve until killed."""
    parser = argparse.ArgumentParser(description="relay 127.0.0.1:PORT to an egress proxy socket")
    parser.add_argument("--socket", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--max-connections", type=int, default=256)
    args = parser.parse_args(argv)
    if not 0 <= args.port < 65536 or args.max_connections < 1:
        parser.error("--port must be 0-65535 and --max-connections positive")
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(args.socket, args.port, args.max_connections))
    return 0


if __name__ == "__main__":
    sys.exit(main())
