"""Candidate bundles with real bytes for the verifier tests: every digest is computed."""

from __future__ import annotations

import base64
import copy
import hashlib
import io
import tarfile
from typing import Any

from agent_interface.core.canonical import canonical_bytes, canonical_digest

GITHUB_COMMIT = "c" * 40
SKILL_TEXT = b"# review skill\nRead the diff twice.\n"
SEED_BYTES = b'{"memories":[]}'
ISOLATION = {"network": "disabled", "remoteIntegrations": "disabled", "candidateSecrets": "disabled"}
PUBLIC_PATH = {"PATH": {"kind": "public", "value": "/usr/local/bin:/usr/bin:/bin"}}


def sha256(content: bytes) -> str:
    return "sha256:" + hashlib.sha256(content).hexdigest()


def embedded(content: bytes) -> dict[str, Any]:
    return {
        "encoding": "base64",
        "content": base64.b64encode(content).decode("ascii"),
        "sha256": sha256(content),
        "byteLength": len(content),
    }


def tar_of(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.USTAR_FORMAT) as archive:
        for path in sorted(files):
            info = tarfile.TarInfo(path)
            info.size = len(files[path])
            info.mode = 0o644
            archive.addfile(info, io.BytesIO(files[path]))
    return buffer.getvalue()


def snapshot(files: dict[str, bytes]) -> dict[str, Any]:
    material = {
        "kind": "agent-candidate-workspace-manifest",
        "files": [
            {"path": path, "mode": 0o644, "sha256": sha256(content), "byteLength": len(content)}
            for path, content in sorted(files.items())
        ],
    }
    manifest = canonical_bytes(material)
    return {
        "kind": "agent-candidate-workspace-snapshot",
        "digest": sha256(manifest),
        "material": material,
        "manifest": embedded(manifest),
        "archive": embedded(tar_of(files)),
    }


def seal(bundle: dict[str, Any]) -> dict[str, Any]:
    """The bundle with its digest recomputed (a tamperer can always do this)."""
    sealed = copy.deepcopy(bundle)
    sealed.pop("digest", None)
    sealed["digest"] = canonical_digest(sealed)
    return sealed


def _profile() -> dict[str, Any]:
    policy = b'{"review":true}'
    return {
        "name": "repository-agent",
        "harness": "codex",
        "prompt": {"systemPrompt": "Solve the repository task."},
        "resources": {
            "files": [
                {
                    "path": ".agent/policy.json",
                    "resource": {
                        "kind": "inline",
                        "name": "policy",
                        "content": policy.decode(),
                        "sha256": sha256(policy),
                        "byteLength": len(policy),
                    },
                }
            ],
            "failOnError": True,
        },
    }


def _repository() -> dict[str, str]:
    return {"kind": "github", "owner": "tangle-network", "repo": "demo"}


def disabled_bundle() -> dict[str, Any]:
    return seal(
        {
            "kind": "agent-candidate-bundle",
            "digestAlgorithm": "rfc8785-sha256",
            "profile": _profile(),
            "code": {"kind": "disabled"},
            "execution": {
                "harness": "codex",
                "harnessVersion": "0.1.0",
                "launch": {"kind": "container-command", "executable": "codex"},
                "instructionDelivery": {"kind": "argv-append"},
                "cwd": {"workspace": "task", "path": "."},
                "env": PUBLIC_PATH,
                "environment": {"kind": "evaluator-task-container"},
                "isolation": ISOLATION,
            },
            "memory": {"mode": "disabled"},
        }
    )


def active_bundle(code: dict[str, Any], workspace_files: dict[str, bytes]) -> dict[str, Any]:
    return seal(
        {
            "kind": "agent-candidate-bundle",
            "digestAlgorithm": "rfc8785-sha256",
            "profile": _profile(),
            "code": code,
            "execution": {
                "harness": "codex",
                "harnessVersion": "0.1.0",
                "launch": {
                    "kind": "candidate-entrypoint",
                    "interpreter": "python3",
                    "entrypoint": "src/agent.py",
                },
                "instructionDelivery": {"kind": "stdin-utf8"},
                "cwd": {"workspace": "candidate", "path": "."},
                "env": PUBLIC_PATH,
                "environment": {
                    "kind": "pinned-container",
                    "container": {"image": "python:3.12", "indexDigest": sha256(b"index")},
                },
                "workspace": snapshot(workspace_files),
                "isolation": ISOLATION,
            },
            "knowledge": {
                "candidate": {
                    "kind": "knowledge-improvement-candidate",
                    "runId": "knowledge-run-1",
                    "candidateId": "knowledge-1",
                    "goalHash": sha256(b"goal"),
                    "baseHash": sha256(b"base"),
                    "candidateHash": sha256(b"candidate"),
                    "evidenceHash": sha256(b"evidence"),
                    "promotionPlanHash": sha256(b"plan"),
                },
                "snapshot": snapshot({"notes/facts.md": b"- the tests live in tests/\n"}),
                "evaluation": embedded(b'{"score":1}'),
            },
            "memory": {"mode": "isolated", "scope": "task"},
        }
    )


def no_op_bundle(base_commit: str, base_tree: str, files: dict[str, bytes]) -> dict[str, Any]:
    code = {
        "kind": "no-op",
        "reason": "proposer-no-change",
        "repository": _repository(),
        "baseCommit": base_commit,
        "baseTree": base_tree,
    }
    return active_bundle(code, files)


def git_patch_bundle(
    base_commit: str, base_tree: str, candidate_tree: str, patch: bytes, files: dict[str, bytes]
) -> dict[str, Any]:
    code = {
        "kind": "git-patch",
        "repository": _repository(),
        "baseCommit": base_commit,
        "baseTree": base_tree,
        "candidateTree": candidate_tree,
        "patch": {"format": "git-diff-binary", "artifact": embedded(patch)},
    }
    return active_bundle(code, files)


def with_external_artifacts(bundle: dict[str, Any]) -> dict[str, Any]:
    """Adds an S3 memory seed and a GitHub-pinned skill, then reseals."""
    changed = copy.deepcopy(bundle)
    changed["memory"] = {
        "mode": "isolated",
        "scope": "task",
        "seed": {
            "locator": {
                "kind": "s3",
                "bucket": "candidate-artifacts",
                "key": "seeds/memory.json",
                "region": "us-east-1",
            },
            "sha256": sha256(SEED_BYTES),
            "byteLength": len(SEED_BYTES),
        },
    }
    changed["profile"]["resources"]["skills"] = [
        {
            "kind": "github",
            "repository": {"kind": "github", "owner": "tangle-network", "repo": "skills"},
            "path": "skills/review.md",
            "commit": GITHUB_COMMIT,
            "sha256": sha256(SKILL_TEXT),
            "byteLength": len(SKILL_TEXT),
        }
    ]
    return seal(changed)


EXTERNAL_BYTES = {sha256(SEED_BYTES): SEED_BYTES, sha256(SKILL_TEXT): SKILL_TEXT}
