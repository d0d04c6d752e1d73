"""Parse throughput of execution plans, benchmark tasks and suite inputs.

Run: ``.venv/bin/python benchmarks/bench_candidate_plans.py``. Prints documents/s for the
reference's plan fixture, its task fixture and a suite of 100 tasks (each parse validates
every task, the suite and the cross-document rules), plus the cost of sealing a plan as
evidence (RFC 8785 bytes, SHA-256, base64).
"""

from __future__ import annotations

import copy
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.candidate.plan_fixtures import plan, suite, task

from agent_interface.candidate.execution_plan import (
    AgentCandidateExecutionPlanEvidence,
    AgentCandidateExecutionPlanMaterial,
)
from agent_interface.candidate.tasks import (
    AgentCandidateBenchmarkSuite,
    AgentCandidateBenchmarkSuiteInputs,
    AgentCandidateBenchmarkTask,
)


def rate(label: str, run: Callable[[], Any], seconds: float = 1.0) -> None:
    run()
    count, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        run()
        count += 1
    print(f"{label:<44} {count / elapsed:>10,.0f} /s  ({elapsed / count * 1e6:,.0f} µs)")


def suite_inputs(size: int) -> dict[str, Any]:
    tasks = []
    for index in range(size):
        value = task()
        value["scenario"] = {**value["scenario"], "id": f"case-{index}", "scenarioDigest": f"sha256:{index:064x}"}
        tasks.append(AgentCandidateBenchmarkTask.seal(value).to_wire())
    sealed = AgentCandidateBenchmarkSuite.seal(
        {**suite(), "taskDigests": [item["digest"] for item in tasks], "reps": 1, "seeds": list(range(size))}
    )
    return {"suite": sealed.to_wire(), "tasks": tasks}


def main() -> None:
    plan_doc, task_doc, inputs = plan(), task(), suite_inputs(100)
    material = AgentCandidateExecutionPlanMaterial.parse_wire(plan_doc)
    rate("execution plan material parse", lambda: AgentCandidateExecutionPlanMaterial.parse_wire(plan_doc))
    rate("execution plan evidence seal", lambda: AgentCandidateExecutionPlanEvidence.seal(material))
    rate("benchmark task parse", lambda: AgentCandidateBenchmarkTask.parse_wire(task_doc))
    rate("suite inputs parse (100 tasks)", lambda: AgentCandidateBenchmarkSuiteInputs.parse_wire(copy.copy(inputs)))


if __name__ == "__main__":
    main()
