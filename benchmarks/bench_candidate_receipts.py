"""Validation time of the largest candidate records: run receipts, execution evidence and
complete measured proposals (the reference's own accepted documents from
``tests/golden/candidate-receipts-reference.jsonl.gz``).

Run: ``.venv/bin/python benchmarks/bench_candidate_receipts.py [rounds]``.
"""

from __future__ import annotations

import gzip
import json
import sys
import time
from pathlib import Path

from agent_interface.core.registry import wire_schema

GOLDEN = Path(__file__).resolve().parent.parent / "tests" / "golden" / "candidate-receipts-reference.jsonl.gz"
SCHEMAS = (
    "AgentCandidateRunReceipt",
    "CandidateExecutionEvidence",
    "AgentProfileImprovementMeasuredComparison",
    "AgentImprovementProposal",
)


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    with gzip.open(GOLDEN, "rt", encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle]
    for name in SCHEMAS:
        documents = [row["value"] for row in rows if row["schema"] == name and row["ok"]]
        text = [json.dumps(document).encode() for document in documents]
        adapter = wire_schema(name)
        started = time.perf_counter()
        for _ in range(rounds):
            for data in text:
                adapter.parse(data)
        elapsed = time.perf_counter() - started
        count = rounds * len(text)
        size = sum(map(len, text)) / max(1, len(text))
        print(f"{name:45s} {count:5d} documents  avg {size / 1024:6.1f} KiB  {elapsed / count * 1000:8.2f} ms each")


if __name__ == "__main__":
    main()
