"""Running one real harness CLI on the host for a test: a fresh temporary Git repository, a
fresh ``$HOME``, a loopback-only network namespace (entered by one thread, which then runs
the scripted server and the CLI), the adapter's launch, and optionally ``strace`` watching
every ``connect``."""

from __future__ import annotations

import asyncio
import ctypes
import dataclasses
import functools
import os
import re
import shutil
import subprocess
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from agent_interface.evaluator.gateway import GatewayLimits, ModelGateway, ScriptedUpstream
from agent_interface.evaluator.gateway.records import GatewaySettlement
from agent_interface.evaluator.harness.adapter import GatewayAccess, HarnessLaunch, HarnessOutcome
from agent_interface.evaluator.harness.adapters import adapter_for
from agent_interface.evaluator.harness.install import harness_cli_prefix, locate_cli
from agent_interface.evaluator.harness.native_files import WrittenFiles, write_native_files
from agent_interface.profile.agent_profile import AgentProfile

from .container_runner import run_in_container
from .scripted_server import ScriptedModelServer, Step

CLONE_NEWNET = 0x40000000
TOKEN = "run-token-0123456789abcdef"
MODEL = "test-model"
_PORT = re.compile(r"htons\((\d+)\)")
_ADDR = re.compile(r"inet_addr\(\"([^\"]+)\"\)|inet_pton\(AF_INET6, \"([^\"]+)\"")


@functools.cache
def _namespace_usable() -> bool:
    found: list[bool] = []
    thread = threading.Thread(target=lambda: found.append(_enter_loopback_namespace()))
    thread.start()
    thread.join(30)
    return bool(found and found[0])


def cli_or_skip(harness: str) -> str:
    """The installed CLI of ``harness``, or skip the test saying how to install it (or that
    this machine cannot make a loopback-only network namespace)."""
    if not _namespace_usable():
        pytest.skip("needs a loopback-only network namespace (unshare and ip; root or CAP_SYS_ADMIN)")
    binary = locate_cli(harness)
    if binary is None:
        pytest.skip(f"{harness} CLI not installed under {harness_cli_prefix()} (set AGENT_INTERFACE_HARNESS_CLIS "
                    "to an npm prefix holding the pinned CLIs; .ci/run installs them)")
    return str(binary)


@dataclass
class CliRun:
    """What one run produced."""

    launch: HarnessLaunch
    written: WrittenFiles
    exit_code: int
    stdout: bytes
    stderr: bytes
    outcome: HarnessOutcome
    server: ScriptedModelServer
    seconds: float
    namespace: bool
    outside_connects: list[str] = field(default_factory=list)


def _enter_loopback_namespace() -> bool:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWNET) != 0:
        return False
    done = subprocess.run(["ip", "link", "set", "lo", "up"], capture_output=True, check=False)
    return done.returncode == 0


def git_repository(path: Path, files: dict[str, str] | None = None) -> Path:
    """A fresh Git repository with ``README.md`` (and ``files``) committed."""
    path.mkdir(parents=True)
    env = {"HOME": str(path), "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "GIT_CONFIG_NOSYSTEM": "1"}
    for name, text in {"README.md": "A task repository.\n", **(files or {})}.items():
        (path / name).write_text(text)
    for argv in (["git", "init", "-q", "-b", "main"], ["git", "add", "-A"],
                 ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "base"]):
        subprocess.run(argv, cwd=path, env=env, check=True, capture_output=True)
    return path


def _in_namespace(name: str, main: Callable[[bool], Awaitable[dict[str, Any]]], timeout: float) -> dict[str, Any]:
    """Run ``main(namespace_entered)`` on a thread that first enters a loopback-only network
    namespace (the server it starts and the CLI it launches both live there)."""
    result: dict[str, Any] = {}

    def thread_main() -> None:
        try:
            namespace = _enter_loopback_namespace()
            result.update(asyncio.run(main(namespace)), namespace=namespace)
        except BaseException as error:  # reported to the test's thread
            result["error"] = error

    thread = threading.Thread(target=thread_main, name=f"{name}-netns")
    thread.start()
    thread.join(timeout + 60)
    if "error" in result:
        raise result["error"]
    return result


async def _execute(launch: HarnessLaunch, workspace: Path, scratch: Path, origin: str, *, timeout: float,
                   trace: bool) -> dict[str, Any]:
    argv = list(launch.argv)
    trace_file = scratch / "connect.trace"
    if trace and shutil.which("strace"):
        argv = ["strace", "-f", "-qq", "-e", "trace=connect", "-o", str(trace_file), *argv]
    started = time.monotonic()
    process = await asyncio.create_subprocess_exec(
        *argv, cwd=workspace, env=dict(launch.env), stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        stdout, stderr = await asyncio.wait_for(process.communicate(), timeout)
    except TimeoutError:
        os.killpg(process.pid, 9)
        stdout, stderr = await process.communicate()
    seconds = time.monotonic() - started
    port = origin.rsplit(":", 1)[1]
    outside: list[str] = []
    if trace_file.exists():
        for line in trace_file.read_text(errors="replace").splitlines():
            if "sa_family=AF_INET" not in line:
                continue
            found_port, found_addr = _PORT.search(line), _ADDR.search(line)
            address = (found_addr.group(1) or found_addr.group(2)) if found_addr else "?"
            if not (address in ("127.0.0.1", "::1", "::ffff:127.0.0.1")
                    and found_port is not None and found_port.group(1) == port):
                outside.append(line.split(" ", 1)[-1][:200])
    assert process.returncode is not None
    return {"exit_code": process.returncode, "stdout": stdout, "stderr": stderr, "seconds": seconds,
            "outside": outside}


def _fresh(tmp_path: Path, files: dict[str, str] | None = None) -> tuple[Path, Path]:
    workspace = git_repository(tmp_path / "workspace", files)
    home = tmp_path / "home"
    home.mkdir()
    return workspace, home


def run_cli(harness: str, tmp_path: Path, script: list[Step], *, profile: dict[str, Any] | None = None,
            instruction: str = "Create hello.txt.", timeout: float = 120.0, trace: bool = False,
            through_proxy: bool = False, repo_files: dict[str, str] | None = None) -> CliRun:
    """Run ``harness`` on ``instruction`` against a scripted server; see the module. With
    ``through_proxy`` the harness is given the gateway's name (``model-gateway.internal``,
    which resolves nowhere here) and ``HTTP_PROXY`` naming the server, as a container on the
    strict-egress route is."""
    binary = cli_or_skip(harness)
    adapter = adapter_for(harness)
    workspace, home = _fresh(tmp_path, repo_files)

    async def main(namespace: bool) -> dict[str, Any]:
        server = ScriptedModelServer(script, token=TOKEN)
        origin = await server.start()
        try:
            access = GatewayAccess("http://model-gateway.internal" if through_proxy else origin, TOKEN, MODEL)
            launch = adapter.plan(AgentProfile.parse_wire(profile or {}), binary=binary, access=access,
                                  instruction=instruction, workspace=str(workspace), home=str(home))
            if through_proxy:
                launch = dataclasses.replace(launch, env={**launch.env, "HTTP_PROXY": origin})
            written = write_native_files(launch, workspace=workspace, home=home)
            done = await _execute(launch, workspace, tmp_path, origin, timeout=timeout, trace=trace)
        finally:
            await server.close()
        outcome = adapter.parse_output(done["exit_code"], done["stdout"], done["stderr"])
        return {**done, "launch": launch, "written": written, "outcome": outcome, "server": server}

    result = _in_namespace(harness, main, timeout)
    return CliRun(result["launch"], result["written"], result["exit_code"], result["stdout"], result["stderr"],
                  result["outcome"], result["server"], result["seconds"], result["namespace"], result["outside"])


@dataclass
class GatewayCliRun:
    """What one run through the real model gateway produced."""

    launch: HarnessLaunch
    exit_code: int
    stdout: bytes
    stderr: bytes
    outcome: HarnessOutcome
    settlement: GatewaySettlement
    seconds: float
    namespace: bool
    outside_connects: list[str]


def run_cli_through_gateway(harness: str, tmp_path: Path, replies: list[dict[str, Any]], limits: GatewayLimits, *,
                            profile: dict[str, Any] | None = None, instruction: str = "Create hello.txt.",
                            timeout: float = 120.0, trace: bool = False,
                            container: bool = False) -> GatewayCliRun:
    """Run ``harness`` through :class:`ModelGateway` on a :class:`ScriptedUpstream` of
    ``replies``, the run opened with ``limits`` and the adapter's refusal status."""
    binary = cli_or_skip(harness)
    adapter = adapter_for(harness)
    workspace, home = _fresh(tmp_path)

    async def main(namespace: bool) -> dict[str, Any]:
        gateway = ModelGateway(ScriptedUpstream(replies))
        await gateway.start()
        try:
            run = gateway.open_run(run_id=f"{harness}-cell", requested_model=MODEL,
                                   resolved={"requested": MODEL, "provider": "local", "model": "scripted",
                                             "snapshot": "scripted-1"},
                                   limits=limits, refusal_status=adapter.refusal.refusal_status)
            access = GatewayAccess.from_launch_env(run.launch_env(gateway.origin), model=MODEL)
            launch = adapter.plan(AgentProfile.parse_wire(profile or {}), binary=binary, access=access,
                                  instruction=instruction, workspace=str(workspace), home=str(home))
            write_native_files(launch, workspace=workspace, home=home)
            if container:
                done = await run_in_container(launch, workspace=workspace, home=home, scratch=tmp_path,
                                              timeout=timeout)
            else:
                done = await _execute(launch, workspace, tmp_path, gateway.origin, timeout=timeout, trace=trace)
            settlement = run.settle()
        finally:
            await gateway.close()
        outcome = adapter.parse_output(done["exit_code"], done["stdout"], done["stderr"])
        return {**done, "launch": launch, "outcome": outcome, "settlement": settlement}

    result = _in_namespace(harness, main, timeout)
    return GatewayCliRun(result["launch"], result["exit_code"], result["stdout"], result["stderr"], result["outcome"],
                         result["settlement"], result["seconds"], result["namespace"], result["outside"])
