"""The reference test suite's candidate bundle fixture, as plain wire JSON."""

from __future__ import annotations

import copy
from typing import Any


def sha(digit: str) -> str:
    return "sha256:" + digit * 64


def git(digit: str) -> str:
    return digit * 40


def embedded(digit: str, content: str = "e30=", byte_length: int = 2) -> dict[str, Any]:
    return {"encoding": "base64", "content": content, "sha256": sha(digit), "byteLength": byte_length}


def snapshot(digest: str, files: list[dict[str, Any]], archive: str = "e") -> dict[str, Any]:
    return {
        "kind": "agent-candidate-workspace-snapshot",
        "digest": sha(digest),
        "material": {"kind": "agent-candidate-workspace-manifest", "files": files},
        "manifest": embedded(digest),
        "archive": embedded(archive),
    }


REPOSITORY = {"kind": "github", "owner": "tangle-network", "repo": "agent-runtime"}
ISOLATION = {"network": "disabled", "remoteIntegrations": "disabled", "candidateSecrets": "disabled"}

_BUNDLE: dict[str, Any] = {
    "kind": "agent-candidate-bundle",
    "digestAlgorithm": "rfc8785-sha256",
    "profile": {
        "name": "repository-agent",
        "harness": "codex",
        "model": {"default": "openai/gpt-5.4", "reasoningEffort": "high"},
        "prompt": {"systemPrompt": "Solve the repository task."},
        "resources": {
            "files": [
                {
                    "path": ".agent/policy.json",
                    "resource": {
                        "kind": "inline",
                        "name": "policy",
                        "content": "{}",
                        "sha256": sha("b"),
                        "byteLength": 2,
                    },
                }
            ],
            "failOnError": True,
        },
    },
    "code": {
        "kind": "git-patch",
        "repository": REPOSITORY,
        "baseCommit": git("1"),
        "baseTree": git("2"),
        "candidateTree": git("4"),
        "patch": {"format": "git-diff-binary", "artifact": embedded("5", "ZGlmZiAtLWdpdA==", 10)},
    },
    "execution": {
        "harness": "codex",
        "harnessVersion": "0.1.0",
        "launch": {
            "kind": "candidate-entrypoint",
            "interpreter": "node",
            "entrypoint": "dist/agent.js",
            "args": [{"kind": "public", "value": "--mode=benchmark"}],
        },
        "instructionDelivery": {"kind": "argv-append"},
        "cwd": {"workspace": "candidate", "path": "."},
        "env": {
            "NODE_ENV": {"kind": "public", "value": "production"},
            "PATH": {"kind": "public", "value": "/usr/local/bin:/usr/bin:/bin"},
        },
        "environment": {
            "kind": "pinned-container",
            "container": {"image": "node:22", "indexDigest": sha("6")},
        },
        "workspace": snapshot(
            "c", [{"path": "dist/agent.js", "mode": 0o755, "sha256": sha("d"), "byteLength": 42}]
        ),
        "isolation": ISOLATION,
    },
    "knowledge": {
        "candidate": {
            "kind": "knowledge-improvement-candidate",
            "runId": "knowledge-run-17",
            "candidateId": "knowledge-17",
            "goalHash": sha("5"),
            "baseHash": sha("6"),
            "candidateHash": sha("7"),
            "evidenceHash": sha("8"),
            "promotionPlanHash": sha("9"),
        },
        "snapshot": snapshot("7", [], archive="8"),
        "retrievalConfig": embedded("9"),
        "evaluation": embedded("a"),
    },
    "memory": {"mode": "isolated", "scope": "task"},
    "digest": sha("a"),
}


def bundle() -> dict[str, Any]:
    """A fresh deep copy of the reference fixture (its digest is a placeholder)."""
    return copy.deepcopy(_BUNDLE)


def execution() -> dict[str, Any]:
    return copy.deepcopy(_BUNDLE["execution"])
