"""What deciding which of a submission's files take part in grading costs.

Run: ``.venv/bin/python benchmarks/bench_submission_policy.py [FILES]``. Builds a task of
``FILES`` files (default 20,000, in directories of 50, a package every other directory)
and a submission that changes a tenth of them and adds as many new files, then prints the
median time of :func:`graded_files` over 5 runs for: no ``solutionPaths``, ``["**"]``, and
ten patterns. The grader's commands themselves (the test suite) cost far more.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agent_interface.evaluator.experiment.submission_policy import SubmissionPolicy, graded_files


def workspace(count: int) -> tuple[dict[str, tuple[int, bytes]], dict[str, tuple[int, bytes]]]:
    base: dict[str, tuple[int, bytes]] = {}
    for index in range(count):
        directory = f"src/d{index // 50}"
        base[f"{directory}/m{index}.py"] = (0o644, b"x = 1\n")
        if (index // 50) % 2 == 0:
            base[f"{directory}/__init__.py"] = (0o644, b"")
    result = dict(base)
    for index, path in enumerate(sorted(base)):
        if index % 10 == 0:
            result[path] = (0o644, b"x = 2\n")
            result[path.replace(".py", "_new.py")] = (0o644, b"y = 1\n")
    return base, result


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
    base, result = workspace(count)
    policies = {"none": SubmissionPolicy(None, restore=("tests/",)),
                "**": SubmissionPolicy(("**",), restore=("tests/",)),
                "10 patterns": SubmissionPolicy(tuple(f"src/d{i}*/**" for i in range(10)), restore=("tests/",))}
    print(f"{len(base):,} task files, {sum(base.get(p) != v for p, v in result.items()):,} changed or added")
    for name, policy in policies.items():
        times = []
        for _ in range(5):
            started = time.perf_counter()
            _files, actions = graded_files(base, result, policy)
            times.append(time.perf_counter() - started)
        print(f"  {name:12} {statistics.median(times) * 1000:8.1f} ms  ({len(actions):,} left out)")


if __name__ == "__main__":
    main()
