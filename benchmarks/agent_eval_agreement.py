"""Side by side with tangle-network/agent-eval's statistics on the same simulated suites.

Build agent-eval's statistics once (its code never enters this repository)::

    # a fetched copy of github:tangle-network/agent-eval in $AE (commit in the docs)
    mkdir /tmp/ae-build && cd /tmp/ae-build && npm init -y && npm install esbuild@0.24
    printf '%s\\n' "export { decidePairedPromotion } from '$AE/src/paired-promotion-decision'" \\
      "export { pairedBootstrap } from '$AE/src/statistics'" > entry.ts
    ./node_modules/.bin/esbuild entry.ts --bundle --platform=node --format=esm --outfile=ae.mjs

Then ``benchmarks/calibrate_decisions.py --dump suites.jsonl`` and::

    .venv/bin/python benchmarks/agent_eval_agreement.py suites.jsonl --bundle /tmp/ae-build/ae.mjs

Per score kind, tasks and repetitions, and hypothesis (null or alternative), prints how
often each rule ships: ours (:func:`decide` on the task-cluster interval, as recorded by
the calibration run), agent-eval's ``decidePairedPromotion`` and its plain paired
bootstrap of the mean (both on ``scenario:rep`` pairs), and how often ours and
``decidePairedPromotion`` agree.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import time
from collections import defaultdict
from pathlib import Path


def pct(hits: int, total: int) -> str:
    p = hits / total
    return f"{100 * p:.1f} ± {100 * math.sqrt(max(p * (1 - p), 0.25 / total) / total):.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suites", type=Path)
    parser.add_argument("--bundle", type=Path, required=True, help="agent-eval built with esbuild")
    parser.add_argument("--node", default="node")
    args = parser.parse_args()
    worker = Path(__file__).resolve().parent / "agent_eval_worker.mjs"
    started = time.perf_counter()
    lines = args.suites.read_text(encoding="utf-8").splitlines()
    result = subprocess.run([args.node, str(worker), str(args.bundle)], input="\n".join(lines),
                            capture_output=True, text=True, check=True)
    answers = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(answers) == len(lines)
    rows: dict[tuple[str, int, int, str], dict[str, int]] = defaultdict(lambda: defaultdict(int))
    methods: dict[str, int] = defaultdict(int)
    for line, theirs in zip(lines, answers, strict=True):
        suite = json.loads(line)
        key = (suite["kind"], suite["tasks"], suite["reps"], suite["hypothesis"])
        ours = suite["outcome"] == "ship"
        row = rows[key]
        row["n"] += 1
        row["ours"] += ours
        row["theirs"] += theirs["promote"]
        row["bootstrap"] += theirs["bootstrapShip"]
        row["agree"] += ours == theirs["promote"]
        row["ours_only"] += ours and not theirs["promote"]
        row["theirs_only"] += theirs["promote"] and not ours
        methods[theirs["method"]] += 1
    print("| scores | tasks × reps | hypothesis | ours ships % | agent-eval promotes % | "
          "agent-eval bootstrap ships % | agree % | ours only | agent-eval only |")
    print("|---|---|---|---|---|---|---|---|---|")
    for (kind, tasks, reps, hypothesis), row in rows.items():
        n = row["n"]
        print(f"| {kind} | {tasks} × {reps} | {hypothesis} | {pct(row['ours'], n)} | "
              f"{pct(row['theirs'], n)} | {pct(row['bootstrap'], n)} | "
              f"{100 * row['agree'] / n:.1f} | {row['ours_only']} | {row['theirs_only']} |")
    print(f"agent-eval's deciding methods: {dict(methods)}; "
          f"{len(lines)} suites in {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
