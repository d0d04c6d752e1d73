"""Machinery that acts on the contract on this machine.

The wire contract (``core`` ... ``candidate``) describes; this family acts:

* the local exact-process provider, a real implementation of the ``exactProcess``
  capability with supervised, namespaced, durably recorded local processes:
  :class:`LocalExactProcessProvider` (``await LocalExactProcessProvider.open(root,
  executables=[...])``), its :class:`LocalExactProcesses` (``provider.exact_process``),
  :class:`LocalExactProcessEnvironment`, :class:`LocalExactProcessManager` and
  :class:`LocalExactProcess`; :class:`LocalHostImage` (host executables pinned by content)
  and :class:`LocalIsolation` / :func:`detect_local_isolation` (which namespaces work here);
* the candidate integrity verifier (``verify``, the Git sandbox ``git_*``, the artifact
  resolvers); its public names are also exported by the package root;
* the evaluator path: :func:`materialize_candidate` (a verified bundle's files on disk),
  :func:`run_candidate` / :func:`run_candidate_async` (a run on the local provider and
  its receipts), :class:`LocalArtifactStore` (artifacts named by CID).

Names are loaded on first use, so importing one module of the family does not import the
others. Nothing here is re-exported from the package root except the verifier's names.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agent_interface.evaluator.artifact_store import LocalArtifactStore
    from agent_interface.evaluator.host_image import LocalHostImage
    from agent_interface.evaluator.isolation import LocalIsolation, detect_local_isolation
    from agent_interface.evaluator.local_process import (
        LocalExactProcess,
        LocalExactProcessEnvironment,
        LocalExactProcesses,
        LocalExactProcessManager,
        LocalExactProcessProvider,
    )
    from agent_interface.evaluator.materialize import CandidateMaterialized, materialize_candidate
    from agent_interface.evaluator.run import (
        CandidateRunProgress,
        CandidateRunResult,
        run_candidate,
        run_candidate_async,
    )

_EXPORTS: dict[str, str] = {
    "CandidateMaterialized": "materialize",
    "CandidateRunProgress": "run",
    "CandidateRunResult": "run",
    "LocalArtifactStore": "artifact_store",
    "LocalExactProcess": "local_process",
    "LocalExactProcessEnvironment": "local_process",
    "LocalExactProcessManager": "local_process",
    "LocalExactProcessProvider": "local_process",
    "LocalExactProcesses": "local_process",
    "LocalHostImage": "host_image",
    "LocalIsolation": "isolation",
    "detect_local_isolation": "isolation",
    "materialize_candidate": "materialize",
    "run_candidate": "run",
    "run_candidate_async": "run",
}

__all__ = [
    "CandidateMaterialized",
    "CandidateRunProgress",
    "CandidateRunResult",
    "LocalArtifactStore",
    "LocalExactProcess",
    "LocalExactProcessEnvironment",
    "LocalExactProcessManager",
    "LocalExactProcessProvider",
    "LocalExactProcesses",
    "LocalHostImage",
    "LocalIsolation",
    "detect_local_isolation",
    "materialize_candidate",
    "run_candidate",
    "run_candidate_async",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'agent_interface.evaluator' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"agent_interface.evaluator.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
