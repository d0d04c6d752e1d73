"""Python side of the side-by-side harness; answers the commands of ``node_worker.mjs``.

``python py_worker.py serve`` is the long-lived worker (one JSON command per stdin line,
one JSON reply per stdout line). ``python py_worker.py cold NAME DOCUMENT_PATH`` is a
fresh-process first use: import the registry, validate one document, print the
milliseconds since this script started and the verdict.
"""

import sys
import time

_START = time.perf_counter()


def _cold(name: str, path: str) -> None:
    from agent_interface.core.registry import wire_schema

    with open(path, "rb") as handle:
        text = handle.read()
    try:
        wire_schema(name).parse(text)
        accepted = True
    except ValueError:
        accepted = False
    elapsed = (time.perf_counter() - _START) * 1e3
    verdict = "true" if accepted else "false"
    sys.stdout.write(f'{{"ms": {elapsed!r}, "accepted": {verdict}}}\n')


if __name__ == "__main__" and sys.argv[1:2] == ["cold"]:
    _cold(sys.argv[2], sys.argv[3])
    sys.exit(0)

import json  # noqa: E402
import tracemalloc  # noqa: E402
from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402

from agent_interface.core.canonical import canonical_bytes, canonical_digest  # noqa: E402
from agent_interface.core.registry import wire_schema  # noqa: E402

_workloads: dict[str, tuple[Callable[[bytes], Any], list[bytes]]] = {}
_values: dict[str, Any] = {}


def _pass(parse: Callable[[bytes], Any], lines: list[bytes]) -> dict[str, Any]:
    accepted = 0
    cpu = time.process_time()
    start = time.perf_counter()
    for line in lines:
        try:
            parse(line)
            accepted += 1
        except ValueError:
            pass
    return {"seconds": time.perf_counter() - start, "cpu": time.process_time() - cpu,
            "accepted": accepted}


def _verdict(parse: Callable[[bytes], Any], line: bytes) -> str:
    try:
        parse(line)
    except ValueError:
        return "0"
    return "1"


def handle(command: dict[str, Any]) -> dict[str, Any]:
    op = command["op"]
    if op == "load":
        with open(command["path"], "rb") as handle:
            lines = [line for line in handle.read().split(b"\n") if line]
        parse = wire_schema(command["schema"]).parse
        _workloads[command["key"]] = (parse, lines)
        verdicts = "".join(_verdict(parse, line) for line in lines)
        warm_start = time.perf_counter()  # at least three passes and one second
        passes = 0
        while passes < 3 or time.perf_counter() - warm_start < 1.0:
            _pass(parse, lines)
            passes += 1
        return {"verdicts": verdicts}
    if op == "validate":
        parse, lines = _workloads[command["key"]]
        return _pass(parse, lines)
    if op == "load_digest":
        with open(command["path"], "rb") as handle:
            value = json.loads(handle.read())
        _values[command["key"]] = value
        size = len(canonical_bytes(value))
        tracemalloc.start()
        try:
            digest = canonical_digest(value)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        return {"digest": digest, "size": size, "peak": peak}
    if op == "digest":
        value = _values[command["key"]]
        cpu = time.process_time()
        start = time.perf_counter()
        for _ in range(command["iterations"]):
            canonical_digest(value)
        return {"seconds": time.perf_counter() - start, "cpu": time.process_time() - cpu}
    if op == "quit":
        sys.exit(0)
    raise ValueError(f"unknown op {op}")


def serve() -> None:
    for line in sys.stdin:
        try:
            reply = handle(json.loads(line))
        except Exception as error:  # reported to the driver, which stops
            reply = {"error": repr(error)}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    serve()
