"""Regenerate the worked candidate-verification example in this folder.

Run: ``.venv/bin/python examples/candidate/make_example.py [--out DIR]``.

It builds a small real Git repository with fixed author dates (so commit and tree ids
are the same on every machine), makes a candidate change (an edit, a binary file change
and a rename), and writes, with the public builders of ``agent_interface.evaluator.author``
(no digest is computed by hand):

* ``repository.bundle``: the base commit as a Git bundle (``git clone`` it to verify);
* ``bundle.json``: the intact AgentCandidateBundle carrying the binary patch;
* ``tampered-bundle.json``: the same bundle with its patch rewritten and every
  digest (artifact and bundle) recomputed, which only Git's tree id exposes.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from agent_interface import seal_agent_candidate_bundle
from agent_interface.core.canonical import canonical_digest
from agent_interface.evaluator.author import (
    BenchmarkSuiteBuilder,
    BenchmarkTaskBuilder,
    CandidateBundleBuilder,
)
from agent_interface.evaluator.author.artifacts import embedded_artifact

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
import sys
import urllib.request

# The instruction arrives on stdin (the bundle's instructionDelivery), then EOF.
instruction = sys.stdin.read()
# The evaluator's model gateway is the only way to a model: an OpenAI-compatible API at
# OPENAI_BASE_URL, reached through the evaluator's proxy (HTTP_PROXY); the key is the run's
# ephemeral token, never a provider secret.
request = urllib.request.Request(
    os.environ["OPENAI_BASE_URL"] + "/chat/completions",
    data=json.dumps({"model": "demo-model", "messages": [{"role": "user", "content": instruction}]}).encode(),
    headers={"Content-Type": "application/json", "Authorization": "Bearer " + os.environ["OPENAI_API_KEY"]})
with urllib.request.urlopen(request, timeout=60) as response:
    reply = json.load(response)["choices"][0]["message"]["content"]
answer = "hello, candidate: " + reply
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


def make(out: Path) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        base = Path(scratch) / "base"
        base.mkdir()
        git(base, "init", "-q")
        write(base, BASE)
        git(base, "add", "-A")
        git(base, "commit", "-q", "-m", "base")
        git(base, "bundle", "create", str(out / "repository.bundle"), "HEAD", "main")
        write(base, CHANGE)
        git(base, "mv", "docs/notes.md", "docs/guide.md")
        git(base, "add", "-A")
        git(base, "commit", "-q", "-m", "candidate")

        # The public builder computes the patch, trees, workspace snapshot and digests,
        # and verifies the bundle against the repository before returning it.
        builder = (
            CandidateBundleBuilder("demo-agent")
            .code_from_git(base, base="HEAD~1", head="HEAD", owner="tangle-network", repo="demo-agent")
            .entrypoint("src/agent.py", interpreter="python3")
            .system_prompt("Solve the repository task.")
        )
        bundle = builder.build()
    dump(out / "bundle.json", bundle.to_wire())
    # The tampered bundle rewrites the patch and recomputes every digest: only Git's tree
    # id exposes it, so it is sealed without the verification build() runs.
    material = builder.material()
    artifact = material["code"]["patch"]["artifact"]
    rewritten = base64.b64decode(artifact["content"]).replace(b"hello, candidate", b"hello, attacker!")
    material["code"]["patch"]["artifact"] = embedded_artifact(rewritten)
    dump(out / "tampered-bundle.json", seal_agent_candidate_bundle(material).to_wire())

    task_builder = (
        BenchmarkTaskBuilder("demo-bench", "1", scenario="greet", scenario_kind="chat")
        .instruction(INSTRUCTION)
        .output(max_bytes=4096)
        .workspace({"TASK.md": INSTRUCTION.encode() + b"\n"})
        .grader("agent-interface/output-checks", "1", GRADER)
    )
    task = task_builder.build()
    task_builder.artifacts.write_to(out / "artifacts")
    suite = BenchmarkSuiteBuilder().task(task).build()
    dump(out / "task.json", task.to_wire())
    dump(out / "suite.json", suite.to_wire())
    dump(out / "context.json", example_context(out))


def dump(path: Path, document: dict[str, Any]) -> None:
    path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")


def example_context(out: Path) -> dict[str, Any]:
    """A CandidateMaterializationContext for bundle.json and task.json, built with the
    public builders. Its container is a placeholder (``candidate run`` selects this
    machine's real one)."""
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
    placeholder = canonical_digest({"example": "local-host image"})
    context, _ = build_materialization_context(bundle, suite, task, CandidateRunPlacement(
        experiment_digest=canonical_digest({"kind": "agent-interface.local-run", "suite": suite.digest}),
        execution_id="example-execution",
        grant_digest=canonical_digest({"example": "model grant"}),
        container={"source": "evaluator-task-container", "image": "local-host", "indexDigest": placeholder,
                   "manifestDigest": placeholder, "platform": {"os": "linux", "architecture": "amd64"}},
        evaluator_env={"OPENAI_BASE_URL": "http://model-gateway.internal/v1",
                       "ANTHROPIC_BASE_URL": "http://model-gateway.internal", "HTTP_PROXY": "http://127.0.0.1:800"},
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
