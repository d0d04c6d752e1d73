"""Time and peak memory of the candidate verifier on the bundled example.

Each round runs ``verify_candidate_bundle`` on ``examples/candidate/bundle.json`` against a
fresh clone of ``examples/candidate/repository.bundle``. Printed: wall time per
verification (min / median / max), the peak resident size of this Python process and the
largest peak of any ``git`` child it ran.

Run: ``.venv/bin/python benchmarks/bench_verifier.py [rounds]``.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from agent_interface.candidate.verify import verify_candidate_bundle

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "candidate"


def _clone(target: Path) -> None:
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull)
    subprocess.run(
        ["git", "clone", "-q", str(EXAMPLE / "repository.bundle"), str(target)],
        check=True, env=env,
    )


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    document = (EXAMPLE / "bundle.json").read_bytes()
    with tempfile.TemporaryDirectory() as scratch:
        repository = Path(scratch) / "demo"
        _clone(repository)
        children_before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        verify_candidate_bundle(document, repository=repository)  # warm imports
        times: list[float] = []
        for _ in range(rounds):
            started = time.perf_counter()
            result = verify_candidate_bundle(document, repository=repository)
            times.append(time.perf_counter() - started)
        assert result.materialized_tree == "852d9f174f6d0f556bcedb259744db1bd9ba473e"
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(
        f"verify examples/candidate: {rounds} rounds, "
        f"min {min(times) * 1000:.1f} ms, median {statistics.median(times) * 1000:.1f} ms, "
        f"max {max(times) * 1000:.1f} ms"
    )
    print(f"peak RSS: python {own / 1024:.1f} MiB, largest git child {children / 1024:.1f} MiB "
          f"(clone step {children_before / 1024:.1f} MiB)")


if __name__ == "__main__":
    main()
