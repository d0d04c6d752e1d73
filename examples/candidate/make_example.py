"""Regenerate the worked candidate-verification example in this folder.

Run: ``.venv/bin/python examples/candidate/make_example.py [--out DIR]``.

It builds a small real Git repository with fixed author dates (so commit and tree ids
are the same on every machine), makes a candidate change (an edit, a binary file change
and a rename), and writes:

* ``repository.bundle``: the base commit as a Git bundle (``git clone`` it to verify);
* ``bundle.json``: the intact AgentCandidateBundle carrying the binary patch;
* ``tampered-bundle.json``: the same bundle with its patch rewritten and every
  digest (artifact and bundle) recomputed, which only Git's tree id exposes.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import io
import json
import os
import subprocess
import tarfile
import tempfile
from pathlib import Path
from typing import Any

from agent_interface.core.canonical import canonical_bytes, canonical_digest

HERE = Path(__file__).resolve().parent
ENV = {
    **{key: value for key, value in os.environ.items() if not key.startswith("GIT_")},
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "Example Author",
    "GIT_AUTHOR_EMAIL": "author@example.com",
    "GIT_AUTHOR_DATE": "2026-11-30T09:00:00Z",
    "GIT_COMMITTER_NAME": "Example Author",
    "GIT_COMMITTER_EMAIL": "author@example.com",
    "GIT_COMMITTER_DATE": "2026-11-30T09:00:00Z",
}
LOGO = bytes((index * 7) % 256 for index in range(512))
BASE = {
    "README.md": b"# demo agent\n",
    "src/agent.py": b"import sys\n\nprint('hello', sys.stdin.read())\n",
    "assets/logo.bin": LOGO,
    "docs/notes.md": b"How the demo agent works.\n" * 3,
}
AGENT = b"""import json
import os
import socket
import sys

# The instruction arrives on stdin (the bundle's instructionDelivery), then EOF.
instruction = sys.stdin.read()
# The evaluator's model endpoint is the only way to a model (the network is blocked).
endpoint = os.environ["TANGLE_MODEL_ENDPOINT"].removeprefix("unix:")
with socket.socket(socket.AF_UNIX) as connection:
    connection.connect(endpoint)
    connection.sendall(json.dumps({"input": instruction}).encode() + b"\\n")
    reply = json.loads(connection.makefile("rb").readline())
answer = "hello, candidate: " + reply["output"]
with open("answer.txt", "w", encoding="utf-8") as handle:
    handle.write(answer + "\\n")
print(answer)
"""
CHANGE = {
    "src/agent.py": AGENT,
    "assets/logo.bin": LOGO[::-1],
}
INSTRUCTION = "Greet the evaluator in one line."
GRADER = json.dumps(
    {
        "kind": "agent-interface.output-checks.v1",
        "checks": [
            {"name": "greets", "contains": "hello, candidate"},
            {"name": "asked-the-model", "contains": "echo: Greet the evaluator"},
            {"name": "one-line", "maxBytes": 200},
        ],
    },
    sort_keys=True,
).encode()


def git(repo: Path, *args: str) -> bytes:
    return subprocess.run(
        ["git", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", *args],
        cwd=repo, env=ENV, capture_output=True, check=True,
    ).stdout


def write(repo: Path, files: dict[str, bytes]) -> None:
    for name, content in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_bytes(content)


def sha256(content: bytes) -> str:
    return "sha256:" + hashlib.sha256(content).hexdigest()


def embedded(content: bytes) -> dict[str, Any]:
    return {
        "encoding": "base64",
        "content": base64.b64encode(content).decode("ascii"),
        "sha256": sha256(content),
        "byteLength": len(content),
    }


def snapshot(files: dict[str, bytes]) -> dict[str, Any]:
    material = {
        "kind": "agent-candidate-workspace-manifest",
        "files": [
            {"path": path, "mode": 0o644, "sha256": sha256(data), "byteLength": len(data)}
            for path, data in sorted(files.items())
        ],
    }
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for path, data in sorted(files.items()):
            info = tarfile.TarInfo(path)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    manifest = canonical_bytes(material)
    return {
        "kind": "agent-candidate-workspace-snapshot",
        "digest": sha256(manifest),
        "material": material,
        "manifest": embedded(manifest),
        "archive": embedded(archive.getvalue()),
    }


def seal(bundle: dict[str, Any]) -> dict[str, Any]:
    material = {key: value for key, value in bundle.items() if key != "digest"}
    return {**material, "digest": canonical_digest(material)}


def candidate_bundle(code: dict[str, Any], workspace: dict[str, bytes]) -> dict[str, Any]:
    return seal(
        {
            "kind": "agent-candidate-bundle",
            "digestAlgorithm": "rfc8785-sha256",
            "profile": {
                "name": "demo-agent",
                "harness": "codex",
                "prompt": {"systemPrompt": "Solve the repository task."},
            },
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
                "env": {"PATH": {"kind": "public", "value": "/usr/local/bin:/usr/bin:/bin"}},
                "environment": {"kind": "evaluator-task-container"},
                "workspace": snapshot(workspace),
                "isolation": {
                    "network": "disabled",
                    "remoteIntegrations": "disabled",
                    "candidateSecrets": "disabled",
                },
            },
            "memory": {"mode": "disabled"},
        }
    )


def cid(content: bytes) -> str:
    """CIDv1, raw codec, sha2-256, base32 (as agent_interface.candidate.cid computes it)."""
    binary = bytes((0x01, 0x55, 0x12, 0x20)) + hashlib.sha256(content).digest()
    return "b" + base64.b32encode(binary).decode("ascii").rstrip("=").lower()


def task_documents(out: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """The signed task (stdout output, checked by the output-checks grader) and its suite."""
    store = out / "artifacts"
    store.mkdir(exist_ok=True)
    (store / cid(GRADER)).write_bytes(GRADER)
    material = {
        "kind": "agent-candidate-benchmark-task",
        "digestAlgorithm": "rfc8785-sha256",
        "benchmark": {"name": "demo-bench", "version": "1", "splitDigest": sha256(b"demo-split")},
        "scenario": {"id": "greet", "kind": "chat", "scenarioDigest": sha256(b"greet")},
        "instruction": INSTRUCTION,
        "outcome": {"kind": "output", "mediaType": "text/plain", "maxBytes": 4096},
        "workspace": snapshot({"TASK.md": INSTRUCTION.encode() + b"\n"}),
        "grader": {
            "name": "agent-interface/output-checks",
            "version": "1",
            "format": "tangle-grader",
            "artifact": {"locator": {"kind": "ipfs", "cid": cid(GRADER)}, "sha256": sha256(GRADER),
                         "byteLength": len(GRADER)},
        },
        "model": {"requested": "demo-model", "provider": "local", "model": "echo", "snapshot": "echo-1",
                  "reasoningEffort": "low"},
        "attempt": {"maxAttempts": 1, "retryPolicy": "none"},
        "limits": {"timeoutMs": 60000, "maxSteps": 8, "maxModelCalls": 4, "maxInputTokens": 10000,
                   "maxOutputTokens": 10000, "maxTotalTokens": 20000, "maxCostUsd": 0},
    }
    task = {**material, "digest": canonical_digest(material)}
    suite_material = {"kind": "agent-candidate-benchmark-suite", "digestAlgorithm": "rfc8785-sha256",
                      "taskDigests": [task["digest"]], "reps": 1, "seeds": [0]}
    return task, {**suite_material, "digest": canonical_digest(suite_material)}


def dump(path: Path, document: dict[str, Any]) -> None:
    path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")


def make(out: Path) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        base = Path(scratch) / "base"
        base.mkdir()
        git(base, "init", "-q")
        write(base, BASE)
        git(base, "add", "-A")
        git(base, "commit", "-q", "-m", "base")
        base_commit = git(base, "rev-parse", "HEAD").decode().strip()
        base_tree = git(base, "rev-parse", "HEAD^{tree}").decode().strip()
        git(base, "bundle", "create", str(out / "repository.bundle"), "HEAD", "main")

        work = Path(scratch) / "work"
        git(Path(scratch), "clone", "-q", str(base), str(work))
        write(work, CHANGE)
        git(work, "mv", "docs/notes.md", "docs/guide.md")
        git(work, "add", "-A")
        git(work, "commit", "-q", "-m", "candidate")
        candidate_tree = git(work, "rev-parse", "HEAD^{tree}").decode().strip()
        patch = git(work, "diff", "--binary", "-M", base_commit, "HEAD")
        files = {
            name: git(work, "show", f"HEAD:{name}")
            for name in git(work, "ls-files").decode().splitlines()
        }

    code = {
        "kind": "git-patch",
        "repository": {"kind": "github", "owner": "tangle-network", "repo": "demo-agent"},
        "baseCommit": base_commit,
        "baseTree": base_tree,
        "candidateTree": candidate_tree,
        "patch": {"format": "git-diff-binary", "artifact": embedded(patch)},
    }
    dump(out / "bundle.json", candidate_bundle(code, files))
    rewritten = patch.replace(b"hello, candidate", b"hello, attacker!")
    tampered = {**code, "patch": {"format": "git-diff-binary", "artifact": embedded(rewritten)}}
    dump(out / "tampered-bundle.json", candidate_bundle(tampered, files))
    task, suite = task_documents(out)
    dump(out / "task.json", task)
    dump(out / "suite.json", suite)
    dump(out / "context.json", example_context(out))


def example_context(out: Path) -> dict[str, Any]:
    """A CandidateMaterializationContext for bundle.json and task.json, built with the
    public builders. Its container is a placeholder (``candidate run`` selects this
    machine's real one) and its model endpoint a fixed example path."""
    from agent_interface import (
        AgentCandidateBenchmarkSuite,
        AgentCandidateBenchmarkTask,
        AgentCandidateBundle,
    )
    from agent_interface.candidate.context_builder import (
        CandidateRunPlacement,
        build_materialization_context,
    )

    bundle = AgentCandidateBundle.parse_wire((out / "bundle.json").read_bytes())
    task = AgentCandidateBenchmarkTask.parse_wire((out / "task.json").read_bytes())
    suite = AgentCandidateBenchmarkSuite.parse_wire((out / "suite.json").read_bytes())
    placeholder = sha256(b"example local-host image")
    context, _ = build_materialization_context(bundle, suite, task, CandidateRunPlacement(
        experiment_digest=canonical_digest({"kind": "agent-interface.local-run", "suite": suite.digest}),
        execution_id="example-execution",
        grant_digest=sha256(b"example model grant"),
        container={"source": "evaluator-task-container", "image": "local-host", "indexDigest": placeholder,
                   "manifestDigest": placeholder, "platform": {"os": "linux", "architecture": "amd64"}},
        evaluator_env={"TANGLE_MODEL_ENDPOINT": "unix:/run/tangle/model.sock"},
    ))
    return context.to_wire()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    make(args.out)


if __name__ == "__main__":
    main()
