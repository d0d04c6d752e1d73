"""Refusing a large document costs a small multiple of the document, not one error object
per refused member (pydantic-core keeps about 300 bytes per error).

Each case runs in a fresh interpreter, which writes the document, reads it back and
measures the refusal alone: the peak of Python allocations (tracemalloc) and the growth
of the process's peak resident size (which also sees pydantic-core's own allocations).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

_PROBE = textwrap.dedent(
    """
    import gc, json, resource, sys, tracemalloc
    from agent_interface.core.errors import ContractError
    from agent_interface.core.registry import wire_schema

    path, mode, count, shape = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    with open(path, "w") as out:
        if shape == "strings":
            out.write('{"connections":[' + ",".join('"a%07d"' % i for i in range(count)) + "]}")
        elif shape == "numbers":
            out.write('{"tags":[' + ",".join(str(i) for i in range(count)) + "]}")
        elif shape == "map":
            out.write('{"tools":{' + ",".join('"t%07d":"no"' % i for i in range(count)) + "}}")
        elif shape == "objects":
            out.write('{"connections":[' + ",".join('{"id":%d}' % i for i in range(count)) + "]}")
    data = open(path, "rb").read()
    adapter = wire_schema("AgentProfile")
    adapter.adapter.rebuild(); adapter.bounded_validator; adapter.labelled_validator
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
    tracemalloc.start()
    try:
        adapter.parse(data) if mode == "text" else adapter.parse_value(value)
        refused = False
    except ContractError as error:
        refused = len(error.issues) >= 1
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    grown = peak_resident() - before
    print(json.dumps({"refused": refused, "size": len(data), "traced": peak, "rss": grown}))
    """
)


def _measure(tmp_path: Path, mode: str, shape: str, count: int) -> dict[str, int]:
    result = subprocess.run(
        [sys.executable, "-c", _PROBE, str(tmp_path / "doc.json"), mode, str(count), shape],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    measured: dict[str, int] = json.loads(result.stdout)
    return measured


@pytest.mark.parametrize("mode", ["text", "value"])
@pytest.mark.parametrize(
    ("shape", "count"),
    [("strings", 400_000), ("numbers", 600_000), ("map", 300_000), ("objects", 300_000)],
)
def test_refusing_a_large_document_costs_a_small_multiple_of_it(
    tmp_path: Path, mode: str, shape: str, count: int
) -> None:
    measured = _measure(tmp_path, mode, shape, count)
    assert measured["refused"]
    size = measured["size"]
    assert measured["traced"] <= 5 * size, measured
    # The resident peak includes pydantic-core's own parse of the text: about 3 times an
    # array of strings, about 10 times an array of small objects (as when accepting it).
    assert measured["rss"] <= 12 * size, measured
