"""The reference test suite's task, suite, profile-plan and execution-plan fixtures as wire JSON."""

from __future__ import annotations

import copy
from typing import Any

from tests.candidate.fixtures import embedded, sha

RESOLVED = {
    "requested": "openai/gpt-5.4",
    "provider": "openai",
    "model": "gpt-5.4",
    "snapshot": "gpt-5.4-2026-06-15",
    "reasoningEffort": "high",
}

LIMITS = {
    "timeoutMs": 120_000,
    "maxSteps": 50,
    "maxModelCalls": 12,
    "maxInputTokens": 100_000,
    "maxOutputTokens": 20_000,
    "maxTotalTokens": 120_000,
    "maxCostUsd": 5,
}

RUN_CELL = {
    "kind": "agent-candidate-run-cell",
    "experimentDigest": sha("0"),
    "arm": "candidate",
    "bundleDigest": sha("1"),
    "suiteDigest": sha("9"),
    "taskDigest": sha("2"),
    "taskIndex": 0,
    "repetition": 0,
    "seed": 42,
    "attempt": 1,
    "digest": sha("3"),
}

INSTRUCTIONS_SHA = "sha256:fa79d4746c21cd960a17b92db8976ddef95a7e20b590721f8e0fa7847a05e486"
"""SHA-256 of the UTF-8 bytes ``exact``."""


def s3(key: str, digit: str, byte_length: int = 2) -> dict[str, Any]:
    return {
        "locator": {"kind": "s3", "bucket": "candidate-artifacts", "key": key},
        "sha256": sha(digit),
        "byteLength": byte_length,
    }


def workspace(path: str, digit: str) -> dict[str, Any]:
    return {
        "kind": "agent-candidate-workspace-snapshot",
        "digest": sha(digit),
        "material": {
            "kind": "agent-candidate-workspace-manifest",
            "files": [{"path": path, "mode": 0o644, "sha256": sha("a"), "byteLength": 1}],
        },
        "manifest": embedded(digit),
        "archive": embedded("b"),
    }


_PLAN: dict[str, Any] = {
    "kind": "agent-candidate-execution-plan-material",
    "runCell": RUN_CELL,
    "executionId": "execution-1",
    "workspaces": {"taskRoot": "/work/task", "candidateRoot": "/work/candidate"},
    "codeKind": "git-patch",
    "candidateWorkspace": workspace("dist/agent.js", "5"),
    "profile": {"planDigest": sha("6"), "targetWorkspace": "task", "mountPaths": []},
    "harness": "codex",
    "harnessVersion": "0.1.0",
    "instructionDelivery": {
        "kind": "utf8-file",
        "env": "TANGLE_CANDIDATE_TASK_PATH",
        "path": "/tangle/input/task.txt",
    },
    "limits": LIMITS,
    "container": {
        "source": "evaluator-task-container",
        "image": "pier-task:0.3",
        "indexDigest": sha("7"),
        "manifestDigest": sha("8"),
        "platform": {"os": "linux", "architecture": "amd64"},
    },
    "model": {
        "policy": "single",
        "resolved": RESOLVED,
        "access": {
            "kind": "evaluator-mediated",
            "grantDigest": sha("9"),
            "network": {"mode": "gateway-only", "domains": ["router.tangle.tools"]},
        },
        "routes": [
            {"kind": "primary", "requested": "openai/gpt-5.4"},
            {"kind": "subagent", "name": "reviewer", "requested": "openai/gpt-5.4"},
        ],
    },
    "launch": {
        "executable": "node",
        "args": [{"kind": "public", "value": "dist/agent.js"}],
        "env": {
            "PATH": {"kind": "public", "value": "/usr/local/bin:/usr/bin:/bin"},
            "TANGLE_CANDIDATE_TASK_PATH": {"kind": "public", "value": "/tangle/input/task.txt"},
        },
        "cwd": {"workspace": "task", "path": "."},
    },
    "memory": {"mode": "disabled"},
    "network": {"mode": "disabled"},
}

_PROFILE_PLAN: dict[str, Any] = {
    "kind": "agent-profile-workspace-plan",
    "digest": sha("1"),
    "material": {
        "sourceProfileDigest": sha("0"),
        "harness": "codex",
        "files": [{"relPath": ".codex/instructions.md", "mode": 0o664, "contentSha256": INSTRUCTIONS_SHA}],
        "env": {},
        "flags": [],
        "unsupported": [],
    },
    "artifact": embedded("1"),
}

_TASK: dict[str, Any] = {
    "kind": "agent-candidate-benchmark-task",
    "digestAlgorithm": "rfc8785-sha256",
    "benchmark": {"name": "support-agent", "version": "2026-07-15", "splitDigest": sha("3")},
    "scenario": {"id": "case-17", "kind": "support-ticket", "scenarioDigest": sha("2")},
    "datasetSnapshot": s3("datasets/support.json", "1"),
    "instruction": "Resolve the customer request using the available tools.",
    "outcome": {"kind": "output", "mediaType": "text/plain", "maxBytes": 64_000},
    "workspace": {
        "kind": "agent-candidate-workspace-snapshot",
        "digest": sha("4"),
        "material": {"kind": "agent-candidate-workspace-manifest", "files": []},
        "manifest": s3("tasks/case-17.manifest", "4"),
        "archive": s3("tasks/case-17.tar", "6"),
    },
    "grader": {
        "name": "exact-reference",
        "version": "1.0.0",
        "format": "tangle-grader",
        "artifact": s3("graders/case-17.json", "7"),
    },
    "model": {**RESOLVED, "snapshot": "gpt-5.4-2026-07-15"},
    "attempt": {"maxAttempts": 2, "retryPolicy": "pre-model-infrastructure-only"},
    "evaluatorTaskContainer": {
        "source": "evaluator-task-container",
        "image": "ghcr.io/tangle-network/agent:sha-abc",
        "indexDigest": sha("8"),
        "manifestDigest": sha("9"),
        "platform": {"os": "linux", "architecture": "amd64"},
    },
    "limits": LIMITS,
    "digest": sha("a"),
}


def plan() -> dict[str, Any]:
    """The reference's ``planFixture()``: an active git-patch plan on an evaluator image."""
    return copy.deepcopy(_PLAN)


def disabled_plan() -> dict[str, Any]:
    """A control plan: code disabled, no candidate root or workspace."""
    value = plan()
    value["codeKind"] = "disabled"
    del value["candidateWorkspace"]
    value["workspaces"] = {"taskRoot": "/work/task"}
    return value


def profile_plan() -> dict[str, Any]:
    return copy.deepcopy(_PROFILE_PLAN)


def activation() -> dict[str, Any]:
    return {
        "kind": "agent-candidate-profile-activation",
        "profilePlan": profile_plan(),
        "files": [{"path": ".codex/instructions.md", "mode": 0o664, "content": "exact"}],
        "digest": sha("3"),
    }


def task() -> dict[str, Any]:
    """The reference's output task fixture (its digest is a placeholder)."""
    return copy.deepcopy(_TASK)


def suite() -> dict[str, Any]:
    return {
        "kind": "agent-candidate-benchmark-suite",
        "digestAlgorithm": "rfc8785-sha256",
        "taskDigests": [sha("a")],
        "reps": 2,
        "seeds": [42, 43],
        "digest": sha("f"),
    }
