"""``run_candidate`` end to end on the local exact-process provider: receipts that bind,
invalid capture, distinct terminations, delivery methods, refusals that leave nothing,
and no stray process."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import io
import json
import os
import subprocess
import tarfile
import uuid
from pathlib import Path
from typing import Any

import pytest

from agent_interface.candidate.receipt_binding import run_receipt_matches
from agent_interface.candidate.receipts import AgentCandidateRunReceipt
from agent_interface.candidate.tasks import AgentCandidateBenchmarkTask
from agent_interface.core.canonical import canonical_bytes, canonical_digest
from agent_interface.core.errors import ContractError
from agent_interface.evaluator.process.isolation import detect_local_isolation
from agent_interface.evaluator.run.candidate_run import run_candidate, run_candidate_async

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "candidate"
ARTIFACTS = EXAMPLE / "artifacts"

pytestmark = pytest.mark.skipif(
    not asyncio.run(detect_local_isolation()).blocks_egress, reason="no network namespace on this host"
)

CALL = """
import json, os, sys, urllib.request
def ask(text):
    request = urllib.request.Request(
        os.environ["OPENAI_BASE_URL"] + "/chat/completions",
        data=json.dumps({"model": "demo-model", "messages": [{"role": "user", "content": text}]}).encode(),
        headers={"Content-Type": "application/json", "Authorization": "Bearer " + os.environ["OPENAI_API_KEY"]})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.load(response)["choices"][0]["message"]["content"]
"""
GOOD = CALL + "print('hello, candidate: ' + ask(sys.stdin.read()))\n"


def bundle(script: str, *, delivery: str = "stdin-utf8", environment: dict[str, Any] | None = None) -> bytes:
    delivery_wire: dict[str, Any] = {"kind": delivery}
    if delivery == "utf8-file":
        delivery_wire = {"kind": "utf8-file", "env": "TANGLE_CANDIDATE_TASK_PATH", "path": "/tangle/input/task.txt"}
    material = {
        "kind": "agent-candidate-bundle", "digestAlgorithm": "rfc8785-sha256",
        "profile": {"name": "t", "prompt": {"systemPrompt": "Be brief."}},
        "code": {"kind": "disabled"},
        "execution": {
            "harness": "codex", "harnessVersion": "0.1.0",
            "launch": {"kind": "container-command", "executable": "python3",
                       "args": [{"kind": "public", "value": "agent.py"}]},
            "instructionDelivery": delivery_wire,
            "cwd": {"workspace": "task", "path": "."},
            "env": {"PATH": {"kind": "public", "value": "/usr/local/bin:/usr/bin:/bin"}},
            "environment": environment or {"kind": "evaluator-task-container"},
            "isolation": {"network": "disabled", "remoteIntegrations": "disabled", "candidateSecrets": "disabled"},
        },
        "memory": {"mode": "disabled"},
    }
    return json.dumps({**material, "digest": canonical_digest(material)}).encode()


def snapshot(files: dict[str, bytes]) -> dict[str, Any]:
    def embedded(content: bytes) -> dict[str, Any]:
        return {"encoding": "base64", "content": base64.b64encode(content).decode(),
                "sha256": "sha256:" + hashlib.sha256(content).hexdigest(), "byteLength": len(content)}

    material = {"kind": "agent-candidate-workspace-manifest", "files": [
        {"path": path, "mode": 0o644, "sha256": "sha256:" + hashlib.sha256(data).hexdigest(),
         "byteLength": len(data)} for path, data in sorted(files.items())]}
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for path, data in sorted(files.items()):
            info = tarfile.TarInfo(path)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    manifest = canonical_bytes(material)
    return {"kind": "agent-candidate-workspace-snapshot", "digest": "sha256:" + hashlib.sha256(manifest).hexdigest(),
            "material": material, "manifest": embedded(manifest), "archive": embedded(buffer.getvalue())}


def task(script: str = "", **limits: Any) -> AgentCandidateBenchmarkTask:
    wire = json.loads((EXAMPLE / "task.json").read_text())
    wire["limits"].update(limits)
    wire["workspace"] = snapshot({"agent.py": script.encode()})
    return AgentCandidateBenchmarkTask.seal(wire)


def run(tmp_path: Path, script: str, *, out: str = "out", **options: Any) -> Any:
    limits = options.pop("limits", {})
    the_task = task(script, **limits)
    return run_candidate(bundle(script, delivery=options.pop("delivery", "stdin-utf8")), repository=None,
                         task=the_task, out=tmp_path / out, artifacts=ARTIFACTS, **options)


def test_a_good_run_writes_two_receipts_that_bind(tmp_path: Path) -> None:
    result = run(tmp_path, GOOD)
    receipt = result.run_receipt
    assert receipt is not None and result.invalid_capture is None
    assert receipt.termination.to_wire() == {"kind": "exit", "exitCode": 0}
    assert receipt.benchmark_result.material.passed
    settlement = receipt.model_settlement.material
    assert settlement.usage.model_calls == 1 and settlement.closed
    assert settlement.calls[0].accounted_input_tokens > settlement.calls[0].input_tokens  # the system prompt
    written = AgentCandidateRunReceipt.parse_wire((tmp_path / "out" / "run-receipt.json").read_bytes())
    run_receipt_matches(written, result.materialization_receipt, result.plan)
    for ref in (receipt.executor_capture, receipt.trace.artifact):
        assert (tmp_path / "out" / "artifacts" / ref.to_wire()["locator"]["cid"]).is_file()
    forged = AgentCandidateRunReceipt.seal({**written.to_wire(), "runCellDigest": "sha256:" + "1" * 64})
    with pytest.raises(ContractError) as refused:
        run_receipt_matches(forged, result.materialization_receipt, result.plan)
    assert "run_cell_mismatch" in {issue.code for issue in refused.value.issues}


def test_argv_delivery_appends_one_final_element(tmp_path: Path) -> None:
    result = run(tmp_path, CALL + "print('hello, candidate: ' + ask(sys.argv[-1]))\n", delivery="argv-append")
    assert result.run_receipt is not None and result.run_receipt.benchmark_result.material.passed


FILE_DELIVERY = CALL + """
path = os.environ["TANGLE_CANDIDATE_TASK_PATH"]
try:
    open(path, "a")
    sys.exit("the task file is writable")
except OSError:
    pass
assert os.environ["OPENAI_BASE_URL"] == "http://model-gateway.internal/v1"
assert os.getcwd() == "/tangle/task"
print('hello, candidate: ' + ask(open(path).read()))
"""


def test_file_delivery_reads_the_fixed_read_only_path(tmp_path: Path) -> None:
    if not asyncio.run(detect_local_isolation()).mount_namespace:
        pytest.skip("no private mount namespace on this host")
    result = run(tmp_path, FILE_DELIVERY, delivery="utf8-file")
    assert result.plan.material.launch.env["TANGLE_CANDIDATE_TASK_PATH"].value == "/tangle/input/task.txt"
    receipt = result.run_receipt
    assert receipt is not None, result.invalid_capture
    assert receipt.termination.to_wire() == {"kind": "exit", "exitCode": 0}
    assert receipt.benchmark_result.material.passed
    assert not Path("/tangle").exists()


def test_no_run_without_a_private_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a mount namespace Unix sockets cannot be refused and every host socket would
    be reachable: the provider declares no exact process and nothing runs (no delivery, file
    or not)."""
    from agent_interface.evaluator.process.isolation import LocalIsolation
    from agent_interface.evaluator.run import candidate_run as run_module

    found = asyncio.run(detect_local_isolation())
    without = LocalIsolation(tuple(word for word in found.prefix if word != "--mount"), found.network_namespace,
                             found.pid_namespace, found.user_namespace, False, found.separate_user)

    async def no_mounts() -> LocalIsolation:
        return without

    monkeypatch.setattr(run_module, "_isolation", no_mounts)
    for bundle, delivery in ((FILE_DELIVERY, "utf8-file"), (GOOD, None)):
        with pytest.raises(ContractError) as refused:
            run(tmp_path, bundle, **({"delivery": delivery} if delivery else {}))
        assert refused.value.issues[0].code == "exact_process_unavailable"
        assert os.listdir(tmp_path) == []


def test_no_model_call_settles_to_a_valid_zero(tmp_path: Path) -> None:
    """Every call passes the gateway (the program has no other way out), so a run whose
    gateway saw no call is a closed settlement of zero calls, not an invalid capture."""
    result = run(tmp_path, "print('hello, candidate')\n")
    receipt = result.run_receipt
    assert receipt is not None, result.invalid_capture
    settlement = receipt.model_settlement.material
    assert settlement.closed and settlement.usage_within_limits
    assert settlement.usage.model_calls == 0 and settlement.calls == ()
    assert result.plan.material.model.access.network.to_wire() == {
        "mode": "gateway-only", "domains": ["model-gateway.internal"]}


def test_timeout_is_a_termination_not_an_exit(tmp_path: Path) -> None:
    result = run(tmp_path, GOOD + "import time\nsys.stdout.flush()\ntime.sleep(30)\n", limits={"timeoutMs": 1500})
    assert result.run_receipt is not None
    assert result.run_receipt.termination.to_wire() == {"kind": "timeout", "timeoutMs": 1500}


def test_signal_is_a_termination_not_an_exit(tmp_path: Path) -> None:
    result = run(tmp_path, GOOD + "import signal\nsys.stdout.flush()\nos.kill(os.getpid(), signal.SIGKILL)\n")
    assert result.run_receipt is not None
    assert result.run_receipt.termination.to_wire() == {"kind": "signal", "signal": "SIGKILL"}


def test_cancellation_is_a_termination_not_an_exit(tmp_path: Path) -> None:
    async def cancelled() -> Any:
        cancel = asyncio.Event()
        asyncio.get_running_loop().call_later(1.5, cancel.set)
        return await run_candidate_async(
            bundle(""), repository=None, task=task(GOOD + "import time\nsys.stdout.flush()\ntime.sleep(30)\n"),
            out=tmp_path / "out", artifacts=ARTIFACTS, cancel=cancel)

    result = asyncio.run(cancelled())
    assert result.run_receipt is not None
    assert result.run_receipt.termination.to_wire() == {"kind": "cancelled"}


def _processes_with(marker: str) -> list[str]:
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if marker.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                    found.append(pid)
            except OSError:
                continue
    return found


def test_a_forked_grandchild_does_not_outlive_the_run(tmp_path: Path) -> None:
    marker = "grandchild-" + uuid.uuid4().hex
    script = GOOD + (
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        f"    os.execv(sys.executable, [sys.executable, '-c', 'import time; time.sleep(60)', '{marker}'])\n"
    )
    result = run(tmp_path, script)
    assert result.run_receipt is not None
    assert _processes_with(marker) == []


@pytest.mark.parametrize(
    ("options", "code"),
    [
        ({"environment": {"kind": "pinned-container",
                          "container": {"image": "ghcr.io/x/y:1", "indexDigest": "sha256:" + "2" * 64}}},
         "container_unavailable"),
    ],
)
def test_refusals_leave_nothing_behind(tmp_path: Path, options: dict[str, Any], code: str) -> None:
    document = bundle(GOOD, delivery=options.get("delivery", "stdin-utf8"), environment=options.get("environment"))
    with pytest.raises(ContractError) as refused:
        run_candidate(document, repository=None, task=task(GOOD), out=tmp_path / "out", artifacts=ARTIFACTS)
    assert refused.value.issues[0].code == code
    assert os.listdir(tmp_path) == []


def test_a_tampered_bundle_is_refused_before_anything_runs(tmp_path: Path) -> None:
    document = json.loads(bundle(GOOD))
    document["execution"]["harnessVersion"] = "0.2.0"
    with pytest.raises(ContractError) as refused:
        run_candidate(json.dumps(document).encode(), repository=None, task=task(GOOD), out=tmp_path / "out",
                      artifacts=ARTIFACTS)
    assert refused.value.issues[0].code == "bundle_digest_mismatch"
    assert os.listdir(tmp_path) == []


def test_the_cli_runs_the_example(tmp_path: Path) -> None:
    clone = tmp_path / "demo"
    subprocess.run(["git", "clone", "-q", str(EXAMPLE / "repository.bundle"), str(clone)], check=True)
    from agent_interface.cli.main import main

    code = main(["candidate", "run", str(EXAMPLE / "bundle.json"), "--repository", str(clone), "--task",
                 str(EXAMPLE / "task.json"), "--suite", str(EXAMPLE / "suite.json"), "--out",
                 str(tmp_path / "run"), "--artifacts", str(ARTIFACTS), "--json"])
    assert code == 0
    assert {"materialization-receipt.json", "run-receipt.json", "artifacts"} <= set(os.listdir(tmp_path / "run"))
