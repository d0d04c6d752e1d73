"""Write a small, real experiment: a baseline agent and a candidate whose patch fixes its bug.

Run: ``python examples/experiment/make_experiment.py --out DIR [--reps N]``, then
``agent-interface experiment run DIR/experiment.json --out DIR/run --repository DIR/agent.git``.

It creates two small Git repositories with fixed dates (so every id is the same on every
machine):

* ``calc`` (the task's repository): ``calc.py`` whose ``add`` subtracts, and
  ``test_calc.py``. The task (a workspace outcome) asks to fix ``add``; its grader,
  ``agent-interface/workspace-command``, runs ``python3 -I -m unittest`` on the patched
  workspace (with ``test_calc.py`` restored first, so an agent cannot edit the test, and
  nothing the agent adds taking part: see ``docs/security.md``).
* ``agent`` (the agents' repository, written as the bare clone ``agent.git``): ``agent.py``
  asks the evaluator's model gateway once (an OpenAI chat completion with
  ``urllib.request``, to ``$OPENAI_BASE_URL`` through ``$HTTP_PROXY``), then edits ``calc.py``. The baseline
  (``no-op`` code) has a bug: it writes ``a * b``. The candidate's ``git-patch`` fixes it
  to write ``a + b``.

``experiment.json`` freezes both bundles, the suite (the task, ``--reps`` repetitions,
one seed per repetition) and an evaluation policy. ``artifacts/`` holds the grader
document, named by CID.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import io
import json
import os
import shutil
import subprocess
import tarfile
from pathlib import Path
from typing import Any

from agent_interface.core.canonical import canonical_bytes, canonical_digest
from agent_interface.evaluator.images.host_image import program_python

ENV = {
    **{key: value for key, value in os.environ.items() if not key.startswith("GIT_")},
    "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "Example", "GIT_AUTHOR_EMAIL": "example@example.com",
    "GIT_AUTHOR_DATE": "2026-12-01T09:00:00Z", "GIT_COMMITTER_NAME": "Example",
    "GIT_COMMITTER_EMAIL": "example@example.com", "GIT_COMMITTER_DATE": "2026-12-01T09:00:00Z",
}
CALC = {
    "calc.py": b"def add(a, b):\n    return a - b\n",
    "test_calc.py": b"import unittest\n\nfrom calc import add\n\n\nclass AddTest(unittest.TestCase):\n"
                    b"    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n\n\n"
                    b"if __name__ == '__main__':\n    unittest.main()\n",
}
AGENT = """import json
import os
import sys
import urllib.request

instruction = sys.stdin.read()
# The evaluator's model gateway, an OpenAI-compatible API, reached through the proxy the
# evaluator names (HTTP_PROXY): the only way out of the agent's network namespace.
request = urllib.request.Request(
    os.environ["OPENAI_BASE_URL"] + "/chat/completions",
    data=json.dumps({"model": "demo-model", "messages": [{"role": "user", "content": instruction}]}).encode(),
    headers={"Content-Type": "application/json", "Authorization": "Bearer " + os.environ["OPENAI_API_KEY"]})
with urllib.request.urlopen(request, timeout=60) as response:
    reply = json.load(response)["choices"][0]["message"]["content"]
with open("calc.py", encoding="utf-8") as handle:
    source = handle.read()
with open("calc.py", "w", encoding="utf-8") as handle:
    handle.write(source.replace("a - b", "a %s b"))
print("patched calc.py;", reply[:40])
"""
INSTRUCTION = "Fix add() in calc.py so that the tests pass."


def git(repo: Path, *args: str) -> bytes:
    return subprocess.run(["git", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", *args],
                          cwd=repo, env=ENV, capture_output=True, check=True).stdout


def commit(repo: Path, files: dict[str, bytes], message: str) -> tuple[str, str]:
    for name, data in files.items():
        (repo / name).write_bytes(data)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD").decode().strip(), git(repo, "rev-parse", "HEAD^{tree}").decode().strip()


def sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def embedded(data: bytes) -> dict[str, Any]:
    return {"encoding": "base64", "content": base64.b64encode(data).decode(), "sha256": sha256(data),
            "byteLength": len(data)}


def cid(data: bytes) -> str:
    binary = bytes((0x01, 0x55, 0x12, 0x20)) + hashlib.sha256(data).digest()
    return "b" + base64.b32encode(binary).decode("ascii").rstrip("=").lower()


def snapshot(files: dict[str, bytes]) -> dict[str, Any]:
    material = {"kind": "agent-candidate-workspace-manifest", "files": [
        {"path": path, "mode": 0o644, "sha256": sha256(data), "byteLength": len(data)}
        for path, data in sorted(files.items())]}
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for path, data in sorted(files.items()):
            info = tarfile.TarInfo(path)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    manifest = canonical_bytes(material)
    return {"kind": "agent-candidate-workspace-snapshot", "digest": sha256(manifest), "material": material,
            "manifest": embedded(manifest), "archive": embedded(archive.getvalue())}


def sealed(material: dict[str, Any]) -> dict[str, Any]:
    return {**material, "digest": canonical_digest(material)}


def bundle(code: dict[str, Any], files: dict[str, bytes]) -> dict[str, Any]:
    return sealed({
        "kind": "agent-candidate-bundle", "digestAlgorithm": "rfc8785-sha256",
        "profile": {"name": "calc-fixer", "harness": "codex", "prompt": {"systemPrompt": "Fix the bug."}},
        "code": code,
        "execution": {
            "harness": "codex", "harnessVersion": "0.1.0",
            "launch": {"kind": "candidate-entrypoint", "interpreter": "python3", "entrypoint": "agent.py"},
            "instructionDelivery": {"kind": "stdin-utf8"},
            "cwd": {"workspace": "task", "path": "."},
            "env": {"PATH": {"kind": "public", "value": "/usr/local/bin:/usr/bin:/bin"}},
            "environment": {"kind": "evaluator-task-container"},
            "workspace": snapshot(files),
            "isolation": {"network": "disabled", "remoteIntegrations": "disabled", "candidateSecrets": "disabled"},
        },
        "memory": {"mode": "disabled"},
    })


def make(out: Path, reps: int = 1, *, grader: dict[str, Any] | None = None, baseline_agent: str | None = None,
         retry: dict[str, Any] | None = None, task_container: dict[str, Any] | None = None) -> dict[str, Path]:
    """Write the example into ``out`` (created); the paths of what a run needs.

    Tests vary it: ``grader`` replaces the grader's command (name, executable, args,
    timeoutMs) or document keys, ``baseline_agent`` the baseline's ``agent.py``, ``retry``
    the task's attempt policy; ``task_container`` is the task's ``evaluatorTaskContainer``
    (the OCI image both arms and the grader run in: it needs ``python3`` on the bundles'
    ``PATH`` and the grader's interpreter), so that the cells run in containers and the
    measured comparison binds their container."""
    out.mkdir(parents=True, exist_ok=True)
    for name in ("calc", "agent", "agent.git", "artifacts"):
        shutil.rmtree(out / name, ignore_errors=True)
    calc, agent = out / "calc", out / "agent"
    calc.mkdir()
    agent.mkdir()
    git(calc, "init", "-q")
    calc_commit, calc_tree = commit(calc, CALC, "calc with a bug")
    git(agent, "init", "-q")
    buggy = {"agent.py": (baseline_agent or AGENT % "*").encode()}
    base_commit, base_tree = commit(agent, buggy, "agent")
    fixed = {"agent.py": (AGENT % "+").encode()}
    _, candidate_tree = commit(agent, fixed, "fix: add, not multiply")
    patch = git(agent, "diff", "--binary", "--full-index", base_commit, "HEAD")
    git(out, "clone", "-q", "--bare", str(agent), str(out / "agent.git"))
    repository = {"kind": "github", "owner": "example", "repo": "calc-fixer"}
    baseline = bundle({"kind": "no-op", "reason": "proposer-no-change", "repository": repository,
                       "baseCommit": base_commit, "baseTree": base_tree}, buggy)
    candidate = bundle({"kind": "git-patch", "repository": repository, "baseCommit": base_commit,
                        "baseTree": base_tree, "candidateTree": candidate_tree,
                        "patch": {"format": "git-diff-binary", "artifact": embedded(patch)}}, fixed)
    python = program_python()  # one that the programs' own user can execute
    document: dict[str, Any] = {"kind": "agent-interface.workspace-command.v1", "commands": [
        {"name": "tests", "executable": python, "timeoutMs": 30_000,
         "args": ["-I", "-B", "-m", "unittest", "discover", "-s", ".", "-p", "test_calc.py"]}],
        "restore": ["test_calc.py"], "maxOutputBytes": 65536}
    document.update(grader or {})
    grader_bytes = json.dumps(document, sort_keys=True).encode()
    (out / "artifacts").mkdir()
    (out / "artifacts" / cid(grader_bytes)).write_bytes(grader_bytes)
    container = {} if task_container is None else {"evaluatorTaskContainer": task_container}
    task = sealed({
        **container,
        "kind": "agent-candidate-benchmark-task", "digestAlgorithm": "rfc8785-sha256",
        "benchmark": {"name": "calc-bench", "version": "1", "splitDigest": sha256(b"calc held-out split")},
        "scenario": {"id": "fix-add", "kind": "bugfix", "scenarioDigest": sha256(b"fix-add")},
        "instruction": INSTRUCTION,
        "repository": {"identity": "example/calc", "rootIdentity": "example/calc", "baseCommit": calc_commit,
                       "baseTree": calc_tree},
        "outcome": {"kind": "workspace"},
        "workspace": snapshot(CALC),
        "grader": {"name": "agent-interface/workspace-command", "version": "1", "format": "tangle-grader",
                   "artifact": {"locator": {"kind": "ipfs", "cid": cid(grader_bytes)},
                                "sha256": sha256(grader_bytes), "byteLength": len(grader_bytes)}},
        "model": {"requested": "demo-model", "provider": "local", "model": "echo", "snapshot": "echo-1",
                  "reasoningEffort": "low"},
        "attempt": retry or {"maxAttempts": 1, "retryPolicy": "none"},
        "limits": {"timeoutMs": 60000, "maxSteps": 8, "maxModelCalls": 4, "maxInputTokens": 10000,
                   "maxOutputTokens": 10000, "maxTotalTokens": 20000, "maxCostUsd": 0},
        **({"evaluatorTaskContainer": task_container} if task_container is not None else {}),
    })
    suite = sealed({"kind": "agent-candidate-benchmark-suite", "digestAlgorithm": "rfc8785-sha256",
                    "taskDigests": [task["digest"]], "reps": reps, "seeds": list(range(1, reps + 1))})
    experiment = sealed({
        "kind": "agent-candidate-experiment", "digestAlgorithm": "rfc8785-sha256",
        "baseline": baseline, "candidate": candidate,
        "candidateLineage": {"source": "optimizer", "parentDigests": [baseline["digest"]], "runIds": ["dev-1"],
                             "developmentSplitDigest": sha256(b"calc development split")},
        "benchmark": {"suite": suite, "tasks": [task]},
        "policy": {"confidenceLevel": 0.95, "resamples": 2000, "bootstrapSeed": 1337, "deltaThreshold": 0,
                   "minProductiveRuns": 3, "budgetUsd": 1, "criticalDimensions": ["tests"],
                   "regressionTolerance": 0.05},
    })
    (out / "experiment.json").write_text(json.dumps(experiment, indent=2) + "\n", encoding="utf-8")
    return {"experiment": out / "experiment.json", "repository": out / "agent.git", "artifacts": out / "artifacts"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--reps", type=int, default=1)
    parser.add_argument("--task-container", metavar="JSON",
                        help="the task's evaluatorTaskContainer (source, image, indexDigest, manifestDigest, "
                        "platform), so that every cell runs in that OCI image")
    args = parser.parse_args()
    container = None if args.task_container is None else json.loads(args.task_container)
    for name, path in make(args.out, args.reps, task_container=container).items():
        print(f"{name:12} {path}")


if __name__ == "__main__":
    main()
