"""One attempt of a harness bundle: the real CLI (Claude Code, Codex, opencode) launched by
its adapter instead of the plan's bare launch, shared by ``candidate run`` and the
experiment's cells.

For a bundle that launches its harness's own CLI
(:func:`~agent_interface.evaluator.harness.bundle_plan.harness_cli_of`),
:func:`open_harness_attempt` opens the attempt's gateway run with the adapter's
``refusal_status`` (a status the harness gives up on, so a budget cut ends the run) and
makes the adapter's launch: the harness reaches the gateway as ``model-gateway.internal``
through the strict-egress proxy, with the run's token. Its :attr:`HarnessAttempt.native`
(the workspace files, public env and flags, home files by digest) is bound into the
profile plan and activation (``build_materialization_context(..., native=...)``), so the
activation's files *are* the native workspace files written into the task workspace and
restored before a workspace is captured (``restore_profile_paths``), as the
specification requires. Then:

* :meth:`HarnessAttempt.stage` writes the ``$HOME`` files (never in the plan's files: they
  are bound by digest among its flags) and asks the binary that will run for its version
  (``<binary> --version`` in the same environment: observed, not declared);
* :meth:`HarnessAttempt.launch_request` is the plan's request with the adapter's argv and
  environment, plus the proxy variables; the token is added at launch only
  (:meth:`~.model_access.ModelAccess.launch`), never in the plan;
* :meth:`HarnessAttempt.record` parses the harness's own output and puts
  :func:`~agent_interface.evaluator.harness.observation.observe` (harness, declared and
  observed version, exit and error status, self-reported usage beside the gateway's count
  of calls and tokens) into the executor capture as ``harness``.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any, Final

from agent_interface.candidate.bundle import AgentCandidateBundle
from agent_interface.candidate.plan_builders import GATEWAY_TOKEN_ENV_NAMES, NativeProfileLowering
from agent_interface.candidate.tasks import AgentCandidateBenchmarkTask
from agent_interface.core.errors import ContractError
from agent_interface.evaluator.egress.forwarder import proxy_environment
from agent_interface.evaluator.harness.adapter import GatewayAccess, HarnessAdapter, HarnessLaunch
from agent_interface.evaluator.harness.adapters import adapter_for
from agent_interface.evaluator.harness.bundle_plan import harness_cli_of, native_lowering
from agent_interface.evaluator.harness.install import version_in
from agent_interface.evaluator.harness.observation import observe
from agent_interface.evaluator.run.evidence import RunCapture
from agent_interface.evaluator.run.model_access import (
    GATEWAY_ORIGIN,
    GatewayHost,
    ModelAccess,
    ModelSettled,
)

__all__ = ["HARNESS_HOME", "HARNESS_TASK_ROOT", "HarnessAttempt", "open_harness_attempt"]

HARNESS_TASK_ROOT: Final = "/tangle/task"
"""The task workspace as the harness sees it (the execution plan's default task root)."""

HARNESS_HOME: Final = "/tangle/home"
"""The harness's ``$HOME`` in the environment (its home-rooted native files are written there)."""

_VERSION_TIMEOUT_MS: Final = 30_000


@dataclass
class HarnessAttempt:
    """A harness bundle's attempt: the harness, its adapter and launch, the lowering the plan
    binds, and (after :meth:`stage`) the version the binary in the environment reported."""

    harness: str
    declared_version: str
    adapter: HarnessAdapter
    launch: HarnessLaunch
    native: NativeProfileLowering
    proxy_port: int
    observed_version: str = "unknown"

    async def stage(self, environment: Any) -> None:
        """Write the ``$HOME`` files and observe the binary's version in ``environment``."""
        for file in self.launch.files:
            if file.root == "home":
                await environment.write_file(f"{HARNESS_HOME}/{file.path}", file.content, mode=file.mode)
        self.observed_version = await _observed_version(environment, self.launch)

    def launch_request(self, request: dict[str, Any]) -> dict[str, Any]:
        """The plan's launch ``request`` (cwd, time limit) with the adapter's argv and env and
        the proxy variables (no token: :meth:`ModelAccess.launch` adds it)."""
        argv = self.launch.argv
        env = {name: value for name, value in {**self.launch.env, **proxy_environment(self.proxy_port)}.items()
               if name not in GATEWAY_TOKEN_ENV_NAMES}
        return {**request, "executable": argv[0], "args": list(argv[1:]), "env": env, "stdin": ""}

    def record(self, capture: RunCapture, settled: ModelSettled) -> None:
        """Put the observation of the run (see the module) into ``capture.executor``."""
        termination = capture.termination or {}
        exit_code = termination.get("exitCode")
        code = exit_code if isinstance(exit_code, int) else -1
        outcome = self.adapter.parse_output(code, capture.stdout, capture.stderr)
        if settled.settlement is None:
            return
        observation = observe(self.harness, declared_version=self.declared_version,
                              observed_version=self.observed_version, outcome=outcome,
                              settlement=settled.settlement)
        record = observation.to_wire()
        record["termination"] = termination.get("kind", "unknown")
        capture.executor["harness"] = record


async def _observed_version(environment: Any, launch: HarnessLaunch) -> str:
    request = {"executable": launch.argv[0], "args": ["--version"], "cwd": "/",
               "env": {"HOME": "/tmp", "PATH": launch.env.get("PATH", "/usr/local/bin:/usr/bin:/bin")},
               "timeoutMs": _VERSION_TIMEOUT_MS}
    try:
        process = await environment.process.spawn(request)
        termination = await process.wait()
        if hasattr(process, "output_bytes"):
            output = (await process.output_bytes("stdout"))[:4096].decode("utf-8", errors="replace")
        else:
            output = "".join([chunk async for chunk in process.stdout()])[:4096]
    except ContractError:
        return "unknown"
    wire = termination.to_wire() if hasattr(termination, "to_wire") else dict(termination)
    exit_code = wire.get("exitCode")
    return version_in(output, exit_code if isinstance(exit_code, int) else -1) or "unknown"


async def open_harness_attempt(bundle: AgentCandidateBundle, host: GatewayHost | None, *, run_id: str,
                               task: AgentCandidateBenchmarkTask, system_prompt: str, proxy_port: int,
                               task_root: str) -> tuple[ModelAccess, HarnessAttempt | None]:
    """The attempt's model access, and its harness attempt when ``bundle`` launches its
    harness's own CLI (``None`` otherwise: the plan's launch runs as it is). The gateway
    run is opened with the adapter's refusal status; a harness attempt on a task that
    allows no model call is refused (``harness_needs_model``)."""
    harness = harness_cli_of(bundle)
    if harness is None:
        return await ModelAccess.open(host, run_id=run_id, task=task, system_prompt=system_prompt,
                                      proxy_port=proxy_port), None
    adapter = adapter_for(harness)
    model = await ModelAccess.open(host, run_id=run_id, task=task, system_prompt=system_prompt,
                                   proxy_port=proxy_port, refusal_status=adapter.refusal.refusal_status)
    if model.run is None:
        raise ContractError.single("/limits/maxModelCalls", "harness_needs_model",
                                   "a harness bundle runs a model agent, but the task allows no model call",
                                   subject="harness run")
    try:
        access = GatewayAccess(GATEWAY_ORIGIN, model.run.token, task.model.requested)
        binary = bundle.execution.launch.to_wire()["executable"]
        launch = adapter.plan(bundle.profile, binary=binary, access=access, instruction=task.instruction,
                              workspace=task_root, home=HARNESS_HOME)
        attempt = HarnessAttempt(harness=harness, declared_version=bundle.execution.harness_version,
                                 adapter=adapter, launch=launch, native=native_lowering(launch),
                                 proxy_port=proxy_port)
    except BaseException:
        with contextlib.suppress(Exception):
            await model.settle()
        raise
    return model, attempt
