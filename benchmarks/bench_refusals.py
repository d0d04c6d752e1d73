"""Cost of refusing large documents: time, growth of the resident peak, peak of Python
allocations, each against the size of the JSON text.

Shapes (``AgentProfile``), each refused member by member:

* ``strings``: ``connections``, an array of short strings where objects are expected;
* ``numbers``: ``tags``, an array of integers where strings are expected;
* ``map``: ``tools``, a map of strings where booleans are expected;
* ``objects``: ``connections``, an array of small objects missing their fields;
* ``unknown-keys``: an object with that many unknown keys;
* ``deep-repeated``: 100 chains 150 levels deep of one repeated key, each ending in a
  refused key (the error-path mapping).

Each measurement runs in a fresh interpreter that writes the document, reads it back and
measures the refusal alone, as JSON text (``parse``) and as a parsed value
(``parse_value``).

Run: ``.venv/bin/python benchmarks/bench_refusals.py [--megabytes 11]``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

_PROBE = textwrap.dedent(
    """
    import gc, json, resource, sys, time, tracemalloc
    from agent_interface.core.errors import ContractError
    from agent_interface.core.registry import wire_schema

    path, mode, shape, count, trace = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5] == "1"
    with open(path, "w") as out:
        if shape == "strings":
            out.write('{"connections":[' + ",".join('"a%07d"' % i for i in range(count)) + "]}")
        elif shape == "numbers":
            out.write('{"tags":[' + ",".join(str(i) for i in range(count)) + "]}")
        elif shape == "map":
            out.write('{"tools":{' + ",".join('"t%07d":"no"' % i for i in range(count)) + "}}")
        elif shape == "objects":
            out.write('{"connections":[' + ",".join('{"id":%d}' % i for i in range(count)) + "]}")
        elif shape == "unknown-keys":
            out.write("{" + ",".join('"u%07d":1' % i for i in range(count)) + "}")
        elif shape == "deep-repeated":
            chain = '{"k":' * 150 + '{"k\\\\udfff":1}' + "}" * 150
            out.write('{"metadata":{' + ",".join('"c%d":%s' % (i, chain) for i in range(100)) + "}}")
    data = open(path, "rb").read()
    adapter = wire_schema("AgentProfile")
    adapter.adapter.rebuild()
    for warm in ("bounded_validator", "labelled_validator"):
        getattr(adapter, warm, None)
    value = json.loads(data) if mode == "value" else None
    gc.collect()
    def peak_resident():
        # The process's resident high-water mark, in bytes (Linux; reset below).
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    try:  # start the high-water mark at the current size: only the refusal counts
        with open("/proc/self/clear_refs", "w") as clear:
            clear.write("5")
    except OSError:
        pass
    before = peak_resident()
    if trace:
        tracemalloc.start()
    started = time.perf_counter()
    try:
        adapter.parse(data) if mode == "text" else adapter.parse_value(value)
        issues = count_all = 0
    except ContractError as error:
        issues, count_all = len(error.issues), getattr(error, "issue_count", len(error.issues))
    seconds = time.perf_counter() - started
    traced = tracemalloc.get_traced_memory()[1] if trace else 0
    grown = peak_resident() - before
    print(json.dumps({"size": len(data), "seconds": seconds, "rss": grown, "traced": traced,
                      "issues": issues, "count": count_all}))
    """
)

# Members per megabyte of text, for each shape.
_PER_MEGABYTE = {
    "strings": 90_000, "numbers": 140_000, "map": 62_000, "objects": 74_000,
    "unknown-keys": 77_000, "deep-repeated": 0,
}


def _probe(shape: str, mode: str, count: int, trace: bool, timeout: float) -> dict[str, float] | None:
    with tempfile.TemporaryDirectory() as directory:
        try:
            result = subprocess.run(
                [sys.executable, "-c", _PROBE, str(Path(directory) / "doc.json"), mode, shape,
                 str(count), "1" if trace else "0"],
                capture_output=True, text=True, check=True, timeout=timeout,
            )
        except subprocess.TimeoutExpired:
            return None
    measured: dict[str, float] = json.loads(result.stdout)
    return measured


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=float, default=11.0)
    parser.add_argument("--shapes", nargs="*", default=list(_PER_MEGABYTE), choices=list(_PER_MEGABYTE))
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per measurement")
    args = parser.parse_args()
    print(f"{'shape':14} {'mode':5} {'MB':>6} {'seconds':>8} {'RSS +MB':>8} {'x':>5} "
          f"{'traced MB':>9} {'x':>5} {'issues':>6} {'count':>8}")
    for shape in args.shapes:
        count = max(1, int(_PER_MEGABYTE[shape] * args.megabytes))
        for mode in ("text", "value"):
            timed = _probe(shape, mode, count, trace=False, timeout=args.timeout)
            traced = _probe(shape, mode, count, trace=True, timeout=args.timeout) if timed else None
            if timed is None or traced is None:
                print(f"{shape:14} {mode:5} no answer within {args.timeout:.0f} s")
                continue
            size = timed["size"]
            print(
                f"{shape:14} {mode:5} {size / 1e6:6.1f} {timed['seconds']:8.2f} "
                f"{timed['rss'] / 1e6:8.0f} {timed['rss'] / size:5.1f} "
                f"{traced['traced'] / 1e6:9.1f} {traced['traced'] / size:5.1f} "
                f"{timed['issues']:6.0f} {timed['count']:8.0f}"
            )


if __name__ == "__main__":
    main()
