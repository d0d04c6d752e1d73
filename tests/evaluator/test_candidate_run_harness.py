"""``candidate run`` of a harness bundle (``candidate new --no-code --harness codex``): the real
Codex CLI, in an OCI container on ``runc`` from an image that holds it, reaches the model
gateway (a ``ScriptedUpstream``: a tool call that edits the task's file, then a final answer)
through the strict-egress proxy with the run's token; the task's checks grade its output; the
executor capture names the harness, the version the binary in the container reported, the
gateway's count of calls and tokens and the harness's own, which agree; the plan binds the
adapter's native files, env and flags, and the token is in no receipt. A run cut by the call
budget ends by itself and is recorded as the harness saw it. Claude Code and opencode run the
same way from their own images (``harness/claude-code``, ``harness/opencode``).

The image is the ``images`` helper's ``python/codex`` (``examples/images/codex`` on
``examples/images/python``), taken from the image store named by
``AGENT_INTERFACE_HARNESS_IMAGES`` (default ``/var/tmp/ai-images/store``); the test skips
when it is not built there, or without runc and root (and each other harness's test when
its image is not there).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from agent_interface.candidate.receipt_binding import run_receipt_matches
from agent_interface.candidate.tasks import AgentCandidateBenchmarkTask
from agent_interface.cli.main import main
from agent_interface.evaluator.gateway import ScriptedUpstream
from agent_interface.evaluator.images.oci_store import OciImageStore
from agent_interface.evaluator.run.candidate_run import run_candidate
from agent_interface.evaluator.verify.artifact_store import LocalArtifactStore

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "candidate"
STORE = Path(os.environ.get("AGENT_INTERFACE_HARNESS_IMAGES", "/var/tmp/ai-images/store"))
IMAGE = "python/codex"


def _image(name: str) -> str | None:
    if shutil.which("runc") is None or os.geteuid() != 0 or not (STORE / "index.json").is_file():
        return None
    found = [image.reference for image in OciImageStore(STORE).images() if image.name == name]
    return found[-1] if found else None


REFERENCE = _image(IMAGE)
pytestmark = pytest.mark.skipif(
    REFERENCE is None,
    reason=f"needs runc, root and the {IMAGE} image in {STORE} (agent-interface image build "
           "examples/images/codex/Containerfile --on examples/images/python/Containerfile --name python/codex)")


def _task(artifacts: Path, checks: list[dict[str, Any]] | None = None, **limits: Any) -> AgentCandidateBenchmarkTask:
    """The example task (its workspace holds ``TASK.md``), graded by checks on the output
    (the grader stored in ``artifacts`` beside the example's)."""
    wire = json.loads((EXAMPLE / "task.json").read_text())
    wire.pop("digest")
    wire["limits"].update(limits)
    wire["outcome"]["maxBytes"] = 65536
    document = {"kind": "agent-interface.output-checks.v1",
                "checks": checks or [{"name": "edited", "contains": "edited by codex"},
                                     {"name": "answered", "contains": "hello, candidate"}]}
    shutil.copytree(EXAMPLE / "artifacts", artifacts)
    wire["grader"]["artifact"] = LocalArtifactStore(artifacts).put(json.dumps(document).encode()).to_wire()
    return AgentCandidateBenchmarkTask.seal(wire)


def _bundle(tmp_path: Path, harness: str = "codex") -> bytes:
    out = tmp_path / "bundle.json"
    assert main(["candidate", "new", "--no-code", "--harness", harness, "--instructions",
                 "Edit TASK.md as asked.", "--out", str(out)]) == 0
    return out.read_bytes()


# The tool's output ("edited by codex") differs from its command text, so the check proves it ran.
_EDIT = {"name": "exec_command", "arguments": {"cmd": "printf 'edited by %s\\n' codex > TASK.md && cat TASK.md"}}


# Codex sends its whole tool catalogue and instructions: a budget sized for it.
_ROOMY = {"maxInputTokens": 10_000_000, "maxOutputTokens": 1_000_000, "maxTotalTokens": 11_000_000}


def _executor_capture(result: Any) -> dict[str, Any]:
    cid = result.run_receipt.executor_capture.to_wire()["locator"]["cid"]
    return dict(json.loads((result.out / "artifacts" / cid).read_bytes()))


def test_codex_runs_a_harness_bundle_end_to_end_through_the_gateway(tmp_path: Path) -> None:
    upstream = ScriptedUpstream([{"toolCalls": [_EDIT]}, {"text": "hello, candidate: TASK.md is edited"}])
    result = run_candidate(_bundle(tmp_path), repository=None, task=_task(tmp_path / "artifacts", **_ROOMY),
                           out=tmp_path / "out", artifacts=tmp_path / "artifacts", upstream=upstream, executor="container", images=str(STORE), image=REFERENCE)
    receipt = result.run_receipt
    assert receipt is not None, result.invalid_capture
    assert receipt.termination.to_wire() == {"kind": "exit", "exitCode": 0}
    assert receipt.benchmark_result.material.passed
    usage = receipt.model_settlement.material.usage
    assert usage.model_calls == 2
    harness = _executor_capture(result)["harness"]
    assert harness["harness"] == "codex" and harness["status"] == "completed" and harness["exitCode"] == 0
    assert harness["observedVersion"] == harness["declaredVersion"] == "0.171.0"
    gateway = harness["gateway"]
    assert gateway["modelCalls"] == 2 and gateway["refusedCalls"] == gateway["unsettledCalls"] == 0
    assert harness["usageAgrees"] is True
    assert (harness["selfReported"]["inputTokens"], harness["selfReported"]["outputTokens"]) == (
        gateway["inputTokens"], gateway["outputTokens"])
    assert (gateway["inputTokens"], gateway["outputTokens"]) == (usage.input_tokens, usage.output_tokens)
    # The plan binds the adapter's lowering (its env and flags, the home files by digest);
    # the materialization receipt was checked against the verified bundle when minted
    # (``check_plan_binding``), and the run receipt belongs to it.
    run_receipt_matches(receipt, result.materialization_receipt, result.plan)
    profile = result.materialization_receipt.to_wire()["profileActivation"]["profilePlan"]["material"]
    flags = [flag["value"] for flag in profile["flags"]]
    assert flags[:2] == ["exec", "--json"] and any(flag.startswith("home:.codex/config.toml=sha256:") for flag in flags)
    assert profile["env"]["CODEX_HOME"] == {"kind": "public", "value": "/tangle/home/.codex"}
    # The run's token is in no receipt or artifact.
    written = b"".join(path.read_bytes() for path in result.out.rglob("*") if path.is_file())
    assert b"/r/" not in written


def test_a_codex_run_cut_by_the_call_budget_is_recorded_as_the_harness_saw_it(tmp_path: Path) -> None:
    upstream = ScriptedUpstream([{"toolCalls": [_EDIT]}, {"text": "hello, candidate: TASK.md is edited"}])
    result = run_candidate(_bundle(tmp_path), repository=None, task=_task(tmp_path / "artifacts", maxModelCalls=1,
                                                                          **_ROOMY),
                           out=tmp_path / "out", artifacts=tmp_path / "artifacts", upstream=upstream,
                           executor="container", images=str(STORE), image=REFERENCE)
    receipt = result.run_receipt
    assert receipt is not None, result.invalid_capture
    assert receipt.termination.to_wire() == {"kind": "exit", "exitCode": 1}  # it ended by itself
    assert not receipt.benchmark_result.material.passed
    harness = _executor_capture(result)["harness"]
    assert harness["status"] == "error" and harness["error"] is not None
    assert harness["gateway"]["modelCalls"] == 1 and harness["gateway"]["refusedCalls"] >= 1


_OTHERS = {
    "claude-code": ("harness/claude-code", "2.1.332",
                    {"name": "Write", "arguments": {"file_path": "/tangle/task/NOTES.md", "content": "edited\n"}}),
    "opencode": ("harness/opencode", "1.18.33",
                 {"name": "write", "arguments": {"filePath": "/tangle/task/NOTES.md", "content": "edited\n"}}),
}


@pytest.mark.parametrize("harness", sorted(_OTHERS))
def test_claude_code_and_opencode_run_a_harness_bundle_end_to_end(harness: str, tmp_path: Path) -> None:
    """Their JSON output holds the final answer only (not the tool's output): the checks
    read the answer; the counts and the observed version are the receipt's."""
    name, version, write = _OTHERS[harness]
    image = _image(name)
    if image is None:
        pytest.skip(f"needs the {name} image in {STORE}")
    upstream = ScriptedUpstream([{"toolCalls": [write]}, {"text": "hello, candidate: NOTES.md is written"}])
    checks = [{"name": "answered", "contains": "hello, candidate"}]
    result = run_candidate(_bundle(tmp_path, harness), repository=None,
                           task=_task(tmp_path / "artifacts", checks, **_ROOMY), out=tmp_path / "out",
                           artifacts=tmp_path / "artifacts", upstream=upstream, executor="container",
                           images=str(STORE), image=image)
    receipt = result.run_receipt
    assert receipt is not None, result.invalid_capture
    assert receipt.termination.to_wire() == {"kind": "exit", "exitCode": 0}, _executor_capture(result)
    assert receipt.benchmark_result.material.passed
    record = _executor_capture(result)["harness"]
    assert record["harness"] == harness and record["status"] == "completed"
    assert record["observedVersion"] == record["declaredVersion"] == version
    assert record["gateway"]["modelCalls"] == 2 and record["usageAgrees"] is True
    run_receipt_matches(receipt, result.materialization_receipt, result.plan)
