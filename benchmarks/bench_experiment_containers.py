"""Experiment cells in OCI containers: cells per minute and the evaluator's time per cell
(prints figures; asserts nothing).

Run (root, with ``runc``, ``gcc`` and ``busybox-static``):
``PYTHONPATH=src .venv/bin/python benchmarks/bench_experiment_containers.py [--reps N]``
(default 4, so 8 cells). The experiment is the tests' (``tests/evaluator/experiment/test_experiment_containers.py``):
one output task, a baseline and a candidate that pin the busybox image with the static C
agent (reads its instruction, asks the model endpoint once, prints). For 1 and 2 local
workers it prints cells per minute, and per cell the program's run time against the
evaluator's own time (``evaluator_ms - program_ms`` from the ledger: plan, provider open
with its host probe, stage, capture, receipts, clean up). Each run uses a fresh run
directory; the image store's unpacked root is cached after the first.
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.evaluator.container_run_fixtures import ARTIFACTS, agent_image, bundle, pinned, task
from tests.evaluator.experiment.test_experiment_containers import experiment

from agent_interface.evaluator.experiment.engine import ExperimentRunOptions, run_experiment


def _experiment(index_digest: str, reps: int) -> bytes:
    import json

    from agent_interface.core.canonical import canonical_digest

    environment = pinned(index_digest)
    document = json.loads(experiment(bundle("stdin", environment=environment),
                                     bundle("argv", delivery="argv-append", environment=environment), task()))
    suite = document["benchmark"]["suite"]
    suite.pop("digest")
    suite.update(reps=reps, seeds=list(range(1, reps + 1)))
    document["benchmark"]["suite"] = {**suite, "digest": canonical_digest(suite)}
    document.pop("digest")
    return json.dumps({**document, "digest": canonical_digest(document)}).encode()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=4)
    args = parser.parse_args()
    directory = Path(tempfile.mkdtemp(prefix="bench-expcontainer-", dir="/var/tmp"))
    try:
        image = agent_image(directory)
        data = _experiment(image.index_digest, args.reps)
        for workers in (1, 2):
            out = directory / f"run-{workers}"
            started = time.monotonic()
            summary = run_experiment(data, ExperimentRunOptions(out=out, artifacts=ARTIFACTS, workers=workers,
                                                                images=image.store.root))
            seconds = time.monotonic() - started
            with sqlite3.connect(out / "ledger.sqlite3") as db:
                rows = db.execute("SELECT program_ms, evaluator_ms FROM cells WHERE program_ms IS NOT NULL").fetchall()
            program = sum(row[0] for row in rows) / len(rows)
            evaluator = sum(row[1] for row in rows) / len(rows)
            cells = sum(summary.counts.values())
            print(f"{workers} worker(s): {cells} cells ({summary.counts['done']} done) in {seconds:.1f} s = "
                  f"{cells * 60 / seconds:.0f} cells/min; per cell: program {program:.0f} ms, "
                  f"evaluator's own {evaluator - program:.0f} ms")
    finally:
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
