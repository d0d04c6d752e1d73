"""Machinery that acts on the contract on this machine.

The wire contract (``core`` ... ``candidate``) describes; this family acts:

* the local exact-process provider, a real implementation of the ``exactProcess``
  capability with supervised, namespaced, durably recorded local processes:
  :class:`LocalExactProcessProvider` (``await LocalExactProcessProvider.open(root,
  executables=[...])``), its :class:`LocalExactProcesses` (``provider.exact_process``),
  :class:`LocalExactProcessEnvironment`, :class:`LocalExactProcessManager` and
  :class:`LocalExactProcess`; :class:`LocalHostImage` (host executables pinned by content)
  and :class:`LocalIsolation` / :func:`detect_local_isolation` (which namespaces work here);
* the OCI exact-process provider, the same capability on ``runc`` with a container per
  process, user namespace, no capabilities, seccomp, an empty network namespace and
  cgroup limits: :class:`OciExactProcessProvider` (``await
  OciExactProcessProvider.open(root, images=...)``);
* the candidate integrity verifier (``verify``, the Git sandbox ``git_*``, the artifact
  resolvers); its public names are also exported by the package root;
* the strict-egress proxy (``evaluator.egress``): ``allowDomains`` enforced for a sandbox
  whose only way out is the proxy's socket; not yet used by a provider;
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
    from agent_interface.evaluator.container.oci_provider import OciExactProcessProvider
    from agent_interface.evaluator.images.host_image import LocalHostImage
    from agent_interface.evaluator.process.isolation import LocalIsolation, detect_local_isolation
    from agent_interface.evaluator.process.local_process import (
        LocalExactProcess,
        LocalExactProcessEnvironment,
        LocalExactProcesses,
        LocalExactProcessManager,
        LocalExactProcessProvider,
    )
    from agent_interface.evaluator.run.candidate_run import (
        CandidateRunProgress,
        CandidateRunResult,
        run_candidate,
        run_candidate_async,
    )
    from agent_interface.evaluator.run.materialize import (
        CandidateMaterialized,
        materialize_candidate,
    )
    from agent_interface.evaluator.verify.artifact_store import LocalArtifactStore

_EXPORTS: dict[str, str] = {
    "CandidateMaterialized": "run.materialize",
    "CandidateRunProgress": "run.candidate_run",
    "CandidateRunResult": "run.candidate_run",
    "LocalArtifactStore": "verify.artifact_store",
    "LocalExactProcess": "process.local_process",
    "LocalExactProcessEnvironment": "process.local_process",
    "LocalExactProcessManager": "process.local_process",
    "LocalExactProcessProvider": "process.local_process",
    "LocalExactProcesses": "process.local_process",
    "LocalHostImage": "images.host_image",
    "LocalIsolation": "process.isolation",
    "OciExactProcessProvider": "container.oci_provider",
    "detect_local_isolation": "process.isolation",
    "materialize_candidate": "run.materialize",
    "run_candidate": "run.candidate_run",
    "run_candidate_async": "run.candidate_run",
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
    "OciExactProcessProvider",
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
