"""How one attempt reaches the evaluator's model gateway, in a container or on the host.

The plan binds model access ``{"mode": "gateway-only", "domains": [GATEWAY_DOMAIN]}``
when the task allows model calls (:func:`agent_interface.candidate.plan_builders.model_network`).
The program then reaches the gateway (:class:`~agent_interface.evaluator.gateway.ModelGateway`)
only as that name, through the strict-egress machinery, and nothing else:

* the gateway listens on the host's loopback (``127.0.0.1:PORT``), on a loop thread of
  its own (:class:`GatewayHost`), one per ``candidate run`` and one per experiment
  worker process (all the cells a worker runs share it, each its own
  :class:`~agent_interface.evaluator.gateway.GatewayRun`; a Ray node cannot reach another
  node's loopback, so the gateway sits beside the cells that use it);
* the program's network namespace has loopback only, where a strict-egress proxy
  (:class:`~agent_interface.evaluator.egress.proxy.EgressProxy`) listens; its allow list
  is exactly ``[GATEWAY_DOMAIN]`` (no subdomain) and that name has a *fixed route* to the
  gateway's address and port (:class:`~agent_interface.evaluator.egress.settings.EgressSettings`
  ``fixed_routes``), set by the evaluator, never resolved; every other name, every IP
  literal and the host's loopback are refused, each decision logged (host and port only);
* the plan's launch environment receives the gateway's base URLs
  (``OPENAI_BASE_URL=http://model-gateway.internal/v1``,
  ``ANTHROPIC_BASE_URL=http://model-gateway.internal``) and the proxy variables
  (``HTTP_PROXY``, ``HTTPS_PROXY``, both spellings, ``NO_PROXY`` empty); the run's
  ephemeral token (``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``), which the gateway
  attributes each call by, is added to the process's environment at launch only: it is a
  credential, so it is in no plan, receipt or artifact (the plan's public configuration
  refuses credential-bearing names), and it is useless once the run settled.

In a **container** (:class:`~.container_run.ContainerRun`) the environment is created
with egress ``strict`` and that allow list: the OCI provider's own per-environment proxy
carries the fixed route (:func:`gateway_egress_settings`). On the **host** provider the
attempt makes a network namespace of its own (loopback only) with this module's proxy
listening inside it (:class:`HostModelRoute`), and the supervised process joins it
(``nsenter --net``) instead of a fresh empty one (:func:`gateway_isolation`). That needs
the host provider's plain namespaces as root; elsewhere a host run whose task allows
model calls is refused (``model_gateway_unreachable``).

A client that ignores the proxy variables (Node's built-in ``fetch`` before Node 24's
``NODE_USE_ENV_PROXY``) cannot resolve the name and reaches nothing: it must be given a
proxy agent (undici's ``EnvHttpProxyAgent``) or use a client that honours ``HTTP_PROXY``.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, TypeVar
from urllib.parse import urlsplit

from agent_interface.candidate.plan_builders import (
    GATEWAY_DOMAIN,
    GATEWAY_TOKEN_ENV_NAMES,
    model_network,
)
from agent_interface.candidate.tasks import AgentCandidateBenchmarkTask
from agent_interface.core.canonical import canonical_digest
from agent_interface.core.errors import ContractError
from agent_interface.evaluator.container.environment_egress import EgressLoop
from agent_interface.evaluator.container.network_namespace import (
    create_network_namespace,
    listen_in_namespace,
    remove_network_namespace,
)
from agent_interface.evaluator.egress.forwarder import proxy_environment
from agent_interface.evaluator.egress.proxy import EgressProxy
from agent_interface.evaluator.egress.settings import EgressSettings
from agent_interface.evaluator.gateway import (
    GatewayLimits,
    GatewayRun,
    GatewaySettlement,
    ModelCallRecord,
    ModelGateway,
    Upstream,
)
from agent_interface.evaluator.process.isolation import LocalIsolation

__all__ = [
    "GATEWAY_ORIGIN",
    "HOST_PROXY_PORT",
    "GatewayHost",
    "HostModelRoute",
    "ModelAccess",
    "ModelSettled",
    "gateway_egress",
    "gateway_egress_settings",
    "gateway_isolation",
    "model_grant_digest",
]

T = TypeVar("T")

GATEWAY_ORIGIN: Final = f"http://{GATEWAY_DOMAIN}"
"""The origin a program names the gateway by (the base URLs are under it)."""

HOST_PROXY_PORT: Final = 800
"""Where the host path's proxy listens in the attempt's namespace (below 1024: a program
there, with no capability, cannot bind it first)."""


def _refuse(pointer: str, code: str, message: str) -> ContractError:
    return ContractError.single(pointer, code, message, subject="model gateway")


def model_grant_digest(execution_id: str, task: AgentCandidateBenchmarkTask) -> str:
    """The plan's ``grantDigest``: the model grant of one attempt (its execution, the task's
    resolved model and limits, and the network access the plan binds)."""
    return canonical_digest({"kind": "agent-interface.model-gateway-grant.v1", "executionId": execution_id,
                             "resolved": task.model.to_wire(), "limits": task.limits.to_wire(),
                             "network": model_network(task.limits.max_model_calls)})


class GatewayHost:
    """One :class:`ModelGateway` on a loop thread of its own, shared by the attempts of a process.

    :meth:`start` starts it (once); :meth:`open_run` and :meth:`settle` run on its loop,
    whatever loop the caller runs; :meth:`close` stops it and the thread.
    """

    def __init__(self, upstream: Upstream, **options: Any) -> None:
        self.upstream: Final = upstream
        self._options = options
        self._loop: EgressLoop | None = None
        self._gateway: ModelGateway | None = None

    @property
    def started(self) -> bool:
        """Whether the gateway listens."""
        return self._gateway is not None

    async def start(self) -> None:
        """Start the gateway on ``127.0.0.1`` (an ephemeral port), once."""
        if self._gateway is not None:
            return
        loop = EgressLoop()
        try:
            gateway = await loop.run(_made(lambda: ModelGateway(self.upstream, **self._options)))
            await loop.run(gateway.start())
        except BaseException:
            loop.close()
            raise
        self._loop, self._gateway = loop, gateway

    @property
    def address(self) -> tuple[str, int]:
        """The gateway's loopback address and port."""
        if self._gateway is None:
            raise _refuse("/", "model_gateway_unavailable", "the model gateway is not started")
        parts = urlsplit(self._gateway.origin)
        assert parts.hostname is not None and parts.port is not None
        return parts.hostname, parts.port

    async def _call(self, operation: Callable[[], T]) -> T:
        if self._loop is None:
            raise _refuse("/", "model_gateway_unavailable", "the model gateway is not started")
        return await self._loop.run(_made(operation))

    async def open_run(self, *, run_id: str, task: AgentCandidateBenchmarkTask, system_prompt: str,
                       refusal_status: int = 400) -> GatewayRun:
        """A new run of the gateway for one attempt of ``task`` (its model and limits);
        ``refusal_status`` is the status of a refused call (a harness's own, see
        :class:`~agent_interface.evaluator.harness.adapter.RefusalBehaviour`)."""
        gateway = self._gateway
        assert gateway is not None
        return await self._call(lambda: gateway.open_run(
            run_id=run_id, requested_model=task.model.requested, resolved=task.model.to_wire(),
            limits=GatewayLimits.from_task_limits(task.limits), system_prompt=system_prompt,
            refusal_status=refusal_status))

    async def settle(self, run: GatewayRun) -> ModelSettled:
        """Close ``run`` (later calls refused) and what it settled, read on the gateway's loop."""
        def settle() -> ModelSettled:
            settlement = run.settle()
            return ModelSettled(calls=[call for call in settlement.calls if call.dispatched],
                                unsettled=settlement.unsettled_calls,
                                events=[dict(event) for event in settlement.events],
                                usage_within_limits=settlement.usage_within_limits, settlement=settlement)

        return await self._call(settle)

    async def run_here(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Await ``coroutine`` on the gateway's loop (a proxy serving the host path runs there)."""
        if self._loop is None:
            raise _refuse("/", "model_gateway_unavailable", "the model gateway is not started")
        return await self._loop.run(coroutine)

    async def close(self) -> None:
        """Stop the gateway and its thread."""
        loop, gateway = self._loop, self._gateway
        self._loop = self._gateway = None
        if loop is None:
            return
        try:
            if gateway is not None:
                await loop.run(gateway.close())
        finally:
            await asyncio.to_thread(loop.close)

    def close_sync(self) -> None:
        """:meth:`close` from code that runs no loop (a worker process ending)."""
        asyncio.run(self.close())


async def _made(operation: Callable[[], T]) -> T:
    return operation()


@dataclass(slots=True)
class ModelSettled:
    """What a run's gateway settled: the model calls (those that reached the upstream; a
    refusal is in the trace events only), how many are unsettled (in flight, or no usage
    reported), every trace event (each call's served model and its match with the plan's
    included), the router's ``usageWithinLimits`` (``None`` without a gateway run) and the
    gateway's whole settlement (its counts of calls and tokens; ``None`` without a run)."""

    calls: list[ModelCallRecord]
    unsettled: int
    events: list[dict[str, Any]] = field(default_factory=list)
    usage_within_limits: bool | None = None
    settlement: GatewaySettlement | None = None


def gateway_egress(task: AgentCandidateBenchmarkTask) -> dict[str, Any]:
    """The create input's egress for ``task``: strict to the gateway alone, or blocked."""
    if task.limits.max_model_calls > 0:
        return {"mode": "strict", "allowDomains": [GATEWAY_DOMAIN]}
    return {"mode": "blocked"}


def gateway_egress_settings(address: tuple[str, int]) -> dict[str, Any]:
    """The proxy settings that route :data:`GATEWAY_DOMAIN` (exactly, port 80) to ``address``."""
    return {"fixed_routes": {GATEWAY_DOMAIN: address}, "include_subdomains": False,
            "http_ports": frozenset({80})}


def gateway_isolation(isolation: LocalIsolation, namespace: Path) -> LocalIsolation:
    """``isolation`` with the supervisor joining ``namespace`` (``nsenter --net``) instead of
    a fresh network namespace; refused (``model_gateway_unreachable``) where that cannot be
    done: no network namespace, a user namespace, not root, no ``nsenter``."""
    nsenter = shutil.which("nsenter")
    if (not isolation.network_namespace or isolation.user_namespace or "--net" not in isolation.prefix
            or os.geteuid() != 0 or nsenter is None):
        raise _refuse("/limits/maxModelCalls", "model_gateway_unreachable",
                      "the task allows model calls, but on this host the host provider cannot put the "
                      "model gateway in the process's network namespace (it needs root, plain network "
                      "namespaces and nsenter); run the candidate in a container")
    prefix = (nsenter, f"--net={namespace}", *(part for part in isolation.prefix if part != "--net"))
    return LocalIsolation(prefix, isolation.network_namespace, isolation.pid_namespace, isolation.user_namespace,
                          isolation.mount_namespace, isolation.separate_user)


class HostModelRoute:
    """The host path's namespace and proxy: made by :meth:`open`, removed by :meth:`close`."""

    def __init__(self, host: GatewayHost, directory: Path) -> None:
        self.host: Final = host
        self.namespace: Final = directory / "netns"
        self._proxy: EgressProxy | None = None

    async def open(self) -> None:
        """Make the namespace (loopback only) and start the proxy inside it."""
        await asyncio.to_thread(create_network_namespace, self.namespace)
        sock = await asyncio.to_thread(listen_in_namespace, self.namespace, HOST_PROXY_PORT)
        settings = EgressSettings(allow_domains=(GATEWAY_DOMAIN,), **gateway_egress_settings(self.host.address))
        proxy = EgressProxy(settings)
        try:
            await self.host.run_here(proxy.start(sock=sock))
        except BaseException:
            sock.close()
            raise
        self._proxy = proxy

    def summary(self) -> dict[str, Any] | None:
        """The proxy's policy and decision totals."""
        return None if self._proxy is None else self._proxy.summary().to_json()

    async def close(self) -> None:
        """Stop the proxy and unpin the namespace."""
        proxy, self._proxy = self._proxy, None
        if proxy is not None:
            await self.host.run_here(proxy.close())
        await asyncio.to_thread(remove_network_namespace, self.namespace)


@dataclass(slots=True)
class ModelAccess:
    """One attempt's model access: its gateway run (``None`` when the task allows no call),
    the public launch variables the plan binds (``env``), the token variables added at
    launch only (``token_env``, masked in the repr), and the create input's egress."""

    host: GatewayHost | None
    run: GatewayRun | None
    env: dict[str, str]
    egress: dict[str, Any]
    token_env: dict[str, str] = field(default_factory=dict, repr=False)

    @classmethod
    async def open(cls, host: GatewayHost | None, *, run_id: str, task: AgentCandidateBenchmarkTask,
                   system_prompt: str, proxy_port: int, refusal_status: int = 400) -> ModelAccess:
        """Open the attempt's gateway run (when the task allows calls) and its launch variables;
        ``proxy_port`` is where the proxy listens in the program's namespace; ``refusal_status``
        the status of a refused call (a harness's own)."""
        egress = gateway_egress(task)
        if egress["mode"] == "blocked":
            return cls(host, None, {}, egress)
        if host is None:
            raise _refuse("/limits/maxModelCalls", "model_gateway_unavailable",
                          "the task allows model calls, but this run has no model gateway")
        await host.start()
        run = await host.open_run(run_id=run_id, task=task, system_prompt=system_prompt,
                                  refusal_status=refusal_status)
        env = {"OPENAI_BASE_URL": GATEWAY_ORIGIN + "/v1", "ANTHROPIC_BASE_URL": GATEWAY_ORIGIN,
               **proxy_environment(proxy_port)}
        token = {name: run.token for name in sorted(GATEWAY_TOKEN_ENV_NAMES)}
        return cls(host, run, env, egress, token)

    def launch(self, launch: dict[str, Any]) -> dict[str, Any]:
        """``launch`` (the plan's) with the token variables added to its environment."""
        return {**launch, "env": {**launch["env"], **self.token_env}}

    def call_count(self) -> int:
        """How many calls the run has seen so far (for progress)."""
        return 0 if self.run is None else len(self.run.calls)

    async def settle(self) -> ModelSettled:
        """Close the run and read what it settled (nothing when the task allows no call)."""
        if self.run is None or self.host is None:
            return ModelSettled(calls=[], unsettled=0)
        return await self.host.settle(self.run)
