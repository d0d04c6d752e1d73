"""Throughput of profile diffs and execution preparation receipts.

Run: ``.venv/bin/python benchmarks/bench_profile_tooling.py``. Prints operations/s for
diffing two ~40-leaf profiles, applying the steps, expanding materialization requests, and
building and validating one preparation receipt (profiles, lease and coverage included).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from agent_interface.environment.preparation import (
    build_agent_execution_preparation_receipt,
    validate_agent_execution_preparation_receipt,
)
from agent_interface.environment.workspace_lease import build_agent_workspace_lease_record
from agent_interface.profile.diff import apply_agent_profile_diff, diff_agent_profiles
from agent_interface.profile.materialization import profile_materialization_requests

SHA = {digit: "sha256:" + digit * 64 for digit in "1234789"}
BASELINE: dict[str, Any] = {
    "name": "researcher",
    "tags": ["science", "audit"],
    "prompt": {"systemPrompt": "Run experiments.", "instructions": ["Keep evidence.", "Cite."]},
    "model": {"default": "openai/gpt-5.4", "provider": "openai", "reasoningEffort": "high"},
    "harness": "codex",
    "tools": {f"tool{i}": i % 2 == 0 for i in range(12)},
    "permissions": {"shell": "ask", "edit": {"docs": "allow", "src": "deny"}},
    "resources": {
        "skills": [{"kind": "inline", "name": f"skill{i}", "content": "x" * 200} for i in range(4)],
        "failOnError": False,
    },
    "metadata": {"role": "driver", "budget": {"usd": 3}},
}
CANDIDATE = {
    **BASELINE,
    "tools": {**BASELINE["tools"], "tool3": True, "web": True},
    "model": {**BASELINE["model"], "reasoningEffort": "medium"},
    "resources": {**BASELINE["resources"], "skills": BASELINE["resources"]["skills"][:3]},
}
LEASE = build_agent_workspace_lease_record(
    {
        "kind": "agent-workspace-lease",
        "schemaVersion": 1,
        "phase": "workspace-sealed",
        "leaseId": "lease-1",
        "ownerId": "run-1",
        "workspace": {"provider": "local", "root": "/w/1", "identityDigest": SHA["2"]},
        "isolation": "per-run",
        "sourceSnapshotDigest": SHA["8"],
        "sourceSnapshotPolicy": {"kind": "provider-declared", "name": "p", "version": 1, "digest": SHA["7"]},
        "preparedWorkspaceDigest": SHA["9"],
        "profileActivationDigest": SHA["3"],
        "createdAtMs": 100,
        "updatedAtMs": 200,
        "expiresAtMs": 3_000,
        "cleanupAttempts": 0,
    }
)
ROWS = [
    {"axis": r.axis, "path": r.path, "disposition": "behavior", "owner": "executor", "mechanism": "m"}
    for r in profile_materialization_requests(BASELINE)
]


def build() -> Any:
    return build_agent_execution_preparation_receipt(
        preparation_id="prep-1",
        request_digest=SHA["1"],
        authored_profile=BASELINE,
        effective_profile=BASELINE,
        backend="bench",
        harness="codex",
        harness_version="1",
        resolved_model={
            "requested": "openai/gpt-5.4",
            "resolved": "gpt-5.4",
            "provider": "openai",
            "reasoningEffort": {"requested": "high", "resolved": "high", "fidelity": "exact"},
        },
        workspace_lease=LEASE,
        profile_activation=SHA["3"],
        axis_results=ROWS,
        execution_plan_digest=SHA["4"],
        materializer={"name": "bench", "version": "1"},
        expires_at_ms=2_000,
        now_ms=1_000,
    )


def rate(label: str, operation: Callable[[], object], seconds: float = 1.0) -> None:
    operation()
    count, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        operation()
        count += 1
    elapsed = time.perf_counter() - start
    print(f"{label:<44} {count / elapsed:>10,.0f} ops/s")


def main() -> None:
    steps = diff_agent_profiles(BASELINE, CANDIDATE)
    receipt = build()
    material = {k: v for k, v in LEASE.to_wire().items() if k != "digest"}
    bound = build_agent_workspace_lease_record(
        {**material, "phase": "execution-bound", "executionPreparationDigest": receipt.digest}
    )
    rate("diff_agent_profiles", lambda: diff_agent_profiles(BASELINE, CANDIDATE))
    rate("apply_agent_profile_diff (both steps)", lambda: [apply_agent_profile_diff(BASELINE, s) for s in steps])
    rate(f"profile_materialization_requests ({len(ROWS)} rows)", lambda: profile_materialization_requests(BASELINE))
    rate("build_agent_execution_preparation_receipt", build)
    rate(
        "validate_agent_execution_preparation_receipt",
        lambda: validate_agent_execution_preparation_receipt(
            receipt=receipt.to_wire(),
            request_digest=SHA["1"],
            authored_profile=BASELINE,
            effective_profile=BASELINE,
            execution_plan_digest=SHA["4"],
            profile_activation=SHA["3"],
            workspace_lease=bound,
            now_ms=1_000,
        ),
    )


if __name__ == "__main__":
    main()
