"""Builders of what a candidate author writes: bundles from a Git commit range
(``bundle_builder``, with ``git_range``), benchmark tasks and suites (``task_builder``),
experiments (``experiment_builder``) and the byte-carrying parts they share
(``artifacts``: embedded and CID-named artifacts, workspace snapshots, the output-checks
grader document). Each ``build()`` returns a sealed document (a bundle only once the
integrity verifier accepts it) or refuses with a ``ContractError`` naming the field."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agent_interface.evaluator.author.artifacts import ArtifactFiles, workspace_snapshot
    from agent_interface.evaluator.author.bundle_builder import CandidateBundleBuilder
    from agent_interface.evaluator.author.experiment_builder import ExperimentBuilder
    from agent_interface.evaluator.author.task_builder import (
        BenchmarkSuiteBuilder,
        BenchmarkTaskBuilder,
    )

_EXPORTS = {
    "ArtifactFiles": "artifacts",
    "BenchmarkSuiteBuilder": "task_builder",
    "BenchmarkTaskBuilder": "task_builder",
    "CandidateBundleBuilder": "bundle_builder",
    "ExperimentBuilder": "experiment_builder",
    "workspace_snapshot": "artifacts",
}

__all__ = [
    "ArtifactFiles",
    "BenchmarkSuiteBuilder",
    "BenchmarkTaskBuilder",
    "CandidateBundleBuilder",
    "ExperimentBuilder",
    "workspace_snapshot",
]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        module = importlib.import_module(f"agent_interface.evaluator.author.{_EXPORTS[name]}")
        value = getattr(module, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'agent_interface.evaluator.author' has no attribute {name!r}")
