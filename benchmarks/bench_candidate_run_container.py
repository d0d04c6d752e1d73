"""Wall time of ``run_candidate`` in an OCI container, and where the time beyond the program goes.

Run (root, with ``runc``, ``gcc`` and ``busybox-static``):
``PYTHONPATH=src .venv/bin/python benchmarks/bench_candidate_run_container.py [runs]``
(default 10). The candidate is the tests' static C agent (``tests/evaluator/container_run_fixtures.py``:
reads stdin, asks the model endpoint once, prints) pinned by index digest in a store whose
root is cached after the first run. Prints the median and range, in milliseconds, of:

* ``run_candidate``: the whole run in this process (verify, select the image, open the
  provider (its host probe runs a container), plan, stage, run, capture, receipts, clean up);
* ``program``: the run receipt's ``timing.durationMs`` (spawn to end, as the receipt says);
* ``beyond the program``: the difference;
* ``select_image`` (cached root) and ``OciExactProcessProvider.open`` (the probe) alone.
"""

from __future__ import annotations

import asyncio
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.evaluator.container_run_fixtures import ARTIFACTS, agent_image, bundle, pinned, task

from agent_interface.candidate.bundle import AgentCandidateBundle
from agent_interface.evaluator.container.oci_provider import OciExactProcessProvider
from agent_interface.evaluator.run.candidate_run import run_candidate
from agent_interface.evaluator.run.image_selection import select_image


def report(name: str, values: list[float]) -> None:
    print(f"{name:34} median {statistics.median(values):8.1f} ms  range {min(values):.1f}-{max(values):.1f}")


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    directory = Path(tempfile.mkdtemp(prefix="bench-crun-", dir="/var/tmp"))
    try:
        image = agent_image(directory)
        document = bundle("stdin", environment=pinned(image.index_digest))
        the_task = task()
        parsed = AgentCandidateBundle.parse_wire(document)
        select_image(parsed, the_task, image.store)  # the first unpack, not measured here
        totals, programs, selects, opens = [], [], [], []
        for index in range(runs + 1):
            start = time.perf_counter()
            result = run_candidate(document, repository=None, task=the_task, out=directory / f"out-{index}",
                                   artifacts=ARTIFACTS, images=image.store)
            elapsed = (time.perf_counter() - start) * 1000
            assert result.run_receipt is not None
            if index == 0:
                continue  # warm-up
            totals.append(elapsed)
            programs.append(float(result.run_receipt.timing.duration_ms))
            start = time.perf_counter()
            selected = select_image(parsed, the_task, image.store)
            selects.append((time.perf_counter() - start) * 1000)
            root = Path(tempfile.mkdtemp(prefix="bench-provider-"))
            start = time.perf_counter()
            provider = asyncio.run(OciExactProcessProvider.open(root / "p", images=selected))
            opens.append((time.perf_counter() - start) * 1000)
            provider.close()
            shutil.rmtree(root, ignore_errors=True)
        print(f"{runs} runs of the pinned busybox agent (one model call each)")
        report("run_candidate", totals)
        report("program (receipt durationMs)", programs)
        report("beyond the program", [t - p for t, p in zip(totals, programs, strict=True)])
        report("select_image (cached root)", selects)
        report("OciExactProcessProvider.open", opens)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
