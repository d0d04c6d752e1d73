"""Machinery that runs what the contract describes, on this machine.

The wire contract (``core`` ... ``candidate``) describes; this family acts. Today it holds
the local exact-process provider, a real implementation of the ``exactProcess``
capability with supervised, namespaced, durably recorded local processes:

* :class:`LocalExactProcessProvider` (``await LocalExactProcessProvider.open(root,
  executables=[...])``), its :class:`LocalExactProcesses` (``provider.exact_process``),
  :class:`LocalExactProcessEnvironment`, :class:`LocalExactProcessManager` and
  :class:`LocalExactProcess`;
* :class:`LocalHostImage` (the image: host executables pinned by content) and
  :class:`LocalIsolation` / :func:`detect_local_isolation` (which namespaces work here).

Nothing here is re-exported from the package root: import it from
``agent_interface.evaluator``.
"""

from agent_interface.evaluator.host_image import LocalHostImage
from agent_interface.evaluator.isolation import LocalIsolation, detect_local_isolation
from agent_interface.evaluator.local_process import (
    LocalExactProcess,
    LocalExactProcessEnvironment,
    LocalExactProcesses,
    LocalExactProcessManager,
    LocalExactProcessProvider,
)

__all__ = [
    "LocalExactProcess",
    "LocalExactProcessEnvironment",
    "LocalExactProcessManager",
    "LocalExactProcessProvider",
    "LocalExactProcesses",
    "LocalHostImage",
    "LocalIsolation",
    "detect_local_isolation",
]
