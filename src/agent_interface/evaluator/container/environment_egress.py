"""The strict-egress proxies of an OCI provider: one per environment, on one loop thread.

:class:`EgressLoop` is one thread per provider object running an asyncio loop that hosts
every proxy of its ``strict`` environments, so a proxy keeps serving whatever the
caller's own loops do (``asyncio.run`` per call included). Given ``network_namespace``
(a namespace file such as ``/run/netns/NAME``), the thread joins it first: the proxy's
upstream connections then leave from that namespace (a dedicated egress namespace)
rather than the provider's.

:class:`EnvironmentEgress` is one environment's
:class:`~agent_interface.evaluator.egress.proxy.EgressProxy`, accepting on the socket
:func:`.network_namespace.listen_in_namespace` made inside the environment's namespace,
enforcing the settings built from the create input's ``allowDomains``, and recording
every decision in its :class:`~agent_interface.evaluator.egress.decisions.EgressLog`
and in a JSONL file outside every container (capped: lines of an earlier proxy over the
same file count).
"""

from __future__ import annotations

import asyncio
import ctypes
import json
import os
import socket
import threading
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, Final, TypeVar

from agent_interface.evaluator.container.network_namespace import CLONE_NEWNET
from agent_interface.evaluator.egress.decisions import EgressDecision, EgressLog, EgressSummary
from agent_interface.evaluator.egress.proxy import EgressProxy, EgressResolver
from agent_interface.evaluator.egress.settings import EgressSettings

__all__ = ["EgressLoop", "EnvironmentEgress", "summary_from_file"]

T = TypeVar("T")

_CALL_SECONDS: Final = 60.0


class EgressLoop:
    """An asyncio loop on its own thread (in ``network_namespace`` when given)."""

    def __init__(self, network_namespace: str | None = None) -> None:
        self.loop = asyncio.new_event_loop()
        started = threading.Event()
        failure: list[BaseException] = []

        def serve() -> None:
            try:
                if network_namespace is not None:
                    fd = os.open(network_namespace, os.O_RDONLY | os.O_CLOEXEC)
                    try:
                        if ctypes.CDLL(None, use_errno=True).setns(fd, CLONE_NEWNET) != 0:
                            code = ctypes.get_errno()
                            raise OSError(code, f"setns: {os.strerror(code)}")
                    finally:
                        os.close(fd)
            except BaseException as error:  # reported to the constructor
                failure.append(error)
                started.set()
                return
            asyncio.set_event_loop(self.loop)
            started.set()
            self.loop.run_forever()

        self._thread = threading.Thread(target=serve, name="egress-proxies", daemon=True)
        self._thread.start()
        started.wait(_CALL_SECONDS)
        if failure:
            self.loop.close()
            raise failure[0]

    async def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Await ``coroutine`` run on this loop (from any other loop)."""
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coroutine, self.loop))

    def call(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run ``coroutine`` on this loop from a thread that runs no loop; its result."""
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(_CALL_SECONDS)

    def close(self) -> None:
        """Cancel what runs on the loop, stop it and end the thread."""
        if self.loop.is_closed():
            return

        async def cancel_all() -> None:
            tasks = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        try:
            self.call(cancel_all())
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(_CALL_SECONDS)
            if not self._thread.is_alive():
                self.loop.close()


def _lines(path: Path) -> int:
    try:
        with path.open("rb") as stream:
            return sum(1 for _ in stream)
    except FileNotFoundError:
        return 0


class EnvironmentEgress:
    """One environment's proxy; :meth:`start` on an :class:`EgressLoop`, then :meth:`close`."""

    def __init__(
        self,
        settings: EgressSettings,
        log_path: Path,
        *,
        max_file_records: int,
        max_records: int,
        resolver: EgressResolver | None,
    ) -> None:
        self.settings: Final = settings
        self.log_path: Final = log_path
        self.log: Final = EgressLog(
            max_records=max_records, jsonl_path=log_path, max_file_records=max_file_records,
            file_records_before=_lines(log_path),
        )
        self.proxy: Final = EgressProxy(settings, resolver=resolver, log=self.log)
        self._loop: EgressLoop | None = None

    async def start(self, loop: EgressLoop, sock: socket.socket) -> None:
        """Serve the connections accepted on ``sock`` (the namespace's listening socket)."""
        self._loop = loop
        try:
            await loop.run(self.proxy.start(sock=sock))
        except BaseException:
            sock.close()
            raise

    async def close(self) -> None:
        """Stop accepting, end open connections (each recorded), close the socket."""
        if self._loop is not None and not self._loop.loop.is_closed():
            await self._loop.run(self.proxy.close())

    async def summary(self) -> EgressSummary:
        """The enforced policy and the decision totals (read on the proxy's loop)."""
        if self._loop is None or self._loop.loop.is_closed():
            return self.proxy.summary()

        async def read() -> EgressSummary:
            return self.proxy.summary()

        return await self._loop.run(read())


def summary_from_file(path: Path, settings: EgressSettings) -> EgressSummary:
    """The summary of the decisions in the JSONL file at ``path`` under ``settings`` (for an
    environment whose proxy no longer runs: destroyed, or its provider closed); a file
    cut at its cap counts only the lines it holds."""
    log = EgressLog()
    try:
        with path.open(encoding="utf-8") as stream:
            for line in stream:
                try:
                    log.record(EgressDecision(**json.loads(line)))
                except (TypeError, ValueError):
                    continue
    except FileNotFoundError:
        pass
    return log.summary(settings.policy_json())
