"""Run cells as Ray tasks on a Ray cluster (``--engine ray --address ADDR``).

``ray`` is an optional dependency (``pip install 'agent-interface[ray]'``), imported only
here and only when this engine is chosen; without it :func:`ray_executor` refuses with
``ray_unavailable``. Each attempt is one Ray task (one CPU) whose result is its
:class:`~.cells.CellOutcome`: the receipts and the bytes of every artifact the cell
stored, so nothing has to be shared between nodes but the context (put once in the
object store). The driver writes the run directory, exactly as with local workers.

Ray may run a task again when its worker or node dies (``max_retries``); that is safe
because an attempt is idempotent: its plan and execution id come from its idempotency
key, it writes only into its own scratch directory, and only the driver records it.
Every node needs this package installed (its own Python environment) and, for the host
provider, the executables the cells launch; for container cells (:mod:`.container_cells`)
``runc``, root, and the image store at the same path as on the driver (the context carries
the store's path; images are not fetched to nodes).
"""

from __future__ import annotations

import socket
from collections.abc import Iterable
from typing import Any, Final

from agent_interface.core.errors import ContractError
from agent_interface.evaluator.experiment.cells import CellOutcome, CellRequest
from agent_interface.evaluator.experiment.workers import CellContext, run_with_context

__all__ = ["RayCellExecutor", "ray_executor"]

_TASK_RETRIES: Final = 3


def _run_cell_task(context: CellContext, request: CellRequest) -> CellOutcome:
    return run_with_context(context, request)


class RayCellExecutor:
    """Submits attempts as Ray tasks and hands back their outcomes (see the module docstring)."""

    def __init__(self, ray: Any, context: CellContext) -> None:
        self._ray = ray
        self._context = ray.put(context)
        self._task = ray.remote(num_cpus=1, max_retries=_TASK_RETRIES, retry_exceptions=False)(_run_cell_task)

    def submit(self, request: CellRequest) -> Any:
        """Start one attempt; its handle."""
        return self._task.remote(self._context, request)

    def wait(self, handles: Iterable[Any], timeout: float) -> list[Any]:
        """The handles that finished within ``timeout`` seconds."""
        pending = list(handles)
        if not pending:
            return []
        done, _ = self._ray.wait(pending, num_returns=1, timeout=timeout)
        if done:
            more, _ = self._ray.wait(pending, num_returns=len(pending), timeout=0)
            return list(more)
        return []

    def result(self, handle: Any) -> CellOutcome:
        """The outcome of a finished handle (raises when Ray gave up on the task)."""
        outcome: CellOutcome = self._ray.get(handle)
        return outcome

    def close(self) -> None:
        """Disconnect from the cluster."""
        self._ray.shutdown()


def _reachable(address: str) -> bool:
    """Whether ``host:port`` (or ``ray://host:port``) accepts a TCP connection within 5 s (Ray
    itself retries an unreachable cluster for minutes)."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        return True  # "auto" and the like: Ray finds the cluster itself
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=5):
            return True
    except OSError:
        return False


def ray_executor(address: str | None, context: CellContext) -> RayCellExecutor:
    """Connect to the Ray cluster at ``address`` (``None``: Ray's own default).

    Refused (``ContractError``): ``ray`` is not installed (``ray_unavailable``), or the
    cluster cannot be reached (``ray_unreachable``)."""
    try:
        import ray
    except ImportError:
        raise ContractError.single("/engine", "ray_unavailable",
                                   "the ray engine needs ray: pip install 'agent-interface[ray]'",
                                   subject="experiment engine") from None
    if address is not None and not _reachable(address):
        raise ContractError.single("/address", "ray_unreachable", "the Ray cluster cannot be reached",
                                   subject="experiment engine")
    try:
        options: dict[str, Any] = {}
        if address is not None and address.split(":", 1)[0] in ("127.0.0.1", "localhost"):
            options["_node_ip_address"] = "127.0.0.1"  # a loopback cluster: this driver is on its node
        ray.init(address=address, log_to_driver=False, ignore_reinit_error=True, configure_logging=False, **options)
    except Exception:  # ray raises ConnectionError, RuntimeError, ValueError...
        raise ContractError.single("/address", "ray_unreachable", "the Ray cluster cannot be reached",
                                   subject="experiment engine") from None
    return RayCellExecutor(ray, context)
