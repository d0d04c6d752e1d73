"""The model gateway from inside a container, through real ``runc`` and the official SDKs.

A ``gateway-only`` container reaches the evaluator's gateway as ``model-gateway.internal``
through its strict-egress proxy, with the official ``openai`` and ``anthropic`` Python SDKs
(copied into the image from this environment; they honour ``HTTP_PROXY``), and reaches
nothing else: another domain, a subdomain, an IP literal, the host's loopback (through the
proxy or directly), the name without the proxy. Node's built-in ``fetch`` ignores the proxy
variables and reaches nothing (the documented limitation). A real upstream's key, named
by ``--model-key-env``, reaches that upstream and nowhere else: not the container (its
environment and every file it can read), not the run directory (every byte searched).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import io
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from agent_interface.candidate.bundle import AgentCandidateBundle
from agent_interface.candidate.tasks import AgentCandidateBenchmarkTask
from agent_interface.cli.main import main
from agent_interface.core.canonical import canonical_bytes, canonical_digest
from agent_interface.evaluator.gateway import ScriptedUpstream
from agent_interface.evaluator.run.container_run import ContainerRun
from agent_interface.evaluator.run.image_selection import select_task_image
from agent_interface.evaluator.run.model_access import GatewayHost, ModelAccess
from tests.evaluator.oci_runtime_fixtures import requires_runc
from tests.evaluator.python_image_fixtures import PYTHON, SDK_PATH, PythonImage, python_sdk_image

pytestmark = requires_runc

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "candidate"
FAKE_KEY = "sk-test-" + "k3y" * 12  # what a provider key looks like; it must reach the upstream only

PROBE = r"""
import json, os, socket, sys, urllib.request
out = {}
import anthropic, openai
chat = openai.OpenAI().chat.completions.create(
    model="demo-model", messages=[{"role": "user", "content": "hello through the proxy"}])
out["openai"] = chat.choices[0].message.content
message = anthropic.Anthropic().messages.create(
    model="demo-model", max_tokens=64, messages=[{"role": "user", "content": "hello again"}])
out["anthropic"] = message.content[0].text
port = sys.argv[1]
for name, url in [("other", "http://example.com/"), ("sub", "http://a.model-gateway.internal/v1/models"),
                  ("ip", "http://93.184.216.34/"), ("loopback", "http://127.0.0.1:%s/v1/models" % port)]:
    try:
        urllib.request.urlopen(url, timeout=10).read()
        out[name] = "reached"
    except urllib.error.HTTPError as error:
        out[name] = error.headers.get("X-Egress-Refused") or str(error.code)
    except Exception as error:
        out[name] = type(error).__name__
for name, address in [("direct-loopback", ("127.0.0.1", int(port))), ("direct-name", ("model-gateway.internal", 80))]:
    try:
        socket.create_connection(address, timeout=5).close()
        out[name] = "reached"
    except OSError as error:
        out[name] = type(error).__name__
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def image() -> Iterator[PythonImage]:
    if not PYTHON.is_file():
        pytest.skip("needs Debian's /usr/bin/python3.11 to build the image")
    directory = Path(tempfile.mkdtemp(prefix="gateway-image-", dir="/var/tmp"))
    try:
        yield python_sdk_image(directory, sdk=True)
    finally:
        subprocess.run(["rm", "-rf", str(directory)], check=False)


def _snapshot(files: dict[str, bytes]) -> dict[str, Any]:
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


def _task(image: PythonImage, files: dict[str, bytes], **model: Any) -> AgentCandidateBenchmarkTask:
    wire = json.loads((EXAMPLE / "task.json").read_text())
    wire.pop("digest")
    wire["evaluatorTaskContainer"] = image.container()
    wire["workspace"] = _snapshot(files)
    wire["model"].update(model)
    if model:
        wire["limits"]["maxCostUsd"] = 1
    return AgentCandidateBenchmarkTask.seal(wire)


def _bundle(*args: str) -> dict[str, Any]:
    material = {
        "kind": "agent-candidate-bundle", "digestAlgorithm": "rfc8785-sha256",
        "profile": {"name": "t", "prompt": {"systemPrompt": "Be brief."}},
        "code": {"kind": "disabled"},
        "execution": {
            "harness": "codex", "harnessVersion": "0.1.0",
            "launch": {"kind": "container-command", "executable": "/usr/bin/python3",
                       "args": [{"kind": "public", "value": arg} for arg in args]},
            "instructionDelivery": {"kind": "stdin-utf8"},
            "cwd": {"workspace": "task", "path": "."},
            "env": {"PATH": {"kind": "public", "value": "/usr/bin:/bin"},
                    "PYTHONPATH": {"kind": "public", "value": SDK_PATH}},
            "environment": {"kind": "evaluator-task-container"},
            "isolation": {"network": "disabled", "remoteIntegrations": "disabled", "candidateSecrets": "disabled"},
        },
        "memory": {"mode": "disabled"},
    }
    return {**material, "digest": canonical_digest(material)}


def test_a_gateway_only_container_reaches_the_gateway_through_the_sdks_and_nothing_else(
        tmp_path: Path, image: PythonImage) -> None:
    task = _task(image, {"probe.py": PROBE.encode()})
    bundle = AgentCandidateBundle.parse_wire(_bundle("probe.py"))

    async def scenario() -> tuple[dict[str, Any], Any, list[dict[str, Any]]]:
        host = GatewayHost(ScriptedUpstream.echo())
        await host.start()
        run = await ContainerRun.open(bundle, task, images=None, selected=select_task_image(task, image.store),
                                      gateway=host.address)
        try:
            access = await ModelAccess.open(host, run_id="reach-1", task=task, system_prompt="Be brief.",
                                            proxy_port=run.proxy_port)
            exact = run.exact_process
            assert exact is not None and access.egress == {"mode": "strict", "allowDomains": ["model-gateway.internal"]}
            environment = await exact.create({
                "image": run.image, "egress": access.egress, "maxLifetimeMs": 300_000,
                "resources": {"cpu": 1, "memoryMb": 1024, "diskMb": 128}, "metadata": {}, "idempotencyKey": "reach-1"})
            await environment.write_file("/tangle/task/probe.py", PROBE.encode(), mode=0o644)
            launch = {"executable": "/usr/bin/python3", "args": ["probe.py", str(host.address[1])],
                      "cwd": "/tangle/task", "env": {"PATH": "/usr/bin:/bin", "PYTHONPATH": SDK_PATH, **access.env},
                      "timeoutMs": 240_000}
            process = await environment.process.spawn(access.launch(launch))
            termination = (await process.wait()).to_wire()
            stdout = (await process.output_bytes("stdout")).decode()
            stderr = (await process.output_bytes("stderr")).decode()
            assert termination == {"kind": "exit", "exitCode": 0}, stderr[-3000:]
            settled = await access.settle()
            log_path = environment.egress_log_path
            assert log_path is not None
            decisions = [json.loads(line) for line in log_path.read_text().splitlines()]
            await environment.destroy()
            return json.loads(stdout), settled, decisions
        finally:
            run.close()
            await host.close()

    seen, settled, decisions = asyncio.run(scenario())
    assert seen["openai"] == "echo: hello through the proxy"
    assert seen["anthropic"] == "echo: hello again"
    assert seen["other"] == "domain_not_allowed" and seen["sub"] == "domain_not_allowed"
    assert seen["ip"] == "ip_literal" and seen["loopback"] == "ip_literal"
    assert seen["direct-loopback"] == "ConnectionRefusedError"  # the namespace's own loopback
    assert seen["direct-name"] == "gaierror"  # no resolver: the name exists only for the proxy
    assert [(call.api, call.status, call.settled) for call in settled.calls] == [
        ("chat.completions", "succeeded", True), ("messages", "succeeded", True)]
    assert settled.unsettled == 0 and settled.usage_within_limits is True
    served = [event for event in settled.events if event["event"] == "model.call"]
    assert len(served) == 2 and all(event["servedMatch"] in ("exact", "alias", "substituted", "unknown")
                                    and "servedModel" in event for event in served)
    allowed = [d for d in decisions if d["allowed"]]
    assert {(d["host"], d["port"], d["address_class"]) for d in allowed} == {("model-gateway.internal", 80, "fixed_route")}
    assert all("address" not in d for d in allowed)
    assert "/v1/" not in json.dumps(allowed)  # host and port only, never a path


def test_node_fetch_ignores_the_proxy_and_reaches_nothing(tmp_path: Path, image: PythonImage) -> None:
    """Node 20's built-in ``fetch`` reads no proxy variable: in a gateway-only container it
    cannot resolve the gateway's name (no resolver) and reaches nothing (documented)."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("no node on this host")
    from tests.evaluator.interpreter_images import interpreter_image, node_files

    directory = Path(tempfile.mkdtemp(prefix="gateway-node-", dir="/var/tmp"))
    script = ("fetch(process.env.OPENAI_BASE_URL + '/models', {headers: {Authorization: 'Bearer ' + "
              "process.env.OPENAI_API_KEY}}).then(r => console.log('reached', r.status))"
              ".catch(e => console.log('refused', e.cause ? e.cause.code : e.name));")
    try:
        node_image = interpreter_image(directory, "test/node", node_files())
        wire = json.loads((EXAMPLE / "task.json").read_text())
        wire.pop("digest")
        from agent_interface.evaluator.images.oci_documents import host_platform

        platform = host_platform()
        wire["evaluatorTaskContainer"] = {
            "source": "evaluator-task-container", "image": node_image.name, "indexDigest": node_image.index_digest,
            "manifestDigest": node_image.manifest_digest,
            "platform": {"os": platform.os, "architecture": platform.architecture}}
        task = AgentCandidateBenchmarkTask.seal(wire)
        bundle = AgentCandidateBundle.parse_wire(_bundle("agent.js"))  # opens the provider; the spawn is below

        async def scenario() -> str:
            host = GatewayHost(ScriptedUpstream.echo())
            await host.start()
            run = await ContainerRun.open(bundle, task, images=None, check_launch=False,
                                          selected=select_task_image(task, node_image.store), gateway=host.address)
            try:
                access = await ModelAccess.open(host, run_id="node-1", task=task, system_prompt="",
                                                proxy_port=run.proxy_port)
                exact = run.exact_process
                assert exact is not None
                environment = await exact.create({
                    "image": run.image, "egress": access.egress, "maxLifetimeMs": 120_000,
                    "resources": {"cpu": 1, "memoryMb": 1024, "diskMb": 64}, "metadata": {},
                    "idempotencyKey": "node-1"})
                process = await environment.process.spawn(access.launch({
                    "executable": "/usr/bin/node", "args": ["-e", script], "cwd": "/",
                    "env": dict(access.env), "timeoutMs": 60_000}))
                await process.wait()
                out = (await process.output_bytes("stdout")).decode()
                await access.settle()
                await environment.destroy()
                return out
            finally:
                run.close()
                await host.close()

        out = asyncio.run(scenario())
    finally:
        subprocess.run(["rm", "-rf", str(directory)], check=False)
    assert out.startswith("refused"), out


KEY_PROBE = r"""
import json, os, sys
key = os.environ["SEARCHED"][::-1].encode()  # the key, rebuilt in memory only
found = []
if key in open("/proc/self/environ", "rb").read():
    found.append("/proc/self/environ")
for root, dirs, files in os.walk("/"):
    dirs[:] = [d for d in dirs if os.path.join(root, d) not in ("/proc", "/sys", "/dev")]
    for name in files:
        path = os.path.join(root, name)
        try:
            with open(path, "rb") as handle:
                if key in handle.read():
                    found.append(path)
        except OSError:
            pass
import openai
reply = openai.OpenAI().chat.completions.create(model="demo-model", messages=[{"role": "user", "content": "hi"}])
print("hello, candidate:", reply.choices[0].message.content, json.dumps(found))
"""


def test_the_upstream_key_reaches_the_upstream_and_nothing_else(
        tmp_path: Path, image: PythonImage, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """``candidate run --model-upstream openai:URL --model-key-env NAME`` in a container: the
    upstream sees the key in its ``Authorization`` header; the container's environment and
    every file it can read, and every byte of the run directory, hold no trace of it. (The
    program is given the key's text as ``SEARCHED``... no: as a public marker that is *not*
    the key would prove nothing, so it searches for the key's second half, which only the
    key contains.)"""
    seen: list[str] = []

    async def completions(request: web.Request) -> web.Response:
        seen.append(request.headers.get("Authorization", ""))
        body = await request.json()
        return web.json_response({
            "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": body["model"],
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "from upstream"},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 12, "completion_tokens": 2, "total_tokens": 14}})

    files = {"probe.py": KEY_PROBE.encode()}
    task = _task(image, files, model="gpt-4o-mini", snapshot="gpt-4o-mini-2024-07-18", provider="openai")
    bundle = _bundle("probe.py")
    bundle_material = {key: value for key, value in bundle.items() if key != "digest"}
    bundle_material["execution"]["env"]["SEARCHED"] = {"kind": "public", "value": FAKE_KEY[::-1]}
    bundle = {**bundle_material, "digest": canonical_digest(bundle_material)}
    (tmp_path / "bundle.json").write_text(json.dumps(bundle))
    (tmp_path / "task.json").write_text(json.dumps(task.to_wire()))

    async def serve() -> tuple[web.AppRunner, int]:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", completions)
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        return runner, site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    loop = asyncio.new_event_loop()
    import threading

    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    runner, port = asyncio.run_coroutine_threadsafe(serve(), loop).result(30)
    monkeypatch.setenv("FAKE_PROVIDER_KEY", FAKE_KEY)
    try:
        code = main(["candidate", "run", str(tmp_path / "bundle.json"), "--task", str(tmp_path / "task.json"),
                     "--out", str(tmp_path / "out"), "--artifacts", str(EXAMPLE / "artifacts"),
                     "--images", str(image.store.root), "--model-upstream", f"openai:http://127.0.0.1:{port}/v1",
                     "--model-key-env", "FAKE_PROVIDER_KEY", "--json"])
    finally:
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
    printed = capsys.readouterr()
    assert code in (0, 4), printed
    assert seen == ["Bearer " + FAKE_KEY]
    receipt = json.loads((tmp_path / "out" / "run-receipt.json").read_bytes())
    settlement = receipt["modelSettlement"]["material"]
    call = settlement["calls"][0]
    assert settlement["usage"]["modelCalls"] == 1 and call["accountedInputTokens"] == 12
    assert call["inputTokens"] <= 12 and call["outputTokens"] == 2
    capture = next(path for path in (tmp_path / "out" / "artifacts").iterdir()
                   if b"local-executor-capture" in path.read_bytes())
    stdout = (tmp_path / "out" / "artifacts" / json.loads(capture.read_bytes())["stdout"]["cid"]).read_text()
    assert stdout == "hello, candidate: from upstream []\n"  # the container holds no trace of the key
    for path in (tmp_path / "out").rglob("*"):
        if path.is_file():
            assert FAKE_KEY.encode() not in path.read_bytes(), path
    assert FAKE_KEY not in printed.out + printed.err
    assert not any(FAKE_KEY in value for name, value in os.environ.items() if name != "FAKE_PROVIDER_KEY")
