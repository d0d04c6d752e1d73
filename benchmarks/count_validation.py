"""Instructions per document of ``WireAdapter.parse`` on one side-by-side workload,
counted with ``valgrind --tool=callgrind`` (repeatable on a loaded machine, where timings
are not).

Every document of the workload is validated twice first (building and warming every
validator), then ``--count`` documents (cycled) are validated inside one
``functools.reduce`` call, the only part callgrind counts (``--toggle-collect``); the
count divided by ``--count`` is the figure. ``PYTHONHASHSEED=0`` keeps runs alike.

Run: ``.venv/bin/python benchmarks/count_validation.py KEY [KEY ...] [--count 1000]``
(``KEY`` as ``side_by_side/run.py --only``: part of a workload key, for example
``envelope-clean`` or ``AgentTurnInput``).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "side_by_side"))


def _texts(key: str) -> tuple[str, list[bytes]]:
    import workloads as wl

    for workload in wl.validation_workloads(wl.load_documents(None)):
        if key in workload.key:
            return workload.schema, [doc.text for doc in workload.documents]
    raise SystemExit(f"no workload matches {key!r}")


def _child(key: str, count: int) -> None:
    from agent_interface.core.registry import wire_schema

    schema, texts = _texts(key)
    parse = wire_schema(schema).parse
    for text in texts + texts:
        with contextlib.suppress(ValueError):
            parse(text)
    batch = [texts[index % len(texts)] for index in range(count)]

    def step(accepted: int, text: bytes) -> int:
        try:
            parse(text)
        except ValueError:
            return accepted
        return accepted + 1

    functools.reduce(step, batch, 0)  # the only call counted


def _instructions(key: str, count: int, keep: str | None = None) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(keep or tmp) / f"callgrind.{key}.out"
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
             "--collect-atstart=no", "--toggle-collect=functools_reduce",
             sys.executable, __file__, "--child", key, "--count", str(count)],
            check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        found = re.search(rb"^(?:summary|totals): (\d+)", out.read_bytes(), re.MULTILINE)
        if found is None:
            raise SystemExit("no totals in the callgrind output")
        return int(found.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("keys", nargs="+")
    parser.add_argument("--count", type=int, default=1_000)
    parser.add_argument("--keep", metavar="DIR", help="keep callgrind.KEY.out in DIR (for callgrind_annotate)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child:
        _child(options.keys[0], options.count)
        return
    for key in options.keys:
        counted = _instructions(key, options.count, options.keep)
        print(f"{key}: {counted / options.count:,.0f} instructions a document "
              f"({options.count:,} documents)", flush=True)


if __name__ == "__main__":
    main()
